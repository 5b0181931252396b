/**
 * Workspace routes: get-or-create, list, update, delete, search, queue
 * status, dream scheduling, and the workspace-level chat the published SDK
 * calls.
 *
 * @module
 */
import { applyFilters, WORKSPACE_FILTERS } from "./filters.ts";
import { HonchoHttpError, jsonResponse, notFound } from "./http_error.ts";
import {
  bodyObject,
  pageQuery,
  param,
  type RouteHandlers,
} from "./route_context.ts";
import { answerChat } from "./routes_peers.ts";
import { paginate } from "./store.ts";
import {
  findWorkspace,
  messageView,
  upsertWorkspace,
  workspaceView,
} from "./store_ops.ts";
import { filterSearchPool, searchMessages } from "./search.ts";

/** Handlers for `/v3/workspaces…` routes that are not about peers, sessions or conclusions. */
export const WORKSPACE_ROUTES: RouteHandlers = {
  "POST /v3/workspaces": (ctx) => {
    const body = bodyObject(ctx);
    const { record, created } = upsertWorkspace(ctx.state, String(body.id), {
      metadata: body.metadata as Record<string, unknown> | undefined,
      configuration: body.configuration as Record<string, unknown> | undefined,
    });
    return jsonResponse(created ? 201 : 200, workspaceView(record));
  },

  "POST /v3/workspaces/list": (ctx) => {
    const { page, size, reverse } = pageQuery(ctx);
    let items = applyFilters(
      ctx.state.workspaces,
      bodyObject(ctx).filters,
      WORKSPACE_FILTERS,
    );
    if (reverse) items = [...items].reverse();
    return jsonResponse(
      200,
      paginate(items.map(workspaceView), { page, size }),
    );
  },

  "PUT /v3/workspaces/{workspace_id}": (ctx) => {
    const body = bodyObject(ctx);
    const { record } = upsertWorkspace(ctx.state, param(ctx, "workspace_id"));
    if (body.metadata) {
      record.metadata = body.metadata as Record<string, unknown>;
    }
    if (body.configuration) {
      record.configuration = {
        ...record.configuration,
        ...body.configuration as Record<string, unknown>,
      };
    }
    return jsonResponse(200, workspaceView(record));
  },

  "DELETE /v3/workspaces/{workspace_id}": (ctx) => {
    const id = param(ctx, "workspace_id");
    if (!findWorkspace(ctx.state, id)) {
      throw notFound(`Workspace ${id} not found`);
    }
    const active = ctx.state.sessions.filter((s) =>
      s.workspace_id === id && s.is_active
    );
    if (active.length > 0) {
      throw new HonchoHttpError(
        409,
        `Cannot delete workspace ${id}: it still has ${active.length} active session(s)`,
      );
    }
    const s = ctx.state;
    const keep = <T extends { workspace_id: string }>(rows: T[]): T[] =>
      rows.filter((r) => r.workspace_id !== id);
    s.workspaces = s.workspaces.filter((w) => w.id !== id);
    s.peers = keep(s.peers);
    s.sessions = keep(s.sessions);
    s.sessionPeers = keep(s.sessionPeers);
    s.messages = keep(s.messages);
    s.peerCards = keep(s.peerCards);
    s.conclusions = keep(s.conclusions);
    s.summaries = keep(s.summaries);
    s.uploads = keep(s.uploads);
    return jsonResponse(202, { message: "Workspace deletion accepted" });
  },

  "POST /v3/workspaces/{workspace_id}/search": (ctx) => {
    const ws = param(ctx, "workspace_id");
    const body = bodyObject(ctx);
    const pool = ctx.state.messages.filter((m) => m.workspace_id === ws);
    const filtered = filterSearchPool(ctx.state, pool, body.filters);
    const hits = searchMessages(
      filtered,
      String(body.query),
      Number(body.limit ?? 10),
    );
    return jsonResponse(200, hits.map(messageView));
  },

  "GET /v3/workspaces/{workspace_id}/queue/status": () =>
    jsonResponse(200, {
      total_work_units: 0,
      completed_work_units: 0,
      in_progress_work_units: 0,
      pending_work_units: 0,
    }),

  "POST /v3/workspaces/{workspace_id}/schedule_dream": () =>
    new Response(null, { status: 204 }),

  "POST /v3/workspaces/{workspace_id}/chat": (ctx) => {
    const body = bodyObject(ctx);
    return answerChat(ctx, {
      workspaceId: param(ctx, "workspace_id"),
      peerId: "*",
      targetId: "*",
      body,
    });
  },

  "POST /v3/keys": () => jsonResponse(405, { detail: "Feature is disabled" }),

  "GET /health": () => jsonResponse(200, { status: "ok" }),
};
