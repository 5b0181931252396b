/**
 * Session and message endpoints of the Honcho v3 API
 * (`/v3/workspaces/{ws}/sessions/…`): what each request sends and how its
 * answer is read. Creating messages and uploads are never retried (a retry
 * could store them twice; the outbox resolves what Honcho stored instead).
 *
 * @module
 */

import type { Endpoint, ListEndpoint } from "./_client_transport.ts";
import {
  type CallOptions,
  type ConclusionSearchOptions,
  conclusionSearchQuery,
  type JsonObject,
  list,
  MAX_MESSAGE_CHARS,
  MAX_MESSAGES_PER_BATCH,
  type Message,
  type MessageInput,
  nullableText,
  parseList,
  parseMessage,
  parseNothing,
  parsePeerConfig,
  parseSession,
  parseSummary,
  peerMap,
  record,
  resourceBody,
  type ResourceOptions,
  searchBody,
  type SearchOptions,
  type Session,
  type SessionContext,
  type SessionPeerConfig,
  stringList,
  textOr,
  toWirePeerConfig,
  withOptional,
} from "./client_wire.ts";

/** Options of `getOrCreateSession`. */
export interface SessionCreateOptions extends ResourceOptions {
  /** Initial members: peer id → observation switches. */
  peers?: Readonly<Record<string, SessionPeerConfig>>;
}

/** Options of `getSessionContext`. */
export interface SessionContextOptions
  extends CallOptions, ConclusionSearchOptions {
  /** The token budget of the context. */
  tokens?: number;
  /** Include the session summary. */
  summary?: boolean;
  /** The peer whose representation and card are included. */
  peerTarget?: string;
  /** From whose perspective (the target's own when omitted). */
  peerPerspective?: string;
  /** Limit the representation to this session. */
  limitToSession?: boolean;
}

/** A file `uploadFile` turns into messages. */
export interface FileUpload {
  /** The author peer. */
  peerId: string;
  /** The file's content. */
  file: Blob | Uint8Array | string;
  /** Its name. */
  filename: string;
  /** Its type (for a non-Blob file). @default {"text/plain"} */
  contentType?: string;
  /** Metadata of the messages. */
  metadata?: JsonObject;
  /** Configuration of the messages. */
  configuration?: JsonObject;
  /** When it was said. */
  createdAt?: string | Date;
}

/**
 * `POST …/sessions` — gets or creates a session.
 *
 * @param ws The workspace.
 * @param sessionId The session.
 * @param options Metadata, configuration and initial `peers`.
 * @returns The endpoint request.
 */
export function getOrCreate(
  ws: string,
  sessionId: string,
  options: SessionCreateOptions,
): Endpoint<Session> {
  const body = resourceBody(sessionId, options);
  if (options.peers !== undefined) body.peers = peerMap(options.peers);
  return {
    method: "POST",
    path: ["workspaces", ws, "sessions"],
    json: body,
    retry: true,
    parse: parseSession,
  };
}

/**
 * `POST …/sessions/list`.
 *
 * @param ws The workspace.
 * @returns The list endpoint.
 */
export function listSessions(ws: string): ListEndpoint<Session> {
  return { path: ["workspaces", ws, "sessions", "list"], item: parseSession };
}

/**
 * `POST …/sessions/{sess}/peers` (add) or `PUT` (replace the member set).
 *
 * @param ws The workspace.
 * @param sessionId The session.
 * @param peers Peer id → observation switches.
 * @param method `POST` adds, `PUT` replaces.
 * @returns The endpoint request.
 */
export function members(
  ws: string,
  sessionId: string,
  peers: Readonly<Record<string, SessionPeerConfig>>,
  method: "POST" | "PUT",
): Endpoint<Session> {
  return {
    method,
    path: ["workspaces", ws, "sessions", sessionId, "peers"],
    json: peerMap(peers),
    retry: true,
    parse: parseSession,
  };
}

/**
 * `GET …/sessions/{sess}/peers/{peer}/config`.
 *
 * @param ws The workspace.
 * @param sessionId The session.
 * @param peerId The peer.
 * @returns The endpoint request.
 */
export function peerConfig(
  ws: string,
  sessionId: string,
  peerId: string,
): Endpoint<SessionPeerConfig> {
  return {
    method: "GET",
    path: ["workspaces", ws, "sessions", sessionId, "peers", peerId, "config"],
    retry: true,
    parse: parsePeerConfig,
  };
}

/**
 * `PUT …/sessions/{sess}/peers/{peer}/config` — merges the given switches.
 *
 * @param ws The workspace.
 * @param sessionId The session.
 * @param peerId The peer.
 * @param config The switches to set.
 * @returns The endpoint request.
 */
export function setPeerConfig(
  ws: string,
  sessionId: string,
  peerId: string,
  config: SessionPeerConfig,
): Endpoint<void> {
  return {
    method: "PUT",
    path: ["workspaces", ws, "sessions", sessionId, "peers", peerId, "config"],
    json: toWirePeerConfig(config),
    retry: true,
    parse: parseNothing,
  };
}

/**
 * `GET …/sessions/{sess}/context` — recent messages, summary, and a peer's
 * representation and card within a token budget.
 *
 * @param ws The workspace.
 * @param sessionId The session.
 * @param options Budget, summary, perspective and search options.
 * @returns The endpoint request.
 */
export function context(
  ws: string,
  sessionId: string,
  options: SessionContextOptions,
): Endpoint<SessionContext> {
  return {
    method: "GET",
    path: ["workspaces", ws, "sessions", sessionId, "context"],
    query: {
      tokens: options.tokens,
      summary: options.summary,
      peer_target: options.peerTarget,
      peer_perspective: options.peerPerspective,
      limit_to_session: options.limitToSession,
      ...conclusionSearchQuery(options),
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
  };
}

/**
 * `POST …/sessions/{sess}/search`.
 *
 * @param ws The workspace.
 * @param sessionId The session.
 * @param query The search text.
 * @param options `filters`, `limit`.
 * @returns The endpoint request.
 */
export function search(
  ws: string,
  sessionId: string,
  query: string,
  options: SearchOptions,
): Endpoint<Message[]> {
  return {
    method: "POST",
    path: ["workspaces", ws, "sessions", sessionId, "search"],
    json: searchBody(query, options),
    retry: true,
    parse: parseList(parseMessage),
  };
}

/**
 * `POST …/sessions/{sess}/messages` — stores 1–100 messages in order.
 * Never retried.
 *
 * @param ws The workspace.
 * @param sessionId The session.
 * @param messages The messages.
 * @returns The endpoint request.
 * @throws {RangeError} For 0 or more than 100 messages, or a message over 25 000 characters.
 */
export function createMessages(
  ws: string,
  sessionId: string,
  messages: readonly MessageInput[],
): Endpoint<Message[]> {
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
  return {
    method: "POST",
    path: ["workspaces", ws, "sessions", sessionId, "messages"],
    json: { messages: wire },
    retry: false,
    parse: parseList(parseMessage),
  };
}

/**
 * `POST …/sessions/{sess}/messages/list`.
 *
 * @param ws The workspace.
 * @param sessionId The session.
 * @returns The list endpoint.
 */
export function listMessages(
  ws: string,
  sessionId: string,
): ListEndpoint<Message> {
  return {
    path: ["workspaces", ws, "sessions", sessionId, "messages", "list"],
    item: parseMessage,
  };
}

/**
 * `POST …/sessions/{sess}/messages/upload` — a file as messages authored
 * by a peer (multipart). Never retried.
 *
 * @param ws The workspace.
 * @param sessionId The session.
 * @param upload The file, its name, the author and optional metadata.
 * @returns The endpoint request.
 */
export function uploadFile(
  ws: string,
  sessionId: string,
  upload: FileUpload,
): Endpoint<Message[]> {
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
  return {
    method: "POST",
    path: ["workspaces", ws, "sessions", sessionId, "messages", "upload"],
    form,
    retry: false,
    parse: parseList(parseMessage),
  };
}
