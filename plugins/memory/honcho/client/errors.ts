/**
 * The one error of the Honcho provider; `kind` says what failed, messages hold no API key.
 * @module
 */

import { causeChain, scrubberOf } from "../_util.ts";

// kind → `name`: the name stays per kind, it is what crosses the worker
// boundary and shows in logs.
const NAMES = {
  auth: "AuthError", // 401, 403
  not_found: "NotFoundError", // 404
  conflict: "ConflictError", // 409
  validation: "ValidationError", // 400, 422
  rate_limited: "RateLimitError", // 429
  server_error: "ServerError", // 5xx
  honcho_error: "HonchoError", // any other failure status
  timeout: "TimeoutError", // our own deadline; a caller's abort is rethrown as is
  connection: "ConnectionError", // fetch rejected: DNS, refused, reset
  permission: "PermissionDeniedError", // Deno denied the net access: nothing sent
  invalid_response: "InvalidResponseError", // success status, body of another shape
  config: "HonchoConfigError", // honcho.json does not parse, or no credentials
  no_peer: "HonchoPeerUnresolvedError", // plugins/memory/honcho/SPEC.md §4
} as const;

/** What a {@linkcode HonchoError} is about. */
export type HonchoErrorKind = keyof typeof NAMES;

/** Options of {@linkcode HonchoError}; each detail becomes a field of the error. */
export interface HonchoErrorOptions {
  /** The HTTP status, when the server answered. */
  status?: number;
  /** The decoded response body, secrets removed. */
  body?: unknown;
  /** The server's `Retry-After`, in ms (429 and 5xx). */
  retryAfterMs?: number;
  /** `false` when the request certainly never left this process (`connection`). */
  requestSent?: false;
  /** The `host:port` Deno denied (`permission`). */
  host?: string;
  /** Where a file stopped parsing (`config`), 1-based. */
  line?: number;
  column?: number;
  cause?: unknown;
}

/** A failure of the Honcho provider; `kind` says which. */
export class HonchoError extends Error {
  readonly status: number | undefined;
  readonly kind: HonchoErrorKind;
  readonly body: unknown;
  readonly retryAfterMs: number | undefined;
  readonly requestSent: false | undefined;
  readonly host: string | undefined;
  readonly line: number | undefined;
  readonly column: number | undefined;

  constructor(
    kind: HonchoErrorKind,
    message: string,
    options: HonchoErrorOptions = {},
  ) {
    super(
      message,
      options.cause === undefined ? undefined : { cause: options.cause },
    );
    this.name = NAMES[kind];
    this.status = options.status;
    this.kind = kind;
    this.body = options.body;
    this.retryAfterMs = options.retryAfterMs;
    this.requestSent = options.requestSent;
    this.host = options.host;
    this.line = options.line;
    this.column = options.column;
  }
}

/** Whether `error` is a {@linkcode HonchoError}, of one of `kinds` when given. */
export function isHonchoError(
  error: unknown,
  ...kinds: HonchoErrorKind[]
): error is HonchoError {
  return error instanceof HonchoError &&
    (kinds.length === 0 || kinds.includes(error.kind));
}

/** The server and deadline of a failed call, for {@linkcode describeHonchoError}. */
export interface FailedCall {
  url: string;
  timeoutMs: number;
}

/** A failure as a user reads it: with `call`, the CLI's sentence; without, a notice's short reason. */
export function describeHonchoError(error: unknown, call?: FailedCall): string {
  if (call === undefined) {
    if (isHonchoError(error, "permission")) return "no net permission";
    if (isHonchoError(error, "timeout")) return "request timed out";
    if (isHonchoError(error, "connection")) return "connection failed";
    if (isHonchoError(error) && error.status !== undefined) {
      const detail = (error.body as { detail?: unknown } | undefined)?.detail;
      return `HTTP ${error.status}${
        typeof detail === "string" ? `: ${detail.slice(0, 80)}` : ""
      }`;
    }
    if (isHonchoError(error)) return error.kind;
    return error instanceof Error ? error.name : "unknown error";
  }
  const { url } = call;
  if (isHonchoError(error, "config")) {
    return "no API key or base URL is configured";
  }
  if (isHonchoError(error, "timeout")) {
    const seconds = call.timeoutMs / 1000;
    return `${url} did not answer within ${
      Number.isInteger(seconds) ? seconds : seconds.toFixed(1)
    } s`;
  }
  if (isHonchoError(error, "auth")) {
    return `${url} refused the credentials (HTTP 401: ${error.message})`;
  }
  if (isHonchoError(error, "connection")) {
    return `${url} is unreachable (${connectionCause(error)})`;
  }
  if (isHonchoError(error, "not_found")) {
    return `${url} answered 404 (${error.message})`;
  }
  if (
    (isHonchoError(error) && deniedNet(error)) ||
    (error instanceof Error && error.name === "NotCapable")
  ) {
    let host = url;
    try {
      host = new URL(url).host;
    } catch {
      // Keep the URL.
    }
    return `this run may not connect to ${host} (no network permission)`;
  }
  if (isHonchoError(error)) {
    const status = error.status !== undefined ? `HTTP ${error.status}: ` : "";
    return `${url} failed (${status}${error.message})`;
  }
  return error instanceof Error ? error.message : String(error);
}

function deniedNet(error: Error): boolean {
  return causeChain(error).some((e) => e.name === "NotCapable") ||
    /no network access to /.test(error.message);
}

function connectionCause(error: HonchoError): string {
  const chain = causeChain(error.cause, 5);
  if (chain.some((e) => e.name === "NotCapable")) {
    return "no network permission";
  }
  const texts = chain.map((e) => e.message.split("\n", 1)[0] ?? "");
  const all = texts.join(" ");
  if (/connection refused/i.test(all)) return "connection refused";
  if (/dns|lookup|resolve|name or service/i.test(all)) {
    return "host name not found";
  }
  if (/reset/i.test(all)) return "connection reset";
  const text = texts.at(-1) ?? "connection failed";
  return text.length > 120 ? `${text.slice(0, 117)}...` : text;
}

export interface ErrorFromResponseOptions {
  method?: string;
  /** Without the query string. */
  path?: string;
  retryAfterMs?: number;
  /** Removed from the detail and body. */
  apiKey?: string;
}

const MAX_DETAIL_CHARS = 300;

const STATUS_KINDS: Readonly<Record<number, HonchoErrorKind>> = {
  400: "validation",
  401: "auth",
  403: "auth",
  404: "not_found",
  409: "conflict",
  422: "validation",
  429: "rate_limited",
};

/** The error of a non-success response: kind from the status, the server's detail, secrets removed. */
export function errorFromResponse(
  status: number,
  body: unknown,
  options: ErrorFromResponseOptions = {},
): HonchoError {
  const scrub = scrubberOf(options.apiKey);
  const cleanBody = redactValue(body, scrub);
  let detail = scrub(detailOf(cleanBody));
  if (detail.length > MAX_DETAIL_CHARS) {
    detail = `${detail.slice(0, MAX_DETAIL_CHARS)}…`;
  }
  const where = options.method && options.path
    ? `Honcho ${options.method} ${options.path}`
    : "Honcho request";
  const message = `${where} failed with ${status}${
    detail ? `: ${detail}` : ""
  }`;
  const kind = STATUS_KINDS[status] ??
    (status >= 500 ? "server_error" : "honcho_error");
  const retryAfterMs = kind === "rate_limited" || kind === "server_error"
    ? options.retryAfterMs
    : undefined;
  return new HonchoError(kind, message, {
    status,
    body: cleanBody,
    retryAfterMs,
  });
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

function redactValue(value: unknown, scrub: (text: string) => string): unknown {
  if (typeof value === "string") return scrub(value);
  if (Array.isArray(value)) {
    return value.map((item) => redactValue(item, scrub));
  }
  if (value && typeof value === "object") {
    const out: Record<string, unknown> = {};
    for (const [key, item] of Object.entries(value)) {
      out[key] = redactValue(item, scrub);
    }
    return out;
  }
  return value;
}
