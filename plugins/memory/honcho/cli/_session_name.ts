/**
 * The Honcho session a CLI command in a directory uses (honcho-provider
 * §2.1 without a live Hermes session: no gateway key, no session id, no
 * title), and the sanitiser of `hermes honcho map`.
 *
 * Internal to the Honcho CLI.
 *
 * @module
 */

import { dirname, join, resolve } from "node:path";
import type { HonchoConfig } from "../config.ts";
import { baseName, sanitizeHonchoId } from "./_common.ts";

/** The 100-character limit of session names (§2.1). */
export const SESSION_NAME_LIMIT = 100;

/** How {@linkcode cliSessionName} picked the name. */
export type SessionNameReason =
  | "mapped"
  | "per-repo"
  | "per-directory"
  | "per-session"
  | "global";

/** The session a directory maps to. */
export interface CliSessionName {
  /** The session key (before id sanitising). */
  key: string;
  /** The Honcho session id (`key` sanitised). */
  sessionId: string;
  /** Which rule picked it. */
  reason: SessionNameReason;
}

/**
 * Replaces every run of characters outside `[A-Za-z0-9_-]` with `-` and
 * trims `-` at both ends (§2.1 `slug`).
 *
 * @param text The text.
 * @returns The slug (may be empty).
 *
 * @example
 * ```ts
 * import { slugSessionPart } from "./_session_name.ts";
 * import assert from "node:assert/strict";
 * assert.equal(slugSessionPart("agent:main:telegram:dm:42"), "agent-main-telegram-dm-42");
 * ```
 */
export function slugSessionPart(text: string): string {
  return text.replace(/[^A-Za-z0-9_-]+/g, "-").replace(/^-+|-+$/g, "");
}

/**
 * The `hermes honcho map` sanitiser: each invalid character becomes `-`,
 * then leading and trailing `-` are stripped.
 *
 * @param name The name typed.
 * @returns The sanitised name (may be empty).
 *
 * @example
 * ```ts
 * import { sanitizeMapName } from "./_session_name.ts";
 * import assert from "node:assert/strict";
 * assert.equal(sanitizeMapName("my project!"), "my-project");
 * ```
 */
export function sanitizeMapName(name: string): string {
  return name.trim().replace(/[^A-Za-z0-9_-]/g, "-").replace(/^-+|-+$/g, "");
}

/**
 * Applies the 100-character limit: longer names keep their first 91
 * characters (trailing `-` trimmed) plus `-` and 8 hex digits of the
 * SHA-256 of the original.
 *
 * @param sanitized The name to limit.
 * @param original The name the hash is taken over.
 * @returns The limited name.
 *
 * @example
 * ```ts
 * import { enforceSessionNameLimit } from "./_session_name.ts";
 * import assert from "node:assert/strict";
 * const name = await enforceSessionNameLimit("a".repeat(120), "a".repeat(120));
 * assert.equal(name.length, 100);
 * ```
 */
export async function enforceSessionNameLimit(
  sanitized: string,
  original: string,
): Promise<string> {
  if (sanitized.length <= SESSION_NAME_LIMIT) return sanitized;
  const digest = new Uint8Array(
    await crypto.subtle.digest(
      "SHA-256",
      new TextEncoder().encode(original),
    ),
  );
  const hex = Array.from(
    digest.slice(0, 4),
    (b) => b.toString(16).padStart(2, "0"),
  ).join("");
  const head = sanitized.slice(0, SESSION_NAME_LIMIT - 8 - 1).replace(
    /-+$/,
    "",
  );
  return `${head}-${hex}`;
}

/**
 * The top of the git work tree containing `cwd` (the nearest ancestor with a
 * `.git` entry), found by reading the file system only.
 *
 * @param cwd The directory.
 * @returns The work tree root, or `undefined` outside a repository.
 *
 * @example
 * ```ts no-assert
 * import { findGitRoot } from "./_session_name.ts";
 * const root = await findGitRoot(Deno.cwd());
 * ```
 */
export async function findGitRoot(cwd: string): Promise<string | undefined> {
  let dir = resolve(cwd);
  for (;;) {
    try {
      await Deno.lstat(join(dir, ".git"));
      return dir;
    } catch {
      // Not here (or not readable): go up.
    }
    const parent = dirname(dir);
    if (parent === dir) return undefined;
    dir = parent;
  }
}

/**
 * The session a CLI command run in `cwd` reads and writes: the
 * `sessions[cwd]` map entry verbatim; else by `sessionStrategy`
 * (`per-repo` → repository name, `per-directory`/`per-session` → directory
 * name, anything else → the workspace), with the `peerName-` prefix when
 * `sessionPeerPrefix` is on, the AI-peer prefix when `sessionAiPeerPrefix`
 * is on, and the 100-character limit.
 *
 * @param config The resolved configuration.
 * @param cwd The working directory.
 * @returns The session key, Honcho id and rule.
 *
 * @example
 * ```ts no-assert
 * import { cliSessionName } from "./_session_name.ts";
 * import { loadHonchoConfig } from "../config.ts";
 * const { sessionId } = await cliSessionName(await loadHonchoConfig(), Deno.cwd());
 * ```
 */
export async function cliSessionName(
  config: Pick<
    HonchoConfig,
    | "sessions"
    | "sessionStrategy"
    | "sessionPeerPrefix"
    | "sessionAiPeerPrefix"
    | "peerName"
    | "aiPeer"
    | "workspaceId"
  >,
  cwd: string,
): Promise<CliSessionName> {
  const mapped = config.sessions[cwd] ?? config.sessions[resolve(cwd)];
  let key: string;
  let reason: SessionNameReason;
  if (mapped) {
    key = mapped;
    reason = "mapped";
  } else {
    const prefix = (name: string): string =>
      config.sessionPeerPrefix && config.peerName
        ? `${config.peerName}-${name}`
        : name;
    const strategy = config.sessionStrategy;
    if (strategy === "per-repo") {
      const root = await findGitRoot(cwd);
      key = prefix(slugSessionPart(baseName(root ?? cwd)));
      reason = "per-repo";
    } else if (strategy === "per-directory" || strategy === "per-session") {
      key = prefix(slugSessionPart(baseName(cwd)));
      reason = strategy;
    } else {
      key = config.workspaceId;
      reason = "global";
    }
    key = await enforceSessionNameLimit(key, key);
  }
  if (config.sessionAiPeerPrefix && config.aiPeer) {
    const withAi = `${slugSessionPart(config.aiPeer)}-${key}`;
    key = await enforceSessionNameLimit(withAi, withAi);
  }
  if (!key) key = "hermes-default";
  return { key, sessionId: sanitizeHonchoId(key), reason };
}
