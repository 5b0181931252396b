// `hermes <provider> …`: the active provider's own command tree, built by its
// `cli.ts`. Any other provider's name is refused with a hint.

import { errorText } from "../../_util/error_text.ts";
import { createCommand, type HermesCommand } from "../hermes_command.ts";
import { closestName, didYouMean } from "../suggest.ts";
import { shortDescription } from "../format.ts";
import {
  describeProviderCommand,
  loadCli,
  providerSubcommands,
} from "../_plugins.ts";
import { activeProviderName, listProviderNames } from "../_provider_list.ts";
import type { CliIo } from "../cli_io.ts";
import { permissionDenial } from "../permission_problem.ts";
import {
  getConfigPath,
  getConfigValue,
  loadConfig,
} from "../../config/config.ts";
import { log } from "../../core/log.ts";

/** `memory.provider` (`name` `null` for built-in only), or why `config.yaml` could not be read. */
interface ActiveSetting {
  name: string | null;
  /** The trimmed `memory.provider` text (`""` when unset). */
  raw: string;
  unset?: boolean;
  broken?: string;
}

async function activeProvider(): Promise<ActiveSetting> {
  try {
    const config = await loadConfig();
    const raw = getConfigValue(config, "memory.provider");
    return {
      name: activeProviderName(config),
      raw: typeof raw === "string" ? raw.trim() : "",
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

/** Subcommands that work while the provider is not active: they turn it on. */
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

/** Whether a provider's command tree has `sub` (`false` when its `cli.ts` is missing or fails). */
export async function hasSubcommand(
  name: string,
  sub: string,
): Promise<boolean> {
  const names = await providerSubcommands(name, () => createCommand(name));
  return names.includes(sub);
}

/** `hermes <provider> <args…>` of a user or project provider: run in its sandbox. */
export interface SandboxedRoute {
  run(io: CliIo): Promise<number>;
}

/**
 * Attaches the active provider's command tree when `word` names it; with no
 * word (root help) only its name and summary, from `plugin.yaml`. Returns a
 * refusal message when `word` names an inactive provider (but `enable` and
 * `setup`, which turn it on), or the route to a sandboxed `cli.ts`, which
 * parses `rest` itself.
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
