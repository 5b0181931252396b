/**
 * `hermes memory list [--json]`: the discovered provider plugins with their
 * source, availability and an active marker.
 *
 * @module
 */

import type { CliIo } from "../cli_io.ts";
import type { HermesCommand } from "../hermes_command.ts";
import { columns, shortDescription, styleFor, writeJson } from "../format.ts";
import { listPluginReports } from "../provider_report.ts";
import { isBuiltinSentinel } from "../_plugins.ts";
import { getConfigValue, loadConfig } from "../../config/config.ts";

/** Options of {@linkcode runMemoryList}. */
interface MemoryListOptions {
  /**
   * Print JSON.
   *
   * @default {false}
   */
  json?: boolean;
}

/**
 * Lists the provider plugins of the active profile.
 *
 * @param options Output format.
 * @param io Where to write.
 * @returns `0`.
 *
 * @example Running the command in-process
 * ```ts ignore
 * import { memoryCliIo } from "@hermes/memory/cli";
 * import { runMemoryList } from "./memory_list.ts";
 * await runMemoryList({ json: true }, memoryCliIo());
 * ```
 */
export async function runMemoryList(
  options: MemoryListOptions,
  io: CliIo,
): Promise<number> {
  const config = await loadConfig();
  const raw = getConfigValue(config, "memory.provider");
  const setting = typeof raw === "string" ? raw.trim() : "";
  const active = setting !== "" && !isBuiltinSentinel(setting) ? setting : null;
  const plugins = await listPluginReports(active);
  if (options.json) {
    writeJson(io, { active, providers: plugins });
    return 0;
  }
  const style = styleFor(io, "stdout");
  const rows = [["NAME", "SOURCE", "STATUS", "DESCRIPTION", ""]];
  for (const p of plugins) {
    rows.push([
      p.name,
      p.source,
      p.available ? style.green("available") : style.yellow("unavailable"),
      shortDescription(p.description),
      p.active ? "\u2190 active" : "",
    ]);
  }
  rows.push([
    "(built-in)",
    "core",
    style.green("available"),
    "MEMORY.md / USER.md (always on)",
    active === null ? "\u2190 active" : "",
  ]);
  io.stdout(columns(rows));
  if (active !== null && !plugins.some((p) => p.name === active)) {
    io.stdout(
      `\nmemory.provider is '${active}', but no such plugin was found; run 'hermes memory setup' to pick an installed one.\n`,
    );
  }
  return 0;
}

/**
 * Attaches `list` to the `memory` command.
 *
 * @param memory The `hermes memory` command.
 * @returns The `list` command.
 *
 * @example Attaching the subcommand
 * ```ts
 * import { createCommand, memoryCliIo } from "@hermes/memory/cli";
 * import { registerMemoryList } from "./memory_list.ts";
 * import assert from "node:assert/strict";
 * const memory = createCommand("memory", { io: memoryCliIo(), exitCode: 0 });
 * assert.equal(registerMemoryList(memory).name(), "list");
 * ```
 */
export function registerMemoryList(memory: HermesCommand): HermesCommand {
  const command = memory.command("list")
    .summary("List the provider plugins that can be activated")
    .description(
      "List the memory provider plugins found (bundled, $HERMES_HOME/plugins, and\n" +
        "./.hermes/plugins when HERMES_ENABLE_PROJECT_PLUGINS is on) with their\n" +
        "source, availability and which one is active.",
    )
    .option("--json", "Print the list as JSON (no colour)", false)
    .example("hermes memory list")
    .example("hermes memory list --json");
  command.action((opts: MemoryListOptions) =>
    runMemoryList(opts, command.context.io)
  );
  return command;
}
