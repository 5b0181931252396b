/**
 * The global part of a `hermes` command line, found before the tree is
 * built: the profile (which `config.yaml`) and the first command word
 * (whether the provider's tree loads).
 *
 * @module
 */

import { resolve } from "node:path";
import {
  getHermesHome,
  getProfileHome,
  missingProfile,
} from "../profile/hermes_home.ts";

export {
  type CommandIntent,
  commandIntent,
  type GlobalArgs,
  isVersionRequest,
  scanGlobalArgs,
} from "./arg_scan.ts";

/**
 * Resolves the profile home a command runs in: `--profile NAME` →
 * `<root>/profiles/NAME`; else `HERMES_HOME` as the CLI sees it; else the
 * framework's resolution (override, process environment, platform default).
 *
 * @param profile The `--profile` value, if any.
 * @param env Reads an environment variable (the CLI's view of it).
 * @returns The absolute home.
 * @throws {RangeError} When the profile name is not a plain name.
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

/** What {@linkcode checkProfile} found about a `--profile NAME`. */
export interface ProfileCheck {
  /** The error to print (the profile does not exist); the command stops. */
  error?: string;
  /** A note to print before the command runs (setup creates it). */
  note?: string;
}

/**
 * Checks that the profile `--profile NAME` names exists, so that a typo
 * never silently uses (or creates) `<root>/profiles/<typo>`. Setup is the
 * one command that may create a profile: it gets a note saying so. The
 * default profile (`default`, the root itself) always counts as existing.
 *
 * @param profile The `--profile` value.
 * @param home The profile home it resolves to.
 * @param setup Whether the command line is a setup command.
 * @returns The error or note, if any.
 */
export async function checkProfile(
  profile: string,
  home: string,
  setup: boolean,
): Promise<ProfileCheck> {
  const missing = await missingProfile(profile, home);
  if (missing === undefined) return {};
  const name = profile.trim();
  if (setup) {
    return {
      note:
        `note: profile '${name}' does not exist yet; setup creates it in ${home}`,
    };
  }
  return {
    error: `error: ${missing.problem}\nhint: ${missing.fix}\n`,
  };
}
