/** The save side of Honcho's setup: files, net grant, checks and summary. @module */

import { join } from "../../../../src/provider/_bundled.ts";
import type { CliIo } from "../../../../src/cli/mod.ts";
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
import { HONCHO_CONFIG_SCHEMA } from "../config/schema.ts";
import {
  cleanBaseUrl,
  HONCHO_ENVIRONMENT_URLS,
  isLocalHonchoUrl,
} from "../client/connection.ts";
import type { HonchoConfig } from "../config/config.ts";
import { resolveAiPeerId } from "../session/peers.ts";
import { HONCHO_TOOL_NAMES } from "../tools.ts";
import {
  checkHonchoId,
  CLI_CONNECT_TIMEOUT_MS,
  connectHoncho,
  HonchoCliError,
  type HonchoCliScope,
  isPromptCancelled,
  loadScopeConfig,
  reportWrite,
  requireReadableConfig,
  resolveScope,
  runGuarded,
  serverLabel,
  writeHonchoFile,
  writeHostKey,
} from "./_common.ts";
import { describeHonchoError } from "../client/errors.ts";
import { connectionFix } from "./_fixes.ts";
import { errorText, isRecord, sanitizeId } from "../_util.ts";

export const DEFAULT_LOCAL_URL = "http://localhost:8000";
export const CLOUD_URL = HONCHO_ENVIRONMENT_URLS.production!;

/** Everything the wizard collected, before it is written. */
export interface SetupPlan {
  deployment: "cloud" | "local";
  baseUrl: string;
  /** A new key to store; `undefined` keeps what is there. */
  newKey: string | undefined;
  /** Remove file keys so `HONCHO_API_KEY` from the environment is used. */
  keyFromEnv: boolean;
  /** The key that will be used, for the summary (printed masked). */
  effectiveKey: string | undefined;
  keyWhere: string;
  /** The host-block settings, by `honcho.json` key (`undefined` removes one). */
  host: Record<string, unknown>;
}

export function checkBaseUrl(value: string): string {
  const text = value.trim();
  const url = URL.canParse(text) ? new URL(text) : undefined;
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

/** Writes the plan to `honcho.json` (one atomic write), then `memory.provider: honcho` and the net grant to `config.yaml`; then checks. */
export async function saveSetup(
  scope: HonchoCliScope,
  config: HonchoConfig,
  plan: SetupPlan,
  { yamlHome, test }: { yamlHome: string; test: boolean },
): Promise<number> {
  const { io } = scope;
  const hostKey = writeHostKey(config);
  const root: Record<string, unknown> = {};
  const host: Record<string, unknown> = { enabled: true, ...plan.host };
  // An uncapped budget removes the key, unless the root sets one to override.
  if (host.contextTokens === undefined && config.raw.contextTokens != null) {
    host.contextTokens = 0;
  }
  if (config.hostBlock.saveMessages == null) host.saveMessages = true;
  // The default host's server goes to the root (plugins/memory/honcho/SPEC.md §12: cloud removes root baseUrl);
  // another host's only to its block when it differs, so one profile's setup never moves the others.
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
    // Rebuilt from the file inside the lock: keeps keys other writers set meanwhile.
    if (root.endpoint !== undefined && isRecord(file.endpoint)) {
      root.endpoint = { ...file.endpoint, baseUrl: undefined };
    }
    return { root, host, hostKey };
  });
  await reportWrite(scope, written);

  try {
    await selectHoncho(
      io,
      yamlHome,
      new URL(plan.baseUrl).host,
      `\nSaved Honcho settings to ${written.path} (hosts.${hostKey}, mode 0600)\n`,
    );
  } catch (error) {
    throw new HonchoCliError(
      `Saved ${written.path}, but cannot update ${getConfigPath(yamlHome)}: ${
        errorText(error)
      }; set memory.provider: honcho there by hand`,
    );
  }

  const after = await checkSaved(scope, yamlHome, test);
  printSummary(io, after.config, plan);
  return after.failed ? 1 : 0;
}

/** After a save: the logging-grant warning, then the connection test ("failed" exits 1). */
async function checkSaved(
  scope: HonchoCliScope,
  yamlHome: string,
  test: boolean,
): Promise<{ config: HonchoConfig; failed: boolean }> {
  const config = await loadScopeConfig(scope);
  warnLoggingGrant(
    scope.io,
    config,
    await loadConfig({ hermesHome: yamlHome }),
  );
  const failed = test && await testConnection(scope.io, config) === "failed";
  return { config, failed };
}

/** A config.yaml that does not parse stops setup before any write. */
export async function requireConfigYaml(hermesHome: string): Promise<void> {
  await loadConfig({ hermesHome }).catch((error) => {
    throw new HonchoCliError(
      `Cannot set up Honcho: ${errorText(error)}; nothing was written`,
    );
  });
}

/** The scope's configuration, refusing one whose file does not parse. */
export async function loadSetupConfig(
  scope: HonchoCliScope,
): Promise<HonchoConfig> {
  const config = await loadScopeConfig(scope);
  requireReadableConfig(config, "set up Honcho from");
  return config;
}

/** Tests the saved settings: `"ok"`, `"failed"` (a warning with the fix is printed; the command then exits 1) or `"untested"` (this process may not reach the server yet). */
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

/** Warns when `logging` is on but `config.yaml` does not let the provider write its injection log (every recall would then fail to log). */
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

/** `hermes memory setup honcho --yes --set key=value…`: saves exactly the keys given; `apiKey` to `.env` for cloud, else to the host block. */
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
    const baseUrl = typeof root.baseUrl === "string" && root.baseUrl
      ? root.baseUrl
      : config.baseUrl
      ? cleanBaseUrl(config.baseUrl)
      : HONCHO_ENVIRONMENT_URLS[config.environment] ?? CLOUD_URL;
    const cloud = baseUrl === CLOUD_URL;
    if (cloud && !apiKey && !config.apiKey) {
      throw new HonchoCliError(
        `Honcho cloud (${CLOUD_URL}) needs an API key and none is set: give it with --set apiKey=<key> (saved to ${
          join(hermesHome, ".env")
        } as HONCHO_API_KEY), set HONCHO_API_KEY, or run 'hermes honcho setup' (it asks, hidden); for a self-hosted server give --set baseUrl=http://host:port instead. Nothing was saved`,
      );
    }
    await requireConfigYaml(hermesHome);
    const hostKey = writeHostKey(config);
    if (apiKey && isLocalHonchoUrl(baseUrl)) {
      // A self-hosted server is sent only a honcho.json key (HONCHO_API_KEY is for cloud), as Hermes stores a local JWT.
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
    await selectHoncho(
      io,
      hermesHome,
      cloud ? undefined : new URL(baseUrl).host,
    );
    const { failed } = await checkSaved(scope, hermesHome, true);
    io.stdout("Start a new session to use it.\n");
    return failed ? 1 : 0;
  });
}

/** `memory.provider: honcho` in `config.yaml` and `granted` added to its net grant (read inside the lock), then says so after `saved`. */
async function selectHoncho(
  io: CliIo,
  hermesHome: string,
  granted: string | undefined,
  saved = "",
): Promise<void> {
  await saveConfig((current: HermesConfig) => {
    if (granted === undefined) return { memory: { provider: "honcho" } };
    const existing = getConfigValue(current, "memory.permissions.honcho.net");
    const net = Array.isArray(existing)
      ? existing.filter((v): v is string => typeof v === "string")
      : [];
    if (!net.includes(granted)) net.push(granted);
    return { memory: { provider: "honcho", permissions: { honcho: { net } } } };
  }, { hermesHome });
  io.stdout(
    `${saved}Set memory.provider: honcho${
      granted ? ` and allowed ${granted} in memory.permissions.honcho.net` : ""
    } (${getConfigPath(hermesHome)})\n`,
  );
}
