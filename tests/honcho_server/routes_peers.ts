/**
 * Peer routes: get-or-create, list, update, sessions of a peer, dialectic
 * chat, representation, peer card, peer context and peer search.
 *
 * @module
 */
import {
  chunkAnswer,
  type DialecticRequest,
  renderRepresentation,
  selectConclusions,
} from "./dialectic.ts";
import {
  applyFilters,
  PEER_FILTERS,
  SESSION_FILTERS,
  sessionAllowlist,
} from "./filters.ts";
import { jsonResponse, notFound, unprocessable } from "./http_error.ts";
import {
  bodyObject,
  pageQuery,
  param,
  type RouteContext,
  type RouteHandlers,
} from "./route_context.ts";
import { filterSearchPool, searchMessages } from "./search.ts";
import { paginate } from "./store.ts";
import {
  findPeer,
  messageView,
  peerView,
  readCard,
  sessionView,
  upsertPeer,
  upsertWorkspace,
} from "./store_ops.ts";

type Json = Record<string, unknown>;

function optionalString(value: unknown): string | undefined {
  return typeof value === "string" ? value : undefined;
}

function optionalNumber(value: unknown): number | undefined {
  return typeof value === "number" ? value : undefined;
}

/** Who is asked and about whom, for {@linkcode answerChat}. */
export interface ChatSubject {
  /** Workspace id. */
  workspaceId: string;
  /** Observer peer, or `"*"` for the workspace-level chat. */
  peerId: string;
  /** Observed peer (defaults to the observer), or `"*"`. */
  targetId: string;
  /** The request body (`DialecticOptions`). */
  body: Json;
}

/**
 * Answers a dialectic request with the current answer function, as JSON
 * `{"content"}` or as SSE when `stream` is true.
 *
 * @param ctx The route context.
 * @param subject Observer, target and body.
 * @returns The response.
 * @throws {HonchoHttpError} 422 for contradictory scope/filters/session_id.
 */
export function answerChat(ctx: RouteContext, subject: ChatSubject): Response {
  const { body, workspaceId } = subject;
  const sessionId = optionalString(body.session_id) ?? null;
  if (
    body.scope !== undefined && body.scope !== null &&
    (body.filters || sessionId)
  ) {
    throw unprocessable("scope cannot be combined with filters or session_id");
  }
  const allowlist = sessionAllowlist(body.filters, sessionId ?? undefined);
  const workspaceLevel = subject.peerId === "*";
  upsertWorkspace(ctx.state, workspaceId);
  if (!workspaceLevel) upsertPeer(ctx.state, workspaceId, subject.peerId);
  const targetId = workspaceLevel
    ? "*"
    : optionalString(body.target) ?? subject.targetId;
  const inScope = (sid: string | null): boolean =>
    (sessionId === null || sid === sessionId) &&
    (allowlist === undefined || (sid !== null && allowlist.includes(sid)));
  const messages = ctx.state.messages.filter((m) =>
    m.workspace_id === workspaceId &&
    (workspaceLevel || m.peer_id === targetId) &&
    inScope(m.session_id)
  );
  const conclusions = ctx.state.conclusions.filter((c) =>
    !c.deleted && c.workspace_id === workspaceId &&
    (workspaceLevel ||
      (c.observer_id === subject.peerId && c.observed_id === targetId)) &&
    (sessionId === null && allowlist === undefined
      ? true
      : inScope(c.session_id))
  ).reverse();
  const request: DialecticRequest = {
    workspaceId,
    peerId: subject.peerId,
    targetId,
    query: String(body.query),
    sessionId,
    reasoningLevel: optionalString(body.reasoning_level) ?? "low",
    stream: body.stream === true,
    messages,
    conclusions,
    peerCard: workspaceLevel
      ? null
      : readCard(ctx.state, workspaceId, subject.peerId, targetId),
    responseFormat: (body.response_format as Json | null | undefined) ?? null,
  };
  const content = ctx.dialectic(request);
  if (!request.stream) return jsonResponse(200, { content });
  const encoder = new TextEncoder();
  const events = [
    ...chunkAnswer(content ?? "").map((chunk) => ({
      delta: { content: chunk },
      done: false,
    })),
    { done: true },
  ];
  const stream = new ReadableStream<Uint8Array>({
    start(controller) {
      for (const event of events) {
        controller.enqueue(
          encoder.encode(`data: ${JSON.stringify(event)}\n\n`),
        );
      }
      controller.close();
    },
  });
  return new Response(stream, {
    status: 200,
    headers: {
      "content-type": "text/event-stream; charset=utf-8",
      "cache-control": "no-cache",
    },
  });
}

function representationText(
  ctx: RouteContext,
  options: {
    workspaceId: string;
    observerId: string;
    observedId: string;
    sessions?: string[];
    searchQuery?: string;
    searchTopK?: number;
    maxConclusions?: number;
  },
): string {
  return renderRepresentation(selectConclusions(ctx.state, options));
}

/** Handlers for `/v3/workspaces/{workspace_id}/peers…` routes. */
export const PEER_ROUTES: RouteHandlers = {
  "POST /v3/workspaces/{workspace_id}/peers": (ctx) => {
    const body = bodyObject(ctx);
    const { record, created } = upsertPeer(
      ctx.state,
      param(ctx, "workspace_id"),
      String(body.id),
      {
        metadata: body.metadata as Json | null | undefined,
        configuration: body.configuration as Json | null | undefined,
      },
    );
    return jsonResponse(created ? 201 : 200, peerView(record));
  },

  "POST /v3/workspaces/{workspace_id}/peers/list": (ctx) => {
    const ws = param(ctx, "workspace_id");
    const { page, size, reverse } = pageQuery(ctx);
    const body = bodyObject(ctx);
    let items = ctx.state.peers.filter((p) => p.workspace_id === ws);
    if (body.kind !== "scope" && body.kind !== "all") {
      items = items.filter((p) => !p.id.startsWith("scope."));
    }
    items = applyFilters(items, body.filters, PEER_FILTERS);
    if (reverse) items = [...items].reverse();
    return jsonResponse(200, paginate(items.map(peerView), { page, size }));
  },

  "PUT /v3/workspaces/{workspace_id}/peers/{peer_id}": (ctx) => {
    const body = bodyObject(ctx);
    const { record } = upsertPeer(
      ctx.state,
      param(ctx, "workspace_id"),
      param(ctx, "peer_id"),
      {
        metadata: body.metadata as Json | null | undefined,
        configuration: body.configuration as Json | null | undefined,
      },
    );
    return jsonResponse(200, peerView(record));
  },

  "POST /v3/workspaces/{workspace_id}/peers/{peer_id}/sessions": (ctx) => {
    const ws = param(ctx, "workspace_id");
    const peerId = param(ctx, "peer_id");
    const { page, size, reverse } = pageQuery(ctx);
    const member = new Set(
      ctx.state.sessionPeers.filter((m) =>
        m.workspace_id === ws && m.peer_id === peerId && m.left_at === null
      ).map((m) => m.session_id),
    );
    let items = ctx.state.sessions.filter((s) =>
      s.workspace_id === ws && s.is_active && member.has(s.id)
    );
    items = applyFilters(items, bodyObject(ctx).filters, SESSION_FILTERS);
    if (reverse) items = [...items].reverse();
    return jsonResponse(200, paginate(items.map(sessionView), { page, size }));
  },

  "POST /v3/workspaces/{workspace_id}/peers/{peer_id}/chat": (ctx) =>
    answerChat(ctx, {
      workspaceId: param(ctx, "workspace_id"),
      peerId: param(ctx, "peer_id"),
      targetId: param(ctx, "peer_id"),
      body: bodyObject(ctx),
    }),

  "POST /v3/workspaces/{workspace_id}/peers/{peer_id}/representation": (
    ctx,
  ) => {
    const ws = param(ctx, "workspace_id");
    const peerId = param(ctx, "peer_id");
    const body = bodyObject(ctx);
    const sessionId = optionalString(body.session_id);
    if (
      body.scope !== undefined && body.scope !== null &&
      (body.filters || sessionId)
    ) {
      throw unprocessable(
        "scope cannot be combined with filters or session_id",
      );
    }
    let sessions = sessionAllowlist(body.filters, sessionId);
    if (sessions === undefined && sessionId !== undefined) {
      sessions = [sessionId];
    }
    const representation = representationText(ctx, {
      workspaceId: ws,
      observerId: peerId,
      observedId: optionalString(body.target) ?? peerId,
      sessions,
      searchQuery: optionalString(body.search_query),
      searchTopK: optionalNumber(body.search_top_k),
      maxConclusions: optionalNumber(body.max_conclusions),
    });
    return jsonResponse(200, { representation });
  },

  "GET /v3/workspaces/{workspace_id}/peers/{peer_id}/card": (ctx) => {
    const ws = param(ctx, "workspace_id");
    const peerId = param(ctx, "peer_id");
    if (!findPeer(ctx.state, ws, peerId)) {
      throw notFound(`Peer ${peerId} not found`);
    }
    const target = optionalString(ctx.query.target) ?? peerId;
    return jsonResponse(200, {
      peer_card: readCard(ctx.state, ws, peerId, target),
    });
  },

  "PUT /v3/workspaces/{workspace_id}/peers/{peer_id}/card": (ctx) => {
    const ws = param(ctx, "workspace_id");
    const peerId = param(ctx, "peer_id");
    upsertPeer(ctx.state, ws, peerId);
    const target = optionalString(ctx.query.target) ?? peerId;
    const lines = (bodyObject(ctx).peer_card as string[]).map(String);
    const existing = ctx.state.peerCards.find((c) =>
      c.workspace_id === ws && c.observer_id === peerId &&
      c.observed_id === target
    );
    if (existing) existing.peer_card = [...lines];
    else {
      ctx.state.peerCards.push({
        workspace_id: ws,
        observer_id: peerId,
        observed_id: target,
        peer_card: [...lines],
      });
    }
    return jsonResponse(200, { peer_card: lines });
  },

  "GET /v3/workspaces/{workspace_id}/peers/{peer_id}/context": (ctx) => {
    const ws = param(ctx, "workspace_id");
    const peerId = param(ctx, "peer_id");
    const target = optionalString(ctx.query.target) ?? peerId;
    const representation = representationText(ctx, {
      workspaceId: ws,
      observerId: peerId,
      observedId: target,
      searchQuery: optionalString(ctx.query.search_query),
      searchTopK: optionalNumber(ctx.query.search_top_k),
      maxConclusions: optionalNumber(ctx.query.max_conclusions),
    });
    return jsonResponse(200, {
      peer_id: peerId,
      target_id: target,
      representation,
      peer_card: readCard(ctx.state, ws, peerId, target),
    });
  },

  "POST /v3/workspaces/{workspace_id}/peers/{peer_id}/search": (ctx) => {
    const ws = param(ctx, "workspace_id");
    const peerId = param(ctx, "peer_id");
    const body = bodyObject(ctx);
    const pool = ctx.state.messages.filter((m) =>
      m.workspace_id === ws && m.peer_id === peerId
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
