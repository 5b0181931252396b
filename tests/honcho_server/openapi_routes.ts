/**
 * Route table and request validation built from the Honcho OpenAPI document.
 *
 * Every operation under `paths` becomes a route whose path template is turned
 * into a matcher. Request bodies and query parameters are checked with ajv
 * (JSON Schema 2020-12, which OpenAPI 3.1 uses) and failures are reported as
 * FastAPI/pydantic-style issues, so the test server can answer 422 exactly
 * like the real server would.
 *
 * @module
 */
import { Ajv2020 } from "npm:ajv@8.20.0/dist/2020.js";
import type {
  ErrorObject,
  ValidateFunction,
} from "npm:ajv@8.20.0/dist/2020.js";
import { readFile } from "node:fs/promises";

/** One item of a FastAPI 422 body: `{"detail": [ValidationIssue, ...]}`. */
export interface ValidationIssue {
  /** pydantic error type, e.g. `missing`, `string_type`, `int_parsing`. */
  type: string;
  /** Location: `["body", ...]`, `["query", name]` or `["path", name]`. */
  loc: (string | number)[];
  /** Human-readable message in pydantic's wording. */
  msg: string;
  /** The offending input value. */
  input?: unknown;
  /** Extra context, e.g. `{max_length: 512}`. */
  ctx?: Record<string, unknown>;
}

/** Where a route comes from: the OpenAPI document or the list of known spec gaps. */
export type RouteSource = "openapi" | "extension";

/** A declared query parameter of an operation. */
export interface QueryParam {
  /** Parameter name. */
  name: string;
  /** Whether the parameter must be present. */
  required: boolean;
  /** The parameter's JSON schema, as written in the document. */
  schema: Record<string, unknown>;
}

/** A request body declaration of an operation. */
export interface BodySpec {
  /** Whether a body must be sent. */
  required: boolean;
  /** Media type of the body. */
  contentType: "application/json" | "multipart/form-data";
  /** Compiled validator for the body schema. */
  validate: ValidateFunction;
  /**
   * The same schema with `additionalProperties: false` on every model that
   * does not allow extras (spec-lag fields from the routers allowed): finds
   * misspelled or unknown fields, which pydantic silently ignores.
   */
  strict: ValidateFunction;
}

/** One routable operation. */
export interface RouteSpec {
  /** Upper-case HTTP method. */
  method: string;
  /** Path template with `{name}` placeholders. */
  template: string;
  /** `"METHOD template"`, the key used for faults and request counts. */
  key: string;
  /** OpenAPI operationId (or a made-up one for extension routes). */
  operationId: string;
  /** Whether the operation is in the OpenAPI document. */
  source: RouteSource;
  /** Names of the path parameters, in order. */
  pathParams: string[];
  /** Validators of the path parameters that declare a schema. */
  pathValidators: Record<string, ValidateFunction>;
  /** Declared query parameters. */
  query: QueryParam[];
  /** Query parameters the routers accept although the document lags. */
  extraQuery: string[];
  /** Body declaration, when the operation takes one. */
  body?: BodySpec;
  /** Success status the real server answers with (per the document). */
  successStatus: number;
  /** Validators of the documented JSON response bodies, by status. */
  responses: Record<number, ValidateFunction>;
}

/** Result of matching a request against the route table. */
export type RouteMatch =
  | { kind: "route"; route: RouteSpec; params: Record<string, string> }
  | { kind: "method_not_allowed"; allowed: string[] }
  | { kind: "not_found" };

/** Operations the routers have but `openapi.json` does not list (see honcho-api.md). */
interface ExtensionRoute {
  method: string;
  template: string;
  operationId: string;
  /** Component schema name validating the body, if any. */
  bodySchema?: string;
  successStatus: number;
}

const EXTENSION_ROUTES: ExtensionRoute[] = [
  {
    // Published TS SDK 2.5.0: workspace-level dialectic (JSON and SSE).
    method: "POST",
    template: "/v3/workspaces/{workspace_id}/chat",
    operationId: "workspace_chat_extension",
    bodySchema: "DialecticOptions",
    successStatus: 200,
  },
  {
    // Published TS SDK 2.5.0: `conclusions.get(id)`.
    method: "GET",
    template: "/v3/workspaces/{workspace_id}/conclusions/{conclusion_id}",
    operationId: "get_conclusion_extension",
    successStatus: 200,
  },
];

/** Query parameters the routers read although the document does not show them. */
const EXTRA_QUERY: Record<string, string[]> = {
  "GET /v3/workspaces/{workspace_id}/sessions/{session_id}/context": [
    "scope",
    "sessions",
  ],
};

const PYDANTIC_BOOL_TRUE = new Set(["true", "1", "yes", "on", "t", "y"]);
const PYDANTIC_BOOL_FALSE = new Set(["false", "0", "no", "off", "f", "n"]);
const INTEGER_REGEXP = /^[+-]?\d+$/;
const NUMBER_REGEXP = /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/;
const DATE_TIME_REGEXP =
  /^\d{4}-\d{2}-\d{2}([Tt ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?([Zz]|[+-]\d{2}(:?\d{2})?)?)?$/;
const SCHEMA_ID = "urn:honcho:openapi";
const STRICT_SCHEMA_ID = "urn:honcho:openapi-strict";

/**
 * Body fields the routers accept although `openapi.json` (which lags the
 * code, see honcho-api.md) does not list them, per component schema.
 */
const SPEC_LAG_FIELDS: Record<string, string[]> = {
  DialecticOptions: ["scope", "include_evidence"],
  PeerRepresentationGet: ["scope"],
  MessageSearchOptions: ["scope"],
  SessionCreate: ["scopes"],
  PeerGet: ["kind"],
  ConclusionBatchCreate: ["observations"],
};

function strictDefs(defs: Json): Json {
  const out: Json = {};
  for (const [name, schema] of Object.entries(defs)) {
    const def = schema as Json;
    if (
      def.type === "object" && def.properties &&
      !("additionalProperties" in def)
    ) {
      const extra = Object.fromEntries(
        (SPEC_LAG_FIELDS[name] ?? []).map((f) => [f, {}]),
      );
      out[name] = {
        ...def,
        properties: { ...def.properties as Json, ...extra },
        additionalProperties: false,
      };
    } else {
      out[name] = def;
    }
  }
  return out;
}
const HTTP_METHODS = ["get", "post", "put", "patch", "delete"];

type Json = Record<string, unknown>;

function rewriteRefs(value: unknown, prefix: string): unknown {
  if (Array.isArray(value)) {
    return value.map((item) => rewriteRefs(item, prefix));
  }
  if (value !== null && typeof value === "object") {
    const out: Json = {};
    for (const [key, inner] of Object.entries(value as Json)) {
      if (key === "$ref" && typeof inner === "string") {
        out[key] = inner.replace("#/components/schemas/", `${prefix}#/$defs/`);
      } else {
        out[key] = rewriteRefs(inner, prefix);
      }
    }
    return out;
  }
  return value;
}

function schemaTypes(schema: Json): string[] {
  const types: string[] = [];
  if (typeof schema.type === "string") types.push(schema.type);
  if (Array.isArray(schema.type)) types.push(...schema.type as string[]);
  if (Array.isArray(schema.anyOf)) {
    for (const branch of schema.anyOf as Json[]) {
      types.push(...schemaTypes(branch));
    }
  }
  return types;
}

function templateRegExp(template: string): { regex: RegExp; names: string[] } {
  const names: string[] = [];
  const source = template.split("/").map((segment) => {
    const match = /^\{(.+)\}$/.exec(segment);
    if (!match) return segment.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
    names.push(match[1]!);
    return "([^/]+)";
  }).join("/");
  return { regex: new RegExp(`^${source}$`), names };
}

function staticSegments(template: string): number {
  return template.split("/").filter((s) => s && !s.startsWith("{")).length;
}

/**
 * Coerces a query-string value the way FastAPI does for the schema's scalar
 * type; returns the original string when no conversion applies.
 */
function coerceQueryValue(raw: string, schema: Json): unknown {
  const types = schemaTypes(schema);
  for (const type of types) {
    if (type === "integer" && INTEGER_REGEXP.test(raw.trim())) {
      return Number.parseInt(raw.trim(), 10);
    }
    if (type === "number" && NUMBER_REGEXP.test(raw.trim())) {
      return Number(raw.trim());
    }
    if (type === "boolean") {
      const lower = raw.trim().toLowerCase();
      if (PYDANTIC_BOOL_TRUE.has(lower)) return true;
      if (PYDANTIC_BOOL_FALSE.has(lower)) return false;
    }
    if (type === "string") return raw;
  }
  return raw;
}

function pointerSegments(instancePath: string): (string | number)[] {
  if (!instancePath) return [];
  return instancePath.slice(1).split("/").map((part) => {
    const text = part.replace(/~1/g, "/").replace(/~0/g, "~");
    return /^\d+$/.test(text) ? Number(text) : text;
  });
}

function valueAt(root: unknown, path: (string | number)[]): unknown {
  let current = root;
  for (const part of path) {
    if (current === null || typeof current !== "object") return undefined;
    current = (current as Record<string | number, unknown>)[part];
  }
  return current;
}

function typeIssue(
  type: string,
  fromString: boolean,
): { type: string; msg: string } {
  switch (type) {
    case "integer":
      return fromString
        ? {
          type: "int_parsing",
          msg:
            "Input should be a valid integer, unable to parse string as an integer",
        }
        : { type: "int_type", msg: "Input should be a valid integer" };
    case "number":
      return fromString
        ? {
          type: "float_parsing",
          msg:
            "Input should be a valid number, unable to parse string as a number",
        }
        : { type: "float_type", msg: "Input should be a valid number" };
    case "boolean":
      return fromString
        ? {
          type: "bool_parsing",
          msg: "Input should be a valid boolean, unable to interpret input",
        }
        : { type: "bool_type", msg: "Input should be a valid boolean" };
    case "string":
      return { type: "string_type", msg: "Input should be a valid string" };
    case "array":
      return { type: "list_type", msg: "Input should be a valid list" };
    case "object":
      return { type: "dict_type", msg: "Input should be a valid dictionary" };
    default:
      return { type: `${type}_type`, msg: `Input should be a valid ${type}` };
  }
}

/**
 * Turns ajv errors into pydantic-style issues. Errors that only explain why a
 * nullable branch (`{"type": "null"}`) or an `anyOf` wrapper failed are
 * dropped when a more specific error exists for the same value, which is how
 * pydantic reports `Optional[...]` fields.
 */
export function issuesFromAjv(
  errors: ErrorObject[],
  base: (string | number)[],
  input: unknown,
): ValidationIssue[] {
  const specific = new Set<string>();
  for (const error of errors) {
    const isNull = error.keyword === "type" && error.params.type === "null";
    if (error.keyword !== "anyOf" && !isNull) specific.add(error.instancePath);
  }
  const issues: ValidationIssue[] = [];
  const seen = new Set<string>();
  for (const error of errors) {
    const isNull = error.keyword === "type" && error.params.type === "null";
    if (
      (error.keyword === "anyOf" || isNull) && specific.has(error.instancePath)
    ) continue;
    const path = pointerSegments(error.instancePath);
    const value = valueAt(input, path);
    let issue: ValidationIssue;
    const params = error.params as Record<string, unknown>;
    switch (error.keyword) {
      case "required":
        issue = {
          type: "missing",
          loc: [...base, ...path, String(params.missingProperty)],
          msg: "Field required",
          input: value,
        };
        break;
      case "type": {
        const t = typeIssue(String(params.type), typeof value === "string");
        issue = {
          type: t.type,
          loc: [...base, ...path],
          msg: t.msg,
          input: value,
        };
        break;
      }
      case "minLength":
        issue = {
          type: "string_too_short",
          loc: [...base, ...path],
          msg: `String should have at least ${params.limit} character${
            params.limit === 1 ? "" : "s"
          }`,
          input: value,
          ctx: { min_length: params.limit },
        };
        break;
      case "maxLength":
        issue = {
          type: "string_too_long",
          loc: [...base, ...path],
          msg: `String should have at most ${params.limit} characters`,
          input: value,
          ctx: { max_length: params.limit },
        };
        break;
      case "pattern":
        issue = {
          type: "string_pattern_mismatch",
          loc: [...base, ...path],
          msg: `String should match pattern '${params.pattern}'`,
          input: value,
          ctx: { pattern: params.pattern },
        };
        break;
      case "minItems":
        issue = {
          type: "too_short",
          loc: [...base, ...path],
          msg: `List should have at least ${params.limit} item${
            params.limit === 1 ? "" : "s"
          } after validation, not ${Array.isArray(value) ? value.length : 0}`,
          input: value,
          ctx: {
            field_type: "List",
            min_length: params.limit,
            actual_length: Array.isArray(value) ? value.length : 0,
          },
        };
        break;
      case "maxItems":
        issue = {
          type: "too_long",
          loc: [...base, ...path],
          msg:
            `List should have at most ${params.limit} items after validation, not ${
              Array.isArray(value) ? value.length : 0
            }`,
          input: value,
          ctx: {
            field_type: "List",
            max_length: params.limit,
            actual_length: Array.isArray(value) ? value.length : 0,
          },
        };
        break;
      case "minimum":
      case "exclusiveMinimum":
        issue = {
          type: error.keyword === "minimum"
            ? "greater_than_equal"
            : "greater_than",
          loc: [...base, ...path],
          msg: `Input should be greater than${
            error.keyword === "minimum" ? " or equal to" : ""
          } ${params.limit}`,
          input: value,
          ctx: { [error.keyword === "minimum" ? "ge" : "gt"]: params.limit },
        };
        break;
      case "maximum":
      case "exclusiveMaximum":
        issue = {
          type: error.keyword === "maximum" ? "less_than_equal" : "less_than",
          loc: [...base, ...path],
          msg: `Input should be less than${
            error.keyword === "maximum" ? " or equal to" : ""
          } ${params.limit}`,
          input: value,
          ctx: { [error.keyword === "maximum" ? "le" : "lt"]: params.limit },
        };
        break;
      case "enum": {
        const allowed = (params.allowedValues as unknown[]).map((v) =>
          `'${String(v)}'`
        );
        const expected = allowed.length > 1
          ? `${allowed.slice(0, -1).join(", ")} or ${allowed.at(-1)}`
          : allowed.join("");
        issue = {
          type: "enum",
          loc: [...base, ...path],
          msg: `Input should be ${expected}`,
          input: value,
          ctx: { expected },
        };
        break;
      }
      case "additionalProperties":
        issue = {
          type: "extra_forbidden",
          loc: [...base, ...path, String(params.additionalProperty)],
          msg: "Extra inputs are not permitted",
          input: valueAt(value, [String(params.additionalProperty)]),
        };
        break;
      case "format":
        issue = {
          type: "datetime_from_date_parsing",
          loc: [...base, ...path],
          msg: "Input should be a valid datetime",
          input: value,
        };
        break;
      default:
        issue = {
          type: "value_error",
          loc: [...base, ...path],
          msg: error.message ?? "Invalid value",
          input: value,
        };
    }
    const dedupeKey = JSON.stringify([issue.type, issue.loc]);
    if (seen.has(dedupeKey)) continue;
    seen.add(dedupeKey);
    issues.push(issue);
  }
  return issues;
}

/** The route table of one OpenAPI document, with compiled validators. */
export class OpenApiRoutes {
  /** All routes, most specific template first. */
  readonly routes: readonly RouteSpec[];
  /** OpenAPI `info.version` of the loaded document. */
  readonly version: string;
  #matchers: { route: RouteSpec; regex: RegExp }[];
  #ajv: Ajv2020;
  #queryValidators = new Map<string, ValidateFunction>();

  private constructor(doc: Json) {
    const defs = rewriteRefs(
      (doc.components as Json | undefined)?.schemas ?? {},
      "",
    ) as Json;
    this.#ajv = new Ajv2020({
      strict: false,
      allErrors: true,
      allowUnionTypes: true,
      logger: false,
      validateFormats: true,
    });
    this.#ajv.addFormat("date-time", {
      type: "string",
      validate: (value: string) =>
        DATE_TIME_REGEXP.test(value) &&
        !Number.isNaN(Date.parse(value.replace(" ", "T"))),
    });
    this.#ajv.addSchema({ $id: SCHEMA_ID, $defs: defs });
    this.#ajv.addSchema({ $id: STRICT_SCHEMA_ID, $defs: strictDefs(defs) });
    this.version = String((doc.info as Json | undefined)?.version ?? "");
    const routes: RouteSpec[] = [];
    const paths = (doc.paths ?? {}) as Record<string, Json>;
    for (const [template, item] of Object.entries(paths)) {
      for (const method of HTTP_METHODS) {
        const op = item[method] as Json | undefined;
        if (!op) continue;
        routes.push(
          this.#routeFromOperation(method.toUpperCase(), template, op),
        );
      }
    }
    for (const ext of EXTENSION_ROUTES) {
      const key = `${ext.method} ${ext.template}`;
      if (routes.some((r) => r.key === key)) continue;
      routes.push({
        method: ext.method,
        template: ext.template,
        key,
        operationId: ext.operationId,
        source: "extension",
        pathParams: templateRegExp(ext.template).names,
        pathValidators: {},
        query: [],
        extraQuery: [],
        body: ext.bodySchema
          ? this.#bodySpec(true, "application/json", {
            $ref: `#/components/schemas/${ext.bodySchema}`,
          })
          : undefined,
        successStatus: ext.successStatus,
        responses: {},
      });
    }
    routes.sort((a, b) =>
      staticSegments(b.template) - staticSegments(a.template)
    );
    this.routes = routes;
    this.#matchers = routes.map((route) => ({
      route,
      regex: templateRegExp(route.template).regex,
    }));
  }

  /**
   * Reads an OpenAPI document from disk and builds its route table.
   *
   * @param path File path of `openapi.json`.
   * @returns The route table.
   */
  static async load(path: string): Promise<OpenApiRoutes> {
    const doc = JSON.parse(await readFile(path, "utf8")) as Json;
    return new OpenApiRoutes(doc);
  }

  #compile(schema: Json, id: string = SCHEMA_ID): ValidateFunction {
    return this.#ajv.compile(rewriteRefs(schema, id) as Json);
  }

  #bodySpec(
    required: boolean,
    contentType: BodySpec["contentType"],
    schema: Json,
  ): BodySpec {
    return {
      required,
      contentType,
      validate: this.#compile(schema),
      strict: this.#compile(schema, STRICT_SCHEMA_ID),
    };
  }

  #routeFromOperation(method: string, template: string, op: Json): RouteSpec {
    const key = `${method} ${template}`;
    const params = (op.parameters ?? []) as Json[];
    const query: QueryParam[] = params.filter((p) => p.in === "query").map((
      p,
    ) => ({
      name: String(p.name),
      required: p.required === true,
      schema: (p.schema ?? {}) as Json,
    }));
    let body: BodySpec | undefined;
    const requestBody = op.requestBody as Json | undefined;
    if (requestBody) {
      const content = requestBody.content as Record<string, Json>;
      const contentType = "application/json" in content
        ? "application/json"
        : "multipart/form-data";
      const schema = content[contentType]?.schema as Json;
      body = this.#bodySpec(requestBody.required === true, contentType, schema);
    }
    const documented = (op.responses ?? {}) as Record<string, Json>;
    const success =
      Object.keys(documented).map(Number).find((code) =>
        code >= 200 && code < 300
      ) ?? 200;
    const responses: Record<number, ValidateFunction> = {};
    for (const [code, response] of Object.entries(documented)) {
      const status = Number(code);
      const schema = ((response.content as Record<string, Json> | undefined)
        ?.["application/json"])?.schema as Json | undefined;
      if (
        status >= 200 && status < 300 && schema &&
        Object.keys(schema).length > 0
      ) {
        responses[status] = this.#compile(schema);
      }
    }
    return {
      method,
      template,
      key,
      operationId: String(op.operationId ?? key),
      source: "openapi",
      pathParams: templateRegExp(template).names,
      pathValidators: Object.fromEntries(
        params.filter((p) => p.in === "path" && p.schema).map((p) => [
          String(p.name),
          this.#compile(p.schema as Json),
        ]),
      ),
      query,
      extraQuery: EXTRA_QUERY[key] ?? [],
      body,
      successStatus: success,
      responses,
    };
  }

  /**
   * Finds the operation for a method and path.
   *
   * @param method HTTP method.
   * @param pathname URL path (percent-encoded).
   * @returns The match, a 405 hint, or not found.
   */
  match(method: string, pathname: string): RouteMatch {
    const allowed: string[] = [];
    let found: { route: RouteSpec; params: Record<string, string> } | undefined;
    for (const { route, regex } of this.#matchers) {
      const m = regex.exec(pathname);
      if (!m) continue;
      if (route.method !== method.toUpperCase()) {
        allowed.push(route.method);
        continue;
      }
      const params: Record<string, string> = {};
      let ok = true;
      route.pathParams.forEach((name, i) => {
        try {
          params[name] = decodeURIComponent(m[i + 1]!);
        } catch {
          ok = false;
        }
      });
      if (!ok) continue;
      found = { route, params };
      break;
    }
    if (found) return { kind: "route", ...found };
    if (allowed.length > 0) return { kind: "method_not_allowed", allowed };
    return { kind: "not_found" };
  }

  /**
   * Validates decoded path parameters against their schemas.
   *
   * @param route The matched route.
   * @param params Decoded path parameters.
   * @returns pydantic-style issues with `loc` `["path", name]`.
   */
  validatePath(
    route: RouteSpec,
    params: Record<string, string>,
  ): ValidationIssue[] {
    const issues: ValidationIssue[] = [];
    for (const [name, validate] of Object.entries(route.pathValidators)) {
      const value = params[name];
      if (!validate(value)) {
        issues.push(
          ...issuesFromAjv(validate.errors ?? [], ["path", name], value),
        );
      }
    }
    return issues;
  }

  /**
   * Validates and coerces the query string of a request.
   *
   * @param route The matched route.
   * @param search The request's query parameters.
   * @returns Coerced values (defaults applied), 422 issues, and names the
   *   operation does not declare.
   */
  validateQuery(
    route: RouteSpec,
    search: URLSearchParams,
  ): {
    values: Record<string, unknown>;
    issues: ValidationIssue[];
    unknown: string[];
  } {
    const values: Record<string, unknown> = {};
    const issues: ValidationIssue[] = [];
    for (const param of route.query) {
      const all = search.getAll(param.name);
      if (all.length === 0) {
        if (param.required) {
          issues.push({
            type: "missing",
            loc: ["query", param.name],
            msg: "Field required",
          });
        } else if ("default" in param.schema) {
          values[param.name] = param.schema.default;
        }
        continue;
      }
      const raw = all.at(-1)!;
      const value = coerceQueryValue(raw, param.schema);
      const cacheKey = `${route.key}?${param.name}`;
      let validate = this.#queryValidators.get(cacheKey);
      if (!validate) {
        validate = this.#compile(param.schema);
        this.#queryValidators.set(cacheKey, validate);
      }
      if (validate(value)) {
        values[param.name] = value;
      } else {
        issues.push(
          ...issuesFromAjv(validate.errors ?? [], ["query", param.name], value),
        );
      }
    }
    const declared = new Set([
      ...route.query.map((q) => q.name),
      ...route.extraQuery,
    ]);
    const unknown = [...new Set(search.keys())].filter((name) =>
      !declared.has(name)
    );
    for (const name of route.extraQuery) {
      const all = search.getAll(name);
      if (all.length > 0) values[name] = all.length > 1 ? all : all[0];
    }
    return { values, issues, unknown };
  }

  /**
   * Validates a parsed JSON (or multipart-derived) body against the
   * operation's request-body schema.
   *
   * @param route The matched route.
   * @param body The parsed body; `null` when none was sent.
   * @returns pydantic-style issues (empty when valid).
   */
  validateBody(route: RouteSpec, body: unknown): ValidationIssue[] {
    if (!route.body) return [];
    if (route.body.validate(body)) return [];
    return issuesFromAjv(route.body.validate.errors ?? [], ["body"], body);
  }

  /**
   * Lists body fields no schema declares (pydantic ignores them, so they
   * are not a 422, but a client sending them is probably wrong). Fields the
   * routers read although the document lags are allowed.
   *
   * @param route The matched route.
   * @param body A body that passed {@linkcode validateBody}.
   * @returns `extra_forbidden` issues, one per unknown field.
   */
  unknownBodyFields(route: RouteSpec, body: unknown): ValidationIssue[] {
    if (!route.body || route.body.strict(body)) return [];
    return issuesFromAjv(route.body.strict.errors ?? [], ["body"], body)
      .filter((issue) => issue.type === "extra_forbidden");
  }

  /**
   * Validates a 2xx JSON response against the documented schema (a 201 on
   * a route documented with 200 only uses the 200 schema, as the document
   * lags the get-or-create split).
   *
   * @param route The matched route.
   * @param status Response status.
   * @param body Parsed response body.
   * @returns Issues with `loc` starting at `"response"`; empty when valid
   *   or when no schema is documented.
   */
  validateResponse(
    route: RouteSpec,
    status: number,
    body: unknown,
  ): ValidationIssue[] {
    const validate = route.responses[status] ??
      (status === 201 ? route.responses[200] : undefined);
    if (!validate || validate(body)) return [];
    return issuesFromAjv(validate.errors ?? [], ["response"], body);
  }
}
