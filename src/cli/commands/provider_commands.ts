/**
 * `hermes <provider> …`: the active provider's own command tree, built by
 * its `cli.ts` (`registerCli(command)`). Only the provider named by
 * `memory.provider` contributes; any other provider's name is refused with
 * a hint.
 *
 * @module
 */

import { errorText } from "../../_util/error_text.ts";
import type { HermesCommand } from "../hermes_command.ts";
import { shortDescription } from "../format.ts";
import {
  describeProviderCommand,
  isBuiltinSentinel,
  listProviderNames,
  loadCli,
} from "../_plugins.ts";
import { permissionDenial } from "../permission_problem.ts";
import { getConfigValue, loadConfig } from "../../config/config.ts";
import { log } from "../../core/log.ts";

async function activeProvider(): Promise<string | null> {
  try {
    const config = await loadConfig();
    const raw = getConfigValue(config, "memory.provider");
    const name = typeof raw === "string" ? raw.trim() : "";
    return name === "" || isBuiltinSentinel(name) ? null : name;
  } catch (error) {
    // A denied read is a permission problem, reported as one (run.ts);
    // not "no provider commands".
    if (permissionDenial(error) !== undefined) throw error;
    // `hermes memory status` reports a broken config.yaml; here it only
    // means no provider commands.
    log("debug", `Provider commands skipped: ${errorText(error)}`);
    return null;
  }
}

/**
 * Attaches the active provider's command tree to the root when `word` (the
 * first command word) names it. When there is no command word (the root
 * help), only the command's name and summary are attached, from the
 * provider's `plugin.yaml`: its `cli.ts` is not imported. Returns a
 * refusal message when `word` names a provider that is not active.
 *
 * @param program The `hermes` root command.
 * @param word The first command word, if any.
 * @returns `undefined` when parsing may go on, else the message to print.
 *
 * @example Basic usage
 * ```ts ignore
 * import { attachProviderCommand } from "./provider_commands.ts";
 * import { rootCommand } from "../run.ts";
 * import { memoryCliIo } from "@hermes/memory/cli";
 * const program = rootCommand({ io: memoryCliIo(), exitCode: 0 });
 * const refused = await attachProviderCommand(program, "honcho");
 * ```
 */
export async function attachProviderCommand(
  program: HermesCommand,
  word: string | undefined,
): Promise<string | undefined> {
  const active = await activeProvider();
  if (word !== undefined && word !== active) {
    const names = await listProviderNames().catch(() => [] as string[]);
    if (names.includes(word)) {
      return `'${word}' commands are available only while memory.provider is '${word}'; run 'hermes memory setup ${word}'`;
    }
    return undefined;
  }
  if (active === null) return undefined;
  if (word === undefined) {
    const line = await describeProviderCommand(active);
    if (line !== undefined) {
      program.command(active).summary(line.summary).description(line.summary);
    }
    return undefined;
  }
  let cli;
  try {
    cli = await loadCli(active);
  } catch (error) {
    log(
      "warn",
      `Cannot load the command line of memory provider '${active}': ${
        errorText(error)
      }`,
    );
    return undefined;
  }
  if (cli === null) return undefined;
  const description = cli.description || `Manage ${active} memory plugin`;
  const command = program.command(active)
    .summary(shortDescription(description))
    .description(description);
  try {
    await cli.registerCli(command);
  } catch (error) {
    log(
      "warn",
      `Memory provider '${active}' failed to register its commands: ${
        errorText(error)
      }`,
    );
  }
  return undefined;
}
