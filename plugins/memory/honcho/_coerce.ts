// How the Honcho provider coerces the values it reads from `honcho.json`,
// `config.yaml` and the environment (private to the provider).
//
// Hermes reads honcho.json with Python semantics and so does this provider,
// on purpose (a home shared with Hermes must resolve the same way):
//
// | Python                    | here            | used for                          |
// | ------------------------- | --------------- | --------------------------------- |
// | `bool(v)` / `x or y`      | `truthy`        | flags, `enabled`, `saveMessages`  |
// | `int(v)`                  | `pyInt`         | counts, cadences, `writeFrequency`|
// | `float(v)`                | `pyFloat`       | timeouts, first-turn waits        |
// | `str(v)`                  | `pythonStr`     | ids, names, host keys             |
//
// So `"false"` is a true flag (a non-empty string), `"3"` and `3.9` are the
// integer 3, `"1.5"` is not an integer, `"nan"` is a float.

import { pythonStrip } from "@hermes/memory";

/** Python truthiness of a JSON value (`bool(value)`). */
export function truthy(value: unknown): boolean {
  if (value === null || value === undefined) return false;
  if (typeof value === "boolean") return value;
  if (typeof value === "number") return value !== 0 && !Number.isNaN(value);
  if (typeof value === "string") return value.length > 0;
  if (Array.isArray(value)) return value.length > 0;
  if (typeof value === "object") return Object.keys(value).length > 0;
  return true;
}

const INT_TEXT = /^[+-]?\d(?:_?\d)*$/;
const FLOAT_TEXT =
  /^[+-]?(?:(?:\d(?:_?\d)*(?:\.(?:\d(?:_?\d)*)?)?|\.\d(?:_?\d)*)(?:[eE][+-]?\d(?:_?\d)*)?|inf(?:inity)?|nan)$/i;

/**
 * Python's `int(value)` for a JSON value, or `undefined` where it raises:
 * booleans are 0/1, floats truncate (NaN and the infinities do not
 * convert), strings must be a base-10 integer (surrounding whitespace and
 * `_` between digits allowed).
 */
export function pyInt(value: unknown): number | undefined {
  if (typeof value === "boolean") return value ? 1 : 0;
  if (typeof value === "number") {
    return Number.isFinite(value) ? Math.trunc(value) : undefined;
  }
  if (typeof value === "string") {
    const text = pythonStrip(value);
    return INT_TEXT.test(text)
      ? Number.parseInt(text.replaceAll("_", ""), 10)
      : undefined;
  }
  return undefined;
}

/**
 * Python's `float(value)` for a JSON value, or `undefined` where it raises:
 * booleans are 0/1, numbers as they are, strings in Python's float syntax
 * (`" 2.5 "`, `"1e3"`, `"inf"`, `"nan"`, `"1_000"`).
 */
export function pyFloat(value: unknown): number | undefined {
  if (typeof value === "boolean") return value ? 1 : 0;
  if (typeof value === "number") return value;
  if (typeof value === "string") {
    const text = pythonStrip(value);
    if (!FLOAT_TEXT.test(text)) return undefined;
    const lower = text.toLowerCase().replaceAll("_", "");
    const sign = lower.startsWith("-") ? -1 : 1;
    const body = lower.replace(/^[+-]/, "");
    if (body === "nan") return NaN;
    if (body === "inf" || body === "infinity") return sign * Infinity;
    return Number(lower);
  }
  return undefined;
}
