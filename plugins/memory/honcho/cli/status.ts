/** `hermes honcho status` (also `hermes honcho` alone), `--all` one row per profile. @module */

import {
  columns,
  type HermesCommand,
  writeJson,
} from "../../../../src/cli/mod.ts";
import { type HonchoConfig, isHonchoUsable } from "../config/config.ts";
import {
  LOCAL_API_KEY_PLACEHOLDER,
  resolveHonchoConnection,
} from "../client/connection.ts";
import { resolveAiPeerId } from "../session/peers.ts";
import {
  describeConfigError,
  type HonchoCliScope,
  loadScopeConfig,
  profileLabel,
  serverLabel,
} from "./_common.ts";
import { profileRows, scopedAction } from "./_action.ts";
import { fetchMemoryView, printMemoryView } from "./_memory_view.ts";
import { displaySetting, jsonSetting, SETTING_ROWS } from "./_settings_view.ts";
import { cliSessionName } from "./_session_name.ts";
import { sourceText } from "./setting_commands.ts";
import { sanitizeId } from "../_util.ts";

interface StatusOptions {
  all?: boolean;
  json?: boolean;
  offline?: boolean;
  verbose?: boolean;
}

/** The key requests carry (masked), or the `local` placeholder a self-hosted server gets. */
function keyInUse(config: HonchoConfig): string {
  let sent: string | undefined;
  try {
    sent = resolveHonchoConnection(config).apiKey;
  } catch {
    return "(none)";
  }
  if (sent === undefined) return "(none)";
  if (sent === LOCAL_API_KEY_PLACEHOLDER && sent !== config.apiKey) {
    return config.apiKey
      ? `"local" placeholder (HONCHO_API_KEY ${
        displaySetting("apiKey", config.apiKey)
      } from the environment is not sent to a self-hosted server; save it with 'hermes memory setup honcho --yes --set apiKey=KEY')`
      : `"local" placeholder (self-hosted server, no key set)`;
  }
  return `${displaySetting("apiKey", sent)} (${
    sourceText(config.sources.apiKey)
  })`;
}

/** `0`; `1` when the config file does not parse or the connection failed. */
async function runStatus(
  scope: HonchoCliScope,
  options: StatusOptions = {},
): Promise<number> {
  if (options.all) return await statusAll(scope, options);
  const { io } = scope;
  const config = await loadScopeConfig(scope);
  const session = await cliSessionName(config, scope.cwd);
  const userPeer = config.peerName ? sanitizeId(config.peerName) : undefined;
  const aiPeer = resolveAiPeerId(config);
  const usable = isHonchoUsable(config);
  const connect = !options.offline && Boolean(config.apiKey || config.baseUrl);
  const view = connect ? await fetchMemoryView(config) : undefined;
  const notConnected = !connect
    ? options.offline
      ? "skipped (--offline)"
      : config.configError
      ? `cannot read ${config.configPath}: ${
        describeConfigError(config)
      }, so no server or API key comes from it; fix or remove the file`
      : "no API key or base URL is configured; run 'hermes honcho setup'"
    : undefined;
  const code = config.configError || !(options.offline || view?.ok) ? 1 : 0;
  if (options.json) {
    const settings = Object.fromEntries(SETTING_ROWS.map(([key, field]) => [
      key,
      { value: jsonSetting(key, config[field]), source: config.sources[field] },
    ]));
    writeJson(io, {
      host: config.hostKey,
      hostBlock: config.hostBlockKey,
      profile: config.profile,
      configPath: config.configPath,
      configFileExists: config.configFileExists,
      configError: config.configError ?? null,
      writePath: config.writePath,
      usable,
      userPeer: userPeer ?? null,
      aiPeer,
      observation: config.observationFlags,
      session: {
        cwd: scope.cwd,
        key: session.key,
        id: session.sessionId,
        rule: session.reason,
      },
      settings,
      connection: {
        attempted: view !== undefined,
        ok: view?.ok ?? false,
        url: view?.url ?? serverLabel(config),
        error: view ? view.error ?? null : notConnected,
        userCard: view?.userCard ?? null,
        userCardFrom: view?.userCardFrom ?? null,
        aiRepresentation: view?.aiRepresentation ?? null,
      },
    });
    return code;
  }

  io.stdout(
    `Honcho memory: host ${config.hostKey}${
      config.hostBlockKey !== config.hostKey
        ? ` (legacy block ${config.hostBlockKey})`
        : ""
    }, ${profileLabel(scope, config.profile)}\n`,
  );
  const fileState = config.configError
    ? ` (${describeConfigError(config)}; using environment variables only)`
    : config.configFileExists
    ? ""
    : " (does not exist; environment variables only)";
  io.stdout(
    columns([
      ["  Config file", `${config.configPath}${fileState}`],
      ["  Write path", config.writePath],
      [
        "  Usable",
        usable
          ? "yes"
          : config.configError
          ? `no: ${config.configPath} does not parse (see Connection below)`
          : config.enabled
          ? "no: no API key or base URL"
          : "no: disabled (hermes honcho enable)",
      ],
      ["  Server", serverLabel(config)],
      ["  API key", keyInUse(config)],
      [
        "  User peer",
        userPeer ?? "(none: set one with 'hermes honcho peer --user NAME')",
      ],
      ["  AI peer", aiPeer],
      ["  Observation", describeObservation(config)],
      [
        "  Session",
        `${session.sessionId} (${
          session.reason === "mapped"
            ? "mapped for this directory"
            : session.reason
        })`,
      ],
    ]),
  );
  const rows = SETTING_ROWS.filter(([, field]) =>
    options.verbose || config.sources[field] !== "default"
  ).map(([key, field]) => [
    `  ${key}`,
    displaySetting(key, config[field]),
    sourceText(config.sources[field]),
  ]);
  const hidden = SETTING_ROWS.length - rows.length;
  io.stdout(
    `\nSettings (value, then where it came from${
      hidden > 0
        ? `; ${hidden} at their defaults not shown, --verbose lists them`
        : ""
    }):\n`,
  );
  io.stdout(rows.length > 0 ? columns(rows) : "  (all at their defaults)\n");
  io.stdout(`\nConnection${view ? ` (${view.url}, timeout 5 s)` : ""}:\n`);
  if (view) printMemoryView(io, view);
  else io.stdout(`  Not connected: ${notConnected}\n`);
  if (config.configError) {
    io.stderr(
      `error: ${config.configPath}: ${
        describeConfigError(config)
      }; fix or remove the file (the settings above come from the environment)\n`,
    );
  }
  return code;
}

function describeObservation(config: HonchoConfig): string {
  const flags = config.observationFlags;
  const yes = (v: boolean): string => v ? "yes" : "no";
  return `${config.observationMode}: user observeMe ${
    yes(flags.user.observeMe)
  }, observeOthers ${yes(flags.user.observeOthers)}; AI observeMe ${
    yes(flags.ai.observeMe)
  }, observeOthers ${yes(flags.ai.observeOthers)}`;
}

async function statusAll(
  scope: HonchoCliScope,
  options: StatusOptions,
): Promise<number> {
  const rows = await profileRows(
    scope,
    options.json,
    ["Enabled", "Recall", "Write", "Config"],
    (config) => ({
      enabled: isHonchoUsable(config),
      recallMode: config.recallMode,
      writeFrequency: String(config.writeFrequency),
      configPath: config.configPath,
      configError: config.configError ? describeConfigError(config) : null,
    }),
    (r) => [
      r.enabled ? "yes" : "no",
      r.recallMode,
      r.writeFrequency,
      r.configError ? `${r.configPath} (broken)` : r.configPath,
    ],
  );
  if (rows) scope.io.stdout("(* = the profile this command runs for)\n");
  return 0;
}

export function registerStatus(honcho: HermesCommand): HermesCommand {
  const command = honcho.command("status", { isDefault: true })
    .summary("Show settings, their sources, and what Honcho knows")
    .description(
      "Show every resolved Honcho setting with where it came from (host block,\n" +
        "root, env, default), the masked API key, the peers and the session of\n" +
        "this directory; then connect (timeout 5 s) and show the user card facts\n" +
        "and the AI representation excerpt, or why it could not connect.\n" +
        "Runs when 'hermes honcho' is given no command.",
    )
    .option("--all", "One row per profile: host, enabled, recall, write", false)
    .option("--json", "Print JSON (the key stays masked)", false)
    .option("--offline", "Do not connect; local settings only", false)
    .option("--verbose", "List every setting, also those at defaults", false)
    .example("hermes honcho status")
    .example("hermes honcho status --json")
    .example("hermes honcho status --all")
    .example("hermes honcho --target-profile coder status");
  return scopedAction(honcho, command, runStatus);
}
