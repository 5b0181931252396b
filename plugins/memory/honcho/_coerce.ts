// How the Honcho provider coerces the values it reads from `honcho.json`,
// `config.yaml` and the environment (private to the provider).

/** Python-like truthiness of a JSON value. */
export function truthy(value: unknown): boolean {
  if (value === null || value === undefined) return false;
  if (typeof value === "boolean") return value;
  if (typeof value === "number") return value !== 0 && !Number.isNaN(value);
  if (typeof value === "string") return value.length > 0;
  if (Array.isArray(value)) return value.length > 0;
  if (typeof value === "object") return Object.keys(value).length > 0;
  return true;
}

/**
 * Coerces a switch value: booleans as-is; numbers by zero-ness; strings
 * `1/true/yes/on` and `0/false/no/off/""` (case-insensitive); anything else
 * gives `fallback`.
 */
export function toFlag(value: unknown, fallback: boolean): boolean {
  if (typeof value === "boolean") return value;
  if (typeof value === "number") {
    return Number.isNaN(value) ? fallback : value !== 0;
  }
  if (typeof value === "string") {
    const text = value.trim().toLowerCase();
    if (["1", "true", "yes", "on"].includes(text)) return true;
    if (["0", "false", "no", "off", ""].includes(text)) return false;
  }
  return fallback;
}

/** An integer (numbers truncated, integer strings parsed), else `undefined`. */
export function toInt(value: unknown): number | undefined {
  if (typeof value === "number") {
    return Number.isFinite(value) ? Math.trunc(value) : undefined;
  }
  if (typeof value === "string" && /^\s*[+-]?\d+\s*$/.test(value)) {
    return Number.parseInt(value, 10);
  }
  return undefined;
}

/** A finite number (or numeric string), else `undefined`. */
export function toFloat(value: unknown): number | undefined {
  if (typeof value === "number") {
    return Number.isFinite(value) ? value : undefined;
  }
  if (typeof value === "string" && value.trim() !== "") {
    const n = Number(value.trim());
    return Number.isFinite(n) ? n : undefined;
  }
  return undefined;
}
