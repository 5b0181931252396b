/**
 * Evaluation of Honcho's `filters` DSL against in-memory records.
 *
 * Supports equality, the `"*"` wildcard, `null` checks, bare-list sugar for
 * `in`, the operators `gte lte gt lt ne in contains icontains`, the logical
 * keys `AND`/`OR`/`NOT` (lists), and JSON containment on `metadata`. Unknown
 * fields or malformed filters raise a 422 like the real server.
 *
 * @module
 */
import { unprocessable } from "./http_error.ts";

const OPERATORS = new Set([
  "gte",
  "lte",
  "gt",
  "lt",
  "ne",
  "in",
  "contains",
  "icontains",
]);
const MAX_DEPTH = 5;

/** Filterable fields of one resource: external name → record field. */
export interface FilterFields {
  /** Resource name used in error messages (e.g. `Message`). */
  resource: string;
  /** Allowed filter keys mapped to record keys. */
  fields: Record<string, string>;
  /** Fields holding JSON objects (containment semantics). */
  jsonFields?: string[];
}

/** Filterable fields of workspaces. */
export const WORKSPACE_FILTERS: FilterFields = {
  resource: "Workspace",
  fields: { id: "id", created_at: "created_at", metadata: "metadata" },
  jsonFields: ["metadata"],
};
/** Filterable fields of peers. */
export const PEER_FILTERS: FilterFields = {
  resource: "Peer",
  fields: {
    id: "id",
    created_at: "created_at",
    workspace_id: "workspace_id",
    metadata: "metadata",
  },
  jsonFields: ["metadata"],
};
/** Filterable fields of sessions. */
export const SESSION_FILTERS: FilterFields = {
  resource: "Session",
  fields: {
    id: "id",
    created_at: "created_at",
    is_active: "is_active",
    workspace_id: "workspace_id",
    metadata: "metadata",
  },
  jsonFields: ["metadata"],
};
/** Filterable fields of messages. */
export const MESSAGE_FILTERS: FilterFields = {
  resource: "Message",
  fields: {
    workspace_id: "workspace_id",
    session_id: "session_id",
    peer_id: "peer_id",
    token_count: "token_count",
    created_at: "created_at",
    metadata: "metadata",
  },
  jsonFields: ["metadata"],
};
/** Filterable fields of conclusions (`observer`/`observed` are accepted aliases). */
export const CONCLUSION_FILTERS: FilterFields = {
  resource: "Document",
  fields: {
    id: "id",
    session_id: "session_id",
    workspace_id: "workspace_id",
    observer_id: "observer_id",
    observed_id: "observed_id",
    observer: "observer_id",
    observed: "observed_id",
    level: "level",
  },
};

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

function compare(actual: unknown, expected: unknown): number | undefined {
  if (actual === undefined || actual === null) return undefined;
  if (typeof actual === "number" && typeof expected === "number") {
    return actual - expected;
  }
  const a = typeof actual === "string" ? Date.parse(actual) : Number.NaN;
  const b = typeof expected === "string" ? Date.parse(expected) : Number.NaN;
  if (
    !Number.isNaN(a) && !Number.isNaN(b) &&
    /^\d{4}-\d{2}-\d{2}/.test(String(expected))
  ) {
    return a - b;
  }
  const x = Number(actual);
  const y = Number(expected);
  if (!Number.isNaN(x) && !Number.isNaN(y) && typeof expected !== "boolean") {
    return x - y;
  }
  return String(actual) < String(expected)
    ? -1
    : String(actual) > String(expected)
    ? 1
    : 0;
}

function looseEquals(actual: unknown, expected: unknown): boolean {
  if (actual === expected) return true;
  if (typeof actual === "string" && typeof expected === "string") {
    const a = Date.parse(actual);
    const b = Date.parse(expected);
    return /^\d{4}-\d{2}-\d{2}T/.test(actual) && !Number.isNaN(a) && a === b;
  }
  return false;
}

function contains(container: unknown, part: unknown): boolean {
  if (isPlainObject(part)) {
    if (!isPlainObject(container)) return false;
    return Object.entries(part).every(([key, value]) =>
      contains(container[key], value)
    );
  }
  if (Array.isArray(part)) {
    if (!Array.isArray(container)) return false;
    return part.every((p) => container.some((c) => contains(c, p)));
  }
  if (Array.isArray(container)) return container.some((c) => contains(c, part));
  return container === part;
}

function applyOperator(
  field: string,
  actual: unknown,
  op: string,
  operand: unknown,
): boolean {
  if (!OPERATORS.has(op)) {
    throw unprocessable(`Unsupported comparison operator: ${op}`);
  }
  if (operand === "*") return true;
  switch (op) {
    case "in": {
      if (!Array.isArray(operand)) {
        throw unprocessable(
          `Invalid value for 'in' operator: ${
            JSON.stringify(operand)
          }. Expected an iterable (list, tuple, set), got ${typeof operand}`,
        );
      }
      if (operand.includes("*")) return true;
      return operand.some((item) => looseEquals(actual, item));
    }
    case "contains":
    case "icontains": {
      if (actual === null || actual === undefined) return false;
      if (typeof actual !== "string") {
        throw unprocessable(
          `Operator '${op}' requires a text column, but '${field}' is not text`,
        );
      }
      return op === "contains"
        ? actual.includes(String(operand))
        : actual.toLowerCase().includes(String(operand).toLowerCase());
    }
    case "ne":
      return operand === null
        ? actual !== null && actual !== undefined
        : !looseEquals(actual, operand);
    default: {
      const diff = compare(actual, operand);
      if (diff === undefined) return false;
      if (op === "gte") return diff >= 0;
      if (op === "lte") return diff <= 0;
      if (op === "gt") return diff > 0;
      return diff < 0;
    }
  }
}

function matchJsonField(actual: unknown, condition: unknown): boolean {
  if (!isPlainObject(condition)) {
    if (Array.isArray(condition)) return contains(actual, condition);
    throw unprocessable(
      "Invalid filter for column 'metadata': a JSONB column takes an object, optionally under 'contains'",
    );
  }
  if (Object.keys(condition).some((k) => OPERATORS.has(k))) {
    if ("contains" in condition && Object.keys(condition).length === 1) {
      return contains(actual, condition.contains);
    }
    throw unprocessable(
      "Invalid filter for column 'metadata': a JSONB column takes an object, optionally under 'contains'",
    );
  }
  const object = isPlainObject(actual) ? actual : {};
  return Object.entries(condition).every(([key, expected]) => {
    if (expected === "*") return true;
    if (
      isPlainObject(expected) &&
      Object.keys(expected).some((k) => OPERATORS.has(k))
    ) {
      return Object.entries(expected).every(([op, operand]) =>
        applyOperator(key, object[key], op, operand)
      );
    }
    return contains(object[key], expected);
  });
}

function matchField(
  record: Record<string, unknown>,
  key: string,
  condition: unknown,
  spec: FilterFields,
): boolean {
  const field = spec.fields[key];
  if (field === undefined) {
    throw unprocessable(
      `Column '${key}' is not allowed to be filtered on or does not exist on ${spec.resource}`,
    );
  }
  const actual = record[field];
  if (condition === "*") return true;
  if (spec.jsonFields?.includes(field)) {
    return matchJsonField(actual, condition);
  }
  if (condition === null) return actual === null || actual === undefined;
  if (Array.isArray(condition)) condition = { in: condition };
  if (isPlainObject(condition)) {
    const ops = Object.keys(condition);
    if (!ops.some((op) => OPERATORS.has(op))) {
      throw unprocessable(
        `Invalid filter for column '${key}': unsupported operator(s) ${
          JSON.stringify(ops.sort())
        }. Expected one of ${
          JSON.stringify([...OPERATORS].sort())
        } or a scalar value.`,
      );
    }
    return Object.entries(condition).every(([op, operand]) =>
      applyOperator(key, actual, op, operand)
    );
  }
  return looseEquals(actual, condition);
}

function matchWithDepth(
  record: Record<string, unknown>,
  filters: Record<string, unknown>,
  spec: FilterFields,
  depth: number,
): boolean {
  if (depth > MAX_DEPTH) {
    throw unprocessable("Filter nesting exceeds maximum depth of 5");
  }
  for (const logical of ["AND", "OR", "NOT"] as const) {
    if (!(logical in filters)) continue;
    const list = filters[logical];
    if (!Array.isArray(list)) {
      throw unprocessable(
        `${logical} operator must contain a list, got ${typeof list}`,
      );
    }
    const results = list.map((sub) => {
      if (!isPlainObject(sub)) {
        throw unprocessable("Invalid filter configuration");
      }
      return matchWithDepth(record, sub, spec, depth + 1);
    });
    if (logical === "AND" && !results.every(Boolean)) return false;
    if (logical === "OR" && results.length > 0 && !results.some(Boolean)) {
      return false;
    }
    if (logical === "NOT" && results.some(Boolean)) return false;
  }
  for (const [key, condition] of Object.entries(filters)) {
    if (key === "AND" || key === "OR" || key === "NOT") continue;
    if (!matchField(record, key, condition, spec)) return false;
  }
  return true;
}

/**
 * Tests a record against a filter object.
 *
 * @param record The record (API field names).
 * @param filters The `filters` value of a request body; null/undefined matches all.
 * @param spec The resource's filterable fields.
 * @returns Whether the record matches.
 * @throws {HonchoHttpError} 422 for unknown fields or malformed filters.
 */
export function matchesFilters(
  record: object,
  filters: unknown,
  spec: FilterFields,
): boolean {
  if (filters === null || filters === undefined) return true;
  if (!isPlainObject(filters)) {
    throw unprocessable("Invalid filter configuration");
  }
  return matchWithDepth(record as Record<string, unknown>, filters, spec, 0);
}

/**
 * Validates filters once (so an empty collection still rejects bad filters)
 * and returns the matching records.
 *
 * @param records Candidate records.
 * @param filters The `filters` value; null/undefined matches all.
 * @param spec The resource's filterable fields.
 * @returns The matching records, in input order.
 * @throws {HonchoHttpError} 422 for unknown fields or malformed filters.
 */
export function applyFilters<T extends object>(
  records: T[],
  filters: unknown,
  spec: FilterFields,
): T[] {
  if (filters === null || filters === undefined) return records;
  const probe: Record<string, unknown> = {};
  matchesFilters(probe, filters, spec);
  return records.filter((record) => matchesFilters(record, filters, spec));
}

/**
 * Parses the recall `filters` subset of chat/representation: only
 * `session_id` as an id, a list of ids, or `{"in": [...]}`.
 *
 * @param filters The raw filters value.
 * @param mustInclude A session id that must be in the allowlist.
 * @returns The allowlist, or undefined when no filters were sent.
 * @throws {HonchoHttpError} 422 on unsupported keys or shapes.
 */
export function sessionAllowlist(
  filters: unknown,
  mustInclude?: string,
): string[] | undefined {
  if (filters === null || filters === undefined) return undefined;
  if (!isPlainObject(filters)) {
    throw unprocessable("Invalid filter configuration");
  }
  const unsupported = Object.keys(filters).filter((k) => k !== "session_id")
    .sort();
  if (unsupported.length > 0) {
    throw unprocessable(
      `Unsupported filter key(s) for this endpoint: ${
        JSON.stringify(unsupported)
      }. Only 'session_id' is supported.`,
    );
  }
  if (!("session_id" in filters)) {
    throw unprocessable("filters must contain 'session_id'");
  }
  const value = filters.session_id;
  let entries: unknown[];
  if (typeof value === "string") entries = [value];
  else if (Array.isArray(value)) entries = value;
  else if (
    isPlainObject(value) && Object.keys(value).join() === "in" &&
    Array.isArray(value.in)
  ) {
    entries = value.in;
  } else {
    throw unprocessable(
      'filters.session_id must be a session id, a list of session ids, or {"in": [...]}',
    );
  }
  const list = [...new Set(entries.map(String))];
  if (mustInclude !== undefined && !list.includes(mustInclude)) {
    throw unprocessable("session_id must be included in filters.session_id");
  }
  return list;
}
