/**
 * The `hermes honcho …` commands of the bundled Honcho memory provider.
 *
 * Hermes imports this file (never the provider's `mod.ts`) and calls
 * {@linkcode registerCli} only while `memory.provider` is `honcho`:
 * `status [--all]` (also the default), `setup`, `strategy`, `peer`, `mode`,
 * `tokens`, `identity`, `sync`, `outbox` (and `outbox retry`, `outbox
 * flush`), `peers` (and `peers map`), `sessions`,
 * `map`, `ask`, `search`, `enable`, `disable`, `migrate`, plus the global
 * `--target-profile NAME`. {@linkcode postSetup} is the setup wizard that
 * `hermes memory setup honcho` runs host-side (the provider itself runs in
 * a sandboxed worker without a terminal).
 *
 * Reads use the `honcho.json` the profile resolves; writes go to
 * `$HERMES_HOME/honcho.json` atomically with mode `0600` and touch only
 * the keys the command owns.
 *
 * @module
 */

import type { HermesConfig } from "../../../mod.ts";
import type {
  ProviderStatusContext,
  ProviderStatusDescription,
} from "../../../src/cli/mod.ts";
import type { CliIo, HermesCommand } from "../../../src/cli/mod.ts";

type Register = (honcho: HermesCommand) => unknown;

/**
 * The subcommand modules in help order, loaded when the commands are
 * mounted (not when this file is imported, so the status hook stays
 * cheap). The specifiers are computed on purpose: Deno reads the graph of
 * a literal dynamic import as soon as the importing module loads.
 */
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

/**
 * Mounts the `hermes honcho …` commands on the command Hermes created for
 * the provider (`hermes honcho`).
 *
 * @param command The `hermes honcho` command.
 *
 * @example Mounting and running `status` in-process
 * ```ts ignore
 * import { createCommand, memoryCliIo } from "@hermes/memory/cli";
 * import { registerCli } from "./cli.ts";
 * const io = memoryCliIo();
 * const root = createCommand("hermes", { io, exitCode: 0 });
 * await registerCli(root.command("honcho"));
 * await root.parseAsync(["honcho", "status", "--offline"], { from: "user" });
 * ```
 */
export async function registerCli(command: HermesCommand): Promise<void> {
  command
    .description(
      command.description() ||
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

/**
 * The host-side status hook (`hermes memory status`, `hermes memory
 * doctor`): the resolved settings with their sources (key masked), the
 * settings files with the line and column where one does not parse, the
 * host the server needs in `memory.permissions.honcho.net`, a connection
 * probe bounded by `probeTimeoutMs` when `probe` is set, and with doctor
 * detail the outbox.
 *
 * @param context Home, `config.yaml`, probe and detail.
 * @returns The description.
 *
 * @example
 * ```ts ignore
 * import { describeStatus } from "./cli.ts";
 * const status = await describeStatus({
 *   hermesHome: "/home/me/.hermes", config: {}, env: () => undefined,
 *   probe: false, probeTimeoutMs: 1500, detail: "status",
 * });
 * ```
 */
export async function describeStatus(
  context: ProviderStatusContext,
): Promise<ProviderStatusDescription> {
  const { describeHonchoStatus } = await loadModule("describe_status") as {
    describeHonchoStatus: (
      context: ProviderStatusContext,
    ) => Promise<ProviderStatusDescription>;
  };
  return await describeHonchoStatus(context);
}

/**
 * The provider's setup wizard, run host-side by `hermes memory setup
 * honcho`: asks for the deployment, key, identity and tuning, writes the
 * host block and `memory.provider: honcho`, grants the server's host in
 * `memory.permissions.honcho.net`, tests the connection and prints a
 * summary. A cancelled prompt saves nothing.
 *
 * @param hermesHome The profile home.
 * @param config The loaded `config.yaml` (re-read before it is changed).
 * @param io The terminal seam.
 * @returns The exit code: `0` saved, `1` cancelled or failed.
 *
 * @example Wiring `hermes memory setup honcho`
 * ```ts ignore
 * import { denoCliIo } from "@hermes/memory/cli";
 * import { postSetup } from "./cli.ts";
 * const code = await postSetup("/home/me/.hermes", {}, denoCliIo());
 * ```
 */
export async function postSetup(
  hermesHome: string,
  config: HermesConfig,
  io: CliIo,
): Promise<number> {
  const { runPostSetup } = await loadModule("setup") as {
    runPostSetup: typeof postSetup;
  };
  return await runPostSetup(hermesHome, config, io);
}

/**
 * The provider's non-interactive setup, run host-side by `hermes memory
 * setup honcho --yes --set key=value…`: saves exactly the keys given (the
 * API key only to `.env`), refuses without a key for Honcho cloud, grants a
 * self-hosted server's host in `memory.permissions.honcho.net`, sets
 * `memory.provider: honcho` and tests the connection.
 *
 * @param hermesHome The profile home.
 * @param values The `--set` values by schema key (converted to their types).
 * @param io The terminal seam.
 * @returns The exit code: `0` saved, `1` refused or failed, `2` bad value.
 *
 * @example Wiring `hermes memory setup honcho --yes`
 * ```ts ignore
 * import { denoCliIo } from "@hermes/memory/cli";
 * import { applySetup } from "./cli.ts";
 * const code = await applySetup("/home/me/.hermes", { baseUrl: "http://127.0.0.1:8000" }, denoCliIo());
 * ```
 */
export async function applySetup(
  hermesHome: string,
  values: Record<string, unknown>,
  io: CliIo,
): Promise<number> {
  const { runApplySetup } = await loadModule("setup") as {
    runApplySetup: typeof applySetup;
  };
  return await runApplySetup(hermesHome, values, io);
}

/**
 * Stores the values `hermes memory setup honcho --set …` collected, on the
 * host: root fields at the root of `$HERMES_HOME/honcho.json`, the rest in
 * the profile's host block (secrets never: they go to `.env`). The
 * provider's sandbox may read `honcho.json` but not write it, so setup
 * calls this instead of the sandboxed provider's own `saveConfig`.
 *
 * @param values The non-secret values setup collected.
 * @param hermesHome The profile home.
 *
 * @example Saving a self-hosted server's URL
 * ```ts ignore
 * import { saveConfig } from "./cli.ts";
 * await saveConfig({ baseUrl: "http://127.0.0.1:8000" }, "/home/me/.hermes");
 * ```
 */
export async function saveConfig(
  values: Record<string, unknown>,
  hermesHome: string,
): Promise<void> {
  const { HonchoMemoryProvider } = await import("./provider.ts");
  await new HonchoMemoryProvider().saveConfig(values, hermesHome);
}
