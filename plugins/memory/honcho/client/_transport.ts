/**
 * The Honcho HTTP transport, the one place that calls `fetch`: deadlines,
 * failures as {@linkcode HonchoError} kinds, retries of `retry` endpoints.
 * Deno's `fetch` silently re-sends a request when a reused keep-alive
 * connection closes before the answer, after the server may have stored it;
 * so requests that are not retried never reuse a connection.
 * @module
 */

import { errorFromResponse, HonchoError } from "./errors.ts";
import { deadlineSignal, scrubberOf } from "../_util.ts";
import {
  backoffDelayMs,
  type BackoffPolicy,
  isRetryableHonchoError,
} from "./_backoff.ts";
import { HONCHO_TIMINGS } from "../config/timings_table.ts";
import {
  HonchoPage,
  list,
  type ListOptions,
  numberOr,
  record,
  ShapeError,
} from "./wire.ts";

/** The subset of `fetch` the client uses. */
export type FetchLike = (input: string, init: RequestInit) => Promise<Response>;

/** A sleep that rejects with `signal.reason` when the signal aborts. */
export type SleepLike = (ms: number, signal?: AbortSignal) => Promise<void>;

/** Waits `ms` ms; rejects with `signal.reason` as soon as the signal aborts. */
export function abortableSleep(
  ms: number,
  signal?: AbortSignal,
): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason);
      return;
    }
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(signal!.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, Math.max(0, ms));
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}

/** A `Retry-After` header (delta seconds or an HTTP date) in ms from `nowMs`; `undefined` when absent or unparseable. */
export function parseRetryAfter(
  value: string | null | undefined,
  nowMs: number,
): number | undefined {
  if (value == null) return undefined;
  const text = value.trim();
  if (text === "") return undefined;
  if (/^\d+(\.\d+)?$/.test(text)) return Math.round(Number(text) * 1000);
  const at = Date.parse(text);
  if (Number.isNaN(at)) return undefined;
  return Math.max(0, at - nowMs);
}

// Keeps no idle connection, so `fetch` has none to silently re-send a write on.
const NO_REUSE_CLIENT: Deno.HttpClient | undefined =
  typeof Deno.createHttpClient === "function"
    ? Deno.createHttpClient({ poolMaxIdlePerHost: 0 })
    : undefined;

/** Transport options shared by `HonchoClient` constructors. */
export interface HonchoTransportOptions {
  /** Retries of a retryable request after the first attempt. @default {2} */
  maxRetries?: number;
  /** Base of the exponential backoff, in ms. @default {500} */
  retryBaseDelayMs?: number;
  /** Ceiling of one backoff delay, in ms. @default {8000} */
  retryMaxDelayMs?: number;
  /** Ceiling of an honoured `Retry-After`, in ms. @default {30000} */
  retryAfterCapMs?: number;
  /** The `fetch` to use. @default {globalThis.fetch} */
  fetch?: FetchLike;
  /** The sleep between retries. @default {abortableSleep} */
  sleep?: SleepLike;
  /** Random numbers in [0, 1) for jitter. @default {Math.random} */
  random?: () => number;
  /** The clock, epoch ms (for HTTP-date `Retry-After`). @default {Date.now} */
  now?: () => number;
}

type Method = "GET" | "POST" | "PUT" | "DELETE";

type QueryValue = string | number | boolean | undefined;

/** One request: what to send and how to read the answer. */
export interface Endpoint<T> {
  method: Method;
  /** The path segments after `/v3/` (each is encoded). */
  path: readonly string[];
  /** `undefined` values are left out. */
  query?: Record<string, QueryValue>;
  json?: unknown;
  form?: FormData;
  /** Whether it may be retried and use a pooled connection (`false` for writes and deletes). */
  retry: boolean;
  /** Throws {@linkcode ShapeError} on another shape. */
  parse: (body: unknown) => T;
}

/** The client's options, `baseUrl` cleaned and `timeoutMs` resolved. */
export interface HonchoTransportConfig extends HonchoTransportOptions {
  /** The server, without `/v3`. */
  baseUrl: string;
  /** The bearer token; no `Authorization` header when empty. */
  apiKey?: string;
  /** Per-attempt deadline in ms. */
  timeoutMs: number;
  /** Extra headers (telemetry). */
  headers?: Record<string, string>;
}

export class HonchoTransport {
  readonly baseUrl: string;
  readonly timeoutMs: number;
  #apiKey: string | undefined;
  #headers: Record<string, string>;
  #fetch: FetchLike;
  #sleep: SleepLike;
  #now: () => number;
  #maxRetries: number;
  #backoff: BackoffPolicy;

  constructor(config: HonchoTransportConfig) {
    this.baseUrl = config.baseUrl;
    this.timeoutMs = config.timeoutMs;
    this.#apiKey = config.apiKey || undefined;
    this.#headers = { ...config.headers };
    this.#fetch = config.fetch ?? ((input, init) => fetch(input, init));
    this.#sleep = config.sleep ?? abortableSleep;
    this.#now = config.now ?? Date.now;
    const t = HONCHO_TIMINGS;
    this.#maxRetries = Math.floor(
      Math.max(0, config.maxRetries ?? t.requestRetries),
    );
    this.#backoff = {
      baseMs: config.retryBaseDelayMs ?? t.request.baseMs,
      maxMs: config.retryMaxDelayMs ?? t.request.maxMs,
      retryAfterCapMs: config.retryAfterCapMs ?? t.request.retryAfterCapMs,
      random: config.random ?? Math.random,
    };
  }

  async send<T>(spec: Endpoint<T>, signal?: AbortSignal): Promise<T> {
    const path = `/v3/${
      spec.path.map((segment) => encodeURIComponent(segment)).join("/")
    }`;
    for (let attempt = 0;; attempt++) {
      if (signal?.aborted) throw signal.reason;
      try {
        return await this.#attempt(spec.method, path, spec, signal);
      } catch (error) {
        if (signal?.aborted) throw signal.reason;
        if (
          !spec.retry || attempt >= this.#maxRetries ||
          !isRetryableHonchoError(error)
        ) throw error;
        await this.#sleep(
          backoffDelayMs(attempt, error, this.#backoff),
          signal,
        );
      }
    }
  }

  /** One page of a `POST …/list` endpoint (filters in the body, paging in the query). */
  page<T>(
    path: readonly string[],
    item: (value: unknown) => T,
    options: ListOptions,
  ): Promise<HonchoPage<T>> {
    const fetchPage = (page: number): Promise<HonchoPage<T>> =>
      this.send({
        method: "POST",
        path,
        query: { page, size: options.size, reverse: options.reverse },
        json: options.filters === undefined ? {} : { filters: options.filters },
        retry: true,
        parse: (value) => {
          const o = record(value, "page");
          return new HonchoPage<T>(
            list(o.items, "page.items").map(item),
            numberOr(o, "total", 0),
            numberOr(o, "page", page),
            numberOr(o, "size", options.size ?? 50),
            numberOr(o, "pages", 0),
            fetchPage,
          );
        },
      }, options.signal);
    return fetchPage(options.page ?? 1);
  }

  async #attempt<T>(
    method: Method,
    path: string,
    spec: Endpoint<T>,
    caller: AbortSignal | undefined,
  ): Promise<T> {
    const deadline = deadlineSignal(
      this.timeoutMs,
      "Honcho request deadline passed",
      caller,
    );
    const fail = (error: unknown, stage: string): never => {
      if (caller?.aborted) throw caller.reason;
      if (deadline.signal.reason === deadline.reason) {
        throw new HonchoError(
          "timeout",
          `Honcho ${method} ${path} timed out after ${this.timeoutMs} ms`,
          { cause: error },
        );
      }
      if (error instanceof Deno.errors.NotCapable) {
        const host = new URL(this.baseUrl).host;
        throw new HonchoError(
          "permission",
          `Honcho ${method} ${path} was not sent: this process has no network access to ${host} (${
            scrubberOf(this.#apiKey)(error.message)
          })`,
          { host, cause: error },
        );
      }
      if (error instanceof TypeError) {
        throw new HonchoError(
          "connection",
          `Cannot reach Honcho for ${method} ${path}${stage}: ${
            scrubberOf(this.#apiKey)(fetchFailureText(error))
          }`,
          {
            cause: error,
            requestSent: stage === "" && neverConnected(error)
              ? false
              : undefined,
          },
        );
      }
      throw error;
    };
    try {
      const headers: Record<string, string> = {
        Accept: "application/json",
        ...this.#headers,
      };
      if (this.#apiKey) headers.Authorization = `Bearer ${this.#apiKey}`;
      let body: BodyInit | undefined;
      if (spec.form !== undefined) {
        body = spec.form;
      } else if (spec.json !== undefined) {
        headers["Content-Type"] = "application/json";
        body = JSON.stringify(spec.json);
      }
      const url = `${this.baseUrl}${path}${queryString(spec.query)}`;
      let response: Response;
      try {
        const init: RequestInit & { client?: Deno.HttpClient } = {
          method,
          headers,
          body,
          signal: deadline.signal,
        };
        if (!spec.retry && NO_REUSE_CLIENT) init.client = NO_REUSE_CLIENT;
        response = await this.#fetch(url, init);
      } catch (error) {
        return fail(error, "");
      }
      let raw: string;
      try {
        raw = await response.text();
      } catch (error) {
        return fail(error, " while reading the response");
      }
      const contentType = response.headers.get("content-type") ?? "";
      if (!response.ok) {
        throw errorFromResponse(
          response.status,
          decodeErrorBody(raw, contentType),
          {
            method,
            path,
            retryAfterMs: parseRetryAfter(
              response.headers.get("retry-after"),
              this.#now(),
            ),
            apiKey: this.#apiKey,
          },
        );
      }
      let decoded: unknown = undefined;
      if (raw.trim() !== "") {
        try {
          decoded = JSON.parse(raw);
        } catch (error) {
          throw new HonchoError(
            "invalid_response",
            `Honcho ${method} ${path} returned a body that is not JSON (status ${response.status})`,
            { status: response.status, cause: error },
          );
        }
      }
      try {
        return spec.parse(decoded);
      } catch (error) {
        if (error instanceof ShapeError) {
          throw new HonchoError(
            "invalid_response",
            `Honcho ${method} ${path} returned an unexpected body: ${error.message}`,
            { status: response.status, body: decoded, cause: error },
          );
        }
        throw error;
      }
    } finally {
      deadline.clear();
    }
  }
}

function queryString(query: Record<string, QueryValue> | undefined): string {
  const text = new URLSearchParams(
    Object.entries(query ?? {}).flatMap(([key, value]) =>
      value === undefined ? [] : [[key, String(value)]]
    ),
  ).toString();
  return text ? `?${text}` : "";
}

function decodeErrorBody(raw: string, contentType: string): unknown {
  if (raw.trim() === "") return undefined;
  if (contentType.includes("json") || /^\s*[[{]/.test(raw)) {
    try {
      return JSON.parse(raw);
    } catch {
      // Fall through to text.
    }
  }
  return raw.length > 1000 ? `${raw.slice(0, 1000)}…` : raw;
}

// Opening the connection failed (refused, DNS), so the request never left this process.
function neverConnected(error: TypeError): boolean {
  const text = fetchFailureText(error);
  return /\(Connect\)|tcp connect error|dns error|failed to lookup address|Connection refused/i
    .test(text);
}

// Deno says "fetch failed" and puts the detail in the cause.
function fetchFailureText(error: TypeError): string {
  const cause = (error.cause as Error | undefined)?.message;
  return typeof cause === "string" && cause !== "" && cause !== error.message
    ? `${error.message} (${cause})`
    : error.message;
}
