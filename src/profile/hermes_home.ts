/**
 * Profile isolation: where the active profile's home is, resolved on every
 * call and never guessed ({@linkcode HermesHomeUnknownError}).
 *
 * @module
 */

import { basename, dirname, join, resolve, sep } from "../_util/path.ts";
import { isProcessEnvReadable, readProcessEnv } from "../core/env.ts";
import { log } from "../core/log.ts";
import type { AsyncLocalStorage } from "node:async_hooks";

// The stores of the per-task scopes, created when context_scope.ts loads.
// Readers (getHermesHome, resolveAgentCwd, getSecret) use only this, so a
// process that opens no scope (the `hermes` CLI in its own home, a sandbox
// whose calls all come from its own profile) never evaluates
// `node:async_hooks`, about 15 Node-compatibility modules and 6–10 ms of
// every start. Unset: no scope can have been opened.
export const scopeStores: {
  home?: AsyncLocalStorage<string>;
  cwd?: AsyncLocalStorage<string>;
  secrets?: AsyncLocalStorage<Readonly<Record<string, string>>>;
  /** Captures the caller's scopes (`AsyncLocalStorage.snapshot`). */
  snapshot?: () => <R>(fn: () => R) => R;
  /** Runs `fn` outside every scope. */
  unscoped?: <R>(fn: () => R) => R;
  /**
   * The home of a process that serves one profile (a provider's sandbox),
   * for work outside any home scope: its environment does not name it.
   */
  processHome?: string;
} = {};

let warnedActiveProfile = false;
// Roots whose active_profile was already looked at: the check reads a file,
// and getHermesHome() runs on hot paths.
const checkedActiveProfileRoots = new Set<string>();

/** The context-local home override, if one is installed. */
export function getHermesHomeOverride(): string | undefined {
  return scopeStores.home?.getStore();
}

/** The variables the Hermes home is found from here: what a memory process must be allowed to read. */
export function homeEnvVariables(): string[] {
  return Deno.build.os === "windows"
    ? ["USERPROFILE", "LOCALAPPDATA", "HERMES_HOME"]
    : ["HOME", "HERMES_HOME"];
}

/**
 * Thrown when the Hermes home cannot be told: a variable it is found from
 * may not be read (the message names the `--allow-env` flag to add), or
 * neither `HERMES_HOME` nor the user's home is set. The home is never guessed.
 *
 * @category Errors callers catch
 */
export class HermesHomeUnknownError extends Error {
  /** The variable that could not be read; `undefined` when none was set. */
  readonly variable: string | undefined;
  /** The Deno flag that lets the process read what it needs. */
  readonly flag: string;

  /**
   * Builds the error.
   *
   * @param variable The variable that could not be read; `undefined` when
   * the variables are readable but unset.
   */
  constructor(variable: string | undefined) {
    const names = homeEnvVariables();
    const flag = `--allow-env=${names.join(",")}`;
    super(
      variable !== undefined
        ? `Cannot tell where the Hermes home is: this process may not read the environment variable ${variable}: run deno with ${flag} (the home is never guessed)`
        : `Cannot tell where the Hermes home is: neither HERMES_HOME nor ${
          names[0]
        } is set: set HERMES_HOME to the profile's directory`,
    );
    this.name = "HermesHomeUnknownError";
    this.variable = variable;
    this.flag = flag;
  }
}

/** Reads a variable the home depends on; a denied read throws. */
function readHomeVariable(name: string): string | undefined {
  if (!isProcessEnvReadable(name)) throw new HermesHomeUnknownError(name);
  return readProcessEnv(name)?.trim() || undefined;
}

/**
 * The user's home directory (`HOME`, or `USERPROFILE` on Windows), or
 * `undefined` when unset.
 *
 * @throws {HermesHomeUnknownError} When the process may not read it.
 *
 * @category Profiles and secrets
 */
export function getUserHome(): string | undefined {
  const [first, second] = Deno.build.os === "windows"
    ? ["USERPROFILE", "HOME"]
    : ["HOME", "USERPROFILE"];
  return readHomeVariable(first) || readProcessEnv(second)?.trim() ||
    undefined;
}

/**
 * The platform default root of Hermes data, ignoring `HERMES_HOME`:
 * `~/.hermes` on POSIX, `%LOCALAPPDATA%\hermes` on Windows (plus
 * `HERMES_DATA_DIR_SUFFIX`); without a user home, the root `HERMES_HOME`
 * names (its `profiles/` parent, else itself).
 *
 * @throws {HermesHomeUnknownError} When a variable it needs cannot be read,
 * or neither the user's home nor `HERMES_HOME` is set.
 *
 * @category Profiles and secrets
 */
export function getDefaultHermesRoot(): string {
  const suffix = readProcessEnv("HERMES_DATA_DIR_SUFFIX") ?? "";
  if (Deno.build.os === "windows") {
    const user = () => getUserHome();
    const local = readHomeVariable("LOCALAPPDATA") ??
      (user() && join(user()!, "AppData", "Local"));
    if (local) return resolve(join(local, `hermes${suffix}`));
  } else {
    const user = getUserHome();
    if (user) return resolve(join(user, `.hermes${suffix}`));
  }
  // No user home (a service under systemd or cron): the root HERMES_HOME names.
  const named = readHomeVariable("HERMES_HOME");
  if (!named) throw new HermesHomeUnknownError(undefined);
  return rootOf(resolve(named));
}

function rootOf(home: string): string {
  return basename(dirname(home)) === "profiles" ? dirname(dirname(home)) : home;
}

/**
 * The root of the Hermes data the process serves, as Hermes'
 * `get_default_hermes_root` resolves it; named profiles live in
 * `<root>/profiles/`. Context-local overrides are ignored.
 *
 * @throws {HermesHomeUnknownError} When the home cannot be told.
 *
 * @category Profiles and secrets
 */
export function getHermesRoot(): string {
  const fromEnv = readHomeVariable("HERMES_HOME");
  const native = getDefaultHermesRoot();
  if (!fromEnv) return native;
  const home = resolve(fromEnv);
  if (home === native || home.startsWith(native + sep)) return native;
  return rootOf(home);
}

/**
 * The process-level home: `HERMES_HOME` or the platform default, ignoring
 * any context-local override (for process-wide assets).
 *
 * @throws {HermesHomeUnknownError} When the home cannot be told.
 */
export function getProcessHermesHome(): string {
  const fromEnv = readHomeVariable("HERMES_HOME");
  if (fromEnv) return resolve(fromEnv);
  const root = getDefaultHermesRoot();
  warnIfActiveProfileIgnored(root);
  return root;
}

/**
 * The active profile's home: the context-local override, else the home of
 * a sandbox serving one profile, else `HERMES_HOME`, else the platform
 * default. Evaluated on every call.
 *
 * @throws {HermesHomeUnknownError} When the home cannot be told.
 *
 * @category Profiles and secrets
 */
export function getHermesHome(): string {
  return scopeStores.home?.getStore() ?? scopeStores.processHome ??
    getProcessHermesHome();
}

/**
 * The home of a named profile under the default root
 * (`<root>/profiles/<name>`; `default` is the root itself).
 *
 * @throws {RangeError} When the name is not a plain profile name.
 *
 * @category Profiles and secrets
 */
export function getProfileHome(profile: string): string {
  const name = profile.trim();
  if (name === "" || name === "default") return getDefaultHermesRoot();
  if (!isProfileName(name)) {
    throw new RangeError(
      `Cannot use profile name '${profile}': use letters, digits, '.', '_' or '-'`,
    );
  }
  return join(getDefaultHermesRoot(), "profiles", name);
}

function isProfileName(name: string): boolean {
  return /^[A-Za-z0-9][A-Za-z0-9_.-]*$/.test(name) && !name.includes("..");
}

/**
 * The profiles: `default` (the root) first, then every directory under
 * `<root>/profiles/` with a valid profile name, sorted.
 */
export async function listProfiles(
  defaultRoot: string = getDefaultHermesRoot(),
): Promise<{ name: string; home: string }[]> {
  const names: string[] = [];
  try {
    for await (const entry of Deno.readDir(join(defaultRoot, "profiles"))) {
      const { name } = entry;
      if (entry.isDirectory && isProfileName(name) && name !== "default") {
        names.push(name);
      }
    }
  } catch {
    // No profiles directory (or none this run may read).
  }
  return [
    { name: "default", home: defaultRoot },
    ...names.sort().map((name) => ({
      name,
      home: join(defaultRoot, "profiles", name),
    })),
  ];
}

/** Why a `--profile NAME` (or `openMemory({ profile })`) cannot be used. */
export interface MissingProfile {
  /** What is wrong: the profile's directory does not exist. */
  problem: string;
  /** How to fix it. */
  fix: string;
}

/**
 * Tells whether a named profile exists, so that a typo never silently uses
 * (or creates) `<root>/profiles/<typo>`. The default profile (the root
 * itself) always counts as existing.
 */
export async function missingProfile(
  profile: string,
  home: string,
): Promise<MissingProfile | undefined> {
  if (resolve(home) === resolve(getDefaultHermesRoot())) return undefined;
  try {
    if ((await Deno.stat(home)).isDirectory) return undefined;
  } catch (error) {
    if (!(error instanceof Deno.errors.NotFound)) return undefined;
  }
  const name = profile.trim();
  return {
    problem: `profile '${name}' does not exist: there is no directory ${home}`,
    fix:
      `create it with 'hermes --profile ${name} memory setup', or check the name`,
  };
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
