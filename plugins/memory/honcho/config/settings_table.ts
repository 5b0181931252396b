/**
 * Every `honcho.json` setting declared once; the resolver, the config schema
 * and the status rows derive from it (plugins/memory/honcho/SPEC.md §1).
 *
 * @module
 */

import { getSecret } from "../../../../src/provider/mod.ts";
import {
  dirname,
  isTruthyEnvValue,
  join,
  pythonFloat,
  pythonInt,
  pythonStr,
  pythonTruthy,
  resolve,
} from "../../../../src/provider/_bundled.ts";
import {
  normalizeObservationMode,
  type ObservationMode,
  type ObservationOverrides,
  parseObservationOverrides,
} from "../session/observation.ts";
import { isRecord } from "../_util.ts";
import {
  exactLevel,
  type Found,
  type InjectionFrequency,
  isStructured,
  type Lookup,
  map,
  nonNegativeFloat,
  normalizeRecallMode,
  orFound,
  parseWriteFrequency,
  REASONING_LEVELS,
  type ReasoningLevel,
  type RecallMode,
  resolveBaseUrl,
  sectionNames,
  type SessionStartSection,
  type SessionStrategy,
  textFound,
  toStringMap,
  warnOnce,
  type WriteFrequency,
} from "./_lookup.ts";
import { globalHonchoConfigPath } from "./paths.ts";

/** How a setting is edited in the desktop and dashboard. */
export type SettingKind =
  | "text"
  | "select"
  | "secret"
  | "bool"
  | "number"
  | "json";

export type SettingGroup =
  | "connection"
  | "identity"
  | "sessions"
  | "writes"
  | "recall"
  | "dialectic";

/** One choice of a `select` setting: `[value, description?]`. */
export type SettingChoice = readonly [string, string?];

/** What a reader sees while the settings of one home are resolved. */
export interface SettingsContext {
  /** Host-block-over-root lookups. */
  look: Lookup;
  /** `{}` when none. */
  host: Record<string, unknown>;
  /** `{}` in environment-only mode. */
  root: Record<string, unknown>;
  /** The file read, for warnings. */
  path: string;
  hostKey: string;
  envOnly: boolean;
  /** A non-empty host block exists, or root `enabled` is `true`. */
  explicitlyConfigured: boolean;
  /** A trimmed, non-empty environment variable (through the secret scope). */
  env(name: string): string | undefined;
  /** Another setting's resolved value (resolved first when needed). */
  get(field: string): unknown;
}

/** Reads and coerces a setting from its keys; `undefined` = not set. */
export type Reader<T> = (
  ctx: SettingsContext,
  keys: readonly string[],
) => Found<T> | undefined;

/** One row of the settings table, resolving to a `T`. */
export interface SettingSpec<T> {
  /** The `honcho.json` key (and status/schema key). @default {field} */
  key?: string;
  /** Other keys accepted for the same setting, read after `key`. */
  aliases?: readonly string[];
  /** Where the value is stored. @default {"host"} */
  scope?: "host" | "root";
  read: Reader<T>;
  /** The value when not set (a function when it depends on the home). */
  default: T | ((ctx: SettingsContext) => T);
  env?: string;
  /** Environment variables read when the key and `env` are unset. */
  envFallbacks?: readonly string[];
  /** How the desktop, dashboard and setup show it; absent = not in the schema. */
  ui?: {
    /** Its place in the desktop's form (the order it has always had). */
    order: number;
    label: string;
    kind: SettingKind;
    description: string;
    group: SettingGroup;
    placeholder?: string;
    choices?: readonly SettingChoice[];
    /** The default shown, when the resolver's depends on the home. */
    default?: unknown;
    /** An integer from `range[0]` to `range[1]`. */
    range?: readonly [number, number];
  };
  /**
   * How `hermes honcho status` shows it: `false` = not shown, `"presence"`
   * = only whether it is set (`--json` says `"set"`). @default {true}
   */
  status?: boolean | "presence";
  /** What an unset value means, shown as `(unset: …)` by status. */
  unset?: string;
}

/** Every resolved setting of `honcho.json`; how each resolves and its default: `TABLE` below. */
export interface HonchoSettings {
  apiKey: string | undefined;
  /** Not yet cleaned. */
  baseUrl: string | undefined;
  environment: string;
  workspaceId: string;
  aiPeer: string;
  peerName: string | undefined;
  /** Seconds; `undefined` = the client default (30 s). */
  timeout: number | undefined;
  enabled: boolean;
  pinUserPeer: boolean;
  userPeerAliases: Record<string, string>;
  runtimePeerPrefix: string;
  saveMessages: boolean;
  writeFrequency: WriteFrequency;
  /** `undefined`, 0 or less = uncapped. */
  contextTokens: number | undefined;
  dialecticReasoningLevel: ReasoningLevel;
  dialecticDynamic: boolean;
  dialecticMaxChars: number;
  dialecticDepth: number;
  dialecticDepthLevels: ReasoningLevel[] | undefined;
  reasoningHeuristic: boolean;
  reasoningLevelCap: ReasoningLevel;
  messageMaxChars: number;
  dialecticMaxInputChars: number;
  recallMode: RecallMode;
  recallSync: boolean;
  initOnSessionStart: boolean;
  injectionFrequency: InjectionFrequency;
  contextCadence: number;
  dialecticCadence: number;
  queryRewrite: boolean;
  /** Seconds (also `firstTurnDialecticWait`). */
  firstTurnBaseWait: number;
  firstTurnDialecticWait: number;
  observationMode: ObservationMode;
  observation: ObservationOverrides | undefined;
  sessionStrategy: SessionStrategy;
  sessionPeerPrefix: boolean;
  sessionAiPeerPrefix: boolean;
  a2aSessions: boolean;
  /** Root `sessions`: cwd path → session name. */
  sessions: Record<string, string>;
  /** `undefined` = all sections, `[]` = none. */
  injectionSessionStart: SessionStartSection[] | undefined;
  logging: boolean;
  injectionLogPath: string | undefined;
  /** The host block's `oauth` grant (opaque here). */
  oauth: Record<string, unknown> | undefined;
}

// Readers, one per kind of Hermes lookup.
/** `bool()` of the first non-null of host[k…], root[k…]. */
const flag: Reader<boolean> = (ctx, keys) => {
  for (const found of ctx.look.vals(keys)) {
    if (found.value != null) {
      return { value: pythonTruthy(found.value), source: found.source };
    }
  }
  return undefined;
};
/** `bool()` of a non-null host value, else a root value that is there. */
const setBool: Reader<boolean> = (ctx, keys) =>
  map(ctx.look.pickSet(keys[0]!), pythonTruthy);
/** `int()` of the first non-null host, root value that parses. */
const int: Reader<number> = (ctx, keys) => ctx.look.parsed(keys[0]!, pythonInt);
/** `max(0.0, float())` of the first host, root value that parses. */
const seconds: Reader<number> = (ctx, keys) =>
  ctx.look.parsed(keys[0]!, nonNegativeFloat);
/** `str()` of a truthy scalar (`pick(k) or default`). */
const text: Reader<string> = (ctx, keys) => textFound(ctx.look.pick(keys[0]!));
/** One of the reasoning levels exactly (`pick(k) or default`). */
const level: Reader<ReasoningLevel> = (ctx, keys) =>
  map(orFound(ctx.look.pick(keys[0]!)), exactLevel);

const LEVELS: readonly SettingChoice[] = REASONING_LEVELS.map((l) => [l]);

// Every Honcho setting, in the order `hermes honcho status` shows them,
// under its resolved name. (The desktop schema orders its fields by
// SCHEMA_ORDER in schema.ts.)
const TABLE: { [K in keyof HonchoSettings]: SettingSpec<HonchoSettings[K]> } = {
  enabled: {
    // `_first_set(host.enabled, root.enabled, default=bool(key or url))`,
    // used as `bool()`: "false" is a non-empty string, so enabled.
    read: flag,
    default: (ctx) => Boolean(ctx.get("apiKey") || ctx.get("baseUrl")),
  },
  apiKey: {
    env: "HONCHO_API_KEY",
    // Hermes uses a numeric key as it is (the header carries its text).
    read: (ctx) => {
      const found = ctx.look.pick("apiKey");
      if (found && pythonTruthy(found.value) && !isStructured(found.value)) {
        return { value: pythonStr(found.value), source: found.source };
      }
      const env = ctx.env("HONCHO_API_KEY");
      return env ? { value: env, source: "env" } : undefined;
    },
    default: undefined,
    ui: {
      order: 1,
      label: "API key",
      kind: "secret",
      description:
        "Honcho API key (from app.honcho.dev); a local server needs none",
      group: "connection",
    },
  },
  baseUrl: {
    aliases: ["base_url"],
    scope: "root",
    env: "HONCHO_BASE_URL",
    read: (ctx) =>
      resolveBaseUrl(ctx.host, ctx.root, (n) => ctx.env(n), ctx.path),
    default: undefined,
    ui: {
      order: 2,
      label: "Base URL",
      kind: "text",
      placeholder: "http://localhost:8000",
      description: "Self-hosted Honcho server; leave empty for Honcho cloud",
      group: "connection",
    },
  },
  environment: {
    // In env-only mode HONCHO_ENVIRONMENT applies; with a file, only the file.
    read: (ctx, keys) => {
      if (!ctx.envOnly) return text(ctx, keys);
      const env = ctx.env("HONCHO_ENVIRONMENT");
      return env ? { value: env, source: "env" } : undefined;
    },
    default: "production",
    ui: {
      order: 3,
      label: "Environment",
      kind: "select",
      choices: [["production", "Honcho cloud"], [
        "local",
        "http://localhost:8000",
      ]],
      description: "Which server to use when no base URL is set",
      group: "connection",
    },
  },
  workspaceId: {
    key: "workspace",
    read: text,
    default: (ctx) => ctx.envOnly ? "hermes" : ctx.hostKey,
    ui: {
      order: 5,
      label: "Workspace",
      kind: "text",
      placeholder: "hermes",
      description: "Honcho workspace; profiles normally share one",
      group: "identity",
    },
  },
  peerName: {
    read: text,
    default: undefined,
    ui: {
      order: 6,
      label: "User peer name",
      kind: "text",
      description:
        "Your peer id in Honcho (used when the platform supplies no user id)",
      group: "identity",
    },
  },
  aiPeer: {
    read: text,
    default: (ctx) => ctx.hostKey,
    ui: {
      order: 7,
      label: "AI peer name",
      kind: "text",
      placeholder: "hermes",
      description: "This profile's AI peer id",
      group: "identity",
    },
  },
  timeout: {
    aliases: ["requestTimeout"],
    scope: "root",
    env: "HONCHO_TIMEOUT",
    unset: "30 s",
    // The first value (host timeout, host requestTimeout, root timeout, root
    // requestTimeout, HONCHO_TIMEOUT) that parses as a positive float ("nan"
    // does not, as in Hermes 0.19.0).
    read: (ctx, keys) => {
      for (
        const found of [
          ...ctx.look.vals(keys),
          { value: getSecret("HONCHO_TIMEOUT"), source: "env" as const },
        ]
      ) {
        if (found.value == null) continue;
        const n = pythonFloat(found.value);
        if (n !== undefined && n > 0) {
          return { value: n, source: found.source };
        }
      }
      return undefined;
    },
    default: undefined,
    ui: {
      order: 4,
      label: "Request timeout (s)",
      kind: "number",
      placeholder: "30",
      description: "HTTP timeout of one Honcho request, in seconds",
      group: "connection",
    },
  },
  recallMode: {
    read: (ctx, keys) =>
      map(orFound(ctx.look.pick(keys[0]!)), normalizeRecallMode),
    default: "hybrid",
    ui: {
      order: 18,
      label: "Recall mode",
      kind: "select",
      choices: [
        ["hybrid", "Automatic context and tools"],
        ["context", "Automatic context only"],
        ["tools", "Tools only"],
      ],
      description: "How memory reaches the model",
      group: "recall",
    },
  },
  recallSync: {
    read: flag,
    default: false,
    ui: {
      order: 19,
      label: "Synchronous recall",
      kind: "bool",
      description:
        "Recall for the current message before answering (bounded by the timeout)",
      group: "recall",
    },
  },
  writeFrequency: {
    read: (ctx, keys) =>
      map(orFound(ctx.look.pick(keys[0]!)), parseWriteFrequency),
    default: "async",
    ui: {
      order: 15,
      label: "Write frequency",
      kind: "text",
      placeholder: "async | turn | session | N",
      description:
        "When turns are written: async, turn, session, or every N turns",
      group: "writes",
    },
  },
  saveMessages: {
    read: setBool,
    default: true,
    ui: {
      order: 14,
      label: "Save messages",
      kind: "bool",
      description: "Write conversation turns to Honcho",
      group: "writes",
    },
  },
  sessionStrategy: {
    // Kept as written (Hermes does not trim it): an unknown strategy
    // behaves like `global`.
    read: (ctx, keys) =>
      map(ctx.look.pick(keys[0]!), (v) => v == null ? undefined : pythonStr(v)),
    default: "per-directory",
    ui: {
      order: 11,
      label: "Session strategy",
      kind: "select",
      choices: [
        ["per-directory", "One session per working directory"],
        ["per-repo", "One session per git repository"],
        ["per-session", "A new Honcho session for every Hermes session"],
        ["global", "One session for everything"],
      ],
      description: "How Hermes conversations map to Honcho sessions",
      group: "sessions",
    },
  },
  sessionPeerPrefix: {
    read: setBool,
    default: false,
    ui: {
      order: 12,
      label: "Prefix sessions with the user peer",
      kind: "bool",
      description: "Session names start with the user peer name",
      group: "sessions",
    },
  },
  sessionAiPeerPrefix: { read: setBool, default: false },
  sessions: {
    scope: "root",
    read: (ctx) => {
      if (!Object.hasOwn(ctx.root, "sessions")) return undefined;
      if (!isRecord(ctx.root.sessions)) {
        warnOnce(
          `sessions:${ctx.path}`,
          `Ignoring 'sessions' in ${ctx.path}: it must be an object of directory paths to session names`,
        );
        return undefined;
      }
      return { value: toStringMap(ctx.root.sessions), source: "root" };
    },
    default: {},
    ui: {
      order: 13,
      label: "Session map",
      kind: "json",
      description: "JSON object mapping directories to session names",
      group: "sessions",
    },
  },
  contextTokens: {
    unset: "uncapped",
    read: int,
    default: undefined,
    ui: {
      order: 20,
      label: "Context budget (tokens)",
      kind: "number",
      placeholder: "uncapped",
      description: "Token budget of the injected context; empty = uncapped",
      group: "recall",
    },
  },
  contextCadence: { read: int, default: 1 },
  injectionFrequency: {
    // Hermes keeps the raw value and only ever asks `== "first-turn"`.
    read: (ctx, keys) =>
      map(
        ctx.look.pick(keys[0]!),
        (v): InjectionFrequency =>
          v === "first-turn" ? "first-turn" : "every-turn",
      ),
    default: "every-turn",
  },
  injectionSessionStart: {
    key: "injection.sessionStart",
    read: (ctx) =>
      map(
        ctx.look.present("injection"),
        (v) =>
          isRecord(v) && Array.isArray(v.sessionStart)
            ? sectionNames(v.sessionStart)
            : undefined,
      ),
    default: undefined,
  },
  initOnSessionStart: {
    read: flag,
    default: false,
    ui: {
      order: 21,
      label: "Initialize at session start",
      kind: "bool",
      description:
        "In tools mode, connect when the session starts instead of at the first tool call",
      group: "recall",
    },
  },
  dialecticReasoningLevel: {
    read: level,
    default: "low",
    ui: {
      order: 23,
      label: "Reasoning level",
      kind: "select",
      choices: LEVELS,
      description: "Base reasoning level of the dialectic",
      group: "dialectic",
    },
  },
  dialecticDynamic: {
    read: flag,
    default: true,
    ui: {
      order: 24,
      label: "Dynamic reasoning level",
      kind: "bool",
      description: "Let the model choose the level per call",
      group: "dialectic",
    },
  },
  dialecticCadence: { read: int, default: 1 },
  dialecticDepth: {
    read: (ctx, keys) =>
      ctx.look.parsed(keys[0]!, (v) => {
        const n = pythonInt(v);
        return n === undefined ? undefined : Math.max(1, Math.min(n, 3));
      }),
    default: 1,
    ui: {
      order: 26,
      label: "Dialectic depth",
      kind: "number",
      description: "Passes per dialectic call (1 to 3)",
      range: [1, 3],
      group: "dialectic",
    },
  },
  dialecticDepthLevels: {
    // Exactly `dialecticDepth` levels: cut, or padded with `low`.
    read: (ctx, keys) =>
      map(ctx.look.firstList(keys[0]!), (list) => {
        const depth = ctx.get("dialecticDepth") as number;
        const levels = list.slice(0, depth).map((item) =>
          exactLevel(item) ?? "low"
        );
        while (levels.length < depth) levels.push("low");
        return levels;
      }),
    default: undefined,
    ui: {
      order: 27,
      label: "Per-pass levels",
      kind: "json",
      description:
        'JSON list of levels per pass, e.g. ["minimal", "low", "medium"]',
      group: "dialectic",
    },
  },
  dialecticMaxChars: {
    read: int,
    default: 600,
    ui: {
      order: 25,
      label: "Dialectic output cap",
      kind: "number",
      placeholder: "1200",
      description: "Most characters of dialectic text injected",
      group: "dialectic",
    },
  },
  dialecticMaxInputChars: {
    read: int,
    default: 10_000,
    ui: {
      order: 28,
      label: "Dialectic input cap",
      kind: "number",
      description: "Most characters of a dialectic query",
      group: "dialectic",
    },
  },
  reasoningHeuristic: {
    read: flag,
    default: true,
    ui: {
      order: 29,
      label: "Reasoning heuristic",
      kind: "bool",
      description: "Raise the level for longer queries",
      group: "dialectic",
    },
  },
  reasoningLevelCap: {
    read: level,
    default: "high",
    ui: {
      order: 30,
      label: "Reasoning level cap",
      kind: "select",
      choices: LEVELS,
      description: "Highest level the heuristic may choose",
      group: "dialectic",
    },
  },
  queryRewrite: { read: flag, default: false },
  firstTurnBaseWait: { read: seconds, default: 3 },
  firstTurnDialecticWait: { read: seconds, default: 2 },
  messageMaxChars: {
    read: int,
    default: 25_000,
    ui: {
      order: 16,
      label: "Message chunk size",
      kind: "number",
      description:
        "Longer messages are split into chunks of at most this many characters",
      group: "writes",
    },
  },
  observationMode: {
    read: (ctx, keys) =>
      map(orFound(ctx.look.pick(keys[0]!)), normalizeObservationMode),
    // Without the key: `unified` when explicitly configured.
    default: (ctx) => ctx.explicitlyConfigured ? "unified" : "directional",
    ui: {
      order: 22,
      label: "Observation",
      kind: "select",
      choices: [
        ["directional", "Full mutual observation"],
        ["unified", "The AI observes the user; one observer pool"],
      ],
      default: "directional",
      description: "Observation preset of the user and AI peers",
      group: "recall",
    },
  },
  observation: {
    read: (ctx, keys) =>
      map(ctx.look.pick(keys[0]!), parseObservationOverrides),
    default: undefined,
  },
  pinUserPeer: {
    aliases: ["pinPeerName"],
    read: flag,
    default: false,
    ui: {
      order: 8,
      label: "Pin user peer",
      kind: "bool",
      description: "Map every runtime user to the user peer name",
      group: "identity",
    },
  },
  userPeerAliases: {
    read: (ctx, keys) => ctx.look.stringMap(keys[0]!),
    default: {},
    ui: {
      order: 10,
      label: "User peer aliases",
      kind: "json",
      description: "JSON object mapping platform user ids to peer ids",
      group: "identity",
    },
  },
  runtimePeerPrefix: {
    read: (ctx, keys) => ctx.look.string(keys[0]!),
    default: "",
    ui: {
      order: 9,
      label: "Runtime peer prefix",
      kind: "text",
      description: "Prefix for peer ids generated from platform user ids",
      group: "identity",
    },
  },
  a2aSessions: { read: flag, default: true },
  logging: {
    envFallbacks: ["HONCHO_LOGGING"],
    // HONCHO_INJECTION_LOG turns it on; HONCHO_LOGGING applies when the
    // file does not set it.
    read: (ctx, keys) => {
      if (ctx.env("HONCHO_INJECTION_LOG")) {
        return { value: true, source: "env" };
      }
      const loggingEnv = ctx.env("HONCHO_LOGGING");
      return map(ctx.look.pickSet(keys[0]!), pythonTruthy) ??
        (loggingEnv === undefined
          ? undefined
          : { value: isTruthyEnvValue(loggingEnv), source: "env" });
    },
    default: false,
    ui: {
      order: 17,
      label: "Injection log",
      kind: "bool",
      description: "Log every context injection to ~/.honcho/injection.log",
      group: "writes",
    },
  },
  injectionLogPath: {
    status: false,
    read: (ctx) => {
      if (!ctx.get("logging")) return undefined;
      const env = ctx.env("HONCHO_INJECTION_LOG");
      return env ? { value: resolve(env), source: "env" } : {
        value: join(dirname(globalHonchoConfigPath()), "injection.log"),
        source: "default",
      };
    },
    default: undefined,
  },
  oauth: {
    status: "presence",
    read: (ctx) =>
      isRecord(ctx.host.oauth)
        ? { value: ctx.host.oauth, source: "host" }
        : undefined,
    default: undefined,
  },
};

/** One row of {@linkcode SETTINGS}: a setting and its resolved name. */
export type Setting = SettingSpec<unknown> & { field: keyof HonchoSettings };

/** Every Honcho setting, in the order `hermes honcho status` shows them. */
export const SETTINGS: readonly Setting[] = Object.freeze(
  Object.entries(TABLE).map(([field, spec]) =>
    Object.freeze({ ...spec, field }) as Setting
  ),
);
