/** The `hermes honcho …` commands and host-side hooks; imported on the host, never in the worker. @module */

import type { HermesConfig } from "../../../mod.ts";
import type {
  CliIo,
  HermesCommand,
  ProviderStatusContext,
  ProviderStatusDescription,
} from "../../../src/cli/mod.ts";
import { lazyImport } from "../../../src/provider/_bundled.ts";

type Register = (honcho: HermesCommand) => unknown;

const here = import.meta.url;

// Help order. Each module is read only when `hermes honcho` runs (see
// lazyImport): the status hook imports this file and must stay cheap.
const COMMANDS: readonly (() => Promise<Register>)[] = [
  async () =>
    (await lazyImport<typeof import("./cli/status.ts")>(
      "./cli/status.ts",
      here,
    ))
      .registerStatus,
  async () =>
    (await lazyImport<typeof import("./cli/setup.ts")>("./cli/setup.ts", here))
      .registerSetup,
  async () =>
    // strategy, peer, mode, tokens
    (await lazyImport<typeof import("./cli/setting_commands.ts")>(
      "./cli/setting_commands.ts",
      here,
    ))
      .registerSettingCommands,
  async () =>
    (await lazyImport<typeof import("./cli/identity.ts")>(
      "./cli/identity.ts",
      here,
    ))
      .registerIdentity,
  async () =>
    (await lazyImport<typeof import("./cli/sync.ts")>("./cli/sync.ts", here))
      .registerSync,
  async () =>
    (await lazyImport<typeof import("./cli/outbox.ts")>(
      "./cli/outbox.ts",
      here,
    ))
      .registerOutbox,
  async () =>
    (await lazyImport<typeof import("./cli/peers.ts")>("./cli/peers.ts", here))
      .registerPeers,
  async () =>
    (await lazyImport<typeof import("./cli/sessions.ts")>(
      "./cli/sessions.ts",
      here,
    ))
      .registerSessions,
  async () =>
    (await lazyImport<typeof import("./cli/ask.ts")>("./cli/ask.ts", here))
      .registerAsk,
  async () =>
    (await lazyImport<typeof import("./cli/enable.ts")>(
      "./cli/enable.ts",
      here,
    ))
      .registerEnable,
  async () =>
    (await lazyImport<typeof import("./cli/migrate.ts")>(
      "./cli/migrate.ts",
      here,
    ))
      .registerMigrate,
];

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
  const registers = await Promise.all(COMMANDS.map((load) => load()));
  for (const register of registers) register(command);
}

type Hook<A extends unknown[], R> = (...args: A) => Promise<R>;

/** The status hook of `hermes memory status` and `doctor`. */
export const describeStatus: Hook<
  [ProviderStatusContext],
  ProviderStatusDescription
> = async (context) =>
  (await lazyImport<typeof import("./cli/describe_status.ts")>(
    "./cli/describe_status.ts",
    here,
  )).describeHonchoStatus(context);

/** The setup wizard `hermes memory setup honcho` runs; `0` saved, `1` cancelled or failed. */
export const postSetup: Hook<[string, HermesConfig, CliIo], number> = async (
  ...args
) =>
  (await lazyImport<typeof import("./cli/setup.ts")>("./cli/setup.ts", here))
    .runPostSetup(...args);

/** `hermes memory setup honcho --yes --set key=value…`; `2` for a bad value. */
export const applySetup: Hook<
  [string, Record<string, unknown>, CliIo],
  number
> = async (...args) =>
  (await lazyImport<typeof import("./cli/_setup_save.ts")>(
    "./cli/_setup_save.ts",
    here,
  )).runApplySetup(...args);

/** Stores what setup collected: the sandboxed provider may read `honcho.json`, not write it. */
export async function saveConfig(
  values: Record<string, unknown>,
  hermesHome: string,
): Promise<void> {
  // Lazy, like the subcommands: the status hook loads this file.
  const { HonchoMemoryProvider } = await lazyImport<
    typeof import("./provider.ts")
  >("./provider.ts", here);
  await new HonchoMemoryProvider().saveConfig(values, hermesHome);
}
