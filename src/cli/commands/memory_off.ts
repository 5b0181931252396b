// `hermes memory off`: `memory.provider: ""`; the built-in store stays on and
// the provider's own settings stay in `config.yaml`.

import type { HermesCommand } from "../hermes_command.ts";
import {
  getConfigPath,
  getConfigValue,
  loadConfig,
  saveConfig,
} from "../../config/config.ts";
import { activeProviderName } from "../_provider_list.ts";
import { ioAction, writeJson } from "../format.ts";
import { hasSubcommand } from "./provider_commands.ts";

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
  // Merged onto the file: nothing else changes.
  return ioAction(command, async (io, opts: { json?: boolean }) => {
    const path = getConfigPath();
    const config = await loadConfig();
    const previous = getConfigValue(config, "memory.provider");
    const name = activeProviderName(config);
    const changed = previous !== "";
    if (changed) await saveConfig({ memory: { provider: "" } });
    const kept = name !== null &&
        getConfigValue(config, `memory.${name}`) !== undefined
      ? `memory.${name}`
      : null;
    const reenable = name === null ? [] : [
      ...(await hasSubcommand(name, "enable") ? [`hermes ${name} enable`] : []),
      `hermes memory setup ${name}`,
    ];
    if (opts.json) {
      writeJson(io, {
        configPath: path,
        previous: typeof previous === "string" ? previous : "",
        changed,
        keptSettings: kept,
        reenable,
      });
    } else if (!changed) {
      io.stdout(
        `Memory provider is already off: memory.provider is "" in ${path}. Built-in memory (MEMORY.md / USER.md) is in use.\n`,
      );
    } else if (name !== null) {
      const keptText = kept !== null
        ? ` The settings in ${kept} were kept.`
        : "";
      const how = reenable.map((c) => `'${c}'`).join(" or ");
      io.stdout(
        `Turned off memory provider '${name}': set memory.provider to "" in ${path}.\n` +
          `Built-in memory (MEMORY.md / USER.md) stays on.${keptText} Turn '${name}' back on with ${how}.\n` +
          "Start a new session for the change to take effect.\n",
      );
    } else {
      io.stdout(
        `Set memory.provider to "" in ${path}: built-in memory (MEMORY.md / USER.md) only.\n` +
          "Start a new session for the change to take effect.\n",
      );
    }
    return 0;
  });
}
