/**
 * The resolved Honcho settings as the CLI shows them: the rows in order and
 * each value for JSON (secrets masked). Shared by `hermes honcho status` and
 * the host-side status hook, without the client.
 *
 * @module
 */

import { maskSecret } from "../../../../mod.ts";
import type { HonchoSettings } from "../config.ts";
import { type Setting, SETTINGS } from "../settings_table.ts";

/**
 * The settings shown, in the settings table's order: `[JSON key, field]`.
 */
export const SETTING_ROWS: readonly [string, keyof HonchoSettings][] = SETTINGS
  .filter((s) => s.status !== false)
  .map((s) => [s.key ?? s.field, s.field]);

const SHOWN = new Map(SETTINGS.map((s) => [s.key ?? s.field, s] as const));

/**
 * The table row of a setting shown under `key`.
 *
 * @param key The JSON key (`workspace`, `injection.sessionStart`, …).
 * @returns The row, or `undefined` for a key the table does not know.
 */
export function settingShownAs(key: string): Setting | undefined {
  return SHOWN.get(key);
}

/**
 * The value of a setting for `--json` (the key masked, the OAuth grant
 * reduced to whether it is set).
 *
 * @param key The JSON key.
 * @param value The resolved value.
 * @returns A JSON value (`null` when unset).
 *
 * @example
 * ```ts
 * import { jsonSetting } from "./_settings_view.ts";
 * import assert from "node:assert/strict";
 * assert.equal(jsonSetting("oauth", { refresh_token: "x" }), "set");
 * ```
 */
export function jsonSetting(key: string, value: unknown): unknown {
  if (value === undefined || value === null) return null;
  const setting = SHOWN.get(key);
  if (setting?.ui?.kind === "secret") return maskSecret(String(value));
  if (setting?.status === "presence") return "set";
  return value;
}
