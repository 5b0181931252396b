// Small helpers shared by the Honcho provider's modules (private).

/** Tells whether a value is a plain (non-null, non-array) object. */
export function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

/**
 * The message of a thrown value: `error.message` for an `Error`, else the
 * value as a string.
 */
export function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
