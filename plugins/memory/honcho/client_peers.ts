/**
 * Peer endpoints of the Honcho v3 API (`/v3/workspaces/{ws}/peers/…`):
 * what each request sends and how its answer is read.
 *
 * @module
 */

import type { Endpoint, ListEndpoint } from "./_client_transport.ts";
import {
  type CallOptions,
  type ConclusionSearchOptions,
  conclusionSearchQuery,
  type Message,
  nullableText,
  parseCard,
  parseList,
  parseMessage,
  parsePeer,
  type Peer,
  type PeerContext,
  record,
  resourceBody,
  type ResourceOptions,
  searchBody,
  type SearchOptions,
  stringList,
  textOr,
  withOptional,
} from "./client_wire.ts";

/** Options of the peer card calls. */
export interface PeerCardOptions extends CallOptions {
  /** The peer the card is about (the observer's own card when omitted). */
  target?: string;
}

/** Options of `peerChat` (the dialectic). */
export interface PeerChatOptions extends CallOptions {
  /** The peer the question is about, from the asking peer's perspective. */
  target?: string;
  /** `minimal`, `low`, `medium`, `high` or `max`. */
  reasoningLevel?: string;
  /** Limit the answer to one session. */
  sessionId?: string;
}

/** Options of `getPeerContext`. */
export interface PeerContextOptions
  extends CallOptions, ConclusionSearchOptions {
  /** The observed peer (the observer itself when omitted). */
  target?: string;
}

/** Options of `getPeerRepresentation`. */
export interface PeerRepresentationOptions extends CallOptions {
  /** The observed peer (the observer itself when omitted). */
  target?: string;
  /** Limit the representation to one session. */
  sessionId?: string;
  /** Ranks conclusions by similarity to this text. */
  searchQuery?: string;
  /** How many conclusions the search returns. */
  searchTopK?: number;
  /** The most conclusions in the representation. */
  maxConclusions?: number;
  /** Include the most frequent conclusions. */
  includeMostFrequent?: boolean;
}

/**
 * `POST …/peers` — gets or creates a peer.
 *
 * @param ws The workspace.
 * @param peerId The peer.
 * @param options Metadata/configuration (replace when given).
 * @returns The endpoint request.
 */
export function getOrCreate(
  ws: string,
  peerId: string,
  options: ResourceOptions,
): Endpoint<Peer> {
  return {
    method: "POST",
    path: ["workspaces", ws, "peers"],
    json: resourceBody(peerId, options),
    retry: true,
    parse: parsePeer,
  };
}

/**
 * `PUT …/peers/{peer}` — updates (or creates) a peer.
 *
 * @param ws The workspace.
 * @param peerId The peer.
 * @param options Metadata/configuration.
 * @returns The endpoint request.
 */
export function update(
  ws: string,
  peerId: string,
  options: ResourceOptions,
): Endpoint<Peer> {
  return {
    method: "PUT",
    path: ["workspaces", ws, "peers", peerId],
    json: resourceBody(undefined, options),
    retry: true,
    parse: parsePeer,
  };
}

/**
 * `POST …/peers/list`.
 *
 * @param ws The workspace.
 * @returns The list endpoint.
 */
export function list(ws: string): ListEndpoint<Peer> {
  return { path: ["workspaces", ws, "peers", "list"], item: parsePeer };
}

/**
 * `GET …/peers/{peer}/card`.
 *
 * @param ws The workspace.
 * @param peerId The observer.
 * @param options `target`.
 * @returns The endpoint request.
 */
export function card(
  ws: string,
  peerId: string,
  options: PeerCardOptions,
): Endpoint<string[] | null> {
  return {
    method: "GET",
    path: ["workspaces", ws, "peers", peerId, "card"],
    query: { target: options.target },
    retry: true,
    parse: parseCard,
  };
}

/**
 * `PUT …/peers/{peer}/card` — overwrites a card.
 *
 * @param ws The workspace.
 * @param peerId The observer.
 * @param facts The facts.
 * @param options `target`.
 * @returns The endpoint request.
 */
export function setCard(
  ws: string,
  peerId: string,
  facts: readonly string[],
  options: PeerCardOptions,
): Endpoint<string[] | null> {
  return {
    method: "PUT",
    path: ["workspaces", ws, "peers", peerId, "card"],
    query: { target: options.target },
    json: { peer_card: [...facts] },
    retry: true,
    parse: parseCard,
  };
}

/**
 * `POST …/peers/{peer}/chat` — the dialectic (non-streaming).
 *
 * @param ws The workspace.
 * @param peerId The peer whose perspective answers.
 * @param query The question.
 * @param options `target`, `reasoningLevel`, `sessionId`.
 * @returns The endpoint request.
 */
export function chat(
  ws: string,
  peerId: string,
  query: string,
  options: PeerChatOptions,
): Endpoint<string | null> {
  return {
    method: "POST",
    path: ["workspaces", ws, "peers", peerId, "chat"],
    json: withOptional({ query, stream: false }, {
      target: options.target,
      reasoning_level: options.reasoningLevel,
      session_id: options.sessionId,
    }),
    retry: true,
    parse: (value) => nullableText(record(value, "chat"), "content", "chat"),
  };
}

/**
 * `GET …/peers/{peer}/context` — representation and card.
 *
 * @param ws The workspace.
 * @param peerId The observer.
 * @param options `target` and search options.
 * @returns The endpoint request.
 */
export function context(
  ws: string,
  peerId: string,
  options: PeerContextOptions,
): Endpoint<PeerContext> {
  return {
    method: "GET",
    path: ["workspaces", ws, "peers", peerId, "context"],
    query: { target: options.target, ...conclusionSearchQuery(options) },
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
  };
}

/**
 * `POST …/peers/{peer}/representation`.
 *
 * @param ws The workspace.
 * @param peerId The observer.
 * @param options `target`, `sessionId` and search options.
 * @returns The endpoint request (`""` when there are no conclusions).
 */
export function representation(
  ws: string,
  peerId: string,
  options: PeerRepresentationOptions,
): Endpoint<string> {
  return {
    method: "POST",
    path: ["workspaces", ws, "peers", peerId, "representation"],
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
  };
}

/**
 * `POST …/peers/{peer}/search` — messages the peer wrote.
 *
 * @param ws The workspace.
 * @param peerId The author.
 * @param query The search text.
 * @param options `filters`, `limit`.
 * @returns The endpoint request.
 */
export function search(
  ws: string,
  peerId: string,
  query: string,
  options: SearchOptions,
): Endpoint<Message[]> {
  return {
    method: "POST",
    path: ["workspaces", ws, "peers", peerId, "search"],
    json: searchBody(query, options),
    retry: true,
    parse: parseList(parseMessage),
  };
}
