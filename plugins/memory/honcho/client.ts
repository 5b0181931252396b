/**
 * A small Honcho v3 HTTP client on plain `fetch` (honcho-api.md,
 * plugins/memory/honcho/SPEC.md §13).
 *
 * {@linkcode HonchoClient} is a facade of one-line endpoint methods taking
 * camelCase options and returning camelCase objects. Underneath:
 *
 * - `_client_transport.ts` — the private transport whose one `#request()`
 *   calls `fetch`: URL and path encoding, bearer token and telemetry
 *   headers, JSON and shape checks, a per-attempt deadline that aborts the
 *   fetch, error mapping to `errors.ts`, and retries of idempotent requests
 *   only (one rule, `_backoff.ts`); writes never go over a reused
 *   connection, so Deno's `fetch` cannot silently re-send them;
 * - `client_workspaces.ts`, `client_peers.ts`, `client_sessions.ts` (with
 *   messages) and `client_conclusions.ts` — what each endpoint sends and
 *   how its answer is read;
 * - `client_wire.ts` — the camelCase types, pages and boundary checks.
 *
 * A workspace id Honcho would refuse (outside `[A-Za-z0-9_-]`, e.g.
 * `my ws`) is sanitised like peer and session ids (`my-ws`). A network
 * access Deno denies becomes a `PermissionDeniedError`.
 *
 * @module
 */

import { isRetryableHonchoError } from "./_backoff.ts";
import {
  cleanBaseUrl,
  DEFAULT_HONCHO_TIMEOUT_MS,
  HONCHO_ENVIRONMENT_URLS,
  resolveHonchoConnection,
  type ResolveHonchoConnectionOptions,
} from "./connection.ts";
import type { HonchoConfig } from "./config.ts";
import {
  type Endpoint,
  HonchoTransport,
  type HonchoTransportOptions,
} from "./_client_transport.ts";
import type {
  CallOptions,
  Conclusion,
  ConclusionInput,
  HonchoPage,
  ListOptions,
  Message,
  MessageInput,
  Peer,
  PeerContext,
  ResourceOptions,
  SearchOptions,
  Session,
  SessionContext,
  SessionPeerConfig,
  Workspace,
} from "./client_wire.ts";
import * as workspaceApi from "./client_workspaces.ts";
import * as peerApi from "./client_peers.ts";
import type {
  PeerCardOptions,
  PeerChatOptions,
  PeerContextOptions,
  PeerRepresentationOptions,
} from "./client_peers.ts";
import * as sessionApi from "./client_sessions.ts";
import type {
  FileUpload,
  SessionContextOptions,
  SessionCreateOptions,
} from "./client_sessions.ts";
import * as conclusionApi from "./client_conclusions.ts";
import type { ConclusionQueryOptions } from "./client_conclusions.ts";

export {
  abortableSleep,
  type FetchLike,
  type HonchoTransportOptions,
  parseRetryAfter,
  type SleepLike,
} from "./_client_transport.ts";
export {
  type CallOptions,
  type Conclusion,
  type ConclusionInput,
  type ConclusionSearchOptions,
  HonchoPage,
  type JsonObject,
  type ListOptions,
  MAX_MESSAGE_CHARS,
  MAX_MESSAGES_PER_BATCH,
  type Message,
  type MessageInput,
  type Peer,
  type PeerContext,
  type ResourceOptions,
  type SearchOptions,
  type Session,
  type SessionContext,
  type SessionPeerConfig,
  type Summary,
  type Workspace,
} from "./client_wire.ts";
export type {
  PeerCardOptions,
  PeerChatOptions,
  PeerContextOptions,
  PeerRepresentationOptions,
} from "./client_peers.ts";
export type {
  FileUpload,
  SessionContextOptions,
  SessionCreateOptions,
} from "./client_sessions.ts";
export type { ConclusionQueryOptions } from "./client_conclusions.ts";
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

/**
 * The Honcho v3 HTTP client. Construct it directly, or from a resolved
 * configuration with {@linkcode HonchoClient.fromConfig}.
 */
export class HonchoClient {
  /** The workspace of workspace-scoped calls. */
  readonly workspaceId: string;
  /** The server, without `/v3`. */
  readonly baseUrl: string;
  /** Per-attempt deadline in ms. */
  readonly timeoutMs: number;
  #options: HonchoClientOptions;
  #http: HonchoTransport;
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
    this.#http = new HonchoTransport({
      ...options,
      baseUrl: this.baseUrl,
      timeoutMs,
    });
  }

  /**
   * Builds a client from a resolved configuration: cleaned base URL, the
   * `"local"` placeholder key for a local server, timeout (default 30 s) and
   * telemetry headers (plugins/memory/honcho/SPEC.md §2).
   *
   * @param config The resolved configuration.
   * @param options `config.yaml` fallbacks, telemetry, transport overrides.
   * @returns The client.
   * @throws {import("./errors.ts").HonchoConfigError} When no API key and no base URL are configured.
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
  // Workspaces
  // -------------------------------------------------------------------------

  /**
   * `POST /v3/workspaces` — gets or creates this client's workspace.
   *
   * @param options Metadata/configuration (ignored for an existing workspace) and signal.
   * @returns The workspace.
   */
  getOrCreateWorkspace(options: ResourceOptions = {}): Promise<Workspace> {
    return this.#send(
      workspaceApi.getOrCreate(this.workspaceId, options),
      options,
    );
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
    return this.#http.page(workspaceApi.list(), options);
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
    options: SearchOptions = {},
  ): Promise<Message[]> {
    return this.#send(
      workspaceApi.search(this.workspaceId, query, options),
      options,
    );
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
    return this.#send(
      peerApi.getOrCreate(this.workspaceId, peerId, options),
      options,
    );
  }

  /**
   * `PUT /v3/workspaces/{ws}/peers/{peer}` — updates (or creates) a peer.
   *
   * @param peerId The peer.
   * @param options Metadata/configuration and signal.
   * @returns The peer.
   */
  updatePeer(peerId: string, options: ResourceOptions = {}): Promise<Peer> {
    return this.#send(
      peerApi.update(this.workspaceId, peerId, options),
      options,
    );
  }

  /**
   * `POST /v3/workspaces/{ws}/peers/list`.
   *
   * @param options Filters, page, size, order and signal.
   * @returns A page of peers.
   */
  listPeers(options: ListOptions = {}): Promise<HonchoPage<Peer>> {
    return this.#http.page(peerApi.list(this.workspaceId), options);
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
    options: PeerCardOptions = {},
  ): Promise<string[] | null> {
    return this.#send(peerApi.card(this.workspaceId, peerId, options), options);
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
    options: PeerCardOptions = {},
  ): Promise<string[] | null> {
    return this.#send(
      peerApi.setCard(this.workspaceId, peerId, card, options),
      options,
    );
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
    options: PeerChatOptions = {},
  ): Promise<string | null> {
    return this.#send(
      peerApi.chat(this.workspaceId, peerId, query, options),
      options,
    );
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
    options: PeerContextOptions = {},
  ): Promise<PeerContext> {
    return this.#send(
      peerApi.context(this.workspaceId, peerId, options),
      options,
    );
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
    options: PeerRepresentationOptions = {},
  ): Promise<string> {
    return this.#send(
      peerApi.representation(this.workspaceId, peerId, options),
      options,
    );
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
    options: SearchOptions = {},
  ): Promise<Message[]> {
    return this.#send(
      peerApi.search(this.workspaceId, peerId, query, options),
      options,
    );
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
    options: SessionCreateOptions = {},
  ): Promise<Session> {
    return this.#send(
      sessionApi.getOrCreate(this.workspaceId, sessionId, options),
      options,
    );
  }

  /**
   * `POST /v3/workspaces/{ws}/sessions/list`.
   *
   * @param options Filters, page, size, order and signal.
   * @returns A page of active sessions.
   */
  listSessions(options: ListOptions = {}): Promise<HonchoPage<Session>> {
    return this.#http.page(sessionApi.listSessions(this.workspaceId), options);
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
    return this.#send(
      sessionApi.members(this.workspaceId, sessionId, peers, "POST"),
      options,
    );
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
    return this.#send(
      sessionApi.members(this.workspaceId, sessionId, peers, "PUT"),
      options,
    );
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
    return this.#send(
      sessionApi.peerConfig(this.workspaceId, sessionId, peerId),
      options,
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
    return this.#send(
      sessionApi.setPeerConfig(this.workspaceId, sessionId, peerId, config),
      options,
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
    options: SessionContextOptions = {},
  ): Promise<SessionContext> {
    return this.#send(
      sessionApi.context(this.workspaceId, sessionId, options),
      options,
    );
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
    options: SearchOptions = {},
  ): Promise<Message[]> {
    return this.#send(
      sessionApi.search(this.workspaceId, sessionId, query, options),
      options,
    );
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
    return this.#send(
      sessionApi.createMessages(this.workspaceId, sessionId, messages),
      options,
    );
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
    return this.#http.page(
      sessionApi.listMessages(this.workspaceId, sessionId),
      options,
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
    upload: FileUpload,
    options: CallOptions = {},
  ): Promise<Message[]> {
    return this.#send(
      sessionApi.uploadFile(this.workspaceId, sessionId, upload),
      options,
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
    return this.#send(
      conclusionApi.create(this.workspaceId, conclusions),
      options,
    );
  }

  /**
   * `POST /v3/workspaces/{ws}/conclusions/list` — newest first.
   *
   * @param options Filters (`{observer_id, observed_id}`), page, size, order, signal.
   * @returns A page of conclusions.
   */
  listConclusions(options: ListOptions = {}): Promise<HonchoPage<Conclusion>> {
    return this.#http.page(conclusionApi.list(this.workspaceId), options);
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
    options: ConclusionQueryOptions,
  ): Promise<Conclusion[]> {
    return this.#send(
      conclusionApi.query(this.workspaceId, query, options),
      options,
    );
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
    return this.#send(
      conclusionApi.remove(this.workspaceId, conclusionId),
      options,
    );
  }

  #send<T>(endpoint: Endpoint<T>, options: CallOptions): Promise<T> {
    return this.#http.send(endpoint, options.signal);
  }
}
