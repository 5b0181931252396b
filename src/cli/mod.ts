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
export { main } from "./main.ts";
