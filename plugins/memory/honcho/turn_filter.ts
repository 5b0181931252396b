/**
 * Internal gateway notifications that arrive as "user" turns but were never
 * said by a person (plugins/memory/honcho/SPEC.md §9): background-task completions,
 * compaction markers, watch-pattern alerts, subagent fan-out notices. They
 * are never written to Honcho, so the user's representation is built from
 * what the user actually said.
 *
 * @module
 */

// Anchored at the start (after leading whitespace), case-insensitive.
const INTERNAL_NOTIFICATION_REGEXPS: readonly RegExp[] = Object.freeze([
  /^\[ASYNC\b[^\]\n]*\bCOMPLETE/i,
  /^\[CONTEXT COMPACTION/i,
  /^\[CONTEXT SUMMARY\]/i,
  /^\[PRIOR CONTEXT/i,
  /^\[?\s*(?:note:\s*)?(?:your |the )?active task list was preserved/i,
  /^\[IMPORTANT: Background process \S+ matched watch pattern/i,
  /^(?:a |the )?background (?:\(?fan-out of \d+\)? )?sub-?agents?\b[^\n]*?\bha(?:s|ve) finished\./i,
]);

/**
 * Tells whether a user turn is an internal gateway notification that must
 * not be stored: `[ASYNC … COMPLETE…]`, `[CONTEXT COMPACTION…]`,
 * `[CONTEXT SUMMARY]`, `[PRIOR CONTEXT…]`, the "active task list was
 * preserved" marker, `[IMPORTANT: Background process N matched watch
 * pattern…`, or "background (fan-out of N) subagent(s) … has finished.".
 * A person talking about such a notice later in a sentence is not matched.
 */
export function isInternalGatewayNotification(userText: string): boolean {
  if (typeof userText !== "string") return false;
  const text = userText.trimStart();
  return INTERNAL_NOTIFICATION_REGEXPS.some((re) => re.test(text));
}
