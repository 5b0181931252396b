// Recalled memory goes to the model inside a `<memory-context>` fence; fenced
// spans are stripped wherever output could echo them (streams included).

import { log } from "../core/log.ts";
import { PYTHON_WHITESPACE_CLASS } from "../_util/python_text.ts";

const OPEN = "<memory-context>";
const CLOSE = "</memory-context>";

/** The system note written under the opening fence. */
export const MEMORY_CONTEXT_SYSTEM_NOTE: string =
  "[System note: The following is recalled memory context, NOT new user input. " +
  "Treat as authoritative reference data — this is the agent's persistent " +
  "memory and should inform all responses.]";

// Hermes 0.19.0's patterns (agent/memory_manager.py) with Python's `\s`:
// complete fenced spans, the system note in its wordings (plus the spec's
// "advisory context" one, which 0.19.0 keeps), stray tags.
const S = `[${PYTHON_WHITESPACE_CLASS}]`;
const FENCED_SPAN_REGEXP = new RegExp(
  `<${S}*memory-context${S}*>[^]*?</${S}*memory-context${S}*>`,
  "giu",
);
const SYSTEM_NOTE_REGEXP = new RegExp(
  `\\[System note:${S}*The following is recalled memory context,${S}*NOT new user input\\.${S}*Treat as (?:informational background data|authoritative reference data[^\\]]*|advisory context[^\\]]*)\\.\\]${S}*`,
  "giu",
);
const FENCE_TAG_REGEXP = new RegExp(`</?${S}*memory-context${S}*>`, "giu");
// A markdown bullet: marker, whitespace, content.
const BULLET_REGEXP = /^[-*+]\s+\S/;

/**
 * Removes memory-context fencing from provider or model output: fenced
 * spans, the system note and stray tags (src/context/SPEC.md §1).
 *
 * @category Context safety
 */
export function sanitizeContext(text: string): string {
  if (typeof text !== "string" || text === "") return "";
  return text.replace(FENCED_SPAN_REGEXP, "")
    .replace(SYSTEM_NOTE_REGEXP, "")
    .replace(FENCE_TAG_REGEXP, "");
}

/**
 * Drops a self-contained bullet line that an earlier bullet of the same
 * section already states. A section starts at every non-blank, non-indented
 * line that is not a bullet (heading, rule, prose). Bullets followed by an
 * indented continuation line are never dropped and never suppress another.
 */
function dropRepeatedBullets(text: string): string {
  const lines = text.split("\n");
  const kept: string[] = [];
  const seen = new Set<string>();
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    const stripped = line.trim();
    if (stripped !== "" && /^\s/.test(line)) {
      kept.push(line);
      continue;
    }
    const isBullet = BULLET_REGEXP.test(stripped);
    if (stripped !== "" && !isBullet) seen.clear();
    if (isBullet) {
      const next = lines[i + 1] ?? "";
      const continued = next.trim() !== "" && /^\s/.test(next);
      if (!continued) {
        if (seen.has(stripped)) continue;
        seen.add(stripped);
      }
    }
    kept.push(line);
  }
  return kept.join("\n");
}

/**
 * Wraps the merged prefetch text for the model in a `<memory-context>`
 * block, cleaned first (`""` when blank; src/context/SPEC.md §1).
 *
 * @category Context safety
 */
export function buildMemoryContextBlock(raw: string): string {
  if (typeof raw !== "string" || raw.trim() === "") return "";
  const sanitized = sanitizeContext(raw);
  if (sanitized !== raw) {
    log("warn", "memory provider returned pre-wrapped context; stripped");
  }
  const clean = dropRepeatedBullets(sanitized);
  return `${OPEN}\n${MEMORY_CONTEXT_SYSTEM_NOTE}\n\n${clean}\n${CLOSE}`;
}

// Case-insensitive searches that keep string indices (no case mapping that
// changes length, unlike toLowerCase()).
const OPEN_TAG_REGEXP = /<memory-context>/gi;
const CLOSE_TAG_REGEXP = /<\/memory-context>/gi;

function findTag(regexp: RegExp, text: string, from: number): number {
  regexp.lastIndex = from;
  const found = regexp.exec(text);
  return found === null ? -1 : found.index;
}

/** Length of the longest suffix of `text` that is a proper prefix of `tag`. */
function partialTagSuffix(text: string, tag: string): number {
  const max = Math.min(text.length, tag.length - 1);
  for (let n = max; n > 0; n--) {
    if (text.slice(text.length - n).toLowerCase() === tag.slice(0, n)) return n;
  }
  return 0;
}

/** Whether a line starts after `text`, given whether one started before it. */
function endsAtLineStart(text: string, atLineStart: boolean): boolean {
  const lastBreak = text.lastIndexOf("\n");
  return lastBreak === -1
    ? atLineStart && text.trim() === ""
    : text.slice(lastBreak + 1).trim() === "";
}

/**
 * Hides fenced memory context from streamed text even when the tags
 * straddle chunks (src/context/SPEC.md §1). Use one scrubber per response
 * (or {@linkcode StreamingContextScrubber.reset}) and call
 * {@linkcode StreamingContextScrubber.flush} at the end of the stream.
 *
 * @category Context safety
 */
export class StreamingContextScrubber {
  #inSpan = false;
  #held = "";
  // Whether the visible text emitted so far ends at a line start (only
  // whitespace after its last line break, or nothing emitted yet).
  #atLineStart = true;

  /** Forgets all state; use before scrubbing a new response. */
  reset(): void {
    this.#inSpan = false;
    this.#held = "";
    this.#atLineStart = true;
  }

  /** Scrubs the next chunk; returns what can be shown now (possibly `""`). */
  feed(text: string): string {
    if (typeof text !== "string" || text === "") return "";
    let buf = this.#held + text;
    this.#held = "";
    let out = "";
    while (buf !== "") {
      if (this.#inSpan) {
        const end = findTag(CLOSE_TAG_REGEXP, buf, 0);
        if (end === -1) {
          const keep = partialTagSuffix(buf, CLOSE);
          this.#held = keep > 0 ? buf.slice(buf.length - keep) : "";
          break;
        }
        buf = buf.slice(end + CLOSE.length);
        this.#inSpan = false;
        continue;
      }
      const found = this.#findOpening(buf);
      if (found.index >= 0) {
        out += this.#emit(buf.slice(0, found.index));
        buf = buf.slice(found.index + OPEN.length);
        this.#inSpan = true;
        continue;
      }
      const hold = found.hold;
      out += this.#emit(buf.slice(0, buf.length - hold));
      this.#held = buf.slice(buf.length - hold);
      break;
    }
    return out;
  }

  /**
   * Ends the stream and resets: returns text held back for a possible tag,
   * or `""` when the stream ended inside a span (then discarded).
   */
  flush(): string {
    const tail = this.#inSpan ? "" : this.#held;
    this.reset();
    return tail;
  }

  #emit(text: string): string {
    this.#atLineStart = endsAtLineStart(text, this.#atLineStart);
    return text;
  }

  /** Whether a tag at `index` of `buf` would start a line. */
  #startsLine(buf: string, index: number): boolean {
    return endsAtLineStart(buf.slice(0, index), this.#atLineStart);
  }

  /**
   * Finds the first opening fence in `buf` (at a line start, followed by a
   * line break); otherwise says how many trailing characters to hold back.
   */
  #findOpening(buf: string): { index: number; hold: number } {
    let at = findTag(OPEN_TAG_REGEXP, buf, 0);
    while (at !== -1) {
      const after = at + OPEN.length;
      if (this.#startsLine(buf, at)) {
        if (after === buf.length) return { index: -1, hold: OPEN.length };
        const next = buf[after];
        if (next === "\n" || next === "\r") return { index: at, hold: 0 };
      }
      at = findTag(OPEN_TAG_REGEXP, buf, at + 1);
    }
    const partial = partialTagSuffix(buf, OPEN);
    if (partial > 0 && this.#startsLine(buf, buf.length - partial)) {
      return { index: -1, hold: partial };
    }
    return { index: -1, hold: 0 };
  }
}
