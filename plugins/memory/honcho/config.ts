/**
 * Honcho configuration: where `honcho.json` is, which host block applies,
 * and the fully resolved settings (honcho-provider §1).
 *
 * - {@linkcode resolveHonchoConfigPath}: the ONE file that is read
 *   (`$HERMES_HOME/honcho.json` → default profile's `~/.hermes/honcho.json`
 *   → `~/.honcho/config.json`).
 * - {@linkcode resolveHostKey}: `HERMES_HONCHO_HOST` → `hermes` /
 *   `hermes_<profile>` (root `defaultHost` renames the default host).
 * - {@linkcode loadHonchoConfig}: every setting of §1.4–§1.5 resolved
 *   (host block, then root, then environment, then default) into one
 *   camelCase object, with `sources` saying where each value came from.
 *   A broken file logs one warning naming the file, line and column and
 *   falls back to environment-only settings; it never throws for that.
 * - {@linkcode saveHonchoConfig}: atomic `0600` shallow merge into
 *   `$HERMES_HOME/honcho.json`; refuses to overwrite a file that does not
 *   parse.
 * - {@linkcode resolveHonchoConnection}: what the HTTP client needs (cleaned
 *   base URL, key or the local placeholder, timeout, telemetry headers).
 *
 * Environment variables are read only through the framework (`getSecret`),
 * so per-turn secret scopes of a multi-profile gateway apply.
 *
 * @module
 */

import { dirname, join, resolve } from "node:path";
import { getHermesHome, getSecret, log } from "@hermes/memory/provider";
import {
  normalizeObservationMode,
  type ObservationMode,
  type ObservationOverrides,
  parseObservationOverrides,
  resolveObservation,
  type SessionObservation,
} from "./observation.ts";
import { isRecord } from "./_util.ts";
import { toFlag, toFloat, toInt, truthy } from "./_coerce.ts";
import {
  type HonchoConfigFile,
  type HonchoConfigFileError,
  readHonchoConfigFile,
} from "./config_file.ts";
import {
  globalHonchoConfigPath,
  profileFromHermesHome,
  resolveHonchoConfigPath,
  resolveHostKey,
} from "./config_paths.ts";

// ---------------------------------------------------------------------------
// Types
// ---------------------------------------------------------------------------

/** Where a resolved value came from (shown by `hermes honcho status`). */
export type ConfigSource = "host" | "root" | "env" | "default";

/** A dialectic reasoning level. */
export type ReasoningLevel = "minimal" | "low" | "medium" | "high" | "max";

/** The reasoning levels, from the cheapest to the most expensive. */
export const REASONING_LEVELS: readonly ReasoningLevel[] = Object.freeze([
  "minimal",
  "low",
  "medium",
  "high",
  "max",
]);

/** How memory reaches the model. */
export type RecallMode = "hybrid" | "context" | "tools";

/** When the base context layer is injected. */
export type InjectionFrequency = "every-turn" | "first-turn";

/** A section of the session-start injection (`injection.sessionStart`). */
export type SessionStartSection =
  | "summary"
  | "peerRepresentation"
  | "peerCard"
  | "aiRepresentation"
  | "aiCard";

/** The section names accepted in `injection.sessionStart`. */
export const SESSION_START_SECTIONS: readonly SessionStartSection[] = Object
  .freeze([
    "summary",
    "peerRepresentation",
    "peerCard",
    "aiRepresentation",
    "aiCard",
  ]);

/**
 * When turns are written: `async` (background writer), `turn` (now),
 * `session` (at session end), or every N turns. Unknown strings behave like
 * `session`.
 */
export type WriteFrequency = string | number;

/**
 * How a Honcho session is chosen: `per-directory`, `per-repo`,
 * `per-session`, `global`; unknown strings behave like `global`.
 */
export type SessionStrategy = string;

/** Every resolved setting of `honcho.json` (§1.4, §1.5). */
export interface HonchoSettings {
  /** `apiKey`: host → root → `HONCHO_API_KEY`. */
  apiKey: string | undefined;
  /**
   * `baseUrl`: host `baseUrl`/`base_url` → root `endpoint.baseUrl`/`baseUrl`/
   * `base_url` → `HONCHO_BASE_URL` → `HONCHO_URL`; values with characters
   * outside printable ASCII are rejected (warning). Not yet cleaned.
   */
  baseUrl: string | undefined;
  /** `environment` (`production` or `local`); ignored when a base URL is set. @default {"production"} */
  environment: string;
  /** `workspace`; defaults to the host key (`hermes` in env-only mode). */
  workspaceId: string;
  /** `aiPeer`; defaults to the host key. */
  aiPeer: string;
  /** `peerName`: the user's peer name, if configured. */
  peerName: string | undefined;
  /** `timeout`/`requestTimeout` in seconds (positive), or `undefined` (client default 30 s). */
  timeout: number | undefined;
  /** `enabled`; defaults to whether a key or base URL is configured. */
  enabled: boolean;
  /** `pinUserPeer` (legacy `pinPeerName`): every runtime user collapses to `peerName`. @default {false} */
  pinUserPeer: boolean;
  /** `userPeerAliases`: runtime user id → peer id; a host map replaces the root map. @default {{}} */
  userPeerAliases: Record<string, string>;
  /** `runtimePeerPrefix`: prefix for generated runtime peer ids. @default {""} */
  runtimePeerPrefix: string;
  /** `saveMessages`: write turns to Honcho. @default {true} */
  saveMessages: boolean;
  /** `writeFrequency`; `"3"` parses to `3`. @default {"async"} */
  writeFrequency: WriteFrequency;
  /** `contextTokens`: injection budget in tokens, `undefined` = uncapped (0 or less also uncapped). */
  contextTokens: number | undefined;
  /** `dialecticReasoningLevel`; invalid values fall back to `low`. @default {"low"} */
  dialecticReasoningLevel: ReasoningLevel;
  /** `dialecticDynamic`: the model may pick a level per call. @default {true} */
  dialecticDynamic: boolean;
  /** `dialecticMaxChars`: cap of injected dialectic text (positive). @default {600} */
  dialecticMaxChars: number;
  /** `dialecticDepth`: passes per dialectic, clamped to 1–3. @default {1} */
  dialecticDepth: number;
  /** `dialecticDepthLevels`: per-pass levels, exactly `dialecticDepth` long, or `undefined`. */
  dialecticDepthLevels: ReasoningLevel[] | undefined;
  /** `reasoningHeuristic`: longer queries bump the level. @default {true} */
  reasoningHeuristic: boolean;
  /** `reasoningLevelCap`: the heuristic's ceiling; invalid values → `high`. @default {"high"} */
  reasoningLevelCap: ReasoningLevel;
  /** `messageMaxChars`: chunk size of written messages, clamped to 100–25000. @default {25000} */
  messageMaxChars: number;
  /** `dialecticMaxInputChars`: cap of a dialectic query, clamped to 1–10000. @default {10000} */
  dialecticMaxInputChars: number;
  /** `recallMode` (`auto` → `hybrid`; invalid → `hybrid`). @default {"hybrid"} */
  recallMode: RecallMode;
  /** `recallSync`: bounded synchronous recall for the current message. @default {false} */
  recallSync: boolean;
  /** `initOnSessionStart`: init eagerly in tools mode. @default {false} */
  initOnSessionStart: boolean;
  /** `injectionFrequency`. @default {"every-turn"} */
  injectionFrequency: InjectionFrequency;
  /** `contextCadence`: turns between base-context refreshes (positive). @default {1} */
  contextCadence: number;
  /** `dialecticCadence`: turns between automatic dialectic calls (positive). @default {1} */
  dialecticCadence: number;
  /** `queryRewrite`. @default {false} */
  queryRewrite: boolean;
  /** `firstTurnBaseWait` in seconds, at least 0. @default {3} */
  firstTurnBaseWait: number;
  /** `firstTurnDialecticWait` in seconds, at least 0. @default {2} */
  firstTurnDialecticWait: number;
  /** `observationMode`; without the key: `unified` when explicitly configured, else `directional`. */
  observationMode: ObservationMode;
  /** `observation`: per-peer overrides of the preset, if any. */
  observation: ObservationOverrides | undefined;
  /** `sessionStrategy`. @default {"per-directory"} */
  sessionStrategy: SessionStrategy;
  /** `sessionPeerPrefix`: prefix session names with `peerName`. @default {false} */
  sessionPeerPrefix: boolean;
  /** `sessionAiPeerPrefix`: prefix session names with the AI peer. @default {false} */
  sessionAiPeerPrefix: boolean;
  /** `a2aSessions`: bot-authored turns go to per-sender sessions. @default {true} */
  a2aSessions: boolean;
  /** Root `sessions`: cwd path → session name. @default {{}} */
  sessions: Record<string, string>;
  /** `injection.sessionStart`: sections to inject, `undefined` = all, `[]` = none. */
  injectionSessionStart: SessionStartSection[] | undefined;
  /** `logging` → `HONCHO_LOGGING`; `HONCHO_INJECTION_LOG` also enables it. @default {false} */
  logging: boolean;
  /** Where the injection audit log goes when `logging` is on, else `undefined`. */
  injectionLogPath: string | undefined;
  /** The host block's `oauth` grant object, if any (opaque here). */
  oauth: Record<string, unknown> | undefined;
}

/** The fully resolved configuration: settings plus where they came from. */
export interface HonchoConfig extends HonchoSettings {
  /** The host key (`hermes`, `hermes_<profile>`, or `HERMES_HONCHO_HOST`). */
  hostKey: string;
  /** The key of the host block actually read (may be a legacy `hermes.<profile>`). */
  hostBlockKey: string;
  /** The profile the host key was derived from (`default`, `custom`, or a name). */
  profile: string;
  /** The profile home used. */
  hermesHome: string;
  /** The one config file that was read (or the path setup would create). */
  configPath: string;
  /** Where the CLI and {@linkcode saveHonchoConfig} write: `$HERMES_HOME/honcho.json`. */
  writePath: string;
  /** Whether `configPath` exists. */
  configFileExists: boolean;
  /** Set when `configPath` exists but does not parse (then `envOnly`). */
  configError: HonchoConfigFileError | undefined;
  /** Settings came from environment variables only (file missing or broken). */
  envOnly: boolean;
  /** A non-empty host block exists, or root `enabled` is `true`. */
  explicitlyConfigured: boolean;
  /** Whether `apiKey` came from the file (host or root) rather than the environment. */
  apiKeyInFile: boolean;
  /** Root `defaultHost`, if set. */
  defaultHost: string | undefined;
  /** Both peers' observation switches (preset plus `observation` overrides). */
  observationFlags: SessionObservation;
  /** For each setting, where its value came from. */
  sources: Record<keyof HonchoSettings, ConfigSource>;
  /** The whole parsed file (`{}` when missing or broken), for the CLI. */
  raw: Record<string, unknown>;
  /** The host block read (`{}` when none). */
  hostBlock: Record<string, unknown>;
}

// ---------------------------------------------------------------------------
// Lookup semantics (§1.3)
// ---------------------------------------------------------------------------

interface Found<T> {
  value: T;
  source: ConfigSource;
}

class Lookup {
  readonly host: Record<string, unknown>;
  readonly root: Record<string, unknown>;

  constructor(host: Record<string, unknown>, root: Record<string, unknown>) {
    this.host = host;
    this.root = root;
  }

  /** Host value if truthy, else root value if truthy. */
  pick(key: string): Found<unknown> | undefined {
    if (truthy(this.host[key])) {
      return { value: this.host[key], source: "host" };
    }
    if (truthy(this.root[key])) {
      return { value: this.root[key], source: "root" };
    }
    return undefined;
  }

  /** Host value if not null, else root value if not null. */
  pickSet(key: string): Found<unknown> | undefined {
    if (this.host[key] != null) {
      return { value: this.host[key], source: "host" };
    }
    if (this.root[key] != null) {
      return { value: this.root[key], source: "root" };
    }
    return undefined;
  }

  /** First non-null of host[k1], host[k2]…, root[k1], root[k2]…, as a flag. */
  flag(keys: readonly string[], fallback: boolean): Found<boolean> {
    for (
      const [layer, source] of [[this.host, "host"], [
        this.root,
        "root",
      ]] as const
    ) {
      for (const key of keys) {
        if (layer[key] != null) {
          return { value: toFlag(layer[key], fallback), source };
        }
      }
    }
    return { value: fallback, source: "default" };
  }

  /** First of host[k], root[k] (non-null) that `cast` accepts. */
  parsed<T>(
    key: string,
    cast: (value: unknown) => T | undefined,
  ): Found<T> | undefined {
    for (
      const [layer, source] of [[this.host, "host"], [
        this.root,
        "root",
      ]] as const
    ) {
      if (layer[key] == null) continue;
      const value = cast(layer[key]);
      if (value !== undefined) return { value, source };
    }
    return undefined;
  }

  /** The first array among host[k], root[k]. */
  firstList(key: string): Found<unknown[]> | undefined {
    if (Array.isArray(this.host[key])) {
      return { value: this.host[key] as unknown[], source: "host" };
    }
    if (Array.isArray(this.root[key])) {
      return { value: this.root[key] as unknown[], source: "root" };
    }
    return undefined;
  }

  /** Host value if the key is present in the host block (even null), else root. */
  present(key: string): Found<unknown> | undefined {
    if (Object.hasOwn(this.host, key)) {
      return { value: this.host[key], source: "host" };
    }
    if (Object.hasOwn(this.root, key)) {
      return { value: this.root[key], source: "root" };
    }
    return undefined;
  }

  /** `present`, null → undefined, else the trimmed string form. */
  string(key: string): Found<string> | undefined {
    const found = this.present(key);
    if (!found || found.value == null) return undefined;
    return { value: String(found.value).trim(), source: found.source };
  }

  /** `present`; must be an object; keys and values trimmed; empties dropped. */
  stringMap(key: string): Found<Record<string, string>> | undefined {
    const found = this.present(key);
    if (!found || !isRecord(found.value)) return undefined;
    return { value: toStringMap(found.value), source: found.source };
  }
}

function toStringMap(value: Record<string, unknown>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [rawKey, rawValue] of Object.entries(value)) {
    if (rawValue == null || typeof rawValue === "object") continue;
    const key = rawKey.trim();
    const item = String(rawValue).trim();
    if (key && item) out[key] = item;
  }
  return out;
}

function normalizeLevel(value: unknown): ReasoningLevel | undefined {
  if (typeof value !== "string") return undefined;
  const text = value.trim().toLowerCase();
  return (REASONING_LEVELS as readonly string[]).includes(text)
    ? text as ReasoningLevel
    : undefined;
}

const warned = new Set<string>();

function warnOnce(key: string, message: string): void {
  if (warned.has(key)) return;
  warned.add(key);
  log("warn", message);
}

// ---------------------------------------------------------------------------
// Resolution
// ---------------------------------------------------------------------------

/** Options of {@linkcode loadHonchoConfig}. */
export interface LoadHonchoConfigOptions {
  /** The profile home. @default {getHermesHome()} */
  hermesHome?: string;
  /** The profile name (for the host key). @default {profileFromHermesHome(hermesHome)} */
  profile?: string;
  /** Read this file instead of resolving one (tests, `--config`). */
  configPath?: string;
}

/**
 * Loads the active profile's Honcho configuration: reads the one config file
 * of {@linkcode resolveHonchoConfigPath}, picks the host block, resolves
 * every setting with its default and validation, and records each value's
 * source. A missing file gives environment-only settings; a broken file
 * logs a warning naming the file, line and column and also gives
 * environment-only settings. Never throws for file problems.
 *
 * @param options Home, profile, or an explicit file.
 * @returns The resolved configuration.
 * @throws {UnscopedSecretError} (from `@hermes/memory`) When a multi-profile
 * gateway reads settings outside a profile's secret scope.
 *
 * @example Loading and checking usability
 * ```ts no-assert
 * import { isHonchoUsable, loadHonchoConfig } from "./config.ts";
 * const config = await loadHonchoConfig();
 * if (isHonchoUsable(config)) console.log(config.workspaceId, config.sources.apiKey);
 * ```
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

/** Options of {@linkcode resolveHonchoConfig}. */
export interface ResolveHonchoConfigOptions {
  /** The profile home. */
  hermesHome: string;
  /** The profile name. */
  profile: string;
}

/**
 * Resolves settings from an already-read file (the pure part of
 * {@linkcode loadHonchoConfig}; reads only environment variables).
 *
 * @param file What {@linkcode readHonchoConfigFile} returned.
 * @param options Home and profile.
 * @returns The resolved configuration.
 * @throws {UnscopedSecretError} (from `@hermes/memory`) When a multi-profile
 * gateway reads settings outside a profile's secret scope.
 *
 * @example Using resolveHonchoConfig
 * ```ts no-assert
 * import { readHonchoConfigFile } from "./config_file.ts";
import { resolveHonchoConfig } from "./config.ts";
 * const file = await readHonchoConfigFile("/tmp/honcho.json");
 * const config = resolveHonchoConfig(file, { hermesHome: "/tmp", profile: "default" });
 * ```
 */
export function resolveHonchoConfig(
  file: HonchoConfigFile,
  options: ResolveHonchoConfigOptions,
): HonchoConfig {
  const envOnly = !file.exists || file.error !== undefined;
  const raw = envOnly ? {} : file.raw;
  const hostKey = resolveHostKey({ profile: options.profile, rawConfig: raw });
  const hosts = isRecord(raw.hosts) ? raw.hosts : {};
  let hostBlockKey = hostKey;
  let host: Record<string, unknown> = isRecord(hosts[hostKey])
    ? hosts[hostKey]
    : {};
  if (Object.keys(host).length === 0 && hostKey.startsWith("hermes_")) {
    const legacy = `hermes.${hostKey.slice("hermes_".length)}`;
    if (isRecord(hosts[legacy]) && Object.keys(hosts[legacy]).length > 0) {
      host = hosts[legacy];
      hostBlockKey = legacy;
    }
  }
  const root = raw;
  const look = new Lookup(host, root);
  const sources = {} as Record<keyof HonchoSettings, ConfigSource>;
  const set = <K extends keyof HonchoSettings>(
    key: K,
    found: Found<HonchoSettings[K]> | undefined,
    fallback: HonchoSettings[K],
  ): HonchoSettings[K] => {
    sources[key] = found ? found.source : "default";
    return found ? found.value : fallback;
  };
  const env = (name: string): string | undefined => {
    const value = getSecret(name)?.trim();
    return value ? value : undefined;
  };

  // --- connection and identity (§1.4)
  let apiKeyFound: Found<string | undefined> | undefined;
  const fileKey = look.pick("apiKey");
  if (fileKey && typeof fileKey.value === "string" && fileKey.value.trim()) {
    apiKeyFound = { value: fileKey.value.trim(), source: fileKey.source };
  } else if (env("HONCHO_API_KEY")) {
    apiKeyFound = { value: env("HONCHO_API_KEY"), source: "env" };
  }
  const apiKey = set("apiKey", apiKeyFound, undefined);

  const baseUrl = set(
    "baseUrl",
    resolveBaseUrl(host, root, env, file.path),
    undefined,
  );

  const environmentFound: Found<string> | undefined = envOnly
    ? (env("HONCHO_ENVIRONMENT")
      ? { value: env("HONCHO_ENVIRONMENT")!, source: "env" }
      : undefined)
    : stringFound(look.pick("environment"));
  const environment = set("environment", environmentFound, "production");

  const workspaceId = set(
    "workspaceId",
    stringFound(look.pick("workspace")),
    envOnly ? "hermes" : hostKey,
  );
  const aiPeer = set("aiPeer", stringFound(look.pick("aiPeer")), hostKey);
  const peerName = set(
    "peerName",
    stringFound(look.pick("peerName")),
    undefined,
  );

  let timeoutFound: Found<number | undefined> | undefined;
  for (const [layer, source] of [[host, "host"], [root, "root"]] as const) {
    for (const key of ["timeout", "requestTimeout"]) {
      const n = toFloat(layer[key]);
      if (timeoutFound === undefined && n !== undefined && n > 0) {
        timeoutFound = { value: n, source };
      }
    }
  }
  if (!timeoutFound) {
    const n = toFloat(env("HONCHO_TIMEOUT"));
    if (n !== undefined && n > 0) timeoutFound = { value: n, source: "env" };
  }
  const timeout = set("timeout", timeoutFound, undefined);

  const enabledFound = look.pickSet("enabled");
  const enabled = set(
    "enabled",
    enabledFound
      ? {
        value: toFlag(enabledFound.value, Boolean(apiKey || baseUrl)),
        source: enabledFound.source,
      }
      : undefined,
    Boolean(apiKey || baseUrl),
  );
  const explicitlyConfigured = Object.keys(host).length > 0 ||
    root.enabled === true;

  const defaultHost = typeof raw.defaultHost === "string" &&
      raw.defaultHost.trim()
    ? raw.defaultHost.trim()
    : undefined;
  const defaultHostKey = defaultHost ?? "hermes";
  const defaultBlock = hosts[defaultHostKey];
  if (
    !apiKey && !baseUrl && hostKey !== defaultHostKey &&
    isRecord(defaultBlock) &&
    truthy(defaultBlock.apiKey)
  ) {
    warnOnce(
      `inherit:${file.path}:${hostKey}`,
      `Honcho host block '${hostKey}' in ${file.path} has no apiKey and does not inherit the default host's key: run 'hermes honcho setup' for this profile or set HONCHO_API_KEY`,
    );
  }

  // --- behaviour keys (§1.5)
  const pinUserPeer = set(
    "pinUserPeer",
    look.flag(["pinUserPeer", "pinPeerName"], false),
    false,
  );
  const userPeerAliases = set(
    "userPeerAliases",
    look.stringMap("userPeerAliases"),
    {},
  );
  const runtimePeerPrefix = set(
    "runtimePeerPrefix",
    look.string("runtimePeerPrefix"),
    "",
  );
  const saveMessages = set(
    "saveMessages",
    map(look.pickSet("saveMessages"), (v) => toFlag(v, truthy(v))),
    true,
  );
  const writeFrequency = set(
    "writeFrequency",
    map(look.pick("writeFrequency"), parseWriteFrequency),
    "async",
  );
  const contextTokens = set(
    "contextTokens",
    map(look.parsed("contextTokens", toInt), (n) => n > 0 ? n : undefined, {
      keepUndefined: true,
    }),
    undefined,
  );
  const dialecticReasoningLevel = set(
    "dialecticReasoningLevel",
    map(look.pick("dialecticReasoningLevel"), normalizeLevel),
    "low",
  );
  const dialecticDynamic = set(
    "dialecticDynamic",
    look.flag(["dialecticDynamic"], true),
    true,
  );
  const dialecticMaxChars = set(
    "dialecticMaxChars",
    look.parsed("dialecticMaxChars", positiveInt),
    600,
  );
  const dialecticDepth = set(
    "dialecticDepth",
    map(look.parsed("dialecticDepth", toInt), (n) => clamp(n, 1, 3)),
    1,
  );
  const dialecticDepthLevels = set(
    "dialecticDepthLevels",
    map(look.firstList("dialecticDepthLevels"), (list) => {
      const levels = list.slice(0, dialecticDepth).map((item) =>
        normalizeLevel(item) ?? "low"
      );
      while (levels.length < dialecticDepth) levels.push("low");
      return levels;
    }),
    undefined,
  );
  const reasoningHeuristic = set(
    "reasoningHeuristic",
    look.flag(["reasoningHeuristic"], true),
    true,
  );
  const reasoningLevelCap = set(
    "reasoningLevelCap",
    map(look.pick("reasoningLevelCap"), normalizeLevel),
    "high",
  );
  const messageMaxChars = set(
    "messageMaxChars",
    map(
      look.parsed("messageMaxChars", positiveInt),
      (n) => clamp(n, 100, 25_000),
    ),
    25_000,
  );
  const dialecticMaxInputChars = set(
    "dialecticMaxInputChars",
    map(
      look.parsed("dialecticMaxInputChars", positiveInt),
      (n) => clamp(n, 1, 10_000),
    ),
    10_000,
  );
  const recallMode = set(
    "recallMode",
    map(look.pick("recallMode"), normalizeRecallMode),
    "hybrid",
  );
  const recallSync = set("recallSync", look.flag(["recallSync"], false), false);
  const initOnSessionStart = set(
    "initOnSessionStart",
    look.flag(["initOnSessionStart"], false),
    false,
  );
  const injectionFrequency = set(
    "injectionFrequency",
    map(
      look.pick("injectionFrequency"),
      (v): InjectionFrequency =>
        String(v).trim().toLowerCase() === "first-turn"
          ? "first-turn"
          : "every-turn",
    ),
    "every-turn",
  );
  const contextCadence = set(
    "contextCadence",
    look.parsed("contextCadence", positiveInt),
    1,
  );
  const dialecticCadence = set(
    "dialecticCadence",
    look.parsed("dialecticCadence", positiveInt),
    1,
  );
  const queryRewrite = set(
    "queryRewrite",
    look.flag(["queryRewrite"], false),
    false,
  );
  const firstTurnBaseWait = set(
    "firstTurnBaseWait",
    look.parsed("firstTurnBaseWait", nonNegativeFloat),
    3,
  );
  const firstTurnDialecticWait = set(
    "firstTurnDialecticWait",
    look.parsed("firstTurnDialecticWait", nonNegativeFloat),
    2,
  );
  const observationMode = set(
    "observationMode",
    map(look.pick("observationMode"), normalizeObservationMode),
    explicitlyConfigured ? "unified" : "directional",
  );
  const observation = set(
    "observation",
    map(look.pick("observation"), parseObservationOverrides),
    undefined,
  );
  const sessionStrategy = set(
    "sessionStrategy",
    map(look.pick("sessionStrategy"), (v) => String(v).trim()),
    "per-directory",
  );
  const sessionPeerPrefix = set(
    "sessionPeerPrefix",
    map(look.pickSet("sessionPeerPrefix"), (v) => toFlag(v, false)),
    false,
  );
  const sessionAiPeerPrefix = set(
    "sessionAiPeerPrefix",
    map(look.pickSet("sessionAiPeerPrefix"), (v) => toFlag(v, false)),
    false,
  );
  const a2aSessions = set(
    "a2aSessions",
    look.flag(["a2aSessions"], true),
    true,
  );
  const sessions = set(
    "sessions",
    isRecord(root.sessions)
      ? { value: toStringMap(root.sessions), source: "root" }
      : undefined,
    {},
  );
  const injectionSessionStart = set(
    "injectionSessionStart",
    map(
      look.present("injection"),
      (v) =>
        isRecord(v) && Array.isArray(v.sessionStart)
          ? sectionNames(v.sessionStart)
          : undefined,
    ),
    undefined,
  );
  const injectionLogEnv = env("HONCHO_INJECTION_LOG");
  const loggingEnv = env("HONCHO_LOGGING");
  const logging = set(
    "logging",
    injectionLogEnv
      ? { value: true, source: "env" }
      : map(look.pickSet("logging"), (v) => toFlag(v, false)) ??
        (loggingEnv === undefined
          ? undefined
          : { value: toFlag(loggingEnv, false), source: "env" }),
    false,
  );
  const injectionLogPath = set(
    "injectionLogPath",
    !logging
      ? undefined
      : injectionLogEnv
      ? { value: resolve(injectionLogEnv), source: "env" }
      : {
        value: join(dirname(globalHonchoConfigPath()), "injection.log"),
        source: "default",
      },
    undefined,
  );
  const oauth = set(
    "oauth",
    isRecord(host.oauth) ? { value: host.oauth, source: "host" } : undefined,
    undefined,
  );

  return {
    apiKey,
    baseUrl,
    environment,
    workspaceId,
    aiPeer,
    peerName,
    timeout,
    enabled,
    pinUserPeer,
    userPeerAliases,
    runtimePeerPrefix,
    saveMessages,
    writeFrequency,
    contextTokens,
    dialecticReasoningLevel,
    dialecticDynamic,
    dialecticMaxChars,
    dialecticDepth,
    dialecticDepthLevels,
    reasoningHeuristic,
    reasoningLevelCap,
    messageMaxChars,
    dialecticMaxInputChars,
    recallMode,
    recallSync,
    initOnSessionStart,
    injectionFrequency,
    contextCadence,
    dialecticCadence,
    queryRewrite,
    firstTurnBaseWait,
    firstTurnDialecticWait,
    observationMode,
    observation,
    sessionStrategy,
    sessionPeerPrefix,
    sessionAiPeerPrefix,
    a2aSessions,
    sessions,
    injectionSessionStart,
    logging,
    injectionLogPath,
    oauth,
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
    observationFlags: resolveObservation(observationMode, observation),
    sources,
    raw,
    hostBlock: host,
  };
}

function stringFound(
  found: Found<unknown> | undefined,
): Found<string> | undefined {
  if (!found || found.value == null || typeof found.value === "object") {
    return undefined;
  }
  const value = String(found.value).trim();
  return value ? { value, source: found.source } : undefined;
}

/**
 * Maps a found value; a mapping to `undefined` means "not found" (the next
 * source or the default applies) unless `keepUndefined` is set.
 */
function map<T, U>(
  found: Found<T> | undefined,
  fn: (value: T) => U | undefined,
  options: { keepUndefined?: boolean } = {},
): Found<U> | undefined {
  if (!found) return undefined;
  const value = fn(found.value);
  if (value === undefined && !options.keepUndefined) return undefined;
  return { value: value as U, source: found.source };
}

function positiveInt(value: unknown): number | undefined {
  const n = toInt(value);
  return n !== undefined && n > 0 ? n : undefined;
}

function nonNegativeFloat(value: unknown): number | undefined {
  const n = toFloat(value);
  return n === undefined ? undefined : Math.max(0, n);
}

function sectionNames(list: unknown[]): SessionStartSection[] {
  const names = list
    .filter((item): item is string => typeof item === "string")
    .map((item) => item.trim())
    .filter((item): item is SessionStartSection =>
      (SESSION_START_SECTIONS as readonly string[]).includes(item)
    );
  return [...new Set(names)];
}

function clamp(value: number, min: number, max: number): number {
  return Math.max(min, Math.min(value, max));
}

/**
 * Parses a `writeFrequency` value: integers (also `"3"`) → number; other
 * strings trimmed and lower-cased; empty or other values → `async`.
 *
 * @param value The raw value.
 * @returns The frequency.
 *
 * @example Using parseWriteFrequency
 * ```ts
 * import { parseWriteFrequency } from "./config.ts";
 * import assert from "node:assert/strict";
 * assert.equal(parseWriteFrequency("3"), 3);
 * assert.equal(parseWriteFrequency("Turn"), "turn");
 * ```
 */
export function parseWriteFrequency(value: unknown): WriteFrequency {
  const n = toInt(value);
  if (n !== undefined) return n;
  if (typeof value === "string" && value.trim()) {
    return value.trim().toLowerCase();
  }
  return "async";
}

/**
 * Normalises a `recallMode` value (`auto` → `hybrid`; invalid → `hybrid`).
 *
 * @param value The raw value.
 * @returns The mode.
 *
 * @example Using normalizeRecallMode
 * ```ts
 * import { normalizeRecallMode } from "./config.ts";
 * import assert from "node:assert/strict";
 * assert.equal(normalizeRecallMode("tools"), "tools");
 * assert.equal(normalizeRecallMode("auto"), "hybrid");
 * ```
 */
export function normalizeRecallMode(value: unknown): RecallMode {
  const text = typeof value === "string" ? value.trim().toLowerCase() : "";
  if (text === "context" || text === "tools" || text === "hybrid") return text;
  return "hybrid";
}

function resolveBaseUrl(
  host: Record<string, unknown>,
  root: Record<string, unknown>,
  env: (name: string) => string | undefined,
  path: string,
): Found<string | undefined> | undefined {
  const endpoint = isRecord(root.endpoint) ? root.endpoint : {};
  const candidates: [unknown, ConfigSource, string][] = [
    [host.baseUrl, "host", "baseUrl"],
    [host.base_url, "host", "base_url"],
    [endpoint.baseUrl, "root", "endpoint.baseUrl"],
    [root.baseUrl, "root", "baseUrl"],
    [root.base_url, "root", "base_url"],
    [env("HONCHO_BASE_URL"), "env", "HONCHO_BASE_URL"],
    [env("HONCHO_URL"), "env", "HONCHO_URL"],
  ];
  for (const [value, source, name] of candidates) {
    if (typeof value !== "string" || !value.trim()) continue;
    const url = value.trim();
    if (!/^[\x20-\x7e]+$/.test(url)) {
      warnOnce(
        `baseurl:${path}:${name}`,
        `Ignoring Honcho base URL from ${name}${
          source === "env" ? "" : ` in ${path}`
        }: it contains characters outside printable ASCII`,
      );
      continue;
    }
    return { value: url, source };
  }
  return undefined;
}

/**
 * Whether the provider can run (no network): enabled, and an API key or a
 * base URL is configured.
 *
 * @param config The resolved configuration.
 * @returns `true` when usable.
 *
 * @example Using isHonchoUsable
 * ```ts no-assert
 * import { isHonchoUsable, loadHonchoConfig } from "./config.ts";
 * const usable = isHonchoUsable(await loadHonchoConfig());
 * ```
 */
export function isHonchoUsable(
  config: Pick<HonchoConfig, "enabled" | "apiKey" | "baseUrl">,
): boolean {
  return config.enabled && Boolean(config.apiKey || config.baseUrl);
}
