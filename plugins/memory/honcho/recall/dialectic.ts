/**
 * The dialectic supplement (plugins/memory/honcho/SPEC.md §8), pure: passes,
 * levels, prompts, early exit and the cadence that widens on empty answers.
 * @module
 */

import type { HonchoConfig } from "../config/config.ts";
import { REASONING_LEVELS, type ReasoningLevel } from "../config/_lookup.ts";

export type DialecticSettings = Pick<
  HonchoConfig,
  | "dialecticDepth"
  | "dialecticDepthLevels"
  | "dialecticReasoningLevel"
  | "reasoningHeuristic"
  | "reasoningLevelCap"
>;

/** The session-start prewarm's query: under 120 characters, it never raises the level. */
export const PREWARM_QUERY =
  "Summarize what you know about this user: preferences, current projects and working style.";

/** Pass 0 when nothing is cached yet: who is this person? */
export const COLD_PROMPT =
  "Who is this person? Describe their preferences, goals and working style: " +
  "the facts that would make an assistant immediately useful to them.";

/** Pass 0 once base context exists: what matters right now? */
export const WARM_PROMPT =
  "Given what has been discussed in this session so far, what context about " +
  "this user is most relevant to the current conversation? Prioritize active " +
  "context over biography.";

/** Query lengths at which the heuristic raises the level by one and by two. */
export const HEURISTIC_STEP_ONE_CHARS = 120;
export const HEURISTIC_STEP_TWO_CHARS = 400;

type Slot = ReasoningLevel | "base";

const PROPORTIONAL_SLOTS: Readonly<Record<number, readonly Slot[]>> = {
  1: ["base"],
  2: ["minimal", "base"],
  3: ["minimal", "base", "low"],
};

/** The explicit `dialecticDepthLevels[index]`, else the depth's proportional slot (base: heuristic). */
export function resolvePassLevel(
  index: number,
  query: string,
  settings: DialecticSettings,
): ReasoningLevel {
  const explicit = settings.dialecticDepthLevels?.[index];
  if (explicit && REASONING_LEVELS.includes(explicit)) return explicit;
  const depth = clampDepth(settings.dialecticDepth);
  const slot = PROPORTIONAL_SLOTS[depth]?.[index] ?? "base";
  if (slot !== "base") return slot;
  return heuristicLevel(settings.dialecticReasoningLevel, query, settings);
}

/** The base level raised by the length heuristic, never above the cap (a higher base is lowered). */
export function heuristicLevel(
  base: ReasoningLevel,
  query: string,
  settings: Pick<DialecticSettings, "reasoningHeuristic" | "reasoningLevelCap">,
): ReasoningLevel {
  const baseIndex = REASONING_LEVELS.indexOf(base);
  if (!settings.reasoningHeuristic || baseIndex < 0 || !query) return base;
  const length = query.length;
  const bump = length < HEURISTIC_STEP_ONE_CHARS
    ? 0
    : length < HEURISTIC_STEP_TWO_CHARS
    ? 1
    : 2;
  let capIndex = REASONING_LEVELS.indexOf(settings.reasoningLevelCap);
  if (capIndex < 0) capIndex = REASONING_LEVELS.indexOf("high");
  return REASONING_LEVELS[Math.min(baseIndex + bump, capIndex)]!;
}

/** An answer strong enough to stop: 100+ characters and structured (heading, bullets), or 300+. */
export function signalSufficient(result: string): boolean {
  const text = result.trim();
  if (text.length < 100) return false;
  if (
    text.includes("\n") &&
    (text.includes("##") || text.includes("\u2022") ||
      /^\s*[-*] /m.test(text) || /^\s*\d+\. /m.test(text))
  ) return true;
  return text.length > 300;
}

export type PassPromptOptions =
  & Pick<RunDialecticDepthOptions, "cold" | "rewritten" | "currentRequest">
  & {
    /** Answers of the earlier passes, by pass index (`""` = empty). */
    results: readonly string[];
  };

/**
 * The prompt of pass `index`: pass 0 (or one with no usable earlier answer)
 * asks the cold/warm question, pass 1 asks for the gaps, pass 2 reconciles.
 */
export function passPrompt(index: number, options: PassPromptOptions): string {
  const prior = options.results.filter((r) => r.trim() !== "");
  let prompt: string;
  if (index === 0 || prior.length === 0) {
    if (options.rewritten) {
      prompt = options.rewritten;
    } else if (options.currentRequest !== undefined) {
      prompt = "Recall the evidence about this user that is relevant to the " +
        "current request: facts, preferences and earlier decisions that bear on it.";
    } else {
      prompt = options.cold ? COLD_PROMPT : WARM_PROMPT;
    }
  } else if (index === 1) {
    prompt =
      `Given this initial assessment:\n\n${prior[prior.length - 1]}\n\n` +
      "What gaps remain in this picture of the user? Synthesize their current " +
      "state and needs, grounded in their recent sessions.";
  } else {
    const pass1 = options.results[0]?.trim() || "(empty)";
    const pass2 = options.results[1]?.trim() || "(empty)";
    prompt = `Pass 1:\n${pass1}\n\nPass 2:\n${pass2}\n\n` +
      "Do these assessments cohere? Reconcile any contradictions and give a " +
      "concise final synthesis for the current conversation.";
  }
  if (options.currentRequest !== undefined) {
    return `Current user request:\n${options.currentRequest}\n\n${prompt}`;
  }
  return prompt;
}

/** Asks Honcho one pass; resolves to the answer (`""` when empty). */
export type DialecticPassRunner = (
  prompt: string,
  level: ReasoningLevel,
) => Promise<string>;

export interface RunDialecticDepthOptions {
  /** The user's query (drives the heuristic only, unless `currentRequest`). */
  query: string;
  /** Whether no base context was cached when the dialectic started. */
  cold: boolean;
  settings: DialecticSettings;
  runPass: DialecticPassRunner;
  /** A rewritten question for pass 0 instead of the cold/warm prompt. */
  rewritten?: string;
  /** recallSync: the current request, prefixed to every prompt. */
  currentRequest?: string;
}

/** Runs up to `dialecticDepth` passes (stopping on a strong answer); the last non-empty answer. */
export async function runDialecticDepth(
  options: RunDialecticDepthOptions,
): Promise<string> {
  const depth = clampDepth(options.settings.dialecticDepth);
  const results: string[] = [];
  for (let i = 0; i < depth; i++) {
    const prior = results.filter((r) => r.trim() !== "");
    const last = prior[prior.length - 1];
    if (last !== undefined && signalSufficient(last)) break;
    const prompt = passPrompt(i, { ...options, results });
    const level = resolvePassLevel(i, options.query, options.settings);
    results.push((await options.runPass(prompt, level)).trim());
  }
  const answers = results.filter((r) => r !== "");
  return answers[answers.length - 1] ?? "";
}

/** The cadence plus one turn per empty answer in a row, at most eight times the cadence. */
export function effectiveCadence(cadence: number, emptyStreak: number): number {
  const base = Math.max(1, Math.floor(cadence));
  if (emptyStreak <= 0) return base;
  return Math.min(base + emptyStreak, base * 8);
}

function clampDepth(depth: number): number {
  return Math.max(1, Math.min(Math.floor(depth) || 1, 3));
}
