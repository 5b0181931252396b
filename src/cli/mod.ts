/**
 * `@hermes/memory/cli`: the `hermes` command line as a library.
 *
 * - {@linkcode main} runs one invocation and resolves to its exit code.
 * - {@linkcode HermesCommand} is what a provider's `cli.ts` receives in
 *   `registerCli(command)` to add `hermes <provider> …` commands.
 * - {@linkcode CliIo} is the I/O seam; {@linkcode memoryCliIo} records
 *   output and scripts prompt answers for tests.
 *
 * @example Running a command in-process
 * ```ts no-assert
 * import { main, memoryCliIo } from "@hermes/memory/cli";
 * const io = memoryCliIo();
 * const code = await main(["memory", "--help"], io);
 * ```
 *
 * @module
 */

export * from "./cli_io.ts";
export * from "./hermes_command.ts";
export { main } from "./run.ts";
export { buildProgram } from "./program.ts";
export * from "./global_args.ts";
export * from "./format.ts";
export * from "./run_flags.ts";
export * from "./run_plan.ts";
export * from "./cli_location.ts";
export * from "./permission_problem.ts";
export type { ProviderCommandLine } from "./root_help.ts";
export * from "./provider_report.ts";
export * from "./suggest.ts";
export * from "./version.ts";
export * from "./commands/memory.ts";
export * from "./commands/memory_status.ts";
export * from "./commands/memory_setup.ts";
export * from "./commands/memory_list.ts";
export * from "./commands/memory_permissions.ts";
export * from "./commands/memory_off.ts";
export * from "./commands/memory_reset.ts";
export * from "./commands/memory_recall.ts";
export * from "./commands/memory_import.ts";
export * from "./commands/provider_commands.ts";

// Framework types the commands' options and reports refer to, so that the
// CLI's API can be named from `@hermes/memory/cli` alone.
export type {
  ChatMessage,
  HermesConfig,
  MemoryTarget,
} from "../core/memory_provider.ts";
export type { ResetTarget } from "../builtin/memory_store.ts";
