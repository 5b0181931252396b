/**
 * The profile's `.env`, read exactly as Hermes' `load_hermes_dotenv` reads it
 * and written so Hermes reads back what was written (atomically, `0600`).
 *
 * @module
 */

import { join } from "../_util/path.ts";
import { atomicWriteText } from "../io/atomic_write.ts";
import { withFileLock } from "../io/file_lock.ts";
import { log } from "../core/log.ts";
import { readProcessEnv } from "../core/env.ts";
import {
  PYTHON_WHITESPACE_CLASS,
  pythonStrip,
  words,
} from "../_util/python_text.ts";
import { getHermesHome } from "./hermes_home.ts";

/** A variable name `.env` files and environments accept. */
const ENV_NAME_REGEXP = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** Values written without quotes; anything else is double-quoted. */
const BARE_VALUE_REGEXP = /^[A-Za-z0-9_\-.:/@+=,~%^]*$/;

/**
 * Names {@linkcode saveEnvValue} refuses to write: variables that change how
 * programs and interpreters load code, or where Hermes keeps a profile.
 */
export const ENV_NAME_DENYLIST: ReadonlySet<string> = new Set(words`
  BASH_ENV DENO_DIR DYLD_FRAMEWORK_PATH DYLD_INSERT_LIBRARIES
  DYLD_LIBRARY_PATH ENV HERMES_DATA_DIR_SUFFIX HERMES_HOME HERMES_PROFILE HOME
  IFS LD_AUDIT LD_LIBRARY_PATH LD_PRELOAD NODE_OPTIONS NODE_PATH PATH PERL5LIB
  PERL5OPT PYTHONHOME PYTHONINSPECT PYTHONPATH PYTHONSTARTUP RUBYLIB RUBYOPT
  SHELL
`);

/**
 * Checks that `name` may be written to a `.env` file: a plain variable name
 * not in {@linkcode ENV_NAME_DENYLIST} (any case).
 *
 * @throws {RangeError} When the name is malformed or denied.
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

/** A `${NAME}` or `${NAME:-default}` reference (python-dotenv). */
const VARIABLE_REGEXP = /\$\{([^}:]*)(?::-([^}]*))?\}/g;

/** One statement of a `.env` file as python-dotenv parses it. */
interface Binding {
  /** The name (`undefined` for blank, comment or broken statements). */
  key: string | undefined;
  /** The raw value; `null` for a name without `=`. */
  value: string | null;
  /** The 1-based line the statement starts on. */
  line: number;
  /** The statement could not be parsed (python-dotenv warns, skips it). */
  error: boolean;
  /** Where the statement starts in the text (after leading whitespace). */
  start: number;
  /** Where it ends (after its line break). */
  end: number;
}

// python-dotenv 1.2.2's grammar (parser.py), as sticky expressions; `\s` is
// Python's whitespace, `[^\S\r\n]` the same without CR and LF.
const WS = PYTHON_WHITESPACE_CLASS;
const HWS = WS.replace("\\u{a}", "").replace("\\u{d}", "");
const sticky = (source: string): RegExp => new RegExp(source, "uy");
const MULTILINE_WS = sticky(`[${WS}]*`);
const HORIZONTAL_WS = sticky(`[${HWS}]*`);
const EXPORT = sticky(`(?:export[${HWS}]+)?`);
const SINGLE_QUOTED_KEY = sticky(`'([^']+)'`);
const UNQUOTED_KEY = sticky(`([^=#${WS}]+)`);
const EQUAL_SIGN = sticky(`(=[${HWS}]*)`);
const SINGLE_QUOTED_VALUE = sticky(`'((?:\\\\'|[^'])*)'`);
const DOUBLE_QUOTED_VALUE = sticky(`"((?:\\\\"|[^"])*)"`);
const UNQUOTED_VALUE = sticky(`([^\\r\\n]*)`);
const COMMENT = sticky(`(?:[${HWS}]*#[^\\r\\n]*)?`);
const END_OF_LINE = sticky(`[${HWS}]*(?:\\r\\n|\\n|\\r|$)`);
const REST_OF_LINE = sticky(`[^\\r\\n]*(?:\\r|\\n|\\r\\n)?`);
const INLINE_COMMENT = new RegExp(`[${WS}]+#.*`, "u");
const TRAILING_WS = new RegExp(`[${WS}]+$`, "u");
const DOUBLE_QUOTE_ESCAPES = /\\[\\'"abfnrtv]/g;
const SINGLE_QUOTE_ESCAPES = /\\[\\']/g;
const ESCAPED: Record<string, string> = {
  "\\": "\\",
  "'": "'",
  '"': '"',
  a: "\x07",
  b: "\b",
  f: "\f",
  n: "\n",
  r: "\r",
  t: "\t",
  v: "\v",
};

class ParseError extends Error {}

class Reader {
  readonly text: string;
  pos = 0;
  line = 1;
  constructor(text: string) {
    this.text = text;
  }
  peek(): string {
    return this.text.slice(this.pos, this.pos + 1);
  }
  read(regexp: RegExp): (string | undefined)[] {
    regexp.lastIndex = this.pos;
    const match = regexp.exec(this.text);
    if (match === null) throw new ParseError("pattern not found");
    this.pos += match[0].length;
    this.line += match[0].match(/\r\n|\n|\r/g)?.length ?? 0;
    return match.slice(1);
  }
}

function parseValue(reader: Reader): string {
  const char = reader.peek();
  if (char === "'") {
    const [value = ""] = reader.read(SINGLE_QUOTED_VALUE);
    return value.replace(SINGLE_QUOTE_ESCAPES, (m) => ESCAPED[m[1]!]!);
  }
  if (char === '"') {
    const [value = ""] = reader.read(DOUBLE_QUOTED_VALUE);
    return value.replace(DOUBLE_QUOTE_ESCAPES, (m) => ESCAPED[m[1]!]!);
  }
  if (char === "" || char === "\n" || char === "\r") return "";
  const [part = ""] = reader.read(UNQUOTED_VALUE);
  return part.replace(INLINE_COMMENT, "").replace(TRAILING_WS, "");
}

function parseBindings(text: string): Binding[] {
  const reader = new Reader(text);
  const out: Binding[] = [];
  while (reader.pos < text.length) {
    const line = reader.line;
    const before = reader.pos;
    let offset = before;
    try {
      reader.read(MULTILINE_WS);
      if (reader.pos >= text.length) break;
      const start = reader.line;
      // The statement's line starts after the last line break skipped.
      const skipped = text.slice(before, reader.pos);
      offset = before + Math.max(
        skipped.lastIndexOf("\n"),
        skipped.lastIndexOf("\r"),
      ) + 1;
      reader.read(EXPORT);
      let key: string | undefined;
      if (reader.peek() === "#") key = undefined;
      else if (reader.peek() === "'") key = reader.read(SINGLE_QUOTED_KEY)[0];
      else key = reader.read(UNQUOTED_KEY)[0];
      reader.read(HORIZONTAL_WS);
      let value: string | null = null;
      if (reader.peek() === "=") {
        reader.read(EQUAL_SIGN);
        value = parseValue(reader);
      }
      reader.read(COMMENT);
      reader.read(END_OF_LINE);
      out.push({
        key,
        value,
        line: start,
        error: false,
        start: offset,
        end: reader.pos,
      });
    } catch (error) {
      if (!(error instanceof ParseError)) throw error;
      reader.read(REST_OF_LINE);
      out.push({
        key: undefined,
        value: null,
        line,
        error: true,
        start: offset,
        end: reader.pos,
      });
    }
  }
  return out;
}

/** Options of {@linkcode parseEnvText}. */
interface ParseEnvTextOptions {
  /** Looks up `${NAME}` the file does not define (python-dotenv reads `os.environ`). */
  lookup?: (name: string) => string | undefined;
  /** Called with the 1-based line of each statement that cannot be parsed. */
  onInvalidLine?: (line: number) => void;
}

/**
 * Parses the text of a `.env` file exactly as Hermes' loader reads it
 * (python-dotenv 1.2.2 with interpolation, `load_dotenv(override=True)`):
 * quoting, escapes, inline comments and `${NAME:-default}` as python-dotenv
 * has them; a statement that does not parse is skipped, a later definition
 * wins.
 */
export function parseEnvText(
  text: string,
  options: ParseEnvTextOptions = {},
): Record<string, string> {
  const lookup = options.lookup ?? (() => undefined);
  const resolved = new Map<string, string | null>();
  for (const binding of parseBindings(text)) {
    if (binding.error) {
      options.onInvalidLine?.(binding.line);
      continue;
    }
    if (binding.key === undefined) continue;
    const value = binding.value === null ? null : binding.value.replace(
      VARIABLE_REGEXP,
      (_match, name: string, fallback: string | undefined) => {
        const found = resolved.has(name) ? resolved.get(name) : lookup(name);
        return found === undefined ? fallback ?? "" : found ?? "";
      },
    );
    // A redefinition keeps the first position, as Python's dict does.
    resolved.set(binding.key, value);
  }
  const out: Record<string, string> = {};
  for (const [key, value] of resolved) if (value !== null) out[key] = value;
  return out;
}

/** What {@linkcode decodeEnvBytes} made of a `.env` file's bytes. */
interface DecodedEnvText {
  /** The text python-dotenv would parse, after Hermes' pre-load clean-up. */
  text: string;
  /** Why the bytes could not be read at all (then `text` is `""`). */
  unreadable?: string;
}

/**
 * Turns a `.env` file's bytes into the text Hermes' loader parses
 * (`load_hermes_dotenv`): UTF-16 decoded, non-UTF-8 read as latin-1, NULs
 * removed, non-comment lines trimmed; UTF-32 refused. A UTF-8 BOM stays
 * part of the first key, as in Hermes 0.19.0 (that key is then not set).
 */
export function decodeEnvBytes(bytes: Uint8Array): DecodedEnvText {
  const starts = (prefix: number[]) => prefix.every((b, i) => bytes[i] === b);
  if (starts([0xff, 0xfe, 0, 0]) || starts([0, 0, 0xfe, 0xff])) {
    return {
      text: "",
      unreadable: "it is UTF-32 text; save it as UTF-8",
    };
  }
  let text: string;
  if (starts([0xff, 0xfe]) || starts([0xfe, 0xff])) {
    try {
      text = new TextDecoder(starts([0xff, 0xfe]) ? "utf-16le" : "utf-16be", {
        fatal: true,
      }).decode(bytes.subarray(2));
    } catch {
      return { text: "", unreadable: "it is not valid UTF-16 text" };
    }
  } else {
    const body = bytes;
    try {
      text = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true }).decode(
        body,
      );
    } catch {
      // Hermes falls back to latin-1 for a file that is not UTF-8.
      let latin = "";
      for (const byte of body) latin += String.fromCharCode(byte);
      return { text: sanitizeEnvLines(latin) };
    }
  }
  return { text: sanitizeEnvLines(text) };
}

// Hermes' pre-load clean-up (`_sanitize_env_file_if_needed` and
// `_sanitize_env_lines`): universal newlines, NULs removed, each line that
// is not blank or a comment stripped, every line ending in "\n".
function sanitizeEnvLines(text: string): string {
  if (text === "") return "";
  const lines = text.replace(/\r\n?/g, "\n").split("\n");
  if (lines.at(-1) === "") lines.pop();
  return lines.map((line) => {
    const clean = line.replaceAll("\0", "");
    const stripped = pythonStrip(clean);
    return `${
      stripped === "" || stripped.startsWith("#") ? clean : stripped
    }\n`;
  }).join("");
}

const CREDENTIAL_SUFFIXES = ["_API_KEY", "_TOKEN", "_SECRET", "_KEY"];

/** Whether a name is a credential's by Hermes' rule (`_API_KEY`, `_TOKEN`, `_SECRET`, `_KEY`). */
export function isCredentialName(name: string): boolean {
  return CREDENTIAL_SUFFIXES.some((suffix) => name.endsWith(suffix));
}

/**
 * A credential value as Hermes uses it: non-ASCII characters (pasted
 * zero-width spaces, look-alikes) removed; other values unchanged.
 */
export function sanitizeCredential(name: string, value: string): string {
  // deno-lint-ignore no-control-regex
  if (!isCredentialName(name) || /^[\x00-\x7f]*$/.test(value)) return value;
  // deno-lint-ignore no-control-regex
  return value.replace(/[^\x00-\x7f]/g, "");
}

const warnedCredentials = new Set<string>();

/** {@linkcode sanitizeCredential}, warning once per name (code points, never the value) as Hermes does. */
export function credentialValue(name: string, value: string): string {
  const clean = sanitizeCredential(name, value);
  if (clean !== value && !warnedCredentials.has(name)) {
    warnedCredentials.add(name);
    const codes: string[] = [];
    for (const ch of value) {
      const code = ch.codePointAt(0) as number;
      const label = `U+${code.toString(16).toUpperCase().padStart(4, "0")}`;
      if (code > 0x7f && !codes.includes(label)) codes.push(label);
    }
    log(
      "warn",
      `${name} contains ${
        [...value].length - [...clean].length
      } non-ASCII character(s) (${
        codes.slice(0, 3).join(", ")
      }); they were stripped so the key can be sent as an HTTP header. If authentication fails, re-copy the key as plain text`,
    );
  }
  return clean;
}

/** Options of {@linkcode loadEnvFile}. */
interface LoadEnvFileOptions {
  /** Looks up environment variables for `${NAME}` references (default `readProcessEnv`). */
  lookup?: (name: string) => string | undefined;
}

/**
 * Reads a `.env` file as Hermes' loader does, without changing the file or
 * the process environment; problems get one warning naming the file (and
 * line), never its content.
 *
 * @throws {Deno.errors.PermissionDenied} Or another OS error when the file
 * exists but cannot be read.
 */
export async function loadEnvFile(
  path: string,
  options: LoadEnvFileOptions = {},
): Promise<Record<string, string>> {
  let bytes: Uint8Array;
  try {
    bytes = await Deno.readFile(path);
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return {};
    throw error;
  }
  return readEnvBytes(path, bytes, options);
}

/** {@linkcode loadEnvFile} for callers that already hold the bytes. */
export function readEnvBytes(
  path: string,
  bytes: Uint8Array,
  options: LoadEnvFileOptions = {},
): Record<string, string> {
  const decoded = decodeEnvBytes(bytes);
  if (decoded.unreadable !== undefined) {
    log("warn", `Ignoring ${path}: ${decoded.unreadable}`);
    return {};
  }
  const values = parseEnvText(decoded.text, {
    lookup: options.lookup ?? readProcessEnv,
    onInvalidLine: (line) =>
      log(
        "warn",
        `Ignoring line ${line} of ${path}: it does not parse as KEY=VALUE (check its quotes); the lines after it are read`,
      ),
  });
  for (const [name, value] of Object.entries(values)) {
    values[name] = credentialValue(name, value);
  }
  return values;
}

/**
 * Options of {@linkcode saveEnvValue}.
 *
 * @category Profiles and secrets
 */
export interface SaveEnvValueOptions {
  /**
   * The profile home whose `.env` is written.
   *
   * @default {getHermesHome()}
   */
  hermesHome?: string;
}

/**
 * Sets `name` to `value` in the profile's `.env` so that Hermes
 * (python-dotenv) reads back exactly `value`, keeping every other byte of
 * the file. Written atomically with mode `0600` under a cross-process lock;
 * the process environment is not changed.
 *
 * @throws {RangeError} When the name is malformed or denied, or Hermes could
 * not read the value back unchanged (a `${NAME}` reference, a NUL, a lone
 * surrogate, or a credential with non-ASCII characters).
 *
 * @category Profiles and secrets
 */
export async function saveEnvValue(
  name: string,
  value: string,
  options: SaveEnvValueOptions = {},
): Promise<void> {
  validateEnvName(name);
  const clean = value.replace(/[\r\n]/g, "");
  checkEnvValue(name, clean);
  const home = options.hermesHome ?? getHermesHome();
  await Deno.mkdir(home, { recursive: true, mode: 0o700 });
  const path = join(home, ".env");
  await withFileLock(`${path}.lock`, async () => {
    let existing = "";
    try {
      existing = decodeForRewrite(path, await Deno.readFile(path));
    } catch (error) {
      if (!(error instanceof Deno.errors.NotFound)) throw error;
    }
    const line = `${name}=${formatEnvValue(clean)}\n`;
    const bindings = parseBindings(existing);
    const open = unterminatedQuote(existing, bindings);
    if (open !== undefined) {
      throw new RangeError(
        `Cannot update ${path}: line ${open} opens a quote that is never closed, so Hermes skips that line and would read a new quoted value as part of it; close or remove that quote first`,
      );
    }
    let out = "";
    let cursor = 0;
    let replaced = false;
    for (const binding of bindings) {
      if (binding.key !== name) continue;
      out += existing.slice(cursor, binding.start);
      if (!replaced) out += line;
      replaced = true;
      cursor = binding.end;
    }
    out += existing.slice(cursor);
    if (!replaced) {
      if (out !== "" && !/[\r\n]$/.test(out)) out += "\n";
      out += line;
    }
    await atomicWriteText(path, out, { mode: 0o600 });
  });
}

// The text of an existing .env to rewrite: UTF-8 as it is (a BOM kept),
// latin-1 and UTF-16 decoded (they are written back as UTF-8, which Hermes
// reads the same). A UTF-32 file is refused rather than mangled.
function decodeForRewrite(path: string, bytes: Uint8Array): string {
  const decoded = decodeEnvBytes(bytes);
  if (decoded.unreadable !== undefined) {
    throw new RangeError(
      `Cannot update ${path}: ${decoded.unreadable}, then run the command again`,
    );
  }
  if (bytes[0] === 0xff || bytes[0] === 0xfe) {
    const le = bytes[0] === 0xff;
    return new TextDecoder(le ? "utf-16le" : "utf-16be").decode(
      bytes.subarray(2),
    );
  }
  try {
    return new TextDecoder("utf-8", { fatal: true, ignoreBOM: true }).decode(
      bytes,
    );
  } catch {
    let latin = "";
    for (const byte of bytes) latin += String.fromCharCode(byte);
    return latin;
  }
}

// The line of a statement whose quoted value is never closed (python-dotenv
// skips it, and a quote written later in the file would close it), if any.
function unterminatedQuote(
  text: string,
  bindings: readonly Binding[],
): number | undefined {
  for (const binding of bindings) {
    if (!binding.error) continue;
    const statement = text.slice(binding.start, binding.end);
    const quote = /^[^=]*=[ \t]*(["'])/.exec(statement);
    if (quote === null) continue;
    const from = binding.start + statement.indexOf(quote[1]!) + 1;
    const rest = text.slice(from);
    const closed = quote[1] === '"'
      ? /(?<!\\)"/.test(rest)
      : rest.includes("'");
    if (!closed) return binding.line;
  }
  return undefined;
}

// Refuses values Hermes would not read back as written.
function checkEnvValue(name: string, value: string): void {
  const reference = value.match(/\$\{[^}:]*(?::-[^}]*)?\}/)?.[0];
  if (reference !== undefined) {
    throw new RangeError(
      `Cannot write ${name} to .env: its value contains ${reference}, which Hermes (python-dotenv) replaces with another variable's value even inside quotes; store a value without '\${...}'`,
    );
  }
  if (value.includes("\0")) {
    throw new RangeError(
      `Cannot write ${name} to .env: its value contains a NUL character, which Hermes removes; remove it from the value`,
    );
  }
  if (!value.isWellFormed()) {
    throw new RangeError(
      `Cannot write ${name} to .env: its value contains a lone surrogate, which UTF-8 cannot store; resend it as valid Unicode`,
    );
  }
  if (sanitizeCredential(name, value) !== value) {
    throw new RangeError(
      `Cannot write ${name} to .env: it is a credential and its value contains non-ASCII characters, which Hermes strips before sending it (often a zero-width space or look-alike letter from a copy-paste); re-copy the key as plain text`,
    );
  }
}

function formatEnvValue(value: string): string {
  if (BARE_VALUE_REGEXP.test(value)) return value;
  return `"${value.replace(/\\/g, "\\\\").replace(/"/g, '\\"')}"`;
}
