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

import type { HermesConfig } from "@hermes/memory";
import type { CliIo, HermesCommand } from "@hermes/memory/cli";
import { registerAsk } from "./cli/ask.ts";
import { registerEnable } from "./cli/enable.ts";
import { registerIdentity } from "./cli/identity.ts";
import { registerMigrate } from "./cli/migrate.ts";
import { registerMode } from "./cli/mode.ts";
import { registerOutbox } from "./cli/outbox.ts";
import { registerPeer } from "./cli/peer.ts";
import { registerPeers } from "./cli/peers.ts";
import { registerSessions } from "./cli/sessions.ts";
import { registerSetup, runApplySetup, runPostSetup } from "./cli/setup.ts";
import { registerStatus } from "./cli/status.ts";
import { registerStrategy } from "./cli/strategy.ts";
import { registerSync } from "./cli/sync.ts";
import { registerTokens } from "./cli/tokens.ts";

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
 * registerCli(root.command("honcho"));
 * await root.parseAsync(["honcho", "status", "--offline"], { from: "user" });
 * ```
 */
export function registerCli(command: HermesCommand): void {
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
  registerStatus(command);
  registerSetup(command);
  registerStrategy(command);
  registerPeer(command);
  registerMode(command);
  registerTokens(command);
  registerIdentity(command);
  registerSync(command);
  registerOutbox(command);
  registerPeers(command);
  registerSessions(command);
  registerAsk(command);
  registerEnable(command);
  registerMigrate(command);
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
