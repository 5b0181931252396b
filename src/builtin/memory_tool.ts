// The built-in `memory` tool (a host core tool): its schema, narrowed when a
// target is disabled, and its handler, checking and answering as Hermes does.

import { join } from "../_util/path.ts";
import { atomicWriteText } from "../io/atomic_write.ts";
import { getHermesHome } from "../profile/hermes_home.ts";
import type { MemoryTarget, ToolSchema } from "../core/memory_provider.ts";
import {
  formatShortUsage,
  previewEntry,
  pythonStrip,
} from "./memory_format.ts";
import {
  disabledResult,
  type MemoryResult,
  type MemoryStore,
} from "./memory_store.ts";
import { notAStringResult } from "./_memory_batch.ts";
import { pythonJsonDumps, pythonStr } from "../_util/python_json.ts";
import { errorText } from "../_util/error_text.ts";
import { pythonTruthy } from "../_util/python_values.ts";

export const MEMORY_TOOL_NAME = "memory";

/** Which targets are enabled (default `true`). */
interface MemoryToolSchemaOptions {
  memoryEnabled?: boolean;
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
 * Where a staged write came from.
 *
 * @category Built-in store
 */
export type MemoryWriteOrigin = "foreground" | "background_review";

/**
 * Options of {@linkcode handleMemoryToolCall}.
 *
 * @category Built-in store
 */
export interface MemoryToolCallOptions {
  /**
   * Asks the user to approve a write inline when `memory.write_approval` is
   * on (e.g. a CLI prompt "Save to memory: <summary>"); resolving `false`
   * denies it. Without it, writes are staged under
   * `$HERMES_HOME/pending/memory/` for later review.
   */
  approve?: (summary: string) => boolean | Promise<boolean>;
  /** Recorded in a staged write's record (default `"foreground"`). */
  origin?: MemoryWriteOrigin;
  /** Skips the approval gate: replaying a write the user approved (default `false`). */
  bypassApproval?: boolean;
}

/**
 * A write staged for approval, as stored in
 * `$HERMES_HOME/pending/memory/<id>.json` (keys as Hermes has them).
 *
 * @category Built-in store
 */
export interface PendingMemoryWrite {
  /** Eight hex digits. */
  id: string;
  /** Always `"memory"`. */
  subsystem: string;
  /** `add`, `replace`, `remove` or `batch`. */
  action: string;
  /** A short human summary, e.g. `add to user profile: Name: Ada`. */
  summary: string;
  /** Where the write came from. */
  origin: MemoryWriteOrigin;
  /** When it was staged, in seconds since the epoch. */
  created_at: number;
  /** The exact `memory` tool arguments. */
  payload: Record<string, unknown>;
  /** A replace/remove's entry when staged; approval is refused if it changed since. */
  matched_entry?: string;
}

const STAGED_MESSAGE =
  "Staged for approval (memory.write_approval is on). Not yet saved \u2014 review with /memory pending.";

/** The directory holding staged memory writes: `<home>/pending/memory`. */
export function pendingMemoryDir(hermesHome?: string): string {
  return join(hermesHome ?? getHermesHome(), "pending", "memory");
}

/** A short summary of a `memory` tool call for approval, e.g. `add to memory: …`. */
export function summarizeMemoryWrite(args: Record<string, unknown>): string {
  const label = args.target === "user" ? "user profile" : "memory";
  if (Array.isArray(args.operations) && args.operations.length > 0) {
    return `apply ${args.operations.length} op(s) to ${label}`;
  }
  const action = argText(args.action);
  const content = previewEntry(
    pythonStrip(argText(args.content)),
  );
  const old = previewEntry(pythonStrip(argText(args.old_text)));
  if (action === "add") return `add to ${label}: ${content}`;
  if (action === "replace") {
    return `replace in ${label}: '${old}' -> ${content}`;
  }
  if (action === "remove") return `remove from ${label}: '${old}'`;
  return `${action} ${label}`;
}

/**
 * Runs one call of the `memory` tool against a store and returns the JSON
 * result string, byte-identical to Hermes (checks in Hermes' order). Never
 * throws: a write failure becomes an error result.
 */
export async function handleMemoryToolCall(
  store: MemoryStore | null | undefined,
  args: Record<string, unknown> | null | undefined,
  options: MemoryToolCallOptions = {},
): Promise<string> {
  try {
    return pythonJsonDumps(await runMemoryTool(store, args ?? {}, options));
  } catch (error) {
    return toolError(errorText(error));
  }
}

async function runMemoryTool(
  store: MemoryStore | null | undefined,
  args: Record<string, unknown>,
  options: MemoryToolCallOptions,
): Promise<MemoryResult> {
  if (!store) {
    return errorFirst(
      "Memory is not available. It may be disabled in config or this environment.",
    );
  }
  // Hermes 0.19.0 treats `target: null` as omitted.
  const rawTarget = args.target ?? "memory";
  if (rawTarget !== null && typeof rawTarget === "object") {
    return notAStringResult("target", rawTarget);
  }
  if (rawTarget !== "memory" && rawTarget !== "user") {
    return errorFirst(
      `Invalid target '${pythonStr(rawTarget)}'. Use 'memory' or 'user'.`,
    );
  }
  const target: MemoryTarget = rawTarget;
  if (!store.isTargetEnabled(target)) return disabledResult(target);

  if (pythonTruthy(args.operations)) {
    if (!Array.isArray(args.operations)) {
      return errorFirst(
        "operations must be a list of {action, content?, old_text?} objects.",
      );
    }
    const gated = await approvalGate(store, target, "batch", args, options);
    if (gated !== null) return gated;
    return await store.applyOperations(target, args.operations);
  }

  const action = "action" in args ? args.action : "";
  const content = args.content;
  const oldText = args.old_text;
  if (action === "add" && !pythonTruthy(content)) {
    return errorFirst("Content is required for 'add' action.");
  }
  if (
    action === "replace" && (!pythonTruthy(oldText) || !pythonTruthy(content))
  ) {
    if (!pythonTruthy(oldText)) return missingOldText(store, target, "replace");
    return errorFirst("content is required for 'replace' action.");
  }
  if (action === "remove" && !pythonTruthy(oldText)) {
    return missingOldText(store, target, "remove");
  }
  if (action !== null && typeof action === "object") {
    return notAStringResult("action", action);
  }
  // Where Hermes would call .strip() on a non-string (and crash), refuse.
  if (
    (action === "replace" || action === "remove") && typeof oldText !== "string"
  ) {
    return notAStringResult("old_text", oldText);
  }
  if (
    (action === "add" || action === "replace") && typeof content !== "string"
  ) {
    return notAStringResult("content", content);
  }
  if (action === "add" || action === "replace" || action === "remove") {
    const gated = await approvalGate(store, target, action, args, options);
    if (gated !== null) return gated;
  }
  switch (action) {
    case "add":
      return await store.add(target, content as string);
    case "replace":
      return await store.replace(target, oldText as string, content as string);
    case "remove":
      return await store.remove(target, oldText as string);
    default:
      return errorFirst(
        `Unknown action '${pythonStr(action)}'. Use: add, replace, remove`,
      );
  }
}

// A replace/remove without old_text: the current entries (as of the last
// load or write, poisoned ones masked) and a retry instruction.
function missingOldText(
  store: MemoryStore,
  target: MemoryTarget,
  action: "replace" | "remove",
): MemoryResult {
  return {
    success: false,
    error:
      `'${action}' needs old_text -- a short unique substring of the entry to ${action}. None was provided. Reissue the ${action} with old_text set to part of one of the current_entries below.`,
    current_entries: store.sanitizedEntries(target),
    usage: formatShortUsage(store.size(target), store.charLimit(target)),
  };
}

// Returns null when the write may proceed, else the denial or staged result.
async function approvalGate(
  store: MemoryStore,
  target: MemoryTarget,
  action: string,
  args: Record<string, unknown>,
  options: MemoryToolCallOptions,
): Promise<MemoryResult | null> {
  if (options.bypassApproval === true || !store.writeApproval) return null;
  const summary = summarizeMemoryWrite(args);
  if (options.approve) {
    let approved = false;
    try {
      approved = await options.approve(summary);
    } catch {
      approved = false;
    }
    return approved
      ? null
      : errorFirst("Memory write denied by user. The change was not saved.");
  }
  const record: PendingMemoryWrite = {
    id: crypto.randomUUID().replaceAll("-", "").slice(0, 8),
    subsystem: "memory",
    action,
    summary,
    origin: options.origin ?? "foreground",
    created_at: Date.now() / 1000,
    payload: structuredClone(args),
  };
  if (action === "replace" || action === "remove") {
    const matched = await resolveEntry(store, target, argText(args.old_text));
    if (matched !== undefined) record.matched_entry = matched;
  }
  const dir = pendingMemoryDir(store.hermesHome());
  await Deno.mkdir(dir, { recursive: true });
  await atomicWriteText(
    join(dir, `${record.id}.json`),
    `${JSON.stringify(record, null, 2)}\n`,
    { mode: 0o600 },
  );
  return {
    success: true,
    staged: true,
    pending_id: record.id,
    message: STAGED_MESSAGE,
  };
}

// The one entry old_text selects on disk now (a substring with a single
// distinct match, as the store selects it), if any.
async function resolveEntry(
  store: MemoryStore,
  target: MemoryTarget,
  oldText: string,
): Promise<string | undefined> {
  const old = pythonStrip(oldText);
  const entries = await store.readDiskEntries(target);
  if (entries === null || old === "") return undefined;
  const matches = new Set(entries.filter((e) => e.includes(old)));
  return matches.size === 1 ? [...matches][0] : undefined;
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
