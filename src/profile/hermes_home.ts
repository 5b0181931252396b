/**
 * Profile isolation: where the active profile's home (`HERMES_HOME`) is.
 *
 * Resolution, on every call (never cached): the context-local override set by
 * {@linkcode withHermesHome} → the `HERMES_HOME` environment variable →
 * the platform default (`~/.hermes` plus `HERMES_DATA_DIR_SUFFIX` on POSIX,
 * `%LOCALAPPDATA%\hermes` on Windows). The override lives on an
 * `AsyncLocalStorage`, so one process can serve several profiles at once and
 * the process environment is never touched.
 *
 * @module
 */

import { AsyncLocalStorage } from "node:async_hooks";
import { basename, dirname, join, resolve, sep } from "node:path";
import { readProcessEnv } from "../core/env.ts";
import { log } from "../core/log.ts";

const homeOverride = new AsyncLocalStorage<string>();
let warnedActiveProfile = false;
// Roots whose active_profile was already looked at: the check reads a file,
// and getHermesHome() runs on hot paths.
const checkedActiveProfileRoots = new Set<string>();

/**
 * Runs `fn` with `home` as the profile home for everything it does,
 * including timers, queued tasks and fetch callbacks it starts.
 *
 * @typeParam T What `fn` returns.
 * @param home The profile home (made absolute).
 * @param fn The work to run.
 * @returns What `fn` returns.
 *
 * @example Two profiles in one process
 * ```ts
 * import { getHermesHome, withHermesHome } from "@hermes/memory";
 * import assert from "node:assert/strict";
 * withHermesHome("/srv/hermes/alice", () => {
 *   assert.equal(getHermesHome(), "/srv/hermes/alice");
 * });
 * ```
 */
export function withHermesHome<T>(home: string, fn: () => T): T {
  return homeOverride.run(resolve(home), fn);
}

/**
 * The context-local home override, if one is installed.
 *
 * @returns The override, or `undefined`.
 *
 * @example No override outside withHermesHome()
 * ```ts
 * import { getHermesHomeOverride } from "./hermes_home.ts";
 * import assert from "node:assert/strict";
 * assert.equal(getHermesHomeOverride(), undefined);
 * ```
 */
export function getHermesHomeOverride(): string | undefined {
  return homeOverride.getStore();
}

/**
 * The user's home directory from the environment (`HOME`, or `USERPROFILE`
 * on Windows).
 *
 * @returns The directory, or `undefined` when unknown.
 *
 * @example The user's home directory
 * ```ts no-assert
 * import { getUserHome } from "@hermes/memory";
 * const home = getUserHome();
 * ```
 */
export function getUserHome(): string | undefined {
  const home = readProcessEnv("HOME")?.trim() ||
    readProcessEnv("USERPROFILE")?.trim();
  return home || undefined;
}

/**
 * The platform default root of Hermes data, ignoring overrides and
 * `HERMES_HOME`: `~/.hermes` (plus `HERMES_DATA_DIR_SUFFIX`) on POSIX,
 * `%LOCALAPPDATA%\hermes` (plus the suffix) on Windows.
 *
 * @returns The absolute path.
 *
 * @example The default Hermes root
 * ```ts no-assert
 * import { getDefaultHermesRoot } from "@hermes/memory";
 * const root = getDefaultHermesRoot();
 * ```
 */
export function getDefaultHermesRoot(): string {
  const suffix = readProcessEnv("HERMES_DATA_DIR_SUFFIX") ?? "";
  if (Deno.build.os === "windows") {
    const local = readProcessEnv("LOCALAPPDATA")?.trim() ||
      join(getUserHome() ?? ".", "AppData", "Local");
    return resolve(join(local, `hermes${suffix}`));
  }
  return resolve(join(getUserHome() ?? ".", `.hermes${suffix}`));
}

/**
 * The root of the Hermes data the process serves, as Hermes resolves it
 * (`get_default_hermes_root`): the platform default (`~/.hermes`) when
 * `HERMES_HOME` is unset or lies under it; for a `HERMES_HOME` elsewhere
 * (Docker, custom deployments), `<root>` when it is `<root>/profiles/<name>`
 * and `HERMES_HOME` itself otherwise. Named profiles live in
 * `<root>/profiles/`. Context-local overrides are ignored.
 *
 * @returns The absolute path.
 *
 * @example A Docker deployment's root
 * ```ts no-assert
 * import { getHermesRoot } from "@hermes/memory";
 * // HERMES_HOME=/opt/data/profiles/work → /opt/data
 * const root = getHermesRoot();
 * ```
 */
export function getHermesRoot(): string {
  const native = getDefaultHermesRoot();
  const fromEnv = readProcessEnv("HERMES_HOME")?.trim();
  if (!fromEnv) return native;
  const home = resolve(fromEnv);
  if (home === native || home.startsWith(native + sep)) return native;
  return basename(dirname(home)) === "profiles" ? dirname(dirname(home)) : home;
}

/**
 * The process-level home: `HERMES_HOME` or the platform default, ignoring
 * any context-local override (for process-wide assets).
 *
 * @returns The absolute path.
 *
 * @example The process-level home
 * ```ts no-assert
 * import { getProcessHermesHome } from "./hermes_home.ts";
 * const home = getProcessHermesHome();
 * ```
 */
export function getProcessHermesHome(): string {
  const fromEnv = readProcessEnv("HERMES_HOME")?.trim();
  if (fromEnv) return resolve(fromEnv);
  const root = getDefaultHermesRoot();
  warnIfActiveProfileIgnored(root);
  return root;
}

/**
 * The active profile's home: the context-local override, else
 * `HERMES_HOME`, else the platform default. Evaluated on every call.
 *
 * @returns The absolute path.
 *
 * @example Profile-scoped paths
 * ```ts no-assert
 * import { getHermesHome } from "@hermes/memory";
 * const memories = `${getHermesHome()}/memories`;
 * ```
 */
export function getHermesHome(): string {
  return homeOverride.getStore() ?? getProcessHermesHome();
}

/**
 * The home of a named profile under the default root
 * (`<root>/profiles/<name>`; `default` is the root itself).
 *
 * @param profile The profile's name.
 * @returns The absolute path.
 * @throws {RangeError} When the name is not a plain profile name.
 *
 * @example A named profile's home
 * ```ts no-assert
 * import { getProfileHome } from "@hermes/memory";
 * const coder = getProfileHome("coder");
 * ```
 */
export function getProfileHome(profile: string): string {
  const name = profile.trim();
  if (name === "" || name === "default") return getDefaultHermesRoot();
  if (!/^[A-Za-z0-9][A-Za-z0-9_.-]*$/.test(name) || name.includes("..")) {
    throw new RangeError(
      `Cannot use profile name '${profile}': use letters, digits, '.', '_' or '-'`,
    );
  }
  return join(getDefaultHermesRoot(), "profiles", name);
}

function warnIfActiveProfileIgnored(root: string): void {
  if (warnedActiveProfile || checkedActiveProfileRoots.has(root)) return;
  checkedActiveProfileRoots.add(root);
  let active = "";
  try {
    active = Deno.readTextFileSync(join(root, "active_profile")).trim();
  } catch {
    return;
  }
  if (active && active !== "default") {
    warnedActiveProfile = true;
    log(
      "warn",
      `HERMES_HOME is not set, so the default profile is used although ${
        join(root, "active_profile")
      } names '${active}': set HERMES_HOME=${
        join(root, "profiles", active)
      } to use that profile`,
    );
  }
}
