/**
 * The Honcho v3 wire format in camelCase (honcho-api.md) and the checks that read a body into it.
 * @module
 */

import { isRecord } from "../_util.ts";

/** The most messages one create call accepts. */
export const MAX_MESSAGES_PER_BATCH = 100;

/** The most characters one message may hold (server `MAX_MESSAGE_SIZE`). */
export const MAX_MESSAGE_CHARS = 25_000;

export type JsonObject = Record<string, unknown>;

// Only the fields some caller reads; the rest of each OpenAPI shape is ignored.
export interface Workspace {
  id: string;
}

export interface Peer {
  id: string;
}

export interface Session {
  id: string;
  isActive: boolean;
}

export interface Message {
  id: string;
  content: string;
  peerId: string;
  sessionId: string;
  /** The outbox stores `hermes_outbox_id` here. */
  metadata: JsonObject;
}

export interface Conclusion {
  id: string;
  content: string;
}

export interface Summary {
  content: string;
}

/** What `GET …/sessions/{id}/context` returns. */
export interface SessionContext {
  /** Oldest first. */
  messages: Message[];
  summary: Summary | null;
  /** The target peer's representation, if a target was given. */
  peerRepresentation: string | null;
  peerCard: string[] | null;
}

/** What `GET …/peers/{id}/context` returns. */
export interface PeerContext {
  representation: string | null;
  peerCard: string[] | null;
}

/** A session peer's observation switches (`null` = never set). */
export interface SessionPeerConfig {
  observeMe?: boolean | null;
  observeOthers?: boolean | null;
}

export interface MessageInput {
  peerId: string;
  /** At most 25 000 characters. */
  content: string;
  metadata?: JsonObject;
  /** `{reasoning: {...}}`. */
  configuration?: JsonObject;
  createdAt?: string | Date;
}

export interface ConclusionInput {
  observerId: string;
  observedId: string;
  content: string;
  sessionId?: string;
}

export interface CallOptions {
  /** Aborts the call; its reason is rethrown unchanged. */
  signal?: AbortSignal;
}

// Filters are passed verbatim.
export interface ListOptions extends CallOptions {
  filters?: JsonObject;
  /** 1-based. @default {1} */
  page?: number;
  /** 1–100. @default {50} */
  size?: number;
  reverse?: boolean;
}

export interface SearchOptions extends CallOptions {
  filters?: JsonObject;
  /** 1–100. */
  limit?: number;
}

/** How the context calls pick the conclusions of a representation. */
export interface ConclusionSearchOptions {
  searchQuery?: string;
  searchTopK?: number;
  /** 0–1. */
  searchMaxDistance?: number;
  includeMostFrequent?: boolean;
  maxConclusions?: number;
}

/** Metadata and configuration of a get-or-create or update. */
export interface ResourceOptions extends CallOptions {
  metadata?: JsonObject;
  configuration?: JsonObject;
}

/** One page of a list endpoint; `for await` yields it and every following page. */
export class HonchoPage<T> implements AsyncIterable<T> {
  constructor(
    readonly items: readonly T[],
    readonly total: number,
    readonly page: number,
    readonly size: number,
    readonly pages: number,
    private readonly fetchPage: (page: number) => Promise<HonchoPage<T>>,
  ) {}

  hasNextPage(): boolean {
    return this.items.length > 0 && this.page < this.pages;
  }

  /** Fetches the following page (`undefined` after the last one). */
  nextPage(): Promise<HonchoPage<T> | undefined> {
    return this.hasNextPage()
      ? this.fetchPage(this.page + 1)
      : Promise.resolve(undefined);
  }

  async *[Symbol.asyncIterator](): AsyncIterator<T> {
    yield* this.items;
    let current = await this.nextPage();
    while (current) {
      yield* current.items;
      current = await current.nextPage();
    }
  }

  /** Collects items from this page onwards, at most `limit`. */
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

/** A body of another shape; the transport makes it an `invalid_response` error. The readers below throw it. */
export class ShapeError extends Error {}

export function record(value: unknown, what: string): JsonObject {
  if (!isRecord(value)) throw new ShapeError(`${what} is not an object`);
  return value;
}

export function text(o: JsonObject, key: string, what: string): string {
  const value = o[key];
  if (typeof value !== "string") {
    throw new ShapeError(`${what}.${key} is not a string`);
  }
  return value;
}

export function nullableText(
  o: JsonObject,
  key: string,
  what: string,
): string | null {
  const value = o[key];
  if (value == null) return null;
  if (typeof value !== "string") {
    throw new ShapeError(`${what}.${key} is not a string or null`);
  }
  return value;
}

export function numberOr(o: JsonObject, key: string, fallback: number): number {
  const value = o[key];
  return typeof value === "number" && Number.isFinite(value) ? value : fallback;
}

export function list(value: unknown, what: string): unknown[] {
  if (!Array.isArray(value)) throw new ShapeError(`${what} is not an array`);
  return value;
}

export function stringList(value: unknown, what: string): string[] | null {
  if (value == null) return null;
  const items = list(value, what);
  for (const item of items) {
    if (typeof item !== "string") {
      throw new ShapeError(`${what} holds a non-string item`);
    }
  }
  return items as string[];
}

export function parseWorkspace(value: unknown): Workspace {
  return { id: text(record(value, "workspace"), "id", "workspace") };
}

export function parsePeer(value: unknown): Peer {
  return { id: text(record(value, "peer"), "id", "peer") };
}

export function parseSession(value: unknown): Session {
  const o = record(value, "session");
  return { id: text(o, "id", "session"), isActive: o.is_active !== false };
}

export function parseMessage(value: unknown): Message {
  const o = record(value, "message");
  return {
    id: text(o, "id", "message"),
    content: text(o, "content", "message"),
    peerId: text(o, "peer_id", "message"),
    sessionId: typeof o.session_id === "string" ? o.session_id : "",
    metadata: isRecord(o.metadata) ? o.metadata : {},
  };
}

export function parseConclusion(value: unknown): Conclusion {
  const o = record(value, "conclusion");
  return {
    id: text(o, "id", "conclusion"),
    content: text(o, "content", "conclusion"),
  };
}

export function parseSummary(value: unknown): Summary | null {
  if (value == null) return null;
  return { content: text(record(value, "summary"), "content", "summary") };
}

export function parseList<T>(
  parse: (value: unknown) => T,
): (value: unknown) => T[] {
  return (value) => list(value, "response").map(parse);
}

/** Reads a peer card answer (`null`: no card). */
export function parseCard(value: unknown): string[] | null {
  return stringList(record(value, "card").peer_card, "card.peer_card");
}

export function conclusionSearchQuery(
  options: ConclusionSearchOptions,
): Record<string, string | number | boolean | undefined> {
  return {
    search_query: options.searchQuery,
    search_top_k: options.searchTopK,
    search_max_distance: options.searchMaxDistance,
    include_most_frequent: options.includeMostFrequent,
    max_conclusions: options.maxConclusions,
  };
}

export function parsePeerConfig(value: unknown): SessionPeerConfig {
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

/** Peer id → switches on the wire. */
export function peerMap(
  peers: Readonly<Record<string, SessionPeerConfig>>,
): JsonObject {
  const out: JsonObject = {};
  for (const [peerId, config] of Object.entries(peers)) {
    out[peerId] = withOptional({}, {
      observe_me: config.observeMe,
      observe_others: config.observeOthers,
    });
  }
  return out;
}

/** The body of a get-or-create or update (`id`, `metadata`, `configuration`). */
export function resourceBody(
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

/** `base` plus the entries of `optional` that are not `undefined`. */
export function withOptional(
  base: JsonObject,
  optional: JsonObject,
): JsonObject {
  const out: JsonObject = { ...base };
  for (const [key, value] of Object.entries(optional)) {
    if (value !== undefined) out[key] = value;
  }
  return out;
}
