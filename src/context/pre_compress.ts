// Evidence normalization for the pre-compress checkpoint (API v2): the direct
// conversation reduced to what a checkpointing provider should store.

import type { ChatMessage } from "../core/memory_provider.ts";
import { pythonTruthy } from "../_util/python_values.ts";
import { isRecord } from "../_util/is_record.ts";

/**
 * The persistent marker key of a message that is itself a compression
 * summary; such messages are never checkpoint evidence.
 */
export const COMPRESSED_SUMMARY_MARKER = "_compressed_summary";

/**
 * Reduces a transcript to pre-compress checkpoint evidence: user and
 * assistant prose only, as shallow copies, the input never mutated
 * (src/context/SPEC.md §5). A non-array gives `[]`.
 *
 * @category Context safety
 */
export function normalizePreCompressEvidence(
  messages: readonly unknown[],
): ChatMessage[] {
  if (!Array.isArray(messages)) return [];
  const evidence: ChatMessage[] = [];
  for (const message of messages) {
    if (!isRecord(message)) continue;
    const role = message.role;
    if (role !== "user" && role !== "assistant") continue;
    if (pythonTruthy(message[COMPRESSED_SUMMARY_MARKER])) continue;
    const copy: ChatMessage = { ...message };
    if (role === "assistant" && Object.hasOwn(message, "tool_calls")) {
      if (pythonTruthy(message.tool_calls) && !hasProse(message.content)) {
        continue;
      }
      delete copy.tool_calls;
    }
    evidence.push(copy);
  }
  return evidence;
}

function hasProse(content: unknown): boolean {
  if (typeof content === "string") return content.trim() !== "";
  return pythonTruthy(content);
}
