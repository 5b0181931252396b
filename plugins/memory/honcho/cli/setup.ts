/** `hermes honcho setup` (and `hermes memory setup honcho`): the setup walker with Honcho's questions (plugins/memory/honcho/SPEC.md §12). @module */

import {
  type CliIo,
  type HermesCommand,
  type SetupField,
  walkSetupFields,
} from "../../../../src/cli/mod.ts";
import { type HermesConfig, maskSecret } from "../../../../mod.ts";
import { cleanBaseUrl, isLocalHonchoUrl } from "../client/connection.ts";
import type { HonchoConfig } from "../config/config.ts";
import { type HonchoSettings, SETTINGS } from "../config/settings_table.ts";
import { HONCHO_TUNING_DEFAULTS } from "../config/schema.ts";
import {
  checkHonchoId,
  HonchoCliError,
  type HonchoCliScope,
  profileHomeUnder,
  profileLabel,
  resolveScope,
  runGuarded,
  writeHostKey,
} from "./_common.ts";
import { scopedAction } from "./_action.ts";
import {
  checkBaseUrl,
  CLOUD_URL,
  DEFAULT_LOCAL_URL,
  loadSetupConfig,
  requireConfigYaml,
  saveSetup,
  type SetupPlan,
} from "./_setup_save.ts";
import { sanitizeId } from "../_util.ts";

const HONCHO_KEY_URL = "https://app.honcho.dev";

export type SetupOptions = { [K in keyof typeof FLAGS]?: string } & {
  apiKeyStdin?: boolean;
  apiKeyEnv?: boolean;
  yes?: boolean;
  skipConnectionTest?: boolean;
};

export interface SetupDeps {
  /** Reads all of standard input (for `--api-key-stdin`). */
  readStdin?: () => Promise<string>;
}

type Choices = readonly (readonly [string, string?])[];

const tableUi = (field: keyof HonchoSettings) =>
  SETTINGS.find((s) => s.field === field)?.ui;
const tableChoices = (field: keyof HonchoSettings): Choices =>
  tableUi(field)?.choices ?? [];

const WRITE_FREQUENCIES: Choices = [
  ["async", "write each turn in the background (default)"],
  ["turn", "write each turn before the reply returns"],
  ["session", "write everything at the end of the session"],
];

const choiceOptions = (choices: Choices) =>
  choices.map(([value, description]) => ({ value, label: value, description }));

const wholeNumber = (text: string, max: number): number | undefined => {
  const t = text.trim();
  return /^\d+$/.test(t) && Number(t) >= 1 && Number(t) <= max
    ? Number(t)
    : undefined;
};

function parseWrite(value: string): string | number | undefined {
  const text = value.trim().toLowerCase();
  return wholeNumber(text, Number.MAX_SAFE_INTEGER) ??
    (WRITE_FREQUENCIES.some(([name]) => name === text) ? text : undefined);
}

function parseTokens(value: string): number | "uncapped" | undefined {
  const text = value.trim().toLowerCase();
  if (text === "uncapped" || text === "none" || text === "0") return "uncapped";
  return wholeNumber(text, 1_000_000);
}

/** A value flag: its help, and `check` giving `undefined` for a bad value (`why` says what is valid) or throwing its own message. */
interface Flag {
  arg: string;
  help: string;
  check: (text: string) => unknown;
  why?: string;
}

/** A flag that takes one of `choices` (or an alias of one). */
function choiceFlag(
  arg: string,
  help: string,
  choices: Choices,
  aliases: Record<string, string> = {},
): Flag {
  const names = choices.map(([name]) => name);
  return {
    arg,
    help,
    check: (text) => {
      const wanted = text.trim().toLowerCase();
      const name = aliases[wanted] ?? wanted;
      return names.includes(name) ? name : undefined;
    },
    why: `valid values are ${names.join(", ")}`,
  };
}

const id = (what: string) => (text: string) => checkHonchoId(what, text);
const kebab = (option: string) =>
  option.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);

/** The value flags (`--base-url` sets `baseUrl`): each answers its question and is checked before anything is asked. */
const FLAGS = {
  deployment: choiceFlag("kind", "cloud or local (self-hosted)", [
    ["cloud"],
    ["local"],
  ], { "self-hosted": "local", selfhosted: "local" }),
  baseUrl: {
    arg: "url",
    help: "Self-hosted server URL (default http://localhost:8000)",
    check: checkBaseUrl,
  },
  peerName: {
    arg: "name",
    help: "peerName: your peer (default $USER)",
    check: id("peer name"),
  },
  aiPeer: {
    arg: "name",
    help: "aiPeer: the assistant's peer (default hermes)",
    check: id("AI peer name"),
  },
  workspace: {
    arg: "id",
    help: "workspace (default hermes)",
    check: id("workspace"),
  },
  recallMode: choiceFlag(
    "mode",
    "hybrid, context or tools (default hybrid)",
    tableChoices("recallMode"),
    { auto: "hybrid" },
  ),
  observationMode: choiceFlag(
    "mode",
    "directional or unified",
    tableChoices("observationMode"),
    { shared: "unified", separate: "directional", cross: "directional" },
  ),
  writeFrequency: {
    arg: "when",
    help: "async, turn, session or N turns (default async)",
    check: parseWrite,
    why: "valid values are async, turn, session, or a number of turns",
  },
  contextTokens: {
    arg: "n",
    help: "Context budget in tokens, or 'uncapped' (default)",
    check: parseTokens,
    why: "give a whole number from 1 to 1000000, or 'uncapped'",
  },
  dialecticCadence: {
    arg: "n",
    help: "Turns between dialectic calls (default 2)",
    check: (text) => wholeNumber(text, 1000),
    why: "give a whole number of turns from 1 to 1000",
  },
  reasoningLevel: choiceFlag(
    "level",
    `${
      tableChoices("dialecticReasoningLevel").map(([n]) => n).join(", ")
    } (default low)`,
    tableChoices("dialecticReasoningLevel"),
  ),
  sessionStrategy: choiceFlag(
    "strategy",
    "per-session (what setup writes), per-directory (used while the key is unset), per-repo or global",
    tableChoices("sessionStrategy"),
  ),
} satisfies Record<string, Flag>;

/** The flags as answers of the walk, by field key; a bad value is a usage error. */
function givenByFlags(options: SetupOptions): Record<string, unknown> {
  const given: Record<string, unknown> = {};
  for (const [option, { check, why }] of Object.entries<Flag>(FLAGS)) {
    const text = options[option as keyof SetupOptions];
    if (typeof text !== "string") continue;
    const value = check(text);
    if (value === undefined) {
      throw new HonchoCliError(
        `Cannot use --${kebab(option)} '${text}': ${why}`,
        2,
      );
    }
    given[option === "reasoningLevel" ? "dialecticReasoningLevel" : option] =
      value;
  }
  if (given.deployment === "cloud" && given.baseUrl !== undefined) {
    throw new HonchoCliError(
      "Cannot use --base-url with --deployment cloud: the cloud server is https://api.honcho.dev; use --deployment local for your own server",
      2,
    );
  }
  if (given.deployment === undefined && given.baseUrl !== undefined) {
    given.deployment = "local";
  }
  if (typeof given.writeFrequency === "number") {
    given.writeEvery = given.writeFrequency;
    given.writeFrequency = "every-n";
  }
  return given;
}

/** A parser that rejects what `parse` cannot read, with `message`. */
const must =
  (parse: (text: string) => unknown, message: string) => (text: string) => {
    const value = parse(text);
    if (value === undefined) throw new Error(message);
    return value;
  };

const fromFile = (config: HonchoConfig, field: keyof HonchoConfig["sources"]) =>
  ["host", "root"].includes(config.sources[field] as string);

/** Honcho's setup questions in order, each with the value it has now as its default: this profile's settings, else the wizard's defaults for a new setup. */
function setupFields(config: HonchoConfig, io: CliIo): SetupField[] {
  const existingUrl = config.baseUrl ? cleanBaseUrl(config.baseUrl) : undefined;
  const existingLocal = existingUrl !== undefined && existingUrl !== CLOUD_URL;
  const user = io.env("USER")?.trim();
  const hostKey = config.hostBlock.apiKey;
  const written = String(config.writeFrequency);
  const numeric = /^\d+$/.test(written);
  // Wizard defaults apply to new setups only: re-running setup changes nothing by itself.
  const fresh = !config.configFileExists;
  const tuning = (field: "dialecticCadence" | "sessionStrategy") =>
    fromFile(config, field) || !fresh
      ? config[field]
      : HONCHO_TUNING_DEFAULTS[field];
  const pick = (
    field: keyof HonchoSettings,
    current: unknown,
    prompt = tableUi(field)?.label ?? field,
  ): SetupField => ({
    key: field,
    prompt,
    options: choiceOptions(tableChoices(field)),
    default: current,
  });
  return [
    {
      key: "deployment",
      prompt: "Where is your Honcho server?",
      options: [
        {
          value: "cloud",
          label: "Honcho cloud (api.honcho.dev, needs an API key)",
        },
        {
          value: "local",
          label: "Self-hosted (your own server's base URL, optional key)",
        },
      ],
      default: existingLocal ? "local" : "cloud",
    },
    {
      key: "apiKey",
      when: { deployment: "cloud" },
      secret: true,
      required: true,
      prompt: "Honcho API key",
      note: `Get an API key at ${HONCHO_KEY_URL}`,
      default: (config.apiKeyInFile ? config.apiKey : undefined) ??
        envKey(config, io),
    },
    {
      key: "baseUrl",
      when: { deployment: "local" },
      prompt: "Base URL of your Honcho server",
      default: existingLocal ? existingUrl : DEFAULT_LOCAL_URL,
      parse: checkBaseUrl,
    },
    {
      key: "apiKey",
      when: { deployment: "local" },
      secret: true,
      prompt: "API key for this server",
      default: typeof hostKey === "string" && hostKey ? hostKey : undefined,
    },
    {
      key: "peerName",
      prompt: "Your name as a Honcho peer (peerName)",
      default: config.peerName ??
        (user && /^[A-Za-z0-9_-]+$/.test(user) ? user : undefined),
      parse: id("peer name"),
    },
    {
      key: "aiPeer",
      prompt: "The assistant's peer (aiPeer)",
      default: fromFile(config, "aiPeer")
        ? config.aiPeer
        : config.profile === "default" || config.profile === "custom"
        ? "hermes"
        : sanitizeId(config.profile),
      parse: id("AI peer name"),
    },
    {
      key: "workspace",
      prompt: tableUi("workspaceId")?.label ?? "workspaceId",
      default: fromFile(config, "workspaceId") ? config.workspaceId : "hermes",
      parse: id("workspace"),
    },
    pick("observationMode", config.observationMode),
    {
      key: "writeFrequency",
      prompt: "When are turns written to Honcho?",
      options: [
        ...choiceOptions(WRITE_FREQUENCIES),
        {
          value: "every-n",
          label: "every N turns",
          description: "write after every N turns",
        },
      ],
      default: numeric ? "every-n" : written,
    },
    {
      key: "writeEvery",
      when: { writeFrequency: "every-n" },
      prompt: "Write every how many turns?",
      default: numeric ? written : "3",
      parse: must(
        (text) => wholeNumber(text, 1000),
        "Give a whole number of turns from 1 to 1000",
      ),
    },
    pick("recallMode", config.recallMode),
    {
      key: "contextTokens",
      prompt: "Context budget in tokens per turn ('uncapped' for no limit)",
      default: config.contextTokens ?? "uncapped",
      parse: must(
        parseTokens,
        "Give a whole number from 1 to 1000000, or 'uncapped'",
      ),
    },
    {
      key: "dialecticCadence",
      prompt: "Dialectic cadence (turns between reasoning calls)",
      default: tuning("dialecticCadence"),
      parse: (text, out) => {
        const n = wholeNumber(text, 1000);
        if (n === undefined) {
          out.stdout("Not a whole number of turns: using 2\n");
        }
        return n ?? 2;
      },
    },
    pick(
      "dialecticReasoningLevel",
      config.dialecticReasoningLevel,
      "Dialectic reasoning level",
    ),
    pick(
      "sessionStrategy",
      tuning("sessionStrategy"),
    ),
  ];
}

/** `HONCHO_API_KEY` as the profile sees it (its `.env` included). */
function envKey(config: HonchoConfig, io: CliIo): string | undefined {
  return config.sources.apiKey === "env"
    ? config.apiKey
    : io.env("HONCHO_API_KEY")?.trim() || undefined;
}

async function readStdinKey(deps: SetupDeps): Promise<string> {
  const text = await (deps.readStdin ??
    (() => new Response(Deno.stdin.readable).text()))();
  const key = text.split(/\r?\n/).find((line) => line.trim() !== "")?.trim();
  if (!key) {
    throw new HonchoCliError(
      '--api-key-stdin read no key from standard input; pipe it in, e.g. printf %s "$KEY" | hermes honcho setup --api-key-stdin --yes',
      2,
    );
  }
  return key;
}

/** Runs the setup of one profile: `0` saved, `1` cancelled or failed, `2` bad flags. */
export async function runSetup(
  scope: HonchoCliScope,
  options: SetupOptions = {},
  deps: SetupDeps = {},
): Promise<number> {
  const { io } = scope;
  const anyFlag =
    Object.keys(FLAGS).some((option) =>
      options[option as keyof SetupOptions] !== undefined
    ) ||
    Boolean(options.apiKeyStdin) || Boolean(options.apiKeyEnv);
  if (!io.stdinIsTerminal && !options.yes && !anyFlag) {
    throw new HonchoCliError(
      "standard input is not a terminal, so setup cannot ask questions; re-run with --yes and flags, e.g. hermes honcho setup --yes --deployment local --base-url http://localhost:8000 --peer-name alice",
      2,
    );
  }
  if (options.apiKeyStdin && options.apiKeyEnv) {
    throw new HonchoCliError(
      "Cannot use --api-key-stdin with --api-key-env: pick one place for the key",
      2,
    );
  }
  if (options.apiKeyStdin && io.stdinIsTerminal) {
    throw new HonchoCliError(
      "--api-key-stdin reads the key from a pipe (e.g. printf %s \"$KEY\" | hermes honcho setup --api-key-stdin --yes); on a terminal run 'hermes honcho setup' and type the key, it is not echoed",
      2,
    );
  }
  const interactive = io.stdinIsTerminal && !options.yes &&
    !options.apiKeyStdin;
  const given = givenByFlags(options);

  const config = await loadSetupConfig(scope);
  // The targeted profile's config.yaml must load before anything is written.
  const yamlHome = scope.targetProfile === undefined
    ? scope.hermesHome
    : profileHomeUnder(scope.defaultRoot, scope.profile);
  await requireConfigYaml(yamlHome);

  if (interactive) {
    io.stdout(
      `Honcho memory setup (host ${config.hostKey}, ${
        profileLabel(scope, config.profile)
      })\n`,
    );
    if (config.configFileExists) {
      io.stdout(
        `Found existing Honcho settings in ${config.configPath}: they are the defaults below, and nothing is reset.\n`,
      );
    }
  }
  if (options.apiKeyStdin) given.apiKey = await readStdinKey(deps);
  if (options.apiKeyEnv) given.apiKey = undefined;
  const answers = await walkSetupFields({
    fields: setupFields(config, io),
    current: (field) => field.default,
    given,
    interactive,
  }, io);
  const plan = toPlan(config, answers, options, io);

  if (interactive) {
    printPlan(io, config, plan);
    const ok = await io.prompts.confirm({
      message: "Save these settings?",
      default: true,
    });
    if (!ok) {
      io.stdout("Cancelled. No changes saved.\n");
      return 1;
    }
  }
  return await saveSetup(scope, config, plan, {
    yamlHome,
    test: !options.skipConnectionTest,
  });
}

/** What the answers mean for the server and the key; refuses a key setup that cannot work. */
function toPlan(
  config: HonchoConfig,
  { values, answered, missing }: Awaited<ReturnType<typeof walkSetupFields>>,
  options: SetupOptions,
  io: CliIo,
): SetupPlan {
  const deployment = values.deployment as "cloud" | "local";
  const baseUrl = deployment === "cloud" ? CLOUD_URL : String(values.baseUrl);
  const newKey = answered.apiKey as string | undefined;
  const fileKey = config.apiKeyInFile ? config.apiKey : undefined;
  const env = envKey(config, io);
  const placeholder = deployment === "local" && isLocalHonchoUrl(baseUrl);
  if (options.apiKeyEnv) {
    if (placeholder) {
      throw new HonchoCliError(
        `Cannot use --api-key-env with ${baseUrl}: a local server is sent the placeholder key unless the key is in honcho.json; pipe it with --api-key-stdin`,
        2,
      );
    }
    if (!env) {
      throw new HonchoCliError(
        "--api-key-env needs HONCHO_API_KEY in the environment (or in $HERMES_HOME/.env); nothing was saved",
      );
    }
  } else if (missing.some((f) => f.key === "apiKey")) {
    throw new HonchoCliError(
      "Honcho cloud needs an API key: pipe it with --api-key-stdin, or set HONCHO_API_KEY; nothing was saved",
    );
  }
  const keyFromEnv = options.apiKeyEnv === true;
  const keyWhere = keyFromEnv
    ? "HONCHO_API_KEY from the environment"
    : newKey !== undefined
    ? deployment === "cloud"
      ? "root apiKey"
      : `hosts.${writeHostKey(config)}.apiKey`
    : fileKey !== undefined
    ? `kept (${
      config.sources.apiKey === "host" ? "host block" : "root"
    } apiKey)`
    : placeholder
    ? "none (a local server gets the placeholder key)"
    : env
    ? "HONCHO_API_KEY from the environment"
    : "none";
  return {
    deployment,
    baseUrl,
    newKey,
    keyFromEnv,
    effectiveKey: newKey ?? fileKey ?? (placeholder ? undefined : env),
    keyWhere,
    host: hostSettings(values),
  };
}

/** The host-block settings the answers give, by `honcho.json` key. */
function hostSettings(
  values: Record<string, unknown>,
): Record<string, unknown> {
  const { deployment: _, apiKey: _k, baseUrl: _u, writeEvery, ...host } =
    values;
  if (host.writeFrequency === "every-n") {
    host.writeFrequency = Number(writeEvery);
  }
  if (host.contextTokens === "uncapped") host.contextTokens = undefined;
  return host;
}

function printPlan(io: CliIo, config: HonchoConfig, plan: SetupPlan): void {
  io.stdout(
    `\nAbout to save (hosts.${writeHostKey(config)} of ${config.writePath}):\n`,
  );
  const rows: [string, string][] = [
    [
      "Server",
      `${plan.baseUrl} (${
        plan.deployment === "cloud" ? "Honcho cloud" : "self-hosted"
      })`,
    ],
    [
      "API key",
      plan.effectiveKey
        ? `${maskSecret(plan.effectiveKey)}: ${plan.keyWhere}`
        : plan.keyWhere,
    ],
    ...Object.entries(plan.host).map(([key, value]): [string, string] => [
      key,
      value === undefined
        ? key === "contextTokens" ? "uncapped" : "(none)"
        : String(value),
    ]),
  ];
  for (const [name, value] of rows) {
    io.stdout(`  ${name.padEnd(23)} ${value}\n`);
  }
}

/** `postSetup` of `hermes memory setup honcho`: the wizard in the given profile home. */
export async function runPostSetup(
  hermesHome: string,
  _config: HermesConfig,
  io: CliIo,
): Promise<number> {
  return await runGuarded(
    io,
    () => runSetup(resolveScope(io, { hermesHome }), {}),
  );
}

export function registerSetup(honcho: HermesCommand): HermesCommand {
  const command = honcho.command("setup")
    .summary(
      "Set up Honcho: server, key, identity, tuning (same as 'hermes memory setup honcho')",
    )
    .description(
      "Set up Honcho for this profile, asking for what the flags do not give:\n" +
        "cloud (API key) or self-hosted (base URL, optional key), your peer name,\n" +
        "the AI peer, the workspace and the tuning. Existing settings are the\n" +
        "defaults; nothing is reset. Saves the host block to $HERMES_HOME/\n" +
        "honcho.json (0600), sets memory.provider: honcho and the server's host in\n" +
        "memory.permissions.honcho.net, tests the connection (5 s) and prints a\n" +
        "summary. The API key is never a flag value: it is typed (hidden), piped\n" +
        "with --api-key-stdin, or taken from HONCHO_API_KEY. Cloud keys are stored\n" +
        "at root apiKey, a self-hosted server's key in the host block.",
    );
  for (const [option, { arg, help }] of Object.entries(FLAGS)) {
    command.option(`--${kebab(option)} <${arg}>`, help);
  }
  command
    .option(
      "--api-key-stdin",
      "Read the API key from standard input (a pipe)",
      false,
    )
    .option(
      "--api-key-env",
      "Store no key; the agent uses HONCHO_API_KEY from its environment",
      false,
    )
    .option("--skip-connection-test", "Do not connect after saving", false)
    .option(
      "-y, --yes",
      "Ask nothing: flags, then existing settings, then defaults",
      false,
    )
    .example("hermes honcho setup")
    .example(
      'printf %s "$HONCHO_KEY" | hermes honcho setup --yes --deployment cloud --api-key-stdin --peer-name alice',
    )
    .example(
      "hermes honcho setup --yes --deployment local --base-url http://localhost:8000 --peer-name alice",
    );
  scopedAction(
    honcho,
    command,
    (scope, opts: SetupOptions) => runSetup(scope, opts),
  );
  return command;
}
