/**
 * Where Honcho's settings live (plugins/memory/honcho/SPEC.md §1): the one
 * `honcho.json` that is read (`$HERMES_HOME/honcho.json` → the default
 * profile's `~/.hermes/honcho.json` → `~/.honcho/config.json`) and the host
 * key whose `hosts.<key>` block applies.
 *
 * @module
 */

import { join, relative, resolve, sep } from "node:path";
import {
  getDefaultHermesRoot,
  getHermesHome,
  getHermesRoot,
  getSecret,
  getUserHome,
  pythonStr,
  pythonStrip,
} from "../../../src/provider/mod.ts";

/** Options of {@linkcode resolveHonchoConfigPath}. */
export interface ResolveHonchoConfigPathOptions {
  /** The profile home. @default {getHermesHome()} */
  hermesHome?: string;
}

/**
 * The candidate config files in precedence order: `$HERMES_HOME/honcho.json`,
 * the default profile's `~/.hermes/honcho.json` (when different), and the
 * global `~/.honcho/config.json`.
 */
export function honchoConfigCandidates(
  options: ResolveHonchoConfigPathOptions = {},
): string[] {
  const home = resolve(options.hermesHome ?? getHermesHome());
  const local = join(home, "honcho.json");
  const shared = join(getHermesRoot(), "honcho.json");
  const out = [local];
  if (shared !== local) out.push(shared);
  out.push(globalHonchoConfigPath());
  return out;
}

/** The global, cross-application config file: `~/.honcho/config.json`. */
export function globalHonchoConfigPath(): string {
  return resolve(
    join(getUserHome() ?? getDefaultHermesRoot(), ".honcho", "config.json"),
  );
}

/**
 * The one config file that is read: the first candidate of
 * {@linkcode honchoConfigCandidates} that exists (as anything: a directory
 * named `honcho.json` is still the file Hermes picks, and then cannot be
 * read), else the global path.
 */
export async function resolveHonchoConfigPath(
  options: ResolveHonchoConfigPathOptions = {},
): Promise<string> {
  const candidates = honchoConfigCandidates(options);
  for (const path of candidates.slice(0, -1)) {
    try {
      await Deno.stat(path);
      return path;
    } catch {
      // Missing (or not even stat-able): try the next one.
    }
  }
  return candidates[candidates.length - 1]!;
}

const PROFILE_ID = /^[a-z0-9][a-z0-9_-]{0,63}$/;

/**
 * The profile a home belongs to, as Hermes names it
 * (`get_active_profile_name`): `default` for the Hermes root, the folder
 * name for `<root>/profiles/<name>` when the name is a valid profile id
 * (`^[a-z0-9][a-z0-9_-]{0,63}$`), else `custom`.
 */
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

/**
 * The host key a profile name maps to, ignoring `HERMES_HONCHO_HOST`:
 * `default`/`custom`/empty → `hermes` (or `defaultHost`), else
 * `hermes_<sanitised>` (each character that is neither a letter or digit,
 * by Python's Unicode `isalnum`, nor `_`/`-` becomes `_`, outer `_`
 * stripped, empty → `profile`), as Hermes' `profile_host_key`.
 */
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

/** Options of {@linkcode resolveHostKey}. */
export interface ResolveHostKeyOptions {
  /** The profile name. @default {profileFromHermesHome(hermesHome)} */
  profile?: string;
  /** The profile home. @default {getHermesHome()} */
  hermesHome?: string;
  /** The parsed config file; its root `defaultHost` renames the default host. */
  rawConfig?: Record<string, unknown>;
}

/**
 * The host key of the active profile (plugins/memory/honcho/SPEC.md §1): `HERMES_HONCHO_HOST` (trimmed,
 * non-empty) wins; else `hermes_<profile>` for a named profile; else root
 * `defaultHost` or `hermes`.
 *
 * @throws {UnscopedSecretError} (from `@hermes/memory`) When a multi-profile
 * gateway reads settings outside a profile's secret scope.
 */
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
