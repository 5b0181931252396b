/**
 * The `memory` tool of the built-in store: its schema (which narrows itself
 * when only one target is enabled) and its handler, which validates the
 * model's arguments in Hermes' order and returns Hermes' JSON result string.
 *
 * The tool is a host core tool: the agent offers the schema and routes calls
 * to {@linkcode handleMemoryToolCall} with its own per-session
 * {@linkcode MemoryStore}; no provider registers it.
 *
 * @module
 */

import type { MemoryTarget, ToolSchema } from "./memory_provider.ts";
import { formatShortUsage } from "./memory_format.ts";
import type { MemoryResult, MemoryStore } from "./memory_store.ts";
import { pythonJsonDumps } from "./python_json.ts";

/** The tool's name. */
export const MEMORY_TOOL_NAME = "memory";

/** Options of {@linkcode memoryToolSchema}. */
export interface MemoryToolSchemaOptions {
  /**
   * Whether `MEMORY.md` (target `memory`) is enabled.
   *
   * @default {true}
   */
  memoryEnabled?: boolean;
  /**
   * Whether `USER.md` (target `user`) is enabled.
   *
   * @default {true}
   */
  userProfileEnabled?: boolean;
}

const ACTIONS = ["add", "replace", "remove"];

const INTRO =
  "Save durable facts to persistent memory that survives across sessions. Saved entries are " +
  "injected into the system prompt of every future session, so keep each one compact and " +
  "worth its space.\n\n" +
  "WHEN TO SAVE (proactively, without being asked): the user states a preference or corrects " +
  "you, shares personal details (name, role, timezone, communication style), or you learn a " +
  "stable fact about the environment (OS, installed tools, project conventions, API quirks) " +
  "that applies to every session regardless of the current task. Priority: preferences and " +
  "corrections > environment facts > procedures. Task-specific knowledge and reusable " +
  "procedures belong in skills, not in memory.\n\n" +
  "HOW: prefer ONE call with an 'operations' batch for several changes; the budget is checked " +
  "only on the final result, and the response confirms the write is complete, so never repeat " +
  "it. For 'replace', content is the COMPLETE new entry: the whole entry matched by old_text " +
  "is overwritten. When memory is full an add is rejected and the current entries are shown: " +
  "reissue it as one batch that removes or shortens entries and adds the new one.\n\n";

const TARGETS_BOTH =
  "TARGETS: 'user' = who the user is (name, role, preferences, communication style); " +
  "'memory' = your own notes (environment facts, project conventions, tool quirks, lessons " +
  "learned).\n\n";
const TARGET_MEMORY_ONLY =
  "TARGET: only 'memory' is enabled = your own notes (environment facts, project conventions, " +
  "tool quirks, lessons learned).\n\n";
const TARGET_USER_ONLY =
  "TARGET: only 'user' is enabled = who the user is (name, role, preferences, communication " +
  "style); save facts about the user with target='user'.\n\n";

const OUTRO =
  "SKIP: trivia, facts that are easy to re-discover, raw data dumps, task progress, logs and " +
  "TODO state (use session_search to recall past work).";

/**
 * The JSON schema of the `memory` tool. When only one target is enabled the
 * `target` enum lists only that target and the description names it; when
 * both are disabled the tool is not offered (`null`).
 *
 * @param options Which targets are enabled.
 * @returns The tool schema, or `null` when no target is enabled.
 *
 * @example
 * ```ts
 * import { memoryToolSchema } from "@hermes/memory";
 * import assert from "node:assert/strict";
 * const schema = memoryToolSchema({ memoryEnabled: false });
 * const target = (schema?.parameters?.properties as Record<string, { enum: string[] }>).target;
 * assert.deepEqual(target.enum, ["user"]);
 * assert.equal(memoryToolSchema({ memoryEnabled: false, userProfileEnabled: false }), null);
 * ```
 */
export function memoryToolSchema(
  options: MemoryToolSchemaOptions = {},
): ToolSchema | null {
  const memory = options.memoryEnabled ?? true;
  const user = options.userProfileEnabled ?? true;
  if (!memory && !user) return null;
  const targets: MemoryTarget[] = memory && user
    ? ["memory", "user"]
    : memory
    ? ["memory"]
    : ["user"];
  const targetDescription = memory && user
    ? "Which store: 'memory' for your personal notes, 'user' for the user profile."
    : memory
    ? "The enabled built-in store: 'memory' for personal notes."
    : "The enabled built-in store: 'user' for the user profile.";
  const targetSentence = memory && user
    ? TARGETS_BOTH
    : memory
    ? TARGET_MEMORY_ONLY
    : TARGET_USER_ONLY;
  return {
    name: MEMORY_TOOL_NAME,
    description: INTRO + targetSentence + OUTRO,
    parameters: {
      type: "object",
      properties: {
        action: {
          type: "string",
          enum: [...ACTIONS],
          description:
            "The action to perform (single-op shape; omit when using operations).",
        },
        target: {
          type: "string",
          enum: targets,
          description: targetDescription,
        },
        content: {
          type: "string",
          description:
            "The entry text for 'add'. For 'replace', the COMPLETE new entry: the whole matched entry is overwritten.",
        },
        new_text: {
          type: "string",
          description: "Alias of content; content wins when both are given.",
        },
        old_text: {
          type: "string",
          description:
            "A short unique substring (or the exact text) of the existing entry to replace or remove.",
        },
        operations: {
          type: "array",
          description:
            "Several changes applied atomically in order, each seeing the previous ones; the budget is checked only on the final result.",
          items: {
            type: "object",
            properties: {
              action: { type: "string", enum: [...ACTIONS] },
              content: { type: "string" },
              new_text: { type: "string" },
              old_text: { type: "string" },
            },
            required: ["action"],
          },
        },
      },
      required: ["target"],
    },
  };
}

/**
 * Runs one call of the `memory` tool against a store and returns the JSON
 * result string, byte-identical to Hermes (Python `json.dumps` formatting,
 * Hermes' key order). Checks, in order: store present, target valid, target
 * enabled, batch (`operations`) or single-op argument validation, then the
 * store operation. Never throws: a write failure becomes an error result.
 *
 * @param store The session's store, or `null` when memory is unavailable.
 * @param args The model's arguments (`action`, `target`, `content`,
 * `new_text`, `old_text`, `operations`).
 * @returns The JSON result.
 *
 * @example
 * ```ts
 * import { handleMemoryToolCall, MemoryStore } from "@hermes/memory";
 * import assert from "node:assert/strict";
 * const home = await Deno.makeTempDir();
 * const store = new MemoryStore({ hermesHome: home });
 * await store.loadFromDisk();
 * const out = await handleMemoryToolCall(store, { action: "add", target: "user", content: "Name: Ada" });
 * assert.equal(
 *   out,
 *   '{"success": true, "done": true, "target": "user", "usage": "0% — 9/1,375 chars", "entry_count": 1, ' +
 *     '"message": "Entry added.", "note": "Write saved. This update is complete — do not repeat it."}',
 * );
 * await Deno.remove(home, { recursive: true });
 * ```
 */
export async function handleMemoryToolCall(
  store: MemoryStore | null | undefined,
  args: Record<string, unknown> | null | undefined,
): Promise<string> {
  try {
    return pythonJsonDumps(await runMemoryTool(store, args ?? {}));
  } catch (error) {
    return toolError(error instanceof Error ? error.message : String(error));
  }
}

async function runMemoryTool(
  store: MemoryStore | null | undefined,
  args: Record<string, unknown>,
): Promise<MemoryResult> {
  if (!store) {
    return errorFirst(
      "Memory is not available. It may be disabled in config or this environment.",
    );
  }
  const rawTarget = args.target ?? "memory";
  if (rawTarget !== "memory" && rawTarget !== "user") {
    return errorFirst(
      `Invalid target '${argText(rawTarget)}'. Use 'memory' or 'user'.`,
    );
  }
  const target: MemoryTarget = rawTarget;
  if (!store.isTargetEnabled(target)) {
    return {
      success: false,
      error: `Built-in ${
        target === "user" ? "USER.md" : "MEMORY.md"
      } writes are disabled in memory config.`,
      target,
    };
  }

  if (truthy(args.operations)) {
    if (!Array.isArray(args.operations)) {
      return errorFirst(
        "operations must be a list of {action, content?, old_text?} objects.",
      );
    }
    return await store.applyOperations(target, args.operations);
  }

  const action = argText(args.action);
  const content = truthy(args.content) ? args.content : args.new_text;
  const oldText = args.old_text;
  if (action === "add" && !truthy(content)) {
    return errorFirst("Content is required for 'add' action.");
  }
  if ((action === "replace" || action === "remove") && !truthy(oldText)) {
    const replaceNote = action === "replace"
      ? " For 'replace', content is the COMPLETE new entry -- the whole matched entry is overwritten, not just the old_text span."
      : "";
    return {
      success: false,
      error:
        `'${action}' needs old_text -- a short unique substring of the entry to ${action}. None was provided. Reissue the ${action} with old_text set to part of one of the current_entries below.${replaceNote}`,
      current_entries: store.sanitizedEntries(target),
      usage: formatShortUsage(store.size(target), store.charLimit(target)),
    };
  }
  if (action === "replace" && !truthy(content)) {
    return errorFirst("content is required for 'replace' action.");
  }
  switch (action) {
    case "add":
      return await store.add(target, argText(content));
    case "replace":
      return await store.replace(target, argText(oldText), argText(content));
    case "remove":
      return await store.remove(target, argText(oldText));
    default:
      return errorFirst(
        `Unknown action '${action}'. Use: add, replace, remove`,
      );
  }
}

function errorFirst(message: string): MemoryResult {
  return { error: message, success: false };
}

function toolError(message: string): string {
  return pythonJsonDumps(errorFirst(message));
}

// A tool argument as text: strings as they are, null/undefined as "", other
// values in their JSON form.
function argText(value: unknown): string {
  if (typeof value === "string") return value;
  if (value === null || value === undefined) return "";
  if (typeof value === "number" || typeof value === "boolean") {
    return String(value);
  }
  try {
    return JSON.stringify(value) ?? "";
  } catch {
    return String(value);
  }
}

// Python truthiness of a JSON value.
function truthy(value: unknown): boolean {
  if (value === null || value === undefined || value === false) return false;
  if (typeof value === "number") return value !== 0;
  if (typeof value === "string") return value.length > 0;
  if (Array.isArray(value)) return value.length > 0;
  if (typeof value === "object") return Object.keys(value).length > 0;
  return true;
}
