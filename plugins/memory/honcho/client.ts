/**
 * A small Honcho v3 HTTP client on plain `fetch` (honcho-api.md,
 * honcho-provider §12).
 *
 * One private `#request()` owns the transport: base URL plus the `/v3`
 * prefix, `encodeURIComponent` on every path segment, the bearer token and
 * telemetry headers, JSON encoding and decoding with shape checks at the
 * boundary, a per-attempt deadline that really aborts the fetch (combined
 * with the caller's signal; a caller abort is rethrown unchanged and never
 * retried; listeners and timers are removed), mapping failures to the error
 * classes of `errors.ts`, and retries.
 *
 * Retry policy (the provider's one rule, `_backoff.ts`): only idempotent
 * requests — GET, PUT, read-only POSTs (list, search, chat, representation)
 * and the get-or-create POSTs — are retried, on 429, 5xx, malformed
 * answers, timeouts and connection errors, at most `maxRetries` times, with
 * full-jitter exponential backoff; a `Retry-After` (seconds or HTTP date) is
 * honoured up to `retryAfterCapMs`. Message and conclusion creation,
 * uploads and deletes are never retried (a retry could store a message
 * twice; the outbox resolves what Honcho stored instead). Backoff sleeps
 * are cancelled by the caller's signal. `fetch`, `sleep`, `random` and
 * `now` are injectable.
 *
 * No transport re-sends either: Deno's `fetch` silently re-sends a request
 * on a new connection when a reused keep-alive connection closes before the
 * answer — after the server may have stored it. Requests that are not
 * retried therefore go over a client that never reuses a connection
 * (`Deno.createHttpClient({ poolMaxIdlePerHost: 0 })`), so such a failure
 * reaches the caller as a {@linkcode ConnectionError}. (Cost: one TCP, and
 * for https one TLS, handshake per write batch; reads keep the pool.)
 *
 * A workspace id Honcho would refuse (outside `[A-Za-z0-9_-]`, e.g.
 * `my ws`) is sanitised like peer and session ids (`my-ws`). A network
 * access Deno denies becomes a {@linkcode PermissionDeniedError}.
 *
 * Public methods are one-line endpoint wrappers taking camelCase options and
 * returning camelCase objects.
 *
 * @module
 */

import {
  ConnectionError,
  errorFromResponse,
  InvalidResponseError,
  PermissionDeniedError,
  TimeoutError,
} from "./errors.ts";
import { backoffDelayMs, isRetryableHonchoError } from "./_backoff.ts";
import {
  cleanBaseUrl,
  DEFAULT_HONCHO_TIMEOUT_MS,
  HONCHO_ENVIRONMENT_URLS,
  resolveHonchoConnection,
  type ResolveHonchoConnectionOptions,
} from "./connection.ts";
import type { HonchoConfig } from "./config.ts";

// ---------------------------------------------------------------------------
// Injected I/O
// ---------------------------------------------------------------------------

/** The subset of `fetch` the client uses. */
export type FetchLike = (input: string, init: RequestInit) => Promise<Response>;

/** A sleep that rejects with `signal.reason` when the signal aborts. */
export type SleepLike = (ms: number, signal?: AbortSignal) => Promise<void>;

/**
 * Waits `ms` milliseconds; rejects with `signal.reason` as soon as the
 * signal aborts (the timer and listener are removed either way).
 *
 * @param ms How long to wait.
 * @param signal Cancels the wait.
 * @returns A promise that resolves after `ms`.
 *
 * @example Cancelling a wait
 * ```ts
 * import { abortableSleep } from "./client.ts";
 * import assert from "node:assert/strict";
 * const controller = new AbortController();
 * const waiting = abortableSleep(60_000, controller.signal);
 * controller.abort(new Error("Stop"));
 * await assert.rejects(waiting, /Stop/);
 * ```
 */
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

/**
 * Parses a `Retry-After` header: delta seconds, or an HTTP date relative to
 * `nowMs`.
 *
 * @param value The header value.
 * @param nowMs The current time in epoch milliseconds.
 * @returns Milliseconds to wait (never negative), or `undefined` when absent or unparseable.
 *
 * @example Using parseRetryAfter
 * ```ts
 * import { parseRetryAfter } from "./client.ts";
 * import assert from "node:assert/strict";
 * assert.equal(parseRetryAfter("2", 0), 2000);
 * assert.equal(parseRetryAfter("Thu, 01 Jan 1970 00:00:05 GMT", 1000), 4000);
 * assert.equal(parseRetryAfter("soon", 0), undefined);
 * ```
 */
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

export { isRetryableHonchoError };

/**
 * A workspace id Honcho accepts: characters outside `[A-Za-z0-9_-]`
 * replaced by `-` (as peer and session ids are), cut to 512 characters;
 * `hermes` when nothing is left.
 *
 * @param workspaceId The configured workspace.
 * @returns The id the client uses.
 *
 * @example A space is refused by Honcho
 * ```ts
 * import { honchoWorkspaceId } from "./client.ts";
 * import assert from "node:assert/strict";
 * assert.equal(honchoWorkspaceId("my ws"), "my-ws");
 * assert.equal(honchoWorkspaceId("hermes_coder"), "hermes_coder");
 * ```
 */
export function honchoWorkspaceId(workspaceId: string): string {
  const clean = workspaceId.trim().replace(/[^A-Za-z0-9_-]/g, "-").slice(
    0,
    512,
  );
  return clean === "" ? "hermes" : clean;
}

/**
 * The client every non-idempotent request goes through: no idle connection
 * is kept, so `fetch` has no reused connection to silently re-send a
 * request on (created once per process or worker, never closed).
 */
const NO_REUSE_CLIENT: Deno.HttpClient | undefined =
  typeof Deno.createHttpClient === "function"
    ? Deno.createHttpClient({ poolMaxIdlePerHost: 0 })
    : undefined;

// ---------------------------------------------------------------------------
// Wire types (camelCase)
// ---------------------------------------------------------------------------

/** A free JSON object. */
export type JsonObject = Record<string, unknown>;

/** A workspace. */
export interface Workspace {
  /** The id. */
  id: string;
  /** Free metadata. */
  metadata: JsonObject;
  /** Workspace configuration. */
  configuration: JsonObject;
  /** ISO timestamp. */
  createdAt: string;
}

/** A peer. */
export interface Peer {
  /** The id. */
  id: string;
  /** The workspace. */
  workspaceId: string;
  /** Free metadata. */
  metadata: JsonObject;
  /** Peer configuration (`observe_me` is the key the server reads). */
  configuration: JsonObject;
  /** ISO timestamp. */
  createdAt: string;
}

/** A session. */
export interface Session {
  /** The id. */
  id: string;
  /** Whether the session is active (not deleted). */
  isActive: boolean;
  /** The workspace. */
  workspaceId: string;
  /** Free metadata. */
  metadata: JsonObject;
  /** Session configuration. */
  configuration: JsonObject;
  /** ISO timestamp. */
  createdAt: string;
}

/** A stored message. */
export interface Message {
  /** The server-generated id. */
  id: string;
  /** The text. */
  content: string;
  /** The author. */
  peerId: string;
  /** The session. */
  sessionId: string;
  /** The workspace. */
  workspaceId: string;
  /** Free metadata (the outbox stores `hermes_outbox_id` here). */
  metadata: JsonObject;
  /** ISO timestamp. */
  createdAt: string;
  /** Token count of `content`. */
  tokenCount: number;
}

/** A conclusion (formerly "observation"). */
export interface Conclusion {
  /** The server-generated id. */
  id: string;
  /** The text. */
  content: string;
  /** Who concluded. */
  observerId: string;
  /** About whom. */
  observedId: string;
  /** The session it came from, if any. */
  sessionId: string | null;
  /** `explicit`, `deductive`, `inductive` or `contradiction`. */
  level: string;
  /** ISO timestamp. */
  createdAt: string;
}

/** A session summary. */
export interface Summary {
  /** The text. */
  content: string;
  /** The last message covered. */
  messageId: string;
  /** `short` or `long`. */
  summaryType: string;
  /** ISO timestamp. */
  createdAt: string;
  /** Token count. */
  tokenCount: number;
}

/** What `GET …/sessions/{id}/context` returns. */
export interface SessionContext {
  /** The session id. */
  id: string;
  /** Recent messages, oldest first. */
  messages: Message[];
  /** The summary, if one exists and was asked for. */
  summary: Summary | null;
  /** The target peer's representation, if a target was given. */
  peerRepresentation: string | null;
  /** The target peer's card, if a target was given. */
  peerCard: string[] | null;
}

/** What `GET …/peers/{id}/context` returns. */
export interface PeerContext {
  /** The observer. */
  peerId: string;
  /** The observed peer. */
  targetId: string;
  /** The representation, or `null`. */
  representation: string | null;
  /** The card, or `null`. */
  peerCard: string[] | null;
}

/** A session peer's observation switches (`null` = never set). */
export interface SessionPeerConfig {
  /** Honcho models this peer from its own messages. */
  observeMe?: boolean | null;
  /** This peer observes the other peers. */
  observeOthers?: boolean | null;
}

/** A message to create. */
export interface MessageInput {
  /** The author. */
  peerId: string;
  /** The text (at most 25 000 characters). */
  content: string;
  /** Free metadata. */
  metadata?: JsonObject;
  /** Message configuration (`{reasoning: {...}}`). */
  configuration?: JsonObject;
  /** When it was said. */
  createdAt?: string | Date;
}

/** A conclusion to create. */
export interface ConclusionInput {
  /** Who concludes. */
  observerId: string;
  /** About whom. */
  observedId: string;
  /** The text. */
  content: string;
  /** The session it belongs to. */
  sessionId?: string;
}

/** Options every call takes. */
export interface CallOptions {
  /** Aborts the call; its reason is rethrown unchanged. */
  signal?: AbortSignal;
}

/** Options of list calls. */
export interface ListOptions extends CallOptions {
  /** Filter object passed verbatim (`{metadata: {...}}`, operators, `AND`/`OR`). */
  filters?: JsonObject;
  /** 1-based page. @default {1} */
  page?: number;
  /** Page size, 1–100. @default {50} */
  size?: number;
  /** Reverse the default order. @default {false} */
  reverse?: boolean;
}

/** Metadata and configuration of a get-or-create or update. */
export interface ResourceOptions extends CallOptions {
  /** Metadata (replaces the stored metadata where the API says so). */
  metadata?: JsonObject;
  /** Configuration. */
  configuration?: JsonObject;
}

// ---------------------------------------------------------------------------
// Pages
// ---------------------------------------------------------------------------

/**
 * One page of a list endpoint. `items` is this page only; iterating with
 * `for await` yields this page's items and then fetches and yields every
 * following page (one request per page, so mind large lists).
 *
 * @typeParam T The item type.
 *
 * @example Reading every message of a session
 * ```ts ignore
 * const page = await client.listMessages("my-session", { size: 100 });
 * console.log(page.items.length, "of", page.total);
 * for await (const message of page) console.log(message.content);
 * ```
 */
export class HonchoPage<T> implements AsyncIterable<T> {
  /** This page's items. */
  readonly items: readonly T[];
  /** Items across all pages. */
  readonly total: number;
  /** This page's number (1-based). */
  readonly page: number;
  /** The page size. */
  readonly size: number;
  /** The number of pages. */
  readonly pages: number;
  #fetchPage: (page: number) => Promise<HonchoPage<T>>;

  /**
   * Creates a page (the client does this).
   *
   * @param data The page's fields.
   * @param fetchPage Fetches another page by number.
   */
  constructor(
    data: {
      items: readonly T[];
      total: number;
      page: number;
      size: number;
      pages: number;
    },
    fetchPage: (page: number) => Promise<HonchoPage<T>>,
  ) {
    this.items = data.items;
    this.total = data.total;
    this.page = data.page;
    this.size = data.size;
    this.pages = data.pages;
    this.#fetchPage = fetchPage;
  }

  /**
   * Whether a following page exists.
   *
   * @returns `true` when {@linkcode HonchoPage.nextPage} would fetch one.
   */
  hasNextPage(): boolean {
    return this.items.length > 0 && this.page < this.pages;
  }

  /**
   * Fetches the following page.
   *
   * @returns The next page, or `undefined` after the last one.
   */
  nextPage(): Promise<HonchoPage<T> | undefined> {
    return this.hasNextPage()
      ? this.#fetchPage(this.page + 1)
      : Promise.resolve(undefined);
  }

  /**
   * Yields this page's items, then every following page's.
   *
   * @returns An async iterator over the items.
   */
  async *[Symbol.asyncIterator](): AsyncIterator<T> {
    yield* this.items;
    let current = await this.nextPage();
    while (current) {
      yield* current.items;
      current = await current.nextPage();
    }
  }

  /**
   * Collects items from this page onwards.
   *
   * @param options `limit` stops after that many items.
   * @returns The items.
   */
  async toArray(options: { limit?: number } = {}): Promise<T[]> {
    const limit = options.limit ?? Infinity;
    const out: T[] = [];
    for await (const item of this) {
      if (out.length >= limit) break;
      out.push(item);
    }
    return out;
  }
}

// ---------------------------------------------------------------------------
// Boundary shape checks
// ---------------------------------------------------------------------------

class ShapeError extends Error {}

function isRecord(value: unknown): value is JsonObject {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function record(value: unknown, what: string): JsonObject {
  if (!isRecord(value)) throw new ShapeError(`${what} is not an object`);
  return value;
}

function text(o: JsonObject, key: string, what: string): string {
  const value = o[key];
  if (typeof value !== "string") {
    throw new ShapeError(`${what}.${key} is not a string`);
  }
  return value;
}

function textOr(o: JsonObject, key: string, fallback: string): string {
  const value = o[key];
  return typeof value === "string" ? value : fallback;
}

function nullableText(o: JsonObject, key: string, what: string): string | null {
  const value = o[key];
  if (value == null) return null;
  if (typeof value !== "string") {
    throw new ShapeError(`${what}.${key} is not a string or null`);
  }
  return value;
}

function objectOr(o: JsonObject, key: string): JsonObject {
  const value = o[key];
  return isRecord(value) ? value : {};
}

function numberOr(o: JsonObject, key: string, fallback: number): number {
  const value = o[key];
  return typeof value === "number" && Number.isFinite(value) ? value : fallback;
}

function list(value: unknown, what: string): unknown[] {
  if (!Array.isArray(value)) throw new ShapeError(`${what} is not an array`);
  return value;
}

function stringList(value: unknown, what: string): string[] | null {
  if (value == null) return null;
  const items = list(value, what);
  for (const item of items) {
    if (typeof item !== "string") {
      throw new ShapeError(`${what} holds a non-string item`);
    }
  }
  return items as string[];
}

function parseWorkspace(value: unknown): Workspace {
  const o = record(value, "workspace");
  return {
    id: text(o, "id", "workspace"),
    metadata: objectOr(o, "metadata"),
    configuration: objectOr(o, "configuration"),
    createdAt: textOr(o, "created_at", ""),
  };
}

function parsePeer(value: unknown): Peer {
  const o = record(value, "peer");
  return {
    id: text(o, "id", "peer"),
    workspaceId: textOr(o, "workspace_id", ""),
    metadata: objectOr(o, "metadata"),
    configuration: objectOr(o, "configuration"),
    createdAt: textOr(o, "created_at", ""),
  };
}

function parseSession(value: unknown): Session {
  const o = record(value, "session");
  return {
    id: text(o, "id", "session"),
    isActive: o.is_active !== false,
    workspaceId: textOr(o, "workspace_id", ""),
    metadata: objectOr(o, "metadata"),
    configuration: objectOr(o, "configuration"),
    createdAt: textOr(o, "created_at", ""),
  };
}

function parseMessage(value: unknown): Message {
  const o = record(value, "message");
  return {
    id: text(o, "id", "message"),
    content: text(o, "content", "message"),
    peerId: text(o, "peer_id", "message"),
    sessionId: textOr(o, "session_id", ""),
    workspaceId: textOr(o, "workspace_id", ""),
    metadata: objectOr(o, "metadata"),
    createdAt: textOr(o, "created_at", ""),
    tokenCount: numberOr(o, "token_count", 0),
  };
}

function parseConclusion(value: unknown): Conclusion {
  const o = record(value, "conclusion");
  return {
    id: text(o, "id", "conclusion"),
    content: text(o, "content", "conclusion"),
    observerId: textOr(o, "observer_id", ""),
    observedId: textOr(o, "observed_id", ""),
    sessionId: nullableText(o, "session_id", "conclusion"),
    level: textOr(o, "level", "explicit"),
    createdAt: textOr(o, "created_at", ""),
  };
}

function parseSummary(value: unknown): Summary | null {
  if (value == null) return null;
  const o = record(value, "summary");
  return {
    content: text(o, "content", "summary"),
    messageId: textOr(o, "message_id", ""),
    summaryType: textOr(o, "summary_type", ""),
    createdAt: textOr(o, "created_at", ""),
    tokenCount: numberOr(o, "token_count", 0),
  };
}

function parseList<T>(parse: (value: unknown) => T): (value: unknown) => T[] {
  return (value) => list(value, "response").map(parse);
}

function parseNothing(): void {}

function parseCard(value: unknown): string[] | null {
  return stringList(record(value, "card").peer_card, "card.peer_card");
}

function searchBody(
  query: string,
  options: { filters?: JsonObject; limit?: number },
): JsonObject {
  return withOptional({ query }, {
    filters: options.filters,
    limit: options.limit,
  });
}

function parsePeerConfig(value: unknown): SessionPeerConfig {
  const o = record(value, "peer config");
  const flag = (key: string): boolean | null => {
    const v = o[key];
    if (v == null) return null;
    if (typeof v !== "boolean") {
      throw new ShapeError(`peer config.${key} is not a boolean or null`);
    }
    return v;
  };
  return {
    observeMe: flag("observe_me"),
    observeOthers: flag("observe_others"),
  };
}

function toWirePeerConfig(config: SessionPeerConfig): JsonObject {
  const out: JsonObject = {};
  if (config.observeMe !== undefined) out.observe_me = config.observeMe;
  if (config.observeOthers !== undefined) {
    out.observe_others = config.observeOthers;
  }
  return out;
}

function peerMap(
  peers: Readonly<Record<string, SessionPeerConfig>>,
): JsonObject {
  const out: JsonObject = {};
  for (const [peerId, config] of Object.entries(peers)) {
    out[peerId] = toWirePeerConfig(config);
  }
  return out;
}

function resourceBody(
  id: string | undefined,
  options: ResourceOptions,
): JsonObject {
  const body: JsonObject = {};
  if (id !== undefined) body.id = id;
  if (options.metadata !== undefined) body.metadata = options.metadata;
  if (options.configuration !== undefined) {
    body.configuration = options.configuration;
  }
  return body;
}

// ---------------------------------------------------------------------------
// The client
// ---------------------------------------------------------------------------

/** The most messages one create call accepts. */
export const MAX_MESSAGES_PER_BATCH = 100;

/** The most characters one message may hold (server `MAX_MESSAGE_SIZE`). */
export const MAX_MESSAGE_CHARS = 25_000;

/** Transport options shared by {@linkcode HonchoClient} constructors. */
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

/** Options of {@linkcode HonchoClient}. */
export interface HonchoClientOptions extends HonchoTransportOptions {
  /** The workspace every workspace-scoped call uses. */
  workspaceId: string;
  /** The server, without `/v3` (cleaned of trailing `/` and `/v<n>`). @default {"https://api.honcho.dev"} */
  baseUrl?: string;
  /** The bearer token; no `Authorization` header when empty. */
  apiKey?: string;
  /** Per-attempt deadline in ms. @default {30000} */
  timeoutMs?: number;
  /** Extra headers (telemetry). */
  headers?: Record<string, string>;
}

/** Options of {@linkcode HonchoClient.fromConfig}. */
export interface HonchoClientFromConfigOptions
  extends HonchoTransportOptions, ResolveHonchoConnectionOptions {
  /** Overrides the resolved timeout, in ms. */
  timeoutMs?: number;
}

type Method = "GET" | "POST" | "PUT" | "DELETE";

type QueryValue = string | number | boolean | undefined | readonly string[];

interface RequestSpec<T> {
  query?: Record<string, QueryValue>;
  json?: unknown;
  form?: FormData;
  signal?: AbortSignal;
  retry: boolean;
  parse: (body: unknown) => T;
}

/**
 * The Honcho v3 HTTP client. Construct it directly, or from a resolved
 * configuration with {@linkcode HonchoClient.fromConfig}.
 *
 * @example Writing a turn and reading the session context
 * ```ts ignore
 * import { HonchoClient } from "./client.ts";
 * const client = new HonchoClient({ workspaceId: "hermes", baseUrl: "http://localhost:8000" });
 * await client.getOrCreateSession("my-session");
 * await client.createMessages("my-session", [{ peerId: "alice", content: "Hi" }]);
 * const context = await client.getSessionContext("my-session", { tokens: 2000 });
 * ```
 */
export class HonchoClient {
  /** The workspace of workspace-scoped calls. */
  readonly workspaceId: string;
  /** The server, without `/v3`. */
  readonly baseUrl: string;
  /** Per-attempt deadline in ms. */
  readonly timeoutMs: number;
  #options: HonchoClientOptions;
  #apiKey: string | undefined;
  #headers: Record<string, string>;
  #fetch: FetchLike;
  #sleep: SleepLike;
  #random: () => number;
  #now: () => number;
  #maxRetries: number;
  #retryBaseDelayMs: number;
  #retryMaxDelayMs: number;
  #retryAfterCapMs: number;
  #workspace: Workspace | undefined;

  /**
   * Creates a client (no network; no environment reads).
   *
   * @param options Workspace, server, key, timeout and injected I/O.
   * @throws {RangeError} When `workspaceId` is empty or `timeoutMs` is not positive.
   */
  constructor(options: HonchoClientOptions) {
    if (!options.workspaceId) {
      throw new RangeError(
        "Cannot create a Honcho client: 'workspaceId' is empty",
      );
    }
    const timeoutMs = options.timeoutMs ?? DEFAULT_HONCHO_TIMEOUT_MS;
    if (!(timeoutMs > 0)) {
      throw new RangeError(
        `Cannot create a Honcho client: 'timeoutMs' must be positive: current value is ${timeoutMs}`,
      );
    }
    this.#options = { ...options };
    this.workspaceId = honchoWorkspaceId(options.workspaceId);
    this.baseUrl = cleanBaseUrl(
      options.baseUrl || HONCHO_ENVIRONMENT_URLS.production!,
    );
    this.timeoutMs = timeoutMs;
    this.#apiKey = options.apiKey || undefined;
    this.#headers = { ...options.headers };
    this.#fetch = options.fetch ?? ((input, init) => fetch(input, init));
    this.#sleep = options.sleep ?? abortableSleep;
    this.#random = options.random ?? Math.random;
    this.#now = options.now ?? Date.now;
    this.#maxRetries = Math.max(0, Math.floor(options.maxRetries ?? 2));
    this.#retryBaseDelayMs = options.retryBaseDelayMs ?? 500;
    this.#retryMaxDelayMs = options.retryMaxDelayMs ?? 8_000;
    this.#retryAfterCapMs = options.retryAfterCapMs ?? 30_000;
  }

  /**
   * Builds a client from a resolved configuration: cleaned base URL, the
   * `"local"` placeholder key for a local server, timeout (default 30 s) and
   * telemetry headers (honcho-provider §1.8).
   *
   * @param config The resolved configuration.
   * @param options `config.yaml` fallbacks, telemetry, transport overrides.
   * @returns The client.
   * @throws {import("./errors.ts").HonchoConfigError} When no API key and no base URL are configured.
   *
   * @example
   * ```ts ignore
   * import { loadHonchoConfig } from "./config.ts";
   * import { HonchoClient } from "./client.ts";
   * const client = HonchoClient.fromConfig(await loadHonchoConfig(), { hermesVersion: "0.9.0" });
   * ```
   */
  static fromConfig(
    config: Pick<
      HonchoConfig,
      | "apiKey"
      | "baseUrl"
      | "environment"
      | "timeout"
      | "apiKeyInFile"
      | "workspaceId"
    >,
    options: HonchoClientFromConfigOptions = {},
  ): HonchoClient {
    const connection = resolveHonchoConnection(config, options);
    return new HonchoClient({
      ...options,
      workspaceId: connection.workspaceId,
      baseUrl: connection.baseUrl,
      apiKey: connection.apiKey,
      timeoutMs: options.timeoutMs ?? connection.timeoutMs,
      headers: connection.headers,
    });
  }

  /**
   * A client for another workspace with the same server, key and transport.
   *
   * @param workspaceId The other workspace.
   * @returns A new client.
   */
  withWorkspace(workspaceId: string): HonchoClient {
    return honchoWorkspaceId(workspaceId) === this.workspaceId
      ? this
      : new HonchoClient({ ...this.#options, workspaceId });
  }

  // -------------------------------------------------------------------------
  // Transport
  // -------------------------------------------------------------------------

  async #request<T>(
    method: Method,
    segments: readonly string[],
    spec: RequestSpec<T>,
  ): Promise<T> {
    const path = `/v3/${
      segments.map((segment) => encodeURIComponent(segment)).join("/")
    }`;
    const signal = spec.signal;
    for (let attempt = 0;; attempt++) {
      if (signal?.aborted) throw signal.reason;
      try {
        return await this.#attempt(method, path, spec);
      } catch (error) {
        if (signal?.aborted) throw signal.reason;
        if (
          !spec.retry || attempt >= this.#maxRetries ||
          !isRetryableHonchoError(error)
        ) throw error;
        await this.#sleep(
          backoffDelayMs(attempt, error, {
            baseMs: this.#retryBaseDelayMs,
            maxMs: this.#retryMaxDelayMs,
            retryAfterCapMs: this.#retryAfterCapMs,
            random: this.#random,
          }),
          signal,
        );
      }
    }
  }

  async #attempt<T>(
    method: Method,
    path: string,
    spec: RequestSpec<T>,
  ): Promise<T> {
    const caller = spec.signal;
    const controller = new AbortController();
    let timedOut = false;
    const onCallerAbort = (): void => controller.abort(caller!.reason);
    caller?.addEventListener("abort", onCallerAbort, { once: true });
    const timer = setTimeout(() => {
      timedOut = true;
      controller.abort(
        new DOMException("Honcho request deadline passed", "TimeoutError"),
      );
    }, this.timeoutMs);
    const fail = (error: unknown, stage: string): never => {
      if (caller?.aborted) throw caller.reason;
      if (timedOut) {
        throw new TimeoutError(
          `Honcho ${method} ${path} timed out after ${this.timeoutMs} ms`,
          {
            cause: error,
          },
        );
      }
      if (error instanceof Deno.errors.NotCapable) {
        const host = new URL(this.baseUrl).host;
        throw new PermissionDeniedError(
          `Honcho ${method} ${path} was not sent: this process has no network access to ${host} (${
            this.#redact(error.message)
          })`,
          { host, cause: error },
        );
      }
      if (error instanceof TypeError) {
        throw new ConnectionError(
          `Cannot reach Honcho for ${method} ${path}${stage}: ${
            this.#redact(fetchFailureText(error))
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
          signal: controller.signal,
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
            secrets: this.#apiKey ? [this.#apiKey] : [],
          },
        );
      }
      let decoded: unknown = undefined;
      if (raw.trim() !== "") {
        try {
          decoded = JSON.parse(raw);
        } catch (error) {
          throw new InvalidResponseError(
            `Honcho ${method} ${path} returned a body that is not JSON (status ${response.status})`,
            { status: response.status, cause: error },
          );
        }
      }
      try {
        return spec.parse(decoded);
      } catch (error) {
        if (error instanceof ShapeError) {
          throw new InvalidResponseError(
            `Honcho ${method} ${path} returned an unexpected body: ${error.message}`,
            { status: response.status, body: decoded, cause: error },
          );
        }
        throw error;
      }
    } finally {
      clearTimeout(timer);
      caller?.removeEventListener("abort", onCallerAbort);
    }
  }

  #redact(message: string): string {
    return this.#apiKey && this.#apiKey.length >= 4
      ? message.split(this.#apiKey).join("[redacted]")
      : message;
  }

  #ws(...rest: string[]): string[] {
    return ["workspaces", this.workspaceId, ...rest];
  }

  /**
   * Calls a workspace-scoped endpoint through `#request()` (which encodes
   * every segment): `segments` follow `/v3/workspaces/{ws}/`, and the
   * caller's signal is passed on. `spec.retry` states the method's policy.
   */
  #call<T>(
    method: Method,
    segments: readonly string[],
    options: CallOptions,
    spec: Omit<RequestSpec<T>, "signal">,
  ): Promise<T> {
    return this.#request(method, this.#ws(...segments), {
      ...spec,
      signal: options.signal,
    });
  }

  #page<T>(
    segments: string[],
    options: ListOptions,
    parseItem: (value: unknown) => T,
    bodyExtra: JsonObject = {},
  ): Promise<HonchoPage<T>> {
    const fetchPage = (page: number): Promise<HonchoPage<T>> =>
      this.#request("POST", segments, {
        query: { page, size: options.size, reverse: options.reverse },
        json: options.filters === undefined
          ? { ...bodyExtra }
          : { ...bodyExtra, filters: options.filters },
        signal: options.signal,
        retry: true,
        parse: (value) => {
          const o = record(value, "page");
          return new HonchoPage<T>({
            items: list(o.items, "page.items").map(parseItem),
            total: numberOr(o, "total", 0),
            page: numberOr(o, "page", page),
            size: numberOr(o, "size", options.size ?? 50),
            pages: numberOr(o, "pages", 0),
          }, fetchPage);
        },
      });
    return fetchPage(options.page ?? 1);
  }

  // -------------------------------------------------------------------------
  // Workspaces
  // -------------------------------------------------------------------------

  /**
   * `POST /v3/workspaces` — gets or creates this client's workspace.
   *
   * @param options Metadata/configuration (ignored for an existing workspace) and signal.
   * @returns The workspace.
   */
  getOrCreateWorkspace(options: ResourceOptions = {}): Promise<Workspace> {
    return this.#request("POST", ["workspaces"], {
      json: resourceBody(this.workspaceId, options),
      signal: options.signal,
      retry: true,
      parse: parseWorkspace,
    });
  }

  /**
   * Gets or creates the workspace once per client: a success is remembered,
   * a failure is not (the next call tries again).
   *
   * @param options The signal.
   * @returns The workspace.
   */
  async ensureWorkspace(options: CallOptions = {}): Promise<Workspace> {
    this.#workspace ??= await this.getOrCreateWorkspace(options);
    return this.#workspace;
  }

  /**
   * `POST /v3/workspaces/list` (admin keys only).
   *
   * @param options Filters, page, size, order and signal.
   * @returns A page of workspaces.
   */
  listWorkspaces(options: ListOptions = {}): Promise<HonchoPage<Workspace>> {
    return this.#page(["workspaces", "list"], options, parseWorkspace);
  }

  /**
   * `POST /v3/workspaces/{ws}/search` — messages across the workspace.
   *
   * @param query The search text.
   * @param options `filters` (e.g. `{peer_perspective: id}`), `limit` 1–100, signal.
   * @returns Matching messages.
   */
  searchWorkspace(
    query: string,
    options: CallOptions & { filters?: JsonObject; limit?: number } = {},
  ): Promise<Message[]> {
    return this.#call("POST", ["search"], options, {
      json: searchBody(query, options),
      retry: true,
      parse: parseList(parseMessage),
    });
  }

  // -------------------------------------------------------------------------
  // Peers
  // -------------------------------------------------------------------------

  /**
   * `POST /v3/workspaces/{ws}/peers` — gets or creates a peer.
   *
   * @param peerId The peer.
   * @param options Metadata/configuration (replace when given) and signal.
   * @returns The peer.
   */
  getOrCreatePeer(
    peerId: string,
    options: ResourceOptions = {},
  ): Promise<Peer> {
    return this.#call("POST", ["peers"], options, {
      json: resourceBody(peerId, options),
      retry: true,
      parse: parsePeer,
    });
  }

  /**
   * `PUT /v3/workspaces/{ws}/peers/{peer}` — updates (or creates) a peer.
   *
   * @param peerId The peer.
   * @param options Metadata/configuration and signal.
   * @returns The peer.
   */
  updatePeer(peerId: string, options: ResourceOptions = {}): Promise<Peer> {
    return this.#call("PUT", ["peers", peerId], options, {
      json: resourceBody(undefined, options),
      retry: true,
      parse: parsePeer,
    });
  }

  /**
   * `POST /v3/workspaces/{ws}/peers/list`.
   *
   * @param options Filters, page, size, order and signal.
   * @returns A page of peers.
   */
  listPeers(options: ListOptions = {}): Promise<HonchoPage<Peer>> {
    return this.#page(this.#ws("peers", "list"), options, parsePeer);
  }

  /**
   * `GET /v3/workspaces/{ws}/peers/{peer}/card` — the card `peerId` keeps
   * (about `target`, or about itself).
   *
   * @param peerId The observer.
   * @param options `target` and signal.
   * @returns The facts, or `null` when there is no card.
   */
  getPeerCard(
    peerId: string,
    options: CallOptions & { target?: string } = {},
  ): Promise<string[] | null> {
    return this.#call("GET", ["peers", peerId, "card"], options, {
      query: { target: options.target },
      retry: true,
      parse: parseCard,
    });
  }

  /**
   * `PUT /v3/workspaces/{ws}/peers/{peer}/card` — overwrites a card.
   *
   * @param peerId The observer.
   * @param card The facts.
   * @param options `target` and signal.
   * @returns The stored facts.
   */
  setPeerCard(
    peerId: string,
    card: readonly string[],
    options: CallOptions & { target?: string } = {},
  ): Promise<string[] | null> {
    return this.#call("PUT", ["peers", peerId, "card"], options, {
      query: { target: options.target },
      json: { peer_card: [...card] },
      retry: true,
      parse: parseCard,
    });
  }

  /**
   * `POST /v3/workspaces/{ws}/peers/{peer}/chat` — the dialectic (non-streaming).
   *
   * @param peerId The peer whose perspective answers.
   * @param query The question (1–10 000 characters).
   * @param options `target`, `reasoningLevel`, `sessionId` and signal.
   * @returns The answer, or `null`.
   */
  peerChat(
    peerId: string,
    query: string,
    options: CallOptions & {
      target?: string;
      reasoningLevel?: string;
      sessionId?: string;
    } = {},
  ): Promise<string | null> {
    return this.#call("POST", ["peers", peerId, "chat"], options, {
      json: withOptional({ query, stream: false }, {
        target: options.target,
        reasoning_level: options.reasoningLevel,
        session_id: options.sessionId,
      }),
      retry: true,
      parse: (value) => nullableText(record(value, "chat"), "content", "chat"),
    });
  }

  /**
   * `GET /v3/workspaces/{ws}/peers/{peer}/context` — representation and card.
   *
   * @param peerId The observer.
   * @param options `target`, search options and signal.
   * @returns The peer context.
   */
  getPeerContext(
    peerId: string,
    options: CallOptions & {
      target?: string;
      searchQuery?: string;
      searchTopK?: number;
      searchMaxDistance?: number;
      includeMostFrequent?: boolean;
      maxConclusions?: number;
    } = {},
  ): Promise<PeerContext> {
    return this.#call("GET", ["peers", peerId, "context"], options, {
      query: {
        target: options.target,
        search_query: options.searchQuery,
        search_top_k: options.searchTopK,
        search_max_distance: options.searchMaxDistance,
        include_most_frequent: options.includeMostFrequent,
        max_conclusions: options.maxConclusions,
      },
      retry: true,
      parse: (value) => {
        const o = record(value, "peer context");
        return {
          peerId: textOr(o, "peer_id", peerId),
          targetId: textOr(o, "target_id", options.target ?? peerId),
          representation: nullableText(o, "representation", "peer context"),
          peerCard: stringList(o.peer_card, "peer context.peer_card"),
        };
      },
    });
  }

  /**
   * `POST /v3/workspaces/{ws}/peers/{peer}/representation`.
   *
   * @param peerId The observer.
   * @param options `target`, `sessionId`, search options and signal.
   * @returns The representation markdown (`""` when there are no conclusions).
   */
  getPeerRepresentation(
    peerId: string,
    options: CallOptions & {
      target?: string;
      sessionId?: string;
      searchQuery?: string;
      searchTopK?: number;
      maxConclusions?: number;
      includeMostFrequent?: boolean;
    } = {},
  ): Promise<string> {
    return this.#call("POST", ["peers", peerId, "representation"], options, {
      json: withOptional({}, {
        target: options.target,
        session_id: options.sessionId,
        search_query: options.searchQuery,
        search_top_k: options.searchTopK,
        max_conclusions: options.maxConclusions,
        include_most_frequent: options.includeMostFrequent,
      }),
      retry: true,
      parse: (value) =>
        nullableText(
          record(value, "representation"),
          "representation",
          "representation",
        ) ?? "",
    });
  }

  /**
   * `POST /v3/workspaces/{ws}/peers/{peer}/search` — messages the peer wrote.
   *
   * @param peerId The author.
   * @param query The search text.
   * @param options `filters`, `limit` 1–100, signal.
   * @returns Matching messages.
   */
  searchPeer(
    peerId: string,
    query: string,
    options: CallOptions & { filters?: JsonObject; limit?: number } = {},
  ): Promise<Message[]> {
    return this.#call("POST", ["peers", peerId, "search"], options, {
      json: searchBody(query, options),
      retry: true,
      parse: parseList(parseMessage),
    });
  }

  // -------------------------------------------------------------------------
  // Sessions
  // -------------------------------------------------------------------------

  /**
   * `POST /v3/workspaces/{ws}/sessions` — gets or creates a session.
   *
   * @param sessionId The session.
   * @param options Metadata, configuration, initial `peers` and signal.
   * @returns The session.
   */
  getOrCreateSession(
    sessionId: string,
    options: ResourceOptions & {
      peers?: Readonly<Record<string, SessionPeerConfig>>;
    } = {},
  ): Promise<Session> {
    const body = resourceBody(sessionId, options);
    if (options.peers !== undefined) body.peers = peerMap(options.peers);
    return this.#call("POST", ["sessions"], options, {
      json: body,
      retry: true,
      parse: parseSession,
    });
  }

  /**
   * `POST /v3/workspaces/{ws}/sessions/list`.
   *
   * @param options Filters, page, size, order and signal.
   * @returns A page of active sessions.
   */
  listSessions(options: ListOptions = {}): Promise<HonchoPage<Session>> {
    return this.#page(this.#ws("sessions", "list"), options, parseSession);
  }

  /**
   * `POST /v3/workspaces/{ws}/sessions/{sess}/peers` — adds peers (active
   * peers keep their existing config).
   *
   * @param sessionId The session.
   * @param peers Peer id → observation switches.
   * @param options The signal.
   * @returns The session.
   */
  addSessionPeers(
    sessionId: string,
    peers: Readonly<Record<string, SessionPeerConfig>>,
    options: CallOptions = {},
  ): Promise<Session> {
    return this.#call("POST", ["sessions", sessionId, "peers"], options, {
      json: peerMap(peers),
      retry: true,
      parse: parseSession,
    });
  }

  /**
   * `PUT /v3/workspaces/{ws}/sessions/{sess}/peers` — replaces the member set.
   *
   * @param sessionId The session.
   * @param peers Peer id → observation switches.
   * @param options The signal.
   * @returns The session.
   */
  setSessionPeers(
    sessionId: string,
    peers: Readonly<Record<string, SessionPeerConfig>>,
    options: CallOptions = {},
  ): Promise<Session> {
    return this.#call("PUT", ["sessions", sessionId, "peers"], options, {
      json: peerMap(peers),
      retry: true,
      parse: parseSession,
    });
  }

  /**
   * `GET /v3/workspaces/{ws}/sessions/{sess}/peers/{peer}/config`.
   *
   * @param sessionId The session.
   * @param peerId The peer.
   * @param options The signal.
   * @returns The switches (`null` = never set).
   */
  getSessionPeerConfig(
    sessionId: string,
    peerId: string,
    options: CallOptions = {},
  ): Promise<SessionPeerConfig> {
    return this.#call(
      "GET",
      ["sessions", sessionId, "peers", peerId, "config"],
      options,
      {
        retry: true,
        parse: parsePeerConfig,
      },
    );
  }

  /**
   * `PUT /v3/workspaces/{ws}/sessions/{sess}/peers/{peer}/config` — merges
   * the given switches.
   *
   * @param sessionId The session.
   * @param peerId The peer.
   * @param config The switches to set.
   * @param options The signal.
   * @returns Nothing (204).
   */
  setSessionPeerConfig(
    sessionId: string,
    peerId: string,
    config: SessionPeerConfig,
    options: CallOptions = {},
  ): Promise<void> {
    return this.#call(
      "PUT",
      ["sessions", sessionId, "peers", peerId, "config"],
      options,
      {
        json: toWirePeerConfig(config),
        retry: true,
        parse: parseNothing,
      },
    );
  }

  /**
   * `GET /v3/workspaces/{ws}/sessions/{sess}/context` — recent messages,
   * summary, and a peer's representation and card within a token budget.
   *
   * @param sessionId The session.
   * @param options Budget, summary, perspective, search options and signal.
   * @returns The context (an unknown session gives empty messages).
   */
  getSessionContext(
    sessionId: string,
    options: CallOptions & {
      tokens?: number;
      summary?: boolean;
      peerTarget?: string;
      peerPerspective?: string;
      limitToSession?: boolean;
      searchQuery?: string;
      searchTopK?: number;
      searchMaxDistance?: number;
      includeMostFrequent?: boolean;
      maxConclusions?: number;
    } = {},
  ): Promise<SessionContext> {
    return this.#call("GET", ["sessions", sessionId, "context"], options, {
      query: {
        tokens: options.tokens,
        summary: options.summary,
        peer_target: options.peerTarget,
        peer_perspective: options.peerPerspective,
        limit_to_session: options.limitToSession,
        search_query: options.searchQuery,
        search_top_k: options.searchTopK,
        search_max_distance: options.searchMaxDistance,
        include_most_frequent: options.includeMostFrequent,
        max_conclusions: options.maxConclusions,
      },
      retry: true,
      parse: (value) => {
        const o = record(value, "session context");
        return {
          id: textOr(o, "id", sessionId),
          messages: o.messages == null
            ? []
            : list(o.messages, "session context.messages").map(parseMessage),
          summary: parseSummary(o.summary),
          peerRepresentation: nullableText(
            o,
            "peer_representation",
            "session context",
          ),
          peerCard: stringList(o.peer_card, "session context.peer_card"),
        };
      },
    });
  }

  /**
   * `POST /v3/workspaces/{ws}/sessions/{sess}/search`.
   *
   * @param sessionId The session.
   * @param query The search text.
   * @param options `filters`, `limit` 1–100, signal.
   * @returns Matching messages.
   */
  searchSession(
    sessionId: string,
    query: string,
    options: CallOptions & { filters?: JsonObject; limit?: number } = {},
  ): Promise<Message[]> {
    return this.#call("POST", ["sessions", sessionId, "search"], options, {
      json: searchBody(query, options),
      retry: true,
      parse: parseList(parseMessage),
    });
  }

  // -------------------------------------------------------------------------
  // Messages
  // -------------------------------------------------------------------------

  /**
   * `POST /v3/workspaces/{ws}/sessions/{sess}/messages` — stores 1–100
   * messages in order. Never retried (a retry could store them twice; the
   * outbox owns redelivery and deduplication).
   *
   * @param sessionId The session (auto-created with its authors).
   * @param messages The messages.
   * @param options The signal.
   * @returns The stored messages, in input order.
   * @throws {RangeError} For 0 or more than 100 messages, or a message over 25 000 characters.
   */
  createMessages(
    sessionId: string,
    messages: readonly MessageInput[],
    options: CallOptions = {},
  ): Promise<Message[]> {
    if (messages.length === 0 || messages.length > MAX_MESSAGES_PER_BATCH) {
      throw new RangeError(
        `Cannot create Honcho messages: a batch holds 1 to ${MAX_MESSAGES_PER_BATCH} messages: current count is ${messages.length}`,
      );
    }
    const wire = messages.map((message, index) => {
      if (message.content.length > MAX_MESSAGE_CHARS) {
        throw new RangeError(
          `Cannot create Honcho messages: message ${index} has ${message.content.length} characters, the limit is ${MAX_MESSAGE_CHARS}`,
        );
      }
      return withOptional(
        { peer_id: message.peerId, content: message.content },
        {
          metadata: message.metadata,
          configuration: message.configuration,
          created_at: message.createdAt instanceof Date
            ? message.createdAt.toISOString()
            : message.createdAt,
        },
      );
    });
    return this.#call("POST", ["sessions", sessionId, "messages"], options, {
      json: { messages: wire },
      retry: false,
      parse: parseList(parseMessage),
    });
  }

  /**
   * `POST /v3/workspaces/{ws}/sessions/{sess}/messages/list`.
   *
   * @param sessionId The session.
   * @param options Filters (e.g. `{metadata: {...}}`), page, size, `reverse` (newest first), signal.
   * @returns A page of messages (an unknown session gives an empty page).
   */
  listMessages(
    sessionId: string,
    options: ListOptions = {},
  ): Promise<HonchoPage<Message>> {
    return this.#page(
      this.#ws("sessions", sessionId, "messages", "list"),
      options,
      parseMessage,
    );
  }

  /**
   * `POST /v3/workspaces/{ws}/sessions/{sess}/messages/upload` — uploads a
   * file as messages authored by a peer (multipart). Never retried.
   *
   * @param sessionId The session.
   * @param upload The file, its name, the author peer, and optional metadata.
   * @param options The signal.
   * @returns The messages the file was split into.
   */
  uploadFile(
    sessionId: string,
    upload: {
      peerId: string;
      file: Blob | Uint8Array | string;
      filename: string;
      contentType?: string;
      metadata?: JsonObject;
      configuration?: JsonObject;
      createdAt?: string | Date;
    },
    options: CallOptions = {},
  ): Promise<Message[]> {
    const form = new FormData();
    const blob = upload.file instanceof Blob
      ? upload.file
      : new Blob([upload.file as BlobPart], {
        type: upload.contentType ?? "text/plain",
      });
    form.append("file", blob, upload.filename);
    form.append("peer_id", upload.peerId);
    if (upload.metadata !== undefined) {
      form.append("metadata", JSON.stringify(upload.metadata));
    }
    if (upload.configuration !== undefined) {
      form.append("configuration", JSON.stringify(upload.configuration));
    }
    if (upload.createdAt !== undefined) {
      form.append(
        "created_at",
        upload.createdAt instanceof Date
          ? upload.createdAt.toISOString()
          : upload.createdAt,
      );
    }
    return this.#call(
      "POST",
      ["sessions", sessionId, "messages", "upload"],
      options,
      {
        form,
        retry: false,
        parse: parseList(parseMessage),
      },
    );
  }

  // -------------------------------------------------------------------------
  // Conclusions
  // -------------------------------------------------------------------------

  /**
   * `POST /v3/workspaces/{ws}/conclusions` — stores 1–100 conclusions.
   * Never retried.
   *
   * @param conclusions The conclusions.
   * @param options The signal.
   * @returns The stored conclusions.
   * @throws {RangeError} For 0 or more than 100 conclusions.
   */
  createConclusions(
    conclusions: readonly ConclusionInput[],
    options: CallOptions = {},
  ): Promise<Conclusion[]> {
    if (conclusions.length === 0 || conclusions.length > 100) {
      throw new RangeError(
        `Cannot create Honcho conclusions: a batch holds 1 to 100 conclusions: current count is ${conclusions.length}`,
      );
    }
    return this.#call("POST", ["conclusions"], options, {
      json: {
        conclusions: conclusions.map((item) =>
          withOptional({
            content: item.content,
            observer_id: item.observerId,
            observed_id: item.observedId,
          }, { session_id: item.sessionId })
        ),
      },
      retry: false,
      parse: parseList(parseConclusion),
    });
  }

  /**
   * `POST /v3/workspaces/{ws}/conclusions/list` — newest first.
   *
   * @param options Filters (`{observer_id, observed_id}`), page, size, order, signal.
   * @returns A page of conclusions.
   */
  listConclusions(options: ListOptions = {}): Promise<HonchoPage<Conclusion>> {
    return this.#page(
      this.#ws("conclusions", "list"),
      options,
      parseConclusion,
    );
  }

  /**
   * `POST /v3/workspaces/{ws}/conclusions/query` — semantic search.
   *
   * @param query The search text.
   * @param options `filters` (observer and observed required), `topK` 1–100, `distance` 0–1, signal.
   * @returns Matching conclusions.
   */
  queryConclusions(
    query: string,
    options: CallOptions & {
      filters: JsonObject;
      topK?: number;
      distance?: number;
    },
  ): Promise<Conclusion[]> {
    return this.#call("POST", ["conclusions", "query"], options, {
      json: withOptional({ query, filters: options.filters }, {
        top_k: options.topK,
        distance: options.distance,
      }),
      retry: true,
      parse: parseList(parseConclusion),
    });
  }

  /**
   * `DELETE /v3/workspaces/{ws}/conclusions/{id}`. Never retried (a retry
   * after a lost answer would report 404).
   *
   * @param conclusionId The conclusion.
   * @param options The signal.
   * @returns Nothing (204).
   */
  deleteConclusion(
    conclusionId: string,
    options: CallOptions = {},
  ): Promise<void> {
    return this.#call("DELETE", ["conclusions", conclusionId], options, {
      retry: false,
      parse: parseNothing,
    });
  }
}

function withOptional(base: JsonObject, optional: JsonObject): JsonObject {
  const out: JsonObject = { ...base };
  for (const [key, value] of Object.entries(optional)) {
    if (value !== undefined) out[key] = value;
  }
  return out;
}

function queryString(query: Record<string, QueryValue> | undefined): string {
  if (!query) return "";
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(query)) {
    if (value === undefined) continue;
    if (Array.isArray(value)) {
      for (const item of value) params.append(key, item);
    } else {
      params.append(key, String(value));
    }
  }
  const text = params.toString();
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

/**
 * Whether a `fetch` failure happened while opening the connection (refused,
 * DNS, unreachable), so the request certainly never left this process.
 */
function neverConnected(error: TypeError): boolean {
  const text = fetchFailureText(error);
  return /\(Connect\)|tcp connect error|dns error|failed to lookup address|Connection refused/i
    .test(text);
}

/** A `fetch` failure's message with its cause (Deno says "fetch failed" and puts the detail there). */
function fetchFailureText(error: TypeError): string {
  const cause = (error.cause as Error | undefined)?.message;
  return typeof cause === "string" && cause !== "" && cause !== error.message
    ? `${error.message} (${cause})`
    : error.message;
}
