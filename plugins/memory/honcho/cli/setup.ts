/**
 * `hermes honcho setup` (and `postSetup`/`applySetup` of `hermes memory setup
 * honcho`): the framework's setup walker with Honcho's questions (deployment,
 * key, identity, tuning of plugins/memory/honcho/SPEC.md §12), then Honcho's
 * own save (`honcho.json`, `config.yaml` and its net grant), connection test
 * and summary. Nothing is written until every answer is in.
 * @module
 */

import {
  type CliIo,
  type HermesCommand,
  type SetupField,
  walkSetupFields,
} from "../../../../src/cli/mod.ts";
import { join } from "node:path";
import {
  getConfigPath,
  getConfigValue,
  getUserHome,
  type HermesConfig,
  loadConfig,
  maskSecret,
  saveConfig,
  saveEnvValue,
} from "../../../../mod.ts";
import { HONCHO_CONFIG_SCHEMA } from "../config_schema.ts";
import {
  cleanBaseUrl,
  HONCHO_ENVIRONMENT_URLS,
  isLocalHonchoUrl,
} from "../connection.ts";
import type { HonchoConfig } from "../config.ts";
import { type HonchoSettings, SETTINGS } from "../settings_table.ts";
import { resolveAiPeerId } from "../peers.ts";
import { sanitizeId } from "../session_naming.ts";
import { HONCHO_TOOL_NAMES } from "../tools.ts";
import {
  checkHonchoId,
  connectHoncho,
  describeConfigError,
  errorText,
  HonchoCliError,
  type HonchoCliScope,
  honchoFailureCause,
  isPromptCancelled,
  isRecord,
  loadScopeConfig,
  profileHomeUnder,
  profileLabel,
  reportWrite,
  resolveScope,
  runGuarded,
  serverLabel,
  targetProfileOf,
  writeHonchoFile,
  writeHostKey,
} from "./_common.ts";
import { connectionFix } from "./_fixes.ts";

const HONCHO_KEY_URL = "https://app.honcho.dev";
const DEFAULT_LOCAL_URL = "http://localhost:8000";
const CLOUD_URL = HONCHO_ENVIRONMENT_URLS.production!;

/** The `hermes honcho setup` flags. */
export interface SetupOptions {
  deployment?: string;
  baseUrl?: string;
  apiKeyStdin?: boolean;
  apiKeyEnv?: boolean;
  peerName?: string;
  aiPeer?: string;
  workspace?: string;
  recallMode?: string;
  observationMode?: string;
  writeFrequency?: string;
  contextTokens?: string;
  dialecticCadence?: string;
  reasoningLevel?: string;
  sessionStrategy?: string;
  yes?: boolean;
  skipConnectionTest?: boolean;
}

/** Injected I/O of {@linkcode runSetup}. */
export interface SetupDeps {
  /** Reads all of standard input (for `--api-key-stdin`). */
  readStdin?: () => Promise<string>;
}

/** Everything the wizard collected, before it is written. */
interface SetupPlan {
  deployment: "cloud" | "local";
  baseUrl: string;
  /** A new key to store; `undefined` keeps what is there. */
  newKey: string | undefined;
  /** Remove file keys so `HONCHO_API_KEY` from the environment is used. */
  keyFromEnv: boolean;
  /** The key that will be used, for the summary (printed masked). */
  effectiveKey: string | undefined;
  keyWhere: string;
  peerName: string | undefined;
  aiPeer: string;
  workspace: string;
  observationMode: string;
  writeFrequency: string | number;
  recallMode: string;
  contextTokens: number | undefined;
  dialecticCadence: number;
  reasoningLevel: string;
  sessionStrategy: string;
}

type Choices = readonly (readonly [string, string?])[];

/** A setting's choices as the settings table declares them. */
function tableChoices(field: keyof HonchoSettings): Choices {
  return SETTINGS.find((s) => s.field === field)?.ui?.choices ?? [];
}

function tableLabel(field: keyof HonchoSettings): string {
  return SETTINGS.find((s) => s.field === field)?.ui?.label ?? field;
}

const WRITE_FREQUENCIES: Choices = [
  ["async", "write each turn in the background (default)"],
  ["turn", "write each turn before the reply returns"],
  ["session", "write everything at the end of the session"],
];

function choiceOptions(choices: Choices) {
  return choices.map(([value, description]) => ({
    value,
    label: value,
    description,
  }));
}

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

function checkBaseUrl(value: string): string {
  const text = value.trim();
  let url: URL | undefined;
  try {
    url = new URL(text);
  } catch {
    url = undefined;
  }
  if (
    !url || (url.protocol !== "http:" && url.protocol !== "https:") ||
    !/^[\x20-\x7e]+$/.test(text)
  ) {
    throw new HonchoCliError(
      `Cannot use base URL '${value}': give an http:// or https:// URL such as ${DEFAULT_LOCAL_URL}`,
      2,
    );
  }
  return cleanBaseUrl(text);
}

/** A flag checker that accepts one of `choices` (or an alias of one). */
function choiceFlag(
  choices: Choices,
  aliases: Record<string, string> = {},
): (text: string) => string | undefined {
  return (text) => {
    const wanted = aliases[text.trim().toLowerCase()] ??
      text.trim().toLowerCase();
    return choices.some(([name]) => name === wanted) ? wanted : undefined;
  };
}

/**
 * The value flags: each answers the question of its field, and is checked
 * before anything is asked; `check` returns `undefined` for a bad value
 * (or throws its own message).
 */
const FLAGS: readonly {
  option: keyof SetupOptions;
  flag: string;
  key: string;
  check: (text: string) => unknown;
  valid?: string;
}[] = [
  {
    option: "deployment",
    flag: "--deployment",
    key: "deployment",
    check: choiceFlag([["cloud"], ["local"]], {
      "self-hosted": "local",
      selfhosted: "local",
    }),
  },
  {
    option: "baseUrl",
    flag: "--base-url",
    key: "baseUrl",
    check: checkBaseUrl,
  },
  {
    option: "peerName",
    flag: "--peer-name",
    key: "peerName",
    check: (t) => checkHonchoId("peer name", t),
  },
  {
    option: "aiPeer",
    flag: "--ai-peer",
    key: "aiPeer",
    check: (t) => checkHonchoId("AI peer name", t),
  },
  {
    option: "workspace",
    flag: "--workspace",
    key: "workspace",
    check: (t) => checkHonchoId("workspace", t),
  },
  {
    option: "recallMode",
    flag: "--recall-mode",
    key: "recallMode",
    check: choiceFlag(tableChoices("recallMode"), { auto: "hybrid" }),
  },
  {
    option: "observationMode",
    flag: "--observation-mode",
    key: "observationMode",
    check: choiceFlag(tableChoices("observationMode"), {
      shared: "unified",
      separate: "directional",
      cross: "directional",
    }),
  },
  {
    option: "reasoningLevel",
    flag: "--reasoning-level",
    key: "dialecticReasoningLevel",
    check: choiceFlag(tableChoices("dialecticReasoningLevel")),
  },
  {
    option: "sessionStrategy",
    flag: "--session-strategy",
    key: "sessionStrategy",
    check: choiceFlag(tableChoices("sessionStrategy")),
  },
  {
    option: "writeFrequency",
    flag: "--write-frequency",
    key: "writeFrequency",
    check: parseWrite,
    valid: "valid values are async, turn, session, or a number of turns",
  },
  {
    option: "contextTokens",
    flag: "--context-tokens",
    key: "contextTokens",
    check: parseTokens,
    valid: "give a whole number from 1 to 1000000, or 'uncapped'",
  },
  {
    option: "dialecticCadence",
    flag: "--dialectic-cadence",
    key: "dialecticCadence",
    check: (t) => wholeNumber(t, 1000),
    valid: "give a whole number of turns from 1 to 1000",
  },
];

/** The flags as answers of the walk, by field key; a bad value is a usage error. */
function givenByFlags(options: SetupOptions): Record<string, unknown> {
  const given: Record<string, unknown> = {};
  for (const { option, flag, key, check, valid } of FLAGS) {
    const text = options[option];
    if (typeof text !== "string") continue;
    const value = check(text);
    if (value === undefined) {
      throw new HonchoCliError(
        `Cannot use ${flag} '${text}': ${
          valid ?? `valid values are ${flagChoices(key).join(", ")}`
        }`,
        2,
      );
    }
    given[key] = value;
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

function flagChoices(key: string): string[] {
  if (key === "deployment") return ["cloud", "local"];
  return tableChoices(key as keyof HonchoSettings).map(([name]) => name);
}

function fromFile(
  config: HonchoConfig,
  field: keyof HonchoConfig["sources"],
): boolean {
  const source = config.sources[field];
  return source === "host" || source === "root";
}

/**
 * Honcho's setup questions in order, each with the value it has now as its
 * default: this profile's settings, else the wizard's defaults for a new setup.
 */
function setupFields(config: HonchoConfig, io: CliIo): SetupField[] {
  const existingUrl = config.baseUrl ? cleanBaseUrl(config.baseUrl) : undefined;
  const existingLocal = existingUrl !== undefined && existingUrl !== CLOUD_URL;
  const user = io.env("USER")?.trim();
  const hostKey = config.hostBlock.apiKey;
  const written = String(config.writeFrequency);
  const numeric = /^\d+$/.test(written);
  // Wizard defaults apply to new setups only: re-running setup changes no
  // behaviour by itself.
  const fresh = !config.configFileExists;
  const id = (what: string) => (text: string) => checkHonchoId(what, text);
  const whole = (text: string) => {
    const n = wholeNumber(text, 1000);
    if (n === undefined) {
      throw new Error("Give a whole number of turns from 1 to 1000");
    }
    return n;
  };
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
        : config.profile.replace(/[^A-Za-z0-9_-]/g, "-"),
      parse: id("AI peer name"),
    },
    {
      key: "workspace",
      prompt: tableLabel("workspaceId"),
      default: fromFile(config, "workspaceId") ? config.workspaceId : "hermes",
      parse: id("workspace"),
    },
    {
      key: "observationMode",
      prompt: tableLabel("observationMode"),
      options: choiceOptions(tableChoices("observationMode")),
      default: config.observationMode,
    },
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
      parse: whole,
    },
    {
      key: "recallMode",
      prompt: tableLabel("recallMode"),
      options: choiceOptions(tableChoices("recallMode")),
      default: config.recallMode,
    },
    {
      key: "contextTokens",
      prompt: "Context budget in tokens per turn ('uncapped' for no limit)",
      default: config.contextTokens ?? "uncapped",
      parse: (text) => {
        const tokens = parseTokens(text);
        if (tokens === undefined) {
          throw new Error(
            "Give a whole number from 1 to 1000000, or 'uncapped'",
          );
        }
        return tokens;
      },
    },
    {
      key: "dialecticCadence",
      prompt: "Dialectic cadence (turns between reasoning calls)",
      default: fromFile(config, "dialecticCadence") || !fresh
        ? config.dialecticCadence
        : 2,
      parse: (text, out) => {
        const n = wholeNumber(text, 1000);
        if (n === undefined) {
          out.stdout("Not a whole number of turns: using 2\n");
        }
        return n ?? 2;
      },
    },
    {
      key: "dialecticReasoningLevel",
      prompt: "Dialectic reasoning level",
      options: choiceOptions(tableChoices("dialecticReasoningLevel")),
      default: config.dialecticReasoningLevel,
    },
    {
      key: "sessionStrategy",
      prompt: tableLabel("sessionStrategy"),
      options: choiceOptions(tableChoices("sessionStrategy")),
      default: fromFile(config, "sessionStrategy") || !fresh
        ? config.sessionStrategy
        : "per-session",
    },
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
  const anyFlag = FLAGS.some((f) => options[f.option] !== undefined) ||
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
  // config.yaml (the targeted profile's, with --target-profile) must load
  // before anything is written.
  const yamlHome = scope.targetProfile === undefined
    ? scope.hermesHome
    : profileHomeUnder(scope.defaultRoot, scope.profile);
  try {
    await loadConfig({ hermesHome: yamlHome });
  } catch (error) {
    throw new HonchoCliError(
      `Cannot set up Honcho: ${errorText(error)}; nothing was written`,
    );
  }

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

  // honcho.json (one atomic write), then config.yaml.
  const hostKey = writeHostKey(config);
  const root: Record<string, unknown> = {};
  const host: Record<string, unknown> = {
    enabled: true,
    workspace: plan.workspace,
    aiPeer: plan.aiPeer,
    observationMode: plan.observationMode,
    writeFrequency: plan.writeFrequency,
    recallMode: plan.recallMode,
    dialecticCadence: plan.dialecticCadence,
    dialecticReasoningLevel: plan.reasoningLevel,
    sessionStrategy: plan.sessionStrategy,
  };
  if (plan.peerName !== undefined) host.peerName = plan.peerName;
  if (plan.contextTokens !== undefined) host.contextTokens = plan.contextTokens;
  else {
    host.contextTokens = config.raw.contextTokens != null ? 0 : undefined;
  }
  if (config.hostBlock.saveMessages == null) host.saveMessages = true;
  // The default host's server goes to the root, shared by the profiles
  // reading this file like the cloud key (plugins/memory/honcho/SPEC.md §12: cloud removes root baseUrl);
  // another host's server goes to its block only when it differs from the
  // root's, so setting up one profile never moves the others.
  host.base_url = undefined;
  const endpoint = isRecord(config.raw.endpoint) ? config.raw.endpoint : {};
  const rootUrlRaw = [endpoint.baseUrl, config.raw.baseUrl, config.raw.base_url]
    .find((v): v is string => typeof v === "string" && v.trim() !== "");
  const rootUrl = rootUrlRaw ? cleanBaseUrl(rootUrlRaw) : undefined;
  const defaultHost = config.defaultHost ?? "hermes";
  if (hostKey === defaultHost) {
    host.baseUrl = undefined;
    root.base_url = undefined;
    root.baseUrl = plan.deployment === "cloud" ? undefined : plan.baseUrl;
    if (endpoint.baseUrl != null) {
      root.endpoint = { ...endpoint, baseUrl: undefined };
    }
  } else if (plan.deployment === "cloud") {
    host.baseUrl = rootUrl !== undefined
      ? HONCHO_ENVIRONMENT_URLS.production
      : undefined;
  } else {
    host.baseUrl = rootUrl === plan.baseUrl ? undefined : plan.baseUrl;
  }
  if (plan.newKey !== undefined) {
    if (plan.deployment === "cloud") {
      // A host key would shadow the new root key.
      root.apiKey = plan.newKey;
      host.apiKey = undefined;
    } else {
      host.apiKey = plan.newKey;
    }
  }
  if (plan.keyFromEnv) {
    root.apiKey = undefined;
    host.apiKey = undefined;
  }
  const written = await writeHonchoFile(config, scope.hermesHome, (file) => {
    // The endpoint object keeps the keys other writers set meanwhile: it
    // is rebuilt from the file as it is inside the lock.
    if (root.endpoint !== undefined && isRecord(file.endpoint)) {
      root.endpoint = { ...file.endpoint, baseUrl: undefined };
    }
    return { root, host, hostKey };
  });
  await reportWrite(scope, written);

  const entry = new URL(plan.baseUrl).host;
  try {
    await saveConfig((current) => ({
      memory: { provider: "honcho", ...netGrant(current, entry) },
    }), { hermesHome: yamlHome });
  } catch (error) {
    throw new HonchoCliError(
      `Saved ${written.path}, but cannot update ${getConfigPath(yamlHome)}: ${
        errorText(error)
      }; set memory.provider: honcho there by hand`,
    );
  }

  io.stdout(
    `\nSaved Honcho settings to ${written.path} (hosts.${hostKey}, mode 0600)\n`,
  );
  io.stdout(
    `Set memory.provider: honcho and allowed ${entry} in memory.permissions.honcho.net (${
      getConfigPath(yamlHome)
    })\n`,
  );

  const after = await loadScopeConfig(scope);
  warnLoggingGrant(io, after, await loadConfig({ hermesHome: yamlHome }));
  const tested = options.skipConnectionTest
    ? "untested"
    : await testConnection(io, after);
  printSummary(io, after, plan);
  return tested === "failed" ? 1 : 0;
}

/** The scope's configuration, refusing one whose file does not parse. */
async function loadSetupConfig(scope: HonchoCliScope): Promise<HonchoConfig> {
  const config = await loadScopeConfig(scope);
  if (config.configError) {
    throw new HonchoCliError(
      `Cannot set up Honcho from ${config.configPath}: ${
        describeConfigError(config)
      }; fix or remove the file, nothing was written`,
    );
  }
  return config;
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
    peerName: values.peerName as string | undefined,
    aiPeer: String(values.aiPeer),
    workspace: String(values.workspace),
    observationMode: String(values.observationMode),
    writeFrequency: values.writeFrequency === "every-n"
      ? Number(values.writeEvery)
      : String(values.writeFrequency),
    recallMode: String(values.recallMode),
    contextTokens: values.contextTokens === "uncapped"
      ? undefined
      : Number(values.contextTokens),
    dialecticCadence: Number(values.dialecticCadence),
    reasoningLevel: String(values.dialecticReasoningLevel),
    sessionStrategy: String(values.sessionStrategy),
  };
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
    ["User peer", plan.peerName ?? "(none)"],
    ["AI peer", plan.aiPeer],
    ["Workspace", plan.workspace],
    ["Observation", plan.observationMode],
    ["Write frequency", String(plan.writeFrequency)],
    ["Recall mode", plan.recallMode],
    [
      "Context budget",
      plan.contextTokens === undefined
        ? "uncapped"
        : `${plan.contextTokens} tokens`,
    ],
    ["Dialectic cadence", `every ${plan.dialecticCadence} turn(s)`],
    ["Reasoning level", plan.reasoningLevel],
    ["Session strategy", plan.sessionStrategy],
  ];
  for (const [name, value] of rows) {
    io.stdout(`  ${name.padEnd(18)} ${value}\n`);
  }
}

/**
 * Tests the saved settings: `"ok"`, `"failed"` (a warning with the fix is
 * printed; the command then exits 1) or `"untested"` (this process may not
 * reach the server yet).
 */
async function testConnection(
  io: CliIo,
  config: HonchoConfig,
): Promise<"ok" | "failed" | "untested"> {
  const url = serverLabel(config);
  if (!(await mayReach(url))) {
    io.stdout(
      `Connection not tested: this process was started without network access to ${
        new URL(url).host
      }; memory.permissions.honcho.net grants it from the next run, so check with 'hermes honcho status'\n`,
    );
    return "untested";
  }
  try {
    const client = await connectHoncho(config);
    await client.getOrCreateWorkspace();
    const peers = [resolveAiPeerId(config)];
    if (config.peerName) peers.push(sanitizeId(config.peerName));
    for (const peer of peers) await client.getOrCreatePeer(peer);
    io.stdout(
      `Connection OK: ${url}, workspace ${config.workspaceId}, peers ${
        peers.join(", ")
      } ready\n`,
    );
    return "ok";
  } catch (error) {
    if (isPromptCancelled(error)) throw error;
    io.stderr(
      `warning: connection test failed: ${
        honchoFailureCause(error, url)
      }; the settings are saved. Fix: ${
        connectionFix(error, url)
      }; then check with 'hermes honcho status'\n`,
    );
    return "failed";
  }
}

/**
 * Warns when `logging` is on but `config.yaml` does not let the provider
 * write its injection log (every recall would then fail to log).
 */
function warnLoggingGrant(
  io: CliIo,
  config: HonchoConfig,
  hermesConfig: Record<string, unknown>,
): void {
  const path = config.injectionLogPath;
  if (!config.logging || !path) return;
  const write = getConfigValue(hermesConfig, "memory.permissions.honcho.write");
  const dirs = Array.isArray(write)
    ? write.filter((v): v is string => typeof v === "string")
    : [];
  const home = getUserHome() ?? "";
  const granted = dirs.some((entry) => {
    const dir = entry.replace(/^~(?=\/|$)/, home).replace(/\/+$/, "");
    return path === dir || path.startsWith(`${dir}/`);
  });
  if (granted) return;
  io.stderr(
    `warning: logging is on, but the provider may not write its log ${path}; add '- ${path}' under memory.permissions.honcho.write in config.yaml, or turn logging off: 'hermes memory setup honcho --yes --set logging=false'\n`,
  );
}

async function mayReach(url: string): Promise<boolean> {
  try {
    const { state } = await Deno.permissions.query({
      name: "net",
      host: new URL(url).host,
    });
    return state === "granted";
  } catch {
    return true;
  }
}

function printSummary(io: CliIo, config: HonchoConfig, plan: SetupPlan): void {
  io.stdout(
    `\nHoncho is set up for host ${config.hostKey} (profile ${config.profile}):\n`,
  );
  const rows: [string, string][] = [
    ["Server", serverLabel(config)],
    [
      "API key",
      config.apiKey
        ? `${maskSecret(config.apiKey)} (${plan.keyWhere})`
        : plan.keyWhere,
    ],
    ["Workspace", config.workspaceId],
    [
      "User peer",
      config.peerName
        ? sanitizeId(config.peerName)
        : "(none: 'hermes honcho peer --user NAME')",
    ],
    ["AI peer", resolveAiPeerId(config)],
    ["Recall mode", config.recallMode],
    ["Session strategy", config.sessionStrategy],
  ];
  for (const [name, value] of rows) {
    io.stdout(`  ${name.padEnd(17)} ${value}\n`);
  }
  if (config.recallMode === "context") {
    io.stdout(
      "Tools: none in context mode (context is injected; 'hermes honcho mode hybrid' adds the tools)\n",
    );
  } else {
    io.stdout(`Tools for the model: ${HONCHO_TOOL_NAMES.join(", ")}\n`);
  }
  io.stdout(
    "Start a new session to use Honcho memory. Check it any time with 'hermes honcho status'.\n",
  );
}

/**
 * Runs the wizard as the provider's `postSetup` (what `hermes memory setup
 * honcho` calls, host-side, with the terminal): interactive, in the given
 * profile home; a cancelled prompt saves nothing.
 *
 * @param hermesHome The profile home.
 * @param _config The loaded `config.yaml` (re-read before writing).
 * @param io The CLI seam.
 * @returns The exit code.
 */
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

/**
 * `hermes memory setup honcho --yes --set key=value…`: applies exactly the
 * settings named, asks nothing, and pins nothing else — the other keys of
 * `honcho.json` and `config.yaml` stay as they are (no default is written).
 * Non-secret keys go to this profile's `honcho.json` (root or host block,
 * as the schema scopes them); `apiKey` goes to `$HERMES_HOME/.env` as
 * `HONCHO_API_KEY` for Honcho cloud, and to the host block of `honcho.json`
 * for a self-hosted server (which ignores the environment's key). Refuses, saving nothing, when the result would use
 * Honcho cloud without an API key anywhere; a self-hosted `baseUrl` needs
 * none. Sets `memory.provider: honcho`, grants a self-hosted server's host
 * in `memory.permissions.honcho.net`, and tests the connection.
 *
 * @param hermesHome The profile home.
 * @param values The `--set` values, keyed by schema key, already converted.
 * @param io The terminal seam.
 * @returns `0` saved, `1` refused or failed, `2` for a bad value.
 */
export async function runApplySetup(
  hermesHome: string,
  values: Record<string, unknown>,
  io: CliIo,
): Promise<number> {
  return await runGuarded(io, async () => {
    const scope = resolveScope(io, { hermesHome });
    const config = await loadSetupConfig(scope);
    const fields = new Map(
      HONCHO_CONFIG_SCHEMA.fields.map((f) => [f.key, f] as const),
    );
    const root: Record<string, unknown> = {};
    const host: Record<string, unknown> = {};
    let apiKey: string | undefined;
    for (const [key, raw] of Object.entries(values)) {
      const field = fields.get(key);
      if (!field) {
        throw new HonchoCliError(`Unknown Honcho setting '${key}'`, 2);
      }
      let value = raw;
      if (field.kind === "secret") {
        apiKey = String(raw).trim() || undefined;
        continue;
      }
      if (key === "baseUrl" && typeof raw === "string" && raw !== "") {
        value = checkBaseUrl(raw);
      }
      if (
        (key === "workspace" || key === "peerName" || key === "aiPeer") &&
        typeof raw === "string"
      ) value = checkHonchoId(key, raw);
      (field.scope === "root" ? root : host)[key] = value;
    }
    // What the profile will use once this is saved.
    const cloudUrl = HONCHO_ENVIRONMENT_URLS.production!;
    const baseUrl = typeof root.baseUrl === "string" && root.baseUrl
      ? root.baseUrl
      : config.baseUrl
      ? cleanBaseUrl(config.baseUrl)
      : HONCHO_ENVIRONMENT_URLS[config.environment] ?? cloudUrl;
    const cloud = baseUrl === cloudUrl;
    if (cloud && !apiKey && !config.apiKey) {
      throw new HonchoCliError(
        `Honcho cloud (${cloudUrl}) needs an API key and none is set: give it with --set apiKey=<key> (saved to ${
          join(hermesHome, ".env")
        } as HONCHO_API_KEY), set HONCHO_API_KEY, or run 'hermes honcho setup' (it asks, hidden); for a self-hosted server give --set baseUrl=http://host:port instead. Nothing was saved`,
      );
    }
    // A config.yaml that does not parse stops the setup before any write.
    await loadConfig({ hermesHome }).catch((error) => {
      throw new HonchoCliError(
        `Cannot set up Honcho: ${errorText(error)}; nothing was written`,
      );
    });
    const hostKey = writeHostKey(config);
    if (apiKey && isLocalHonchoUrl(baseUrl)) {
      // A self-hosted server is sent only a key from honcho.json (the
      // environment's HONCHO_API_KEY is for Honcho cloud), as Hermes'
      // wizard stores a local JWT: in the host block.
      host.apiKey = apiKey;
      apiKey = undefined;
    }
    if (Object.keys(root).length > 0 || Object.keys(host).length > 0) {
      const written = await writeHonchoFile(config, hermesHome, {
        root,
        host,
        hostKey,
      });
      await reportWrite(scope, written);
      const keys = [...Object.keys(root), ...Object.keys(host)];
      io.stdout(
        `Saved ${keys.join(", ")} to ${written.path}${
          Object.keys(host).length > 0 ? ` (hosts.${hostKey})` : ""
        }\n`,
      );
    }
    if (apiKey) {
      await saveEnvValue("HONCHO_API_KEY", apiKey, { hermesHome });
      io.stdout(
        `Saved HONCHO_API_KEY to ${join(hermesHome, ".env")} (${
          maskSecret(apiKey)
        })\n`,
      );
    }
    const granted = cloud ? undefined : new URL(baseUrl).host;
    await saveConfig((current) => ({
      memory: {
        provider: "honcho",
        ...(granted === undefined ? {} : netGrant(current, granted)),
      },
    }), { hermesHome });
    io.stdout(
      `Set memory.provider: honcho${
        granted
          ? ` and allowed ${granted} in memory.permissions.honcho.net`
          : ""
      } (${getConfigPath(hermesHome)})\n`,
    );
    const after = await loadScopeConfig(scope);
    warnLoggingGrant(io, after, await loadConfig({ hermesHome }));
    const tested = await testConnection(io, after);
    io.stdout("Start a new session to use it.\n");
    return tested === "failed" ? 1 : 0;
  });
}

/**
 * Attaches `setup` to the `honcho` command.
 *
 * @param honcho The `hermes honcho` command.
 * @returns The `setup` command.
 *
 * @example
 * ```ts
 * import { createCommand, memoryCliIo } from "@hermes/memory/cli";
 * import { registerSetup } from "./setup.ts";
 * import assert from "node:assert/strict";
 * const honcho = createCommand("honcho", { io: memoryCliIo(), exitCode: 0 });
 * assert.equal(registerSetup(honcho).name(), "setup");
 * ```
 */
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
    )
    .option("--deployment <kind>", "cloud or local (self-hosted)")
    .option(
      "--base-url <url>",
      "Self-hosted server URL (default http://localhost:8000)",
    )
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
    .option("--peer-name <name>", "peerName: your peer (default $USER)")
    .option("--ai-peer <name>", "aiPeer: the assistant's peer (default hermes)")
    .option("--workspace <id>", "workspace (default hermes)")
    .option("--recall-mode <mode>", "hybrid, context or tools (default hybrid)")
    .option("--observation-mode <mode>", "directional or unified")
    .option(
      "--write-frequency <when>",
      "async, turn, session or N turns (default async)",
    )
    .option(
      "--context-tokens <n>",
      "Context budget in tokens, or 'uncapped' (default)",
    )
    .option(
      "--dialectic-cadence <n>",
      "Turns between dialectic calls (default 2)",
    )
    .option(
      "--reasoning-level <level>",
      `${flagChoices("dialecticReasoningLevel").join(", ")} (default low)`,
    )
    .option(
      "--session-strategy <strategy>",
      "per-session (what setup writes), per-directory (used while the key is unset), per-repo or global",
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
  command.action((opts: SetupOptions) => {
    const io = command.context.io;
    return runGuarded(io, () =>
      runSetup(
        resolveScope(io, { targetProfile: targetProfileOf(honcho) }),
        opts,
      ));
  });
  return command;
}

/**
 * The `permissions` part of `memory` in config.yaml with `entry` added to
 * `memory.permissions.honcho.net`, computed from the file as it is inside
 * its lock (concurrent setups keep each other's grants).
 */
function netGrant(
  current: HermesConfig,
  entry: string,
): { permissions: { honcho: { net: string[] } } } {
  const existing = getConfigValue(current, "memory.permissions.honcho.net");
  const net = Array.isArray(existing)
    ? existing.filter((v): v is string => typeof v === "string")
    : [];
  if (!net.includes(entry)) net.push(entry);
  return { permissions: { honcho: { net } } };
}
