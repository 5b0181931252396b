/** The Honcho session a CLI command in a directory uses, and the `map` sanitiser. @module */

import { dirname, join, resolve } from "../../../../src/provider/_bundled.ts";
import {
  honchoSessionId,
  resolveSessionKey,
  type SessionNamingConfig,
} from "../session/naming.ts";
import { sanitizeId } from "../_util.ts";

/** The session key, its Honcho id (`key` sanitised) and the rule that picked it. */
interface CliSessionName {
  key: string;
  sessionId: string;
  reason: "mapped" | "per-repo" | "per-directory" | "per-session" | "global";
}

/** The name trimmed, each invalid character made `-`, outer `-` stripped. */
export function sanitizeMapName(name: string): string {
  return sanitizeId(name.trim()).replace(/^-+|-+$/g, "");
}

/** The nearest ancestor with a `.git` entry: the CLI may not run `git`. */
export async function findGitRoot(cwd: string): Promise<string | undefined> {
  let dir = resolve(cwd);
  for (;;) {
    // Not here (or not readable): go up.
    if (await Deno.lstat(join(dir, ".git")).then(() => true, () => false)) {
      return dir;
    }
    const parent = dirname(dir);
    if (parent === dir) return undefined;
    dir = parent;
  }
}

/** The session a CLI command in `cwd` uses, named as the provider names a conversation there. */
export async function cliSessionName(
  config: SessionNamingConfig,
  cwd: string,
): Promise<CliSessionName> {
  const dir = resolve(cwd);
  const key = await resolveSessionKey(config, {
    cwd: dir,
    gitTopLevel: findGitRoot,
  });
  const strategy = config.sessionStrategy;
  return {
    key,
    sessionId: honchoSessionId(key),
    reason: Object.hasOwn(config.sessions, dir)
      ? "mapped"
      : strategy === "per-repo" || strategy === "per-directory" ||
          strategy === "per-session"
      ? strategy
      : "global",
  };
}
