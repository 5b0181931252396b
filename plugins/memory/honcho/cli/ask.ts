/**
 * `hermes honcho ask "QUESTION"` and `hermes honcho search "QUERY"`: the
 * agent's `honcho_reasoning` (Honcho's dialectic chat about a peer) and
 * `honcho_search` (excerpts of past messages) from the shell, with
 * `--peer user|ai|ID` and `--json`.
 *
 * @module
 */

import { type HermesCommand, writeJson } from "../../../../src/cli/mod.ts";
import { REASONING_LEVELS } from "../config.ts";
import type { HonchoConfig } from "../config.ts";
import {
  describeConfigError,
  HonchoCliError,
  type HonchoCliScope,
  loadScopeConfig,
  resolveScope,
  runGuarded,
  targetProfileOf,
} from "./_common.ts";
import type { ToolRunResult } from "./_tool_run.ts";

/**
 * Runs a tool through `_tool_run.ts`, loaded only when `ask` or `search`
 * runs (a computed specifier, so the other `hermes honcho` commands do not
 * load the tool code).
 */
async function runTool(
  config: HonchoConfig,
  tool: string,
  args: Record<string, unknown>,
  timeoutMs: number,
): Promise<ToolRunResult> {
  const url = new URL("./_tool_run.ts", import.meta.url).href;
  const { runToolFromCli } = await import(
    url
  ) as typeof import("./_tool_run.ts");
  return await runToolFromCli(config, tool, args, timeoutMs);
}

/** Refuses a settings file that does not parse (it would be ignored). */
function requireParsedConfig(config: HonchoConfig): void {
  if (!config.configError) return;
  throw new HonchoCliError(
    `Cannot use ${config.configPath}: ${
      describeConfigError(config)
    }; fix or remove the file`,
  );
}

/** A dialectic answer can take a while: each request's deadline. */
const ASK_TIMEOUT_MS = 60_000;
/** A search is one quick request. */
const SEARCH_TIMEOUT_MS = 15_000;

/** Options of {@linkcode runAsk}. */
export interface AskOptions {
  /** `user` (default), `ai`, or a peer id. */
  peer?: string;
  /** The reasoning level (default: `dialecticReasoningLevel`). */
  level?: string;
  /**
   * Print `{ peer, query, reasoningLevel, answer }` as JSON.
   *
   * @default {false}
   */
  json?: boolean;
}

/**
 * Runs `hermes honcho ask`: asks Honcho's dialectic about a peer and
 * prints the answer.
 *
 * @param scope The profile and files.
 * @param query The question.
 * @param options The peer, level and output form.
 * @returns `0`, `1` when Honcho cannot answer, `2` for a bad argument.
 */
export async function runAsk(
  scope: HonchoCliScope,
  query: string,
  options: AskOptions,
): Promise<number> {
  const question = query.trim();
  if (question === "") {
    throw new HonchoCliError('the question is empty: hermes honcho ask "…"', 2);
  }
  const config = await loadScopeConfig(scope);
  requireParsedConfig(config);
  const level = options.level?.trim().toLowerCase() ||
    config.dialecticReasoningLevel;
  if (!(REASONING_LEVELS as readonly string[]).includes(level)) {
    throw new HonchoCliError(
      `Cannot use reasoning level '${options.level}': valid levels are ${
        REASONING_LEVELS.join(", ")
      }`,
      2,
    );
  }
  const { peer, result } = await runTool(config, "honcho_reasoning", {
    query: question,
    peer: options.peer,
    reasoning_level: level,
  }, ASK_TIMEOUT_MS);
  if (options.json) {
    writeJson(scope.io, {
      peer,
      query: question,
      reasoningLevel: level,
      answer: result,
    });
  } else {
    scope.io.stdout(`${result}\n`);
  }
  return 0;
}

/** Options of {@linkcode runSearch}. */
export interface SearchOptions {
  /** `user` (default), `ai`, or a peer id. */
  peer?: string;
  /** The result budget in tokens (1–2000; default 800). */
  maxTokens?: string;
  /**
   * Print `{ peer, query, result }` as JSON.
   *
   * @default {false}
   */
  json?: boolean;
}

/**
 * Runs `hermes honcho search`: searches a peer's past messages and prints
 * the excerpts (`[peer · session] text`, blank-line separated).
 *
 * @param scope The profile and files.
 * @param query What to search for.
 * @param options The peer, budget and output form.
 * @returns `0`, `1` when Honcho cannot answer, `2` for a bad argument.
 */
export async function runSearch(
  scope: HonchoCliScope,
  query: string,
  options: SearchOptions,
): Promise<number> {
  const text = query.trim();
  if (text === "") {
    throw new HonchoCliError(
      'the search query is empty: hermes honcho search "…"',
      2,
    );
  }
  let maxTokens: number | undefined;
  if (options.maxTokens !== undefined) {
    maxTokens = Number(options.maxTokens);
    if (!Number.isInteger(maxTokens) || maxTokens < 1 || maxTokens > 2000) {
      throw new HonchoCliError(
        `Cannot use --max-tokens '${options.maxTokens}': give a whole number from 1 to 2000`,
        2,
      );
    }
  }
  const config = await loadScopeConfig(scope);
  requireParsedConfig(config);
  const { peer, result } = await runTool(config, "honcho_search", {
    query: text,
    peer: options.peer,
    ...(maxTokens !== undefined ? { max_tokens: maxTokens } : {}),
  }, SEARCH_TIMEOUT_MS);
  if (options.json) {
    writeJson(scope.io, { peer, query: text, result });
  } else {
    scope.io.stdout(`${result}\n`);
  }
  return 0;
}

/**
 * Attaches `ask` and `search` to the `honcho` command.
 *
 * @param honcho The `hermes honcho` command.
 * @returns The `ask` and `search` commands.
 *
 * @example
 * ```ts
 * import { createCommand, memoryCliIo } from "@hermes/memory/cli";
 * import { registerAsk } from "./ask.ts";
 * import assert from "node:assert/strict";
 * const honcho = createCommand("honcho", { io: memoryCliIo(), exitCode: 0 });
 * assert.deepEqual(registerAsk(honcho).map((c) => c.name()), ["ask", "search"]);
 * ```
 */
export function registerAsk(honcho: HermesCommand): HermesCommand[] {
  const peerFlags = "--peer <peer>";
  const peerHelp = "Whom it is about: user, ai or a peer id";
  const ask = honcho.command("ask")
    .argument("<question>", "A question in plain language")
    .summary("Ask Honcho about a peer (the dialectic, like honcho_reasoning)")
    .description(
      "Ask Honcho's dialectic agent a question about a peer and print its\n" +
        "answer: what the agent's honcho_reasoning tool does, from the shell.",
    )
    .option(peerFlags, peerHelp, "user")
    .choiceOption(
      "--level <level>",
      "Reasoning level (default: dialecticReasoningLevel)",
      REASONING_LEVELS,
    )
    .option("--json", "Print { peer, query, reasoningLevel, answer } as JSON")
    .example('hermes honcho ask "What does the user drink in the morning?"')
    .example('hermes honcho ask "What am I working on?" --level high --json');
  ask.action((question: string, opts: AskOptions) => {
    const io = ask.context.io;
    return runGuarded(
      io,
      () =>
        runAsk(
          resolveScope(io, { targetProfile: targetProfileOf(honcho) }),
          question,
          opts,
        ),
    );
  });
  const search = honcho.command("search")
    .argument("<query>", "What to look for")
    .summary("Search a peer's past messages (like honcho_search)")
    .description(
      "Search a peer's past messages (semantic and keyword) and print the\n" +
        "excerpts: what the agent's honcho_search tool does, from the shell.",
    )
    .option(peerFlags, peerHelp, "user")
    .option("--max-tokens <n>", "Result budget in tokens, 1-2000 (default 800)")
    .option("--json", "Print { peer, query, result } as JSON")
    .example('hermes honcho search "green tea"')
    .example('hermes honcho search "deploy" --peer ai --json');
  search.action((query: string, opts: SearchOptions) => {
    const io = search.context.io;
    return runGuarded(
      io,
      () =>
        runSearch(
          resolveScope(io, { targetProfile: targetProfileOf(honcho) }),
          query,
          opts,
        ),
    );
  });
  return [ask, search];
}
