/**
 * `hermes memory …` for the command line itself: the group, with only the
 * subcommand a command line names loaded (its module and what it
 * imports), so `hermes memory status` does not load setup, import or the
 * memory manager. Help and unknown words load every subcommand, to list
 * them.
 *
 * @module
 */

import type { HermesCommand } from "../hermes_command.ts";
import { MEMORY_SUMMARY } from "../root_help.ts";

type Register = (memory: HermesCommand) => HermesCommand;

/**
 * The subcommands in help order, each loaded on demand. The specifiers are
 * computed on purpose: Deno reads the whole graph of a literal dynamic
 * import as soon as the importing module loads. compile includes this
 * folder; the cache step installs their npm packages through `run.ts`.
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

async function load(file: string, name: string): Promise<Register> {
  const url = new URL(file, import.meta.url).href;
  const module = await import(url) as Record<string, unknown>;
  return module[name] as Register;
}

/**
 * Adds the `memory` group (description, usage, examples) without its
 * subcommands.
 *
 * @param program The `hermes` root command.
 * @returns The `memory` command.
 */
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
 * Makes `hermes memory` alone run `status`; any other word is an unknown
 * command (a default subcommand would report it as an excess argument of
 * status).
 *
 * @param memory The `memory` command.
 * @param runStatus Runs `hermes memory status`.
 */
export function defaultToStatus(
  memory: HermesCommand,
  runStatus: () => Promise<number>,
): void {
  memory.allowExcessArguments(true).action(() => {
    const [word] = memory.args;
    if (word !== undefined) memory.unknownSubcommand(word);
    return runStatus();
  });
}

/**
 * Attaches `memory` with the subcommand `word` names (all of them when it
 * names none, or for help).
 *
 * @param program The `hermes` root command.
 * @param word The word after `memory`, if any.
 * @param help Whether help was asked for.
 * @returns The `memory` command.
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
    wanted.map(([, file, name]) => load(file, name)),
  );
  for (const register of registers) register(memory);
  defaultToStatus(memory, async () => {
    const status = await load(
      "./memory_status.ts",
      "runMemoryStatus",
    ) as unknown as (
      options: Record<string, never>,
      io: HermesCommand["context"]["io"],
    ) => Promise<number>;
    return await status({}, memory.context.io);
  });
  return memory;
}
