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
interface ProviderCli {
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

/**
 * The module URL of a provider's `cli.ts`: beside its `mod.ts` on disk, or
 * beside its remote module for a bundled provider of a framework loaded
 * from a URL; `null` when it has none.
 */
async function cliModuleUrl(
  candidate: { dir?: string; source: string; specifier: string },
): Promise<string | null> {
  if (candidate.dir !== undefined) {
    const path = join(candidate.dir, "cli.ts");
    try {
      if (!(await Deno.stat(path)).isFile) return null;
    } catch {
      return null;
    }
    return pathToFileURL(path).href;
  }
  if (
    candidate.source === "bundled" && /^https?:\/\//.test(candidate.specifier)
  ) {
    return new URL("cli.ts", candidate.specifier).href;
  }
  return null;
}

/**
 * One export of a provider's `cli.ts` (host-side code: it runs in the CLI
 * process), such as `postSetup` or `saveConfig`, whether or not the
 * provider is the active one: only the named provider's `cli.ts` is
 * imported.
 *
 * @param name The provider's name.
 * @param exportName The export.
 * @param options Home, config and directories.
 * @returns The function, or `null` when the provider, its `cli.ts` or the
 * export is missing.
 * @throws {Error} When `cli.ts` exists but fails to load.
 *
 * @example
 * ```ts ignore
 * import { loadProviderCliExport } from "./provider_cli.ts";
 * const save = await loadProviderCliExport("honcho", "saveConfig");
 * ```
 */
export async function loadProviderCliExport(
  name: string,
  exportName: string,
  options: DiscoveryOptions = {},
): Promise<((...args: never[]) => unknown) | null> {
  const candidate = await findMemoryProvider(name, options);
  if (candidate === null) return null;
  const url = await cliModuleUrl(candidate);
  if (url === null) return null;
  const module = await import(String(url)) as Record<string, unknown>;
  const value = module[exportName];
  return typeof value === "function"
    ? value as (...args: never[]) => unknown
    : null;
}

/** Options of {@linkcode loadProviderCli}. */
interface ProviderCliOptions extends DiscoveryOptions {
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
 * import { loadProviderCli } from "./provider_cli.ts";
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
    if (candidate === null) return null;
    const url = await cliModuleUrl(candidate);
    if (url === null) return null;
    const module = await import(String(url)) as Record<string, unknown>;
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
