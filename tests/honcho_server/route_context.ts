/**
 * The contract between the test server's dispatcher and its route handlers.
 *
 * @module
 */
import type { DialecticAnswer } from "./dialectic.ts";
import type { HonchoTestState } from "./store.ts";

/** What a handler receives for one validated request. */
export interface RouteContext {
  /** The in-memory store. */
  state: HonchoTestState;
  /** Decoded path parameters. */
  params: Record<string, string>;
  /** Coerced query values, with OpenAPI defaults applied. */
  query: Record<string, unknown>;
  /** Parsed JSON body (null when none was sent). */
  body: unknown;
  /** The multipart form, for upload routes. */
  form?: FormData;
  /** The current dialectic answer function. */
  dialectic: DialecticAnswer;
}

/** Handles one route; throws `HonchoHttpError` for `{"detail"}` errors. */
export type RouteHandler = (ctx: RouteContext) => Response | Promise<Response>;

/** Handlers keyed by `"METHOD /v3/template"`. */
export type RouteHandlers = Record<string, RouteHandler>;

/**
 * Reads a string path parameter.
 *
 * @param ctx The route context.
 * @param name Parameter name.
 * @returns Its value.
 */
export function param(ctx: RouteContext, name: string): string {
  return ctx.params[name] ?? "";
}

/**
 * Reads the body as an object (empty object for null bodies).
 *
 * @param ctx The route context.
 * @returns The body object.
 */
export function bodyObject(ctx: RouteContext): Record<string, unknown> {
  const body = ctx.body;
  return body !== null && typeof body === "object" && !Array.isArray(body)
    ? body as Record<string, unknown>
    : {};
}

/**
 * Reads `page`/`size`/`reverse` from the validated query.
 *
 * @param ctx The route context.
 * @returns Pagination options with defaults.
 */
export function pageQuery(
  ctx: RouteContext,
): { page: number; size: number; reverse: boolean } {
  return {
    page: typeof ctx.query.page === "number" ? ctx.query.page : 1,
    size: typeof ctx.query.size === "number" ? ctx.query.size : 50,
    reverse: ctx.query.reverse === true,
  };
}
