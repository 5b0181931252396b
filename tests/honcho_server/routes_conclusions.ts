/**
 * Conclusion routes: batch create, list, semantic query (word overlap
 * stand-in), delete, and the single-conclusion get the published SDK calls.
 *
 * @module
 */
import { applyFilters, CONCLUSION_FILTERS } from "./filters.ts";
import { jsonResponse, notFound, unprocessable } from "./http_error.ts";
import {
  bodyObject,
  pageQuery,
  param,
  type RouteContext,
  type RouteHandlers,
} from "./route_context.ts";
import { type ConclusionRecord, nanoid, paginate, timestamp } from "./store.ts";
import { conclusionView, findPeer, findSession } from "./store_ops.ts";

type Json = Record<string, unknown>;

const WORD_REGEXP = /[\p{L}\p{N}]+/gu;

function words(text: string): Set<string> {
  return new Set(text.toLowerCase().match(WORD_REGEXP) ?? []);
}

function liveConclusions(ctx: RouteContext): ConclusionRecord[] {
  const ws = param(ctx, "workspace_id");
  return ctx.state.conclusions.filter((c) =>
    c.workspace_id === ws && !c.deleted
  );
}

function findConclusion(ctx: RouteContext): ConclusionRecord {
  const id = param(ctx, "conclusion_id");
  const found = liveConclusions(ctx).find((c) => c.id === id);
  if (!found) throw notFound(`Conclusion ${id} not found`);
  return found;
}

/** Handlers for `/v3/workspaces/{workspace_id}/conclusions…` routes. */
export const CONCLUSION_ROUTES: RouteHandlers = {
  "POST /v3/workspaces/{workspace_id}/conclusions": (ctx) => {
    const ws = param(ctx, "workspace_id");
    const inputs = bodyObject(ctx).conclusions as Json[];
    for (const input of inputs) {
      for (const key of ["observer_id", "observed_id"]) {
        const id = String(input[key]);
        if (!findPeer(ctx.state, ws, id)) {
          throw notFound(`Peer ${id} not found`);
        }
      }
      const sid = input.session_id;
      if (typeof sid === "string" && !findSession(ctx.state, ws, sid)) {
        throw notFound(`Session ${sid} not found`);
      }
    }
    const created = inputs.map((input): ConclusionRecord => ({
      id: nanoid(),
      content: String(input.content),
      observer_id: String(input.observer_id),
      observed_id: String(input.observed_id),
      session_id: typeof input.session_id === "string"
        ? input.session_id
        : null,
      level: "explicit",
      created_at: timestamp(),
      workspace_id: ws,
      deleted: false,
    }));
    ctx.state.conclusions.push(...created);
    return jsonResponse(201, created.map(conclusionView));
  },

  "POST /v3/workspaces/{workspace_id}/conclusions/list": (ctx) => {
    const { page, size, reverse } = pageQuery(ctx);
    let items = applyFilters(
      liveConclusions(ctx),
      bodyObject(ctx).filters,
      CONCLUSION_FILTERS,
    );
    if (!reverse) items = [...items].reverse();
    return jsonResponse(
      200,
      paginate(items.map(conclusionView), { page, size }),
    );
  },

  "POST /v3/workspaces/{workspace_id}/conclusions/query": (ctx) => {
    const body = bodyObject(ctx);
    const filters = (body.filters ?? {}) as Json;
    if (!("observer" in filters || "observer_id" in filters)) {
      throw unprocessable("filters must include 'observer' (or 'observer_id')");
    }
    if (!("observed" in filters || "observed_id" in filters)) {
      throw unprocessable("filters must include 'observed' (or 'observed_id')");
    }
    const pool = applyFilters(liveConclusions(ctx), filters, CONCLUSION_FILTERS)
      .reverse();
    const q = words(String(body.query));
    const scored = pool.map((c, index) => {
      const own = words(c.content);
      const shared = [...q].filter((w) => own.has(w)).length;
      const distance = q.size === 0 ? 1 : 1 - shared / q.size;
      return { c, index, distance };
    });
    const maxDistance = typeof body.distance === "number"
      ? body.distance
      : undefined;
    const hits = scored
      .filter((s) => maxDistance === undefined || s.distance <= maxDistance)
      .sort((a, b) => a.distance - b.distance || a.index - b.index)
      .slice(0, typeof body.top_k === "number" ? body.top_k : 10);
    return jsonResponse(200, hits.map((s) => conclusionView(s.c)));
  },

  "DELETE /v3/workspaces/{workspace_id}/conclusions/{conclusion_id}": (ctx) => {
    findConclusion(ctx).deleted = true;
    return new Response(null, { status: 204 });
  },

  "GET /v3/workspaces/{workspace_id}/conclusions/{conclusion_id}": (ctx) =>
    jsonResponse(200, conclusionView(findConclusion(ctx))),
};
