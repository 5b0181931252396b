// `hermes memory …`: the group, with only the subcommand a command line
// names loaded, so `hermes memory status` does not load setup, import or the
// memory manager. Help and unknown words load every subcommand, to list them.

import type { HermesCommand } from "../hermes_command.ts";
import { MEMORY_SUMMARY } from "../root_help.ts";
import { lazyImport } from "../../_util/lazy_import.ts";

type Register = (memory: HermesCommand) => HermesCommand;

// Each subcommand's module by path: `typeof import` of the same path keeps
// deno check (a renamed export fails it) and deno cache on every one.
interface Modules {
  "./memory_status.ts": typeof import("./memory_status.ts");
  "./memory_setup.ts": typeof import("./memory_setup.ts");
  "./memory_doctor.ts": typeof import("./memory_doctor.ts");
  "./memory_list.ts": typeof import("./memory_list.ts");
  "./memory_permissions.ts": typeof import("./memory_permissions.ts");
  "./memory_off.ts": typeof import("./memory_off.ts");
  "./memory_reset.ts": typeof import("./memory_reset.ts");
  "./memory_recall.ts": typeof import("./memory_recall.ts");
  "./memory_entries.ts": typeof import("./memory_entries.ts");
  "./memory_mcp.ts": typeof import("./memory_mcp.ts");
  "./memory_dashboard.ts": typeof import("./memory_dashboard.ts");
  "./memory_import.ts": typeof import("./memory_import.ts");
}

/** A subcommand: its name, its module and the `Register` that module exports. */
type Subcommand = {
  [P in keyof Modules]: readonly [
    string,
    P,
    { [E in keyof Modules[P]]: Modules[P][E] extends Register ? E : never }[
      keyof Modules[P]
    ],
  ];
}[keyof Modules];

// The subcommands in help order, each loaded only when named (see
// lazyImport: a literal import would read every command's graph at start).
const SUBCOMMANDS: readonly Subcommand[] = [
  ["status", "./memory_status.ts", "registerMemoryStatus"],
  ["setup", "./memory_setup.ts", "registerMemorySetup"],
  ["doctor", "./memory_doctor.ts", "registerMemoryDoctor"],
  ["list", "./memory_list.ts", "registerMemoryList"],
  ["permissions", "./memory_permissions.ts", "registerMemoryPermissions"],
  ["off", "./memory_off.ts", "registerMemoryOff"],
  ["reset", "./memory_reset.ts", "registerMemoryReset"],
  ["recall", "./memory_recall.ts", "registerMemoryRecall"],
  ["entries", "./memory_entries.ts", "registerMemoryEntries"],
  ["mcp", "./memory_mcp.ts", "registerMemoryMcp"],
  ["dashboard", "./memory_dashboard.ts", "registerMemoryDashboard"],
  ["import", "./memory_import.ts", "registerMemoryImport"],
];

/** Adds the `memory` group (description, usage, examples) without its subcommands. */
export function defineMemoryGroup(program: HermesCommand): HermesCommand {
  return program.command("memory")
    .summary(MEMORY_SUMMARY)
    .description(
      "Inspect and configure persistent memory: the built-in MEMORY.md / USER.md\n" +
        "store plus at most one external provider (memory.provider).\n" +
        "Without a subcommand, runs 'status'.",
    )
    .usage("<command> [options]")
    .example("hermes memory status")
    .example("hermes memory setup")
    .example("hermes memory doctor")
    .example("hermes memory setup honcho --set workspace=team --yes")
    .example("hermes memory reset --target user --yes");
}

/**
 * Attaches `memory` with the subcommand `word` names (all of them when it
 * names none, or for help). `hermes memory` alone runs `status`; any other
 * word is an unknown command (a default subcommand would report it as an
 * excess argument of status).
 */
export async function attachMemoryCommand(
  program: HermesCommand,
  word: string | undefined,
  help: boolean,
): Promise<HermesCommand> {
  const memory = defineMemoryGroup(program);
  const named = SUBCOMMANDS.find(([name]) => name === word);
  const wanted = named !== undefined
    ? [named]
    : word === undefined && !help
    ? SUBCOMMANDS.filter(([name]) => name === "status")
    : SUBCOMMANDS;
  const registers = await Promise.all(
    wanted.map(async ([, path, exported]) =>
      (await lazyImport<Record<string, Register>>(path, import.meta.url))[
        exported
      ]!
    ),
  );
  for (const register of registers) register(memory);
  memory.allowExcessArguments(true).action(async () => {
    const [word] = memory.args;
    if (word !== undefined) memory.unknownSubcommand(word);
    const { runMemoryStatus } = await lazyImport<
      typeof import("./memory_status.ts")
    >("./memory_status.ts", import.meta.url);
    return await runMemoryStatus(memory.context.io, {});
  });
  return memory;
}
