/** `hermes honcho ask` and `search`: the agent's `honcho_reasoning` and `honcho_search` from the shell. @module */

import { type HermesCommand, writeJson } from "../../../../src/cli/mod.ts";
import type { HonchoConfig } from "../config/config.ts";
import { REASONING_LEVELS } from "../config/_lookup.ts";
import {
  describeConfigError,
  HonchoCliError,
  type HonchoCliScope,
  loadScopeConfig,
} from "./_common.ts";
import { scopedAction } from "./_action.ts";
import { lazyImport } from "../../../../src/provider/_bundled.ts";

/** `_tool_run.ts` is loaded (by a computed specifier) only when asked. */
const runTool: typeof import("./_tool_run.ts").runToolFromCli = async (
  ...args
) =>
  await (await lazyImport<typeof import("./_tool_run.ts")>(
    "./_tool_run.ts",
    import.meta.url,
  )).runToolFromCli(...args);

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
const SEARCH_TIMEOUT_MS = 15_000;

interface ToolOptions {
  peer?: string;
  json?: boolean;
}

/** `0`, `1` when Honcho cannot answer, `2` for a bad argument. */
async function runAsk(
  scope: HonchoCliScope,
  query: string,
  options: ToolOptions & { level?: string },
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

/** `0`, `1` when Honcho cannot answer, `2` for a bad argument. */
async function runSearch(
  scope: HonchoCliScope,
  query: string,
  options: ToolOptions & { maxTokens?: string },
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
  scopedAction(honcho, ask, runAsk);
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
  scopedAction(honcho, search, runSearch);
  return [ask, search];
}
