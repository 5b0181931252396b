/**
 * Reading `honcho.json` (syntax errors with line and column, never thrown)
 * and {@linkcode saveHonchoConfig}'s locked, atomic `0600` shallow merge.
 * @module
 */

import { atomicJsonWrite, withFileLock } from "../../../../src/provider/mod.ts";
import { dirname, join, resolve } from "../../../../src/provider/_bundled.ts";
import { HonchoError } from "../client/errors.ts";
import { errorText, isRecord } from "../_util.ts";
import { profileFromHermesHome, resolveHostKey } from "./paths.ts";

/** Where a config file stopped parsing (1-based). */
export interface HonchoConfigFileError {
  /** A description without file content (never echoes secrets). */
  message: string;
  line?: number;
  column?: number;
}

export interface HonchoConfigFile {
  /** Absolute. */
  path: string;
  exists: boolean;
  /** `{}` when missing or broken. */
  raw: Record<string, unknown>;
  /** Set when the file exists but cannot be used. */
  error?: HonchoConfigFileError;
}

/** Reads and parses one config file; never throws. */
export async function readHonchoConfigFile(
  path: string,
): Promise<HonchoConfigFile> {
  const absolute = resolve(path);
  const broken = (message: string): HonchoConfigFile => ({
    path: absolute,
    exists: true,
    raw: {},
    error: { message },
  });
  let text: string;
  try {
    const bytes = await Deno.readFile(absolute);
    try {
      text = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true }).decode(
        bytes,
      );
    } catch {
      return broken("is not valid UTF-8 text; save it as UTF-8");
    }
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) {
      return { path: absolute, exists: false, raw: {} };
    }
    return broken(`cannot be read (${(error as Error).name ?? "Error"})`);
  }
  return { path: absolute, exists: true, ...parseHonchoConfigText(text) };
}

/** Parses the text of a config file (a BOM is an error, as in Hermes 0.19.0's `json.loads`). */
export function parseHonchoConfigText(
  body: string,
): { raw: Record<string, unknown>; error?: HonchoConfigFileError } {
  if (body.startsWith("\ufeff")) {
    const message =
      "starts with a byte-order mark, which Hermes cannot read; save it as UTF-8 without BOM";
    return { raw: {}, error: { message, line: 1, column: 1 } };
  }
  let value: unknown;
  try {
    value = JSON.parse(body);
  } catch (error) {
    // Hermes' json.loads also reads NaN, Infinity and -Infinity.
    const extended = parseWithNonFiniteNumbers(body);
    if (extended.ok) return wrapParsed(extended.value);
    const message = errorText(error);
    const at = locateJsonError(body, message);
    return {
      raw: {},
      error: {
        message: describeJsonError(message),
        line: at.line,
        column: at.column,
      },
    };
  }
  return wrapParsed(value);
}

function wrapParsed(
  value: unknown,
): { raw: Record<string, unknown>; error?: HonchoConfigFileError } {
  if (!isRecord(value)) {
    return {
      raw: {},
      error: {
        message: "the top level is not a JSON object",
        line: 1,
        column: 1,
      },
    };
  }
  return { raw: value };
}

// JSON with Python's extra constants NaN, Infinity and -Infinity outside
// strings: each is swapped for a marker string no file can contain, parsed,
// and swapped back.
function parseWithNonFiniteNumbers(
  text: string,
): { ok: true; value: unknown } | { ok: false } {
  const marker = `\u0000${crypto.randomUUID()}:`;
  let out = "";
  let found = false;
  for (let i = 0; i < text.length;) {
    const ch = text[i]!;
    if (ch === '"') {
      let j = i + 1;
      while (j < text.length && text[j] !== '"') j += text[j] === "\\" ? 2 : 1;
      out += text.slice(i, j + 1);
      i = j + 1;
      continue;
    }
    const word = /^(?:-?Infinity|NaN)/.exec(text.slice(i, i + 9))?.[0];
    if (word !== undefined) {
      out += JSON.stringify(marker + word);
      found = true;
      i += word.length;
      continue;
    }
    out += ch;
    i++;
  }
  if (!found) return { ok: false };
  try {
    const numbers: Record<string, number> = {
      NaN: NaN,
      Infinity: Infinity,
      "-Infinity": -Infinity,
    };
    return {
      ok: true,
      value: JSON.parse(
        out,
        (_key, v) =>
          typeof v === "string" && v.startsWith(marker)
            ? numbers[v.slice(marker.length)]
            : v,
      ),
    };
  } catch {
    return { ok: false };
  }
}

function describeJsonError(message: string): string {
  // V8 messages may quote file content (a secret, perhaps): keep only a
  // description known to carry no content.
  const match = /^(Unexpected token '.')/.exec(message) ??
    /^(Unexpected end of JSON input)/.exec(message) ??
    /^([A-Za-z ',{}[\]:]+?) in JSON at position/.exec(message);
  const text = match?.[1]?.trim() ?? "";
  return text ? text.charAt(0).toLowerCase() + text.slice(1) : "invalid JSON";
}

// Where V8's message says (it names no position for an unexpected token:
// then the error has none, rather than a guessed one).
function locateJsonError(
  text: string,
  message: string,
): { line?: number; column?: number } {
  const lineCol = /\(line (\d+) column (\d+)\)/.exec(message);
  if (lineCol) return { line: Number(lineCol[1]), column: Number(lineCol[2]) };
  if (!/end of JSON input/.test(message)) return {};
  const before = text.split("\n");
  return { line: before.length, column: before.at(-1)!.length + 1 };
}

export interface SaveHonchoConfigOptions {
  /** A host block instead of the root: `true` = the active profile's. @default {false} */
  hostBlock?: boolean | string;
  /** Used when `hostBlock` is `true`. @default {profileFromHermesHome(hermesHome)} */
  profile?: string;
}

/**
 * Merges values into `$HERMES_HOME/honcho.json` (`undefined` removes a key)
 * under `honcho.json.lock`, so concurrent saves never undo each other.
 * @throws {HonchoError} `config` When the existing file does not parse (it is
 * left byte-identical), or its `hosts` is not an object.
 */
export async function saveHonchoConfig(
  values: Record<string, unknown>,
  hermesHome: string,
  options: SaveHonchoConfigOptions = {},
): Promise<string> {
  const path = join(resolve(hermesHome), "honcho.json");
  await Deno.mkdir(dirname(path), { recursive: true });
  return await withFileLock(`${path}.lock`, async () => {
    const file = await readHonchoConfigFile(path);
    if (file.error) {
      const where = file.error.line !== undefined
        ? ` at line ${file.error.line}, column ${file.error.column}`
        : "";
      throw new HonchoError(
        "config",
        `Refusing to save Honcho config: ${path} cannot be parsed${where} (${file.error.message}); fix or remove the file first`,
        { line: file.error.line, column: file.error.column },
      );
    }
    const next: Record<string, unknown> = { ...file.raw };
    let target = next;
    if (options.hostBlock) {
      const hostKey = typeof options.hostBlock === "string"
        ? options.hostBlock
        : resolveHostKey({
          hermesHome,
          profile: options.profile ?? profileFromHermesHome(hermesHome),
          rawConfig: file.raw,
        });
      if (next.hosts !== undefined && !isRecord(next.hosts)) {
        throw new HonchoError(
          "config",
          `Refusing to save Honcho config: 'hosts' in ${path} is not an object`,
        );
      }
      const hosts: Record<string, unknown> = {
        ...(next.hosts as Record<string, unknown> | undefined),
      };
      target = isRecord(hosts[hostKey]) ? { ...hosts[hostKey] } : {};
      hosts[hostKey] = target;
      next.hosts = hosts;
    }
    for (const [key, value] of Object.entries(values)) {
      if (value === undefined) delete target[key];
      else target[key] = value;
    }
    await atomicJsonWrite(path, next, { mode: 0o600 });
    return path;
  });
}
