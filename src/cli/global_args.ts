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

export {
  type CommandIntent,
  commandIntent,
  type GlobalArgs,
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
 *
 * @example Basic usage
 * ```ts
 * import { resolveCliHome } from "./global_args.ts";
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
