/**
 * The profile's `config.yaml`: loading as PyYAML's `safe_load` reads it
 * (YAML 1.1; what PyYAML refuses is a `ConfigError` naming file, line
 * and column, and such a file is never overwritten), and saving that merges
 * onto what is on disk, keeps the user's comments, and spells every value so
 * PyYAML reads it back the same.
 *
 * @module
 */

import { join } from "../_util/path.ts";
import { readProcessEnv } from "../core/env.ts";
import { getHermesHome } from "../profile/hermes_home.ts";
import type { HermesConfig } from "../core/memory_provider.ts";
import { isPlainObject } from "../_util/is_record.ts";
import { sha256Hex } from "../_util/sha256.ts";
import { readConfigText } from "./config_file.ts";
import { errorText } from "../_util/error_text.ts";

// Only a text the launcher did not hand over, or a save, evaluates the YAML
// side (the `yaml` package's schema, locks, atomic writes).
function configYaml(): Promise<typeof import("./config_yaml.ts")> {
  return import("./config_yaml.ts");
}

/**
 * Options of {@linkcode loadConfig}.
 *
 * @category Config
 */
export interface LoadConfigOptions {
  /**
   * The profile home whose `config.yaml` is read.
   *
   * @default {getHermesHome()}
   */
  hermesHome?: string;
}

/**
 * Options of {@linkcode saveConfig}.
 *
 * @category Config
 */
export interface SaveConfigOptions {
  /**
   * Merge `config` onto the file on disk, keeping keys and sections it does
   * not mention. When `false`, keys absent from `config` are removed
   * (comments of the keys that remain are still kept).
   *
   * @default {true}
   */
  mergeExisting?: boolean;
  /**
   * The profile home whose `config.yaml` is written.
   *
   * @default {getHermesHome()}
   */
  hermesHome?: string;
}

/**
 * Where a profile's `config.yaml` is.
 *
 * @param hermesHome The profile home; defaults to the active one.
 * @returns `<hermesHome>/config.yaml`.
 *
 * @example The config file of a profile
 * ```ts
 * import { getConfigPath } from "@hermes/memory";
 * import assert from "node:assert/strict";
 * assert.equal(getConfigPath("/srv/hermes"), "/srv/hermes/config.yaml");
 * ```
 *
 * @category Config
 */
export function getConfigPath(hermesHome?: string): string {
  return join(hermesHome ?? getHermesHome(), "config.yaml");
}

/**
 * Loads the profile's `config.yaml`.
 *
 * @param options Which profile home to read.
 * @returns The config as plain data; `{}` when the file is missing or holds
 * no document.
 * @throws {ConfigError} When the file does not parse (naming the file, line
 * and column) or its top level is not a mapping.
 *
 * @example Reading the active memory provider
 * ```ts
 * import { getConfigValue, loadConfig } from "@hermes/memory";
 * import assert from "node:assert/strict";
 * const home = await Deno.makeTempDir();
 * await Deno.writeTextFile(`${home}/config.yaml`, "memory:\n  provider: honcho\n");
 * const config = await loadConfig({ hermesHome: home });
 * assert.equal(getConfigValue(config, "memory.provider"), "honcho");
 * await Deno.remove(home, { recursive: true });
 * ```
 *
 * @category Config
 */
export async function loadConfig(
  options: LoadConfigOptions = {},
): Promise<HermesConfig> {
  const path = getConfigPath(options.hermesHome);
  const text = await readConfigText(path);
  if (text === undefined) return {};
  return await handedConfig(text) ??
    await (await configYaml()).parseConfigText(path, text);
}

/**
 * {@linkcode loadConfig} for a caller that goes on without the settings:
 * `{}` when `config.yaml` cannot be read or parsed, after `onError` got why.
 */
export async function loadConfigOrEmpty(
  hermesHome: string | undefined,
  onError: (why: string) => void,
): Promise<HermesConfig> {
  try {
    return await loadConfig({ hermesHome });
  } catch (error) {
    onError(errorText(error));
    return {};
  }
}

/**
 * Carries the launcher's parse of `config.yaml` to the CLI with the SHA-256
 * of the text it parsed, so a CLI that reads the same text loads no `yaml`.
 */
export const PARSED_CONFIG_ENV = "HERMES_PARSED_CONFIG";

async function handedConfig(text: string): Promise<HermesConfig | undefined> {
  const handed = readProcessEnv(PARSED_CONFIG_ENV);
  if (!handed) return undefined;
  try {
    const { sha256, config } = JSON.parse(handed);
    if (sha256 === await sha256Hex(text) && isPlainObject(config)) {
      return config as HermesConfig;
    }
  } catch {
    // Not ours: parse the YAML.
  }
  return undefined;
}

/**
 * Saves `config` to the profile's `config.yaml`: by default merged onto
 * the file on disk, so sections the caller never loaded survive, and with
 * the comments of unchanged keys kept. Mappings merge key by key; any other
 * value (scalars, lists) replaces what was there; `undefined` values are
 * skipped. The file is replaced atomically under a cross-process lock,
 * keeping its mode; the home directory is created if missing.
 *
 * @param config The config (or the part of it to write), or a function
 * that computes it from the file as it is once the lock is held (for a
 * value that depends on what is there, such as a list that gains one
 * entry, so a concurrent writer's change is never undone).
 * @param options Merge or replace, and which profile home.
 * @throws {ConfigError} When the file on disk does not parse or is not a
 * mapping; it is then left untouched.
 *
 * @example Switching the memory provider
 * ```ts
 * import { loadConfig, saveConfig } from "@hermes/memory";
 * import assert from "node:assert/strict";
 * const home = await Deno.makeTempDir();
 * await Deno.writeTextFile(`${home}/config.yaml`, "# mine\nmodel: gpt\n");
 * await saveConfig({ memory: { provider: "honcho" } }, { hermesHome: home });
 * assert.deepEqual(await loadConfig({ hermesHome: home }), {
 *   model: "gpt",
 *   memory: { provider: "honcho" },
 * });
 * await Deno.remove(home, { recursive: true });
 * ```
 *
 * @category Config
 */
export async function saveConfig(
  config: HermesConfig | ((current: HermesConfig) => HermesConfig),
  options: SaveConfigOptions = {},
): Promise<void> {
  const path = getConfigPath(options.hermesHome);
  const merge = options.mergeExisting ?? true;
  await (await configYaml()).saveConfigFile(path, config, merge);
}

/**
 * Reads a value by dotted key (`"memory.provider"`).
 *
 * @param config The config.
 * @param dottedKey Keys joined with `.`.
 * @returns The value, or `undefined` when any part of the path is missing
 * or not a mapping.
 *
 * @example Reading a dotted key
 * ```ts
 * import { getConfigValue } from "@hermes/memory";
 * import assert from "node:assert/strict";
 * const config = { memory: { provider: "honcho" } };
 * assert.equal(getConfigValue(config, "memory.provider"), "honcho");
 * assert.equal(getConfigValue(config, "memory.provider.x"), undefined);
 * ```
 *
 * @category Config
 */
export function getConfigValue(
  config: HermesConfig,
  dottedKey: string,
): unknown {
  let current: unknown = config;
  for (const part of dottedKey.split(".")) {
    if (!isPlainObject(current) || !Object.hasOwn(current, part)) {
      return undefined;
    }
    current = current[part];
  }
  return current;
}

/**
 * Sets a value by dotted key, creating missing sections.
 *
 * @throws {RangeError} When the key has an empty part.
 * @throws {TypeError} When a section on the path holds a non-mapping value.
 */
export function setConfigValue(
  config: HermesConfig,
  dottedKey: string,
  value: unknown,
): void {
  const parts = dottedKey.split(".");
  if (parts.some((part) => part === "")) {
    throw new RangeError(
      `Cannot use config key '${dottedKey}': write keys joined by single dots, like memory.provider`,
    );
  }
  let current: Record<string, unknown> = config;
  for (const [index, part] of parts.slice(0, -1).entries()) {
    const next = current[part];
    if (next === undefined) {
      current[part] = {};
    } else if (!isPlainObject(next)) {
      const at = parts.slice(0, index + 1).join(".");
      throw new TypeError(
        `Cannot set config key '${dottedKey}': '${at}' holds a ${
          Array.isArray(next) ? "list" : typeof next
        }, not a section; remove or rename it first`,
      );
    }
    current = current[part] as Record<string, unknown>;
  }
  current[parts.at(-1)!] = value;
}
