/**
 * `hermes memory off`: turns the external provider off (`memory.provider:
 * ""`); the built-in store stays on and the provider's own settings stay in
 * `config.yaml`.
 *
 * @module
 */

import type { CliIo } from "../cli_io.ts";
import type { HermesCommand } from "../hermes_command.ts";
import {
  getConfigPath,
  getConfigValue,
  loadConfig,
  saveConfig,
} from "../../config/config.ts";
import { isBuiltinSentinel } from "../_plugins.ts";
import { hasSubcommand } from "./provider_commands.ts";

/** Options of {@linkcode runMemoryOff}. */
export interface MemoryOffOptions {
  /**
   * Print one JSON object instead of text: `configPath`, `previous` (the
   * old `memory.provider`, `""` when unset), `changed`, `keptSettings`
   * (`memory.<name>` when that section was kept, else `null`) and
   * `reenable` (the commands that turn the provider back on).
   *
   * @default {false}
   */
  json?: boolean;
}

/**
 * Sets `memory.provider` to `""` in the active profile's `config.yaml`
 * (merged onto the file: nothing else changes) and says what it did and
 * how to turn the provider back on.
 *
 * @param io Where to write.
 * @param options Text or JSON.
 * @returns `0`.
 * @throws {ConfigError} When `config.yaml` does not parse.
 *
 * @example Running the command in-process
 * ```ts ignore
 * import { memoryCliIo } from "@hermes/memory/cli";
 * import { runMemoryOff } from "./memory_off.ts";
 * await runMemoryOff(memoryCliIo(), { json: true });
 * ```
 */
export async function runMemoryOff(
  io: CliIo,
  options: MemoryOffOptions = {},
): Promise<number> {
  const path = getConfigPath();
  const config = await loadConfig();
  const previous = getConfigValue(config, "memory.provider");
  const name = typeof previous === "string" ? previous.trim() : "";
  const external = name !== "" && !isBuiltinSentinel(name);
  const changed = previous !== "";
  if (changed) await saveConfig({ memory: { provider: "" } });
  const kept = external &&
      getConfigValue(config, `memory.${name}`) !== undefined
    ? `memory.${name}`
    : null;
  const reenable = external
    ? [
      ...(await hasSubcommand(name, "enable") ? [`hermes ${name} enable`] : []),
      `hermes memory setup ${name}`,
    ]
    : [];
  if (options.json) {
    io.stdout(
      `${
        JSON.stringify(
          {
            configPath: path,
            previous: typeof previous === "string" ? previous : "",
            changed,
            keptSettings: kept,
            reenable,
          },
          null,
          2,
        )
      }\n`,
    );
    return 0;
  }
  if (!changed) {
    io.stdout(
      `Memory provider is already off: memory.provider is "" in ${path}. Built-in memory (MEMORY.md / USER.md) is in use.\n`,
    );
    return 0;
  }
  if (external) {
    io.stdout(
      `Turned off memory provider '${name}': set memory.provider to "" in ${path}.\n`,
    );
    const keptText = kept !== null ? ` The settings in ${kept} were kept.` : "";
    const how = reenable.map((c) => `'${c}'`).join(" or ");
    io.stdout(
      `Built-in memory (MEMORY.md / USER.md) stays on.${keptText} Turn '${name}' back on with ${how}.\n`,
    );
  } else {
    io.stdout(
      `Set memory.provider to "" in ${path}: built-in memory (MEMORY.md / USER.md) only.\n`,
    );
  }
  io.stdout("Start a new session for the change to take effect.\n");
  return 0;
}

/**
 * Attaches `off` to the `memory` command.
 *
 * @param memory The `hermes memory` command.
 * @returns The `off` command.
 *
 * @example Attaching the subcommand
 * ```ts
 * import { createCommand, memoryCliIo } from "@hermes/memory/cli";
 * import { registerMemoryOff } from "./memory_off.ts";
 * import assert from "node:assert/strict";
 * const memory = createCommand("memory", { io: memoryCliIo(), exitCode: 0 });
 * assert.equal(registerMemoryOff(memory).name(), "off");
 * ```
 */
export function registerMemoryOff(memory: HermesCommand): HermesCommand {
  const command = memory.command("off")
    .summary("Turn the external provider off (built-in memory only)")
    .description(
      'Turn the external memory provider off: sets memory.provider to "" in\n' +
        "config.yaml. The built-in MEMORY.md / USER.md store stays on, and the\n" +
        "provider's settings (memory.<provider>) are kept.",
    )
    .option("--json", "Print what changed as JSON")
    .example("hermes memory off")
    .example("hermes memory off --json");
  command.action((opts: { json?: boolean }) =>
    runMemoryOff(command.context.io, opts)
  );
  return command;
}
