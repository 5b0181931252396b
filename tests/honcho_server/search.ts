/**
 * Deterministic stand-in for Honcho's hybrid message search.
 *
 * @module
 */
import type { MessageRecord } from "./store.ts";

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
