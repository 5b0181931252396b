// `hermes memory …`: the group, with only the subcommand a command line
// names loaded, so `hermes memory status` does not load setup, import or the
// memory manager. Help and unknown words load every subcommand, to list them.

import type { HermesCommand } from "../hermes_command.ts";
import { MEMORY_SUMMARY } from "../root_help.ts";
import { lazyImport } from "../../_util/lazy_import.ts";

type Register = (memory: HermesCommand) => HermesCommand;

// The subcommands in help order, each loaded only when named (see
// lazyImport: a literal import would read every command's graph at start).
const SUBCOMMANDS: readonly (readonly [string, () => Promise<Register>])[] = [
  ["status", async () =>
    (await lazyImport<typeof import("./memory_status.ts")>(
      "./memory_status.ts",
      import.meta.url,
    )).registerMemoryStatus],
  ["setup", async () =>
    (await lazyImport<typeof import("./memory_setup.ts")>(
      "./memory_setup.ts",
      import.meta.url,
    )).registerMemorySetup],
  ["doctor", async () =>
    (await lazyImport<typeof import("./memory_doctor.ts")>(
      "./memory_doctor.ts",
      import.meta.url,
    )).registerMemoryDoctor],
  ["list", async () =>
    (await lazyImport<typeof import("./memory_list.ts")>(
      "./memory_list.ts",
      import.meta.url,
    )).registerMemoryList],
  [
    "permissions",
    async () =>
      (await lazyImport<typeof import("./memory_permissions.ts")>(
        "./memory_permissions.ts",
        import.meta.url,
      )).registerMemoryPermissions,
  ],
  ["off", async () =>
    (await lazyImport<typeof import("./memory_off.ts")>(
      "./memory_off.ts",
      import.meta.url,
    )).registerMemoryOff],
  ["reset", async () =>
    (await lazyImport<typeof import("./memory_reset.ts")>(
      "./memory_reset.ts",
      import.meta.url,
    )).registerMemoryReset],
  ["recall", async () =>
    (await lazyImport<typeof import("./memory_recall.ts")>(
      "./memory_recall.ts",
      import.meta.url,
    )).registerMemoryRecall],
  [
    "entries",
    async () =>
      (await lazyImport<typeof import("./memory_entries.ts")>(
        "./memory_entries.ts",
        import.meta.url,
      )).registerMemoryEntries,
  ],
  ["mcp", async () =>
    (await lazyImport<typeof import("./memory_mcp.ts")>(
      "./memory_mcp.ts",
      import.meta.url,
    )).registerMemoryMcp],
  [
    "dashboard",
    async () =>
      (await lazyImport<typeof import("./memory_dashboard.ts")>(
        "./memory_dashboard.ts",
        import.meta.url,
      )).registerMemoryDashboard,
  ],
  ["import", async () =>
    (await lazyImport<typeof import("./memory_import.ts")>(
      "./memory_import.ts",
      import.meta.url,
    )).registerMemoryImport],
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
  const registers = await Promise.all(wanted.map(([, load]) => load()));
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
