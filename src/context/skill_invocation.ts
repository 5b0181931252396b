// Recovers the user's own instruction from a `/<skill>` turn Hermes expanded
// with the whole skill body. The markers are Hermes' wire format.

const INVOCATION_PREFIX = "[IMPORTANT: The user has invoked the ";
const BUNDLE_PREFIX = "[IMPORTANT: The user has invoked a skill bundle";
const SINGLE_SKILL_MARKER = "The full skill content is loaded below.]";
const SINGLE_SKILL_INSTRUCTION =
  "The user has provided the following instruction alongside the skill invocation: ";
const RUNTIME_NOTE = "\n\n[Runtime note:";
const BUNDLE_MARKER = " skill bundle,";
const BUNDLE_INSTRUCTION = "\nUser instruction: ";
const BUNDLE_SKILL_BLOCK = "\n\n[Loaded as part of the ";
// What a bundle carries when the user typed no instruction.
const BUNDLE_NO_INSTRUCTION = /^\(no additional instruction\b[^)]*\)*$/;

/** Cuts `text` at the first of `stops` found, if any. */
function cutAtFirst(text: string, stops: readonly string[]): string {
  let end = text.length;
  for (const stop of stops) {
    const at = text.indexOf(stop);
    if (at !== -1 && at < end) end = at;
  }
  return text.slice(0, end);
}

/**
 * Recovers the user's own instruction from a turn that a `/skill` or skill
 * bundle invocation expanded.
 */
export function extractUserInstructionFromSkillMessage(
  content: unknown,
): string | null {
  if (typeof content !== "string") return null;
  if (
    !content.startsWith(INVOCATION_PREFIX) && !content.startsWith(BUNDLE_PREFIX)
  ) {
    return content;
  }
  let instruction: string;
  if (content.startsWith(BUNDLE_PREFIX) || content.includes(BUNDLE_MARKER)) {
    // Bundles: the first instruction marker is the user's; skill bodies (which
    // may quote the marker) follow it, or it comes last.
    const at = content.indexOf(BUNDLE_INSTRUCTION);
    if (at === -1) return null;
    instruction = cutAtFirst(content.slice(at + BUNDLE_INSTRUCTION.length), [
      BUNDLE_SKILL_BLOCK,
      RUNTIME_NOTE,
    ]).trim();
    if (BUNDLE_NO_INSTRUCTION.test(instruction)) return null;
  } else if (content.includes(SINGLE_SKILL_MARKER)) {
    // A single skill: the instruction follows the skill body, which may quote
    // the marker, so the last marker is the user's.
    const at = content.lastIndexOf(SINGLE_SKILL_INSTRUCTION);
    if (at === -1) return null;
    instruction = cutAtFirst(
      content.slice(at + SINGLE_SKILL_INSTRUCTION.length),
      [RUNTIME_NOTE],
    ).trim();
  } else {
    return null;
  }
  return instruction === "" ? null : instruction;
}
