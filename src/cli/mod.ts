/**
 * `@hermes/memory/cli`: the `hermes` command line as a library
 * ({@linkcode main} runs one invocation and resolves to its exit code), and
 * what a provider's `cli.ts` needs: {@linkcode HermesCommand} (what
 * `registerCli(command)` receives) and the I/O seam {@linkcode CliIo}
 * ({@linkcode memoryCliIo} records output and scripts answers for tests).
 *
 * Who imports it: a provider's `cli.ts` (its `hermes <provider> …` commands
 * and `postSetup`), and tests or tools that run `hermes` in-process.
 *
 * @example Running a command in-process
 * ```ts
 * import { main, memoryCliIo } from "@hermes/memory/cli";
 * const io = memoryCliIo();
 * const code = await main(["memory", "--help"], io);
 * if (code !== 0 || !io.out.includes("status")) throw new Error(io.err);
 * ```
 *
 * @module
 */

// Running the command line
export { main } from "./run.ts";
// What a provider's `registerCli(command)` receives and builds on
export {
  type AddCommandOptions,
  type CliContext,
  CliExit,
  type CommandArgument,
  type CommandInfo,
  type CommandOption,
  createCommand,
  HermesCommand,
  type ParsedOptions,
  USAGE_EXIT_CODE,
} from "./hermes_command.ts";
// Terminal I/O: the real one, and a recording one for tests
export {
  CANCEL_PROMPT,
  type CliIo,
  type CliPrompts,
  type ConfirmPromptOptions,
  denoCliIo,
  type InputPromptOptions,
  type MemoryCliIo,
  memoryCliIo,
  type MemoryCliIoOptions,
  type PasswordPromptOptions,
  PromptCancelled,
  type RecordedPrompt,
  type ScriptedAnswer,
  type SelectChoice,
  type SelectPromptOptions,
} from "./cli_io.ts";
// Output helpers a provider's commands share with `hermes`'s own
export { columns, writeJson } from "./format.ts";
// The config a provider's `postSetup(home, config, io)` receives, and host-side
// reads a status hook makes without loading the whole library
export type { HermesConfig } from "../core/memory_provider.ts";
export { getConfigValue } from "../config/config.ts";
export { buildProfileSecretScope } from "../profile/secret_scope.ts";
export { listProfiles } from "../profile/hermes_home.ts";
export { withSecretScope } from "../profile/context_scope.ts";
// What a provider's `describeStatus(ctx)` receives and reports (run by
// `hermes memory status` and `doctor`: a user provider's in its sandbox)
export type {
  ProviderConnectionStatus,
  ProviderFileStatus,
  ProviderProblem,
  ProviderSettingStatus,
  ProviderStatusContext,
  ProviderStatusDescription,
} from "../plugins/provider_cli.ts";
// The setup walker a provider's own setup command runs with its fields
export {
  type SetupAnswers,
  type SetupField,
  type SetupWalk,
  walkSetupFields,
} from "./setup_wizard.ts";
export type { ConfigField } from "../core/memory_provider.ts";
