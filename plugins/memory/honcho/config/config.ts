/**
 * The resolved Honcho configuration (plugins/memory/honcho/SPEC.md §1):
 * the one `honcho.json`, its host block, then the environment, then defaults.
 * @module
 */

import { getHermesHome, getSecret } from "../../../../src/provider/mod.ts";
import {
  join,
  pythonStr,
  pythonStrip,
  pythonTruthy,
  resolve,
} from "../../../../src/provider/_bundled.ts";
import {
  resolveObservation,
  type SessionObservation,
} from "../session/observation.ts";
import { isRecord } from "../_util.ts";
import {
  type HonchoConfigFile,
  type HonchoConfigFileError,
  readHonchoConfigFile,
} from "./file.ts";
import {
  profileFromHermesHome,
  resolveHonchoConfigPath,
  resolveHostKey,
} from "./paths.ts";
import { type ConfigSource, Lookup, warnOnce } from "./_lookup.ts";
import {
  type HonchoSettings,
  type Setting,
  SETTINGS,
  type SettingsContext,
} from "./settings_table.ts";

/** The fully resolved configuration: settings plus where they came from. */
export interface HonchoConfig extends HonchoSettings {
  /** `hermes`, `hermes_<profile>`, or `HERMES_HONCHO_HOST`. */
  hostKey: string;
  /** The host block actually read (may be a legacy `hermes.<profile>`). */
  hostBlockKey: string;
  /** `default`, `custom`, or a profile name. */
  profile: string;
  hermesHome: string;
  /** The one config file that was read (or the path setup would create). */
  configPath: string;
  /** Where the CLI and {@linkcode saveHonchoConfig} write: `$HERMES_HOME/honcho.json`. */
  writePath: string;
  configFileExists: boolean;
  /** Set when `configPath` exists but does not parse (then `envOnly`). */
  configError: HonchoConfigFileError | undefined;
  /** Settings came from environment variables only (file missing or broken). */
  envOnly: boolean;
  /** A non-empty host block exists, or root `enabled` is `true`. */
  explicitlyConfigured: boolean;
  /** `apiKey` came from the file rather than the environment. */
  apiKeyInFile: boolean;
  /** Root `defaultHost`, if set. */
  defaultHost: string | undefined;
  /** Both peers' switches (preset plus `observation` overrides). */
  observationFlags: SessionObservation;
  sources: Record<keyof HonchoSettings, ConfigSource>;
  /** The whole parsed file (`{}` when missing or broken). */
  raw: Record<string, unknown>;
  hostBlock: Record<string, unknown>;
}

export interface LoadHonchoConfigOptions {
  /** @default {getHermesHome()} */
  hermesHome?: string;
  /** @default {profileFromHermesHome(hermesHome)} */
  profile?: string;
  /** Read this file instead of resolving one (tests, `--config`). */
  configPath?: string;
}

/**
 * The active profile's Honcho configuration; a missing or broken file
 * (one warning) gives environment-only settings, never a throw.
 * @throws {UnscopedSecretError} (from `@hermes/memory`) When a multi-profile
 * gateway reads settings outside a profile's secret scope.
 */
export async function loadHonchoConfig(
  options: LoadHonchoConfigOptions = {},
): Promise<HonchoConfig> {
  const hermesHome = resolve(options.hermesHome ?? getHermesHome());
  const configPath = options.configPath
    ? resolve(options.configPath)
    : await resolveHonchoConfigPath({ hermesHome });
  const file = await readHonchoConfigFile(configPath);
  if (file.error) {
    const where = file.error.line !== undefined
      ? ` at line ${file.error.line}, column ${file.error.column}`
      : "";
    warnOnce(
      `parse:${file.path}:${file.error.line}:${file.error.column}:${file.error.message}`,
      `Cannot use Honcho config ${file.path}${where}: ${file.error.message}; using environment variables only until the file is fixed`,
    );
  }
  return resolveHonchoConfig(file, {
    hermesHome,
    profile: options.profile ?? profileFromHermesHome(hermesHome),
  });
}

export interface ResolveHonchoConfigOptions {
  hermesHome: string;
  profile: string;
}

/**
 * Settings from an already-read file (reads only environment variables).
 * @throws {UnscopedSecretError} (from `@hermes/memory`) When a multi-profile
 * gateway reads settings outside a profile's secret scope.
 */
export function resolveHonchoConfig(
  file: HonchoConfigFile,
  options: ResolveHonchoConfigOptions,
): HonchoConfig {
  const envOnly = !file.exists || file.error !== undefined;
  const raw = envOnly ? {} : file.raw;
  const hostKey = resolveHostKey({ profile: options.profile, rawConfig: raw });
  // Hermes' _host_block: hosts[key], else (for hermes_<p>) the legacy
  // hosts["hermes.<p>"]. Shapes Hermes cannot read (it raises) make the
  // file unusable here: one warning, then environment-only settings.
  const shape = envOnly ? undefined : shapeProblem(raw, hostKey);
  if (shape !== undefined) {
    warnOnce(
      `shape:${file.path}:${shape}`,
      `Cannot use Honcho config ${file.path}: ${shape}; using environment variables only until the file is fixed`,
    );
    return resolveHonchoConfig({
      ...file,
      raw: {},
      error: { message: shape },
    }, options);
  }
  const hosts = isRecord(raw.hosts) ? raw.hosts : {};
  let hostBlockKey = hostKey;
  let host: Record<string, unknown> = isRecord(hosts[hostKey])
    ? hosts[hostKey]
    : {};
  if (!pythonTruthy(host) && hostKey.startsWith("hermes_")) {
    const legacy = `hermes.${hostKey.slice("hermes_".length)}`;
    if (isRecord(hosts[legacy])) {
      host = hosts[legacy];
      hostBlockKey = legacy;
    }
  }
  const root = raw;
  const explicitlyConfigured = Object.keys(host).length > 0 ||
    root.enabled === true;
  const { values, sources } = resolveSettings({
    look: new Lookup(host, root),
    host,
    root,
    path: file.path,
    hostKey,
    envOnly,
    explicitlyConfigured,
    env: (name) => {
      const value = getSecret(name)?.trim();
      return value ? value : undefined;
    },
  });

  // Hermes: str(raw.get("defaultHost", "")).strip(), so 42 is "42".
  const defaultHost = Object.hasOwn(raw, "defaultHost") &&
      pythonStrip(pythonStr(raw.defaultHost)) !== ""
    ? pythonStrip(pythonStr(raw.defaultHost))
    : undefined;
  return {
    ...values,
    hostKey,
    hostBlockKey,
    profile: options.profile,
    hermesHome: resolve(options.hermesHome),
    configPath: file.path,
    writePath: join(resolve(options.hermesHome), "honcho.json"),
    configFileExists: file.exists,
    configError: file.error,
    envOnly,
    explicitlyConfigured,
    apiKeyInFile: sources.apiKey === "host" || sources.apiKey === "root",
    defaultHost,
    observationFlags: resolveObservation(
      values.observationMode,
      values.observation,
    ),
    sources,
    raw,
    hostBlock: host,
  };
}

// Every setting of the table for one home, with where each value came
// from; a setting that needs another one's value resolves it first.
function resolveSettings(
  base: Omit<SettingsContext, "get">,
): {
  values: HonchoSettings;
  sources: Record<keyof HonchoSettings, ConfigSource>;
} {
  const values = {} as Record<string, unknown>;
  const sources = {} as Record<keyof HonchoSettings, ConfigSource>;
  const byField = new Map<string, Setting>(SETTINGS.map((s) => [s.field, s]));
  const ctx: SettingsContext = {
    ...base,
    get: (field) => {
      if (!Object.hasOwn(sources, field)) resolveOne(byField.get(field)!);
      return values[field];
    },
  };
  const resolveOne = (s: Setting): void => {
    const found = s.read(ctx, [s.key ?? s.field, ...(s.aliases ?? [])]);
    sources[s.field] = found ? found.source : "default";
    values[s.field] = found
      ? found.value
      : typeof s.default === "function"
      ? s.default(ctx)
      : s.default;
  };
  for (const s of SETTINGS) ctx.get(s.field);
  return { values: values as unknown as HonchoSettings, sources };
}

function shapeProblem(
  raw: Record<string, unknown>,
  hostKey: string,
): string | undefined {
  const hosts = raw.hosts;
  if (pythonTruthy(hosts) && !isRecord(hosts)) {
    return "'hosts' must be an object of host blocks";
  }
  const blocks = isRecord(hosts) ? hosts : {};
  const legacy = hostKey.startsWith("hermes_")
    ? `hermes.${hostKey.slice("hermes_".length)}`
    : undefined;
  const block = pythonTruthy(blocks[hostKey])
    ? blocks[hostKey]
    : legacy
    ? blocks[legacy]
    : blocks[hostKey];
  const blockKey = pythonTruthy(blocks[hostKey]) || !legacy ? hostKey : legacy;
  if (pythonTruthy(block) && !isRecord(block)) {
    return `'hosts.${blockKey}' must be an object`;
  }
  const host = isRecord(block) ? block : {};
  const observation = pythonTruthy(host.observation)
    ? host.observation
    : raw.observation;
  if (isRecord(observation)) {
    for (const peer of ["user", "ai"]) {
      if (pythonTruthy(observation[peer]) && !isRecord(observation[peer])) {
        return `'observation.${peer}' must be an object like {"observeMe": true}`;
      }
    }
  }
  return undefined;
}

/** Why Honcho is not available ({@linkcode isHonchoUsable} is false). */
export const HONCHO_UNAVAILABLE_REASON =
  "Set HONCHO_API_KEY or run 'hermes honcho setup' (a local Honcho needs only a baseUrl).";

/** Whether the provider can run: enabled, with an API key or a base URL. */
export function isHonchoUsable(
  config: Pick<HonchoConfig, "enabled" | "apiKey" | "baseUrl">,
): boolean {
  return config.enabled && Boolean(config.apiKey || config.baseUrl);
}
