// Shared helpers of the compatibility replay tests: reading the recorded
// vectors in tests/fixtures/hermes_vectors/ (see FORMAT.md there), decoding
// their byte and tagged-value encodings, and the deviation table.
import { fileURLToPath } from "node:url";
import assert from "node:assert/strict";
import { join } from "node:path";

/** The fixture directory. */
export const VECTORS_DIR: string = fileURLToPath(
  new URL("../fixtures/hermes_vectors/", import.meta.url),
);

/** One recorded fixture file: a header plus its cases. */
export interface Fixture<C> {
  generator: string;
  cases: C[];
  [key: string]: unknown;
}

/** Reads one fixture file by name (e.g. `memory_tool.json`). */
export async function loadFixture<C>(name: string): Promise<Fixture<C>> {
  return JSON.parse(await Deno.readTextFile(join(VECTORS_DIR, name)));
}

/** Recorded file bytes: absent, UTF-8 text, base64, or a directory. */
export type EncodedBytes =
  | null
  | { utf8: string }
  | { base64: string }
  | { dir: true };

/**
 * Encodes a string as UTF-8 the way Python's `surrogatepass` does (lone
 * surrogates become their 3-byte forms), so recorded text round-trips.
 */
export function utf8Bytes(text: string): Uint8Array {
  const out: number[] = [];
  for (let i = 0; i < text.length; i++) {
    let c = text.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff && i + 1 < text.length) {
      const d = text.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) {
        c = 0x10000 + ((c - 0xd800) << 10) + (d - 0xdc00);
        i++;
      }
    }
    if (c < 0x80) out.push(c);
    else if (c < 0x800) out.push(0xc0 | (c >> 6), 0x80 | (c & 63));
    else if (c < 0x10000) {
      out.push(0xe0 | (c >> 12), 0x80 | ((c >> 6) & 63), 0x80 | (c & 63));
    } else {
      out.push(
        0xf0 | (c >> 18),
        0x80 | ((c >> 12) & 63),
        0x80 | ((c >> 6) & 63),
        0x80 | (c & 63),
      );
    }
  }
  return new Uint8Array(out);
}

/** Decodes recorded bytes (`null` for an absent file or a directory). */
export function decodeBytes(value: EncodedBytes): Uint8Array | null {
  if (value === null || "dir" in value) return null;
  if ("utf8" in value) return utf8Bytes(value.utf8);
  return Uint8Array.from(atob(value.base64), (c) => c.charCodeAt(0));
}

/** Encodes bytes the way the recorder does, for comparisons. */
export function encodeBytes(bytes: Uint8Array | null): EncodedBytes {
  if (bytes === null) return null;
  try {
    return {
      utf8: new TextDecoder("utf-8", { fatal: true, ignoreBOM: true }).decode(
        bytes,
      ),
    };
  } catch {
    let s = "";
    for (const b of bytes) s += String.fromCharCode(b);
    return { base64: btoa(s) };
  }
}

/** Replaces real paths by placeholders, longest first (as the recorder). */
export function placeholders(
  mapping: Record<string, string>,
): (text: string) => string {
  const items = Object.entries(mapping).filter(([real]) => real !== "")
    .sort((a, b) => b[0].length - a[0].length);
  return (text) => {
    for (const [real, ph] of items) text = text.split(real).join(ph);
    return text;
  };
}

/** Replaces placeholders by real paths (inputs of a case). */
export function substitute(
  mapping: Record<string, string>,
): (text: string) => string {
  const items = Object.entries(mapping);
  return (text) => {
    for (const [ph, real] of items) text = text.split(ph).join(real);
    return text;
  };
}

/** Python's float `repr` of a JS number. */
export function pyFloatRepr(n: number): string {
  if (Number.isNaN(n)) return "nan";
  if (n === Infinity) return "inf";
  if (n === -Infinity) return "-inf";
  if (n === 0) return Object.is(n, -0) ? "-0.0" : "0.0";
  const sign = n < 0 ? "-" : "";
  const [mantissa, expText] = Math.abs(n).toExponential().split("e") as [
    string,
    string,
  ];
  const e = Number(expText);
  if (e < -4 || e >= 16) {
    const abs = Math.abs(e);
    return `${sign}${mantissa}e${e < 0 ? "-" : "+"}${
      abs < 10 ? `0${abs}` : abs
    }`;
  }
  const digits = mantissa.replace(".", "");
  const point = e + 1;
  if (point <= 0) return `${sign}0.${"0".repeat(-point)}${digits}`;
  if (point >= digits.length) {
    return `${sign}${digits}${"0".repeat(point - digits.length)}.0`;
  }
  return `${sign}${digits.slice(0, point)}.${digits.slice(point)}`;
}

/**
 * Tags a JS value read by the project the way the recorder tags Python
 * values, so both can be compared with `assert.deepEqual`. `floats` names
 * how numbers are told apart: a JS number is an int unless `isFloat` says so.
 */
export function tagJs(
  value: unknown,
  isFloat: (n: number) => boolean = (n) => !Number.isInteger(n),
): unknown {
  if (value === null || value === undefined) return null;
  if (typeof value === "boolean" || typeof value === "string") return value;
  if (typeof value === "bigint") return { $int: value.toString() };
  if (typeof value === "number") {
    return isFloat(value) ? { $float: pyFloatRepr(value) } : {
      $int: String(value),
    };
  }
  if (Array.isArray(value)) return value.map((v) => tagJs(v, isFloat));
  if (value instanceof Map) {
    return {
      $map: [...value.entries()].map(([k, v]) => [
        tagJs(k, isFloat),
        tagJs(v, isFloat),
      ]),
    };
  }
  if (typeof value === "object") {
    return {
      $map: Object.entries(value as Record<string, unknown>).map((
        [k, v],
      ) => [k, tagJs(v, isFloat)]),
    };
  }
  return { $repr: String(value) };
}

/** One deliberate difference from Hermes Agent (deviations.json). */
export interface Deviation {
  id: string;
  harness: string | string[];
  what: string;
  python: string;
  ours: string;
  why: string;
  safer: string;
  vectors: string[];
  /** For a deviation that applies by rule: how the replay compares. */
  rule?: string;
}

/** Reads the machine-readable deviation table. */
export async function loadDeviations(): Promise<Deviation[]> {
  return JSON.parse(
    await Deno.readTextFile(join(VECTORS_DIR, "deviations.json")),
  ).deviations;
}

/**
 * The deviations of one harness, indexed by vector id: a replay test skips
 * the byte comparison of a listed vector and checks the deviation's own
 * promise instead.
 */
export async function deviationsFor(
  harness: string,
): Promise<Map<string, Deviation>> {
  const map = new Map<string, Deviation>();
  for (const d of await loadDeviations()) {
    if (![d.harness].flat().includes(harness)) continue;
    for (const v of d.vectors) map.set(v, d);
  }
  return map;
}

/** The ids of a harness's rule-shaped deviations. */
export async function rulesFor(harness: string): Promise<string[]> {
  return (await loadDeviations()).filter((d) =>
    [d.harness].flat().includes(harness) && d.rule !== undefined
  ).map((d) => d.id);
}

/** A per-harness tally reported at the end of a replay test. */
export class Tally {
  readonly harness: string;
  matched = 0;
  matchedByRule = 0;
  deviating = 0;
  readonly failures: string[] = [];
  constructor(harness: string) {
    this.harness = harness;
  }
  /**
   * Counts one vector: listed vectors must differ (else the listing is
   * stale), unlisted ones must match; `byRule` marks a match that needed a
   * listed rule.
   */
  add(
    id: string,
    failures: readonly string[],
    deviation: Deviation | undefined,
    byRule = false,
  ): void {
    if (deviation) {
      if (failures.length === 0) {
        this.failures.push(`${id}: listed as ${deviation.id} but matches`);
      } else this.deviating++;
    } else if (failures.length > 0) {
      this.failures.push(`${id}:\n  ${failures.join("\n  ")}`);
    } else if (byRule) this.matchedByRule++;
    else this.matched++;
  }

  /**
   * Prints `harness: N vectors, M byte-identical, R identical under a listed
   * rule, D listed deviations`.
   */
  report(): string {
    return `${this.harness}: ${
      this.matched + this.matchedByRule + this.deviating
    } vectors, ${this.matched} byte-identical, ${this.matchedByRule} identical under a listed rule, ${this.deviating} listed deviations`;
  }
}

/** Options of {@linkcode decodeTagged}. */
export interface DecodeTaggedOptions {
  /** Decode `$map` as a `Map` (keys of any type) instead of an object. */
  maps?: "object" | "map";
}

/**
 * Decodes a tagged recorded value (FORMAT.md, "Tagged values") into plain
 * JS: ints as numbers (bigints when unsafe), floats as numbers, maps as
 * objects (or `Map`s), paths/timestamps/dates as strings, exceptions as
 * `{ $exception }`.
 */
export function decodeTagged(
  value: unknown,
  options: DecodeTaggedOptions = {},
): unknown {
  if (value === null || typeof value !== "object") return value;
  if (Array.isArray(value)) return value.map((v) => decodeTagged(v, options));
  const v = value as Record<string, unknown>;
  if ("$int" in v) {
    const big = BigInt(v.$int as string);
    return Number.isSafeInteger(Number(big)) ? Number(big) : big;
  }
  if ("$float" in v) {
    const text = v.$float as string;
    return text === "nan"
      ? NaN
      : text === "inf"
      ? Infinity
      : text === "-inf"
      ? -Infinity
      : Number(text);
  }
  if ("$map" in v) {
    const pairs = (v.$map as [unknown, unknown][]).map((
      [k, x],
    ) => [decodeTagged(k, options), decodeTagged(x, options)] as const);
    if (options.maps === "map") return new Map(pairs);
    return Object.fromEntries(pairs.map(([k, x]) => [String(k), x]));
  }
  if ("$path" in v) return v.$path;
  if ("$timestamp" in v) return v.$timestamp;
  if ("$date" in v) return v.$date;
  if ("$exception" in v) return v;
  return Object.fromEntries(
    Object.entries(v).map(([k, x]) => [k, decodeTagged(x, options)]),
  );
}

/** Python truthiness of a decoded value. */
export function pyTruthy(value: unknown): boolean {
  if (value === null || value === undefined || value === false) return false;
  if (typeof value === "number") return value !== 0;
  if (typeof value === "bigint") return value !== 0n;
  if (typeof value === "string") return value.length > 0;
  if (Array.isArray(value)) return value.length > 0;
  if (value instanceof Map) return value.size > 0;
  if (typeof value === "object") return Object.keys(value).length > 0;
  return true;
}

/**
 * Runs `fn` with exactly these process environment variables set (every
 * other variable the project could read is removed), restoring the
 * environment afterwards.
 */
export async function withEnv<T>(
  vars: Record<string, string>,
  fn: () => Promise<T> | T,
): Promise<T> {
  const saved = Deno.env.toObject();
  for (const name of Object.keys(saved)) {
    if (name !== "PATH") Deno.env.delete(name);
  }
  for (const [name, value] of Object.entries(vars)) Deno.env.set(name, value);
  try {
    return await fn();
  } finally {
    for (const name of Object.keys(Deno.env.toObject())) Deno.env.delete(name);
    for (const [name, value] of Object.entries(saved)) {
      Deno.env.set(name, value);
    }
  }
}

/** Runs the child runner over one fixture and returns its results. */
export async function runHonchoRunner(
  kind: "config" | "sessions",
  fixture: string,
): Promise<{ root: string; results: Record<string, unknown>[] }> {
  const root = await Deno.realPath(
    await Deno.makeTempDir({ prefix: `hv_${kind}_` }),
  );
  const child = new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "--quiet",
      "--no-prompt",
      "--allow-read",
      "--allow-write",
      "--allow-env",
      "--allow-run=git",
      new URL("_honcho_runner.ts", import.meta.url).pathname,
    ],
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const writer = child.stdin.getWriter();
  await writer.write(
    new TextEncoder().encode(
      JSON.stringify({ kind, fixture: join(VECTORS_DIR, fixture), root }),
    ),
  );
  await writer.close();
  const { code, stdout, stderr } = await child.output();
  const text = new TextDecoder().decode(stdout);
  assert.equal(code, 0, new TextDecoder().decode(stderr));
  const results = JSON.parse(
    text,
    (_k, v) =>
      v !== null && typeof v === "object" && "$num" in v ? Number(v.$num) : v,
  );
  return { root, results };
}

/** Python's value (tagged JSON) in the shape loadConfig() gives it. */
export function expectedJs(value: unknown): unknown {
  if (value === null || typeof value !== "object") return value;
  if (Array.isArray(value)) return value.map(expectedJs);
  const v = value as Record<string, unknown>;
  if ("$int" in v || "$float" in v) return decodeTagged(v);
  if ("$timestamp" in v) {
    const t = v.$timestamp as string;
    return new Date(/[+-]\d\d:\d\d$|Z$/.test(t) ? t : `${t}Z`);
  }
  if ("$date" in v) return new Date(`${v.$date}T00:00:00Z`);
  if ("$bytes" in v) {
    return Uint8Array.from(atob(v.$bytes as string), (c) => c.charCodeAt(0));
  }
  if ("$set" in v) return new Set((v.$set as unknown[]).map(expectedJs));
  if ("$map" in v) {
    const out: Record<string, unknown> = {};
    for (const [k, x] of v.$map as [unknown, unknown][]) {
      out[pyKeyText(k)] = expectedJs(x);
    }
    return out;
  }
  return v;
}

/** A Python mapping key (tagged) as the text key loadConfig() gives it. */
export function pyKeyText(key: unknown): string {
  if (typeof key === "string") return key;
  if (key === true) return "true";
  if (key === false) return "false";
  if (key === null) return "null";
  const v = key as Record<string, string>;
  if ("$int" in v) return v.$int!;
  if ("$float" in v) return String(Number(v.$float));
  if ("$date" in v) return v.$date!;
  return JSON.stringify(key);
}

/** `assert.deepStrictEqual` as a predicate. */
export function sameValue(a: unknown, b: unknown): boolean {
  try {
    assert.deepStrictEqual(a, b);
    return true;
  } catch {
    return false;
  }
}
