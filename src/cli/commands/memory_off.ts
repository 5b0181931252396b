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

/**
 * Sets `memory.provider` to `""` in the active profile's `config.yaml`
 * (merged onto the file: nothing else changes) and says what it did.
 *
 * @param io Where to write.
 * @returns `0`.
 * @throws {ConfigError} When `config.yaml` does not parse.
 *
 * @example Running the command in-process
 * ```ts ignore
 * import { memoryCliIo } from "@hermes/memory/cli";
 * import { runMemoryOff } from "./memory_off.ts";
 * await runMemoryOff(memoryCliIo());
 * ```
 */
export async function runMemoryOff(io: CliIo): Promise<number> {
  const path = getConfigPath();
  const config = await loadConfig();
  const previous = getConfigValue(config, "memory.provider");
  const name = typeof previous === "string" ? previous.trim() : "";
  if (previous === "") {
    io.stdout(
      `Memory provider is already off: memory.provider is "" in ${path}. Built-in memory (MEMORY.md / USER.md) is in use.\n`,
    );
    return 0;
  }
  await saveConfig({ memory: { provider: "" } });
  if (name !== "" && !isBuiltinSentinel(name)) {
    io.stdout(
      `Turned off memory provider '${name}': set memory.provider to "" in ${path}.\n`,
    );
    const kept = getConfigValue(config, `memory.${name}`) !== undefined
      ? ` The settings in memory.${name} were kept.`
      : "";
    io.stdout(
      `Built-in memory (MEMORY.md / USER.md) stays on.${kept} Run 'hermes memory setup ${name}' to turn it back on.\n`,
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
    .example("hermes memory off");
  command.action(() => runMemoryOff(command.context.io));
  return command;
}
