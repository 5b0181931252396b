/** The `hermes honcho …` commands and host-side hooks; imported on the host, never in the worker. @module */

import type { HermesConfig } from "../../../mod.ts";
import type {
  CliIo,
  HermesCommand,
  ProviderStatusContext,
  ProviderStatusDescription,
} from "../../../src/cli/mod.ts";

type Register = (honcho: HermesCommand) => unknown;

// Help order. Computed specifiers on purpose: Deno loads the graph of a
// literal dynamic import as soon as the importing module loads, and the
// status hook must stay cheap.
const COMMANDS: readonly [string, string][] = [
  ["status", "registerStatus"],
  ["setup", "registerSetup"],
  ["setting_commands", "registerSettingCommands"], // strategy, peer, mode, tokens
  ["identity", "registerIdentity"],
  ["sync", "registerSync"],
  ["outbox", "registerOutbox"],
  ["peers", "registerPeers"],
  ["sessions", "registerSessions"],
  ["ask", "registerAsk"],
  ["enable", "registerEnable"],
  ["migrate", "registerMigrate"],
];

async function loadModule(name: string): Promise<Record<string, unknown>> {
  return await import(new URL(`./cli/${name}.ts`, import.meta.url).href);
}

/** Mounts the subcommands on `hermes honcho` (called while `memory.provider` is `honcho`). */
export async function registerCli(command: HermesCommand): Promise<void> {
  command
    .description(
      command.info.description ||
        "Manage the Honcho memory provider: settings, peers, sessions, migration",
    )
    .usage("[--target-profile NAME] [command] [options]")
    .option(
      "--target-profile <name>",
      "Work on another profile's host block ('default' is the hermes block)",
    )
    .example("hermes honcho")
    .example("hermes honcho setup")
    .example("hermes honcho mode tools")
    .example("hermes honcho --target-profile coder status");
  const modules = await Promise.all(COMMANDS.map(([file]) => loadModule(file)));
  COMMANDS.forEach(([, exported], index) => {
    (modules[index]![exported] as Register)(command);
  });
}

type Hook<A extends unknown[], R> = (...args: A) => Promise<R>;

/** `module`'s `name`, loaded when first called. */
function lazy<A extends unknown[], R>(
  module: string,
  name: string,
): Hook<A, R> {
  return async (...args) =>
    await ((await loadModule(module))[name] as Hook<A, R>)(...args);
}

/** The status hook of `hermes memory status` and `doctor`. */
export const describeStatus: Hook<
  [ProviderStatusContext],
  ProviderStatusDescription
> = lazy("describe_status", "describeHonchoStatus");

/** The setup wizard `hermes memory setup honcho` runs; `0` saved, `1` cancelled or failed. */
export const postSetup: Hook<[string, HermesConfig, CliIo], number> = lazy(
  "setup",
  "runPostSetup",
);

/** `hermes memory setup honcho --yes --set key=value…`; `2` for a bad value. */
export const applySetup: Hook<
  [string, Record<string, unknown>, CliIo],
  number
> = lazy("_setup_save", "runApplySetup");

/** Stores what setup collected: the sandboxed provider may read `honcho.json`, not write it. */
export async function saveConfig(
  values: Record<string, unknown>,
  hermesHome: string,
): Promise<void> {
  // Computed, like the subcommands: the status hook loads this file.
  const { HonchoMemoryProvider } = await import(
    new URL("./provider.ts", import.meta.url).href
  ) as typeof import("./provider.ts");
  await new HonchoMemoryProvider().saveConfig(values, hermesHome);
}
