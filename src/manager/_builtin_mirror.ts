// Which operations of a built-in `memory` tool call are mirrored to the
// external provider, and how.

import type {
  MemoryTarget,
  MemoryWriteAction,
  MemoryWriteMetadata,
} from "../core/memory_provider.ts";
import { isRecord } from "../_util/is_record.ts";

/** One operation to mirror: an `onMemoryWrite`, or an `onMemoryEvict` when `evictionReason` is set. */
export interface MirroredOperation {
  action: MemoryWriteAction;
  content: string;
  oldText?: string;
  previousContent?: string;
  evictionReason?: string;
}

const MIRRORED_ACTIONS = new Set(["add", "replace", "remove"]);
const EVICTED_ACTIONS = new Set(["add", "replace"]);

/**
 * The operations of a committed (not staged) result, or of a terminal
 * failure's `add`/`replace` operations; `previous_content` only ever comes
 * from the committed result, never from the model's arguments.
 */
export function mirroredOperations(
  result: unknown,
  args: Record<string, unknown>,
): { target: MemoryTarget; ops: MirroredOperation[] } {
  const none = { target: "memory" as MemoryTarget, ops: [] };
  let parsed: unknown = result;
  if (typeof result === "string") {
    try {
      parsed = JSON.parse(result);
    } catch {
      return none;
    }
  }
  if (!isRecord(parsed) || !isRecord(args)) return none;
  const outcome = parsed;
  const target = String(args.target || "memory") as MemoryTarget;
  const operations = args.operations;
  const batched = Array.isArray(operations) && operations.length > 0;
  const committed = outcome.success === true && outcome.staged !== true;
  const reason = outcome.success === false && outcome.done === true &&
      typeof outcome.error === "string" && outcome.error !== ""
    ? outcome.error
    : undefined;
  if (!committed && reason === undefined) return none;
  const wanted = committed ? MIRRORED_ACTIONS : EVICTED_ACTIONS;
  const ops: MirroredOperation[] = [];
  (batched ? operations : [args]).forEach((op: unknown, i: number) => {
    if (!isRecord(op)) return;
    const action = String(op.action ?? "");
    if (!wanted.has(action)) return;
    const mirrored: MirroredOperation = {
      action: action as MemoryWriteAction,
      content: String(op.content || op.new_text || ""),
    };
    if (op.old_text) mirrored.oldText = String(op.old_text);
    if (reason !== undefined) {
      mirrored.evictionReason = reason;
    } else if (action !== "add") {
      const field = action === "replace" ? "replaced" : "removed";
      const entries = outcome[`${field}_entries`];
      const previous = batched
        ? isRecord(entries) ? entries[String(i + 1)] : undefined
        : outcome[`${field}_entry`];
      if (typeof previous === "string" && previous !== "") {
        mirrored.previousContent = previous;
      }
    }
    ops.push(mirrored);
  });
  return { target, ops };
}

/** The metadata of one mirrored operation: the host's provenance plus what the operation carries. */
export function mirrorMetadata(
  op: MirroredOperation,
  provenance: MemoryWriteMetadata | undefined,
): MemoryWriteMetadata {
  const metadata: MemoryWriteMetadata = { ...(provenance ?? {}) };
  delete metadata.previous_content;
  if (op.oldText !== undefined) metadata.old_text = op.oldText;
  if (op.evictionReason !== undefined) {
    metadata.eviction_reason = op.evictionReason;
  } else if (op.previousContent !== undefined) {
    metadata.previous_content = op.previousContent;
  }
  return metadata;
}
