/**
 * Validators the real server runs beyond the OpenAPI schemas: metadata
 * limits (at most 100 top-level keys, dict nesting depth at most 5) and NUL
 * stripping of metadata strings, message contents, peer-card lines and
 * dialectic queries.
 *
 * @module
 */
import type { ValidationIssue } from "./openapi_routes.ts";

/** Maximum number of top-level metadata keys. */
export const METADATA_MAX_KEYS = 100;
/** Maximum dict nesting depth of metadata (the metadata object itself is depth 1). */
export const METADATA_MAX_DEPTH = 5;

type Json = Record<string, unknown>;

function isObject(value: unknown): value is Json {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

function limitError(value: Json, depth: number): string | undefined {
  if (depth > METADATA_MAX_DEPTH) {
    return `Metadata nesting exceeds maximum depth of ${METADATA_MAX_DEPTH}`;
  }
  if (depth === 1 && Object.keys(value).length > METADATA_MAX_KEYS) {
    return `Metadata exceeds maximum of ${METADATA_MAX_KEYS} top-level keys`;
  }
  for (const inner of Object.values(value)) {
    if (isObject(inner)) {
      const error = limitError(inner, depth + 1);
      if (error) return error;
    }
  }
  return undefined;
}

function check(
  metadata: unknown,
  loc: (string | number)[],
  issues: ValidationIssue[],
): void {
  if (!isObject(metadata)) return;
  const error = limitError(metadata, 1);
  if (error) {
    issues.push({
      type: "value_error",
      loc,
      msg: `Value error, ${error}`,
      input: metadata,
      ctx: { error },
    });
  }
}

/**
 * Checks the metadata objects of a request body (`metadata` and
 * `messages[i].metadata`) against the server's limits.
 *
 * @param body A parsed body that passed schema validation.
 * @returns pydantic-style `value_error` issues.
 */
export function metadataIssues(body: unknown): ValidationIssue[] {
  const issues: ValidationIssue[] = [];
  if (!isObject(body)) return issues;
  check(body.metadata, ["body", "metadata"], issues);
  if (Array.isArray(body.messages)) {
    body.messages.forEach((message, i) => {
      if (isObject(message)) {
        check(message.metadata, ["body", "messages", i, "metadata"], issues);
      }
    });
  }
  return issues;
}

function stripDeep(value: unknown): unknown {
  if (typeof value === "string") return value.replaceAll("\u0000", "");
  if (Array.isArray(value)) return value.map(stripDeep);
  if (isObject(value)) {
    return Object.fromEntries(
      Object.entries(value).map((
        [k, v],
      ) => [k.replaceAll("\u0000", ""), stripDeep(v)]),
    );
  }
  return value;
}

/**
 * Removes NUL characters where the real server does: metadata (deep),
 * message `content`, `peer_card` lines and the dialectic `query`.
 *
 * @param body A parsed, validated body.
 * @returns A sanitised copy (the input is not modified).
 */
export function stripNul(body: unknown): unknown {
  if (!isObject(body)) return body;
  const out: Json = { ...body };
  if ("metadata" in out) out.metadata = stripDeep(out.metadata);
  if (typeof out.query === "string") out.query = stripDeep(out.query);
  if (Array.isArray(out.peer_card)) out.peer_card = stripDeep(out.peer_card);
  if (Array.isArray(out.messages)) {
    out.messages = out.messages.map((message) => {
      if (!isObject(message)) return message;
      const copy: Json = { ...message };
      if (typeof copy.content === "string") {
        copy.content = stripDeep(copy.content);
      }
      if ("metadata" in copy) copy.metadata = stripDeep(copy.metadata);
      return copy;
    });
  }
  return out;
}
