/**
 * The Honcho provider's setup surface: the declarative schema the desktop
 * and dashboard render (stored in the active host block of `honcho.json`),
 * the `getConfigSchema()` fields of the provider contract, and the tuning
 * keys of the `hermes honcho setup` wizard (plugins/memory/honcho/SPEC.md §1, §12).
 *
 * Pure data: importing this file does no I/O.
 *
 * @module
 */

import type { ConfigField } from "../../../src/provider/mod.ts";

export type { ConfigField };
import { REASONING_LEVELS } from "./config.ts";
import { saveHonchoConfig } from "./config_file.ts";

/** How a field is edited. */
export type ProviderFieldKind =
  | "text"
  | "select"
  | "secret"
  | "bool"
  | "number"
  | "json";

/** One choice of a `select` field. */
export interface ProviderFieldOption {
  /** The stored value. */
  value: string;
  /** The label shown. */
  label: string;
  /** A longer explanation. */
  description?: string;
}

/** One field of a declarative provider schema. */
export interface ProviderField {
  /** The `honcho.json` key. */
  key: string;
  /** The label shown. */
  label: string;
  /** How it is edited. @default {"text"} */
  kind: ProviderFieldKind;
  /** The default value (shown when unset). */
  default?: unknown;
  /** What it does. */
  description: string;
  /** Placeholder text. */
  placeholder?: string;
  /** Choices of a `select`. */
  options?: readonly ProviderFieldOption[];
  /** The environment variable that holds it (setup writes it to `.env`; secrets go only there). */
  envKey?: string;
  /** Other keys accepted for the same setting. */
  aliases?: readonly string[];
  /** Environment variables read when the key is unset. */
  envFallbacks?: readonly string[];
  /** The UI group. */
  group:
    | "connection"
    | "identity"
    | "sessions"
    | "writes"
    | "recall"
    | "dialectic";
  /** Where the value is stored: the active host block, or the file's root. @default {"host"} */
  scope: "host" | "root";
}

/** A declarative provider schema. */
export interface ProviderConfigSchema {
  /** The provider's name. */
  name: string;
  /** The label shown. */
  label: string;
  /** How values are stored: Honcho writes the active host block of `honcho.json`. */
  storage: "flat_json" | "honcho_host_block";
  /** Documentation. */
  docsUrl: string;
  /** The fields, in display order. */
  fields: readonly ProviderField[];
}

const LEVEL_OPTIONS: readonly ProviderFieldOption[] = REASONING_LEVELS.map((
  level,
) => ({
  value: level,
  label: level,
}));

const field = (
  spec: Omit<ProviderField, "scope"> & { scope?: "host" | "root" },
): ProviderField => Object.freeze({ scope: "host", ...spec });

/**
 * The declarative schema of the Honcho provider (the desktop surface of
 * `config_schema.py`): every field is stored in the active host block
 * except `baseUrl`, `timeout` and `sessions` (root).
 *
 * @example Listing the secret fields
 * ```ts
 * import { HONCHO_CONFIG_SCHEMA } from "./config_schema.ts";
 * import assert from "node:assert/strict";
 * const secrets = HONCHO_CONFIG_SCHEMA.fields.filter((f) => f.kind === "secret").map((f) => f.key);
 * assert.deepEqual(secrets, ["apiKey"]);
 * ```
 */
export const HONCHO_CONFIG_SCHEMA: ProviderConfigSchema = Object.freeze({
  name: "honcho",
  label: "Honcho",
  storage: "honcho_host_block",
  docsUrl: "https://docs.honcho.dev",
  fields: Object.freeze([
    field({
      key: "apiKey",
      label: "API key",
      kind: "secret",
      envKey: "HONCHO_API_KEY",
      description:
        "Honcho API key (from app.honcho.dev); a local server needs none",
      group: "connection",
    }),
    field({
      key: "baseUrl",
      label: "Base URL",
      kind: "text",
      aliases: ["base_url"],
      envKey: "HONCHO_BASE_URL",
      envFallbacks: ["HONCHO_URL"],
      placeholder: "http://localhost:8000",
      description: "Self-hosted Honcho server; leave empty for Honcho cloud",
      group: "connection",
      scope: "root",
    }),
    field({
      key: "environment",
      label: "Environment",
      kind: "select",
      default: "production",
      options: [
        {
          value: "production",
          label: "production",
          description: "Honcho cloud",
        },
        {
          value: "local",
          label: "local",
          description: "http://localhost:8000",
        },
      ],
      description: "Which server to use when no base URL is set",
      group: "connection",
    }),
    field({
      key: "timeout",
      label: "Request timeout (s)",
      kind: "number",
      aliases: ["requestTimeout"],
      envKey: "HONCHO_TIMEOUT",
      placeholder: "30",
      description: "HTTP timeout of one Honcho request, in seconds",
      group: "connection",
      scope: "root",
    }),
    field({
      key: "workspace",
      label: "Workspace",
      kind: "text",
      placeholder: "hermes",
      description: "Honcho workspace; profiles normally share one",
      group: "identity",
    }),
    field({
      key: "peerName",
      label: "User peer name",
      kind: "text",
      description:
        "Your peer id in Honcho (used when the platform supplies no user id)",
      group: "identity",
    }),
    field({
      key: "aiPeer",
      label: "AI peer name",
      kind: "text",
      placeholder: "hermes",
      description: "This profile's AI peer id",
      group: "identity",
    }),
    field({
      key: "pinUserPeer",
      label: "Pin user peer",
      kind: "bool",
      default: false,
      aliases: ["pinPeerName"],
      description: "Map every runtime user to the user peer name",
      group: "identity",
    }),
    field({
      key: "runtimePeerPrefix",
      label: "Runtime peer prefix",
      kind: "text",
      default: "",
      description: "Prefix for peer ids generated from platform user ids",
      group: "identity",
    }),
    field({
      key: "userPeerAliases",
      label: "User peer aliases",
      kind: "json",
      default: {},
      description: "JSON object mapping platform user ids to peer ids",
      group: "identity",
    }),
    field({
      key: "sessionStrategy",
      label: "Session strategy",
      kind: "select",
      default: "per-directory",
      options: [
        {
          value: "per-directory",
          label: "per-directory",
          description: "One session per working directory",
        },
        {
          value: "per-repo",
          label: "per-repo",
          description: "One session per git repository",
        },
        {
          value: "per-session",
          label: "per-session",
          description: "A new Honcho session for every Hermes session",
        },
        {
          value: "global",
          label: "global",
          description: "One session for everything",
        },
      ],
      description: "How Hermes conversations map to Honcho sessions",
      group: "sessions",
    }),
    field({
      key: "sessionPeerPrefix",
      label: "Prefix sessions with the user peer",
      kind: "bool",
      default: false,
      description: "Session names start with the user peer name",
      group: "sessions",
    }),
    field({
      key: "sessions",
      label: "Session map",
      kind: "json",
      default: {},
      description: "JSON object mapping directories to session names",
      group: "sessions",
      scope: "root",
    }),
    field({
      key: "saveMessages",
      label: "Save messages",
      kind: "bool",
      default: true,
      description: "Write conversation turns to Honcho",
      group: "writes",
    }),
    field({
      key: "writeFrequency",
      label: "Write frequency",
      kind: "text",
      default: "async",
      placeholder: "async | turn | session | N",
      description:
        "When turns are written: async, turn, session, or every N turns",
      group: "writes",
    }),
    field({
      key: "messageMaxChars",
      label: "Message chunk size",
      kind: "number",
      default: 25000,
      description:
        "Longer messages are split into chunks of at most this many characters",
      group: "writes",
    }),
    field({
      key: "logging",
      label: "Injection log",
      kind: "bool",
      default: false,
      envFallbacks: ["HONCHO_LOGGING"],
      description: "Log every context injection to ~/.honcho/injection.log",
      group: "writes",
    }),
    field({
      key: "recallMode",
      label: "Recall mode",
      kind: "select",
      default: "hybrid",
      options: [
        {
          value: "hybrid",
          label: "hybrid",
          description: "Automatic context and tools",
        },
        {
          value: "context",
          label: "context",
          description: "Automatic context only",
        },
        { value: "tools", label: "tools", description: "Tools only" },
      ],
      description: "How memory reaches the model",
      group: "recall",
    }),
    field({
      key: "recallSync",
      label: "Synchronous recall",
      kind: "bool",
      default: false,
      description:
        "Recall for the current message before answering (bounded by the timeout)",
      group: "recall",
    }),
    field({
      key: "contextTokens",
      label: "Context budget (tokens)",
      kind: "number",
      placeholder: "uncapped",
      description: "Token budget of the injected context; empty = uncapped",
      group: "recall",
    }),
    field({
      key: "initOnSessionStart",
      label: "Initialize at session start",
      kind: "bool",
      default: false,
      description:
        "In tools mode, connect when the session starts instead of at the first tool call",
      group: "recall",
    }),
    field({
      key: "observationMode",
      label: "Observation",
      kind: "select",
      default: "directional",
      options: [
        {
          value: "directional",
          label: "directional",
          description: "Full mutual observation",
        },
        {
          value: "unified",
          label: "unified",
          description: "The AI observes the user; one observer pool",
        },
      ],
      description: "Observation preset of the user and AI peers",
      group: "recall",
    }),
    field({
      key: "dialecticReasoningLevel",
      label: "Reasoning level",
      kind: "select",
      default: "low",
      options: LEVEL_OPTIONS,
      description: "Base reasoning level of the dialectic",
      group: "dialectic",
    }),
    field({
      key: "dialecticDynamic",
      label: "Dynamic reasoning level",
      kind: "bool",
      default: true,
      description: "Let the model choose the level per call",
      group: "dialectic",
    }),
    field({
      key: "dialecticMaxChars",
      label: "Dialectic output cap",
      kind: "number",
      default: 600,
      placeholder: "1200",
      description: "Most characters of dialectic text injected",
      group: "dialectic",
    }),
    field({
      key: "dialecticDepth",
      label: "Dialectic depth",
      kind: "number",
      default: 1,
      description: "Passes per dialectic call (1 to 3)",
      group: "dialectic",
    }),
    field({
      key: "dialecticDepthLevels",
      label: "Per-pass levels",
      kind: "json",
      description:
        'JSON list of levels per pass, e.g. ["minimal", "low", "medium"]',
      group: "dialectic",
    }),
    field({
      key: "dialecticMaxInputChars",
      label: "Dialectic input cap",
      kind: "number",
      default: 10000,
      description: "Most characters of a dialectic query",
      group: "dialectic",
    }),
    field({
      key: "reasoningHeuristic",
      label: "Reasoning heuristic",
      kind: "bool",
      default: true,
      description: "Raise the level for longer queries",
      group: "dialectic",
    }),
    field({
      key: "reasoningLevelCap",
      label: "Reasoning level cap",
      kind: "select",
      default: "high",
      options: LEVEL_OPTIONS,
      description: "Highest level the heuristic may choose",
      group: "dialectic",
    }),
  ]),
});

/**
 * The keys the setup wizard's tuning step asks for (plugins/memory/honcho/SPEC.md §12), in order, with
 * the wizard's defaults (the wizard writes `dialecticCadence: 2`).
 */
export const HONCHO_TUNING_DEFAULTS: Readonly<Record<string, unknown>> = Object
  .freeze({
    observationMode: "directional",
    writeFrequency: "async",
    recallMode: "hybrid",
    contextTokens: undefined,
    dialecticCadence: 2,
    dialecticReasoningLevel: "low",
    sessionStrategy: "per-session",
  });

const KIND_TO_TYPE: Readonly<Record<ProviderFieldKind, string>> = {
  text: "text",
  select: "text",
  secret: "text",
  bool: "boolean",
  number: "number",
  json: "text",
};

/**
 * The provider contract's `getConfigSchema()` fields, derived from
 * {@linkcode HONCHO_CONFIG_SCHEMA}: the API key is a secret stored under
 * `HONCHO_API_KEY`; `baseUrl` names `HONCHO_BASE_URL`; selects carry their
 * choices.
 *
 * @returns Fresh field objects.
 *
 * @example Using getHonchoConfigFields
 * ```ts
 * import { getHonchoConfigFields } from "./config_schema.ts";
 * import assert from "node:assert/strict";
 * const apiKey = getHonchoConfigFields().find((f) => f.key === "apiKey");
 * assert.equal(apiKey?.env_var, "HONCHO_API_KEY");
 * assert.equal(apiKey?.secret, true);
 * ```
 */
export function getHonchoConfigFields(): ConfigField[] {
  return HONCHO_CONFIG_SCHEMA.fields.map((spec) => {
    const out: ConfigField = {
      key: spec.key,
      label: spec.label,
      description: spec.description,
      type: KIND_TO_TYPE[spec.kind],
    };
    if (spec.kind === "secret") {
      out.secret = true;
      out.url = "https://app.honcho.dev";
    }
    if (spec.envKey) out.env_var = spec.envKey;
    if (spec.default !== undefined) out.default = structuredClone(spec.default);
    if (spec.options) out.choices = spec.options.map((option) => option.value);
    if (spec.placeholder) out.placeholder = spec.placeholder;
    if (spec.key === "dialecticDepth") {
      out.type = "integer";
      out.minimum = 1;
      out.maximum = 3;
    }
    return out;
  });
}

/**
 * Saves non-secret setup values into `$HERMES_HOME/honcho.json`: fields of
 * {@linkcode HONCHO_CONFIG_SCHEMA} with `scope: "root"` at the root, the
 * rest (and keys the schema does not know) in the profile's host block;
 * secrets are skipped (they belong in `.env`).
 *
 * @param values The values, keyed by schema key.
 * @param hermesHome The profile home.
 * @returns Resolves once written (each part under the settings lock).
 *
 * @example Saving a self-hosted server's URL and a recall mode
 * ```ts ignore
 * import { saveHonchoSetupValues } from "./config_schema.ts";
 * await saveHonchoSetupValues({ baseUrl: "http://127.0.0.1:8000", recallMode: "tools" }, "/home/me/.hermes");
 * ```
 */
export async function saveHonchoSetupValues(
  values: Record<string, unknown>,
  hermesHome: string,
): Promise<void> {
  const root: Record<string, unknown> = {};
  const host: Record<string, unknown> = {};
  const scopes = new Map(
    HONCHO_CONFIG_SCHEMA.fields.map((f) => [f.key, f] as const),
  );
  for (const [key, value] of Object.entries(values)) {
    const field = scopes.get(key);
    if (field?.kind === "secret") continue;
    (field?.scope === "root" ? root : host)[key] = value;
  }
  if (Object.keys(root).length > 0) {
    await saveHonchoConfig(root, hermesHome);
  }
  if (Object.keys(host).length > 0) {
    await saveHonchoConfig(host, hermesHome, { hostBlock: true });
  }
}
