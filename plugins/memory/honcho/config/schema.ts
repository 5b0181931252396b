/**
 * The setup surface derived from the settings table: the desktop's schema,
 * `getConfigSchema()` fields and the wizard's tuning keys
 * (plugins/memory/honcho/SPEC.md §1, §12).
 * @module
 */

import type { ConfigField } from "../../../../src/provider/mod.ts";
import {
  type Setting,
  type SettingGroup,
  type SettingKind,
  SETTINGS,
} from "./settings_table.ts";
import { saveHonchoConfig } from "./file.ts";

export interface ProviderFieldOption {
  value: string;
  label: string;
  description?: string;
}

export interface ProviderField {
  /** The `honcho.json` key. */
  key: string;
  label: string;
  kind: SettingKind;
  /** Shown when unset. */
  default?: unknown;
  description: string;
  placeholder?: string;
  options?: readonly ProviderFieldOption[];
  /** The environment variable that holds it (setup writes it to `.env`; secrets go only there). */
  envKey?: string;
  aliases?: readonly string[];
  /** Environment variables read when the key is unset. */
  envFallbacks?: readonly string[];
  group: SettingGroup;
  /** The active host block, or the file's root. */
  scope: "host" | "root";
}

export interface ProviderConfigSchema {
  name: string;
  label: string;
  /** Honcho writes the active host block of `honcho.json`. */
  storage: "flat_json" | "honcho_host_block";
  docsUrl: string;
  /** In display order. */
  fields: readonly ProviderField[];
}

// The desktop's field order is each entry's `ui.order`; `hermes honcho
// status` shows the table's own order.
const UI_SETTINGS: readonly Setting[] = SETTINGS.filter((s) => s.ui)
  .sort((a, b) => a.ui!.order - b.ui!.order);

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

/** The desktop surface of `config_schema.py`, derived from the settings table. */
export const HONCHO_CONFIG_SCHEMA: ProviderConfigSchema = Object.freeze({
  name: "honcho",
  label: "Honcho",
  storage: "honcho_host_block",
  docsUrl: "https://docs.honcho.dev",
  fields: Object.freeze(UI_SETTINGS.map(toField)),
});

/** The setup wizard's tuning keys in order, with its defaults (plugins/memory/honcho/SPEC.md §12). */
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

const KIND_TO_TYPE: Readonly<Record<SettingKind, string>> = {
  text: "text",
  select: "text",
  secret: "text",
  bool: "boolean",
  number: "number",
  json: "text",
};

/** The contract's `getConfigSchema()` fields, from {@linkcode HONCHO_CONFIG_SCHEMA}. */
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

/** Saves non-secret setup values by each field's scope (unknown keys: host block; secrets: `.env` only). */
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
