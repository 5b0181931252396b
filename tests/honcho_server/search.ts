/**
 * Deterministic stand-in for Honcho's hybrid message search.
 *
 * @module
 */
import { applyFilters, MESSAGE_FILTERS } from "./filters.ts";
import type { HonchoTestState, MessageRecord } from "./store.ts";

const WORD_REGEXP = /[\p{L}\p{N}]+/gu;

function words(text: string): string[] {
  return text.toLowerCase().match(WORD_REGEXP) ?? [];
}

/**
 * Ranks messages by how many distinct query words they contain (a message
 * containing the whole query as a substring ranks first); ties keep
 * insertion order. Messages matching nothing are left out.
 *
 * @param messages Candidate messages, oldest first.
 * @param query Search text.
 * @param limit Maximum number of results.
 * @returns The best `limit` matches.
 */
export function searchMessages(
  messages: MessageRecord[],
  query: string,
  limit: number,
): MessageRecord[] {
  const needle = query.trim().toLowerCase();
  const queryWords = new Set(words(query));
  const scored = messages.map((message, index) => {
    const text = message.content.toLowerCase();
    const own = new Set(words(text));
    let score = [...queryWords].filter((w) => own.has(w)).length;
    if (needle && text.includes(needle)) score += queryWords.size + 1;
    return { message, index, score };
  }).filter((s) => s.score > 0);
  scored.sort((a, b) => b.score - a.score || a.index - b.index);
  return scored.slice(0, limit).map((s) => s.message);
}

/**
 * Applies a search route's `filters` to candidate messages. Besides the
 * message filter DSL, the search routes accept the special key
 * `peer_perspective`: only messages of sessions that peer is or was a member
 * of, created while it was a member.
 *
 * @param state The store.
 * @param messages Candidate messages (already limited to the route's scope).
 * @param filters The body's `filters`.
 * @returns The matching messages, in input order.
 * @throws {HonchoHttpError} 422 for malformed filters.
 */
export function filterSearchPool(
  state: HonchoTestState,
  messages: MessageRecord[],
  filters: unknown,
): MessageRecord[] {
  if (
    filters === null || typeof filters !== "object" || Array.isArray(filters)
  ) {
    return applyFilters(messages, filters, MESSAGE_FILTERS);
  }
  const { peer_perspective: perspective, ...rest } = filters as Record<
    string,
    unknown
  >;
  let pool = messages;
  if (perspective !== undefined) {
    const peerId = String(perspective);
    pool = pool.filter((m) =>
      state.sessionPeers.some((row) =>
        row.workspace_id === m.workspace_id &&
        row.session_id === m.session_id &&
        row.peer_id === peerId && m.created_at >= row.joined_at &&
        (row.left_at === null || m.created_at <= row.left_at)
      )
    );
  }
  return applyFilters(
    pool,
    Object.keys(rest).length > 0 ? rest : null,
    MESSAGE_FILTERS,
  );
}
