// `hermes memory …`: the group, with only the subcommand a command line
// names loaded, so `hermes memory status` does not load setup, import or the
// memory manager. Help and unknown words load every subcommand, to list them.

import type { HermesCommand } from "../hermes_command.ts";
import { MEMORY_SUMMARY } from "../root_help.ts";

type Register = (memory: HermesCommand) => HermesCommand;

/**
 * The subcommands in help order. The specifiers are computed on purpose:
 * Deno reads the whole graph of a literal dynamic import as soon as the
 * importing module loads (cli_location.ts lists them for compile and cache).
 */
const SUBCOMMANDS: readonly [string, string, string][] = [
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

async function load<T>(file: string, name: string): Promise<T> {
  const url = new URL(file, import.meta.url).href;
  const module = await import(url) as Record<string, unknown>;
  return module[name] as T;
}

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
    wanted.map(([, file, name]) => load<Register>(file, name)),
  );
  for (const register of registers) register(memory);
  memory.allowExcessArguments(true).action(async () => {
    const [word] = memory.args;
    if (word !== undefined) memory.unknownSubcommand(word);
    const status = await load<
      (io: HermesCommand["context"]["io"], opts: object) => Promise<number>
    >("./memory_status.ts", "runMemoryStatus");
    return await status(memory.context.io, {});
  });
  return memory;
}
