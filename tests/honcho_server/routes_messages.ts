/**
 * Message routes: batch create, multipart file upload, list, get and update.
 *
 * @module
 */
import { applyFilters, MESSAGE_FILTERS } from "./filters.ts";
import { HonchoHttpError, jsonResponse, notFound } from "./http_error.ts";
import {
  bodyObject,
  pageQuery,
  param,
  type RouteContext,
  type RouteHandlers,
} from "./route_context.ts";
import { ensureAuthor } from "./routes_sessions.ts";
import {
  type MessageRecord,
  nanoid,
  paginate,
  timestamp,
  tokenCount,
} from "./store.ts";
import { activeSession, checkPeerIds, messageView } from "./store_ops.ts";

type Json = Record<string, unknown>;

/** Largest upload accepted (bytes), like `MAX_FILE_SIZE`. */
export const MAX_FILE_SIZE = 5 * 1024 * 1024;
/** Largest message content (characters), like `MAX_MESSAGE_SIZE`; uploads are split at this size. */
export const MAX_MESSAGE_SIZE = 25_000;
/** Content types the upload route turns into text. */
export const UPLOAD_CONTENT_TYPES: readonly string[] = [
  "text/plain",
  "text/markdown",
  "text/x-markdown",
  "text/csv",
  "application/json",
  "application/octet-stream",
];

function createMessage(
  ctx: RouteContext,
  input: {
    content: string;
    peerId: string;
    metadata?: Json | null;
    configuration?: Json | null;
    createdAt?: string | null;
  },
): MessageRecord {
  const ws = param(ctx, "workspace_id");
  const sid = param(ctx, "session_id");
  const record: MessageRecord = {
    id: nanoid(),
    content: input.content,
    peer_id: input.peerId,
    session_id: sid,
    workspace_id: ws,
    metadata: input.metadata ?? {},
    configuration: input.configuration ?? null,
    created_at: input.createdAt
      ? new Date(input.createdAt).toISOString()
      : timestamp(),
    token_count: tokenCount(input.content),
  };
  ctx.state.messages.push(record);
  return record;
}

function findMessage(ctx: RouteContext): MessageRecord {
  const ws = param(ctx, "workspace_id");
  const sid = param(ctx, "session_id");
  const id = param(ctx, "message_id");
  const message = ctx.state.messages.find((m) =>
    m.workspace_id === ws && m.session_id === sid && m.id === id
  );
  if (!message) throw notFound(`Message with ID ${id} not found`);
  return message;
}

function parseJsonField(
  value: FormDataEntryValue | null,
  name: string,
): Json | null {
  if (value === null || value === "") return null;
  if (typeof value !== "string") {
    throw new HonchoHttpError(422, [{
      type: "string_type",
      loc: ["body", name],
      msg: "Input should be a valid string",
    }]);
  }
  try {
    const parsed = JSON.parse(value);
    if (
      parsed === null || typeof parsed !== "object" || Array.isArray(parsed)
    ) throw new Error();
    return parsed as Json;
  } catch {
    throw new HonchoHttpError(422, `Invalid JSON in ${name}`);
  }
}

function baseType(type: string): string {
  return type.split(";")[0]!.trim().toLowerCase();
}

function splitContent(text: string): string[] {
  if (text.length <= MAX_MESSAGE_SIZE) return [text];
  const chunks: string[] = [];
  for (let i = 0; i < text.length; i += MAX_MESSAGE_SIZE) {
    chunks.push(text.slice(i, i + MAX_MESSAGE_SIZE));
  }
  return chunks;
}

/** Handlers for `/v3/workspaces/{workspace_id}/sessions/{session_id}/messages…` routes. */
export const MESSAGE_ROUTES: RouteHandlers = {
  "POST /v3/workspaces/{workspace_id}/sessions/{session_id}/messages": (
    ctx,
  ) => {
    const ws = param(ctx, "workspace_id");
    const sid = param(ctx, "session_id");
    const inputs = bodyObject(ctx).messages as Json[];
    checkPeerIds([...new Set(inputs.map((m) => String(m.peer_id)))]);
    activeSession(ctx.state, ws, sid);
    for (const input of inputs) {
      ensureAuthor(ctx.state, ws, sid, String(input.peer_id));
    }
    const created = inputs.map((input) =>
      createMessage(ctx, {
        content: String(input.content),
        peerId: String(input.peer_id),
        metadata: input.metadata as Json | null | undefined,
        configuration: input.configuration as Json | null | undefined,
        createdAt: input.created_at as string | null | undefined,
      })
    );
    return jsonResponse(201, created.map(messageView));
  },

  "POST /v3/workspaces/{workspace_id}/sessions/{session_id}/messages/upload":
    async (ctx) => {
      const ws = param(ctx, "workspace_id");
      const sid = param(ctx, "session_id");
      const form = ctx.form!;
      const file = form.get("file") as File;
      const peerId = String(form.get("peer_id"));
      const metadata = parseJsonField(form.get("metadata"), "metadata");
      const configuration = parseJsonField(
        form.get("configuration"),
        "configuration",
      );
      const createdAt = form.get("created_at");
      if (file.size > MAX_FILE_SIZE) {
        throw new HonchoHttpError(
          413,
          `File size ${file.size} bytes exceeds maximum allowed size of ${MAX_FILE_SIZE} bytes`,
        );
      }
      const type = baseType(file.type || "application/octet-stream");
      if (!UPLOAD_CONTENT_TYPES.includes(type) && !type.startsWith("text/")) {
        throw new HonchoHttpError(415, `Unsupported file type: ${type}`);
      }
      const text = new TextDecoder().decode(await file.arrayBuffer());
      checkPeerIds([peerId]);
      activeSession(ctx.state, ws, sid);
      ensureAuthor(ctx.state, ws, sid, peerId);
      const created = splitContent(text).map((content) =>
        createMessage(ctx, {
          content,
          peerId,
          metadata,
          configuration,
          createdAt: typeof createdAt === "string" && createdAt !== ""
            ? createdAt
            : null,
        })
      );
      ctx.state.uploads.push({
        workspace_id: ws,
        session_id: sid,
        peer_id: peerId,
        filename: file.name,
        content_type: file.type,
        size: file.size,
        text,
        metadata,
        configuration,
        message_ids: created.map((m) => m.id),
      });
      return jsonResponse(201, created.map(messageView));
    },

  "POST /v3/workspaces/{workspace_id}/sessions/{session_id}/messages/list": (
    ctx,
  ) => {
    const ws = param(ctx, "workspace_id");
    const sid = param(ctx, "session_id");
    const { page, size, reverse } = pageQuery(ctx);
    let items = ctx.state.messages.filter((m) =>
      m.workspace_id === ws && m.session_id === sid
    );
    items = applyFilters(items, bodyObject(ctx).filters, MESSAGE_FILTERS);
    if (reverse) items = [...items].reverse();
    return jsonResponse(200, paginate(items.map(messageView), { page, size }));
  },

  "GET /v3/workspaces/{workspace_id}/sessions/{session_id}/messages/{message_id}":
    (ctx) => jsonResponse(200, messageView(findMessage(ctx))),

  "PUT /v3/workspaces/{workspace_id}/sessions/{session_id}/messages/{message_id}":
    (ctx) => {
      const message = findMessage(ctx);
      const metadata = bodyObject(ctx).metadata;
      if (metadata) message.metadata = metadata as Json;
      return jsonResponse(200, messageView(message));
    },
};
