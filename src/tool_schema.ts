/**
 * Tool-schema plumbing shared by the memory manager: normalizing the shapes
 * providers return, the reserved core tool names, and the `{"error": …}` JSON
 * result every failed tool call produces.
 *
 * @module
 */

import type { ToolSchema } from "./memory_provider.ts";

/**
 * Tool names that belong to the host agent. A memory provider's tool with one
 * of these names is never routed: the built-in tool always wins. The set is
 * the union of the core tool lists Hermes has shipped (older and newer names).
 */
export const RESERVED_CORE_TOOL_NAMES: ReadonlySet<string> = new Set([
  "web_search",
  "web_extract",
  "terminal",
  "process",
  "process_manage",
  "read_file",
  "write_file",
  "patch",
  "search_files",
  "vision_analyze",
  "image_generate",
  "mixture_of_agents",
  "skills_list",
  "skill_view",
  "skill_manage",
  "browser_navigate",
  "browser_snapshot",
  "browser_click",
  "browser_type",
  "browser_scroll",
  "browser_back",
  "browser_press",
  "browser_close",
  "browser_get_images",
  "browser_vision",
  "browser_console",
  "browser_cdp",
  "browser_dialog",
  "browser_exec",
  "text_to_speech",
  "todo",
  "todo_list",
  "memory",
  "session_search",
  "clarify",
  "execute_code",
  "delegate_task",
  "cronjob",
  "cronjob_manage",
  "send_message",
  "ha_list_entities",
  "ha_get_state",
  "ha_list_services",
  "ha_call_service",
  "kanban_show",
  "kanban_list",
  "kanban_complete",
  "kanban_block",
  "kanban_request_review",
  "kanban_request_changes",
  "kanban_heartbeat",
  "kanban_comment",
  "kanban_create",
  "kanban_link",
  "kanban_unblock",
  "kanban_attach",
  "kanban_attach_url",
  "kanban_attachments",
  "computer_use",
]);

/**
 * Normalizes a tool schema a provider returned: the wrapped OpenAI form
 * `{"type": "function", "function": {…}}` is unwrapped, and the result must
 * carry a non-empty string `name`.
 *
 * @param schema Whatever the provider returned as one schema.
 * @returns The bare function schema (the same object, not a copy), or `null`
 * when it is not an object or has no usable name.
 *
 * @example Unwrapping the OpenAI form
 * ```ts
 * import { normalizeToolSchema } from "@hermes/memory";
 * import assert from "node:assert/strict";
 *
 * const bare = { name: "notes_search", parameters: { type: "object" } };
 * assert.equal(normalizeToolSchema({ type: "function", function: bare }), bare);
 * assert.equal(normalizeToolSchema({ description: "nameless" }), null);
 * ```
 */
export function normalizeToolSchema(schema: unknown): ToolSchema | null {
  if (!isRecord(schema)) return null;
  let bare: Record<string, unknown> = schema;
  if (schema.type === "function" && isRecord(schema.function)) {
    bare = schema.function;
  }
  const name = bare.name;
  return typeof name === "string" && name !== "" ? bare as ToolSchema : null;
}

/**
 * Builds the JSON string a failed tool call returns: `{"error": "<message>"}`
 * (spaced like Hermes' JSON output).
 *
 * @param message What went wrong, for the model.
 * @returns The JSON text.
 *
 * @example
 * ```ts
 * import { toolError } from "@hermes/memory";
 * import assert from "node:assert/strict";
 *
 * assert.deepEqual(JSON.parse(toolError("No memory provider handles tool 'x'")), {
 *   error: "No memory provider handles tool 'x'",
 * });
 * ```
 */
export function toolError(message: string): string {
  return `{"error": ${JSON.stringify(String(message))}}`;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}
