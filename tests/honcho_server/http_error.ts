/**
 * Error type and JSON response helpers shared by the test server's handlers.
 *
 * @module
 */

/** An application error answered as `{"detail": ...}` with an HTTP status. */
export class HonchoHttpError extends Error {
  /** HTTP status to answer with. */
  readonly status: number;
  /** Value of the `detail` field (a string, or FastAPI's issue list). */
  readonly detail: unknown;

  /**
   * Creates the error.
   *
   * @param status HTTP status.
   * @param detail The `detail` value of the body.
   */
  constructor(status: number, detail: unknown) {
    super(typeof detail === "string" ? detail : `HTTP ${status}`);
    this.name = "HonchoHttpError";
    this.status = status;
    this.detail = detail;
  }
}

/**
 * Builds a JSON response.
 *
 * @param status HTTP status.
 * @param body Value to serialise.
 * @param headers Extra headers.
 * @returns The response.
 */
export function jsonResponse(
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): Response {
  return new Response(JSON.stringify(body), {
    status,
    headers: { "content-type": "application/json", ...headers },
  });
}

/**
 * Builds a FastAPI-style error response `{"detail": detail}`.
 *
 * @param status HTTP status.
 * @param detail Error detail.
 * @param headers Extra headers.
 * @returns The response.
 */
export function detailResponse(
  status: number,
  detail: unknown,
  headers: Record<string, string> = {},
): Response {
  return jsonResponse(status, { detail }, headers);
}

/**
 * Shorthand for a 404 `{"detail": message}` error.
 *
 * @param message The detail text.
 * @returns The error to throw.
 */
export function notFound(message: string): HonchoHttpError {
  return new HonchoHttpError(404, message);
}

/**
 * Shorthand for an application-level 422 `{"detail": message}` error.
 *
 * @param message The detail text.
 * @returns The error to throw.
 */
export function unprocessable(message: string): HonchoHttpError {
  return new HonchoHttpError(422, message);
}
