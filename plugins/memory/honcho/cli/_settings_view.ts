/**
 * The resolved Honcho settings as the CLI shows them: the rows in order and
 * each value for JSON (secrets masked). Shared by `hermes honcho status` and
 * the host-side status hook, without the client.
 *
 * @module
 */

import { maskSecret } from "../../../../mod.ts";
import type { HonchoSettings } from "../config.ts";

/** The settings shown, in order: `[JSON key, field]`. */
export const SETTING_ROWS: readonly [string, keyof HonchoSettings][] = [
  ["enabled", "enabled"],
  ["apiKey", "apiKey"],
  ["baseUrl", "baseUrl"],
  ["environment", "environment"],
  ["workspace", "workspaceId"],
  ["peerName", "peerName"],
  ["aiPeer", "aiPeer"],
  ["timeout", "timeout"],
  ["recallMode", "recallMode"],
  ["recallSync", "recallSync"],
  ["writeFrequency", "writeFrequency"],
  ["saveMessages", "saveMessages"],
  ["sessionStrategy", "sessionStrategy"],
  ["sessionPeerPrefix", "sessionPeerPrefix"],
  ["sessionAiPeerPrefix", "sessionAiPeerPrefix"],
  ["sessions", "sessions"],
  ["contextTokens", "contextTokens"],
  ["contextCadence", "contextCadence"],
  ["injectionFrequency", "injectionFrequency"],
  ["injection.sessionStart", "injectionSessionStart"],
  ["initOnSessionStart", "initOnSessionStart"],
  ["dialecticReasoningLevel", "dialecticReasoningLevel"],
  ["dialecticDynamic", "dialecticDynamic"],
  ["dialecticCadence", "dialecticCadence"],
  ["dialecticDepth", "dialecticDepth"],
  ["dialecticDepthLevels", "dialecticDepthLevels"],
  ["dialecticMaxChars", "dialecticMaxChars"],
  ["dialecticMaxInputChars", "dialecticMaxInputChars"],
  ["reasoningHeuristic", "reasoningHeuristic"],
  ["reasoningLevelCap", "reasoningLevelCap"],
  ["queryRewrite", "queryRewrite"],
  ["firstTurnBaseWait", "firstTurnBaseWait"],
  ["firstTurnDialecticWait", "firstTurnDialecticWait"],
  ["messageMaxChars", "messageMaxChars"],
  ["observationMode", "observationMode"],
  ["observation", "observation"],
  ["pinUserPeer", "pinUserPeer"],
  ["userPeerAliases", "userPeerAliases"],
  ["runtimePeerPrefix", "runtimePeerPrefix"],
  ["a2aSessions", "a2aSessions"],
  ["logging", "logging"],
  ["oauth", "oauth"],
];

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
  if (key === "apiKey") return maskSecret(String(value));
  if (key === "oauth") return "set";
  return value;
}
