/**
 * Workspace endpoints of the Honcho v3 API: what each request sends and
 * how its answer is read (the transport sends it).
 *
 * @module
 */

import type { Endpoint, ListEndpoint } from "./_client_transport.ts";
import {
  type Message,
  parseList,
  parseMessage,
  parseWorkspace,
  resourceBody,
  type ResourceOptions,
  searchBody,
  type SearchOptions,
  type Workspace,
} from "./client_wire.ts";

/**
 * `POST /v3/workspaces` — gets or creates a workspace.
 *
 * @param ws The workspace.
 * @param options Metadata/configuration (ignored for an existing workspace).
 * @returns The endpoint request.
 */
export function getOrCreate(
  ws: string,
  options: ResourceOptions,
): Endpoint<Workspace> {
  return {
    method: "POST",
    path: ["workspaces"],
    json: resourceBody(ws, options),
    retry: true,
    parse: parseWorkspace,
  };
}

/**
 * `POST /v3/workspaces/list` (admin keys only).
 *
 * @returns The list endpoint.
 */
export function list(): ListEndpoint<Workspace> {
  return { path: ["workspaces", "list"], item: parseWorkspace };
}

/**
 * `POST /v3/workspaces/{ws}/search` — messages across the workspace.
 *
 * @param ws The workspace.
 * @param query The search text.
 * @param options `filters`, `limit`.
 * @returns The endpoint request.
 */
export function search(
  ws: string,
  query: string,
  options: SearchOptions,
): Endpoint<Message[]> {
  return {
    method: "POST",
    path: ["workspaces", ws, "search"],
    json: searchBody(query, options),
    retry: true,
    parse: parseList(parseMessage),
  };
}
