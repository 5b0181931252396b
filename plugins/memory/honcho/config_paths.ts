/**
 * Where Honcho's settings live (honcho-provider §1.1–§1.2): the one
 * `honcho.json` that is read (`$HERMES_HOME/honcho.json` → the default
 * profile's `~/.hermes/honcho.json` → `~/.honcho/config.json`) and the host
 * key whose `hosts.<key>` block applies.
 *
 * @module
 */

import { basename, dirname, join, resolve } from "node:path";
import {
  getDefaultHermesRoot,
  getHermesHome,
  getSecret,
  getUserHome,
} from "@hermes/memory/provider";

/** Options of {@linkcode resolveHonchoConfigPath}. */
export interface ResolveHonchoConfigPathOptions {
  /** The profile home. @default {getHermesHome()} */
  hermesHome?: string;
}

/**
 * The candidate config files in precedence order: `$HERMES_HOME/honcho.json`,
 * the default profile's `~/.hermes/honcho.json` (when different), and the
 * global `~/.honcho/config.json`.
 *
 * @param options The profile home.
 * @returns Absolute paths, most specific first.
 *
 * @example Using honchoConfigCandidates
 * ```ts no-assert
 * import { honchoConfigCandidates } from "./config_paths.ts";
 * const paths = honchoConfigCandidates({ hermesHome: "/tmp/profile" });
 * ```
 */
export function honchoConfigCandidates(
  options: ResolveHonchoConfigPathOptions = {},
): string[] {
  const home = resolve(options.hermesHome ?? getHermesHome());
  const local = join(home, "honcho.json");
  const shared = join(getDefaultHermesRoot(), "honcho.json");
  const out = [local];
  if (shared !== local) out.push(shared);
  out.push(globalHonchoConfigPath());
  return out;
}

/**
 * The global, cross-application config file: `~/.honcho/config.json`.
 *
 * @returns The absolute path.
 *
 * @example Using globalHonchoConfigPath
 * ```ts no-assert
 * import { globalHonchoConfigPath } from "./config_paths.ts";
 * const path = globalHonchoConfigPath();
 * ```
 */
export function globalHonchoConfigPath(): string {
  return resolve(
    join(getUserHome() ?? getDefaultHermesRoot(), ".honcho", "config.json"),
  );
}

/**
 * The one config file that is read: the first candidate of
 * {@linkcode honchoConfigCandidates} that exists, else the global path.
 *
 * @param options The profile home.
 * @returns The absolute path.
 *
 * @example Using resolveHonchoConfigPath
 * ```ts no-assert
 * import { resolveHonchoConfigPath } from "./config_paths.ts";
 * const path = await resolveHonchoConfigPath({ hermesHome: "/tmp/profile" });
 * ```
 */
export async function resolveHonchoConfigPath(
  options: ResolveHonchoConfigPathOptions = {},
): Promise<string> {
  const candidates = honchoConfigCandidates(options);
  for (const path of candidates) {
    try {
      const info = await Deno.stat(path);
      if (info.isFile) return path;
    } catch {
      // Missing or unreadable: try the next one.
    }
  }
  return candidates[candidates.length - 1]!;
}

/**
 * The profile a home belongs to: `default` for the default root, the
 * folder name for `<root>/profiles/<name>`, else `custom`.
 *
 * @param hermesHome The profile home.
 * @returns The profile name.
 *
 * @example Using profileFromHermesHome
 * ```ts no-assert
 * import { profileFromHermesHome } from "./config_paths.ts";
 * const profile = profileFromHermesHome("/home/me/.hermes/profiles/coder"); // "coder"
 * ```
 */
export function profileFromHermesHome(hermesHome: string): string {
  const home = resolve(hermesHome);
  const root = getDefaultHermesRoot();
  if (home === root) return "default";
  if (dirname(home) === join(root, "profiles")) return basename(home);
  return "custom";
}

/**
 * The host key a profile name maps to, ignoring `HERMES_HONCHO_HOST`:
 * `default`/`custom`/empty → `hermes` (or `defaultHost`), else
 * `hermes_<sanitised>` (each char outside `[A-Za-z0-9_-]` → `_`, outer `_`
 * stripped, empty → `profile`).
 *
 * @param profile The profile name.
 * @param options `defaultHost` renames the default host.
 * @returns The host key.
 *
 * @example Using hostKeyForProfile
 * ```ts
 * import { hostKeyForProfile } from "./config_paths.ts";
 * import assert from "node:assert/strict";
 * assert.equal(hostKeyForProfile("coder"), "hermes_coder");
 * assert.equal(hostKeyForProfile("default"), "hermes");
 * assert.equal(hostKeyForProfile("my.work"), "hermes_my_work");
 * ```
 */
export function hostKeyForProfile(
  profile: string | undefined,
  options: { defaultHost?: string } = {},
): string {
  const name = (profile ?? "").trim();
  if (name === "" || name === "default" || name === "custom") {
    return options.defaultHost?.trim() || "hermes";
  }
  const cleaned = name.replace(/[^A-Za-z0-9_-]/g, "_").replace(/^_+|_+$/g, "");
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
 * The host key of the active profile (§1.2): `HERMES_HONCHO_HOST` (trimmed,
 * non-empty) wins; else `hermes_<profile>` for a named profile; else root
 * `defaultHost` or `hermes`.
 *
 * @param options Profile, home and the parsed file.
 * @returns The host key.
 * @throws {UnscopedSecretError} (from `@hermes/memory`) When a multi-profile
 * gateway reads settings outside a profile's secret scope.
 *
 * @example Using resolveHostKey
 * ```ts no-assert
 * import { resolveHostKey } from "./config_paths.ts";
 * const host = resolveHostKey({ profile: "coder" }); // "hermes_coder" unless HERMES_HONCHO_HOST is set
 * ```
 */
export function resolveHostKey(options: ResolveHostKeyOptions = {}): string {
  const fromEnv = getSecret("HERMES_HONCHO_HOST")?.trim();
  if (fromEnv) return fromEnv;
  const profile = options.profile ??
    profileFromHermesHome(options.hermesHome ?? getHermesHome());
  const defaultHost = typeof options.rawConfig?.defaultHost === "string"
    ? options.rawConfig.defaultHost
    : undefined;
  return hostKeyForProfile(profile, { defaultHost });
}
