/**
 * Session routes: get-or-create, list, update, delete, clone, membership and
 * per-peer config, session context, summaries and session search.
 *
 * @module
 */
import { renderRepresentation, selectConclusions } from "./dialectic.ts";
import { applyFilters, SESSION_FILTERS } from "./filters.ts";
import {
  HonchoHttpError,
  jsonResponse,
  notFound,
  unprocessable,
} from "./http_error.ts";
import {
  bodyObject,
  pageQuery,
  param,
  type RouteContext,
  type RouteHandlers,
} from "./route_context.ts";
import { filterSearchPool, searchMessages } from "./search.ts";
import {
  type HonchoTestState,
  nanoid,
  paginate,
  type SummaryRecord,
  timestamp,
  tokenCount,
} from "./store.ts";
import {
  activeMembers,
  activeSession,
  checkPeerIds,
  findMembership,
  findPeer,
  findSession,
  joinSession,
  messageView,
  peerView,
  readCard,
  requireSession,
  sessionView,
  upsertPeer,
  upsertSession,
} from "./store_ops.ts";

type Json = Record<string, unknown>;
type PeerConfigMap = Record<
  string,
  { observe_me?: boolean | null; observe_others?: boolean | null }
>;

/** Maximum number of peers with `observe_others=true` in one session. */
export const SESSION_OBSERVERS_LIMIT = 10;
/** Token budget of session context when `tokens` is not given. */
export const GET_CONTEXT_MAX_TOKENS = 100_000;

function checkObserverLimit(
  state: HonchoTestState,
  ws: string,
  sid: string,
): void {
  const observers = activeMembers(state, ws, sid).filter((m) =>
    m.observe_others === true
  );
  if (observers.length > SESSION_OBSERVERS_LIMIT) {
    throw new HonchoHttpError(
      400,
      // Honcho 3.0.12's wording.
      `Cannot create session ${sid} with ${observers.length} observers. Maximum allowed is ${SESSION_OBSERVERS_LIMIT} observers per session. Observers are peers with 'observe_others' set to true.`,
    );
  }
}

function withObserverLimit<T>(
  state: HonchoTestState,
  ws: string,
  sid: string,
  fn: () => T,
): T {
  const snapshot = state.sessionPeers.map((m) => ({ ...m }));
  const result = fn();
  try {
    checkObserverLimit(state, ws, sid);
  } catch (error) {
    state.sessionPeers = snapshot;
    throw error;
  }
  return result;
}

function latestSummary(
  state: HonchoTestState,
  ws: string,
  sid: string,
  type: "short" | "long",
): SummaryRecord | null {
  const list = state.summaries.filter((s) =>
    s.workspace_id === ws && s.session_id === sid && s.summary_type === type
  );
  return list.at(-1) ?? null;
}

function summaryView(s: SummaryRecord | null): Json | null {
  if (!s) return null;
  return {
    content: s.content,
    message_id: s.message_id,
    summary_type: s.summary_type,
    created_at: s.created_at,
    token_count: s.token_count,
  };
}

function optionalString(value: unknown): string | undefined {
  return typeof value === "string" && value !== "" ? value : undefined;
}

function optionalNumber(value: unknown): number | undefined {
  return typeof value === "number" ? value : undefined;
}

function sessionContext(ctx: RouteContext): Response {
  const ws = param(ctx, "workspace_id");
  const sid = param(ctx, "session_id");
  const q = ctx.query;
  const target = optionalString(q.peer_target);
  const perspective = optionalString(q.peer_perspective);
  const scope = optionalString(q.scope);
  const rawSessions = q.sessions === undefined
    ? undefined
    : [q.sessions].flat().map(String);
  if (perspective !== undefined && target === undefined) {
    throw unprocessable("peer_perspective requires peer_target");
  }
  if (scope !== undefined && target === undefined) {
    throw unprocessable("scope requires peer_target");
  }
  if (scope !== undefined && perspective !== undefined) {
    throw unprocessable("scope cannot be combined with peer_perspective");
  }
  if (rawSessions !== undefined) {
    if (target === undefined) {
      throw unprocessable("sessions requires peer_target");
    }
    if (!rawSessions.includes(sid)) {
      throw unprocessable("session_id must be included in sessions");
    }
  }
  const budget = typeof q.tokens === "number"
    ? q.tokens
    : GET_CONTEXT_MAX_TOKENS;
  let representation: string | null = null;
  let card: string[] | null = null;
  if (target !== undefined) {
    const observer = perspective ?? target;
    representation = renderRepresentation(selectConclusions(ctx.state, {
      workspaceId: ws,
      observerId: observer,
      observedId: target,
      sessions: q.limit_to_session === true ? [sid] : rawSessions,
      searchQuery: optionalString(q.search_query),
      searchTopK: optionalNumber(q.search_top_k),
      maxConclusions: optionalNumber(q.max_conclusions),
    }));
    card = q.limit_to_session === true
      ? null
      : readCard(ctx.state, ws, observer, target);
  }
  let remaining = budget - tokenCount(representation ?? "") -
    (card ? tokenCount(card.join("\n")) : 0);
  const session = findSession(ctx.state, ws, sid);
  const messages = session
    ? ctx.state.messages.filter((m) =>
      m.workspace_id === ws && m.session_id === sid
    )
    : [];
  let summary: SummaryRecord | null = null;
  if (q.summary !== false && session) {
    const cap = Math.floor(Math.max(remaining, 0) * 0.4);
    const long = latestSummary(ctx.state, ws, sid, "long");
    const short = latestSummary(ctx.state, ws, sid, "short");
    if (
      long && long.token_count <= cap &&
      (!short || long.token_count > short.token_count)
    ) {
      summary = long;
    } else if (short && short.token_count <= cap) {
      summary = short;
    } else if (long && long.token_count <= cap) {
      summary = long;
    }
  }
  let start = 0;
  if (summary) {
    remaining -= summary.token_count;
    const index = messages.findIndex((m) => m.id === summary!.message_id);
    start = index + 1;
  }
  const picked = [];
  for (let i = messages.length - 1; i >= start; i--) {
    const message = messages[i]!;
    if (message.token_count > remaining) break;
    remaining -= message.token_count;
    picked.push(message);
  }
  picked.reverse();
  return jsonResponse(200, {
    id: sid,
    messages: picked.map(messageView),
    summary: summaryView(summary),
    peer_representation: representation,
    peer_card: card,
  });
}

/** Handlers for `/v3/workspaces/{workspace_id}/sessions…` routes (messages excluded). */
export const SESSION_ROUTES: RouteHandlers = {
  "POST /v3/workspaces/{workspace_id}/sessions": (ctx) => {
    const ws = param(ctx, "workspace_id");
    const body = bodyObject(ctx);
    const peers = (body.peers ?? {}) as PeerConfigMap;
    checkPeerIds(Object.keys(peers));
    const { record, created } = upsertSession(ctx.state, ws, String(body.id), {
      metadata: body.metadata as Json | null | undefined,
      configuration: body.configuration as Json | null | undefined,
    });
    withObserverLimit(
      ctx.state,
      ws,
      record.id,
      () => joinSession(ctx.state, ws, record.id, peers),
    );
    return jsonResponse(created ? 201 : 200, sessionView(record));
  },

  "POST /v3/workspaces/{workspace_id}/sessions/list": (ctx) => {
    const ws = param(ctx, "workspace_id");
    const { page, size, reverse } = pageQuery(ctx);
    let items = ctx.state.sessions.filter((s) =>
      s.workspace_id === ws && s.is_active
    );
    items = applyFilters(items, bodyObject(ctx).filters, SESSION_FILTERS);
    if (reverse) items = [...items].reverse();
    return jsonResponse(200, paginate(items.map(sessionView), { page, size }));
  },

  "PUT /v3/workspaces/{workspace_id}/sessions/{session_id}": (ctx) => {
    const body = bodyObject(ctx);
    const { record } = upsertSession(
      ctx.state,
      param(ctx, "workspace_id"),
      param(ctx, "session_id"),
      {
        metadata: body.metadata as Json | null | undefined,
        configuration: body.configuration as Json | null | undefined,
      },
    );
    return jsonResponse(200, sessionView(record));
  },

  "DELETE /v3/workspaces/{workspace_id}/sessions/{session_id}": (ctx) => {
    const session = requireSession(
      ctx.state,
      param(ctx, "workspace_id"),
      param(ctx, "session_id"),
    );
    session.is_active = false;
    return jsonResponse(202, { message: "Session deleted successfully" });
  },

  "POST /v3/workspaces/{workspace_id}/sessions/{session_id}/clone": (ctx) => {
    const ws = param(ctx, "workspace_id");
    const source = requireSession(ctx.state, ws, param(ctx, "session_id"));
    let messages = ctx.state.messages.filter((m) =>
      m.workspace_id === ws && m.session_id === source.id
    );
    const cutoff = optionalString(ctx.query.message_id);
    if (cutoff !== undefined) {
      const index = messages.findIndex((m) => m.id === cutoff);
      if (index < 0) {
        throw notFound(`Message ${cutoff} not found in session ${source.id}`);
      }
      messages = messages.slice(0, index + 1);
    }
    const clone = upsertSession(ctx.state, ws, nanoid(), {
      metadata: structuredClone(source.metadata),
      configuration: structuredClone(source.configuration),
    }).record;
    for (const m of activeMembers(ctx.state, ws, source.id)) {
      ctx.state.sessionPeers.push({
        ...m,
        session_id: clone.id,
        joined_at: timestamp(),
      });
    }
    for (const m of messages) {
      ctx.state.messages.push({
        ...structuredClone(m),
        id: nanoid(),
        session_id: clone.id,
      });
    }
    return jsonResponse(201, sessionView(clone));
  },

  "POST /v3/workspaces/{workspace_id}/sessions/{session_id}/peers": (ctx) => {
    const ws = param(ctx, "workspace_id");
    const session = activeSession(ctx.state, ws, param(ctx, "session_id"));
    withObserverLimit(
      ctx.state,
      ws,
      session.id,
      () =>
        joinSession(
          ctx.state,
          ws,
          session.id,
          bodyObject(ctx) as PeerConfigMap,
        ),
    );
    return jsonResponse(200, sessionView(session));
  },

  "PUT /v3/workspaces/{workspace_id}/sessions/{session_id}/peers": (ctx) => {
    const ws = param(ctx, "workspace_id");
    const session = activeSession(ctx.state, ws, param(ctx, "session_id"));
    const peers = bodyObject(ctx) as PeerConfigMap;
    withObserverLimit(ctx.state, ws, session.id, () => {
      checkPeerIds(Object.keys(peers));
      const now = timestamp();
      for (const m of activeMembers(ctx.state, ws, session.id)) {
        if (!(m.peer_id in peers)) m.left_at = now;
      }
      joinSession(ctx.state, ws, session.id, peers);
    });
    return jsonResponse(200, sessionView(session));
  },

  "DELETE /v3/workspaces/{workspace_id}/sessions/{session_id}/peers": (ctx) => {
    const ws = param(ctx, "workspace_id");
    const session = requireSession(ctx.state, ws, param(ctx, "session_id"));
    const ids = (ctx.body as unknown[]).map(String);
    const now = timestamp();
    for (const m of activeMembers(ctx.state, ws, session.id)) {
      if (ids.includes(m.peer_id)) m.left_at = now;
    }
    return jsonResponse(200, sessionView(session));
  },

  "GET /v3/workspaces/{workspace_id}/sessions/{session_id}/peers": (ctx) => {
    const ws = param(ctx, "workspace_id");
    const sid = param(ctx, "session_id");
    const { page, size } = pageQuery(ctx);
    const peers = activeMembers(ctx.state, ws, sid)
      .map((m) => findPeer(ctx.state, ws, m.peer_id))
      .filter((p) => p !== undefined);
    return jsonResponse(200, paginate(peers.map(peerView), { page, size }));
  },

  "GET /v3/workspaces/{workspace_id}/sessions/{session_id}/peers/{peer_id}/config":
    (ctx) => {
      const ws = param(ctx, "workspace_id");
      const sid = param(ctx, "session_id");
      const peerId = param(ctx, "peer_id");
      const row = findMembership(ctx.state, ws, sid, peerId);
      if (!findPeer(ctx.state, ws, peerId) || !row || row.left_at !== null) {
        throw notFound(`Peer ${peerId} not found in session ${sid}`);
      }
      return jsonResponse(200, {
        observe_me: row.observe_me,
        observe_others: row.observe_others,
      });
    },

  "PUT /v3/workspaces/{workspace_id}/sessions/{session_id}/peers/{peer_id}/config":
    (ctx) => {
      const ws = param(ctx, "workspace_id");
      const sid = param(ctx, "session_id");
      const peerId = param(ctx, "peer_id");
      requireSession(ctx.state, ws, sid);
      if (!findPeer(ctx.state, ws, peerId)) {
        throw notFound(`Peer ${peerId} not found`);
      }
      const body = bodyObject(ctx);
      withObserverLimit(ctx.state, ws, sid, () => {
        let row = findMembership(ctx.state, ws, sid, peerId);
        if (!row) {
          joinSession(ctx.state, ws, sid, { [peerId]: {} });
          row = findMembership(ctx.state, ws, sid, peerId)!;
        }
        if ("observe_me" in body) {
          row.observe_me = body.observe_me as boolean | null;
        }
        if ("observe_others" in body) {
          row.observe_others = body.observe_others as boolean | null;
        }
      });
      return new Response(null, { status: 204 });
    },

  "GET /v3/workspaces/{workspace_id}/sessions/{session_id}/context":
    sessionContext,

  "GET /v3/workspaces/{workspace_id}/sessions/{session_id}/summaries": (
    ctx,
  ) => {
    const ws = param(ctx, "workspace_id");
    const sid = param(ctx, "session_id");
    return jsonResponse(200, {
      id: sid,
      short_summary: summaryView(latestSummary(ctx.state, ws, sid, "short")),
      long_summary: summaryView(latestSummary(ctx.state, ws, sid, "long")),
    });
  },

  "POST /v3/workspaces/{workspace_id}/sessions/{session_id}/search": (ctx) => {
    const ws = param(ctx, "workspace_id");
    const sid = param(ctx, "session_id");
    const body = bodyObject(ctx);
    const pool = ctx.state.messages.filter((m) =>
      m.workspace_id === ws && m.session_id === sid
    );
    const filtered = filterSearchPool(ctx.state, pool, body.filters);
    const hits = searchMessages(
      filtered,
      String(body.query),
      Number(body.limit ?? 10),
    );
    return jsonResponse(200, hits.map(messageView));
  },
};

/**
 * Creates the author peer of a message and makes it a session member with
 * the default config when it is not one yet.
 *
 * @param state The store.
 * @param ws Workspace id.
 * @param sid Session id.
 * @param peerId Author peer.
 */
export function ensureAuthor(
  state: HonchoTestState,
  ws: string,
  sid: string,
  peerId: string,
): void {
  upsertPeer(state, ws, peerId);
  const row = findMembership(state, ws, sid, peerId);
  if (!row || row.left_at !== null) {
    joinSession(state, ws, sid, { [peerId]: {} });
  }
}
