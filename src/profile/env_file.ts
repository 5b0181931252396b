/**
 * The profile's `.env` file (`$HERMES_HOME/.env`): the reader used to build
 * secret scopes and the canonical writer used by `hermes memory setup`.
 *
 * Reading never changes the process environment. Writing validates the
 * name, refuses names that would change how programs load or where Hermes
 * keeps its data, strips line breaks from the value, and replaces the file
 * atomically with mode `0600`.
 *
 * @module
 */

import { join } from "node:path";
import { atomicWriteText } from "../io/atomic_write.ts";
import { withFileLock } from "../io/file_lock.ts";
import { getHermesHome } from "./hermes_home.ts";

/** A variable name `.env` files and environments accept. */
const ENV_NAME_REGEXP = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** Values written without quotes; anything else is double-quoted. */
const BARE_VALUE_REGEXP = /^[A-Za-z0-9_\-.:/@+=,~%^]*$/;

/**
 * Names {@linkcode saveEnvValue} refuses to write: variables that change how
 * programs and interpreters load code, or where Hermes keeps a profile.
 */
export const ENV_NAME_DENYLIST: ReadonlySet<string> = new Set([
  "BASH_ENV",
  "DENO_DIR",
  "DYLD_FRAMEWORK_PATH",
  "DYLD_INSERT_LIBRARIES",
  "DYLD_LIBRARY_PATH",
  "ENV",
  "HERMES_DATA_DIR_SUFFIX",
  "HERMES_HOME",
  "HERMES_PROFILE",
  "HOME",
  "IFS",
  "LD_AUDIT",
  "LD_LIBRARY_PATH",
  "LD_PRELOAD",
  "NODE_OPTIONS",
  "NODE_PATH",
  "PATH",
  "PERL5LIB",
  "PERL5OPT",
  "PYTHONHOME",
  "PYTHONINSPECT",
  "PYTHONPATH",
  "PYTHONSTARTUP",
  "RUBYLIB",
  "RUBYOPT",
  "SHELL",
]);

/**
 * Checks that `name` may be written to a `.env` file: letters, digits and
 * `_`, not starting with a digit, and not in {@linkcode ENV_NAME_DENYLIST}
 * (compared case-insensitively).
 *
 * @param name The variable's name.
 * @throws {RangeError} When the name is malformed or denied.
 *
 * @example Checking a name before writing it to .env
 * ```ts
 * import { validateEnvName } from "@hermes/memory";
 * import assert from "node:assert/strict";
 * validateEnvName("HONCHO_API_KEY");
 * assert.throws(() => validateEnvName("LD_PRELOAD"), RangeError);
 * assert.throws(() => validateEnvName("1BAD"), RangeError);
 * ```
 */
export function validateEnvName(name: string): void {
  if (!ENV_NAME_REGEXP.test(name)) {
    throw new RangeError(
      `Cannot use '${name}' as an environment variable name: use letters, digits and '_', not starting with a digit`,
    );
  }
  if (ENV_NAME_DENYLIST.has(name.toUpperCase())) {
    throw new RangeError(
      `Cannot write ${name} to .env: it changes how programs load or where Hermes keeps data, set it in the service environment instead`,
    );
  }
}

/**
 * Parses the text of a `.env` file.
 *
 * Rules: a UTF-8 byte-order mark is ignored; blank lines and lines starting
 * with `#` are skipped; an `export ` prefix is allowed; each line is
 * `KEY=VALUE` split at the first `=`. An unquoted value ends at a `#` that
 * follows whitespace (an inline comment) and is trimmed. A value in single
 * or double quotes ends at the closing quote and anything after it is
 * ignored; inside double quotes, `\"` and `\\` are unescaped. Lines without
 * `=` or with a malformed name are skipped; a later line wins over an
 * earlier one.
 *
 * @param text The file's content.
 * @returns A fresh mapping of names to values.
 *
 * @example Parsing comments, quotes and escapes
 * ```ts
 * import { parseEnvText } from "@hermes/memory";
 * import assert from "node:assert/strict";
 * const env = parseEnvText('export A=1 # note\nB="say \\"hi\\"" # quoted\nC=x#y\n');
 * assert.deepEqual(env, { A: "1", B: 'say "hi"', C: "x#y" });
 * ```
 */
export function parseEnvText(text: string): Record<string, string> {
  const result: Record<string, string> = {};
  const lines = text.replace(/^\uFEFF/, "").split(/\r\n|\n|\r/);
  for (const raw of lines) {
    let line = raw.trim();
    if (line === "" || line.startsWith("#")) continue;
    if (/^export\s+/.test(line)) line = line.replace(/^export\s+/, "");
    const eq = line.indexOf("=");
    if (eq <= 0) continue;
    const name = line.slice(0, eq).trim();
    if (!ENV_NAME_REGEXP.test(name)) continue;
    result[name] = parseEnvValue(line.slice(eq + 1).trimStart());
  }
  return result;
}

function parseEnvValue(value: string): string {
  const quote = value[0];
  if (quote === '"') {
    let out = "";
    for (let i = 1; i < value.length; i++) {
      const ch = value[i];
      if (ch === "\\" && (value[i + 1] === '"' || value[i + 1] === "\\")) {
        out += value[i + 1];
        i++;
      } else if (ch === '"') {
        return out;
      } else {
        out += ch;
      }
    }
    // No closing quote: read the line as an unquoted value.
  } else if (quote === "'") {
    const close = value.indexOf("'", 1);
    if (close > 0) return value.slice(1, close);
  }
  const comment = value.search(/\s#/);
  return (comment >= 0 ? value.slice(0, comment) : value).trim();
}

/**
 * Reads and parses a `.env` file with {@linkcode parseEnvText}. Never
 * changes the process environment.
 *
 * @param path The file.
 * @returns The mapping, or `{}` when the file does not exist.
 * @throws {Deno.errors.PermissionDenied} Or another OS error when the file
 * exists but cannot be read.
 *
 * @example A missing .env file
 * ```ts
 * import { loadEnvFile } from "@hermes/memory";
 * import assert from "node:assert/strict";
 * assert.deepEqual(await loadEnvFile("/nonexistent/.env"), {});
 * ```
 */
export async function loadEnvFile(
  path: string,
): Promise<Record<string, string>> {
  let text: string;
  try {
    text = await Deno.readTextFile(path);
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return {};
    throw error;
  }
  return parseEnvText(text);
}

/** Options of {@linkcode saveEnvValue}. */
export interface SaveEnvValueOptions {
  /**
   * The profile home whose `.env` is written.
   *
   * @default {getHermesHome()}
   */
  hermesHome?: string;
}

/**
 * Sets `name` to `value` in the profile's `.env`, keeping every other line
 * (comments included): the first line for `name` is replaced and later
 * duplicates dropped, or a line is appended. CR and LF are stripped from the
 * value. The file is replaced atomically with mode `0600` under a
 * cross-process lock; the home directory is created if missing. The process
 * environment is not changed.
 *
 * @param name The variable's name.
 * @param value The value.
 * @param options Which profile home to write to.
 * @returns A promise that resolves once the file is written.
 * @throws {RangeError} When {@linkcode validateEnvName} rejects the name.
 *
 * @example Storing an API key for a profile
 * ```ts
 * import { loadEnvFile, saveEnvValue } from "@hermes/memory";
 * import assert from "node:assert/strict";
 * const home = await Deno.makeTempDir();
 * await saveEnvValue("HONCHO_API_KEY", "hch-123", { hermesHome: home });
 * assert.equal((await loadEnvFile(`${home}/.env`)).HONCHO_API_KEY, "hch-123");
 * await Deno.remove(home, { recursive: true });
 * ```
 */
export async function saveEnvValue(
  name: string,
  value: string,
  options: SaveEnvValueOptions = {},
): Promise<void> {
  validateEnvName(name);
  const clean = value.replace(/[\r\n]/g, "");
  const home = options.hermesHome ?? getHermesHome();
  await Deno.mkdir(home, { recursive: true, mode: 0o700 });
  const path = join(home, ".env");
  await withFileLock(`${path}.lock`, async () => {
    let existing = "";
    try {
      existing = await Deno.readTextFile(path);
    } catch (error) {
      if (!(error instanceof Deno.errors.NotFound)) throw error;
    }
    const line = `${name}=${formatEnvValue(clean)}`;
    const lines = existing === "" ? [] : existing.split(/\r\n|\n/);
    if (lines.at(-1) === "") lines.pop();
    const out: string[] = [];
    let replaced = false;
    for (const current of lines) {
      if (lineDefines(current, name)) {
        if (!replaced) out.push(line);
        replaced = true;
      } else {
        out.push(current);
      }
    }
    if (!replaced) out.push(line);
    await atomicWriteText(path, `${out.join("\n")}\n`, { mode: 0o600 });
  });
}

function lineDefines(line: string, name: string): boolean {
  const body = line.trim().replace(/^export\s+/, "");
  const eq = body.indexOf("=");
  return eq > 0 && body.slice(0, eq).trim() === name;
}

function formatEnvValue(value: string): string {
  if (BARE_VALUE_REGEXP.test(value)) return value;
  return `"${value.replace(/\\/g, "\\\\").replace(/"/g, '\\"')}"`;
}
