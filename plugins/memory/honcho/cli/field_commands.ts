/**
 * The commands that show or set several host-block settings by flag:
 * `hermes honcho tokens [--context N|uncapped] [--dialectic N]`
 * (`contextTokens`, `dialecticMaxChars`) and `hermes honcho peer [--user
 * NAME] [--ai NAME] [--reasoning LEVEL]` (`peerName`, `aiPeer`,
 * `dialecticReasoningLevel`). Both are built by {@linkcode registerFields}
 * from a {@linkcode FieldsCommand}: without flags they print one row per
 * setting with its key and source; with flags they check each value, write
 * the keys, and say what was set.
 *
 * @module
 */

import type { HermesCommand } from "../../../../src/cli/mod.ts";
import { type HonchoConfig, REASONING_LEVELS } from "../config.ts";
import { resolveAiPeerId } from "../peers.ts";
import { sanitizeId } from "../session_naming.ts";
import {
  checkHonchoId,
  HonchoCliError,
  type HonchoCliScope,
  hostLabel,
  loadScopeConfig,
  printJson,
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

/** One setting a {@linkcode FieldsCommand} shows, and maybe sets. */
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
 * import { parsePositiveInt } from "./field_commands.ts";
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
 * import { runFields, TOKENS_COMMAND } from "./field_commands.ts";
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
    printJson(io, out);
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

/**
 * Attaches a fields command to the `honcho` command.
 *
 * @param honcho The `hermes honcho` command.
 * @param spec The command.
 * @returns The command.
 *
 * @example
 * ```ts
 * import { createCommand, memoryCliIo } from "@hermes/memory/cli";
 * import { registerFields, TOKENS_COMMAND } from "./field_commands.ts";
 * import assert from "node:assert/strict";
 * const honcho = createCommand("honcho", { io: memoryCliIo(), exitCode: 0 });
 * assert.equal(registerFields(honcho, TOKENS_COMMAND).name(), "tokens");
 * ```
 */
export function registerFields(
  honcho: HermesCommand,
  spec: FieldsCommand,
): HermesCommand {
  const command = honcho.command(spec.name)
    .summary(spec.summary)
    .description(spec.description);
  for (const row of spec.rows) {
    if (row.flag) command.option(row.flag.syntax, row.flag.help);
  }
  if (spec.json) command.option("--json", "Show the settings as JSON");
  for (const example of spec.examples) command.example(example);
  command.action((opts: Record<string, string | boolean | undefined>) => {
    const io = command.context.io;
    return runGuarded(io, () =>
      runFields(
        spec,
        resolveScope(io, { targetProfile: targetProfileOf(honcho) }),
        opts,
      ));
  });
  return command;
}

/**
 * Attaches `peer` to the `honcho` command.
 *
 * @param honcho The `hermes honcho` command.
 * @returns The `peer` command.
 */
export const registerPeer = (honcho: HermesCommand): HermesCommand =>
  registerFields(honcho, PEER_COMMAND);

/**
 * Attaches `tokens` to the `honcho` command.
 *
 * @param honcho The `hermes honcho` command.
 * @returns The `tokens` command.
 */
export const registerTokens = (honcho: HermesCommand): HermesCommand =>
  registerFields(honcho, TOKENS_COMMAND);
