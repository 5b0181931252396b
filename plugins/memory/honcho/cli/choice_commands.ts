/**
 * The commands that show or set one host-block setting chosen from a list:
 * `hermes honcho mode [hybrid|context|tools]` (`recallMode`) and `hermes
 * honcho strategy [per-session|per-directory|per-repo|global]`
 * (`sessionStrategy`). Both are built by {@linkcode registerChoice} from a
 * {@linkcode ChoiceCommand}: without a value they list the choices with the
 * current one marked, with one they check it and write the key.
 *
 * @module
 */

import type { HermesCommand } from "../../../../src/cli/mod.ts";
import type { HonchoSettings, RecallMode } from "../config.ts";
import {
  HonchoCliError,
  type HonchoCliScope,
  hostLabel,
  loadScopeConfig,
  printJson,
  resolveScope,
  runGuarded,
  targetProfileOf,
} from "./_common.ts";
import { parseChoice, sourceText, writeHostSettings } from "./_host_setting.ts";

/** The recall modes with what each does, in display order. */
export const RECALL_MODES: readonly (readonly [RecallMode, string])[] = [
  ["hybrid", "context injected before each turn, plus the five Honcho tools"],
  ["context", "context injected before each turn; no tools"],
  ["tools", "nothing injected; the model calls the Honcho tools"],
];

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

/** A command that shows or sets one setting chosen from a list. */
export interface ChoiceCommand {
  /** The command name (`mode`). */
  name: string;
  /** The host-block key, also the resolved setting (`recallMode`). */
  key: keyof HonchoSettings & string;
  /** The setting's title (`Recall mode`). */
  title: string;
  /** The choices' noun in messages (`modes`). */
  plural: string;
  /** The choices with what each does, in display order. */
  choices: readonly (readonly [string, string])[];
  /** Other spellings accepted for a choice. */
  aliases?: Readonly<Record<string, string>>;
  /** The width choice names are padded to. */
  width: number;
  /** The argument's help. */
  argument: string;
  /** The one-line summary. */
  summary: string;
  /** The help text. */
  description: string;
  /** The example that sets a value. */
  example: string;
}

/** `hermes honcho mode`. */
export const MODE_COMMAND: ChoiceCommand = {
  name: "mode",
  key: "recallMode",
  title: "Recall mode",
  plural: "modes",
  choices: RECALL_MODES,
  aliases: { auto: "hybrid" },
  width: 8,
  argument: "hybrid, context or tools (shows the current one when omitted)",
  summary: "Show or set the recall mode (hybrid, context, tools)",
  description:
    "Show the recall mode (the current one is marked) or set recallMode in this\n" +
    "profile's host block: hybrid (default) = injected context plus tools,\n" +
    "context = injected context only, tools = tools only.",
  example: "hermes honcho mode tools",
};

/** `hermes honcho strategy`. */
export const STRATEGY_COMMAND: ChoiceCommand = {
  name: "strategy",
  key: "sessionStrategy",
  title: "Session strategy",
  plural: "strategies",
  choices: SESSION_STRATEGIES,
  width: 13,
  argument:
    "per-session, per-directory, per-repo or global (shows the current one when omitted)",
  summary: "Show or set how Honcho sessions are named",
  description:
    "Show the session strategy (the current one is marked) or set\n" +
    "sessionStrategy in this profile's host block. A directory mapped with\n" +
    "'hermes honcho map' always uses its mapped name.",
  example: "hermes honcho strategy per-repo",
};

/**
 * Runs a choice command: shows the setting (or prints it as JSON), or sets
 * it in the host block.
 *
 * @param spec The command.
 * @param scope The profile and files.
 * @param value The value to set; shows the current one when absent.
 * @param options `--json`.
 * @returns `0`, `1` when the file cannot be written, `2` for an invalid value.
 *
 * @example
 * ```ts ignore
 * import { memoryCliIo } from "@hermes/memory/cli";
 * import { resolveScope } from "./_common.ts";
 * import { MODE_COMMAND, runChoice } from "./choice_commands.ts";
 * await runChoice(MODE_COMMAND, resolveScope(memoryCliIo()), "tools");
 * ```
 */
export async function runChoice(
  spec: ChoiceCommand,
  scope: HonchoCliScope,
  value: string | undefined,
  options: { json?: boolean } = {},
): Promise<number> {
  const { io } = scope;
  const config = await loadScopeConfig(scope);
  const label = hostLabel(config.hostKey);
  if (value === undefined) {
    const current = String(config[spec.key]);
    const source = config.sources[spec.key];
    if (options.json) {
      printJson(io, {
        hostKey: config.hostKey,
        key: spec.key,
        value: current,
        source,
        choices: spec.choices.map(([name, description]) => ({
          name,
          description,
        })),
      });
      return 0;
    }
    io.stdout(`${label}${spec.title}: ${current} (${sourceText(source)})\n`);
    for (const [name, what] of spec.choices) {
      io.stdout(
        `  ${name === current ? "*" : " "} ${
          name.padEnd(spec.width)
        } ${what}\n`,
      );
    }
    io.stdout(`Set it with 'hermes honcho ${spec.name} <${spec.name}>'.\n`);
    return 0;
  }
  if (options.json) {
    throw new HonchoCliError(
      "--json shows the setting; leave out the value, or drop --json to set it",
      2,
    );
  }
  const wanted = parseChoice(
    spec.title.toLowerCase(),
    spec.plural,
    value,
    spec.choices.map(([name]) => name),
    spec.aliases,
  );
  const { hostKey, path } = await writeHostSettings(scope, config, {
    [spec.key]: wanted,
  });
  io.stdout(
    `${label}${spec.title} set to ${wanted} (hosts.${hostKey}.${spec.key} in ${path}). Start a new session to use it.\n`,
  );
  return 0;
}

/**
 * Attaches a choice command to the `honcho` command.
 *
 * @param honcho The `hermes honcho` command.
 * @param spec The command.
 * @returns The command.
 *
 * @example
 * ```ts
 * import { createCommand, memoryCliIo } from "@hermes/memory/cli";
 * import { MODE_COMMAND, registerChoice } from "./choice_commands.ts";
 * import assert from "node:assert/strict";
 * const honcho = createCommand("honcho", { io: memoryCliIo(), exitCode: 0 });
 * assert.equal(registerChoice(honcho, MODE_COMMAND).name(), "mode");
 * ```
 */
export function registerChoice(
  honcho: HermesCommand,
  spec: ChoiceCommand,
): HermesCommand {
  const command = honcho.command(spec.name)
    .argument(`[${spec.name}]`, spec.argument)
    .summary(spec.summary)
    .description(spec.description)
    .option("--json", "Show the setting as JSON")
    .example(`hermes honcho ${spec.name}`)
    .example(spec.example);
  command.action((value: string | undefined, opts: { json?: boolean }) => {
    const io = command.context.io;
    return runGuarded(io, () =>
      runChoice(
        spec,
        resolveScope(io, { targetProfile: targetProfileOf(honcho) }),
        value,
        opts,
      ));
  });
  return command;
}

/**
 * Attaches `strategy` to the `honcho` command.
 *
 * @param honcho The `hermes honcho` command.
 * @returns The `strategy` command.
 */
export const registerStrategy = (honcho: HermesCommand): HermesCommand =>
  registerChoice(honcho, STRATEGY_COMMAND);

/**
 * Attaches `mode` to the `honcho` command.
 *
 * @param honcho The `hermes honcho` command.
 * @returns The `mode` command.
 */
export const registerMode = (honcho: HermesCommand): HermesCommand =>
  registerChoice(honcho, MODE_COMMAND);
