/**
 * Pre-compress checkpoints (src/context/SPEC.md §5, API version 2): the
 * evidence of a transcript (user and assistant prose, never tool calls or
 * tool results) must be stored in Honcho before the host compresses it.
 *
 * Every message the provider writes carries a content digest in its
 * metadata (`hermes_digest`, the SHA-256 of role and stored text, and
 * `hermes_chunk`, the chunk number). A checkpoint counts, per digest, how
 * many copies Honcho already holds and adds only the missing occurrences,
 * so a retried checkpoint or a transcript that grew since the last one
 * never stores a message twice.
 *
 * @module
 */

import { createHash } from "node:crypto";
import {
  type ChatMessage,
  normalizePreCompressEvidence,
} from "../../../src/provider/mod.ts";
import type { HonchoClient, JsonObject } from "./client.ts";
import { sanitizeContext } from "../../../src/provider/mod.ts";

/** The metadata key holding a message's content digest. */
export const DIGEST_METADATA_KEY = "hermes_digest";
/** The metadata key holding a message's chunk number (0 for the first). */
export const CHUNK_METADATA_KEY = "hermes_chunk";
/** The metadata key holding the Hermes role (`user` or `assistant`). */
export const ROLE_METADATA_KEY = "hermes_role";

/** One message of checkpoint evidence. */
export interface EvidenceItem {
  /** `user` or `assistant`. */
  role: "user" | "assistant";
  /** The text as stored (fences removed, trimmed). */
  text: string;
  /** {@linkcode turnDigest} of role and text. */
  digest: string;
}

/**
 * The text of a message's content: a string as is; for content parts, the
 * `text` of each text part joined by newlines (images and other parts are
 * never sent).
 *
 * @param content The `content` of a chat message.
 * @returns The text, `""` when there is none.
 *
 * @example Keeping only text parts
 * ```ts
 * import { messageText } from "./checkpoint.ts";
 * import assert from "node:assert/strict";
 * assert.equal(messageText([{ type: "text", text: "a" }, { type: "image_url" }, { type: "text", text: "b" }]), "a\nb");
 * ```
 */
export function messageText(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content.flatMap((part) => {
    if (typeof part === "string") return [part];
    if (
      part && typeof part === "object" &&
      typeof (part as { text?: unknown }).text === "string" &&
      ((part as { type?: unknown }).type === undefined ||
        (part as { type?: unknown }).type === "text")
    ) return [(part as { text: string }).text];
    return [];
  }).join("\n");
}

/**
 * The text the provider stores for a message: memory-context fences
 * removed, then trimmed.
 *
 * @param text The raw text.
 * @returns The stored text.
 *
 * @example Removing a fence
 * ```ts
 * import { storedText } from "./checkpoint.ts";
 * import assert from "node:assert/strict";
 * assert.equal(storedText(" hi <memory-context>x</memory-context> "), "hi");
 * ```
 */
export function storedText(text: string): string {
  return sanitizeContext(text).trim();
}

/**
 * The content digest of a stored message: SHA-256 (hex) of the role, a NUL
 * and the stored text.
 *
 * @param role `user` or `assistant`.
 * @param text The stored text.
 * @returns 64 hex characters.
 *
 * @example Digests differ by role
 * ```ts
 * import { turnDigest } from "./checkpoint.ts";
 * import assert from "node:assert/strict";
 * assert.equal(turnDigest("user", "hi").length, 64);
 * assert.notEqual(turnDigest("user", "hi"), turnDigest("assistant", "hi"));
 * ```
 */
export function turnDigest(role: string, text: string): string {
  return createHash("sha256").update(role).update("\u0000").update(text)
    .digest("hex");
}

/**
 * Reduces a transcript to checkpoint evidence: the framework's evidence
 * normalization (user and assistant messages only; no compression
 * summaries; no tool calls, tool results or system messages), then the
 * stored text of each, skipping empty ones.
 *
 * @param messages The transcript or already-normalized evidence.
 * @returns The evidence in order.
 *
 * @example Dropping tool traffic
 * ```ts
 * import { evidenceItems } from "./checkpoint.ts";
 * import assert from "node:assert/strict";
 * const items = evidenceItems([
 *   { role: "user", content: "hi" },
 *   { role: "tool", content: "secret output" },
 *   { role: "assistant", content: "", tool_calls: [{}] },
 * ]);
 * assert.deepEqual(items.map((i) => i.text), ["hi"]);
 * ```
 */
export function evidenceItems(messages: readonly unknown[]): EvidenceItem[] {
  const out: EvidenceItem[] = [];
  for (const message of normalizePreCompressEvidence([...messages])) {
    const role = (message as ChatMessage).role;
    if (role !== "user" && role !== "assistant") continue;
    const text = storedText(messageText((message as ChatMessage).content));
    if (text === "") continue;
    out.push({ role, text, digest: turnDigest(role, text) });
  }
  return out;
}

/**
 * The evidence items Honcho does not hold yet: for each digest, the
 * occurrences beyond the count already stored.
 *
 * @param items The evidence, in order.
 * @param stored Stored copies per digest.
 * @returns The missing items, in order.
 *
 * @example A repeated message counts twice
 * ```ts
 * import { missingEvidence, turnDigest } from "./checkpoint.ts";
 * import assert from "node:assert/strict";
 * const ok = { role: "user" as const, text: "ok", digest: turnDigest("user", "ok") };
 * const missing = missingEvidence([ok, ok, ok], new Map([[ok.digest, 1]]));
 * assert.equal(missing.length, 2);
 * ```
 */
export function missingEvidence(
  items: readonly EvidenceItem[],
  stored: ReadonlyMap<string, number>,
): EvidenceItem[] {
  const seen = new Map<string, number>();
  const out: EvidenceItem[] = [];
  for (const item of items) {
    const n = (seen.get(item.digest) ?? 0) + 1;
    seen.set(item.digest, n);
    if (n > (stored.get(item.digest) ?? 0)) out.push(item);
  }
  return out;
}

/** Digests asked about per list request. */
const DIGESTS_PER_QUERY = 40;

/**
 * Counts, per digest, the messages of a session that carry it as the first
 * chunk (one filtered list request per 40 digests, 100 messages a page).
 *
 * @param client The client.
 * @param sessionId The Honcho session.
 * @param digests The digests to count.
 * @param signal Cancels the requests.
 * @returns Stored copies per digest (absent = none).
 */
export async function storedDigestCounts(
  client: HonchoClient,
  sessionId: string,
  digests: Iterable<string>,
  signal?: AbortSignal,
): Promise<Map<string, number>> {
  const unique = [...new Set(digests)];
  const counts = new Map<string, number>();
  for (let i = 0; i < unique.length; i += DIGESTS_PER_QUERY) {
    const group = unique.slice(i, i + DIGESTS_PER_QUERY);
    const filters: JsonObject = {
      OR: group.map((digest) => ({
        metadata: { [DIGEST_METADATA_KEY]: digest, [CHUNK_METADATA_KEY]: 0 },
      })),
    };
    const page = await client.listMessages(sessionId, {
      filters,
      size: 100,
      signal,
    });
    for await (const message of page) {
      const digest = message.metadata[DIGEST_METADATA_KEY];
      if (typeof digest === "string") {
        counts.set(digest, (counts.get(digest) ?? 0) + 1);
      }
    }
  }
  return counts;
}
