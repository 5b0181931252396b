/**
 * Mutations and lookups on the test server's store, with the real server's
 * get-or-create, auto-create and id rules, plus the API views of records.
 *
 * @module
 */
import { notFound, unprocessable } from "./http_error.ts";
import {
  type ConclusionRecord,
  type HonchoTestState,
  isValidResourceId,
  type MessageRecord,
  type PeerRecord,
  RESOURCE_ID_REGEXP,
  type SessionPeerRecord,
  type SessionRecord,
  timestamp,
  type WorkspaceRecord,
} from "./store.ts";

/** Result of a get-or-create: the record and whether it was just created. */
export interface Upsert<T> {
  /** The record. */
  record: T;
  /** `true` when the call created it (answer 201), `false` when it existed (200). */
  created: boolean;
}

function pyList(ids: string[]): string {
  return `[${ids.map((id) => `'${id}'`).join(", ")}]`;
}

function checkId(kind: "Workspace" | "Session", id: string): void {
  if (!isValidResourceId(id)) {
    throw unprocessable(
      `${kind} name '${id}' must match pattern ${RESOURCE_ID_REGEXP.source} and be 1-512 characters`,
    );
  }
}

/**
 * Checks peer names the way auto-created peers are checked (message authors,
 * session peer maps): a single 422 naming every bad id.
 *
 * @param ids Peer ids to check.
 * @throws {HonchoHttpError} 422 when any id breaks the rule or uses the `scope.` prefix.
 */
export function checkPeerIds(ids: string[]): void {
  const bad = ids.filter((id) => !isValidResourceId(id));
  if (bad.length > 0) {
    throw unprocessable(
      `Peer name(s) ${
        pyList(bad)
      } must match pattern ${RESOURCE_ID_REGEXP.source}`,
    );
  }
  const reserved = ids.filter((id) => id.startsWith("scope."));
  if (reserved.length > 0) {
    throw unprocessable(
      `Peer name(s) ${pyList(reserved)} use the reserved 'scope.' prefix`,
    );
  }
}

/**
 * Finds a workspace.
 *
 * @param state The store.
 * @param id Workspace id.
 * @returns The record, or undefined.
 */
export function findWorkspace(
  state: HonchoTestState,
  id: string,
): WorkspaceRecord | undefined {
  return state.workspaces.find((w) => w.id === id);
}

/**
 * Gets or creates a workspace. An existing workspace keeps its data (the
 * body's metadata/configuration are ignored, as on the real server).
 *
 * @param state The store.
 * @param id Workspace id.
 * @param init Metadata and configuration for a new workspace.
 * @returns The workspace and whether it was created.
 */
export function upsertWorkspace(
  state: HonchoTestState,
  id: string,
  init: {
    metadata?: Record<string, unknown>;
    configuration?: Record<string, unknown>;
  } = {},
): Upsert<WorkspaceRecord> {
  const existing = findWorkspace(state, id);
  if (existing) return { record: existing, created: false };
  checkId("Workspace", id);
  const record: WorkspaceRecord = {
    id,
    metadata: init.metadata ?? {},
    configuration: init.configuration ?? {},
    created_at: timestamp(),
  };
  state.workspaces.push(record);
  return { record, created: true };
}

/**
 * Finds a peer.
 *
 * @param state The store.
 * @param workspaceId Workspace id.
 * @param id Peer id.
 * @returns The record, or undefined.
 */
export function findPeer(
  state: HonchoTestState,
  workspaceId: string,
  id: string,
): PeerRecord | undefined {
  return state.peers.find((p) => p.workspace_id === workspaceId && p.id === id);
}

/**
 * Gets or creates a peer (auto-creating the workspace). Metadata and
 * configuration, when given, replace the stored values.
 *
 * @param state The store.
 * @param workspaceId Workspace id.
 * @param id Peer id.
 * @param update Replacement metadata/configuration (null/undefined = keep).
 * @returns The peer and whether it was created.
 */
export function upsertPeer(
  state: HonchoTestState,
  workspaceId: string,
  id: string,
  update: {
    metadata?: Record<string, unknown> | null;
    configuration?: Record<string, unknown> | null;
  } = {},
): Upsert<PeerRecord> {
  upsertWorkspace(state, workspaceId);
  const existing = findPeer(state, workspaceId, id);
  if (existing) {
    if (update.metadata) existing.metadata = update.metadata;
    if (update.configuration) existing.configuration = update.configuration;
    return { record: existing, created: false };
  }
  checkPeerIds([id]);
  const record: PeerRecord = {
    id,
    workspace_id: workspaceId,
    metadata: update.metadata ?? {},
    configuration: update.configuration ?? {},
    created_at: timestamp(),
  };
  state.peers.push(record);
  return { record, created: true };
}

/**
 * Finds a session (active or not).
 *
 * @param state The store.
 * @param workspaceId Workspace id.
 * @param id Session id.
 * @returns The record, or undefined.
 */
export function findSession(
  state: HonchoTestState,
  workspaceId: string,
  id: string,
): SessionRecord | undefined {
  return state.sessions.find((s) =>
    s.workspace_id === workspaceId && s.id === id
  );
}

/**
 * Gets or creates a session (auto-creating the workspace).
 *
 * @param state The store.
 * @param workspaceId Workspace id.
 * @param id Session id.
 * @param update Replacement metadata; configuration keys shallow-merged.
 * @returns The session and whether it was created.
 * @throws {HonchoHttpError} 404 when the session exists but was deleted.
 */
export function upsertSession(
  state: HonchoTestState,
  workspaceId: string,
  id: string,
  update: {
    metadata?: Record<string, unknown> | null;
    configuration?: Record<string, unknown> | null;
  } = {},
): Upsert<SessionRecord> {
  upsertWorkspace(state, workspaceId);
  const existing = findSession(state, workspaceId, id);
  if (existing) {
    if (!existing.is_active) {
      throw notFound(`Session ${id} not found or is inactive`);
    }
    if (update.metadata) existing.metadata = update.metadata;
    if (update.configuration) {
      existing.configuration = {
        ...existing.configuration,
        ...update.configuration,
      };
    }
    return { record: existing, created: false };
  }
  checkId("Session", id);
  const record: SessionRecord = {
    id,
    workspace_id: workspaceId,
    is_active: true,
    metadata: update.metadata ?? {},
    configuration: update.configuration ?? {},
    created_at: timestamp(),
  };
  state.sessions.push(record);
  return { record, created: true };
}

/**
 * Finds the membership row of a peer in a session.
 *
 * @param state The store.
 * @param workspaceId Workspace id.
 * @param sessionId Session id.
 * @param peerId Peer id.
 * @returns The row (active or left), or undefined.
 */
export function findMembership(
  state: HonchoTestState,
  workspaceId: string,
  sessionId: string,
  peerId: string,
): SessionPeerRecord | undefined {
  return state.sessionPeers.find((m) =>
    m.workspace_id === workspaceId && m.session_id === sessionId &&
    m.peer_id === peerId
  );
}

/**
 * Lists the active members of a session.
 *
 * @param state The store.
 * @param workspaceId Workspace id.
 * @param sessionId Session id.
 * @returns Active membership rows in join order.
 */
export function activeMembers(
  state: HonchoTestState,
  workspaceId: string,
  sessionId: string,
): SessionPeerRecord[] {
  return state.sessionPeers.filter((m) =>
    m.workspace_id === workspaceId && m.session_id === sessionId &&
    m.left_at === null
  );
}

/**
 * Adds peers to a session. Already active peers keep their config; peers
 * that had left rejoin with the given config; new peers are auto-created.
 *
 * @param state The store.
 * @param workspaceId Workspace id.
 * @param sessionId Session id.
 * @param peers Map of peer id → `SessionPeerConfig`.
 */
export function joinSession(
  state: HonchoTestState,
  workspaceId: string,
  sessionId: string,
  peers: Record<
    string,
    { observe_me?: boolean | null; observe_others?: boolean | null }
  >,
): void {
  checkPeerIds(Object.keys(peers));
  for (const [peerId, config] of Object.entries(peers)) {
    upsertPeer(state, workspaceId, peerId);
    const row = findMembership(state, workspaceId, sessionId, peerId);
    if (row && row.left_at === null) continue;
    if (row) {
      row.left_at = null;
      row.joined_at = timestamp();
      row.observe_me = config?.observe_me ?? null;
      row.observe_others = config?.observe_others ?? null;
      continue;
    }
    state.sessionPeers.push({
      workspace_id: workspaceId,
      session_id: sessionId,
      peer_id: peerId,
      observe_me: config?.observe_me ?? null,
      observe_others: config?.observe_others ?? null,
      joined_at: timestamp(),
      left_at: null,
    });
  }
}

/**
 * Ensures a session exists and is active, for routes that auto-create it.
 *
 * @param state The store.
 * @param workspaceId Workspace id.
 * @param sessionId Session id.
 * @returns The session.
 */
export function activeSession(
  state: HonchoTestState,
  workspaceId: string,
  sessionId: string,
): SessionRecord {
  return upsertSession(state, workspaceId, sessionId).record;
}

/**
 * Requires an existing active session.
 *
 * @param state The store.
 * @param workspaceId Workspace id.
 * @param sessionId Session id.
 * @returns The session.
 * @throws {HonchoHttpError} 404 when missing or deleted.
 */
export function requireSession(
  state: HonchoTestState,
  workspaceId: string,
  sessionId: string,
): SessionRecord {
  const session = findSession(state, workspaceId, sessionId);
  if (!session || !session.is_active) {
    throw notFound(`Session ${sessionId} not found`);
  }
  return session;
}

/**
 * Requires an existing peer.
 *
 * @param state The store.
 * @param workspaceId Workspace id.
 * @param peerId Peer id.
 * @returns The peer.
 * @throws {HonchoHttpError} 404 when missing.
 */
export function requirePeer(
  state: HonchoTestState,
  workspaceId: string,
  peerId: string,
): PeerRecord {
  const peer = findPeer(state, workspaceId, peerId);
  if (!peer) throw notFound(`Peer ${peerId} not found`);
  return peer;
}

/**
 * API view of a workspace.
 *
 * @param w The record.
 * @returns The `Workspace` JSON.
 */
export function workspaceView(w: WorkspaceRecord): Record<string, unknown> {
  return {
    id: w.id,
    metadata: w.metadata,
    configuration: w.configuration,
    created_at: w.created_at,
  };
}

/**
 * API view of a peer.
 *
 * @param p The record.
 * @returns The `Peer` JSON.
 */
export function peerView(p: PeerRecord): Record<string, unknown> {
  return {
    id: p.id,
    workspace_id: p.workspace_id,
    created_at: p.created_at,
    metadata: p.metadata,
    configuration: p.configuration,
  };
}

/**
 * API view of a session.
 *
 * @param s The record.
 * @returns The `Session` JSON.
 */
export function sessionView(s: SessionRecord): Record<string, unknown> {
  return {
    id: s.id,
    is_active: s.is_active,
    workspace_id: s.workspace_id,
    metadata: s.metadata,
    configuration: s.configuration,
    created_at: s.created_at,
  };
}

/**
 * API view of a message.
 *
 * @param m The record.
 * @returns The `Message` JSON.
 */
export function messageView(m: MessageRecord): Record<string, unknown> {
  return {
    id: m.id,
    content: m.content,
    peer_id: m.peer_id,
    session_id: m.session_id,
    workspace_id: m.workspace_id,
    metadata: m.metadata,
    created_at: m.created_at,
    token_count: m.token_count,
  };
}

/**
 * API view of a conclusion.
 *
 * @param c The record.
 * @returns The `Conclusion` JSON.
 */
export function conclusionView(c: ConclusionRecord): Record<string, unknown> {
  return {
    id: c.id,
    content: c.content,
    observer_id: c.observer_id,
    observed_id: c.observed_id,
    session_id: c.session_id,
    level: c.level,
    created_at: c.created_at,
  };
}

/**
 * Reads the stored card an observer keeps about a target.
 *
 * @param state The store.
 * @param workspaceId Workspace id.
 * @param observerId Observer peer.
 * @param observedId Target peer (the observer itself for the own card).
 * @returns The card lines, or null when none were set.
 */
export function readCard(
  state: HonchoTestState,
  workspaceId: string,
  observerId: string,
  observedId: string,
): string[] | null {
  const card = state.peerCards.find((c) =>
    c.workspace_id === workspaceId && c.observer_id === observerId &&
    c.observed_id === observedId
  );
  return card ? [...card.peer_card] : null;
}
