// The CLI's one seam over the plugin API (discovery, loader, permissions,
// provider CLI, dependencies): the commands import from here only, so the
// shapes the CLI shows are decided in one place.

import { chooseTransport } from "../sandbox/transport.ts";
import { join } from "node:path";
import type { HermesConfig, MemoryProvider } from "../core/memory_provider.ts";
import type { HermesCommand } from "./hermes_command.ts";
import { type CliIo, PromptCancelled } from "./cli_io.ts";
import { setLogger } from "../core/log.ts";
import {
  findMemoryProvider,
  listMemoryProviderNames,
} from "../plugins/plugin_discovery.ts";
import {
  approveCommand,
  denoRunFlags,
  missingHostPermissions,
  providerPermissions,
  reviewGrant,
} from "../plugins/provider_permissions.ts";
import { discoverMemoryProviders } from "../plugins/provider_listing.ts";
import {
  type DescribeStatus,
  loadProviderCli,
  loadProviderCliExport,
  locateProviderCli,
  openCliSandbox,
  type ProviderStatusContext,
  type ProviderStatusDescription,
} from "../plugins/provider_cli.ts";
import {
  BRIDGED_IO,
  type CliBridge,
  type SandboxedCli,
  switchableBridge,
} from "../sandbox/sandboxed_cli.ts";
import {
  declaredDependencies,
  prepareProviderDependencies,
  providerDependencyStatus,
} from "../plugins/provider_deps.ts";
import { errorText } from "../_util/error_text.ts";
import { terminalSafe } from "../core/terminal_text.ts";
import { shortDescription } from "./format.ts";
import type { ProviderCommandLine } from "./root_help.ts";

export { isBuiltinSentinel } from "../plugins/plugin_discovery.ts";
export { DependencyInstallError } from "../plugins/provider_deps.ts";

/** A discovered provider, as the CLI lists it. */
export interface DiscoveredProvider {
  name: string;
  description: string;
  source: string;
  available: boolean | null;
}

/**
 * Lists providers with their availability decided from each manifest: no
 * provider code runs and no worker starts (status and list must never run
 * an unselected provider, nor a project plugin).
 */
export async function discoverProviders(): Promise<DiscoveredProvider[]> {
  return (await discoverMemoryProviders()).map((p) => ({
    name: p.name,
    description: p.description,
    source: p.source,
    available: p.available,
  }));
}

/** The names of all discovered providers (no import). */
export function listProviderNames(): Promise<string[]> {
  return listMemoryProviderNames();
}

/** Where a provider was found. */
export interface ProviderLocation {
  dir: string;
  source: string;
}

/** Finds a provider by name without loading it. */
export async function locateProvider(
  name: string,
): Promise<ProviderLocation | null> {
  const candidate = await findMemoryProvider(name);
  if (candidate === null) return null;
  return {
    dir: candidate.dir ?? candidate.specifier,
    source: candidate.source,
  };
}

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
 */
export async function loadProvider(
  name: string,
  options: { inspection?: boolean } = {},
): Promise<MemoryProvider | null> {
  // The sandbox is loaded only by the commands that start a provider.
  const { loadMemoryProvider } = await import("../plugins/provider_loader.ts");
  return await loadMemoryProvider(name, {
    registerSkills: false,
    inspection: options.inspection === true,
  });
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

/** The active provider's command line contribution. */
interface ProviderCli {
  name: string;
  description: string;
  /**
   * Host code (a bundled provider, or any in a compiled binary): attaches
   * the tree to the host's command.
   */
  registerCli?(command: HermesCommand): void | Promise<void>;
  /**
   * A user or project provider: its `cli.ts` runs in its sandbox process,
   * which parses the arguments after `hermes <name>` itself.
   */
  sandboxed?: {
    /**
     * Runs `hermes <name> <args…>` in the sandbox.
     *
     * @param args The arguments after the provider's name.
     * @param io Where output goes and prompts are asked.
     * @returns The exit code.
     */
    run(args: readonly string[], io: CliIo): Promise<number>;
  };
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
  try {
    if (!(await Deno.stat(join(candidate.dir, "cli.ts"))).isFile) {
      return undefined;
    }
  } catch {
    return undefined;
  }
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
 * registered on a scratch command for host code, reported by its sandbox
 * for a user provider. Empty when it has none or fails to load.
 *
 * @param name The provider.
 * @param scratch A fresh command to register host code on.
 * @returns The subcommand names.
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
          switchableBridge().bridge,
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

/**
 * One export of a user provider's sandboxed `cli.ts`, as a function that
 * runs it there with the given `io` (then ends the sandbox); `null` when
 * `cli.ts` lacks it; `undefined` when the provider's `cli.ts` is host code
 * or missing (the caller imports it on the host).
 */
async function sandboxedExport(
  name: string,
  exported: string,
): Promise<
  | ((
    io: CliBridge | undefined,
    args: unknown[],
    timeoutMs?: number,
  ) => Promise<unknown>)
  | null
  | undefined
> {
  const found = await locateProviderCli(name, { evenIfInactive: true })
    .catch(() => null);
  if (found === null || !found.sandboxed) return undefined;
  const late = switchableBridge();
  const sandbox: SandboxedCli | null = await openCliSandbox(
    name,
    late.bridge,
    // A status hook is read-only: it may not create the data directory.
    { createDataDir: exported !== "describeStatus" },
  );
  if (sandbox === null) return undefined;
  if (!sandbox.description.exports.includes(exported)) {
    sandbox.close();
    return null;
  }
  return async (io, args, timeoutMs) => {
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
  };
}

/**
 * A setup wizard a provider exports as `postSetup` from its `cli.ts` (the
 * provider itself runs without a terminal): a bundled provider's runs in
 * the CLI, a user provider's in its sandbox process with the terminal
 * bridged. Resolves to an exit code (or nothing for success).
 */
export type HostSetup = (
  hermesHome: string,
  config: HermesConfig,
  io: CliIo,
) => unknown;

/**
 * The `postSetup(hermesHome, config, io)` of a provider's `cli.ts`, or
 * `null` when it has none. Only the provider being set up is loaded (the
 * user named or picked it); a user provider's gets only its own sections
 * of `config.yaml`.
 */
export async function loadHostSetup(name: string): Promise<HostSetup | null> {
  const sandboxed = await sandboxedExport(name, "postSetup");
  if (sandboxed !== undefined) {
    return sandboxed === null
      ? null
      : async (hermesHome, config, io) =>
        sandboxed(io, [hermesHome, await ownConfig(name, config), BRIDGED_IO]);
  }
  const hook = await hostCliExport(name, "postSetup");
  return typeof hook === "function" ? hook as HostSetup : null;
}

/**
 * A provider's non-interactive setup, exported by its `cli.ts` as
 * `applySetup(hermesHome, values, io)`: applies exactly the `--set` values
 * (converted to their schema types) and returns the exit code.
 */
export type HostApplySetup = (
  hermesHome: string,
  values: Record<string, unknown>,
  io: CliIo,
) => unknown;

/**
 * The `applySetup(hermesHome, values, io)` of a provider's `cli.ts`, or
 * `null` when it has none (a user provider's runs in its sandbox). Only the
 * provider being set up is loaded.
 */
export async function loadHostApplySetup(
  name: string,
): Promise<HostApplySetup | null> {
  const sandboxed = await sandboxedExport(name, "applySetup");
  if (sandboxed !== undefined) {
    return sandboxed === null
      ? null
      : (hermesHome, values, io) =>
        sandboxed(io, [hermesHome, values, BRIDGED_IO]);
  }
  const hook = await hostCliExport(name, "applySetup");
  return typeof hook === "function" ? hook as HostApplySetup : null;
}

/** One export of host code (a bundled provider's `cli.ts`). */
function hostCliExport(name: string, exported: string): Promise<unknown> {
  return loadProviderCliExport(name, exported);
}

/**
 * The `saveConfig(values, hermesHome)` of a provider's `cli.ts`, or
 * `null`: the bundled Honcho, whose settings file lies outside its
 * sandbox's data directory (`honcho.json`), saves setup values in the CLI;
 * a user provider's runs in its sandbox under its grant.
 */
export async function loadHostSaveConfig(
  name: string,
): Promise<
  ((values: Record<string, unknown>, hermesHome: string) => unknown) | null
> {
  const sandboxed = await sandboxedExport(name, "saveConfig");
  if (sandboxed !== undefined) {
    return sandboxed === null
      ? null
      : (values, hermesHome) => sandboxed(undefined, [values, hermesHome]);
  }
  return await loadProviderCliExport(name, "saveConfig") as
    | ((values: Record<string, unknown>, hermesHome: string) => unknown)
    | null;
}

export interface DependencyInfo {
  ready: boolean;
  summary: string;
  details: string[];
}

/** Dependency readiness, or `undefined` when it cannot be told. */
export async function providerDependencies(
  name: string,
): Promise<DependencyInfo | undefined> {
  try {
    const status = await providerDependencyStatus(name);
    if (status === null) return undefined;
    return {
      ready: status.ready,
      summary: status.summary,
      details: status.details,
    };
  } catch (error) {
    return {
      ready: false,
      summary: "cannot be checked",
      details: [errorText(error)],
    };
  }
}

export interface SandboxInfo {
  mode: string;
  read: string[];
  write: string[];
  env: string[];
  net: string[];
  npm: string[];
  /** What its manifest asks for that the user has not approved (`env X`). */
  notApproved: string[];
  /** The command that approves it (set when `notApproved` is not empty). */
  approve?: string;
}

/** The provider's effective sandbox grant. */
export async function sandboxGrant(
  name: string,
  config: Record<string, unknown>,
): Promise<SandboxInfo | undefined> {
  const candidate = await findMemoryProvider(name, { config });
  if (candidate === null) return undefined;
  const review = reviewGrant(candidate, { config });
  const grant = await providerPermissions(name, { config });
  if (grant === null) return undefined;
  const notApproved = review.requested.filter((e) => !e.approved).map((e) =>
    `${e.key} ${e.value}`
  );
  return {
    // Where it runs: its own process, or a worker in a compiled binary.
    mode: chooseTransport(),
    read: grant.read.map((e) => e.value),
    write: grant.write.map((e) => e.value),
    env: grant.env.map((e) => e.value),
    net: grant.net.map((e) => e.value),
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

export interface PreparedDependencies {
  messages: string[];
}

/**
 * Caches the provider's declared dependencies.
 * Throws `DependencyInstallError` on failure.
 */
export async function prepareDependencies(
  name: string,
): Promise<PreparedDependencies> {
  const result = await prepareProviderDependencies(name);
  return { messages: result.messages };
}

export type {
  ProviderConnectionStatus,
  ProviderStatusDescription,
} from "../plugins/provider_cli.ts";

/**
 * Asks a provider's status hook (`describeStatus` of its `cli.ts`; a user
 * provider's in its sandbox) about its settings, files and connection. Resolves to `null`
 * when it has none; a hook that fails to load or throws is reported as
 * `error`.
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
    const sandboxed = await sandboxedExport(name, "describeStatus");
    if (sandboxed !== undefined) {
      if (sandboxed === null) return { description: null };
      const { env: _env, config, ...rest } = context;
      // Bounded like the probe it may run, plus room for its start.
      const description = await sandboxed(undefined, [
        { ...rest, config: await ownConfig(name, config) },
      ], STATUS_HOOK_GRACE_MS + Math.max(0, context.probeTimeoutMs));
      return {
        description: description as ProviderStatusDescription | null,
      };
    }
    const hook = await loadProviderCliExport(name, "describeStatus") as
      | DescribeStatus
      | null;
    if (hook === null) return { description: null };
    return { description: await hook(context) };
  } catch (error) {
    return { description: null, error: errorText(error) };
  }
}

/**
 * How much longer than its probe timeout a sandboxed status hook may take
 * before `hermes memory status` reports it as failed (stretched under load).
 */
const STATUS_HOOK_GRACE_MS = 10_000;

/** The provider's own sections of `config.yaml`: all its sandbox is handed. */
async function ownConfig(
  name: string,
  config: HermesConfig,
): Promise<HermesConfig> {
  const { providerConfigView } = await import(
    "../plugins/provider_loader.ts"
  );
  return providerConfigView(name, config);
}
