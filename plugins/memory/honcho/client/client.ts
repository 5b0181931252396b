/**
 * The Honcho v3 HTTP client: one method per endpoint used (plugins/memory/honcho/SPEC.md §13).
 * @module
 */

import {
  cleanBaseUrl,
  type ConnectionConfig,
  DEFAULT_HONCHO_TIMEOUT_MS,
  HONCHO_ENVIRONMENT_URLS,
  resolveHonchoConnection,
  type ResolveHonchoConnectionOptions,
} from "./connection.ts";
import {
  type Endpoint,
  HonchoTransport,
  type HonchoTransportConfig,
  type HonchoTransportOptions,
} from "./_transport.ts";
import {
  type CallOptions,
  type Conclusion,
  type ConclusionInput,
  type ConclusionSearchOptions,
  conclusionSearchQuery,
  type HonchoPage,
  type JsonObject,
  list,
  type ListOptions,
  MAX_MESSAGE_CHARS,
  MAX_MESSAGES_PER_BATCH,
  type Message,
  type MessageInput,
  nullableText,
  parseCard,
  parseConclusion,
  parseList,
  parseMessage,
  parsePeer,
  parsePeerConfig,
  parseSession,
  parseSummary,
  parseWorkspace,
  type Peer,
  type PeerContext,
  peerMap,
  record,
  resourceBody,
  type ResourceOptions,
  type SearchOptions,
  type Session,
  type SessionContext,
  type SessionPeerConfig,
  stringList,
  withOptional,
  type Workspace,
} from "./wire.ts";
import { sanitizeId } from "../_util.ts";

/** Options of `getPeerCard` and `setPeerCard`. */
export interface PeerCardOptions extends CallOptions {
  /** The peer the card is about (the observer's own card when omitted). */
  target?: string;
}

/** Options of {@linkcode HonchoClient.peerChat} (the dialectic). */
export interface PeerChatOptions extends CallOptions {
  /** The peer the question is about, from the asking peer's perspective. */
  target?: string;
  /** `minimal`, `low`, `medium`, `high` or `max`. */
  reasoningLevel?: string;
  sessionId?: string;
}

export interface PeerContextOptions
  extends CallOptions, ConclusionSearchOptions {
  /** The observed peer (the observer itself when omitted). */
  target?: string;
}

export interface PeerRepresentationOptions
  extends CallOptions, Omit<ConclusionSearchOptions, "searchMaxDistance"> {
  /** The observed peer (the observer itself when omitted). */
  target?: string;
  sessionId?: string;
}

export interface SessionCreateOptions extends ResourceOptions {
  /** Initial members: peer id → observation switches. */
  peers?: Readonly<Record<string, SessionPeerConfig>>;
}

export interface SessionContextOptions
  extends CallOptions, ConclusionSearchOptions {
  /** The token budget of the context. */
  tokens?: number;
  summary?: boolean;
  /** The peer whose representation and card are included. */
  peerTarget?: string;
  /** From whose perspective (the target's own when omitted). */
  peerPerspective?: string;
  limitToSession?: boolean;
}

/** A file {@linkcode HonchoClient.uploadFile} turns into messages. */
export interface FileUpload {
  /** The author peer. */
  peerId: string;
  file: Blob | Uint8Array | string;
  filename: string;
  /** For a non-Blob file. @default {"text/plain"} */
  contentType?: string;
  metadata?: JsonObject;
  configuration?: JsonObject;
  createdAt?: string | Date;
}

export interface ConclusionQueryOptions extends CallOptions {
  /** `observer_id` and `observed_id` are required. */
  filters: JsonObject;
  /** How many results, 1–100. */
  topK?: number;
  /** The largest distance a match may have (0–1). */
  distance?: number;
}

/** A workspace id Honcho accepts: outside `[A-Za-z0-9_-]` becomes `-` (as for peers and sessions). */
function honchoWorkspaceId(workspaceId: string): string {
  const clean = sanitizeId(workspaceId.trim()).slice(0, 512);
  return clean === "" ? "hermes" : clean;
}

/** Options of {@linkcode HonchoClient}: the server defaults to Honcho cloud, the timeout to 30 s. */
export interface HonchoClientOptions extends Partial<HonchoTransportConfig> {
  workspaceId: string;
}

export interface HonchoClientFromConfigOptions
  extends HonchoTransportOptions, ResolveHonchoConnectionOptions {
  /** Overrides the resolved timeout, in ms. */
  timeoutMs?: number;
}

/**
 * The Honcho v3 client. Writes (messages, conclusions, uploads, deletes)
 * are never retried: a retry could store them twice; the outbox owns
 * redelivery.
 */
export class HonchoClient {
  readonly workspaceId: string;
  /** The server, without `/v3`. */
  readonly baseUrl: string;
  readonly timeoutMs: number;
  #options: HonchoClientOptions;
  #http: HonchoTransport;

  /** @throws {RangeError} When `workspaceId` is empty or `timeoutMs` is not positive. */
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
    this.#http = new HonchoTransport({
      ...options,
      baseUrl: this.baseUrl,
      timeoutMs,
    });
  }

  /** A client from a resolved configuration (plugins/memory/honcho/SPEC.md §2); HonchoError `config` without key and URL. */
  static fromConfig(
    config: ConnectionConfig,
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

  /** A client for another workspace with the same server, key and transport. */
  withWorkspace(workspaceId: string): HonchoClient {
    return honchoWorkspaceId(workspaceId) === this.workspaceId
      ? this
      : new HonchoClient({ ...this.#options, workspaceId });
  }

  /** `POST /v3/workspaces`: gets or creates this client's workspace. */
  getOrCreateWorkspace(options: ResourceOptions = {}): Promise<Workspace> {
    return this.#send({
      method: "POST",
      path: ["workspaces"],
      json: resourceBody(this.workspaceId, options),
      retry: true,
      parse: parseWorkspace,
    }, options);
  }

  /** `POST /v3/workspaces/list` (admin keys only). */
  listWorkspaces(options: ListOptions = {}): Promise<HonchoPage<Workspace>> {
    return this.#http.page(["workspaces", "list"], parseWorkspace, options);
  }

  /** `POST …/peers`: gets or creates a peer (metadata/configuration replace when given). */
  getOrCreatePeer(
    peerId: string,
    options: ResourceOptions = {},
  ): Promise<Peer> {
    return this.#send({
      method: "POST",
      path: this.#ws("peers"),
      json: resourceBody(peerId, options),
      retry: true,
      parse: parsePeer,
    }, options);
  }

  /** `POST …/peers/list`. */
  listPeers(options: ListOptions = {}): Promise<HonchoPage<Peer>> {
    return this.#http.page(this.#ws("peers", "list"), parsePeer, options);
  }

  /** `GET …/peers/{peer}/card`: the facts `peerId` keeps (about `target`), `null` when none. */
  getPeerCard(
    peerId: string,
    options: PeerCardOptions = {},
  ): Promise<string[] | null> {
    return this.#send({
      method: "GET",
      path: this.#ws("peers", peerId, "card"),
      query: { target: options.target },
      retry: true,
      parse: parseCard,
    }, options);
  }

  /** `PUT …/peers/{peer}/card`: overwrites a card. */
  setPeerCard(
    peerId: string,
    card: readonly string[],
    options: PeerCardOptions = {},
  ): Promise<string[] | null> {
    return this.#send({
      method: "PUT",
      path: this.#ws("peers", peerId, "card"),
      query: { target: options.target },
      json: { peer_card: [...card] },
      retry: true,
      parse: parseCard,
    }, options);
  }

  /** `POST …/peers/{peer}/chat`: the dialectic (non-streaming); `null` for no answer. */
  peerChat(
    peerId: string,
    query: string,
    options: PeerChatOptions = {},
  ): Promise<string | null> {
    return this.#send({
      method: "POST",
      path: this.#ws("peers", peerId, "chat"),
      json: withOptional({ query, stream: false }, {
        target: options.target,
        reasoning_level: options.reasoningLevel,
        session_id: options.sessionId,
      }),
      retry: true,
      parse: (value) => nullableText(record(value, "chat"), "content", "chat"),
    }, options);
  }

  /** `GET …/peers/{peer}/context`: representation and card. */
  getPeerContext(
    peerId: string,
    options: PeerContextOptions = {},
  ): Promise<PeerContext> {
    return this.#send({
      method: "GET",
      path: this.#ws("peers", peerId, "context"),
      query: { target: options.target, ...conclusionSearchQuery(options) },
      retry: true,
      parse: (value) => {
        const o = record(value, "peer context");
        return {
          representation: nullableText(o, "representation", "peer context"),
          peerCard: stringList(o.peer_card, "peer context.peer_card"),
        };
      },
    }, options);
  }

  /** `POST …/peers/{peer}/representation` (`""` when there are no conclusions). */
  getPeerRepresentation(
    peerId: string,
    options: PeerRepresentationOptions = {},
  ): Promise<string> {
    return this.#send({
      method: "POST",
      path: this.#ws("peers", peerId, "representation"),
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
    }, options);
  }

  /** `POST …/peers/{peer}/search`: messages the peer wrote. */
  searchPeer(
    peerId: string,
    query: string,
    options: SearchOptions = {},
  ): Promise<Message[]> {
    return this.#send({
      method: "POST",
      path: this.#ws("peers", peerId, "search"),
      json: withOptional({ query }, {
        filters: options.filters,
        limit: options.limit,
      }),
      retry: true,
      parse: parseList(parseMessage),
    }, options);
  }

  /** `POST …/sessions`: gets or creates a session. */
  getOrCreateSession(
    sessionId: string,
    options: SessionCreateOptions = {},
  ): Promise<Session> {
    const body = resourceBody(sessionId, options);
    if (options.peers !== undefined) body.peers = peerMap(options.peers);
    return this.#send({
      method: "POST",
      path: this.#ws("sessions"),
      json: body,
      retry: true,
      parse: parseSession,
    }, options);
  }

  /** `POST …/sessions/{sess}/peers`: adds peers (active peers keep their config). */
  addSessionPeers(
    sessionId: string,
    peers: Readonly<Record<string, SessionPeerConfig>>,
    options: CallOptions = {},
  ): Promise<Session> {
    return this.#send({
      method: "POST",
      path: this.#ws("sessions", sessionId, "peers"),
      json: peerMap(peers),
      retry: true,
      parse: parseSession,
    }, options);
  }

  /** `GET …/sessions/{sess}/peers/{peer}/config` (`null` = never set). */
  getSessionPeerConfig(
    sessionId: string,
    peerId: string,
    options: CallOptions = {},
  ): Promise<SessionPeerConfig> {
    return this.#send({
      method: "GET",
      path: this.#ws("sessions", sessionId, "peers", peerId, "config"),
      retry: true,
      parse: parsePeerConfig,
    }, options);
  }

  /** `PUT …/sessions/{sess}/peers/{peer}/config`. */
  setSessionPeerConfig(
    sessionId: string,
    peerId: string,
    config: SessionPeerConfig,
    options: CallOptions = {},
  ): Promise<void> {
    return this.#send({
      method: "PUT",
      path: this.#ws("sessions", sessionId, "peers", peerId, "config"),
      json: peerMap({ [peerId]: config })[peerId] as JsonObject,
      retry: true,
      parse: () => {},
    }, options);
  }

  /** `GET …/sessions/{sess}/context` (an unknown session gives empty messages). */
  getSessionContext(
    sessionId: string,
    options: SessionContextOptions = {},
  ): Promise<SessionContext> {
    return this.#send({
      method: "GET",
      path: this.#ws("sessions", sessionId, "context"),
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
    }, options);
  }

  /** `POST …/sessions/{sess}/messages`: 1–100 messages of at most 25 000 characters (else RangeError). */
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
          created_at: isoDate(message.createdAt),
        },
      );
    });
    return this.#send({
      method: "POST",
      path: this.#ws("sessions", sessionId, "messages"),
      json: { messages: wire },
      retry: false,
      parse: parseList(parseMessage),
    }, options);
  }

  /** `POST …/sessions/{sess}/messages/list` (an unknown session gives an empty page). */
  listMessages(
    sessionId: string,
    options: ListOptions = {},
  ): Promise<HonchoPage<Message>> {
    return this.#http.page(
      this.#ws("sessions", sessionId, "messages", "list"),
      parseMessage,
      options,
    );
  }

  /** `POST …/sessions/{sess}/messages/upload`: a file as messages authored by a peer (multipart). */
  uploadFile(
    sessionId: string,
    upload: FileUpload,
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
    const createdAt = isoDate(upload.createdAt);
    if (createdAt !== undefined) form.append("created_at", createdAt);
    return this.#send({
      method: "POST",
      path: this.#ws("sessions", sessionId, "messages", "upload"),
      form,
      retry: false,
      parse: parseList(parseMessage),
    }, options);
  }

  /** `POST …/conclusions`: 1–100 conclusions (else RangeError). */
  createConclusions(
    conclusions: readonly ConclusionInput[],
    options: CallOptions = {},
  ): Promise<Conclusion[]> {
    if (conclusions.length === 0 || conclusions.length > 100) {
      throw new RangeError(
        `Cannot create Honcho conclusions: a batch holds 1 to 100 conclusions: current count is ${conclusions.length}`,
      );
    }
    return this.#send({
      method: "POST",
      path: this.#ws("conclusions"),
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
    }, options);
  }

  /** `POST …/conclusions/list`, newest first. */
  listConclusions(options: ListOptions = {}): Promise<HonchoPage<Conclusion>> {
    return this.#http.page(
      this.#ws("conclusions", "list"),
      parseConclusion,
      options,
    );
  }

  /** `POST …/conclusions/query`: semantic search. */
  queryConclusions(
    query: string,
    options: ConclusionQueryOptions,
  ): Promise<Conclusion[]> {
    return this.#send({
      method: "POST",
      path: this.#ws("conclusions", "query"),
      json: withOptional({ query, filters: options.filters }, {
        top_k: options.topK,
        distance: options.distance,
      }),
      retry: true,
      parse: parseList(parseConclusion),
    }, options);
  }

  /** `DELETE …/conclusions/{id}` (not retried: a retry after a lost answer would report 404). */
  deleteConclusion(
    conclusionId: string,
    options: CallOptions = {},
  ): Promise<void> {
    return this.#send({
      method: "DELETE",
      path: this.#ws("conclusions", conclusionId),
      retry: false,
      parse: () => {},
    }, options);
  }

  #ws(...segments: string[]): string[] {
    return ["workspaces", this.workspaceId, ...segments];
  }

  #send<T>(endpoint: Endpoint<T>, options: CallOptions): Promise<T> {
    return this.#http.send(endpoint, options.signal);
  }
}

function isoDate(value: string | Date | undefined): string | undefined {
  return value instanceof Date ? value.toISOString() : value;
}
