// Python's value semantics (`bool()`, `int()`, `float()`) for parsed YAML
// and JSON values: how Hermes' Python code reads the settings it shares
// with this port. The framework's coercion table (src/config/config_values.ts)
// and the Honcho provider both build on these.

import { pythonStrip } from "./python_text.ts";

/**
 * Python's truthiness (`bool(value)`) of a parsed YAML or JSON value:
 * `false`, `null`, `0`, `NaN`, `""`, `[]` and `{}` are false; everything
 * else, the string `"false"` included, is true.
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
