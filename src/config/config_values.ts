/**
 * How the framework turns `config.yaml` values into settings: ONE table of
 * coercions, each mirroring how Hermes' Python code reads the key, so a home
 * shared with Hermes behaves the same in both. Reads never throw: a value
 * Python could not use gives the documented default.
 *
 * | Family | Keys | Rule (Python) | `""` | `"false"` | `null` | absent |
 * | --- | --- | --- | --- | --- | --- | --- |
 * | flag | `memory.memory_enabled`, `memory.user_profile_enabled`, `hooks.output_spill.enabled`, `compression.checkpoint_required`, `compression.micro_compact`, `compression.codex_responses_native` | `bool(cfg.get(key, default))` ({@linkcode configFlag}) | false | **true** | false | default |
 * | switch word | `memory.write_approval` | on when the text (trimmed, any case) is `on`, `true`, `yes`, `1`, `approve`, `enabled`, or the value is `true`/`1` ({@linkcode configSwitch}) | false | false | false | false |
 * | environment switch | `HERMES_ENABLE_PROJECT_PLUGINS`, `DENO_NO_PROMPT` (environment variables, always text) | on when the text (trimmed, any case) is `1`, `true`, `yes`, `on` (`isTruthyEnvValue`) | false | false | — | false |
 * | integer | `memory.memory_char_limit`, `memory.user_char_limit`, `hooks.output_spill.max_chars`/`preview_head`/`preview_tail` | `int(value)` ({@linkcode pythonInt}): `3.9` → 3, `" 7 "` → 7, `true` → 1, `"1.5"` and `"1e3"` → default; then the key's minimum, if any ({@linkcode configInt}) | default | default | default | default |
 *
 * The flag rule is Python's truthiness on purpose: Hermes reads
 * `memory_enabled` with `if cfg.get("memory_enabled")`, so a quoted
 * `"false"` (a non-empty string) turns the store on there, and must here
 * too, or one home would have memory on in one program and off in the
 * other. An unquoted `false`/`no`/`off` is a YAML boolean and reads false in
 * both. The Honcho provider reads `honcho.json` with the same Python rules
 * (`plugins/memory/honcho/_coerce.ts`).
 *
 * @module
 */

import { isRecord } from "../_util/is_record.ts";
import { pythonStrip } from "../_util/python_text.ts";

/**
 * Walks a dotted key (`"hooks.output_spill"`) through nested objects.
 *
 * @param config The parsed `config.yaml`.
 * @param dottedKey Keys joined with `.`.
 * @returns The value, or `undefined` when any part is missing.
 *
 * @example Reading a nested value
 * ```ts
 * import { lookupConfig } from "@hermes/memory";
 * import assert from "node:assert/strict";
 * assert.equal(lookupConfig({ a: { b: 1 } }, "a.b"), 1);
 * assert.equal(lookupConfig({ a: 1 }, "a.b"), undefined);
 * ```
 */
export function lookupConfig(config: unknown, dottedKey: string): unknown {
  let current: unknown = config;
  for (const key of dottedKey.split(".")) {
    if (!isRecord(current)) return undefined;
    current = current[key];
  }
  return current;
}

/**
 * Python's truthiness (`bool(value)`) of a parsed YAML or JSON value:
 * `false`, `null`, `0`, `NaN`, `""`, `[]` and `{}` are false; everything
 * else, the string `"false"` included, is true.
 *
 * @param value The value.
 * @returns Its truthiness.
 *
 * @example Python truthiness
 * ```ts
 * import { pythonTruthy } from "@hermes/memory";
 * import assert from "node:assert/strict";
 * assert.equal(pythonTruthy("false"), true);
 * assert.equal(pythonTruthy(""), false);
 * assert.equal(pythonTruthy([]), false);
 * ```
 */
export function pythonTruthy(value: unknown): boolean {
  if (value === null || value === undefined || value === false) return false;
  if (typeof value === "number") return value !== 0 && !Number.isNaN(value);
  if (typeof value === "bigint") return value !== 0n;
  if (typeof value === "string") return value.length > 0;
  if (Array.isArray(value)) return value.length > 0;
  if (value instanceof Map || value instanceof Set) return value.size > 0;
  if (typeof value === "object") return Object.keys(value).length > 0;
  return true;
}

const INT_TEXT = /^[+-]?\d(?:_?\d)*$/;
const FLOAT_TEXT =
  /^[+-]?(?:(?:\d(?:_?\d)*(?:\.(?:\d(?:_?\d)*)?)?|\.\d(?:_?\d)*)(?:[eE][+-]?\d(?:_?\d)*)?|inf(?:inity)?|nan)$/i;

/**
 * Python's `int(value)` for a parsed value, or `undefined` where Python
 * raises: booleans are 0/1, finite numbers truncate, strings must be a
 * base-10 integer (surrounding whitespace and `_` between digits allowed).
 *
 * @param value The value.
 * @returns The integer, or `undefined`.
 *
 * @example Python's int()
 * ```ts
 * import { pythonInt } from "@hermes/memory";
 * import assert from "node:assert/strict";
 * assert.equal(pythonInt(" 3000 "), 3000);
 * assert.equal(pythonInt(2.9), 2);
 * assert.equal(pythonInt("1.5"), undefined);
 * ```
 */
export function pythonInt(value: unknown): number | undefined {
  if (typeof value === "boolean") return value ? 1 : 0;
  if (typeof value === "number") {
    return Number.isFinite(value) ? Math.trunc(value) : undefined;
  }
  if (typeof value === "bigint") return Number(value);
  if (typeof value === "string") {
    const text = pythonStrip(value);
    return INT_TEXT.test(text)
      ? Number.parseInt(text.replaceAll("_", ""), 10)
      : undefined;
  }
  return undefined;
}

/**
 * Python's `float(value)` for a parsed value, or `undefined` where Python
 * raises: booleans are 0/1, numbers as they are, strings in Python's float
 * syntax (`" 2.5 "`, `"1e3"`, `"inf"`, `"nan"`, `"1_000"`).
 *
 * @param value The value.
 * @returns The number, or `undefined`.
 *
 * @example Python's float()
 * ```ts
 * import { pythonFloat } from "@hermes/memory";
 * import assert from "node:assert/strict";
 * assert.equal(pythonFloat("1e3"), 1000);
 * assert.ok(Number.isNaN(pythonFloat("nan")));
 * assert.equal(pythonFloat("x"), undefined);
 * ```
 */
export function pythonFloat(value: unknown): number | undefined {
  if (typeof value === "boolean") return value ? 1 : 0;
  if (typeof value === "number") return value;
  if (typeof value === "bigint") return Number(value);
  if (typeof value === "string") {
    const text = pythonStrip(value);
    if (!FLOAT_TEXT.test(text)) return undefined;
    const lower = text.toLowerCase().replaceAll("_", "");
    const body = lower.replace(/^[+-]/, "");
    if (body === "nan") return NaN;
    if (body === "inf" || body === "infinity") {
      return lower.startsWith("-") ? -Infinity : Infinity;
    }
    return Number(lower);
  }
  return undefined;
}

/**
 * A flag as Hermes reads it, `bool(cfg.get(key, default))`: absent gives
 * `fallback`; any present value (`null` included) its Python truthiness.
 *
 * @param value The value (`undefined` when the key is absent).
 * @param fallback The default.
 * @returns The flag.
 *
 * @example Flags read like Python
 * ```ts
 * import { configFlag } from "@hermes/memory";
 * import assert from "node:assert/strict";
 * assert.equal(configFlag(undefined, true), true);
 * assert.equal(configFlag(null, true), false);
 * assert.equal(configFlag("", true), false);
 * assert.equal(configFlag("no", false), true);
 * ```
 */
export function configFlag(value: unknown, fallback: boolean): boolean {
  return value === undefined ? fallback : pythonTruthy(value);
}

const SWITCH_WORDS = new Set(["on", "true", "yes", "1", "approve", "enabled"]);

/**
 * A switch read from words, as Hermes reads `memory.write_approval`: on for
 * `true`, `1`, or a text that (trimmed, any case) is `on`, `true`, `yes`,
 * `1`, `approve` or `enabled`; off for anything else.
 *
 * @param value The value.
 * @returns Whether the switch is on.
 *
 * @example The approval switch
 * ```ts
 * import { configSwitch } from "@hermes/memory";
 * import assert from "node:assert/strict";
 * assert.equal(configSwitch(" Approve "), true);
 * assert.equal(configSwitch("off"), false);
 * ```
 */
export function configSwitch(value: unknown): boolean {
  if (value === true) return true;
  if (typeof value === "number") return value === 1;
  return typeof value === "string" &&
    SWITCH_WORDS.has(value.trim().toLowerCase());
}

/**
 * An integer as Hermes reads one, `int(value)` ({@linkcode pythonInt}),
 * that must be at least `minimum`; anything else gives `fallback`.
 *
 * @param value The value.
 * @param fallback The default.
 * @param minimum The least accepted value.
 * @returns The integer.
 *
 * @example A positive integer with a default
 * ```ts
 * import { configInt } from "@hermes/memory";
 * import assert from "node:assert/strict";
 * assert.equal(configInt("2000", 10, 1), 2000);
 * assert.equal(configInt(0, 10, 1), 10);
 * assert.equal(configInt("1e3", 10, 1), 10);
 * ```
 */
export function configInt(
  value: unknown,
  fallback: number,
  minimum: number = -Infinity,
): number {
  const n = value === undefined || value === null
    ? undefined
    : pythonInt(value);
  return n === undefined || !Number.isSafeInteger(n) || n < minimum
    ? fallback
    : n;
}
