/**
 * A Honcho-compatible HTTP server for tests.
 *
 * {@linkcode startHonchoTestServer} serves the Honcho v3 routes the memory
 * provider uses from an in-memory store, on `127.0.0.1` with an ephemeral
 * port. Every request's body and query are validated against the Honcho
 * OpenAPI document (`tests/fixtures/honcho/openapi.json`, a verbatim copy of Honcho's published document, by default); mismatches
 * are answered with FastAPI's 422 and also recorded in `violations`, so a
 * test can assert that a client only sends what the real API accepts.
 * Faults (latency, 401/429/500/503, malformed bodies, dropped connections)
 * can be injected per route, and the dialectic answer is deterministic.
 *
 * See `tests/HONCHO_TEST_SERVER.md` for the route list and the known
 * differences from the real server.
 *
 * @example Drive the server with plain fetch
 * ```ts ignore
 * await using server = await startHonchoTestServer({ apiKey: "k" });
 * const res = await fetch(`${server.url}/v3/workspaces`, {
 *   method: "POST",
 *   headers: { authorization: "Bearer k", "content-type": "application/json" },
 *   body: JSON.stringify({ id: "ws" }),
 * });
 * console.log(res.status, await res.json()); // 201 {id: "ws", ...}
 * ```
 *
 * @module
 */
import { fileURLToPath } from "node:url";
import {
  defaultDialecticAnswer,
  type DialecticAnswer,
} from "./honcho_server/dialectic.ts";
import {
  FAULT_DETAILS,
  FaultQueue,
  type HonchoFault,
} from "./honcho_server/faults.ts";
import {
  detailResponse,
  HonchoHttpError,
  jsonResponse,
} from "./honcho_server/http_error.ts";
import { metadataIssues, stripNul } from "./honcho_server/metadata_rules.ts";
import {
  OpenApiRoutes,
  type RouteSpec,
  type ValidationIssue,
} from "./honcho_server/openapi_routes.ts";
import type {
  RouteContext,
  RouteHandlers,
} from "./honcho_server/route_context.ts";
import { CONCLUSION_ROUTES } from "./honcho_server/routes_conclusions.ts";
import { MESSAGE_ROUTES } from "./honcho_server/routes_messages.ts";
import { PEER_ROUTES } from "./honcho_server/routes_peers.ts";
import { SESSION_ROUTES } from "./honcho_server/routes_sessions.ts";
import { WORKSPACE_ROUTES } from "./honcho_server/routes_workspaces.ts";
import { createState, type HonchoTestState } from "./honcho_server/store.ts";
import {
  DROP_AFTER_HEADER,
  type FrontDecision,
  TcpFront,
} from "./honcho_server/tcp_front.ts";

export type {
  DialecticAnswer,
  DialecticRequest,
} from "./honcho_server/dialectic.ts";
export type { HonchoFault } from "./honcho_server/faults.ts";
export type { ValidationIssue } from "./honcho_server/openapi_routes.ts";
export type * from "./honcho_server/store.ts";

/** Options of {@linkcode startHonchoTestServer}. */
export interface HonchoTestServerOptions {
  /**
   * When set, every route except `GET /health` requires
   * `Authorization: Bearer <apiKey>` and answers 401 otherwise.
   * @default {undefined} (auth disabled, like a default local server)
   */
  apiKey?: string;
  /** Delay added to every request, in milliseconds. @default {0} */
  latencyMs?: number;
  /** Path of the OpenAPI document. @default {"tests/fixtures/honcho/openapi.json"} */
  openapiPath?: string;
  /** Initial dialectic answer (a fixed string or a function). @default {defaultDialecticAnswer} */
  dialecticAnswer?: string | DialecticAnswer;
}

/** One entry of {@linkcode HonchoTestServer.requests}. */
export interface HonchoRequestLogEntry {
  /** HTTP method. */
  method: string;
  /** URL path (percent-encoded, as sent). */
  path: string;
  /** Matched route key (`"POST /v3/workspaces/{workspace_id}/peers"`), or null. */
  route: string | null;
  /** Raw query parameters (repeated names become arrays). */
  query: Record<string, string | string[]>;
  /** Parsed JSON body, multipart fields, raw text, or null. */
  body: unknown;
  /** Status answered; 0 while pending or when the connection was dropped first. */
  status: number;
  /** Whether the connection was dropped (before or after handling). */
  dropped: boolean;
  /** The fault applied to this request, if any. */
  fault?: HonchoFault;
}

/** Kinds of {@linkcode HonchoViolation}. */
export type HonchoViolationKind =
  | "unknown_route"
  | "method_not_allowed"
  | "path"
  | "body"
  | "query"
  | "unknown_query_param"
  | "unknown_body_field"
  | "content_type"
  | "response_schema"
  | "unimplemented_route"
  | "server_error";

/** A request that the OpenAPI document (or the server) does not accept. */
export interface HonchoViolation {
  /** What went wrong. */
  kind: HonchoViolationKind;
  /** HTTP method. */
  method: string;
  /** URL path. */
  path: string;
  /** Matched route key, or null. */
  route: string | null;
  /** One-line summary. */
  message: string;
  /** pydantic-style issues (for `body`/`query`). */
  issues: ValidationIssue[];
}

/** A running Honcho test server. */
export interface HonchoTestServer extends AsyncDisposable {
  /** Base URL, `http://127.0.0.1:PORT` (no trailing slash). */
  readonly url: string;
  /** The in-memory store; tests may read and seed it. */
  readonly state: HonchoTestState;
  /** Every request received, in arrival order. */
  readonly requests: HonchoRequestLogEntry[];
  /** OpenAPI violations and unknown routes seen so far. */
  readonly violations: HonchoViolation[];
  /** Every route key the server knows (OpenAPI operations plus documented extensions). */
  readonly routes: readonly string[];
  /**
   * Queues a fault for the next request(s) to a route.
   *
   * @param route A route key such as `"POST /v3/workspaces/{workspace_id}/sessions/{session_id}/messages"`, or `"*"` for any route.
   * @param fault The fault; `times` defaults to 1.
   * @throws {RangeError} When the route key is unknown or `times` is not positive.
   */
  inject(route: string, fault: HonchoFault): void;
  /** Removes every queued fault. */
  clearFaults(): void;
  /**
   * Replaces the dialectic answer: a fixed string, a function of the
   * request, or null for the default deterministic answer.
   *
   * @param answer The new answer.
   */
  setDialecticAnswer(answer: string | DialecticAnswer | null): void;
  /**
   * Throws when any violation was recorded, listing them; use at the end of
   * a test so that a client sending something the API does not accept fails.
   *
   * @throws {Error} When `violations` is not empty.
   */
  assertNoViolations(): void;
  /**
   * Counts received requests.
   *
   * @param route A route key; all requests when omitted.
   * @returns The number of requests.
   */
  requestCount(route?: string): number;
  /**
   * Counts the sockets the server holds open now (client connections and
   * their relays); finished connections are closed, so this stays flat.
   *
   * @returns The number of open sockets.
   */
  openConnections(): number;
  /**
   * Cancels pending latency, closes every connection and stops the server.
   *
   * @returns Resolves when everything is closed.
   */
  close(): Promise<void>;
}

const DEFAULT_OPENAPI_PATH = fileURLToPath(
  new URL("./fixtures/honcho/openapi.json", import.meta.url),
);

/** Route tables are immutable once built, so one per document path is shared. */
const ROUTE_TABLES = new Map<string, Promise<OpenApiRoutes>>();

const HANDLERS: RouteHandlers = {
  ...WORKSPACE_ROUTES,
  ...PEER_ROUTES,
  ...SESSION_ROUTES,
  ...MESSAGE_ROUTES,
  ...CONCLUSION_ROUTES,
};

const MALFORMED_BODY = '{"items": [{"id": "truncated", "content": ';

function rawQuery(search: URLSearchParams): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (const key of new Set(search.keys())) {
    const all = search.getAll(key);
    out[key] = all.length === 1 ? all[0]! : all;
  }
  return out;
}

function isJsonType(contentType: string | null): boolean {
  if (contentType === null) return true;
  const base = contentType.split(";")[0]!.trim().toLowerCase();
  return base === "application/json" || base.endsWith("+json");
}

function formSnapshot(form: FormData): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of form.entries()) {
    out[key] = typeof value === "string"
      ? value
      : { filename: value.name, type: value.type, size: value.size };
  }
  return out;
}

class Server implements HonchoTestServer {
  readonly url: string;
  readonly state: HonchoTestState = createState();
  readonly requests: HonchoRequestLogEntry[] = [];
  readonly violations: HonchoViolation[] = [];
  readonly routes: readonly string[];
  #table: OpenApiRoutes;
  #apiKey?: string;
  #latencyMs: number;
  #faults = new FaultQueue();
  #dialectic: DialecticAnswer = defaultDialecticAnswer;
  #closing = new AbortController();
  #inner: Deno.HttpServer<Deno.NetAddr>;
  #front: TcpFront;
  #closed?: Promise<void>;

  constructor(table: OpenApiRoutes, options: HonchoTestServerOptions) {
    this.#table = table;
    this.routes = table.routes.map((r) => r.key);
    this.#apiKey = options.apiKey;
    this.#latencyMs = options.latencyMs ?? 0;
    if (options.dialecticAnswer !== undefined) {
      this.setDialecticAnswer(options.dialecticAnswer);
    }
    this.#inner = Deno.serve({
      hostname: "127.0.0.1",
      port: 0,
      onListen: () => {},
      onError: () => detailResponse(500, "An unexpected error occurred"),
    }, (req) => this.#handle(req));
    this.#front = new TcpFront({
      upstreamPort: this.#inner.addr.port,
      decide: (method, target) => this.#decide(method, target),
    });
    this.url = `http://127.0.0.1:${this.#front.port}`;
  }

  inject(route: string, fault: HonchoFault): void {
    if (route !== "*" && !this.routes.includes(route)) {
      throw new RangeError(`Cannot inject a fault: unknown route '${route}'`);
    }
    this.#faults.add(route, fault);
  }

  clearFaults(): void {
    this.#faults.clear();
  }

  setDialecticAnswer(answer: string | DialecticAnswer | null): void {
    if (answer === null) this.#dialectic = defaultDialecticAnswer;
    else if (typeof answer === "string") this.#dialectic = () => answer;
    else this.#dialectic = answer;
  }

  assertNoViolations(): void {
    if (this.violations.length === 0) return;
    const lines = this.violations.map((v) => {
      const issues = v.issues.map((i) => `${i.loc.join(".")}: ${i.msg}`).join(
        "; ",
      );
      return `- [${v.kind}] ${v.method} ${v.path}: ${v.message}${
        issues ? ` (${issues})` : ""
      }`;
    });
    throw new Error(
      `Honcho test server recorded ${this.violations.length} violation(s):\n${
        lines.join("\n")
      }`,
    );
  }

  requestCount(route?: string): number {
    if (route === undefined) return this.requests.length;
    return this.requests.filter((r) => r.route === route).length;
  }

  openConnections(): number {
    return this.#front.openConnections;
  }

  close(): Promise<void> {
    this.#closed ??= (async () => {
      this.#closing.abort();
      await this.#front.close();
      await this.#inner.shutdown();
    })();
    return this.#closed;
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }

  /** Sleeps, or returns early (false) when the server is closing. */
  #sleep(ms: number): Promise<boolean> {
    if (ms <= 0) return Promise.resolve(true);
    const signal = this.#closing.signal;
    if (signal.aborted) return Promise.resolve(false);
    return new Promise((resolve) => {
      const onAbort = (): void => {
        clearTimeout(timer);
        resolve(false);
      };
      const timer = setTimeout(() => {
        signal.removeEventListener("abort", onAbort);
        resolve(true);
      }, ms);
      signal.addEventListener("abort", onAbort, { once: true });
    });
  }

  #routeKey(method: string, pathname: string): string | null {
    const match = this.#table.match(method, pathname);
    return match.kind === "route" ? match.route.key : null;
  }

  #decide(method: string, target: string): FrontDecision {
    let url: URL;
    try {
      url = new URL(target, "http://127.0.0.1");
    } catch {
      return "pass";
    }
    const route = this.#routeKey(method, url.pathname);
    const fault = this.#faults.take(
      route ?? "",
      (f) => f.drop === true || f.dropAfterHandling === true,
    );
    if (!fault) return "pass";
    if (fault.drop) {
      this.requests.push({
        method,
        path: url.pathname,
        route,
        query: rawQuery(url.searchParams),
        body: null,
        status: 0,
        dropped: true,
        fault,
      });
      return "drop";
    }
    return "drop-after";
  }

  #violation(
    kind: HonchoViolationKind,
    entry: HonchoRequestLogEntry,
    message: string,
    issues: ValidationIssue[] = [],
  ): void {
    this.violations.push({
      kind,
      method: entry.method,
      path: entry.path,
      route: entry.route,
      message,
      issues,
    });
  }

  async #handle(req: Request): Promise<Response> {
    const response = await this.#respond(req);
    response.headers.set("connection", "close");
    const dropToken = req.headers.get(DROP_AFTER_HEADER);
    if (dropToken !== null) {
      await response.body?.cancel();
      this.#front.dropConnection(dropToken);
      return new Response(null, {
        status: 500,
        headers: { connection: "close" },
      });
    }
    return response;
  }

  async #respond(req: Request): Promise<Response> {
    const url = new URL(req.url);
    const method = req.method.toUpperCase();
    const raw = new Uint8Array(await req.arrayBuffer());
    const match = this.#table.match(method, url.pathname);
    const route = match.kind === "route" ? match.route : undefined;
    const entry: HonchoRequestLogEntry = {
      method,
      path: url.pathname,
      route: route?.key ?? null,
      query: rawQuery(url.searchParams),
      body: null,
      status: 0,
      dropped: req.headers.has(DROP_AFTER_HEADER),
    };
    this.requests.push(entry);
    const contentType = req.headers.get("content-type");
    let form: FormData | undefined;
    let text = "";
    if (contentType?.toLowerCase().startsWith("multipart/form-data")) {
      try {
        form = await new Request(req.url, {
          method: "POST",
          headers: req.headers,
          body: raw,
        })
          .formData();
        entry.body = formSnapshot(form);
      } catch {
        entry.body = null;
      }
    } else {
      text = new TextDecoder().decode(raw);
      try {
        entry.body = text === "" ? null : JSON.parse(text);
      } catch {
        entry.body = text;
      }
    }
    const finish = (response: Response): Response => {
      entry.status = response.status;
      return response;
    };

    if (!await this.#sleep(this.#latencyMs)) {
      return finish(detailResponse(503, "Server closing"));
    }
    const fault = this.#faults.take(
      route?.key ?? "",
      (f) => !f.drop && !f.dropAfterHandling,
    );
    if (fault) {
      entry.fault = fault;
      if (!await this.#sleep(fault.latencyMs ?? 0)) {
        return finish(detailResponse(503, "Server closing"));
      }
      if (fault.status !== undefined) {
        const headers: Record<string, string> = fault.retryAfter !== undefined
          ? { "retry-after": fault.retryAfter }
          : {};
        const detail = fault.detail ?? FAULT_DETAILS[fault.status] ??
          `HTTP ${fault.status}`;
        return finish(detailResponse(fault.status, detail, headers));
      }
      if (fault.malformed) {
        const status = route && route.successStatus !== 204
          ? route.successStatus
          : 200;
        return finish(
          new Response(MALFORMED_BODY, {
            status,
            headers: { "content-type": "application/json" },
          }),
        );
      }
    }

    const isHealth = method === "GET" && url.pathname === "/health";
    if (this.#apiKey !== undefined && !isHealth) {
      const auth = req.headers.get("authorization");
      if (!auth) return finish(detailResponse(401, "No access token provided"));
      if (auth !== `Bearer ${this.#apiKey}`) {
        return finish(detailResponse(401, "Invalid JWT"));
      }
    }

    if (match.kind === "not_found") {
      this.#violation(
        "unknown_route",
        entry,
        `No route for ${method} ${url.pathname}`,
      );
      return finish(detailResponse(404, "Not Found"));
    }
    if (match.kind === "method_not_allowed") {
      this.#violation(
        "method_not_allowed",
        entry,
        `${method} is not allowed on ${url.pathname}`,
      );
      return finish(detailResponse(405, "Method Not Allowed"));
    }
    const spec = match.route;

    const issues: ValidationIssue[] = [];
    const pathIssues = this.#table.validatePath(spec, match.params);
    if (pathIssues.length > 0) {
      this.#violation(
        "path",
        entry,
        `Path of ${spec.key} does not match the schema`,
        pathIssues,
      );
      issues.push(...pathIssues);
    }
    const query = this.#table.validateQuery(spec, url.searchParams);
    if (query.issues.length > 0) {
      this.#violation(
        "query",
        entry,
        `Query of ${spec.key} does not match the schema`,
        query.issues,
      );
      issues.push(...query.issues);
    }
    if (query.unknown.length > 0) {
      this.#violation(
        "unknown_query_param",
        entry,
        `Undeclared query parameter(s) ${
          query.unknown.join(", ")
        } for ${spec.key}`,
      );
    }
    let body: unknown = null;
    if (spec.body) {
      const bodyIssues = this.#checkBody(
        spec,
        entry,
        contentType,
        text,
        form,
        raw.length,
      );
      if (bodyIssues.kind === "issues") issues.push(...bodyIssues.issues);
      else body = bodyIssues.body;
    }
    if (issues.length > 0) return finish(jsonResponse(422, { detail: issues }));

    const handler = HANDLERS[spec.key];
    if (!handler) {
      this.#violation(
        "unimplemented_route",
        entry,
        `${spec.key} is not implemented by the test server`,
      );
      return finish(
        detailResponse(501, "Not implemented by the Honcho test server"),
      );
    }
    const ctx: RouteContext = {
      state: this.state,
      params: match.params,
      query: query.values,
      body,
      form,
      dialectic: this.#dialectic,
    };
    try {
      const response = await handler(ctx);
      await this.#checkResponse(spec, entry, response);
      // Committed; the answer comes late (a slow proxy or network).
      if (fault?.answerAfterMs) await this.#sleep(fault.answerAfterMs);
      return finish(response);
    } catch (error) {
      if (error instanceof HonchoHttpError) {
        return finish(detailResponse(error.status, error.detail));
      }
      this.#violation(
        "server_error",
        entry,
        `Handler for ${spec.key} threw: ${
          error instanceof Error ? error.stack : String(error)
        }`,
      );
      return finish(detailResponse(500, "An unexpected error occurred"));
    }
  }

  async #checkResponse(
    spec: RouteSpec,
    entry: HonchoRequestLogEntry,
    response: Response,
  ): Promise<void> {
    if (response.status < 200 || response.status >= 300) return;
    if (!response.headers.get("content-type")?.startsWith("application/json")) {
      return;
    }
    const body = await response.clone().json();
    const issues = this.#table.validateResponse(spec, response.status, body);
    if (issues.length > 0) {
      this.#violation(
        "response_schema",
        entry,
        `Response of ${spec.key} (${response.status}) does not match the documented schema`,
        issues,
      );
    }
  }

  #checkBody(
    spec: RouteSpec,
    entry: HonchoRequestLogEntry,
    contentType: string | null,
    text: string,
    form: FormData | undefined,
    size: number,
  ): { kind: "issues"; issues: ValidationIssue[] } | {
    kind: "body";
    body: unknown;
  } {
    const bodySpec = spec.body!;
    const fail = (
      kind: HonchoViolationKind,
      message: string,
      issues: ValidationIssue[],
    ): { kind: "issues"; issues: ValidationIssue[] } => {
      this.#violation(kind, entry, message, issues);
      return { kind: "issues", issues };
    };
    if (bodySpec.contentType === "multipart/form-data") {
      if (!form) {
        return fail("content_type", `${spec.key} expects multipart/form-data`, [
          {
            type: "missing",
            loc: ["body", "file"],
            msg: "Field required",
            input: null,
          },
        ]);
      }
      const fields: Record<string, unknown> = {};
      const issues: ValidationIssue[] = [];
      for (const [key, value] of form.entries()) {
        if (key === "file") {
          if (typeof value === "string") {
            issues.push({
              type: "value_error",
              loc: ["body", "file"],
              msg: "Value error, Expected UploadFile, received: <class 'str'>",
              input: value,
            });
          }
          fields.file = "<binary>";
        } else {
          fields[key] = value;
        }
      }
      issues.push(...this.#table.validateBody(spec, fields));
      if (issues.length > 0) {
        return fail(
          "body",
          `Multipart body of ${spec.key} does not match the schema`,
          issues,
        );
      }
      return { kind: "body", body: null };
    }
    if (size === 0) {
      if (bodySpec.required) {
        return fail("body", `${spec.key} requires a JSON body`, [{
          type: "missing",
          loc: ["body"],
          msg: "Field required",
          input: null,
        }]);
      }
      const issues = this.#table.validateBody(spec, null);
      return issues.length > 0
        ? fail("body", `Body of ${spec.key} does not match the schema`, issues)
        : { kind: "body", body: null };
    }
    if (!isJsonType(contentType)) {
      return fail(
        "content_type",
        `${spec.key} expects application/json, got ${contentType}`,
        [{
          type: "model_attributes_type",
          loc: ["body"],
          msg:
            "Input should be a valid dictionary or object to extract fields from",
          input: text,
        }],
      );
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch (error) {
      return fail("body", `Body of ${spec.key} is not valid JSON`, [{
        type: "json_invalid",
        loc: ["body", 0],
        msg: "JSON decode error",
        input: {},
        ctx: { error: error instanceof Error ? error.message : String(error) },
      }]);
    }
    const issues = this.#table.validateBody(spec, parsed);
    if (issues.length > 0) {
      return fail(
        "body",
        `Body of ${spec.key} does not match the schema`,
        issues,
      );
    }
    const limits = metadataIssues(parsed);
    if (limits.length > 0) {
      return fail(
        "body",
        `Metadata of ${spec.key} exceeds the server's limits`,
        limits,
      );
    }
    const extra = this.#table.unknownBodyFields(spec, parsed);
    if (extra.length > 0) {
      const names = extra.map((i) => i.loc.slice(1).join(".")).join(", ");
      this.#violation(
        "unknown_body_field",
        entry,
        `Body of ${spec.key} has field(s) the schema does not declare: ${names}`,
        extra,
      );
    }
    return { kind: "body", body: stripNul(parsed) };
  }
}

/**
 * Starts a Honcho-compatible test server on `127.0.0.1` with an ephemeral
 * port. Close it with `close()` or `await using`.
 *
 * @param options Auth key, global latency, OpenAPI path and dialectic answer.
 * @returns The running server.
 * @throws {Error} When the OpenAPI document cannot be read.
 *
 * @example Count requests and check for violations
 * ```ts ignore
 * await using server = await startHonchoTestServer();
 * await (await fetch(`${server.url}/health`)).body?.cancel();
 * console.log(server.requestCount(), server.violations.length); // 1 0
 * ```
 */
export async function startHonchoTestServer(
  options: HonchoTestServerOptions = {},
): Promise<HonchoTestServer> {
  const path = options.openapiPath ?? DEFAULT_OPENAPI_PATH;
  let table = ROUTE_TABLES.get(path);
  if (!table) {
    table = OpenApiRoutes.load(path);
    ROUTE_TABLES.set(path, table);
    table.catch(() => ROUTE_TABLES.delete(path));
  }
  return new Server(await table, options);
}
