/**
 * The setup surface derived from the settings table: the desktop's schema,
 * the contract's `getConfigSchema()` fields and the wizard's tuning keys
 * (plugins/memory/honcho/SPEC.md §1, §12).
 *
 * @module
 */

import type { ConfigField } from "../../../src/provider/mod.ts";

export type { ConfigField };
import {
  type Setting,
  type SettingGroup,
  type SettingKind,
  SETTINGS,
} from "./settings_table.ts";
import { saveHonchoConfig } from "./config_file.ts";

/** How a field is edited. */
export type ProviderFieldKind = SettingKind;

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
  group: SettingGroup;
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

// The desktop's field order (grouped; `hermes honcho status` shows the
// table's own order). Every table entry with `ui` is listed once.
const SCHEMA_ORDER: readonly string[] = [
  "apiKey",
  "baseUrl",
  "environment",
  "timeout",
  "workspace",
  "peerName",
  "aiPeer",
  "pinUserPeer",
  "runtimePeerPrefix",
  "userPeerAliases",
  "sessionStrategy",
  "sessionPeerPrefix",
  "sessions",
  "saveMessages",
  "writeFrequency",
  "messageMaxChars",
  "logging",
  "recallMode",
  "recallSync",
  "contextTokens",
  "initOnSessionStart",
  "observationMode",
  "dialecticReasoningLevel",
  "dialecticDynamic",
  "dialecticMaxChars",
  "dialecticDepth",
  "dialecticDepthLevels",
  "dialecticMaxInputChars",
  "reasoningHeuristic",
  "reasoningLevelCap",
];

const UI_SETTINGS: readonly Setting[] = (() => {
  const byKey = new Map(
    SETTINGS.filter((s) => s.ui).map((s) => [s.key ?? s.field, s] as const),
  );
  const missing = [...byKey.keys()].filter((k) => !SCHEMA_ORDER.includes(k));
  if (missing.length > 0 || SCHEMA_ORDER.some((k) => !byKey.has(k))) {
    throw new Error(
      `config_schema.ts: SCHEMA_ORDER and the settings table disagree (${
        missing.join(", ")
      })`,
    );
  }
  return SCHEMA_ORDER.map((key) => byKey.get(key)!);
})();

// One schema field from a table row; the keys are in the order the
// desktop has always received them.
function toField(s: Setting): ProviderField {
  const ui = s.ui!;
  const shown = ui.default !== undefined
    ? ui.default
    : typeof s.default === "function"
    ? undefined
    : s.default;
  const out: Record<string, unknown> = {
    scope: s.scope ?? "host",
    key: s.key ?? s.field,
    label: ui.label,
    kind: ui.kind,
  };
  if (shown !== undefined) out.default = shown;
  if (ui.choices) {
    out.options = ui.choices.map(([value, description]) =>
      description === undefined
        ? { value, label: value }
        : { value, label: value, description }
    );
  }
  if (s.aliases) out.aliases = s.aliases;
  if (s.env) out.envKey = s.env;
  if (s.envFallbacks) out.envFallbacks = s.envFallbacks;
  if (ui.placeholder) out.placeholder = ui.placeholder;
  out.description = ui.description;
  out.group = ui.group;
  return Object.freeze(out) as unknown as ProviderField;
}

/**
 * The declarative schema of the Honcho provider (the desktop surface of
 * `config_schema.py`), derived from the settings table
 * (`settings_table.ts`): every field is stored in the active host block
 * except `baseUrl`, `timeout` and `sessions` (root).
 */
export const HONCHO_CONFIG_SCHEMA: ProviderConfigSchema = Object.freeze({
  name: "honcho",
  label: "Honcho",
  storage: "honcho_host_block",
  docsUrl: "https://docs.honcho.dev",
  fields: Object.freeze(UI_SETTINGS.map(toField)),
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
    const range = UI_SETTINGS.find((s) => (s.key ?? s.field) === spec.key)
      ?.ui?.range;
    if (range) {
      out.type = "integer";
      out.minimum = range[0];
      out.maximum = range[1];
    }
    return out;
  });
}

/**
 * Saves non-secret setup values into `$HERMES_HOME/honcho.json`: fields of
 * {@linkcode HONCHO_CONFIG_SCHEMA} with `scope: "root"` at the root, the
 * rest (and keys the schema does not know) in the profile's host block;
 * secrets are skipped (they belong in `.env`).
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
