/**
 * The injected base layer (plugins/memory/honcho/SPEC.md §7–§8): section
 * formatting, summary cleaning and the character caps.
 * @module
 */

import type { SessionStartSection } from "../config/_lookup.ts";

/** What one base-context fetch found; empty or missing values are skipped. */
export interface BaseContextData {
  /** Already cleaned. */
  summary?: string;
  /** The user peer's representation and card (one fact per line). */
  representation?: string;
  card?: string;
  aiRepresentation?: string;
  aiCard?: string;
}

/** The sections of the base layer in their fixed order: name, data key, header. */
export const BASE_CONTEXT_SECTIONS: readonly (readonly [
  SessionStartSection,
  keyof BaseContextData,
  string,
])[] = Object.freeze(
  [
    ["summary", "summary", "Session Summary"],
    ["peerRepresentation", "representation", "User Representation"],
    ["peerCard", "card", "User Peer Card"],
    ["aiRepresentation", "aiRepresentation", "AI Self-Representation"],
    ["aiCard", "aiCard", "AI Identity Card"],
  ] as const,
);

/** Appended to text cut by a cap. */
export const TRUNCATION_MARKER = " \u2026";

/** `## <Header>\n<value>` per non-empty section (only `sections` when given). */
export function formatBaseContext(
  data: BaseContextData,
  sections?: readonly SessionStartSection[],
): string {
  const parts: string[] = [];
  for (const [name, key, header] of BASE_CONTEXT_SECTIONS) {
    if (sections && !sections.includes(name)) continue;
    const value = data[key]?.trim();
    if (value) parts.push(`## ${header}\n${value}`);
  }
  return parts.join("\n\n");
}

/** At most `tokens × 4` characters, cut back to a space past 80 % of the budget; no budget when ≤ 0. */
export function applyTokenBudget(
  text: string,
  tokens: number | undefined,
): string {
  if (tokens === undefined || !(tokens > 0)) return text;
  const budget = Math.floor(tokens * 4);
  if (text.length <= budget) return text;
  let cut = safeSlice(text, budget);
  const space = cut.lastIndexOf(" ");
  if (space > 0.8 * budget) cut = cut.slice(0, space);
  return `${cut.trimEnd()}${TRUNCATION_MARKER}`;
}

/** Caps a dialectic result at `maxChars`, cut back to the last space, plus the marker. */
export function capDialecticResult(text: string, maxChars: number): string {
  if (!(maxChars > 0) || text.length <= maxChars) return text;
  return `${capDialecticInput(text, maxChars)}${TRUNCATION_MARKER}`;
}

/** Caps a dialectic query at `maxChars`, cut back to the last space. */
export function capDialecticInput(query: string, maxChars: number): string {
  if (!(maxChars > 0) || query.length <= maxChars) return query;
  const cut = safeSlice(query, maxChars);
  const space = cut.lastIndexOf(" ");
  return (space > 0 ? cut.slice(0, space) : cut).trimEnd();
}

const THINK_BLOCK_REGEXP =
  /<\s*(think|thinking|reasoning|thought|reasoning_scratchpad)\b[^>]*>[\s\S]*?<\s*\/\s*\1\s*>/gi;
const THINK_TAG_REGEXP =
  /<\s*\/?\s*(think|thinking|reasoning|thought|reasoning_scratchpad)\b[^>]*>/i;
const THINK_CLOSE_REGEXP = /<\s*\/\s*think\s*>/gi;
const PLANNING_OPENERS: readonly string[] = Object.freeze([
  "let me ",
  "i need to ",
  "i will ",
  "i'll ",
  "i should ",
  "okay, so",
  "ok, so",
  "first, i",
  "the user wants",
  "we need to ",
  "to summarize this conversation, i",
]);

/** A summary without thinking blocks; `""` when one remains or it opens like planning (plugins/memory/honcho/SPEC.md §7). */
export function cleanHonchoSummary(summary: string | null | undefined): string {
  if (typeof summary !== "string") return "";
  let text = summary;
  let lastClose = -1;
  for (const match of text.matchAll(THINK_CLOSE_REGEXP)) {
    lastClose = match.index + match[0].length;
  }
  if (lastClose >= 0) text = text.slice(lastClose);
  text = text.replace(THINK_BLOCK_REGEXP, "").trim();
  if (text === "" || THINK_TAG_REGEXP.test(text)) return "";
  const lower = text.toLowerCase();
  if (PLANNING_OPENERS.some((opener) => lower.startsWith(opener))) return "";
  return text;
}

/** Slices without splitting a surrogate pair. */
function safeSlice(text: string, end: number): string {
  const code = text.charCodeAt(end - 1);
  return text.slice(0, code >= 0xd800 && code <= 0xdbff ? end - 1 : end);
}
