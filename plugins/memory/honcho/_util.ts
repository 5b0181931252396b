// Small helpers shared by the Honcho provider's modules (private).

/** A non-null, non-array object. */
export function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

/** `error.message` for an `Error`, else the value as a string. */
export function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
