/**
 * Errors of the Honcho provider.
 *
 * API failures form one small hierarchy under {@linkcode HonchoError}
 * (`status`, `code`, `body`, `cause`), built by one factory,
 * {@linkcode errorFromResponse}, so every caller can branch on the class
 * instead of parsing text. Messages follow the house rules (capital first
 * letter, no trailing period, a colon before detail) and never contain the
 * API key: {@linkcode errorFromResponse} removes given secrets from the
 * server's detail and body.
 *
 * A caller's own abort is never wrapped: the client rethrows the caller's
 * `signal.reason` unchanged, while its own deadline surfaces as
 * {@linkcode TimeoutError}.
 *
 * @module
 */

/** Options of {@linkcode HonchoError} and its subclasses. */
export interface HonchoErrorOptions {
  /** The HTTP status, when the server answered. */
  status?: number;
  /** A short machine-readable code (`not_found`, `timeout`, …). */
  code?: string;
  /** The decoded response body (JSON value or text), secrets removed. */
  body?: unknown;
  /** The underlying failure. */
  cause?: unknown;
}

/**
 * Base class of every Honcho API failure.
 *
 * @example Branching on the class
 * ```ts
 * import { HonchoError, NotFoundError } from "./errors.ts";
 * import assert from "node:assert/strict";
 * const error: unknown = new NotFoundError("Honcho peer not found", { status: 404 });
 * assert.ok(error instanceof HonchoError);
 * assert.equal((error as HonchoError).status, 404);
 * ```
 */
export class HonchoError extends Error {
  /** The HTTP status, when the server answered. */
  readonly status: number | undefined;
  /** A short machine-readable code. */
  readonly code: string;
  /** The decoded response body, secrets removed. */
  readonly body: unknown;

  /**
   * Creates the error.
   *
   * @param message The message (no secrets).
   * @param options Status, code, body and cause.
   */
  constructor(message: string, options: HonchoErrorOptions = {}) {
    super(
      message,
      options.cause === undefined ? undefined : { cause: options.cause },
    );
    this.name = "HonchoError";
    this.status = options.status;
    this.code = options.code ?? "honcho_error";
    this.body = options.body;
  }
}

/**
 * The server refused the credentials (401, or 403).
 *
 * @example Using AuthError
 * ```ts
 * import { AuthError } from "./errors.ts";
 * import assert from "node:assert/strict";
 * assert.equal(new AuthError("Honcho rejected the API key").name, "AuthError");
 * ```
 */
export class AuthError extends HonchoError {
  /**
   * Creates the error.
   *
   * @param message The message (no secrets).
   * @param options Status, code, body and cause.
   */
  constructor(message: string, options: HonchoErrorOptions = {}) {
    super(message, { code: "auth", ...options });
    this.name = "AuthError";
  }
}

/**
 * A workspace, peer, session, message or conclusion does not exist (404).
 *
 * @example Using NotFoundError
 * ```ts
 * import { NotFoundError } from "./errors.ts";
 * import assert from "node:assert/strict";
 * assert.equal(new NotFoundError("Missing").code, "not_found");
 * ```
 */
export class NotFoundError extends HonchoError {
  /**
   * Creates the error.
   *
   * @param message The message (no secrets).
   * @param options Status, code, body and cause.
   */
  constructor(message: string, options: HonchoErrorOptions = {}) {
    super(message, { code: "not_found", ...options });
    this.name = "NotFoundError";
  }
}

/**
 * The request conflicts with the resource's state (409).
 *
 * @example Using ConflictError
 * ```ts
 * import { ConflictError } from "./errors.ts";
 * import assert from "node:assert/strict";
 * assert.equal(new ConflictError("Busy").code, "conflict");
 * ```
 */
export class ConflictError extends HonchoError {
  /**
   * Creates the error.
   *
   * @param message The message (no secrets).
   * @param options Status, code, body and cause.
   */
  constructor(message: string, options: HonchoErrorOptions = {}) {
    super(message, { code: "conflict", ...options });
    this.name = "ConflictError";
  }
}

/**
 * The server rejected the request's content (422; also used for 400).
 *
 * @example Using ValidationError
 * ```ts
 * import { ValidationError } from "./errors.ts";
 * import assert from "node:assert/strict";
 * assert.equal(new ValidationError("Bad id").code, "validation");
 * ```
 */
export class ValidationError extends HonchoError {
  /**
   * Creates the error.
   *
   * @param message The message (no secrets).
   * @param options Status, code, body and cause.
   */
  constructor(message: string, options: HonchoErrorOptions = {}) {
    super(message, { code: "validation", ...options });
    this.name = "ValidationError";
  }
}

/** Options of {@linkcode RateLimitError}. */
export interface RateLimitErrorOptions extends HonchoErrorOptions {
  /** The server's `Retry-After`, in milliseconds, when it sent one. */
  retryAfterMs?: number;
}

/**
 * Too many requests (429).
 *
 * @example Using RateLimitError
 * ```ts
 * import { RateLimitError } from "./errors.ts";
 * import assert from "node:assert/strict";
 * const error = new RateLimitError("Slow down", { status: 429, retryAfterMs: 2000 });
 * assert.equal(error.retryAfterMs, 2000);
 * ```
 */
export class RateLimitError extends HonchoError {
  /** The server's `Retry-After`, in milliseconds, when it sent one. */
  readonly retryAfterMs: number | undefined;

  /**
   * Creates the error.
   *
   * @param message The message (no secrets).
   * @param options Status, code, body, cause and `retryAfterMs`.
   */
  constructor(message: string, options: RateLimitErrorOptions = {}) {
    super(message, { code: "rate_limited", ...options });
    this.name = "RateLimitError";
    this.retryAfterMs = options.retryAfterMs;
  }
}

/**
 * The server failed (5xx).
 *
 * @example Using ServerError
 * ```ts
 * import { ServerError } from "./errors.ts";
 * import assert from "node:assert/strict";
 * assert.equal(new ServerError("Down", { status: 503 }).status, 503);
 * ```
 */
export class ServerError extends HonchoError {
  /** The server's `Retry-After`, in milliseconds, when it sent one. */
  readonly retryAfterMs: number | undefined;

  /**
   * Creates the error.
   *
   * @param message The message (no secrets).
   * @param options Status, code, body, cause and `retryAfterMs`.
   */
  constructor(message: string, options: RateLimitErrorOptions = {}) {
    super(message, { code: "server_error", ...options });
    this.name = "ServerError";
    this.retryAfterMs = options.retryAfterMs;
  }
}

/**
 * The client's own deadline passed before the server answered; the request
 * was aborted. (A caller's abort is rethrown unchanged, never as this.)
 *
 * @example Using TimeoutError
 * ```ts
 * import { TimeoutError } from "./errors.ts";
 * import assert from "node:assert/strict";
 * assert.equal(new TimeoutError("Too slow").code, "timeout");
 * ```
 */
export class TimeoutError extends HonchoError {
  /**
   * Creates the error.
   *
   * @param message The message (no secrets).
   * @param options Code and cause.
   */
  constructor(message: string, options: HonchoErrorOptions = {}) {
    super(message, { code: "timeout", ...options });
    this.name = "TimeoutError";
  }
}

/** Options of {@linkcode ConnectionError}. */
export interface ConnectionErrorOptions extends HonchoErrorOptions {
  /**
   * `false` when the request certainly never left this process (the
   * connection could not even be opened: refused, DNS); `undefined` when it
   * may have reached the server (a connection dropped mid-request).
   */
  requestSent?: false;
}

/**
 * The server could not be reached (DNS, refused connection, reset): `fetch`
 * rejected with a `TypeError`.
 *
 * @example Using ConnectionError
 * ```ts
 * import { ConnectionError } from "./errors.ts";
 * import assert from "node:assert/strict";
 * assert.equal(new ConnectionError("Refused").code, "connection");
 * assert.equal(new ConnectionError("Refused", { requestSent: false }).requestSent, false);
 * ```
 */
export class ConnectionError extends HonchoError {
  /** `false` when the request certainly never reached the server. */
  readonly requestSent: false | undefined;

  /**
   * Creates the error.
   *
   * @param message The message (no secrets).
   * @param options Code, cause, and whether the request was surely not sent.
   */
  constructor(message: string, options: ConnectionErrorOptions = {}) {
    super(message, { code: "connection", ...options });
    this.name = "ConnectionError";
    this.requestSent = options.requestSent;
  }
}

/**
 * This process may not connect to the Honcho server: Deno denied the
 * network access (`NotCapable`, "Requires net access to …"). The request
 * was never sent, and retrying in this process cannot help; the grant is
 * `memory.permissions.honcho.net` in the profile's `config.yaml`.
 *
 * @example Using PermissionDeniedError
 * ```ts
 * import { PermissionDeniedError } from "./errors.ts";
 * import assert from "node:assert/strict";
 * const error = new PermissionDeniedError("No net", { host: "127.0.0.1:8000" });
 * assert.equal(error.code, "permission");
 * assert.equal(error.host, "127.0.0.1:8000");
 * ```
 */
export class PermissionDeniedError extends HonchoError {
  /** The `host:port` the process may not reach. */
  readonly host: string;

  /**
   * Creates the error.
   *
   * @param message The message (no secrets).
   * @param options The host denied, and the cause.
   */
  constructor(
    message: string,
    options: { host: string; cause?: unknown },
  ) {
    super(message, { code: "permission", cause: options.cause });
    this.name = "PermissionDeniedError";
    this.host = options.host;
  }
}

/**
 * The server answered with a success status but a body of the wrong shape.
 *
 * @example Using InvalidResponseError
 * ```ts
 * import { InvalidResponseError } from "./errors.ts";
 * import assert from "node:assert/strict";
 * assert.equal(new InvalidResponseError("Bad body").code, "invalid_response");
 * ```
 */
export class InvalidResponseError extends HonchoError {
  /**
   * Creates the error.
   *
   * @param message The message (no secrets).
   * @param options Status, body and cause.
   */
  constructor(message: string, options: HonchoErrorOptions = {}) {
    super(message, { code: "invalid_response", ...options });
    this.name = "InvalidResponseError";
  }
}

/**
 * `honcho.json` cannot be used: it does not parse, or a save would
 * overwrite a file that does not parse, or no credentials are configured.
 *
 * @example Using HonchoConfigError
 * ```ts
 * import { HonchoConfigError } from "./errors.ts";
 * import assert from "node:assert/strict";
 * const error = new HonchoConfigError("Broken", { path: "/h/honcho.json", line: 3, column: 5 });
 * assert.equal(error.line, 3);
 * ```
 */
export class HonchoConfigError extends Error {
  /** The file concerned, when there is one. */
  readonly path: string | undefined;
  /** The 1-based line of a parse error. */
  readonly line: number | undefined;
  /** The 1-based column of a parse error. */
  readonly column: number | undefined;

  /**
   * Creates the error.
   *
   * @param message The message.
   * @param options The file and position, and the cause.
   */
  constructor(
    message: string,
    options: {
      path?: string;
      line?: number;
      column?: number;
      cause?: unknown;
    } = {},
  ) {
    super(
      message,
      options.cause === undefined ? undefined : { cause: options.cause },
    );
    this.name = "HonchoConfigError";
    this.path = options.path;
    this.line = options.line;
    this.column = options.column;
  }
}

/**
 * No user peer can be named for a session: no runtime user id and no
 * `peerName` are configured (plugins/memory/honcho/SPEC.md §4). Session init fails without retrying.
 *
 * @example Using HonchoPeerUnresolvedError
 * ```ts
 * import { HonchoPeerUnresolvedError } from "./errors.ts";
 * import assert from "node:assert/strict";
 * assert.equal(new HonchoPeerUnresolvedError("No peer").name, "HonchoPeerUnresolvedError");
 * ```
 */
export class HonchoPeerUnresolvedError extends Error {
  /**
   * Creates the error.
   *
   * @param message The message.
   */
  constructor(message: string) {
    super(message);
    this.name = "HonchoPeerUnresolvedError";
  }
}

/** Options of {@linkcode errorFromResponse}. */
export interface ErrorFromResponseOptions {
  /** The request's method, for the message. */
  method?: string;
  /** The request's path without the query string, for the message. */
  path?: string;
  /** `Retry-After` already converted to milliseconds. */
  retryAfterMs?: number;
  /** Strings to remove from the detail and body (the API key). */
  secrets?: readonly string[];
}

const MAX_DETAIL_CHARS = 300;

/**
 * Builds the error for a non-success response: 401/403 →
 * {@linkcode AuthError}, 404 → {@linkcode NotFoundError}, 409 →
 * {@linkcode ConflictError}, 400/422 → {@linkcode ValidationError}, 429 →
 * {@linkcode RateLimitError}, 5xx → {@linkcode ServerError}, anything else →
 * {@linkcode HonchoError}. The message carries the method, path, status and
 * the server's `detail` (or `message`/`error`), with secrets removed.
 *
 * @param status The HTTP status.
 * @param body The decoded body (JSON value, text, or `undefined`).
 * @param options Method, path, `Retry-After` and secrets to remove.
 * @returns The error (not thrown).
 *
 * @example Mapping a 404
 * ```ts
 * import { errorFromResponse, NotFoundError } from "./errors.ts";
 * import assert from "node:assert/strict";
 * const error = errorFromResponse(404, { detail: "Peer not found" }, {
 *   method: "GET",
 *   path: "/v3/workspaces/w/peers/p/card",
 * });
 * assert.ok(error instanceof NotFoundError);
 * assert.equal(error.message, "Honcho GET /v3/workspaces/w/peers/p/card failed with 404: Peer not found");
 * ```
 */
export function errorFromResponse(
  status: number,
  body: unknown,
  options: ErrorFromResponseOptions = {},
): HonchoError {
  const secrets = (options.secrets ?? []).filter((s) => s.length >= 4);
  const cleanBody = redactValue(body, secrets);
  let detail = redactText(detailOf(cleanBody), secrets);
  if (detail.length > MAX_DETAIL_CHARS) {
    detail = `${detail.slice(0, MAX_DETAIL_CHARS)}…`;
  }
  const where = options.method && options.path
    ? `Honcho ${options.method} ${options.path}`
    : "Honcho request";
  const message = `${where} failed with ${status}${
    detail ? `: ${detail}` : ""
  }`;
  const init = { status, body: cleanBody };
  if (status === 401 || status === 403) return new AuthError(message, init);
  if (status === 404) return new NotFoundError(message, init);
  if (status === 409) return new ConflictError(message, init);
  if (status === 400 || status === 422) {
    return new ValidationError(message, init);
  }
  if (status === 429) {
    return new RateLimitError(message, {
      ...init,
      retryAfterMs: options.retryAfterMs,
    });
  }
  if (status >= 500) {
    return new ServerError(message, {
      ...init,
      retryAfterMs: options.retryAfterMs,
    });
  }
  return new HonchoError(message, init);
}

function detailOf(body: unknown): string {
  if (body === undefined || body === null) return "";
  if (typeof body === "string") return body.trim().replace(/\s+/g, " ");
  if (typeof body !== "object") return String(body);
  const record = body as Record<string, unknown>;
  for (const key of ["detail", "message", "error"]) {
    const value = record[key];
    if (typeof value === "string" && value.trim()) return value.trim();
    if (Array.isArray(value) && value.length > 0) {
      // FastAPI validation errors: [{loc, msg, type}, …].
      return value.map((item) => {
        if (item && typeof item === "object") {
          const entry = item as Record<string, unknown>;
          const loc = Array.isArray(entry.loc) ? entry.loc.join(".") : "";
          const msg = typeof entry.msg === "string"
            ? entry.msg
            : JSON.stringify(item);
          return loc ? `${loc}: ${msg}` : msg;
        }
        return String(item);
      }).join("; ");
    }
  }
  return "";
}

function redactText(text: string, secrets: readonly string[]): string {
  let out = text;
  for (const secret of secrets) out = out.split(secret).join("[redacted]");
  return out;
}

function redactValue(value: unknown, secrets: readonly string[]): unknown {
  if (secrets.length === 0) return value;
  if (typeof value === "string") return redactText(value, secrets);
  if (Array.isArray(value)) {
    return value.map((item) => redactValue(item, secrets));
  }
  if (value && typeof value === "object") {
    const out: Record<string, unknown> = {};
    for (const [key, item] of Object.entries(value)) {
      out[key] = redactValue(item, secrets);
    }
    return out;
  }
  return value;
}
