/**
 * Deterministic stand-ins for Honcho's LLM-backed outputs: the dialectic
 * answer and the representation markdown built from stored conclusions.
 *
 * @module
 */
import type {
  ConclusionRecord,
  HonchoTestState,
  MessageRecord,
} from "./store.ts";

/** Everything the dialectic answer may depend on. */
export interface DialecticRequest {
  /** Workspace id. */
  workspaceId: string;
  /** The peer asked (the observer). */
  peerId: string;
  /** The peer asked about (`target`, or the peer itself). */
  targetId: string;
  /** The question. */
  query: string;
  /** Session the question is scoped to, if any. */
  sessionId: string | null;
  /** Requested reasoning level (default `low`). */
  reasoningLevel: string;
  /** Whether the client asked for SSE. */
  stream: boolean;
  /** Messages in scope (authored by the target; session-limited when scoped), oldest first. */
  messages: MessageRecord[];
  /** Conclusions the observer holds about the target, newest first. */
  conclusions: ConclusionRecord[];
  /** The observer's card about the target, or null. */
  peerCard: string[] | null;
  /** JSON Schema sent as `response_format`, or null. */
  responseFormat: Record<string, unknown> | null;
}

/** Produces the dialectic `content`; `null` means "no answer". */
export type DialecticAnswer = (request: DialecticRequest) => string | null;

const WORD_REGEXP = /[\p{L}\p{N}]{3,}/gu;

function words(text: string): Set<string> {
  return new Set(text.toLowerCase().match(WORD_REGEXP) ?? []);
}

/**
 * Default dialectic answer: a fixed header naming observer, target, level
 * and query, followed by the card lines, conclusions and messages that share
 * a word of three or more letters with the query (at most five of each), or
 * a fixed "nothing known" line. Same inputs always give the same text. With
 * a `response_format` the answer is `"{}"`, like the real server's test mock.
 *
 * @param request The request.
 * @returns The answer text.
 */
export function defaultDialecticAnswer(request: DialecticRequest): string {
  if (request.responseFormat) return "{}";
  const queryWords = words(request.query);
  const relevant = (text: string): boolean =>
    [...words(text)].some((w) => queryWords.has(w));
  const facts: string[] = [];
  for (const line of (request.peerCard ?? []).filter(relevant).slice(0, 5)) {
    facts.push(`- card: ${line}`);
  }
  for (
    const c of request.conclusions.filter((c) => relevant(c.content)).slice(
      0,
      5,
    )
  ) {
    facts.push(`- conclusion: ${c.content}`);
  }
  for (
    const m of request.messages.filter((m) => relevant(m.content)).slice(-5)
  ) {
    facts.push(`- message: ${m.content}`);
  }
  const header =
    `[honcho-test dialectic] ${request.peerId} on ${request.targetId} (${request.reasoningLevel}): ${request.query}`;
  if (facts.length === 0) {
    return `${header}\nNothing relevant is known about ${request.targetId}.`;
  }
  return `${header}\n${facts.join("\n")}`;
}

function stamp(iso: string): string {
  return iso.replace("T", " ").slice(0, 19);
}

const SECTIONS: [ConclusionRecord["level"], string][] = [
  ["explicit", "Explicit Observations"],
  ["deductive", "Deductive Observations"],
  ["inductive", "Inductive Observations"],
  ["contradiction", "Contradictions"],
];

/**
 * Renders conclusions as Honcho's representation markdown: one section per
 * level, lines `[YYYY-MM-DD HH:MM:SS] text`; empty string when none.
 *
 * @param conclusions Conclusions to render, in display order.
 * @returns The markdown.
 */
export function renderRepresentation(conclusions: ConclusionRecord[]): string {
  const parts: string[] = [];
  for (const [level, title] of SECTIONS) {
    const lines = conclusions.filter((c) => c.level === level).map((c) =>
      `[${stamp(c.created_at)}] ${c.content}`
    );
    if (lines.length > 0) parts.push(`## ${title}\n${lines.join("\n")}`);
  }
  return parts.join("\n\n");
}

/** Options selecting the conclusions of a representation. */
export interface RepresentationQuery {
  /** Workspace id. */
  workspaceId: string;
  /** Observer peer. */
  observerId: string;
  /** Observed peer. */
  observedId: string;
  /** Session allowlist (undefined = all sessions). */
  sessions?: string[];
  /** Semantic query: stands in as word overlap. */
  searchQuery?: string | null;
  /** Maximum number of search hits. */
  searchTopK?: number | null;
  /** Cap on the number of conclusions (default 25). */
  maxConclusions?: number | null;
}

/**
 * Picks the conclusions of a representation: the observer's live conclusions
 * about the target, newest first, optionally narrowed to sessions; with a
 * search query, conclusions sharing a word with it come first (top-k).
 *
 * @param state The store.
 * @param query Selection options.
 * @returns Selected conclusions, oldest first within the cap.
 */
export function selectConclusions(
  state: HonchoTestState,
  query: RepresentationQuery,
): ConclusionRecord[] {
  let pool = state.conclusions.filter((c) =>
    !c.deleted && c.workspace_id === query.workspaceId &&
    c.observer_id === query.observerId &&
    c.observed_id === query.observedId &&
    (query.sessions === undefined ||
      (c.session_id !== null && query.sessions.includes(c.session_id)))
  ).reverse();
  if (query.searchQuery) {
    const q = words(query.searchQuery);
    const hits = pool.filter((c) =>
      [...words(c.content)].some((w) => q.has(w))
    );
    pool = hits.slice(0, query.searchTopK ?? 10);
  }
  return pool.slice(0, query.maxConclusions ?? 25).reverse();
}

/**
 * Splits an answer into SSE chunks of whole words (about 24 characters).
 *
 * @param text The answer.
 * @returns Chunks whose concatenation is `text`.
 */
export function chunkAnswer(text: string): string[] {
  const chunks: string[] = [];
  let current = "";
  for (const piece of text.split(/(?<=\s)/)) {
    current += piece;
    if (current.length >= 24) {
      chunks.push(current);
      current = "";
    }
  }
  if (current) chunks.push(current);
  return chunks;
}
