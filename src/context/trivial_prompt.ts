// The low-signal prompt gate of the Hermes contract: "ok", "thanks!" or a
// slash command carry nothing worth recalling, so providers skip prefetch.

// The acknowledgement/greeting words, anchored at the start; only whitespace,
// punctuation and symbols may follow (ASCII punctuation, straight and curly
// quotes, en/em dashes, ellipsis, brackets, `*&^%$#@!+=` and backtick, NBSP).
// `\s` covers NBSP and other Unicode spaces too.
const TRIVIAL_PROMPT_REGEXP =
  /^(?:yes|no|ok|okay|sure|thanks|thank you|y|n|yep|nope|yeah|nah|hi|hey|hello|yo|sup|continue|go ahead|do it|proceed|got it|cool|nice|great|done|next|lgtm|k)[\s!?.:;,"'~\u2018\u2019\u201c\u201d\u2014\u2013\u2026()[\]{}<>*&^%$#@+=`\u00a0]*$/i;

/**
 * Tells whether a user prompt is too trivial to warrant memory recall: empty,
 * a slash command, or a bare acknowledgement or greeting
 * (src/context/SPEC.md §2); `null`/`undefined` count as empty.
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
