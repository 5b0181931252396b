/**
 * The message of a thrown value: `error.message` for an `Error`, else the
 * value as a string. Callers that log or show it redact it themselves.
 */
export function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
