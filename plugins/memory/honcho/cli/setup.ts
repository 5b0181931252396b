/**
 * The Honcho setup wizard: `hermes honcho setup` and the provider's
 * `postSetup` for `hermes memory setup honcho`.
 *
 * Asks (or takes from flags): the deployment (Honcho cloud with an API key,
 * or a self-hosted base URL with an optional key), the identity (`peerName`,
 * `aiPeer`, `workspace`) and the tuning of plugins/memory/honcho/SPEC.md §12 (observation, write
 * frequency, recall mode, context budget, dialectic cadence, reasoning
 * level, session strategy). Existing settings — this profile's
 * `honcho.json`, the default profile's, or `~/.honcho/config.json` — are
 * the defaults, and nothing on disk or on the server is reset.
 *
 * Nothing is written until every answer is in (Ctrl-C saves nothing). Then:
 * the host block and the key go to `$HERMES_HOME/honcho.json` (atomic,
 * `0600`), `memory.provider: honcho` and the server's host in
 * `memory.permissions.honcho.net` go to `config.yaml`, the connection is
 * tested (5 s) and a summary with the tool list is printed.
 *
 * The API key is stored in `honcho.json` (never printed, never a plain
 * flag): cloud keys at root `apiKey` (shared by the profiles that read the
 * file), a self-hosted server's key in the host block. `--api-key-env`
 * stores none and leaves `HONCHO_API_KEY` to the environment.
 *
 * @module
 */

import type { CliIo, HermesCommand } from "../../../../src/cli/mod.ts";
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
import { type HonchoConfig, REASONING_LEVELS } from "../config.ts";
import { resolveAiPeerId } from "../peers.ts";
import { sanitizeId } from "../session_naming.ts";
import { HONCHO_TOOL_NAMES } from "../tools.ts";
import {
  checkHonchoId,
  CLI_CONNECT_TIMEOUT_MS,
  connectHoncho,
  describeConfigError,
  errorText,
  HonchoCliError,
  type HonchoCliScope,
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
import { describeHonchoError } from "../errors.ts";
import { connectionFix } from "./_fixes.ts";
import { RECALL_MODES, SESSION_STRATEGIES } from "./setting_commands.ts";

/** Where new cloud users get a key. */
export const HONCHO_KEY_URL = "https://app.honcho.dev";

/** The default base URL of a self-hosted server. */
export const DEFAULT_LOCAL_URL = "http://localhost:8000";

/** Options of {@linkcode runSetup} (the `hermes honcho setup` flags). */
export interface SetupOptions {
  /** `cloud` (api.honcho.dev + API key) or `local` (self-hosted base URL). */
  deployment?: string;
  /** The self-hosted server's base URL (implies `local`). */
  baseUrl?: string;
  /** Read the API key from standard input (a pipe). @default {false} */
  apiKeyStdin?: boolean;
  /** Store no key: the agent reads `HONCHO_API_KEY` from its environment. @default {false} */
  apiKeyEnv?: boolean;
  /** `peerName`: the user's peer. */
  peerName?: string;
  /** `aiPeer`: this profile's AI peer. */
  aiPeer?: string;
  /** `workspace`. */
  workspace?: string;
  /** `recallMode`: hybrid, context or tools. */
  recallMode?: string;
  /** `observationMode`: directional or unified. */
  observationMode?: string;
  /** `writeFrequency`: async, turn, session or a number of turns. */
  writeFrequency?: string;
  /** `contextTokens`: a number, or `uncapped`. */
  contextTokens?: string;
  /** `dialecticCadence`: turns between dialectic calls. */
  dialecticCadence?: string;
  /** `dialecticReasoningLevel`. */
  reasoningLevel?: string;
  /** `sessionStrategy`. */
  sessionStrategy?: string;
  /** Ask nothing: flags, then existing settings, then defaults. @default {false} */
  yes?: boolean;
  /** Do not test the connection. @default {false} */
  skipConnectionTest?: boolean;
}

/** Injected I/O of {@linkcode runSetup}. */
export interface SetupDeps {
  /** Reads all of standard input (for `--api-key-stdin`). @default {readProcessStdin} */
  readStdin?: () => Promise<string>;
}

/**
 * Reads the whole of the process's standard input as text.
 *
 * @returns The text.
 */
export async function readProcessStdin(): Promise<string> {
  return await new Response(Deno.stdin.readable).text();
}

/** Everything the wizard collected, before it is written. */
interface SetupPlan {
  deployment: "cloud" | "local";
  baseUrl: string;
  /** A new key to store, `undefined` to keep what is there. */
  newKey: string | undefined;
  /** Remove file keys so `HONCHO_API_KEY` from the environment is used. */
  keyFromEnv: boolean;
  /** The key that will be used, for the summary (masked when printed). */
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

const OBSERVATION_MODES: readonly (readonly [string, string])[] = [
  ["directional", "each peer observes everyone (full mutual observation)"],
  ["unified", "one observer pool: the AI observes the user"],
];

const WRITE_FREQUENCIES: readonly (readonly [string, string])[] = [
  ["async", "write each turn in the background (default)"],
  ["turn", "write each turn before the reply returns"],
  ["session", "write everything at the end of the session"],
];

function flagChoice(
  flag: string,
  value: string | undefined,
  choices: readonly (readonly [string, string])[],
  aliases: Record<string, string> = {},
): string | undefined {
  if (value === undefined) return undefined;
  const text = value.trim().toLowerCase();
  const wanted = aliases[text] ?? text;
  if (choices.some(([name]) => name === wanted)) return wanted;
  throw new HonchoCliError(
    `Cannot use ${flag} '${value}': valid values are ${
      choices.map(([name]) => name).join(", ")
    }`,
    2,
  );
}

function parseWrite(value: string): string | number | undefined {
  const text = value.trim().toLowerCase();
  if (/^\d+$/.test(text) && Number(text) >= 1) return Number(text);
  if (WRITE_FREQUENCIES.some(([name]) => name === text)) return text;
  return undefined;
}

function parseTokens(value: string): number | "uncapped" | undefined {
  const text = value.trim().toLowerCase();
  if (text === "uncapped" || text === "none" || text === "0") return "uncapped";
  if (/^\d+$/.test(text) && Number(text) >= 1 && Number(text) <= 1_000_000) {
    return Number(text);
  }
  return undefined;
}

function parseCadence(value: string): number | undefined {
  const text = value.trim();
  return /^\d+$/.test(text) && Number(text) >= 1 && Number(text) <= 1000
    ? Number(text)
    : undefined;
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

/** The host entry of `memory.permissions.honcho.net` for a server URL. */
function netEntry(baseUrl: string): string {
  return new URL(baseUrl).host;
}

function fromFile(
  config: HonchoConfig,
  field: keyof HonchoConfig["sources"],
): boolean {
  const source = config.sources[field];
  return source === "host" || source === "root";
}

function anySetupFlag(options: SetupOptions): boolean {
  return [
    options.deployment,
    options.baseUrl,
    options.peerName,
    options.aiPeer,
    options.workspace,
    options.recallMode,
    options.observationMode,
    options.writeFrequency,
    options.contextTokens,
    options.dialecticCadence,
    options.reasoningLevel,
    options.sessionStrategy,
  ].some((v) => v !== undefined) || Boolean(options.apiKeyStdin) ||
    Boolean(options.apiKeyEnv);
}

/**
 * Runs the setup wizard for one profile.
 *
 * @param scope The profile and files.
 * @param options The flags (each one answers its question).
 * @param deps Standard input, for `--api-key-stdin`.
 * @returns `0` when saved; `1` when cancelled or failed; `2` for bad flags.
 */
export async function runSetup(
  scope: HonchoCliScope,
  options: SetupOptions = {},
  deps: SetupDeps = {},
): Promise<number> {
  const { io } = scope;
  if (!io.stdinIsTerminal && !options.yes && !anySetupFlag(options)) {
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

  // Validate every flag before asking anything.
  const flags = {
    deployment: flagChoice("--deployment", options.deployment, [
      ["cloud", ""],
      ["local", ""],
    ], { "self-hosted": "local", selfhosted: "local" }) as
      | "cloud"
      | "local"
      | undefined,
    baseUrl: options.baseUrl !== undefined
      ? checkBaseUrl(options.baseUrl)
      : undefined,
    peerName: options.peerName !== undefined
      ? checkHonchoId("peer name", options.peerName)
      : undefined,
    aiPeer: options.aiPeer !== undefined
      ? checkHonchoId("AI peer name", options.aiPeer)
      : undefined,
    workspace: options.workspace !== undefined
      ? checkHonchoId("workspace", options.workspace)
      : undefined,
    recallMode: flagChoice("--recall-mode", options.recallMode, RECALL_MODES, {
      auto: "hybrid",
    }),
    observationMode: flagChoice(
      "--observation-mode",
      options.observationMode,
      OBSERVATION_MODES,
      { shared: "unified", separate: "directional", cross: "directional" },
    ),
    reasoningLevel: flagChoice(
      "--reasoning-level",
      options.reasoningLevel,
      REASONING_LEVELS.map((l) => [l, ""] as const),
    ),
    sessionStrategy: flagChoice(
      "--session-strategy",
      options.sessionStrategy,
      SESSION_STRATEGIES,
    ),
    writeFrequency: undefined as string | number | undefined,
    contextTokens: undefined as number | "uncapped" | undefined,
    dialecticCadence: undefined as number | undefined,
  };
  if (flags.deployment === "cloud" && flags.baseUrl !== undefined) {
    throw new HonchoCliError(
      "Cannot use --base-url with --deployment cloud: the cloud server is https://api.honcho.dev; use --deployment local for your own server",
      2,
    );
  }
  if (options.writeFrequency !== undefined) {
    flags.writeFrequency = parseWrite(options.writeFrequency);
    if (flags.writeFrequency === undefined) {
      throw new HonchoCliError(
        `Cannot use --write-frequency '${options.writeFrequency}': valid values are async, turn, session, or a number of turns`,
        2,
      );
    }
  }
  if (options.contextTokens !== undefined) {
    flags.contextTokens = parseTokens(options.contextTokens);
    if (flags.contextTokens === undefined) {
      throw new HonchoCliError(
        `Cannot use --context-tokens '${options.contextTokens}': give a whole number from 1 to 1000000, or 'uncapped'`,
        2,
      );
    }
  }
  if (options.dialecticCadence !== undefined) {
    flags.dialecticCadence = parseCadence(options.dialecticCadence);
    if (flags.dialecticCadence === undefined) {
      throw new HonchoCliError(
        `Cannot use --dialectic-cadence '${options.dialecticCadence}': give a whole number of turns from 1 to 1000`,
        2,
      );
    }
  }

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

  const plan = await collectPlan(
    scope,
    config,
    flags,
    options,
    interactive,
    deps,
  );

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

  // Write honcho.json (one atomic write), then config.yaml.
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

  const entry = netEntry(plan.baseUrl);
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

async function collectPlan(
  scope: HonchoCliScope,
  config: HonchoConfig,
  flags: {
    deployment: "cloud" | "local" | undefined;
    baseUrl: string | undefined;
    peerName: string | undefined;
    aiPeer: string | undefined;
    workspace: string | undefined;
    recallMode: string | undefined;
    observationMode: string | undefined;
    reasoningLevel: string | undefined;
    sessionStrategy: string | undefined;
    writeFrequency: string | number | undefined;
    contextTokens: number | "uncapped" | undefined;
    dialecticCadence: number | undefined;
  },
  options: SetupOptions,
  interactive: boolean,
  deps: SetupDeps,
): Promise<SetupPlan> {
  const { io } = scope;
  const cloudUrl = HONCHO_ENVIRONMENT_URLS.production!;
  const existingUrl = config.baseUrl ? cleanBaseUrl(config.baseUrl) : undefined;
  const existingLocal = existingUrl !== undefined && existingUrl !== cloudUrl;

  // --- deployment
  let deployment = flags.deployment ??
    (flags.baseUrl !== undefined ? "local" : undefined);
  if (deployment === undefined) {
    const preset = existingLocal ? "local" : "cloud";
    deployment = interactive
      ? await io.prompts.select<"cloud" | "local">({
        message: "Where is your Honcho server?",
        choices: [
          {
            value: "cloud",
            name: "Honcho cloud (api.honcho.dev, needs an API key)",
          },
          {
            value: "local",
            name: "Self-hosted (your own server's base URL, optional key)",
          },
        ],
        default: preset,
      })
      : preset;
  }

  // --- server and key
  let baseUrl = cloudUrl;
  let newKey: string | undefined;
  let keyFromEnv = false;
  const envKey = config.sources.apiKey === "env"
    ? config.apiKey
    : io.env("HONCHO_API_KEY")?.trim() || undefined;
  const fileKey = config.apiKeyInFile ? config.apiKey : undefined;
  const readKeyFromStdin = async (): Promise<string> => {
    const text = await (deps.readStdin ?? readProcessStdin)();
    const key = text.split(/\r?\n/).find((line) => line.trim() !== "")?.trim();
    if (!key) {
      throw new HonchoCliError(
        '--api-key-stdin read no key from standard input; pipe it in, e.g. printf %s "$KEY" | hermes honcho setup --api-key-stdin --yes',
        2,
      );
    }
    return key;
  };
  if (deployment === "cloud") {
    if (options.apiKeyStdin) newKey = await readKeyFromStdin();
    else if (options.apiKeyEnv) {
      if (!envKey) {
        throw new HonchoCliError(
          "--api-key-env needs HONCHO_API_KEY in the environment (or in $HERMES_HOME/.env); nothing was saved",
        );
      }
      keyFromEnv = true;
    } else if (interactive) {
      const current = fileKey ?? envKey;
      if (!current) io.stdout(`Get an API key at ${HONCHO_KEY_URL}\n`);
      for (;;) {
        const answer = (await io.prompts.password({
          message: current
            ? `Honcho API key [${maskSecret(current)}; Enter keeps it]`
            : "Honcho API key",
        })).trim();
        if (answer !== "") {
          newKey = answer;
          break;
        }
        if (current) break;
        io.stderr("An API key is required for Honcho cloud (Ctrl-C to stop)\n");
      }
    } else if (!fileKey && !envKey) {
      throw new HonchoCliError(
        "Honcho cloud needs an API key: pipe it with --api-key-stdin, or set HONCHO_API_KEY; nothing was saved",
      );
    }
  } else {
    if (flags.baseUrl !== undefined) baseUrl = flags.baseUrl;
    else if (interactive) {
      for (;;) {
        const answer = await io.prompts.input({
          message: "Base URL of your Honcho server",
          default: existingLocal ? existingUrl : DEFAULT_LOCAL_URL,
        });
        try {
          baseUrl = checkBaseUrl(answer);
          break;
        } catch (error) {
          io.stderr(`${errorText(error)}\n`);
        }
      }
    } else baseUrl = existingLocal ? existingUrl! : DEFAULT_LOCAL_URL;
    const local = isLocalHonchoUrl(baseUrl);
    if (options.apiKeyStdin) newKey = await readKeyFromStdin();
    else if (options.apiKeyEnv) {
      if (local) {
        throw new HonchoCliError(
          `Cannot use --api-key-env with ${baseUrl}: a local server is sent the placeholder key unless the key is in honcho.json; pipe it with --api-key-stdin`,
          2,
        );
      }
      if (!envKey) {
        throw new HonchoCliError(
          "--api-key-env needs HONCHO_API_KEY in the environment (or in $HERMES_HOME/.env); nothing was saved",
        );
      }
      keyFromEnv = true;
    } else if (interactive) {
      const current = typeof config.hostBlock.apiKey === "string" &&
          config.hostBlock.apiKey
        ? config.hostBlock.apiKey
        : undefined;
      const answer = (await io.prompts.password({
        message: current
          ? `API key for this server [${maskSecret(current)}; Enter keeps it]`
          : "API key for this server (optional; Enter for none)",
      })).trim();
      if (answer !== "") newKey = answer;
    }
  }

  // --- identity
  const ask = async (
    message: string,
    fallback: string | undefined,
    what: string,
  ): Promise<string | undefined> => {
    for (;;) {
      const answer = (await io.prompts.input({ message, default: fallback }))
        .trim();
      if (answer === "") return undefined;
      try {
        return checkHonchoId(what, answer);
      } catch (error) {
        io.stderr(`${errorText(error)}\n`);
      }
    }
  };
  const userEnv = io.env("USER")?.trim();
  const peerDefault = config.peerName ??
    (userEnv && /^[A-Za-z0-9_-]+$/.test(userEnv) ? userEnv : undefined);
  const aiDefault = fromFile(config, "aiPeer")
    ? config.aiPeer
    : config.profile === "default" || config.profile === "custom"
    ? "hermes"
    : config.profile.replace(/[^A-Za-z0-9_-]/g, "-");
  const workspaceDefault = fromFile(config, "workspaceId")
    ? config.workspaceId
    : "hermes";
  const peerName = flags.peerName ??
    (interactive
      ? await ask(
        "Your name as a Honcho peer (peerName)",
        peerDefault,
        "peer name",
      )
      : peerDefault);
  const aiPeer = flags.aiPeer ??
    (interactive
      ? await ask("The assistant's peer (aiPeer)", aiDefault, "AI peer name")
      : undefined) ??
    aiDefault;
  const workspace = flags.workspace ??
    (interactive
      ? await ask("Workspace", workspaceDefault, "workspace")
      : undefined) ??
    workspaceDefault;

  // --- tuning (plugins/memory/honcho/SPEC.md §12)
  const pick = async (
    message: string,
    choices: readonly (readonly [string, string])[],
    preset: string,
  ): Promise<string> =>
    await io.prompts.select<string>({
      message,
      choices: choices.map(([value, description]) => ({
        value,
        name: value === "every-n" ? "every N turns" : value,
        description: description || undefined,
      })),
      default: choices.some(([v]) => v === preset) ? preset : choices[0]![0],
    });
  const observationMode = flags.observationMode ??
    (interactive
      ? await pick("Observation", OBSERVATION_MODES, config.observationMode)
      : config.observationMode);
  let writeFrequency: string | number = flags.writeFrequency ??
    config.writeFrequency;
  if (flags.writeFrequency === undefined && interactive) {
    const current = String(config.writeFrequency);
    const chosen = await pick(
      "When are turns written to Honcho?",
      [...WRITE_FREQUENCIES, ["every-n", "write after every N turns"]],
      /^\d+$/.test(current) ? "every-n" : current,
    );
    if (chosen === "every-n") {
      for (;;) {
        const answer = await io.prompts.input({
          message: "Write every how many turns?",
          default: /^\d+$/.test(current) ? current : "3",
        });
        const n = parseCadence(answer);
        if (n !== undefined) {
          writeFrequency = n;
          break;
        }
        io.stderr("Give a whole number of turns from 1 to 1000\n");
      }
    } else writeFrequency = chosen;
  }
  const recallMode = flags.recallMode ??
    (interactive
      ? await pick("Recall mode", RECALL_MODES, config.recallMode)
      : config.recallMode);
  let contextTokens: number | undefined = flags.contextTokens === "uncapped"
    ? undefined
    : flags.contextTokens ?? config.contextTokens;
  if (flags.contextTokens === undefined && interactive) {
    for (;;) {
      const answer = await io.prompts.input({
        message: "Context budget in tokens per turn ('uncapped' for no limit)",
        default: config.contextTokens === undefined
          ? "uncapped"
          : String(config.contextTokens),
      });
      const parsed = parseTokens(answer);
      if (parsed !== undefined) {
        contextTokens = parsed === "uncapped" ? undefined : parsed;
        break;
      }
      io.stderr("Give a whole number from 1 to 1000000, or 'uncapped'\n");
    }
  }
  // Wizard defaults apply to new setups only; an existing setup keeps its
  // resolved values, so re-running setup changes no behaviour by itself.
  const fresh = !config.configFileExists;
  const cadenceDefault = fromFile(config, "dialecticCadence") || !fresh
    ? config.dialecticCadence
    : 2;
  let dialecticCadence = flags.dialecticCadence ?? cadenceDefault;
  if (flags.dialecticCadence === undefined && interactive) {
    const answer = await io.prompts.input({
      message: "Dialectic cadence (turns between reasoning calls)",
      default: String(cadenceDefault),
    });
    const parsed = parseCadence(answer);
    if (parsed === undefined) {
      io.stdout("Not a whole number of turns: using 2\n");
    }
    dialecticCadence = parsed ?? 2;
  }
  const reasoningLevel = flags.reasoningLevel ??
    (interactive
      ? await pick(
        "Dialectic reasoning level",
        REASONING_LEVELS.map((l) => [l, ""] as const),
        config.dialecticReasoningLevel,
      )
      : config.dialecticReasoningLevel);
  const strategyDefault = fromFile(config, "sessionStrategy") || !fresh
    ? config.sessionStrategy
    : "per-session";
  const sessionStrategy = flags.sessionStrategy ??
    (interactive
      ? await pick("Session strategy", SESSION_STRATEGIES, strategyDefault)
      : strategyDefault);

  const placeholder = deployment === "local" && isLocalHonchoUrl(baseUrl);
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
    : envKey
    ? "HONCHO_API_KEY from the environment"
    : "none";
  const effectiveKey = newKey ?? fileKey ?? (placeholder ? undefined : envKey);

  return {
    deployment,
    baseUrl,
    newKey,
    keyFromEnv,
    effectiveKey,
    keyWhere,
    peerName,
    aiPeer,
    workspace,
    observationMode,
    writeFrequency,
    recallMode,
    contextTokens,
    dialecticCadence,
    reasoningLevel,
    sessionStrategy,
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
        describeHonchoError(error, { url, timeoutMs: CLI_CONNECT_TIMEOUT_MS })
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
    const granted = cloud ? undefined : netEntry(baseUrl);
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
      `${REASONING_LEVELS.join(", ")} (default low)`,
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
