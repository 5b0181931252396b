/**
 * The global part of a `hermes` command line, found before commander runs:
 * the profile has to be known to read the right `config.yaml`, and the
 * first command word decides whether the active provider's command tree is
 * loaded.
 *
 * @module
 */

import { resolve } from "node:path";
import { getHermesHome, getProfileHome } from "../profile/hermes_home.ts";

/** What {@linkcode scanGlobalArgs} found. */
export interface GlobalArgs {
  /** The value of the last `--profile NAME` / `--profile=NAME`. */
  profile?: string;
  /** The first word that is not an option (the top-level command). */
  command?: string;
  /** Whether `-h`/`--help` appears before the first command word. */
  help: boolean;
}

/**
 * Scans a `hermes` command line for the global options, stopping at `--`.
 *
 * @param args The arguments after the program name.
 * @returns The profile, the top-level command word and whether help was asked.
 *
 * @example Basic usage
 * ```ts
 * import { scanGlobalArgs } from "@hermes/memory/cli";
 * import assert from "node:assert/strict";
 * const found = scanGlobalArgs(["--profile", "coder", "memory", "status"]);
 * assert.equal(found.profile, "coder");
 * assert.equal(found.command, "memory");
 * ```
 */
export function scanGlobalArgs(args: readonly string[]): GlobalArgs {
  const found: GlobalArgs = { help: false };
  for (let i = 0; i < args.length; i++) {
    const arg = args[i] as string;
    if (arg === "--") break;
    if (arg === "--profile") {
      const value = args[i + 1];
      if (value !== undefined) found.profile = value;
      i++;
    } else if (arg.startsWith("--profile=")) {
      found.profile = arg.slice("--profile=".length);
    } else if (arg === "-h" || arg === "--help") {
      if (found.command === undefined) found.help = true;
    } else if (!arg.startsWith("-") && found.command === undefined) {
      found.command = arg;
    }
  }
  return found;
}

/**
 * Resolves the profile home a command runs in: `--profile NAME` →
 * `<root>/profiles/NAME`; else `HERMES_HOME` as the CLI sees it; else the
 * framework's resolution (override, process environment, platform default).
 *
 * @param profile The `--profile` value, if any.
 * @param env Reads an environment variable (the CLI's view of it).
 * @returns The absolute home.
 * @throws {RangeError} When the profile name is not a plain name.
 *
 * @example Basic usage
 * ```ts
 * import { resolveCliHome } from "@hermes/memory/cli";
 * import assert from "node:assert/strict";
 * assert.equal(resolveCliHome(undefined, () => "/srv/h"), "/srv/h");
 * ```
 */
export function resolveCliHome(
  profile: string | undefined,
  env: (name: string) => string | undefined,
): string {
  if (profile !== undefined) return getProfileHome(profile);
  const fromEnv = env("HERMES_HOME")?.trim();
  if (fromEnv) return resolve(fromEnv);
  return getHermesHome();
}
