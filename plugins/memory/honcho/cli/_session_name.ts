/**
 * The Honcho session a CLI command in a directory uses — the provider's
 * naming ({@linkcode resolveSessionKey} of `../session_naming.ts`) without a
 * live Hermes session (no gateway key, no session id, no title), with the
 * repository found on the file system (the CLI may not run `git`) — and the
 * sanitiser of `hermes honcho map`.
 *
 * Internal to the Honcho CLI.
 *
 * @module
 */

import { dirname, join, resolve } from "node:path";
import {
  honchoSessionId,
  resolveSessionKey,
  sanitizeId,
  type SessionNamingConfig,
} from "../session_naming.ts";

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
 * The `hermes honcho map` sanitiser: the name trimmed, each invalid
 * character made `-` ({@linkcode sanitizeId}), then leading and trailing
 * `-` stripped.
 *
 * @param name The name typed.
 * @returns The sanitised name (may be empty).
 *
 * @example
 * ```ts
 * import { sanitizeMapName } from "./_session_name.ts";
 * import assert from "node:assert/strict";
 * assert.equal(sanitizeMapName("my project!"), "my-project");
 * assert.equal(sanitizeMapName("a  b"), "a--b");
 * ```
 */
export function sanitizeMapName(name: string): string {
  return sanitizeId(name.trim()).replace(/^-+|-+$/g, "");
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
 * The session a CLI command run in `cwd` reads and writes, named as the
 * provider names it for a conversation in that directory
 * ({@linkcode resolveSessionKey}): the `sessions[cwd]` map entry verbatim;
 * else by `sessionStrategy` (`per-repo` → repository folder name,
 * `per-directory`/`per-session` → directory name, anything else → the
 * workspace) with the `peerName-` prefix when `sessionPeerPrefix` is on;
 * then the AI-peer prefix when `sessionAiPeerPrefix` is on and the
 * 100-character limit.
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
  config: SessionNamingConfig,
  cwd: string,
): Promise<CliSessionName> {
  const dir = resolve(cwd);
  const key = await resolveSessionKey(config, {
    cwd: dir,
    gitTopLevel: findGitRoot,
  });
  return {
    key,
    sessionId: honchoSessionId(key),
    reason: reasonFor(config, dir),
  };
}

/** Which rule of `resolveSessionName` applies without a live session. */
function reasonFor(
  config: Pick<SessionNamingConfig, "sessions" | "sessionStrategy">,
  cwd: string,
): SessionNameReason {
  if (Object.hasOwn(config.sessions, cwd)) return "mapped";
  const strategy = config.sessionStrategy;
  return strategy === "per-repo" || strategy === "per-directory" ||
      strategy === "per-session"
    ? strategy
    : "global";
}
