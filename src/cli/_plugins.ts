// The CLI's seam over running providers (loader, permissions, provider CLI,
// dependencies, status hooks); what discovery finds is _provider_list.ts.

import { join } from "../_util/path.ts";
import type {
  ConfigField,
  HermesConfig,
  MemoryProvider,
} from "../core/memory_provider.ts";
import type { HermesCommand } from "./hermes_command.ts";
import { type CliIo, PromptCancelled } from "./cli_io.ts";
import { setLogger } from "../core/log.ts";
import { findMemoryProvider } from "../plugins/plugin_discovery.ts";
import {
  approveCommand,
  denoRunFlags,
  grantForCandidate,
  missingHostPermissions,
  providerPermissions,
  reviewGrant,
} from "../plugins/provider_permissions.ts";
import {
  loadProviderCli,
  loadProviderCliExport,
  locateProviderCli,
  openCliSandbox,
  providerLoaderModule,
  type ProviderStatusContext,
  type ProviderStatusDescription,
  sandboxedCliModule,
  transportModule,
} from "../plugins/provider_cli.ts";
import type { CliBridge, SandboxedCli } from "../sandbox/sandboxed_cli.ts";
import type { LoadProviderOptions } from "../plugins/provider_loader.ts";
import {
  declaredDependencies,
  type DependencyStatus,
  prepareProviderDependencies,
  providerDependencyStatus,
} from "../plugins/provider_deps.ts";
import { errorText } from "../_util/error_text.ts";
import { terminalSafe } from "../core/terminal_text.ts";
import { shortDescription } from "./format.ts";
import { getHermesHome } from "../profile/hermes_home.ts";
import { loadConfig } from "../config/config.ts";
import type { ProviderCommandLine } from "./root_help.ts";
import type { RunGrant } from "./run_flags.ts";

export { isBuiltinSentinel } from "../plugins/plugin_discovery.ts";
export { DependencyInstallError } from "../plugins/provider_deps.ts";

/** A provider's `plugin.yaml` version and where it was found. */
export interface ProviderVersion {
  version: string | null;
  source: string;
}

/** The `version` of a provider's `plugin.yaml`, without loading it. */
export async function providerVersion(
  name: string,
): Promise<ProviderVersion | null> {
  const candidate = await findMemoryProvider(name);
  if (candidate === null) return null;
  const version = candidate.manifest.version?.trim();
  return { version: version ? version : null, source: candidate.source };
}

/**
 * Loads a provider in its sandbox without registering skills (the CLI
 * inspects, configures or replays; it never runs an agent session).
 * `inspection` loads for read-only commands: nothing is created on disk.
 * `config`: `config.yaml` as the caller already read it.
 */
export async function loadProvider(
  name: string,
  options: Pick<LoadProviderOptions, "inspection" | "config" | "onStarted"> =
    {},
): Promise<MemoryProvider | null> {
  const { loadMemoryProvider } = await providerLoaderModule();
  return await loadMemoryProvider(name, { ...options, registerSkills: false });
}

/** Ends a provider the CLI loaded (stops its sandbox worker). */
export async function closeProvider(
  provider: MemoryProvider | null,
): Promise<void> {
  if (provider === null) return;
  try {
    await provider.shutdown();
  } catch {
    // Closing is best effort.
  }
}

/**
 * A provider's config schema, loaded in its sandbox and closed again;
 * `error`: the first line of why it cannot load right now.
 */
export async function providerSchema(
  name: string,
  options: { inspection?: boolean } = {},
): Promise<{ schema: ConfigField[] } | { error: string }> {
  let provider: MemoryProvider | null = null;
  try {
    provider = await loadProvider(name, options);
    if (provider === null) {
      return { error: "the plugin registered no provider" };
    }
    return { schema: await provider.getConfigSchema() ?? [] };
  } catch (error) {
    return { error: errorText(error).split("\n", 1)[0] ?? "" };
  } finally {
    await closeProvider(provider);
  }
}

/**
 * The active provider's command line: host code (bundled, or any in a
 * compiled binary) attaches its tree; a user or project provider's `cli.ts`
 * runs in its sandbox process, which parses the arguments itself.
 */
interface ProviderCli {
  name: string;
  description: string;
  registerCli?(command: HermesCommand): void | Promise<void>;
  sandboxed?: { run(args: readonly string[], io: CliIo): Promise<number> };
}

/**
 * The command a provider's `cli.ts` adds, as the root help lists it (its
 * name and the summary of its `plugin.yaml` description), without
 * importing `cli.ts`; `undefined` when the provider has no `cli.ts`.
 */
export async function describeProviderCommand(
  name: string,
): Promise<ProviderCommandLine | undefined> {
  const candidate = await findMemoryProvider(name);
  if (candidate?.dir === undefined) return undefined;
  const cli = await Deno.stat(join(candidate.dir, "cli.ts")).catch(() => null);
  if (!cli?.isFile) return undefined;
  return {
    name,
    summary: shortDescription(
      candidate.manifest.description || `Manage ${name} memory plugin`,
    ),
  };
}

/**
 * Loads the `cli.ts` of the active provider (`null` when it has none);
 * with `evenIfInactive`, of any discovered provider (its `enable` and
 * `setup` are how it is turned on).
 */
export async function loadCli(
  name: string,
  evenIfInactive = false,
): Promise<ProviderCli | null> {
  let found;
  try {
    found = await locateProviderCli(name, { evenIfInactive });
  } catch {
    found = null; // Reported by loadProviderCli below, at debug.
  }
  if (found?.sandboxed) {
    return {
      name,
      description: found.help,
      sandboxed: {
        async run(args: readonly string[], io: CliIo): Promise<number> {
          let sandbox: SandboxedCli | null;
          try {
            sandbox = await openCliSandbox(name, io);
          } catch (error) {
            io.stderr(
              `error: the command line of memory provider '${name}' did not load: ${
                terminalSafe(errorText(error))
              }\n`,
            );
            return 1;
          }
          if (sandbox === null) return 1;
          try {
            return await sandbox.run(args);
          } finally {
            sandbox.close();
          }
        },
      },
    };
  }
  const cli = await loadProviderCli(name, { evenIfInactive });
  if (cli === null) return null;
  return {
    name: cli.name,
    description: cli.help,
    registerCli: (command: HermesCommand) => cli.registerCli(command),
  };
}

/**
 * The subcommands a provider's `cli.ts` adds (`enable`, `setup`, …):
 * registered on `scratch()` for host code, reported by its sandbox for a
 * user provider. Empty when it has none or fails to load.
 */
export async function providerSubcommands(
  name: string,
  scratch: () => HermesCommand,
): Promise<string[]> {
  try {
    const cli = await loadCli(name, true);
    if (cli === null) return [];
    if (cli.sandboxed !== undefined) {
      // A probe for a hint: the provider's notices belong to its own runs.
      const previous = setLogger({ log(): void {} });
      try {
        const sandbox = await openCliSandbox(
          name,
          (await sandboxedCliModule()).switchableBridge().bridge,
          { createDataDir: false },
        );
        if (sandbox === null) return [];
        sandbox.close();
        return sandbox.description.commands.map((c) => c.name);
      } finally {
        setLogger(previous);
      }
    }
    const probe = scratch();
    await cli.registerCli?.(probe);
    return probe.commands.map((c) => c.name());
  } catch {
    return [];
  }
}

type SandboxCall = (
  io: CliBridge | undefined,
  args: unknown[],
  timeoutMs?: number,
) => Promise<unknown>;

/**
 * One export of a provider's `cli.ts` (`null` when it has none). Host code
 * (a bundled provider's) is imported; a user provider's runs in its sandbox
 * process through `viaSandbox` (which ends the sandbox after one call). Only
 * the provider asked for is loaded.
 */
async function cliExport<F>(
  name: string,
  exported: string,
  viaSandbox: (call: SandboxCall) => F,
): Promise<F | null> {
  const found = await locateProviderCli(name, { evenIfInactive: true })
    .catch(() => null);
  if (found === null || !found.sandboxed) {
    return await loadProviderCliExport(name, exported) as F | null;
  }
  const late = (await sandboxedCliModule()).switchableBridge();
  const sandbox: SandboxedCli | null = await openCliSandbox(
    name,
    late.bridge,
    // A status hook is read-only: it may not create the data directory.
    { createDataDir: exported !== "describeStatus" },
  );
  if (sandbox === null) {
    return await loadProviderCliExport(name, exported) as F | null;
  }
  if (!sandbox.description.exports.includes(exported)) {
    sandbox.close();
    return null;
  }
  return viaSandbox(async (io, args, timeoutMs) => {
    late.use(io);
    try {
      return await sandbox.call(exported, args, timeoutMs);
    } catch (error) {
      // The user cancelled a prompt the sandboxed hook asked.
      if (error instanceof Error && error.name === "PromptCancelled") {
        throw new PromptCancelled(error.message, { cause: error });
      }
      throw error;
    } finally {
      sandbox.close();
    }
  });
}

/**
 * A setup hook a provider's `cli.ts` exports, called `(hermesHome, value,
 * io)`; resolves to an exit code (or nothing for success). `postSetup` is
 * its setup wizard (`value`: `config.yaml`; the provider itself runs
 * without a terminal, a user provider's gets the terminal bridged and only
 * its own sections of `config.yaml`); `applySetup` its non-interactive
 * setup (`value`: exactly the `--set` values, converted to their schema
 * types).
 */
export type HostSetup = (
  hermesHome: string,
  value: Record<string, unknown>,
  io: CliIo,
) => unknown;

/** The `postSetup` or `applySetup` of a provider's `cli.ts`. */
export function loadHostSetup(
  name: string,
  hook: "postSetup" | "applySetup",
): Promise<HostSetup | null> {
  return cliExport<HostSetup>(
    name,
    hook,
    (call) => async (hermesHome, value, io) =>
      call(io, [
        hermesHome,
        hook === "postSetup" ? await ownConfig(name, value) : value,
        (await sandboxedCliModule()).BRIDGED_IO,
      ]),
  );
}

/**
 * The `saveConfig(values, hermesHome)` of a provider's `cli.ts`: the bundled
 * Honcho, whose `honcho.json` lies outside its sandbox's data directory,
 * saves setup values in the CLI; a user provider's runs under its grant.
 */
export function loadHostSaveConfig(
  name: string,
): Promise<
  ((values: Record<string, unknown>, hermesHome: string) => unknown) | null
> {
  return cliExport(
    name,
    "saveConfig",
    (call) => (values: Record<string, unknown>, hermesHome: string) =>
      call(undefined, [values, hermesHome]),
  );
}

/** Dependency readiness: one summary line, then details (missing packages, install commands). */
export type DependencyInfo = Pick<
  DependencyStatus,
  "ready" | "summary" | "details"
>;

/** Dependency readiness, or `undefined` when it cannot be told. */
export async function providerDependencies(
  name: string,
): Promise<DependencyInfo | undefined> {
  try {
    const status = await providerDependencyStatus(name);
    if (status === null) return undefined;
    const { ready, summary, details } = status;
    return { ready, summary, details };
  } catch (error) {
    return {
      ready: false,
      summary: "cannot be checked",
      details: [errorText(error)],
    };
  }
}

/** A provider's effective sandbox grant (its `read`, `write`, `env` and `net` lists as a `deno run` grant's). */
export interface SandboxInfo extends Omit<RunGrant, "import"> {
  /** Where it runs: `worker` (permission-confined) or `none`. */
  mode: string;
  /** The `net` hosts granted because the user wrote them in the provider's settings (honcho.json `baseUrl`). */
  netFromSettings: string[];
  npm: string[];
  /** What its manifest asks for that the user has not approved (`env X`). */
  notApproved: string[];
  /** The command that approves it (set when `notApproved` is not empty). */
  approve?: string;
}

export async function sandboxGrant(
  name: string,
  config: Record<string, unknown>,
): Promise<SandboxInfo | undefined> {
  const candidate = await findMemoryProvider(name, { config });
  if (candidate === null) return undefined;
  const review = reviewGrant(candidate, { config });
  const grant = grantForCandidate(candidate, { config }, review);
  const notApproved = review.requested.filter((e) => !e.approved && !e.refused)
    .map((e) => `${e.key} ${e.path ?? e.value}`);
  return {
    // Where it runs: its own process, or a worker in a compiled binary.
    mode: (await transportModule()).chooseTransport(),
    read: grant.read.map((e) => e.value),
    write: grant.write.map((e) => e.value),
    env: grant.env.map((e) => e.value),
    net: grant.net.map((e) => e.value),
    netFromSettings: grant.net.filter((e) => e.from === "settings").map((e) =>
      e.value
    ),
    npm: grant.npm ? ["allowed"] : [],
    notApproved,
    ...(notApproved.length > 0 ? { approve: approveCommand(name) } : {}),
  };
}

/**
 * The parts of a provider's sandbox grant this process does not hold, as
 * `deno run` flags (empty when it can start the provider).
 */
export async function missingProviderGrant(name: string): Promise<string[]> {
  const grant = await providerPermissions(name);
  return grant === null ? [] : missingHostPermissions(grant);
}

/**
 * Provider part of the host's `deno run` flags: the worker grant, plus
 * `--allow-run=<deno>` when the provider declares dependencies (checking
 * and caching them runs `deno install`).
 */
export async function providerRunFlags(
  name: string,
  config: Record<string, unknown>,
  options: { approveAll?: boolean } = {},
): Promise<string[]> {
  const grant = await providerPermissions(name, {
    config,
    approveAll: options.approveAll,
  });
  if (grant === null) return [];
  const flags = denoRunFlags(grant);
  const candidate = await findMemoryProvider(name, { config });
  let declared = 0;
  try {
    declared = candidate ? (await declaredDependencies(candidate)).length : 0;
  } catch {
    declared = 0; // A broken deno.json is reported by status and setup.
  }
  if (declared > 0) flags.push(`--allow-run=${Deno.execPath()}`);
  return flags;
}

/** Caches the provider's declared dependencies; throws `DependencyInstallError`. */
export { prepareProviderDependencies as prepareDependencies };

export type {
  ProviderConnectionStatus,
  ProviderProblem,
  ProviderStatusDescription,
} from "../plugins/provider_cli.ts";

/**
 * Asks a provider's status hook (`describeStatus` of its `cli.ts`; a user
 * provider's in its sandbox) about its settings, files and connection:
 * `null` when it has none, `error` when it fails to load or throws.
 */
export async function describeProviderStatus(
  name: string,
  context: ProviderStatusContext,
): Promise<
  { description: ProviderStatusDescription | null; error?: string }
> {
  try {
    // A project plugin never runs on a status command (provider_report.ts).
    if ((await findMemoryProvider(name))?.source === "project") {
      return { description: null };
    }
    const hook = await cliExport<
      (context: ProviderStatusContext) => unknown
    >(
      name,
      "describeStatus",
      (call) => async ({ env: _env, config, ...rest }) =>
        // Bounded like the probe it may run, plus room for its start.
        await call(
          undefined,
          [{ ...rest, config: await ownConfig(name, config) }],
          STATUS_HOOK_GRACE_MS + Math.max(0, context.probeTimeoutMs),
        ),
    );
    const description = hook === null ? null : await hook(context);
    return { description: description as ProviderStatusDescription | null };
  } catch (error) {
    return { description: null, error: errorText(error) };
  }
}

/**
 * The description of the provider's status hook in the active profile
 * (`null`: none, or it failed); with `probe`, its connection test too (at
 * most 5 s). `config` defaults to `config.yaml` read afresh.
 */
export async function providerStatusNow(
  name: string,
  io: CliIo,
  probe: boolean,
  config?: HermesConfig,
): Promise<ProviderStatusDescription | null> {
  return (await describeProviderStatus(name, {
    hermesHome: getHermesHome(),
    config: config ?? await loadConfig().catch(() => ({})),
    env: (variable) => io.env(variable),
    probe,
    probeTimeoutMs: probe ? 5_000 : 0,
    detail: "status",
  })).description;
}

/** How much longer than its probe a sandboxed status hook may take (its start). */
const STATUS_HOOK_GRACE_MS = 10_000;

/** The provider's own sections of `config.yaml`: all its sandbox is handed. */
async function ownConfig(
  name: string,
  config: HermesConfig,
): Promise<HermesConfig> {
  return (await providerLoaderModule()).providerConfigView(name, config);
}
