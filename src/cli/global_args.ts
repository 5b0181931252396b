/** The profile home a `hermes` command line runs in, and checking it exists. */

import { resolve } from "../_util/path.ts";
import {
  getHermesHome,
  getProfileHome,
  missingProfile,
} from "../profile/hermes_home.ts";

/**
 * The profile home: `--profile NAME` → `<root>/profiles/NAME`, else the CLI's
 * `HERMES_HOME`, else the framework's resolution. @throws {RangeError} On a bad name.
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

/** Checks `--profile NAME` exists, so a typo never uses or creates a profile (setup gets a note). */
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
  return { error: `error: ${missing.problem}\nhint: ${missing.fix}\n` };
}
