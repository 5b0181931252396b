/**
 * Honcho configuration: where `honcho.json` is, which host block applies,
 * and the fully resolved settings (plugins/memory/honcho/SPEC.md §1).
 *
 * - {@linkcode resolveHonchoConfigPath}: the ONE file that is read
 *   (`$HERMES_HOME/honcho.json` → default profile's `~/.hermes/honcho.json`
 *   → `~/.honcho/config.json`).
 * - {@linkcode resolveHostKey}: `HERMES_HONCHO_HOST` → `hermes` /
 *   `hermes_<profile>` (root `defaultHost` renames the default host).
 * - {@linkcode loadHonchoConfig}: every setting of plugins/memory/honcho/SPEC.md §1 resolved
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
import {
  getHermesHome,
  getSecret,
  isTruthyEnvValue,
  log,
  pythonStr,
  pythonStrip,
} from "../../../src/provider/mod.ts";
import {
  normalizeObservationMode,
  type ObservationMode,
  type ObservationOverrides,
  parseObservationOverrides,
  resolveObservation,
  type SessionObservation,
} from "./observation.ts";
import { isRecord } from "./_util.ts";
import { pyFloat, pyInt, truthy } from "./_coerce.ts";
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

/** Every resolved setting of `honcho.json` (plugins/memory/honcho/SPEC.md §1). */
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
// Lookup semantics (plugins/memory/honcho/SPEC.md §1)
// ---------------------------------------------------------------------------

interface Found<T> {
  value: T;
  source: ConfigSource;
}

// Hermes' host-block-over-root lookups (`_HostLookup` in client.py), with
// the same Python truthiness, so a home shared with Hermes resolves alike.
class Lookup {
  readonly host: Record<string, unknown>;
  readonly root: Record<string, unknown>;

  constructor(host: Record<string, unknown>, root: Record<string, unknown>) {
    this.host = host;
    this.root = root;
  }

  /**
   * `host.get(k) or root.get(k, default)`: a truthy host value, else the
   * root value when the key is there (even a falsy one), else `undefined`.
   */
  pick(key: string): Found<unknown> | undefined {
    if (truthy(this.host[key])) {
      return { value: this.host[key], source: "host" };
    }
    if (Object.hasOwn(this.root, key)) {
      return { value: this.root[key], source: "root" };
    }
    return undefined;
  }

  /**
   * A non-null host value, else the root value when the key is there (even
   * `null`), else `undefined`.
   */
  pickSet(key: string): Found<unknown> | undefined {
    if (this.host[key] != null) {
      return { value: this.host[key], source: "host" };
    }
    if (Object.hasOwn(this.root, key)) {
      return { value: this.root[key], source: "root" };
    }
    return undefined;
  }

  /** host[k1], host[k2]…, root[k1], root[k2]…: Hermes' lookup order. */
  vals(keys: readonly string[]): Found<unknown>[] {
    const out: Found<unknown>[] = [];
    for (const key of keys) out.push({ value: this.host[key], source: "host" });
    for (const key of keys) out.push({ value: this.root[key], source: "root" });
    return out;
  }

  /** The first non-null of {@linkcode Lookup.vals}, as `bool(value)`. */
  flag(keys: readonly string[], fallback: boolean): Found<boolean> {
    for (const found of this.vals(keys)) {
      if (found.value != null) {
        return { value: truthy(found.value), source: found.source };
      }
    }
    return { value: fallback, source: "default" };
  }

  /** The first non-null of host[k], root[k] that `cast` accepts. */
  parsed<T>(
    key: string,
    cast: (value: unknown) => T | undefined,
  ): Found<T> | undefined {
    for (const found of this.vals([key])) {
      if (found.value == null) continue;
      const value = cast(found.value);
      if (value !== undefined) return { value, source: found.source };
    }
    return undefined;
  }

  /** The first array among host[k], root[k]. */
  firstList(key: string): Found<unknown[]> | undefined {
    for (const found of this.vals([key])) {
      if (Array.isArray(found.value)) {
        return { value: found.value, source: found.source };
      }
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

  /** `present`, null → undefined, else `str(value).strip()`. */
  string(key: string): Found<string> | undefined {
    const found = this.present(key);
    if (!found || found.value == null) return undefined;
    return { value: pythonStrip(pythonStr(found.value)), source: found.source };
  }

  /** `present`; must be an object; `str()` of keys and values, stripped; empties dropped. */
  stringMap(key: string): Found<Record<string, string>> | undefined {
    const found = this.present(key);
    if (!found || !isRecord(found.value)) return undefined;
    return { value: toStringMap(found.value), source: found.source };
  }
}

function toStringMap(value: Record<string, unknown>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [rawKey, rawValue] of Object.entries(value)) {
    const key = pythonStrip(rawKey);
    const item = rawValue == null ? "" : pythonStrip(pythonStr(rawValue));
    if (key && item) out[key] = item;
  }
  return out;
}

// A level is one of the five names exactly, as Hermes compares them.
function exactLevel(value: unknown): ReasoningLevel | undefined {
  return typeof value === "string" &&
      (REASONING_LEVELS as readonly string[]).includes(value)
    ? value as ReasoningLevel
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
  if (!truthy(host) && hostKey.startsWith("hermes_")) {
    const legacy = `hermes.${hostKey.slice("hermes_".length)}`;
    if (isRecord(hosts[legacy])) {
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

  // --- connection and identity (plugins/memory/honcho/SPEC.md §1), as Hermes' _connection_fields
  let apiKeyFound: Found<string | undefined> | undefined;
  const fileKey = look.pick("apiKey");
  if (fileKey && truthy(fileKey.value) && !isStructured(fileKey.value)) {
    // Hermes uses a numeric key as it is (the header carries its text).
    apiKeyFound = { value: pythonStr(fileKey.value), source: fileKey.source };
  } else if (env("HONCHO_API_KEY")) {
    apiKeyFound = { value: env("HONCHO_API_KEY"), source: "env" };
  }
  const apiKey = set("apiKey", apiKeyFound, undefined);

  const baseUrl = set(
    "baseUrl",
    resolveBaseUrl(host, root, env, file.path),
    undefined,
  );

  // In env-only mode HONCHO_ENVIRONMENT applies; with a file, only the file.
  const environmentFound: Found<string> | undefined = envOnly
    ? (env("HONCHO_ENVIRONMENT")
      ? { value: env("HONCHO_ENVIRONMENT")!, source: "env" }
      : undefined)
    : textFound(look.pick("environment"));
  const environment = set("environment", environmentFound, "production");

  // `pick(k) or host`: a falsy value falls back to the host key.
  const workspaceId = set(
    "workspaceId",
    textFound(look.pick("workspace")),
    envOnly ? "hermes" : hostKey,
  );
  const aiPeer = set("aiPeer", textFound(look.pick("aiPeer")), hostKey);
  const peerName = set(
    "peerName",
    textFound(look.pick("peerName")),
    undefined,
  );

  // The first value (host timeout, host requestTimeout, root timeout, root
  // requestTimeout, HONCHO_TIMEOUT) that parses as a positive float; like
  // Hermes, "nan" counts (it is not <= 0).
  let timeoutFound: Found<number | undefined> | undefined;
  for (
    const found of [
      ...look.vals(["timeout", "requestTimeout"]),
      { value: getSecret("HONCHO_TIMEOUT"), source: "env" as const },
    ]
  ) {
    if (timeoutFound !== undefined || found.value == null) continue;
    const n = pyFloat(found.value);
    if (n !== undefined && !(n <= 0)) {
      timeoutFound = { value: n, source: found.source };
    }
  }
  const timeout = set("timeout", timeoutFound, undefined);

  // `_first_set(host.enabled, root.enabled, default=bool(key or url))`,
  // used as `bool()`: "false" is a non-empty string, so enabled.
  let enabledFound: Found<boolean> | undefined;
  for (const found of look.vals(["enabled"])) {
    if (enabledFound === undefined && found.value != null) {
      enabledFound = { value: truthy(found.value), source: found.source };
    }
  }
  const enabled = set("enabled", enabledFound, Boolean(apiKey || baseUrl));
  const explicitlyConfigured = Object.keys(host).length > 0 ||
    root.enabled === true;

  // Hermes: str(raw.get("defaultHost", "")).strip(), so 42 is "42".
  const defaultHost = Object.hasOwn(raw, "defaultHost") &&
      pythonStrip(pythonStr(raw.defaultHost)) !== ""
    ? pythonStrip(pythonStr(raw.defaultHost))
    : undefined;
  const defaultBlock = hosts.hermes;
  if (
    !apiKey && Object.keys(host).length > 0 && hostKey !== "hermes" &&
    isRecord(defaultBlock) && truthy(defaultBlock.apiKey)
  ) {
    warnOnce(
      `inherit:${file.path}:${hostKey}`,
      `Honcho host block '${hostKey}' in ${file.path} has no apiKey and does not inherit the default host's key: run 'hermes honcho setup' for this profile or set HONCHO_API_KEY`,
    );
  }

  // --- behaviour keys (plugins/memory/honcho/SPEC.md §1), as Hermes' _behavior_fields
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
    map(look.pickSet("saveMessages"), truthy),
    true,
  );
  const writeFrequency = set(
    "writeFrequency",
    map(orFound(look.pick("writeFrequency")), parseWriteFrequency),
    "async",
  );
  const contextTokens = set(
    "contextTokens",
    look.parsed("contextTokens", pyInt),
    undefined,
  );
  const dialecticReasoningLevel = set(
    "dialecticReasoningLevel",
    map(orFound(look.pick("dialecticReasoningLevel")), exactLevel),
    "low",
  );
  const dialecticDynamic = set(
    "dialecticDynamic",
    look.flag(["dialecticDynamic"], true),
    true,
  );
  const dialecticMaxChars = set(
    "dialecticMaxChars",
    look.parsed("dialecticMaxChars", pyInt),
    600,
  );
  const dialecticDepth = set(
    "dialecticDepth",
    look.parsed("dialecticDepth", (v) => {
      const n = pyInt(v);
      return n === undefined ? undefined : clamp(n, 1, 3);
    }),
    1,
  );
  const dialecticDepthLevels = set(
    "dialecticDepthLevels",
    map(look.firstList("dialecticDepthLevels"), (list) => {
      const levels = list.slice(0, dialecticDepth).map((item) =>
        exactLevel(item) ?? "low"
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
    map(orFound(look.pick("reasoningLevelCap")), exactLevel),
    "high",
  );
  const messageMaxChars = set(
    "messageMaxChars",
    look.parsed("messageMaxChars", pyInt),
    25_000,
  );
  const dialecticMaxInputChars = set(
    "dialecticMaxInputChars",
    look.parsed("dialecticMaxInputChars", pyInt),
    10_000,
  );
  const recallMode = set(
    "recallMode",
    map(orFound(look.pick("recallMode")), normalizeRecallMode),
    "hybrid",
  );
  const recallSync = set("recallSync", look.flag(["recallSync"], false), false);
  const initOnSessionStart = set(
    "initOnSessionStart",
    look.flag(["initOnSessionStart"], false),
    false,
  );
  // Hermes keeps the raw value and only ever asks `== "first-turn"`.
  const injectionFrequency = set(
    "injectionFrequency",
    map(
      look.pick("injectionFrequency"),
      (v): InjectionFrequency =>
        v === "first-turn" ? "first-turn" : "every-turn",
    ),
    "every-turn",
  );
  const contextCadence = set(
    "contextCadence",
    look.parsed("contextCadence", pyInt),
    1,
  );
  const dialecticCadence = set(
    "dialecticCadence",
    look.parsed("dialecticCadence", pyInt),
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
    map(orFound(look.pick("observationMode")), normalizeObservationMode),
    explicitlyConfigured ? "unified" : "directional",
  );
  const observation = set(
    "observation",
    map(look.pick("observation"), parseObservationOverrides),
    undefined,
  );
  // Kept as written (Hermes does not trim it): an unknown strategy behaves
  // like `global`.
  const sessionStrategy = set(
    "sessionStrategy",
    map(
      look.pick("sessionStrategy"),
      (v) => v == null ? undefined : pythonStr(v),
    ),
    "per-directory",
  );
  const sessionPeerPrefix = set(
    "sessionPeerPrefix",
    map(look.pickSet("sessionPeerPrefix"), truthy),
    false,
  );
  const sessionAiPeerPrefix = set(
    "sessionAiPeerPrefix",
    map(look.pickSet("sessionAiPeerPrefix"), truthy),
    false,
  );
  const a2aSessions = set(
    "a2aSessions",
    look.flag(["a2aSessions"], true),
    true,
  );
  if (Object.hasOwn(root, "sessions") && !isRecord(root.sessions)) {
    warnOnce(
      `sessions:${file.path}`,
      `Ignoring 'sessions' in ${file.path}: it must be an object of directory paths to session names`,
    );
  }
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
      : map(look.pickSet("logging"), truthy) ??
        (loggingEnv === undefined
          ? undefined
          : { value: isTruthyEnvValue(loggingEnv), source: "env" }),
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

// What in a parsed honcho.json Hermes cannot read (its lookups raise), if
// anything: `hosts` or the selected host block not an object, or an
// `observation` peer entry that is not an object.
function shapeProblem(
  raw: Record<string, unknown>,
  hostKey: string,
): string | undefined {
  const hosts = raw.hosts;
  if (truthy(hosts) && !isRecord(hosts)) {
    return "'hosts' must be an object of host blocks";
  }
  const blocks = isRecord(hosts) ? hosts : {};
  const legacy = hostKey.startsWith("hermes_")
    ? `hermes.${hostKey.slice("hermes_".length)}`
    : undefined;
  const block = truthy(blocks[hostKey])
    ? blocks[hostKey]
    : legacy
    ? blocks[legacy]
    : blocks[hostKey];
  const blockKey = truthy(blocks[hostKey]) || !legacy ? hostKey : legacy;
  if (truthy(block) && !isRecord(block)) {
    return `'hosts.${blockKey}' must be an object`;
  }
  const host = isRecord(block) ? block : {};
  const observation = truthy(host.observation)
    ? host.observation
    : raw.observation;
  if (isRecord(observation)) {
    for (const peer of ["user", "ai"]) {
      if (truthy(observation[peer]) && !isRecord(observation[peer])) {
        return `'observation.${peer}' must be an object like {"observeMe": true}`;
      }
    }
  }
  return undefined;
}

// Python's `pick(k) or fallback`: a falsy value is not found.
function orFound(
  found: Found<unknown> | undefined,
): Found<unknown> | undefined {
  return found && truthy(found.value) ? found : undefined;
}

// `str()` of a truthy scalar (Hermes' `pick(k) or default` used as text).
function textFound(
  found: Found<unknown> | undefined,
): Found<string> | undefined {
  if (!found || !truthy(found.value) || isStructured(found.value)) {
    return undefined;
  }
  return { value: pythonStr(found.value), source: found.source };
}

function isStructured(value: unknown): boolean {
  return value !== null && typeof value === "object";
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

// Python's `max(0.0, float(v))`: NaN compares false, so it gives 0.
function nonNegativeFloat(value: unknown): number | undefined {
  const n = pyFloat(value);
  return n === undefined ? undefined : n > 0 ? n : 0;
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
 * Parses a `writeFrequency` value as Hermes does: `int(value)` when Python
 * can (`3`, `"3"`, `" 3 "`, `true` → 1, `2.7` → 2), else its text as
 * written (`"turn"`, `"2.7"`); empty, `0`, `false` or `null` → `async`.
 * An unknown text behaves like `session`.
 *
 * @param value The raw value.
 * @returns The frequency.
 *
 * @example Using parseWriteFrequency
 * ```ts
 * import { parseWriteFrequency } from "./config.ts";
 * import assert from "node:assert/strict";
 * assert.equal(parseWriteFrequency("3"), 3);
 * assert.equal(parseWriteFrequency("turn"), "turn");
 * assert.equal(parseWriteFrequency("Turn"), "Turn");
 * assert.equal(parseWriteFrequency(0), "async");
 * ```
 */
export function parseWriteFrequency(value: unknown): WriteFrequency {
  if (!truthy(value)) return "async";
  return pyInt(value) ?? pythonStr(value);
}

/**
 * Normalises a `recallMode` value as Hermes does: exactly `hybrid`,
 * `context` or `tools` (`auto` is an alias of `hybrid`); anything else,
 * including `"CONTEXT"` or `" tools"`, is `hybrid`.
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
 * assert.equal(normalizeRecallMode("CONTEXT"), "hybrid");
 * ```
 */
export function normalizeRecallMode(value: unknown): RecallMode {
  if (value === "context" || value === "tools" || value === "hybrid") {
    return value;
  }
  return "hybrid";
}

// Hermes: host baseUrl / base_url, root endpoint.baseUrl, root baseUrl /
// base_url, then HONCHO_BASE_URL / HONCHO_URL: the first truthy value, which
// is dropped (with a warning) when it holds a character outside printable
// ASCII. File values are used as written; environment values trimmed.
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
    [env("HONCHO_BASE_URL") ?? env("HONCHO_URL"), "env", "HONCHO_BASE_URL"],
  ];
  for (const [value, source, name] of candidates) {
    if (!truthy(value)) continue;
    if (typeof value !== "string") {
      warnOnce(
        `baseurl-type:${path}:${name}`,
        `Ignoring Honcho base URL from ${name} in ${path}: it is not text; write it as a string like "http://localhost:8000"`,
      );
      return undefined;
    }
    if (!/^[\x20-\x7e]*$/.test(value)) {
      warnOnce(
        `baseurl:${path}:${name}`,
        `Ignoring Honcho base URL from ${name}${
          source === "env" ? "" : ` in ${path}`
        }: it contains characters outside printable ASCII`,
      );
      return undefined;
    }
    return { value, source };
  }
  return undefined;
}

/** Why Honcho is not available ({@linkcode isHonchoUsable} is false). */
export const HONCHO_UNAVAILABLE_REASON =
  "Set HONCHO_API_KEY or run 'hermes honcho setup' (a local Honcho needs only a baseUrl).";

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
