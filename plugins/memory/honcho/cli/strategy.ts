/**
 * `hermes honcho strategy [per-session|per-directory|per-repo|global]`:
 * shows the session strategy (marking the current one) or sets
 * `sessionStrategy` in the host block.
 *
 * @module
 */

import type { HermesCommand } from "../../../../src/cli/mod.ts";
import {
  HonchoCliError,
  type HonchoCliScope,
  hostLabel,
  loadScopeConfig,
  resolveScope,
  runGuarded,
  targetProfileOf,
} from "./_common.ts";
import {
  parseChoice,
  printChoices,
  writeHostSettings,
} from "./_host_setting.ts";

/** The session strategies with what each does, in display order. */
export const SESSION_STRATEGIES: readonly (readonly [string, string])[] = [
  [
    "per-session",
    "a new Honcho session for every Hermes session (what setup writes)",
  ],
  [
    "per-directory",
    "one session per working directory (used while sessionStrategy is unset)",
  ],
  ["per-repo", "one session per git repository"],
  ["global", "one session for everything (named after the workspace)"],
];

/**
 * Runs `hermes honcho strategy`.
 *
 * @param scope The profile and files.
 * @param strategy The strategy to set; shows the current one when absent.
 * @returns `0`, `1` when the file cannot be written, `2` for an invalid strategy.
 *
 * @example
 * ```ts ignore
 * import { memoryCliIo } from "@hermes/memory/cli";
 * import { resolveScope } from "./_common.ts";
 * import { runStrategy } from "./strategy.ts";
 * await runStrategy(resolveScope(memoryCliIo()), "per-repo");
 * ```
 */
export async function runStrategy(
  scope: HonchoCliScope,
  strategy: string | undefined,
  options: { json?: boolean } = {},
): Promise<number> {
  const { io } = scope;
  const config = await loadScopeConfig(scope);
  const label = hostLabel(config.hostKey);
  if (strategy === undefined) {
    printChoices(io, {
      json: options.json
        ? { hostKey: config.hostKey, key: "sessionStrategy" }
        : undefined,
      label,
      title: "Session strategy",
      current: config.sessionStrategy,
      source: config.sources.sessionStrategy,
      choices: SESSION_STRATEGIES,
      width: 13,
      usage: "hermes honcho strategy <strategy>",
    });
    return 0;
  }
  if (options.json) {
    throw new HonchoCliError(
      "--json shows the setting; leave out the value, or drop --json to set it",
      2,
    );
  }
  const wanted = parseChoice(
    "session strategy",
    "strategies",
    strategy,
    SESSION_STRATEGIES.map(([name]) => name),
  );
  const { hostKey, path } = await writeHostSettings(scope, config, {
    sessionStrategy: wanted,
  });
  io.stdout(
    `${label}Session strategy set to ${wanted} (hosts.${hostKey}.sessionStrategy in ${path}). Start a new session to use it.\n`,
  );
  return 0;
}

/**
 * Attaches `strategy` to the `honcho` command.
 *
 * @param honcho The `hermes honcho` command.
 * @returns The `strategy` command.
 *
 * @example
 * ```ts
 * import { createCommand, memoryCliIo } from "@hermes/memory/cli";
 * import { registerStrategy } from "./strategy.ts";
 * import assert from "node:assert/strict";
 * const honcho = createCommand("honcho", { io: memoryCliIo(), exitCode: 0 });
 * assert.equal(registerStrategy(honcho).name(), "strategy");
 * ```
 */
export function registerStrategy(honcho: HermesCommand): HermesCommand {
  const command = honcho.command("strategy")
    .argument(
      "[strategy]",
      "per-session, per-directory, per-repo or global (shows the current one when omitted)",
    )
    .summary("Show or set how Honcho sessions are named")
    .description(
      "Show the session strategy (the current one is marked) or set\n" +
        "sessionStrategy in this profile's host block. A directory mapped with\n" +
        "'hermes honcho map' always uses its mapped name.",
    )
    .option("--json", "Show the setting as JSON")
    .example("hermes honcho strategy")
    .example("hermes honcho strategy per-repo");
  command.action((strategy: string | undefined, opts: { json?: boolean }) => {
    const io = command.context.io;
    return runGuarded(io, () =>
      runStrategy(
        resolveScope(io, { targetProfile: targetProfileOf(honcho) }),
        strategy,
        opts,
      ));
  });
  return command;
}
