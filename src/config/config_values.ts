// Private helpers for reading typed values out of a loaded config.yaml.
// Reads never throw: a missing key, a wrong type or an out-of-range value
// gives the caller's default.

import { isRecord } from "../_util/is_record.ts";

/** Walks a dotted key (`"hooks.output_spill"`) through nested objects. */
export function lookupConfig(config: unknown, dottedKey: string): unknown {
  let current: unknown = config;
  for (const key of dottedKey.split(".")) {
    if (!isRecord(current)) return undefined;
    current = current[key];
  }
  return current;
}

/**
 * A switch value: booleans as is, numbers non-zero, strings `1/true/yes/on`
 * or `0/false/no/off` (case-insensitive, trimmed); anything else `fallback`.
 */
export function readConfigBool(value: unknown, fallback: boolean): boolean {
  if (typeof value === "boolean") return value;
  if (typeof value === "number") return value !== 0 && !Number.isNaN(value);
  if (typeof value === "string") {
    const v = value.trim().toLowerCase();
    if (["1", "true", "yes", "on"].includes(v)) return true;
    if (["0", "false", "no", "off"].includes(v)) return false;
  }
  return fallback;
}

/** An integer (or an integer string) of at least `minimum`, else `fallback`. */
export function readConfigInt(
  value: unknown,
  fallback: number,
  minimum: number,
): number {
  let n: number | undefined;
  if (typeof value === "number" && Number.isInteger(value)) n = value;
  else if (typeof value === "string" && /^\s*[+-]?\d+\s*$/.test(value)) {
    n = Number.parseInt(value, 10);
  }
  if (n === undefined || !Number.isSafeInteger(n) || n < minimum) {
    return fallback;
  }
  return n;
}
