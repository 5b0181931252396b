/**
 * Whether a provider is configured, decided from its manifest alone (no
 * provider code runs), for `hermes memory status` and `list`.
 *
 * @module
 */

import { join, resolve } from "../_util/path.ts";
import { readProcessEnv } from "../core/env.ts";
import { getDefaultHermesRoot, getHermesHome } from "../profile/hermes_home.ts";
import { loadEnvFile } from "../profile/env_file.ts";
import { expandGrantPath } from "../sandbox/grant_path.ts";
import type { PluginManifest } from "./plugin_manifest.ts";

/** Options of {@linkcode manifestAvailability}. */
export interface ManifestAvailabilityOptions {
  /**
   * The profile home (for `.env` and `$HERMES_HOME` paths).
   *
   * @default {getHermesHome()}
   */
  hermesHome?: string;
  /** The profile's `.env`, already parsed (default: read from `hermesHome`). */
  dotenv?: Record<string, string>;
}

/** Reads the profile's `.env` for availability checks; a missing or unreadable file is empty. */
export async function readDotenvForAvailability(
  hermesHome: string,
): Promise<Record<string, string>> {
  try {
    return await loadEnvFile(join(hermesHome, ".env"));
  } catch {
    return {};
  }
}

/** Tells, from a provider's manifest alone, whether it is configured. */
export async function manifestAvailability(
  manifest: PluginManifest,
  options: ManifestAvailabilityOptions = {},
): Promise<boolean> {
  const hermesHome = resolve(options.hermesHome ?? getHermesHome());
  const dotenv = options.dotenv ?? await readDotenvForAvailability(hermesHome);
  const isSet = (name: string): boolean =>
    (readProcessEnv(name) ?? "") !== "" || (dotenv[name] ?? "") !== "";
  if (!manifest.requiresEnv.every(isSet)) return false;
  const { env, files } = manifest.availability;
  if (env.length === 0 && files.length === 0) return true;
  if (env.some(isSet)) return true;
  return await availabilityFile(manifest, hermesHome) !== undefined;
}

/** The first of the manifest's `availability.files` that exists, expanded (what makes it configured without a variable). */
export async function availabilityFile(
  manifest: PluginManifest,
  hermesHome: string,
): Promise<string | undefined> {
  const homes = { hermesHome, hermesRoot: getDefaultHermesRoot() };
  for (const file of manifest.availability.files) {
    const path = expandGrantPath(file, homes);
    try {
      await Deno.stat(path);
      return path;
    } catch {
      // Absent or unreadable: try the next one.
    }
  }
  return undefined;
}
