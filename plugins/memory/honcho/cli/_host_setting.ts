/**
 * The pieces shared by the commands that show or set settings of this
 * profile's host block (`mode`, `strategy`, `tokens`, `peer`, `enable`,
 * `disable`): checking a value against its choices and writing the host
 * keys.
 *
 * @module
 */

import type { CliIo } from "../../../../src/cli/mod.ts";
import type { HonchoConfig } from "../config.ts";
import { isRecord } from "../_util.ts";
import {
  HonchoCliError,
  type HonchoCliScope,
  reportWrite,
  requireReadableConfig,
  writeHonchoFile,
  writeHostKey,
} from "./_common.ts";

/** Where {@linkcode writeHostSettings} wrote. */
export interface HostSettingsWrite {
  /** The host block written (`hosts.<hostKey>`). */
  hostKey: string;
  /** The file written. */
  path: string;
}

/**
 * Writes keys into this profile's host block: refuses a config file that
 * does not parse, writes the keys under the block that was read, and
 * prints what the write did ({@linkcode reportWrite}).
 *
 * @param scope The profile and files.
 * @param config The configuration the scope loaded.
 * @param host The host keys to set (`undefined` removes a key), or a
 * function computing them from the host block (and the whole file) as they
 * are inside the file's lock.
 * @returns The host block and the file written.
 * @throws {HonchoCliError} When the config file does not parse.
 *
 * @example
 * ```ts ignore
 * import { memoryCliIo } from "@hermes/memory/cli";
 * import { loadScopeConfig, resolveScope } from "./_common.ts";
 * import { writeHostSettings } from "./_host_setting.ts";
 * const scope = resolveScope(memoryCliIo());
 * const config = await loadScopeConfig(scope);
 * await writeHostSettings(scope, config, { recallMode: "tools" });
 * ```
 */
export async function writeHostSettings(
  scope: HonchoCliScope,
  config: HonchoConfig,
  host:
    | Record<string, unknown>
    | ((
      block: Readonly<Record<string, unknown>>,
      file: Readonly<Record<string, unknown>>,
    ) => Record<string, unknown>),
): Promise<HostSettingsWrite> {
  requireReadableConfig(config);
  const hostKey = writeHostKey(config);
  const written = await writeHonchoFile(
    config,
    scope.hermesHome,
    typeof host === "function"
      ? (file) => {
        const hosts = isRecord(file.hosts) ? file.hosts : {};
        const block = isRecord(hosts[hostKey]) ? hosts[hostKey] : {};
        return { host: host(block, file), hostKey };
      }
      : { host, hostKey },
  );
  await reportWrite(scope, written);
  return { hostKey, path: written.path };
}

/**
 * Prints the closing line of a multi-key write: `Saved in hosts.<key> of
 * <file>. Start a new session to use it.`
 *
 * @param io Where to print.
 * @param written What {@linkcode writeHostSettings} returned.
 *
 * @example
 * ```ts
 * import { memoryCliIo } from "@hermes/memory/cli";
 * import { printSaved } from "./_host_setting.ts";
 * import assert from "node:assert/strict";
 * const io = memoryCliIo();
 * printSaved(io, { hostKey: "hermes", path: "/h/honcho.json" });
 * assert.equal(io.out, "Saved in hosts.hermes of /h/honcho.json. Start a new session to use it.\n");
 * ```
 */
export function printSaved(io: CliIo, written: HostSettingsWrite): void {
  io.stdout(
    `Saved in hosts.${written.hostKey} of ${written.path}. Start a new session to use it.\n`,
  );
}

/**
 * Checks a value given on the command line against its choices
 * (trimmed, case-insensitive).
 *
 * @param what The setting, for the message (`recall mode`).
 * @param plural The choices' noun, for the message (`modes`).
 * @param value The value as given.
 * @param choices The valid values, in display order.
 * @param aliases Other spellings accepted for a choice.
 * @returns The choice.
 * @throws {HonchoCliError} When the value is not a choice (exit 2).
 *
 * @example
 * ```ts
 * import { parseChoice } from "./_host_setting.ts";
 * import assert from "node:assert/strict";
 * assert.equal(parseChoice("colour", "colours", " Red", ["red", "blue"]), "red");
 * assert.throws(() => parseChoice("colour", "colours", "green", ["red", "blue"]));
 * ```
 */
export function parseChoice(
  what: string,
  plural: string,
  value: string,
  choices: readonly string[],
  aliases: Readonly<Record<string, string>> = {},
): string {
  const lower = value.trim().toLowerCase();
  const wanted = Object.hasOwn(aliases, lower) ? aliases[lower] : lower;
  if (!choices.includes(wanted)) {
    throw new HonchoCliError(
      `Cannot set ${what} '${value}': valid ${plural} are ${
        choices.join(", ")
      }`,
      2,
    );
  }
  return wanted;
}

/**
 * Describes where a value came from, for one-line reports.
 *
 * @param source The source.
 * @returns `host block`, `root`, `env` or `default`.
 *
 * @example
 * ```ts
 * import { sourceText } from "./_host_setting.ts";
 * import assert from "node:assert/strict";
 * assert.equal(sourceText("host"), "host block");
 * ```
 */
export function sourceText(source: string): string {
  return source === "host" ? "host block" : source;
}
