/** The resolved settings as `status` and the status hook show them, secrets masked. @module */

import { maskSecret } from "../../../../src/provider/mod.ts";
import type { HonchoSettings } from "../config/settings_table.ts";
import { SETTINGS } from "../config/settings_table.ts";

/** The settings shown: `[JSON key, field]`. */
export const SETTING_ROWS: readonly [string, keyof HonchoSettings][] = SETTINGS
  .filter((s) => s.status !== false)
  .map((s) => [s.key ?? s.field, s.field]);

const SHOWN = new Map(SETTINGS.map((s) => [s.key ?? s.field, s] as const));

/** A setting's value for `--json`: the key masked, the OAuth grant reduced to `"set"`. */
export function jsonSetting(key: string, value: unknown): unknown {
  if (value === undefined || value === null) return null;
  const setting = SHOWN.get(key);
  if (setting?.ui?.kind === "secret") return maskSecret(String(value));
  if (setting?.status === "presence") return "set";
  return value;
}

/** A setting's value as text: masked, `(unset: what that means)` when absent. */
export function displaySetting(key: string, value: unknown): string {
  const json = jsonSetting(key, value);
  if (json === null) {
    const unset = SHOWN.get(key)?.unset;
    return unset === undefined ? "(unset)" : `(unset: ${unset})`;
  }
  if (typeof json === "string") return json === "" ? '""' : json;
  return JSON.stringify(json);
}
