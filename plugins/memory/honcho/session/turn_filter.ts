/**
 * Gateway notifications sent as "user" turns but never said by a person
 * (plugins/memory/honcho/SPEC.md §9); they are never written to Honcho.
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

/** Whether a user turn starts like an internal notification (not one quoted mid-sentence). */
export function isInternalGatewayNotification(userText: string): boolean {
  if (typeof userText !== "string") return false;
  const text = userText.trimStart();
  return INTERNAL_NOTIFICATION_REGEXPS.some((re) => re.test(text));
}
