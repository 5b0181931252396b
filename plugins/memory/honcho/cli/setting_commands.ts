/** `hermes honcho mode|strategy|tokens|peer`: one generic show/set command, a spec each. @module */

import { type HermesCommand, writeJson } from "../../../../src/cli/mod.ts";
import type { HonchoConfig } from "../config/config.ts";
import { REASONING_LEVELS } from "../config/_lookup.ts";
import type { HonchoSettings } from "../config/settings_table.ts";
import { resolveAiPeerId } from "../session/peers.ts";
import { isRecord, sanitizeId } from "../_util.ts";
import {
  checkHonchoId,
  HonchoCliError,
  type HonchoCliScope,
  hostLabel,
  loadScopeConfig,
  reportWrite,
  requireReadableConfig,
  writeHonchoFile,
  writeHostKey,
} from "./_common.ts";
import { scopedAction } from "./_action.ts";

/** The recall modes with what each does, in display order. */
export const RECALL_MODES: readonly (readonly [string, string])[] = [
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

/** One setting a command shows or sets. */
interface Row {
  field: keyof HonchoSettings;
  title: string;
  /** `bare` = printed without `(field, source)`. */
  show?: (config: HonchoConfig) => string | { bare: string };
  json?: (config: HonchoConfig) => unknown;
  flag?: {
    /** `--context <n>`: the option's property is the word after `--`. */
    syntax: string;
    help: string;
    /** Throws a usage error (exit 2). */
    parse: (text: string) => unknown;
    /** The stored value, decided on the file inside its lock. */
    store?: (
      value: unknown,
      file: Readonly<Record<string, unknown>>,
    ) => unknown;
    said?: (value: unknown) => string;
  };
}

interface SettingCommand {
  name: string;
  summary: string;
  description: string;
  examples: readonly string[];
  rows: readonly Row[];
  /** Set by argument, one of these choices (`mode tools`), instead of by flags. */
  choice?: {
    plural: string;
    choices: readonly (readonly [string, string])[];
    aliases?: Readonly<Record<string, string>>;
    width: number;
    argument: string;
  };
  footer?: string;
  /** Offer `--json`; this message refuses it with values to set. */
  jsonConflict?: string;
}

const MAX_TOKENS = 1_000_000;

function parsePositiveInt(flag: string, text: string): number {
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

/** Checks a value typed on the command line against its choices (trimmed, any case). */
function parseChoice(
  what: string,
  plural: string,
  value: string,
  choices: readonly string[],
  aliases: Readonly<Record<string, string>> = {},
): string {
  const lower = value.trim().toLowerCase();
  const wanted = Object.hasOwn(aliases, lower) ? aliases[lower]! : lower;
  if (!choices.includes(wanted)) {
    throw new HonchoCliError(
      `Cannot set ${what} '${value}': valid ${plural} are ${
        choices.join(", ")
      }`,
      2,
    );
  }
  return wanted;
}

/** Where a value came from, for one-line reports. */
export function sourceText(source: string): string {
  return source === "host" ? "host block" : source;
}

/** Writes keys into the host block that was read (computed inside the lock when a function). */
export async function writeHostSettings(
  scope: HonchoCliScope,
  config: HonchoConfig,
  host:
    | Record<string, unknown>
    | ((
      block: Readonly<Record<string, unknown>>,
      file: Readonly<Record<string, unknown>>,
    ) => Record<string, unknown>),
): Promise<{ hostKey: string; path: string }> {
  requireReadableConfig(config);
  const hostKey = writeHostKey(config);
  const written = await writeHonchoFile(
    config,
    scope.hermesHome,
    typeof host === "function"
      ? (file) => {
        const hosts = isRecord(file.hosts) ? file.hosts : {};
        const block = isRecord(hosts[hostKey]) ? hosts[hostKey] : {};
        return { host: host(block, file), hostKey };
      }
      : { host, hostKey },
  );
  await reportWrite(scope, written);
  return { hostKey, path: written.path };
}

// 0 (what 'uncapped' writes) and below cap nothing, as in Hermes.
const contextCap = (config: HonchoConfig): number | null =>
  config.contextTokens === undefined || config.contextTokens <= 0
    ? null
    : config.contextTokens;

const DIALECTIC_CAP: Row = {
  field: "dialecticMaxChars",
  title: "Dialectic cap",
  show: (config) => `${config.dialecticMaxChars} characters`,
};

const COMMANDS: readonly SettingCommand[] = [
  {
    name: "strategy",
    summary: "Show or set how Honcho sessions are named",
    description:
      "Show the session strategy (the current one is marked) or set\n" +
      "sessionStrategy in this profile's host block. A directory mapped with\n" +
      "'hermes honcho map' always uses its mapped name.",
    examples: ["hermes honcho strategy", "hermes honcho strategy per-repo"],
    rows: [{ field: "sessionStrategy", title: "Session strategy" }],
    choice: {
      plural: "strategies",
      choices: SESSION_STRATEGIES,
      width: 13,
      argument:
        "per-session, per-directory, per-repo or global (shows the current one when omitted)",
    },
  },
  {
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
        field: "peerName",
        title: "User peer",
        show: (config) =>
          config.peerName
            ? sanitizeId(config.peerName)
            : { bare: "(none: set one with 'hermes honcho peer --user NAME')" },
        flag: {
          syntax: "--user <name>",
          help: "peerName: the user's peer",
          parse: (text) => checkHonchoId("user peer name", text),
        },
      },
      {
        field: "aiPeer",
        title: "AI peer",
        show: resolveAiPeerId,
        flag: {
          syntax: "--ai <name>",
          help: "aiPeer: this profile's AI peer",
          parse: (text) => checkHonchoId("AI peer name", text),
        },
      },
      {
        field: "dialecticReasoningLevel",
        title: "Reasoning level",
        flag: {
          syntax: "--reasoning <level>",
          help: `dialecticReasoningLevel: ${REASONING_LEVELS.join(", ")}`,
          parse: (text) =>
            parseChoice("reasoning level", "levels", text, REASONING_LEVELS),
        },
      },
      { field: "reasoningLevelCap", title: "Reasoning cap" },
      DIALECTIC_CAP,
    ],
  },
  {
    name: "mode",
    summary: "Show or set the recall mode (hybrid, context, tools)",
    description:
      "Show the recall mode (the current one is marked) or set recallMode in this\n" +
      "profile's host block: hybrid (default) = injected context plus tools,\n" +
      "context = injected context only, tools = tools only.",
    examples: ["hermes honcho mode", "hermes honcho mode tools"],
    rows: [{ field: "recallMode", title: "Recall mode" }],
    choice: {
      plural: "modes",
      choices: RECALL_MODES,
      aliases: { auto: "hybrid" },
      width: 8,
      argument: "hybrid, context or tools (shows the current one when omitted)",
    },
  },
  {
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
        field: "contextTokens",
        title: "Context budget",
        show: (config) => {
          const cap = contextCap(config);
          return cap === null ? "uncapped" : `${cap} tokens`;
        },
        json: contextCap,
        flag: {
          syntax: "--context <n>",
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
          help: "dialecticMaxChars: characters of dialectic text",
          parse: (text) => parsePositiveInt("--dialectic", text),
          said: (value) => `${value} characters`,
        },
      },
    ],
    footer:
      "Set them with 'hermes honcho tokens --context N|uncapped --dialectic N'.",
    jsonConflict:
      "--json shows the settings; leave out --context and --dialectic, or drop --json to set them",
  },
];

const optionName = (row: Row): string =>
  row.flag!.syntax.split(" ")[0]!.slice(2);

async function showOrSetChoice(
  spec: SettingCommand,
  scope: HonchoCliScope,
  value: string | undefined,
  json: boolean,
): Promise<number> {
  const { io } = scope;
  const { field, title } = spec.rows[0]!;
  const choice = spec.choice!;
  const config = await loadScopeConfig(scope);
  const label = hostLabel(config.hostKey);
  if (value === undefined) {
    const current = String(config[field]);
    const source = config.sources[field];
    if (json) {
      writeJson(io, {
        hostKey: config.hostKey,
        key: field,
        value: current,
        source,
        choices: choice.choices.map(([name, description]) => ({
          name,
          description,
        })),
      });
      return 0;
    }
    io.stdout(`${label}${title}: ${current} (${sourceText(source)})\n`);
    for (const [name, what] of choice.choices) {
      const mark = name === current ? "*" : " ";
      io.stdout(`  ${mark} ${name.padEnd(choice.width)} ${what}\n`);
    }
    io.stdout(`Set it with 'hermes honcho ${spec.name} <${spec.name}>'.\n`);
    return 0;
  }
  if (json) {
    throw new HonchoCliError(
      "--json shows the setting; leave out the value, or drop --json to set it",
      2,
    );
  }
  const wanted = parseChoice(
    title.toLowerCase(),
    choice.plural,
    value,
    choice.choices.map(([name]) => name),
    choice.aliases,
  );
  const { hostKey, path } = await writeHostSettings(scope, config, {
    [field]: wanted,
  });
  io.stdout(
    `${label}${title} set to ${wanted} (hosts.${hostKey}.${field} in ${path}). Start a new session to use it.\n`,
  );
  return 0;
}

async function showOrSetRows(
  spec: SettingCommand,
  scope: HonchoCliScope,
  options: Record<string, unknown>,
): Promise<number> {
  const { io } = scope;
  const config = await loadScopeConfig(scope);
  const label = hostLabel(config.hostKey);
  const given = spec.rows.filter((row) =>
    row.flag !== undefined && options[optionName(row)] !== undefined
  );
  if (options.json && given.length > 0) {
    throw new HonchoCliError(spec.jsonConflict!, 2);
  }
  if (given.length === 0) {
    if (options.json) {
      const out: Record<string, unknown> = { hostKey: config.hostKey };
      for (const row of spec.rows) {
        out[row.field] = {
          value: row.json ? row.json(config) : config[row.field],
          source: config.sources[row.field],
        };
      }
      writeJson(io, out);
      return 0;
    }
    for (const row of spec.rows) {
      const shown = row.show?.(config) ?? String(config[row.field]);
      const value = typeof shown === "string"
        ? `${shown} (${row.field}, ${sourceText(config.sources[row.field])})`
        : shown.bare;
      io.stdout(`${label}${`${row.title}:`.padEnd(17)}${value}\n`);
    }
    if (spec.footer) io.stdout(`${spec.footer}\n`);
    return 0;
  }
  const values = given.map((row) =>
    [row, row.flag!.parse(String(options[optionName(row)]))] as const
  );
  const written = await writeHostSettings(
    scope,
    config,
    (_block, file) =>
      Object.fromEntries(
        values.map(([row, value]) => [
          row.field,
          row.flag!.store ? row.flag!.store(value, file) : value,
        ]),
      ),
  );
  for (const [row, value] of values) {
    io.stdout(
      `${label}${row.title} set to ${
        row.flag!.said?.(value) ?? String(value)
      }\n`,
    );
  }
  io.stdout(
    `Saved in hosts.${written.hostKey} of ${written.path}. Start a new session to use it.\n`,
  );
  return 0;
}

export function registerSettingCommands(honcho: HermesCommand): void {
  for (const spec of COMMANDS) {
    const command = honcho.command(spec.name);
    const { choice } = spec;
    if (choice) {
      command.argument(`[${spec.name}]`, choice.argument, {
        suggest: choice.choices.map(([name]) => name),
      });
    }
    command.summary(spec.summary).description(spec.description);
    for (const row of spec.rows) {
      if (row.flag) command.option(row.flag.syntax, row.flag.help);
    }
    if (choice) command.option("--json", "Show the setting as JSON");
    else if (spec.jsonConflict) {
      command.option("--json", "Show the settings as JSON");
    }
    for (const example of spec.examples) command.example(example);
    scopedAction(
      honcho,
      command,
      (scope, ...args: unknown[]) =>
        choice
          ? showOrSetChoice(
            spec,
            scope,
            args[0] as string | undefined,
            Boolean((args[1] as { json?: boolean }).json),
          )
          : showOrSetRows(spec, scope, args[0] as Record<string, unknown>),
    );
  }
}
