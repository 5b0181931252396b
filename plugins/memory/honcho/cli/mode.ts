/**
 * `hermes honcho mode [hybrid|context|tools]`: shows the recall mode
 * (marking the current one) or sets `recallMode` in the host block.
 *
 * @module
 */

import type { HermesCommand } from "../../../../src/cli/mod.ts";
import type { RecallMode } from "../config.ts";
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

export { sourceText } from "./_host_setting.ts";

/** The recall modes with what each does, in display order. */
export const RECALL_MODES: readonly (readonly [RecallMode, string])[] = [
  ["hybrid", "context injected before each turn, plus the five Honcho tools"],
  ["context", "context injected before each turn; no tools"],
  ["tools", "nothing injected; the model calls the Honcho tools"],
];

/**
 * Runs `hermes honcho mode`.
 *
 * @param scope The profile and files.
 * @param mode The mode to set; shows the current one when absent.
 * @returns `0`, `1` when the file cannot be written, `2` for an invalid mode.
 *
 * @example
 * ```ts ignore
 * import { memoryCliIo } from "@hermes/memory/cli";
 * import { resolveScope } from "./_common.ts";
 * import { runMode } from "./mode.ts";
 * await runMode(resolveScope(memoryCliIo()), "tools");
 * ```
 */
export async function runMode(
  scope: HonchoCliScope,
  mode: string | undefined,
  options: { json?: boolean } = {},
): Promise<number> {
  const { io } = scope;
  const config = await loadScopeConfig(scope);
  const label = hostLabel(config.hostKey);
  if (mode === undefined) {
    printChoices(io, {
      json: options.json
        ? { hostKey: config.hostKey, key: "recallMode" }
        : undefined,
      label,
      title: "Recall mode",
      current: config.recallMode,
      source: config.sources.recallMode,
      choices: RECALL_MODES,
      width: 8,
      usage: "hermes honcho mode <mode>",
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
    "recall mode",
    "modes",
    mode,
    RECALL_MODES.map(([name]) => name),
    { auto: "hybrid" },
  );
  const { hostKey, path } = await writeHostSettings(scope, config, {
    recallMode: wanted,
  });
  io.stdout(
    `${label}Recall mode set to ${wanted} (hosts.${hostKey}.recallMode in ${path}). Start a new session to use it.\n`,
  );
  return 0;
}

/**
 * Attaches `mode` to the `honcho` command.
 *
 * @param honcho The `hermes honcho` command.
 * @returns The `mode` command.
 *
 * @example
 * ```ts
 * import { createCommand, memoryCliIo } from "@hermes/memory/cli";
 * import { registerMode } from "./mode.ts";
 * import assert from "node:assert/strict";
 * const honcho = createCommand("honcho", { io: memoryCliIo(), exitCode: 0 });
 * assert.equal(registerMode(honcho).name(), "mode");
 * ```
 */
export function registerMode(honcho: HermesCommand): HermesCommand {
  const command = honcho.command("mode")
    .argument(
      "[mode]",
      "hybrid, context or tools (shows the current one when omitted)",
    )
    .summary("Show or set the recall mode (hybrid, context, tools)")
    .description(
      "Show the recall mode (the current one is marked) or set recallMode in this\n" +
        "profile's host block: hybrid (default) = injected context plus tools,\n" +
        "context = injected context only, tools = tools only.",
    )
    .option("--json", "Show the setting as JSON")
    .example("hermes honcho mode")
    .example("hermes honcho mode tools");
  command.action((mode: string | undefined, opts: { json?: boolean }) => {
    const io = command.context.io;
    return runGuarded(
      io,
      () =>
        runMode(
          resolveScope(io, { targetProfile: targetProfileOf(honcho) }),
          mode,
          opts,
        ),
    );
  });
  return command;
}
