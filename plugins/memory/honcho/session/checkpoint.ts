/**
 * Pre-compress checkpoints (src/context/SPEC.md §5, API v2). Every message carries a content digest
 * (`hermes_digest`) and chunk number (`hermes_chunk`); a checkpoint adds only the occurrences
 * Honcho lacks, so a retry or a grown transcript never stores a message twice.
 * @module
 */

import {
  type ChatMessage,
  normalizePreCompressEvidence,
} from "../../../../src/provider/mod.ts";
import type { HonchoClient } from "../client/client.ts";
import type { JsonObject } from "../client/wire.ts";
import { sanitizeContext } from "../../../../src/provider/mod.ts";
import { isRecord, sha256Hex } from "../_util.ts";

/** The metadata key holding a message's content digest. */
export const DIGEST_METADATA_KEY = "hermes_digest";
/** The metadata key holding a message's chunk number (0 for the first). */
export const CHUNK_METADATA_KEY = "hermes_chunk";
/** The metadata key holding the Hermes role (`user` or `assistant`). */
export const ROLE_METADATA_KEY = "hermes_role";

export interface EvidenceItem {
  role: "user" | "assistant";
  /** The text as stored (fences removed, trimmed). */
  text: string;
  /** {@linkcode turnDigest} of role and text. */
  digest: string;
}

/** A string as is; of content parts, the text parts joined by newlines (images are never sent). */
export function messageText(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content.flatMap((part) => {
    if (typeof part === "string") return [part];
    const text =
      isRecord(part) && (part.type === undefined || part.type === "text")
        ? part.text
        : undefined;
    return typeof text === "string" ? [text] : [];
  }).join("\n");
}

/** Memory-context fences removed, then trimmed. */
export function storedText(text: string): string {
  return sanitizeContext(text).trim();
}

/** SHA-256 (hex) of the role, a NUL and the stored text. */
export function turnDigest(role: string, text: string): string {
  return sha256Hex(role, "\u0000", text);
}

/** User and assistant prose only (the framework's evidence normalization), empty ones skipped. */
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

/** Per digest, the occurrences beyond the count Honcho already holds. */
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

const DIGESTS_PER_QUERY = 40;

/** Stored copies per digest (first chunks), one list request per 40 digests. */
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
