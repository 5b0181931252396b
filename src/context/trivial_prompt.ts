/**
 * The low-signal prompt gate of the Hermes contract: turns such as "ok",
 * "thanks!" or a slash command carry nothing worth recalling, so providers
 * skip prefetch on them.
 *
 * @module
 */

// The acknowledgement/greeting words, anchored at the start; only whitespace,
// punctuation and symbols may follow (ASCII punctuation, straight and curly
// quotes, en/em dashes, ellipsis, brackets, `*&^%$#@!+=` and backtick, NBSP).
// `\s` covers NBSP and other Unicode spaces too.
const TRIVIAL_PROMPT_REGEXP =
  /^(?:yes|no|ok|okay|sure|thanks|thank you|y|n|yep|nope|yeah|nah|hi|hey|hello|yo|sup|continue|go ahead|do it|proceed|got it|cool|nice|great|done|next|lgtm|k)[\s!?.:;,"'~\u2018\u2019\u201c\u201d\u2014\u2013\u2026()[\]{}<>*&^%$#@+=`\u00a0]*$/i;

/**
 * Tells whether a user prompt is too trivial to warrant memory recall:
 * empty or whitespace-only input, a slash command (`/...` after trimming), or
 * a bare acknowledgement or greeting (`yes`, `ok`, `thanks`, `hi`, `lgtm`,
 * `go ahead`, …) followed only by whitespace or punctuation. Words that merely
 * start with one of those (`k8s`, `yolo`, `note`, `hello world`) are not
 * trivial.
 *
 * @param text The user's message (`null`/`undefined` count as empty).
 * @returns `true` when prefetch should be skipped for this turn.
 *
 * @category Context safety
 */
export function isTrivialPrompt(text: string | null | undefined): boolean {
  if (text == null) return true;
  const stripped = String(text).trim();
  if (stripped === "") return true;
  if (stripped.startsWith("/")) return true;
  return TRIVIAL_PROMPT_REGEXP.test(stripped);
}
