/** The status hook of `hermes memory status` and `doctor`; no client loads until a probe. @module */

import { lazyImport, resolve } from "../../../../src/provider/_bundled.ts";
import {
  buildProfileSecretScope,
  type HermesConfig,
  type ProviderConnectionStatus,
  type ProviderFileStatus,
  type ProviderProblem,
  type ProviderSettingStatus,
  type ProviderStatusContext,
  type ProviderStatusDescription,
  withSecretScope,
} from "../../../../src/cli/mod.ts";
import {
  HONCHO_UNAVAILABLE_REASON,
  type HonchoConfig,
  isHonchoUsable,
  loadHonchoConfig,
} from "../config/config.ts";
import type { ConfigSource } from "../config/_lookup.ts";
import {
  HONCHO_ENVIRONMENT_URLS,
  resolveHonchoConnection,
} from "../client/connection.ts";
import { jsonSetting, SETTING_ROWS } from "./_settings_view.ts";
import { connectionFix, netListedIn, netPermissionFix } from "./_fixes.ts";

// Lazy (see lazyImport): a literal import would have status read the outbox,
// the client and peer naming (about 40 modules it never uses).
const load = <T>(path: string): Promise<T> =>
  lazyImport<T>(path, import.meta.url);

/** Queued messages older than this make doctor report a stalled outbox. */
const STALE_OUTBOX_MS = 60 * 60 * 1000;

function sourceLabel(source: ConfigSource, config: HonchoConfig): string {
  const file = config.configPath;
  return source === "host"
    ? `${file} hosts.${config.hostBlockKey || config.hostKey}`
    : source === "root"
    ? `${file} (root)`
    : source === "env"
    ? "environment"
    : "default";
}

// _common.ts's withProfileSecrets, without loading the client it imports.
// An unreadable .env only means fewer variables (doctor reports it).
async function loadProfileHonchoConfig(
  hermesHome: string,
): Promise<HonchoConfig> {
  const scope = await buildProfileSecretScope(hermesHome).catch(() => ({}));
  return await withSecretScope(scope, () => loadHonchoConfig({ hermesHome }));
}

const fileHoldsKey = (path: string): Promise<boolean> =>
  Deno.readTextFile(path).then(
    (text) => /"apiKey"\s*:/.test(text),
    () => false,
  );

const exists = (path: string): Promise<boolean> =>
  Deno.stat(path).then(() => true, () => false);

async function settingsFiles(
  config: HonchoConfig,
): Promise<ProviderFileStatus[]> {
  const out: ProviderFileStatus[] = [];
  const read = resolve(config.configPath);
  const write = resolve(config.writePath);
  for (const path of new Set([read, write])) {
    const isRead = path === read;
    const present = isRead ? config.configFileExists : await exists(path);
    const entry: ProviderFileStatus = {
      path,
      role: isRead && path === write
        ? "Honcho settings"
        : isRead
        ? "Honcho settings (read: this profile has no honcho.json of its own)"
        : "Honcho settings (setup writes here)",
      format: "json",
      exists: present,
      secret: present && await fileHoldsKey(path),
    };
    if (isRead && config.configError) {
      entry.error = {
        message: config.configError.message,
        line: config.configError.line,
        column: config.configError.column,
        fix:
          "fix the JSON there (often a trailing comma or a missing quote), or remove the file and run 'hermes memory setup honcho'",
      };
    }
    out.push(entry);
  }
  return out;
}

function serverUrl(
  config: HonchoConfig,
  hermesConfig: HermesConfig,
): string | null {
  try {
    return resolveHonchoConnection(config, { hermesConfig }).baseUrl;
  } catch {
    return null;
  }
}

async function probeConnection(
  config: HonchoConfig,
  hermesConfig: HermesConfig,
  timeoutMs: number,
): Promise<ProviderConnectionStatus> {
  const url = serverUrl(config, hermesConfig);
  const notTried = { attempted: false, ok: false, url, elapsedMs: null };
  if (url === null) {
    return {
      ...notTried,
      error: "no API key or base URL is configured",
      fix: connectionFix(
        Object.assign(new Error(""), { name: "HonchoConfigError" }),
        "",
      ),
    };
  }
  const host = new URL(url).host;
  try {
    const { state } = await Deno.permissions.query({ name: "net", host });
    if (state !== "granted") {
      return {
        ...notTried,
        error: `this process has no network access to ${host}`,
        fix: netPermissionFix(host, netListedIn(hermesConfig, host)),
      };
    }
  } catch {
    // Cannot tell: try.
  }
  // Loaded here: the client and peer naming, which status does without offline.
  const [
    { HonchoClient },
    { describeHonchoError, isHonchoError },
    { resolveAiPeerId },
  ] = await Promise.all([
    load<typeof import("../client/client.ts")>("../client/client.ts"),
    load<typeof import("../client/errors.ts")>("../client/errors.ts"),
    load<typeof import("../session/peers.ts")>("../session/peers.ts"),
  ]);
  const started = performance.now();
  try {
    await HonchoClient.fromConfig(config, {
      hermesConfig,
      timeoutMs,
      maxRetries: 0,
    }).getPeerCard(resolveAiPeerId(config));
  } catch (error) {
    // A 404 means reached, and the credentials were accepted: the peer is new.
    if (!isHonchoError(error, "not_found")) {
      return {
        attempted: true,
        ok: false,
        url,
        elapsedMs: Math.round(performance.now() - started),
        error: describeHonchoError(error, { url, timeoutMs }),
        fix: connectionFix(error, url, {
          netListed: netListedIn(hermesConfig, host),
        }),
      };
    }
  }
  const elapsedMs = Math.round(performance.now() - started);
  return { attempted: true, ok: true, url, elapsedMs, error: null, fix: null };
}

/** Sums up the outboxes for doctor, adding what is wrong to `problems`. */
async function outboxSummary(
  hermesHome: string,
  workspace: string,
  problems: ProviderProblem[],
): Promise<Record<string, unknown>> {
  const { outboxReports } = await load<typeof import("./outbox.ts")>(
    "./outbox.ts",
  );
  const reports = await outboxReports(hermesHome, workspace);
  const first = (times: string[]): string | null =>
    times.length === 0 ? null : times.reduce((a, b) => b < a ? b : a);
  const queued = reports.reduce((sum, r) => sum + r.pending, 0);
  const refused = reports.flatMap((r) => r.rejected);
  const rejected = refused.length;
  const oldest = first(reports.flatMap((r) => r.sessions.map((s) => s.oldest)));
  const oldestRejected = first(refused.map((r) => r.rejectedAt));
  if (rejected > 0) {
    problems.push({
      check: "outbox.rejected",
      message:
        `Honcho refused ${rejected} message(s) (first on ${oldestRejected}); they are kept in the outbox's rejected file`,
      fix:
        "see why with 'hermes honcho outbox', fix the cause, then 'hermes honcho outbox retry'",
    });
  }
  if (
    oldest !== null && Date.now() - Date.parse(oldest) > STALE_OUTBOX_MS
  ) {
    problems.push({
      check: "outbox.stalled",
      message:
        `${queued} message(s) are queued and not delivered, the oldest since ${oldest}`,
      fix:
        "check the connection with 'hermes honcho status', then deliver them with 'hermes honcho outbox flush'",
    });
  }
  return { queued, rejected, oldest, oldestRejected };
}

/** The Honcho provider's status, computed on the host (no worker). */
export async function describeHonchoStatus(
  context: ProviderStatusContext,
): Promise<ProviderStatusDescription> {
  const hermesHome = resolve(context.hermesHome);
  const config = await loadProfileHonchoConfig(hermesHome);
  const settings: Record<string, ProviderSettingStatus> = {};
  for (const [key, field] of SETTING_ROWS) {
    const source = config.sources[field];
    settings[key] = {
      value: jsonSetting(key, config[field]),
      source: sourceLabel(source, config),
      set: source !== "default",
    };
  }
  const url = serverUrl(config, context.config);
  // What the provider's isAvailable() answers for the same settings.
  const available = isHonchoUsable(config);
  const description: ProviderStatusDescription = {
    settings,
    available,
    ...(available ? {} : { unavailableReason: HONCHO_UNAVAILABLE_REASON }),
    files: await settingsFiles(config),
    needs: {
      net: url === null ? [] : [new URL(url).host],
      // `logging: true` appends every injection to this file.
      write: config.logging && config.injectionLogPath
        ? [config.injectionLogPath]
        : [],
    },
    extra: {
      host: config.hostKey,
      enabled: config.enabled,
      server: url,
    },
  };
  if (context.probe) {
    description.connection = await probeConnection(
      config,
      context.config,
      Math.max(1, context.probeTimeoutMs),
    );
  }
  if (context.detail === "doctor") {
    const problems: ProviderProblem[] = [];
    if (
      !config.configError && url === HONCHO_ENVIRONMENT_URLS.production &&
      !config.apiKey
    ) {
      problems.push({
        check: "credentials.missing",
        message: `Honcho cloud (${url}) is configured without an API key`,
        fix:
          "give one with 'hermes honcho setup' (typed hidden), or set a self-hosted server: 'hermes memory setup honcho --yes --set baseUrl=http://host:port'",
      });
    }
    if (
      !config.configError && config.enabled && !config.peerName?.trim()
    ) {
      const { SET_USER_PEER_COMMAND } = await load<
        typeof import("../session/peers.ts")
      >("../session/peers.ts");
      problems.push({
        check: "identity.user_peer",
        message:
          "no user peer is configured (peerName), so Honcho memory is off in CLI sessions and 'hermes honcho ask' refuses",
        fix: `set one with '${SET_USER_PEER_COMMAND}'`,
      });
    }
    const outbox = await outboxSummary(
      hermesHome,
      config.workspaceId,
      problems,
    );
    description.extra = { ...description.extra, outbox };
    description.problems = problems;
  }
  return description;
}
