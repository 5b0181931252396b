/**
 * Provider CLI commands (`hermes <provider> …`) from a provider's
 * `cli.ts`.
 *
 * Only the active provider (`memory.provider`) contributes, and only its
 * `cli.ts` is imported, never its `mod.ts`. `cli.ts` must export
 * `registerCli(command)`, which attaches subcommands to the `hermes
 * <provider>` command. Unlike the provider itself, `cli.ts` runs inside
 * the `hermes` CLI process with the CLI's permissions (it builds commands
 * on the host's command tree, which cannot cross a worker boundary), so it
 * is loaded for the active provider only, which the user chose.
 *
 * @module
 */

import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { loadConfig } from "../config/config.ts";
import { getHermesHome } from "../profile/hermes_home.ts";
import { log } from "../core/log.ts";
import {
  type DiscoveryOptions,
  findMemoryProvider,
} from "./plugin_discovery.ts";
import { errorText } from "../_util/error_text.ts";

/** What a provider's `cli.ts` contributes. */
export interface ProviderCli {
  /** The provider's name: the command is `hermes <name>`. */
  name: string;
  /** One line for `hermes --help`. */
  help: string;
  /** The `description` of its `plugin.yaml` (`""` when none). */
  description: string;
  /**
   * Attaches the provider's subcommands.
   *
   * @param command The `hermes <provider>` command.
   */
  registerCli: (command: unknown) => void | Promise<void>;
}

/** Options of {@linkcode loadProviderCli}. */
export interface ProviderCliOptions extends DiscoveryOptions {
  /**
   * Load the provider's CLI even when it is not `memory.provider`.
   *
   * @default {false}
   */
  evenIfInactive?: boolean;
}

/**
 * Loads the CLI of a provider by importing only its `cli.ts`.
 *
 * @param name The provider's name.
 * @param options Home, config and directories.
 * @returns The CLI, or `null` when the provider is not the active one, has
 * no directory or no `cli.ts`, or `cli.ts` fails or exports no
 * `registerCli` (logged at debug).
 *
 * @example
 * ```ts ignore
 * import { loadProviderCli } from "@hermes/memory";
 * const cli = await loadProviderCli("honcho");
 * if (cli) await cli.registerCli(program.command(cli.name).description(cli.help));
 * ```
 */
export async function loadProviderCli(
  name: string,
  options: ProviderCliOptions = {},
): Promise<ProviderCli | null> {
  try {
    const hermesHome = resolve(options.hermesHome ?? getHermesHome());
    const config = options.config ?? await loadConfig({ hermesHome });
    const memory = config.memory as Record<string, unknown> | undefined;
    const active = memory !== null && typeof memory === "object"
      ? String(memory.provider ?? "").trim()
      : "";
    if (!options.evenIfInactive && active !== name) return null;
    const candidate = await findMemoryProvider(name, {
      ...options,
      hermesHome,
      config,
    });
    if (candidate?.dir === undefined) return null;
    const path = join(candidate.dir, "cli.ts");
    try {
      if (!(await Deno.stat(path)).isFile) return null;
    } catch {
      return null;
    }
    const module = await import(String(pathToFileURL(path).href)) as Record<
      string,
      unknown
    >;
    const registerCli = module.registerCli;
    if (typeof registerCli !== "function") {
      log(
        "debug",
        `Memory provider '${name}' cli.ts exports no registerCli(command): no commands added`,
      );
      return null;
    }
    const description = candidate.manifest.description;
    return {
      name,
      help: description || `Manage ${name} memory plugin`,
      description,
      registerCli: registerCli as ProviderCli["registerCli"],
    };
  } catch (error) {
    log(
      "debug",
      `Memory provider '${name}' CLI not loaded: ${errorText(error)}`,
    );
    return null;
  }
}
