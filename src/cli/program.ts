/**
 * The whole `hermes` command tree as a library builds it (every `memory`
 * subcommand loaded; the CLI itself loads only the one a command line
 * names).
 *
 * @module
 */

import type { CliContext, HermesCommand } from "./hermes_command.ts";
import { registerMemoryCommand } from "./commands/memory.ts";
import { rootCommand } from "./run.ts";

/**
 * Builds the `hermes` command tree (without provider commands).
 *
 * @param context The state shared by the tree.
 * @returns The root command.
 *
 * @example Basic usage
 * ```ts
 * import { buildProgram } from "./program.ts";
 * import { memoryCliIo } from "@hermes/memory/cli";
 * import assert from "node:assert/strict";
 * const program = buildProgram({ io: memoryCliIo(), exitCode: 0 });
 * assert.ok(program.commands.some((c) => c.name() === "memory"));
 * ```
 */
export function buildProgram(context: CliContext): HermesCommand {
  const program = rootCommand(context);
  registerMemoryCommand(program);
  return program;
}
