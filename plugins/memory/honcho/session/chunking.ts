/**
 * Splitting long turn text into Honcho messages (plugins/memory/honcho/SPEC.md §9).
 * @module
 */

/** The prefix of every chunk after the first. */
export const CONTINUED_PREFIX = "[continued] ";

const MIN_LIMIT = CONTINUED_PREFIX.length * 2;
const MIN_CUT_SHARE = 0.3;

/**
 * Chunks of at most `limit` UTF-16 units (never under the server's
 * code-point count), cut at a paragraph, sentence or space at least 30 %
 * into the window, else hard (never inside a surrogate pair).
 */
export function chunkMessage(text: string, limit: number): string[] {
  if (!(limit >= MIN_LIMIT)) limit = MIN_LIMIT;
  if (text.length <= limit) return [text];
  const chunks: string[] = [];
  let remaining = text;
  while (remaining.length > 0) {
    const first = chunks.length === 0;
    const effective = first ? limit : limit - CONTINUED_PREFIX.length;
    const prefix = first ? "" : CONTINUED_PREFIX;
    if (remaining.length <= effective) {
      chunks.push(prefix + remaining);
      break;
    }
    const cut = findCut(remaining, effective);
    const head = remaining.slice(0, cut).trimEnd();
    remaining = remaining.slice(cut).trimStart();
    if (head !== "") chunks.push(prefix + head);
  }
  return chunks;
}

function findCut(text: string, effective: number): number {
  const window = text.slice(0, effective);
  const threshold = MIN_CUT_SHARE * effective;
  const paragraph = window.lastIndexOf("\n\n");
  if (paragraph >= threshold) return paragraph;
  const sentence = window.lastIndexOf(". ");
  if (sentence >= threshold) return sentence + 2;
  const space = window.lastIndexOf(" ");
  if (space >= threshold) return space;
  // Hard cut; never between the halves of a surrogate pair.
  const code = text.charCodeAt(effective - 1);
  return code >= 0xd800 && code <= 0xdbff ? effective - 1 : effective;
}
