/**
 * Peer naming (plugins/memory/honcho/SPEC.md §4): the AI peer, the session's
 * user peer and turn authors, all valid Honcho ids.
 * @module
 */

import type { HonchoConfig } from "../config/config.ts";
import { HonchoError } from "../client/errors.ts";
import { sanitizeId, sha256Hex } from "../_util.ts";

/** The AI peer used when `aiPeer` is empty. */
export const DEFAULT_AI_PEER = "hermes-assistant";

/** The AI peer id: `sanitize(aiPeer || "hermes-assistant")`. */
export function resolveAiPeerId(config: Pick<HonchoConfig, "aiPeer">): string {
  return sanitizeId(config.aiPeer?.trim() || DEFAULT_AI_PEER);
}

/** Runtime user ids trimmed, without blanks and duplicates, in order. */
export function normalizeRuntimeIds(
  ids: readonly (string | null | undefined)[],
): string[] {
  const out: string[] = [];
  for (const id of ids) {
    const value = typeof id === "string" ? id.trim() : "";
    if (value && !out.includes(value)) out.push(value);
  }
  return out;
}

export type PeerNamingConfig = Pick<
  HonchoConfig,
  "pinUserPeer" | "peerName" | "userPeerAliases" | "runtimePeerPrefix"
>;

/** Alias targets and `peerName`: a generated id must not collide with them. */
export function reservedPeerIds(config: PeerNamingConfig): Set<string> {
  const out = new Set<string>();
  for (const target of Object.values(config.userPeerAliases ?? {})) {
    if (target.trim()) out.add(sanitizeId(target.trim()));
  }
  if (config.peerName?.trim()) out.add(sanitizeId(config.peerName.trim()));
  return out;
}

/** `prefix + runtimeId` as-is when valid and free, else sanitised plus the shortest free sha256 suffix. */
export function prefixedPeerId(
  prefix: string,
  runtimeId: string,
  reserved: ReadonlySet<string>,
): string {
  const raw = `${prefix}${runtimeId}`;
  const clean = sanitizeId(raw);
  if (clean === raw && !reserved.has(raw)) return raw;
  const hash = sha256Hex(raw);
  let candidate = clean;
  for (const n of [8, 12, 16, 24, 32, 64]) {
    candidate = `${clean}-${hash.slice(0, n)}`;
    if (!reserved.has(candidate)) return candidate;
  }
  return candidate;
}

export interface ResolveUserPeerIdOptions {
  /** Primary first (`userId`, `userIdAlt`). */
  runtimeIds?: readonly (string | null | undefined)[];
}

/** The command that names the user peer, for every hint that needs one. */
export const SET_USER_PEER_COMMAND = "hermes honcho peer --user NAME";

/**
 * The session's user peer (plugins/memory/honcho/SPEC.md §4): pinned
 * `peerName`, else alias / prefix / plain runtime id, else `peerName`.
 * @throws {HonchoError} `no_peer` When there is no runtime id and no `peerName`.
 */
export function resolveUserPeerId(
  config: PeerNamingConfig,
  options: ResolveUserPeerIdOptions = {},
): string {
  const peerName = config.peerName?.trim();
  if (config.pinUserPeer && peerName) return sanitizeId(peerName);
  const ids = normalizeRuntimeIds(options.runtimeIds ?? []);
  if (ids.length > 0) return peerForRuntimeIds(config, ids);
  if (peerName) return sanitizeId(peerName);
  throw new HonchoError(
    "no_peer",
    "Cannot name the Honcho user peer: no runtime user id and no peerName are configured; set one with 'hermes honcho peer --user <name>'",
  );
}

/** A human author other than the session's user: the runtime-id ladder, never pinned. */
export function resolveAuthorPeerId(
  config: PeerNamingConfig,
  authorId: string | undefined,
): string | undefined {
  const ids = normalizeRuntimeIds([authorId]);
  return ids.length > 0 ? peerForRuntimeIds(config, ids) : undefined;
}

function peerForRuntimeIds(
  config: PeerNamingConfig,
  ids: readonly string[],
): string {
  for (const id of ids) {
    const alias = config.userPeerAliases?.[id]?.trim();
    if (alias) return sanitizeId(alias);
  }
  const prefix = config.runtimePeerPrefix ?? "";
  if (prefix) return prefixedPeerId(prefix, ids[0]!, reservedPeerIds(config));
  return sanitizeId(ids[0]!);
}
