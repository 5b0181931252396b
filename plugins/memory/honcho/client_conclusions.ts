/**
 * Conclusion endpoints of the Honcho v3 API
 * (`/v3/workspaces/{ws}/conclusions/…`): what each request sends and how
 * its answer is read. Creating and deleting are never retried.
 *
 * @module
 */

import type { Endpoint, ListEndpoint } from "./_client_transport.ts";
import {
  type CallOptions,
  type Conclusion,
  type ConclusionInput,
  type JsonObject,
  parseConclusion,
  parseList,
  parseNothing,
  withOptional,
} from "./client_wire.ts";

/** Options of `queryConclusions` (semantic search). */
export interface ConclusionQueryOptions extends CallOptions {
  /** Filters; `observer_id` and `observed_id` are required. */
  filters: JsonObject;
  /** How many results, 1–100. */
  topK?: number;
  /** The largest distance a match may have (0–1). */
  distance?: number;
}

/**
 * `POST …/conclusions` — stores 1–100 conclusions. Never retried.
 *
 * @param ws The workspace.
 * @param conclusions The conclusions.
 * @returns The endpoint request.
 * @throws {RangeError} For 0 or more than 100 conclusions.
 */
export function create(
  ws: string,
  conclusions: readonly ConclusionInput[],
): Endpoint<Conclusion[]> {
  if (conclusions.length === 0 || conclusions.length > 100) {
    throw new RangeError(
      `Cannot create Honcho conclusions: a batch holds 1 to 100 conclusions: current count is ${conclusions.length}`,
    );
  }
  return {
    method: "POST",
    path: ["workspaces", ws, "conclusions"],
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
  };
}

/**
 * `POST …/conclusions/list` — newest first.
 *
 * @param ws The workspace.
 * @returns The list endpoint.
 */
export function list(ws: string): ListEndpoint<Conclusion> {
  return {
    path: ["workspaces", ws, "conclusions", "list"],
    item: parseConclusion,
  };
}

/**
 * `POST …/conclusions/query` — semantic search.
 *
 * @param ws The workspace.
 * @param query The search text.
 * @param options `filters`, `topK`, `distance`.
 * @returns The endpoint request.
 */
export function query(
  ws: string,
  query: string,
  options: ConclusionQueryOptions,
): Endpoint<Conclusion[]> {
  return {
    method: "POST",
    path: ["workspaces", ws, "conclusions", "query"],
    json: withOptional({ query, filters: options.filters }, {
      top_k: options.topK,
      distance: options.distance,
    }),
    retry: true,
    parse: parseList(parseConclusion),
  };
}

/**
 * `DELETE …/conclusions/{id}`. Never retried (a retry after a lost answer
 * would report 404).
 *
 * @param ws The workspace.
 * @param conclusionId The conclusion.
 * @returns The endpoint request.
 */
export function remove(ws: string, conclusionId: string): Endpoint<void> {
  return {
    method: "DELETE",
    path: ["workspaces", ws, "conclusions", conclusionId],
    retry: false,
    parse: parseNothing,
  };
}
