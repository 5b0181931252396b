/**
 * The commands that show or set host-block settings, built by one
 * {@linkcode registerSettingCommand} from a spec each:
 *
 * - a {@linkcode ChoiceCommand} shows or sets one setting chosen from a
 *   list: `hermes honcho mode [hybrid|context|tools]` (`recallMode`),
 *   `hermes honcho strategy [per-session|per-directory|per-repo|global]`
 *   (`sessionStrategy`);
 * - a {@linkcode FieldsCommand} shows several settings, one row each with
 *   its key and source, and sets them by flag: `hermes honcho tokens
 *   [--context N|uncapped] [--dialectic N]`, `hermes honcho peer [--user
 *   NAME] [--ai NAME] [--reasoning LEVEL]`.
 *
 * @module
 */

import { type HermesCommand, writeJson } from "../../../../src/cli/mod.ts";
import {
  type HonchoConfig,
  type HonchoSettings,
  REASONING_LEVELS,
  type RecallMode,
} from "../config.ts";
import { resolveAiPeerId } from "../peers.ts";
import { sanitizeId } from "../session_naming.ts";
import {
  checkHonchoId,
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
  printSaved,
  sourceText,
  writeHostSettings,
} from "./_host_setting.ts";

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
  /** The examples. */
  examples: readonly string[];
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
  examples: ["hermes honcho mode", "hermes honcho mode tools"],
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
  examples: ["hermes honcho strategy", "hermes honcho strategy per-repo"],
};

export interface FieldRow {
  /** The row's title (`Context budget`). */
  title: string;
  /** The host-block key, also the resolved setting (`contextTokens`). */
  key: keyof HonchoConfig & string;
  /** The value as shown (`1200 tokens`); `bare` = without `(key, source)`. */
  show(config: HonchoConfig): string | { bare: string };
  /** The value for `--json` (`null` when unset). @default {config[key]} */
  json?(config: HonchoConfig): unknown;
  /** The flag that sets it. */
  flag?: {
    /** The flag and its argument (`--context <n>`). */
    syntax: string;
    /** The option's property (`context`). */
    name: string;
    /** The flag's help. */
    help: string;
    /** Checks the text given; throws a usage error (exit 2). */
    parse(text: string): unknown;
    /** The stored value, decided on the file inside its lock. @default {value} */
    store?(value: unknown, file: Readonly<Record<string, unknown>>): unknown;
    /** The value as said after `set to`. @default {String(value)} */
    said?(value: unknown): string;
  };
}

/** A command that shows or sets several settings by flag. */
export interface FieldsCommand {
  /** The command name (`tokens`). */
  name: string;
  /** The one-line summary. */
  summary: string;
  /** The help text. */
  description: string;
  /** The examples. */
  examples: readonly string[];
  /** The rows, in display order. */
  rows: readonly FieldRow[];
  /** The line printed after the rows. */
  footer?: string;
  /** Offer `--json` (the rows as `{ hostKey, <key>: { value, source } }`). */
  json?: {
    /** The message when `--json` is given with values to set. */
    conflict: string;
  };
}

const MAX_TOKENS = 1_000_000;

/**
 * Parses a positive whole number given on the command line.
 *
 * @param flag The flag, for the message.
 * @param text The value.
 * @returns The number.
 * @throws {HonchoCliError} When it is not a whole number from 1 to 1000000 (exit 2).
 *
 * @example
 * ```ts
 * import { parsePositiveInt } from "./setting_commands.ts";
 * import assert from "node:assert/strict";
 * assert.equal(parsePositiveInt("--context", "1200"), 1200);
 * assert.throws(() => parsePositiveInt("--context", "-3"));
 * ```
 */
export function parsePositiveInt(flag: string, text: string): number {
  const trimmed = text.trim();
  const n = /^\d+$/.test(trimmed) ? Number(trimmed) : Number.NaN;
  if (!Number.isSafeInteger(n) || n < 1 || n > MAX_TOKENS) {
    throw new HonchoCliError(
      `Cannot use ${flag} '${text}': give a whole number from 1 to ${MAX_TOKENS}${
        flag === "--context" ? ", or 'uncapped'" : ""
      }`,
      2,
    );
  }
  return n;
}

// 0 (what 'uncapped' writes) and below cap nothing, as in Hermes.
const contextCap = (config: HonchoConfig): number | null =>
  config.contextTokens === undefined || config.contextTokens <= 0
    ? null
    : config.contextTokens;

const DIALECTIC_CAP: FieldRow = {
  title: "Dialectic cap",
  key: "dialecticMaxChars",
  show: (config) => `${config.dialecticMaxChars} characters`,
};

/** `hermes honcho tokens`. */
export const TOKENS_COMMAND: FieldsCommand = {
  name: "tokens",
  summary: "Show or set the context budget and the dialectic cap",
  description:
    "Show or set the injection budget (contextTokens; default uncapped) and\n" +
    "the cap on injected dialectic text (dialecticMaxChars; default 600) in\n" +
    "this profile's host block.",
  examples: [
    "hermes honcho tokens",
    "hermes honcho tokens --context 1200 --dialectic 800",
    "hermes honcho tokens --context uncapped",
  ],
  rows: [
    {
      title: "Context budget",
      key: "contextTokens",
      show: (config) => {
        const cap = contextCap(config);
        return cap === null ? "uncapped" : `${cap} tokens`;
      },
      json: contextCap,
      flag: {
        syntax: "--context <n>",
        name: "context",
        help: "contextTokens: tokens per injection, or 'uncapped'",
        parse: (text) =>
          ["uncapped", "0", "none"].includes(text.trim().toLowerCase())
            ? null
            : parsePositiveInt("--context", text),
        // A root value would still apply once the host key is gone: pin 0.
        store: (value, file) =>
          value !== null ? value : file.contextTokens != null ? 0 : undefined,
        said: (value) => value === null ? "uncapped" : `${value} tokens`,
      },
    },
    {
      ...DIALECTIC_CAP,
      flag: {
        syntax: "--dialectic <n>",
        name: "dialectic",
        help: "dialecticMaxChars: characters of dialectic text",
        parse: (text) => parsePositiveInt("--dialectic", text),
        said: (value) => `${value} characters`,
      },
    },
  ],
  footer:
    "Set them with 'hermes honcho tokens --context N|uncapped --dialectic N'.",
  json: {
    conflict:
      "--json shows the settings; leave out --context and --dialectic, or drop --json to set them",
  },
};

/** `hermes honcho peer`. */
export const PEER_COMMAND: FieldsCommand = {
  name: "peer",
  summary: "Show or set the user peer, AI peer and reasoning level",
  description:
    "Show the user peer, the AI peer, the dialectic reasoning level and its\n" +
    "caps, or set peerName, aiPeer and dialecticReasoningLevel in this\n" +
    "profile's host block. Peer names use letters, digits, '_' and '-'.",
  examples: [
    "hermes honcho peer",
    "hermes honcho peer --user alice --reasoning medium",
  ],
  rows: [
    {
      title: "User peer",
      key: "peerName",
      show: (config) =>
        config.peerName
          ? sanitizeId(config.peerName)
          : { bare: "(none: set one with 'hermes honcho peer --user NAME')" },
      flag: {
        syntax: "--user <name>",
        name: "user",
        help: "peerName: the user's peer",
        parse: (text) => checkHonchoId("user peer name", text),
      },
    },
    {
      title: "AI peer",
      key: "aiPeer",
      show: (config) => resolveAiPeerId(config),
      flag: {
        syntax: "--ai <name>",
        name: "ai",
        help: "aiPeer: this profile's AI peer",
        parse: (text) => checkHonchoId("AI peer name", text),
      },
    },
    {
      title: "Reasoning level",
      key: "dialecticReasoningLevel",
      show: (config) => config.dialecticReasoningLevel,
      flag: {
        syntax: "--reasoning <level>",
        name: "reasoning",
        help: `dialecticReasoningLevel: ${REASONING_LEVELS.join(", ")}`,
        parse: (text) =>
          parseChoice("reasoning level", "levels", text, REASONING_LEVELS),
      },
    },
    {
      title: "Reasoning cap",
      key: "reasoningLevelCap",
      show: (config) => config.reasoningLevelCap,
    },
    DIALECTIC_CAP,
  ],
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
 * import { MODE_COMMAND, runChoice } from "./setting_commands.ts";
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
      writeJson(io, {
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
 * Runs a fields command: shows the rows (or prints them as JSON), or sets
 * the values given.
 *
 * @param spec The command.
 * @param scope The profile and files.
 * @param options The flags' values, by option name (and `json`).
 * @returns `0`, `1` when the file cannot be written, `2` for an invalid value.
 *
 * @example
 * ```ts ignore
 * import { memoryCliIo } from "@hermes/memory/cli";
 * import { resolveScope } from "./_common.ts";
 * import { runFields, TOKENS_COMMAND } from "./setting_commands.ts";
 * await runFields(TOKENS_COMMAND, resolveScope(memoryCliIo()), { context: "1200" });
 * ```
 */
export async function runFields(
  spec: FieldsCommand,
  scope: HonchoCliScope,
  options: Record<string, string | boolean | undefined>,
): Promise<number> {
  const { io } = scope;
  const config = await loadScopeConfig(scope);
  const label = hostLabel(config.hostKey);
  const given = spec.rows.filter((row) =>
    row.flag !== undefined && options[row.flag.name] !== undefined
  );
  if (options.json && given.length > 0) {
    throw new HonchoCliError(spec.json!.conflict, 2);
  }
  if (given.length === 0 && options.json) {
    const out: Record<string, unknown> = { hostKey: config.hostKey };
    for (const row of spec.rows) {
      out[row.key] = {
        value: row.json ? row.json(config) : config[row.key],
        source: config.sources[row.key as keyof HonchoConfig["sources"]],
      };
    }
    writeJson(io, out);
    return 0;
  }
  if (given.length === 0) {
    for (const row of spec.rows) {
      const shown = row.show(config);
      const source = config.sources[row.key as keyof HonchoConfig["sources"]];
      const value = typeof shown === "string"
        ? `${shown} (${row.key}, ${sourceText(source)})`
        : shown.bare;
      io.stdout(`${label}${`${row.title}:`.padEnd(17)}${value}\n`);
    }
    if (spec.footer) io.stdout(`${spec.footer}\n`);
    return 0;
  }
  const values = given.map((row) =>
    [row, row.flag!.parse(String(options[row.flag!.name]))] as const
  );
  const written = await writeHostSettings(
    scope,
    config,
    (_block, file) =>
      Object.fromEntries(
        values.map(([row, value]) => [
          row.key,
          row.flag!.store ? row.flag!.store(value, file) : value,
        ]),
      ),
  );
  for (const [row, value] of values) {
    io.stdout(
      `${label}${row.title} set to ${
        row.flag!.said ? row.flag!.said(value) : String(value)
      }\n`,
    );
  }
  printSaved(io, written);
  return 0;
}

/** The commands, in help order. */
export const SETTING_COMMANDS: readonly (ChoiceCommand | FieldsCommand)[] = [
  STRATEGY_COMMAND,
  PEER_COMMAND,
  MODE_COMMAND,
  TOKENS_COMMAND,
];

/**
 * Attaches one setting command to the `honcho` command.
 *
 * @param honcho The `hermes honcho` command.
 * @param spec The command.
 * @returns The command.
 *
 * @example
 * ```ts
 * import { createCommand, memoryCliIo } from "@hermes/memory/cli";
 * import { MODE_COMMAND, registerSettingCommand } from "./setting_commands.ts";
 * import assert from "node:assert/strict";
 * const honcho = createCommand("honcho", { io: memoryCliIo(), exitCode: 0 });
 * assert.equal(registerSettingCommand(honcho, MODE_COMMAND).name(), "mode");
 * ```
 */
export function registerSettingCommand(
  honcho: HermesCommand,
  spec: ChoiceCommand | FieldsCommand,
): HermesCommand {
  const command = honcho.command(spec.name);
  const choice = "choices" in spec ? spec : undefined;
  if (choice) command.argument(`[${choice.name}]`, choice.argument);
  command.summary(spec.summary).description(spec.description);
  if (choice) command.option("--json", "Show the setting as JSON");
  for (const row of choice ? [] : (spec as FieldsCommand).rows) {
    if (row.flag) command.option(row.flag.syntax, row.flag.help);
  }
  if (!choice && (spec as FieldsCommand).json) {
    command.option("--json", "Show the settings as JSON");
  }
  for (const example of spec.examples) command.example(example);
  command.action((...args: unknown[]) => {
    const io = command.context.io;
    // Inside the guard: a bad --target-profile is a usage error (exit 2).
    return runGuarded(io, () => {
      const scope = resolveScope(io, {
        targetProfile: targetProfileOf(honcho),
      });
      return choice
        ? runChoice(
          choice,
          scope,
          args[0] as string | undefined,
          args[1] as { json?: boolean },
        )
        : runFields(
          spec as FieldsCommand,
          scope,
          args[0] as Record<string, string | boolean | undefined>,
        );
    });
  });
  return command;
}

/**
 * Attaches `strategy`, `peer`, `mode` and `tokens` to the `honcho` command.
 *
 * @param honcho The `hermes honcho` command.
 */
export function registerSettingCommands(honcho: HermesCommand): void {
  for (const spec of SETTING_COMMANDS) registerSettingCommand(honcho, spec);
}
