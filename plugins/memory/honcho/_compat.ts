// Local stand-ins for framework helpers that `@hermes/memory` does not export
// yet. Same behaviour as src/context_fence.ts and src/trivial_prompt.ts.

// TODO(lead): use @hermes/memory export `sanitizeContext` (src/context_fence.ts).
const FENCED_SPAN_REGEXP =
  /<\s*memory-context\s*>[\s\S]*?<\s*\/\s*memory-context\s*>/gi;
const SYSTEM_NOTE_REGEXP =
  /\[System note:\s*The following is recalled memory context,\s*NOT new user input\.\s*Treat as [^\]]*\]\s*/gi;
const FENCE_TAG_REGEXP = /<\s*\/?\s*memory-context\s*>/gi;

/** Removes `<memory-context>` spans, the system note and stray fence tags. */
export function sanitizeContext(text: string): string {
  if (typeof text !== "string" || text === "") return "";
  return text.replace(FENCED_SPAN_REGEXP, "")
    .replace(SYSTEM_NOTE_REGEXP, "")
    .replace(FENCE_TAG_REGEXP, "");
}

// TODO(lead): use @hermes/memory export `isTrivialPrompt` (src/trivial_prompt.ts).
const TRIVIAL_PROMPT_REGEXP =
  /^(?:yes|no|ok|okay|sure|thanks|thank you|y|n|yep|nope|yeah|nah|hi|hey|hello|yo|sup|continue|go ahead|do it|proceed|got it|cool|nice|great|done|next|lgtm|k)[\s!?.:;,"'~\u2018\u2019\u201c\u201d\u2014\u2013\u2026()[\]{}<>*&^%$#@+=`\u00a0]*$/i;

/** Whether a prompt is too trivial for recall (empty, `/command`, "ok", "thanks!"). */
export function isTrivialPrompt(text: string | null | undefined): boolean {
  if (text == null) return true;
  const stripped = String(text).trim();
  if (stripped === "" || stripped.startsWith("/")) return true;
  return TRIVIAL_PROMPT_REGEXP.test(stripped);
}
