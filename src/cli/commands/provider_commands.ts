/**
 * `hermes <provider> …`: the active provider's own command tree, built by
 * its `cli.ts` (`registerCli(command)`). Only the provider named by
 * `memory.provider` contributes; any other provider's name is refused with
 * a hint.
 *
 * @module
 */

import { errorText } from "../../_util/error_text.ts";
import { createCommand, type HermesCommand } from "../hermes_command.ts";
import { closestName, didYouMean } from "../suggest.ts";
import { shortDescription } from "../format.ts";
import {
  describeProviderCommand,
  isBuiltinSentinel,
  listProviderNames,
  loadCli,
  providerSubcommands,
} from "../_plugins.ts";
import type { CliIo } from "../cli_io.ts";
import { permissionDenial } from "../permission_problem.ts";
import {
  getConfigPath,
  getConfigValue,
  loadConfig,
} from "../../config/config.ts";
import { log } from "../../core/log.ts";

/** `memory.provider`, or why `config.yaml` could not be read. */
interface ActiveSetting {
  /** The active provider, or `null` for built-in memory only. */
  name: string | null;
  /** The raw `memory.provider` text (`""` when unset). */
  raw: string;
  /** Whether `memory.provider` is absent from `config.yaml`. */
  unset?: boolean;
  /** Why `config.yaml` cannot be read (file, line, column and the fix). */
  broken?: string;
}

async function activeProvider(): Promise<ActiveSetting> {
  try {
    const config = await loadConfig();
    const raw = getConfigValue(config, "memory.provider");
    const name = typeof raw === "string" ? raw.trim() : "";
    return {
      name: name === "" || isBuiltinSentinel(name) ? null : name,
      raw: name,
      unset: raw === undefined,
    };
  } catch (error) {
    // A denied read is a permission problem, reported as one (run.ts);
    // not "no provider commands".
    if (permissionDenial(error) !== undefined) throw error;
    // `hermes memory status` reports a broken config.yaml in full; here it
    // means no provider commands, and a provider's command says why.
    log("debug", `Provider commands skipped: ${errorText(error)}`);
    return { name: null, raw: "", broken: errorText(error) };
  }
}

/**
 * Subcommands of a provider's tree that work while it is not the active
 * provider: they are how it is turned (back) on.
 */
const INACTIVE_SUBCOMMANDS: readonly string[] = ["enable", "setup"];

/** Why `hermes <word> …` cannot run while `word` is not the active provider. */
async function inactiveRefusal(
  word: string,
  setting: ActiveSetting,
  names: readonly string[],
): Promise<string> {
  const path = getConfigPath();
  if (setting.broken !== undefined) {
    return `'${word}' commands cannot tell whether '${word}' is the memory provider: ${setting.broken}\n` +
      `hint: fix ${path}, then run 'hermes memory status' to check it`;
  }
  const enable = await hasSubcommand(word, "enable");
  const ways = enable
    ? `turn it back on with 'hermes ${word} enable' (keeps its settings), or reconfigure it with 'hermes memory setup ${word}'`
    : `turn it on with 'hermes memory setup ${word}'`;
  let now: string;
  if (setting.name === null) {
    now = setting.unset
      ? `memory.provider is not set in ${path} (built-in memory only)`
      : setting.raw === ""
      ? `memory.provider is "" in ${path} (built-in memory only, e.g. after 'hermes memory off')`
      : `memory.provider is '${setting.raw}' in ${path} (built-in memory only)`;
  } else if (!names.includes(setting.name)) {
    now =
      `memory.provider is '${setting.name}' in ${path}, which names no installed provider${
        didYouMean(setting.name, names)
      }`;
  } else {
    now = `memory.provider is '${setting.name}' in ${path}`;
  }
  return `'${word}' commands are available only while memory.provider is '${word}'; ${now}\nhint: ${ways}`;
}

/**
 * Whether a provider's command tree has a subcommand (host code is
 * registered on a scratch command; a user provider's `cli.ts` reports its
 * subcommands from its sandbox).
 *
 * @param name The provider.
 * @param sub The subcommand's name.
 * @returns `false` also when the provider has no `cli.ts` or it fails.
 */
export async function hasSubcommand(
  name: string,
  sub: string,
): Promise<boolean> {
  const names = await providerSubcommands(name, () => createCommand(name));
  return names.includes(sub);
}

/**
 * `hermes <provider> <args…>` of a user or project provider: run in its
 * sandbox process, which parses `<args…>` itself.
 */
export interface SandboxedRoute {
  /**
   * Runs the command line in the provider's sandbox.
   *
   * @param io Where output goes and prompts are asked.
   * @returns The exit code.
   */
  run(io: CliIo): Promise<number>;
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
 * @param subcommand The second command word, if any: `enable` and `setup`
 * of a provider that is not active are attached (they turn it on).
 * @param rest The arguments after `word`: a user or project provider's
 * `cli.ts` parses them in its sandbox (nothing is attached to `program`).
 * @returns `undefined` when parsing may go on, the message to print, or
 * the route to the provider's sandbox.
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
  subcommand?: string,
  rest: readonly string[] = [],
): Promise<string | SandboxedRoute | undefined> {
  const setting = await activeProvider();
  let active = setting.name;
  let inactive = false;
  if (word !== undefined && word !== active) {
    const names = await listProviderNames().catch(() => [] as string[]);
    if (names.includes(word)) {
      if (!INACTIVE_SUBCOMMANDS.includes(subcommand ?? "")) {
        return await inactiveRefusal(word, setting, names);
      }
      // `hermes honcho enable` / `setup`: how an inactive provider is
      // turned on, so its tree is attached.
      active = word;
      inactive = true;
    } else {
      const close = closestName(word, names);
      if (
        close !== undefined && !program.commands.some((c) => c.name() === word)
      ) {
        return `unknown command '${word}' (did you mean '${close}'?)\nhint: run 'hermes --help' for usage`;
      }
      return undefined;
    }
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
    cli = await loadCli(active, inactive);
  } catch (error) {
    log(
      "warn",
      `Cannot load the command line of memory provider '${active}': ${
        errorText(error)
      }`,
    );
    return undefined;
  }
  if (cli === null) {
    const names = await listProviderNames().catch(() => [] as string[]);
    if (names.includes(active)) return undefined;
    return `memory.provider is '${active}' in ${getConfigPath()}, which names no installed provider${
      didYouMean(active, names)
    }\nhint: run 'hermes memory list' to see the installed providers, then 'hermes memory setup NAME'`;
  }
  const sandboxed = cli.sandboxed;
  if (sandboxed !== undefined) {
    return { run: (io: CliIo) => sandboxed.run(rest, io) };
  }
  const description = cli.description || `Manage ${active} memory plugin`;
  const command = program.command(active)
    .summary(shortDescription(description))
    .description(description);
  try {
    await cli.registerCli?.(command);
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
