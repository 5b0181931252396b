/** A new profile's host block cloned from the default one (plugins/memory/honcho/SPEC.md §12). @module */

import type { HonchoConfig } from "../config/config.ts";
import { resolveAiPeerId } from "../session/peers.ts";
import {
  connectHoncho,
  describeHonchoFailure,
  serverLabel,
} from "./_common.ts";
import { isRecord, sanitizeId } from "../_util.ts";

/** Keys a fresh host block inherits from the default block on `enable`. */
export const ENABLE_INHERITED_KEYS: readonly string[] = Object.freeze([
  "recallMode",
  "writeFrequency",
  "sessionStrategy",
  "contextTokens",
  "dialecticReasoningLevel",
  "dialecticDynamic",
  "dialecticMaxChars",
  "messageMaxChars",
  "dialecticMaxInputChars",
  "saveMessages",
  "observation",
  "observationMode",
  "peerName",
]);

/** Keys a profile's host block inherits from the default block on `sync`. */
export const SYNC_INHERITED_KEYS: readonly string[] = Object.freeze([
  ...ENABLE_INHERITED_KEYS,
  "sessionPeerPrefix",
  "pinUserPeer",
  "userPeerAliases",
  "runtimePeerPrefix",
]);

/** `hosts[defaultHost ?? "hermes"]` of a parsed file (`{}` when absent). */
export function defaultHostBlock(
  raw: Record<string, unknown>,
): Record<string, unknown> {
  const name = typeof raw.defaultHost === "string" && raw.defaultHost.trim()
    ? raw.defaultHost.trim()
    : "hermes";
  const hosts = isRecord(raw.hosts) ? raw.hosts : {};
  const block = hosts[name];
  return isRecord(block) ? block : {};
}

interface InheritedHostBlockOptions {
  keys: readonly string[];
  aiPeer: string;
  workspace: string;
  enabled: boolean;
}

/** The listed keys copied from the default block (legacy `pinPeerName` as `pinUserPeer`). */
export function inheritedHostBlock(
  source: Record<string, unknown>,
  options: InheritedHostBlockOptions,
): Record<string, unknown> {
  const { keys, ...fixed } = options;
  const block: Record<string, unknown> = {};
  for (const key of keys) {
    if (source[key] !== undefined && source[key] !== null) {
      block[key] = structuredClone(source[key]);
    }
  }
  if (
    keys.includes("pinUserPeer") && block.pinUserPeer === undefined &&
    source.pinPeerName !== undefined && source.pinPeerName !== null
  ) {
    block.pinUserPeer = source.pinPeerName;
  }
  return Object.assign(block, fixed);
}

/** The workspace new blocks share: the default block's, else the root's, else `hermes`. */
export function sharedWorkspace(raw: Record<string, unknown>): string {
  for (const value of [defaultHostBlock(raw).workspace, raw.workspace]) {
    if (typeof value === "string" && value.trim()) return value.trim();
  }
  return "hermes";
}

/** Creates the AI peer (and the user peer, when named) with the CLI's short timeout. */
export async function createPeersEagerly(
  config: HonchoConfig,
): Promise<{ peers: string[]; error?: string }> {
  if (!config.apiKey && !config.baseUrl) {
    return { peers: [], error: "no API key or base URL is configured" };
  }
  const peers = [resolveAiPeerId(config)];
  if (config.peerName) peers.push(sanitizeId(config.peerName));
  try {
    const client = await connectHoncho(config);
    for (const peer of peers) await client.getOrCreatePeer(peer);
    return { peers };
  } catch (error) {
    return {
      peers: [],
      error: describeHonchoFailure(error, serverLabel(config)),
    };
  }
}
