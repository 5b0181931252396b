/**
 * Which `honcho.json` is read and which host block applies (plugins/memory/honcho/SPEC.md §1).
 * @module
 */

import {
  getDefaultHermesRoot,
  getHermesHome,
  getHermesRoot,
  getSecret,
  getUserHome,
} from "../../../../src/provider/mod.ts";
import {
  join,
  pythonStr,
  pythonStrip,
  relative,
  resolve,
  sep,
} from "../../../../src/provider/_bundled.ts";

export interface ResolveHonchoConfigPathOptions {
  /** The profile home. @default {getHermesHome()} */
  hermesHome?: string;
}

/** The global, cross-application config file: `~/.honcho/config.json`. */
export function globalHonchoConfigPath(): string {
  return resolve(
    join(getUserHome() ?? getDefaultHermesRoot(), ".honcho", "config.json"),
  );
}

/**
 * `$HERMES_HOME/honcho.json`, else the default profile's, else the global
 * `~/.honcho/config.json`: the first that exists as anything (as Hermes).
 */
export async function resolveHonchoConfigPath(
  options: ResolveHonchoConfigPathOptions = {},
): Promise<string> {
  const local = join(
    resolve(options.hermesHome ?? getHermesHome()),
    "honcho.json",
  );
  for (const path of [local, join(getHermesRoot(), "honcho.json")]) {
    try {
      await Deno.stat(path);
      return path;
    } catch {
      // Missing (or not even stat-able): try the next one.
    }
  }
  return globalHonchoConfigPath();
}

const PROFILE_ID = /^[a-z0-9][a-z0-9_-]{0,63}$/;

/** Hermes' `get_active_profile_name`: `default`, a valid `<root>/profiles/<name>`, else `custom`. */
export function profileFromHermesHome(hermesHome: string): string {
  const home = resolve(hermesHome);
  const root = getHermesRoot();
  if (home === root) return "default";
  const rest = relative(join(root, "profiles"), home);
  if (rest && !rest.startsWith("..") && !rest.includes(sep)) {
    return PROFILE_ID.test(rest) ? rest : "custom";
  }
  return "custom";
}

/** Hermes' `profile_host_key`: `hermes` (or `defaultHost`) for the default profile, else `hermes_<name>`. */
export function hostKeyForProfile(
  profile: string | undefined,
  options: { defaultHost?: string } = {},
): string {
  const name = profile ?? "";
  if (name === "" || name === "default" || name === "custom") {
    return options.defaultHost?.trim() || "hermes";
  }
  const cleaned = name.replace(/[^\p{L}\p{N}_-]/gu, "_").replace(
    /^_+|_+$/g,
    "",
  );
  return `hermes_${cleaned || "profile"}`;
}

export interface ResolveHostKeyOptions {
  /** @default {profileFromHermesHome(hermesHome)} */
  profile?: string;
  /** @default {getHermesHome()} */
  hermesHome?: string;
  /** Its root `defaultHost` renames the default host. */
  rawConfig?: Record<string, unknown>;
}

/** The active host key: `HERMES_HONCHO_HOST`, else by profile (plugins/memory/honcho/SPEC.md §1). */
export function resolveHostKey(options: ResolveHostKeyOptions = {}): string {
  const fromEnv = getSecret("HERMES_HONCHO_HOST")?.trim();
  if (fromEnv) return fromEnv;
  const profile = options.profile ??
    profileFromHermesHome(options.hermesHome ?? getHermesHome());
  // Hermes: str(raw.get("defaultHost", "")).strip(), only for the default
  // profile's host (a `null` is the text "None", as there).
  const raw = options.rawConfig;
  const defaultHost = raw && Object.hasOwn(raw, "defaultHost")
    ? pythonStrip(pythonStr(raw.defaultHost))
    : undefined;
  return hostKeyForProfile(profile, { defaultHost });
}
