// `hermes memory list [--json]`: the discovered provider plugins with their
// source, availability and an active marker.

import type { HermesCommand } from "../hermes_command.ts";
import {
  columns,
  ioAction,
  shortDescription,
  styleFor,
  writeJson,
} from "../format.ts";
import {
  activeProviderName,
  listPluginReports,
  pythonProvider,
  pythonProviderNames,
} from "../_provider_list.ts";
import { loadConfig } from "../../config/config.ts";

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
  return ioAction(command, async (io, opts: { json: boolean }) => {
    const active = activeProviderName(await loadConfig());
    const plugins = await listPluginReports(active);
    if (opts.json) {
      writeJson(io, { active, providers: plugins });
      return 0;
    }
    const style = styleFor(io, "stdout");
    const rows = [
      ["NAME", "SOURCE", "STATUS", "DESCRIPTION", ""],
      ...plugins.map((p) => [
        p.name,
        p.source,
        p.available ? style.green("available") : style.yellow("unavailable"),
        shortDescription(p.description),
        p.active ? "\u2190 active" : "",
      ]),
      [
        "(built-in)",
        "core",
        style.green("available"),
        "MEMORY.md / USER.md (always on)",
        active === null ? "\u2190 active" : "",
      ],
    ];
    io.stdout(columns(rows));
    const found = (name: string) => plugins.some((p) => p.name === name);
    for (const name of pythonProviderNames().filter((n) => !found(n))) {
      const python = pythonProvider(name)!;
      const selected = name === active ? " (memory.provider names it)" : "";
      io.stdout(`\n${python.what}${selected}; ${python.fix}.\n`);
    }
    if (active !== null && !found(active) && !pythonProvider(active)) {
      io.stdout(
        `\nmemory.provider is '${active}', but no such plugin was found; run 'hermes memory setup' to pick an installed one.\n`,
      );
    }
    return 0;
  });
}
