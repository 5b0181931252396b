// The `{"error": …}` JSON result of a failed tool call, shared by the memory
// manager and the providers (through `@hermes/memory/provider`).

/**
 * Builds the JSON string a failed tool call returns: `{"error": "<message>"}`
 * (spaced like Hermes' JSON output).
 *
 * @param message What went wrong, for the model.
 */
export function toolError(message: string): string {
  return `{"error": ${JSON.stringify(String(message))}}`;
}
