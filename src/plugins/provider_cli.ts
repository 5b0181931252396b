/**
 * Provider CLI commands (`hermes <provider> …`) from a provider's
 * `cli.ts`.
 *
 * @module
 */

import { join, pathToFileURL, resolve } from "../_util/path.ts";
import { getConfigValue, loadConfig } from "../config/config.ts";
import { getHermesHome } from "../profile/hermes_home.ts";
import { log } from "../core/log.ts";
import {
  type DiscoveryOptions,
  findMemoryProvider,
  locateProvider,
} from "./plugin_discovery.ts";
import { errorText } from "../_util/error_text.ts";
import type { HermesConfig } from "../core/memory_provider.ts";
import type { CliBridge, SandboxedCli } from "../sandbox/sandboxed_cli.ts";
import type { ProviderCandidate } from "./plugin_discovery.ts";
import { lazyImport } from "../_util/lazy_import.ts";

// The sandbox's modules load by computed specifier, only where one starts:
// Deno does not read their graphs for `memory status` (cli_location.ts
// caches them as type dependencies).
/** `src/sandbox/transport.ts`. */
export const transportModule = (): Promise<
  typeof import("../sandbox/transport.ts")
> => lazyImport("../sandbox/transport.ts", import.meta.url);
/** `src/sandbox/sandboxed_cli.ts`. */
export const sandboxedCliModule = (): Promise<
  typeof import("../sandbox/sandboxed_cli.ts")
> => lazyImport("../sandbox/sandboxed_cli.ts", import.meta.url);
/** `src/plugins/provider_loader.ts`. */
export const providerLoaderModule = (): Promise<
  typeof import("./provider_loader.ts")
> => lazyImport("./provider_loader.ts", import.meta.url);

/**
 * Whether a provider's `cli.ts` runs in its sandbox process (a user or
 * project provider, outside a `deno compile` binary) rather than in the
 * CLI process (a bundled provider, or any in a compiled binary).
 */
export async function cliIsSandboxed(
  candidate: { source: string; dir?: string },
): Promise<boolean> {
  return candidate.source !== "bundled" && candidate.dir !== undefined &&
    !(await transportModule()).isCompiledBinary();
}

/**
 * Starts a user or project provider's `cli.ts` in its own sandbox process
 * under exactly the provider's grant (after the checks a provider's start
 * gets), with `io` bridged.
 *
 * @throws {Error} When it may not start or `cli.ts` fails to load.
 */
export async function openCliSandbox(
  name: string,
  io: CliBridge,
  options: DiscoveryOptions & { createDataDir?: boolean } = {},
): Promise<SandboxedCli | null> {
  const found = await locateProviderCli(name, {
    ...options,
    evenIfInactive: true,
  });
  if (found === null || !found.sandboxed) return null;
  const { checkedSandbox } = await providerLoaderModule();
  const { grant } = await checkedSandbox(
    found.candidate,
    found.hermesHome,
    found.config,
    "process",
  );
  return await (await sandboxedCliModule()).startProviderCli({
    name,
    specifier: found.url,
    description: found.description,
    grant,
    manifestPath: join(found.candidate.dir!, "plugin.yaml"),
    io,
    createDataDir: options.createDataDir,
  });
}

/** What a provider's `cli.ts` contributes. */
interface ProviderCli
  extends Pick<ProviderCliLocation, "name" | "help" | "description"> {
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
    const isFile = await Deno.stat(path).then((i) => i.isFile, () => false);
    return isFile ? pathToFileURL(path).href : null;
  }
  if (
    candidate.source === "bundled" && /^https?:\/\//.test(candidate.specifier)
  ) {
    return new URL("cli.ts", candidate.specifier).href;
  }
  return null;
}

/**
 * One export of a provider's `cli.ts` (`postSetup`, `saveConfig`, …),
 * imported into this process: only for host code ({@linkcode cliIsSandboxed}
 * false); a user provider's exports run in its sandbox.
 *
 * @throws {Error} When `cli.ts` exists but fails to load.
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

/** Where a provider's `cli.ts` is, found without importing it. */
export interface ProviderCliLocation {
  /** The provider's name: the command is `hermes <name>`. */
  name: string;
  url: string;
  help: string;
  /** The `description` of its `plugin.yaml` (`""` when none). */
  description: string;
  /** Whether it runs in its sandbox process ({@linkcode cliIsSandboxed}). */
  sandboxed: boolean;
  candidate: ProviderCandidate;
  hermesHome: string;
  config: HermesConfig;
}

/**
 * Finds the `cli.ts` of the active provider (with `evenIfInactive`, of
 * any discovered provider) without importing it.
 */
export async function locateProviderCli(
  name: string,
  options: ProviderCliOptions = {},
): Promise<ProviderCliLocation | null> {
  const hermesHome = resolve(options.hermesHome ?? getHermesHome());
  const config = options.config ?? await loadConfig({ hermesHome });
  const active = String(getConfigValue(config, "memory.provider") ?? "").trim();
  if (!options.evenIfInactive && active !== name) return null;
  const found = await locateProvider(name, { ...options, hermesHome, config });
  if (found === null) return null;
  const { candidate } = found;
  const url = await cliModuleUrl(candidate);
  if (url === null) return null;
  const description = candidate.manifest.description;
  return {
    name,
    url,
    help: description || `Manage ${name} memory plugin`,
    description,
    sandboxed: await cliIsSandboxed(candidate),
    candidate,
    hermesHome,
    config,
  };
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
 * Loads the CLI of a provider by importing only its `cli.ts`, into this
 * process. The CLI does so only where `cli.ts` is host code
 * ({@linkcode cliIsSandboxed} is false); a user provider's commands run in
 * its sandbox ({@linkcode openCliSandbox}).
 */
export async function loadProviderCli(
  name: string,
  options: ProviderCliOptions = {},
): Promise<ProviderCli | null> {
  try {
    const found = await locateProviderCli(name, options);
    if (found === null) return null;
    const module = await import(String(found.url)) as Record<string, unknown>;
    const registerCli = module.registerCli;
    if (typeof registerCli !== "function") {
      log(
        "debug",
        `Memory provider '${name}' cli.ts exports no registerCli(command): no commands added`,
      );
      return null;
    }
    return {
      name,
      help: found.help,
      description: found.description,
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

/** What a provider's {@linkcode DescribeStatus} hook is given. */
export interface ProviderStatusContext {
  /** The profile home. */
  hermesHome: string;
  /**
   * The parsed `config.yaml` (`{}` when it is missing or broken); in a user
   * provider's sandbox, only its own sections of it.
   */
  config: HermesConfig;
  /**
   * The CLI's environment (the profile's `.env` is not merged in); in a
   * user provider's sandbox, only the variables it is granted.
   */
  env: (name: string) => string | undefined;
  /**
   * Whether a connection probe may run. When `false` the hook touches no
   * network and leaves `connection` out (or reports it not attempted).
   */
  probe: boolean;
  /** The longest a probe may take, in milliseconds. */
  probeTimeoutMs: number;
  /**
   * `status` (settings, files, connection) or `doctor` (also the deeper
   * checks: queued or refused data, credentials).
   */
  detail: "status" | "doctor";
}

/** One setting in a {@linkcode ProviderStatusDescription}. */
export interface ProviderSettingStatus {
  /** The value in effect (a secret masked `...last4`; `null` when unset). */
  value: unknown;
  /** Where it came from, e.g. `honcho.json hosts.hermes`, `env`, `default`. */
  source: string;
  /** Whether the user set it anywhere (not a default). */
  set: boolean;
}

/** One settings file a provider reads, in a {@linkcode ProviderStatusDescription}. */
export interface ProviderFileStatus {
  /** The file's path. */
  path: string;
  /** What it is, e.g. `Honcho settings (read)`. */
  role: string;
  /** `json`, `yaml` or `env`. */
  format: "json" | "yaml" | "env";
  /** Whether it exists. */
  exists: boolean;
  /** Whether it holds secrets (then it must be mode `0600`). */
  secret: boolean;
  /** Why it does not parse, when it does not. */
  error?: {
    /** What is wrong. */
    message: string;
    /** 1-based line, when known. */
    line?: number;
    /** 1-based column, when known. */
    column?: number;
    /** What to do. */
    fix: string;
  };
}

/** The result of a provider's connection probe. */
export interface ProviderConnectionStatus {
  /** Whether a probe ran. */
  attempted: boolean;
  /** Whether the server answered and accepted the credentials. */
  ok: boolean;
  /** The server probed. */
  url: string | null;
  /** How long the probe took (ms), when it ran. */
  elapsedMs: number | null;
  /** What went wrong (`null` when ok). */
  error: string | null;
  /** What to do about it (`null` when ok). */
  fix: string | null;
}

/** A problem a provider found in its own state (for `hermes memory doctor`). */
export interface ProviderProblem {
  /** A stable id, e.g. `outbox.rejected`. */
  check: string;
  /** What is wrong. */
  message: string;
  /** What to do. */
  fix: string;
}

/** What a provider reports about its settings through {@linkcode DescribeStatus}. */
export interface ProviderStatusDescription {
  /** Its settings by key, from wherever the provider keeps them. */
  settings: Record<string, ProviderSettingStatus>;
  /** The settings files it reads or writes. */
  files: ProviderFileStatus[];
  /** The connection, when the provider has a cheap probe. */
  connection?: ProviderConnectionStatus;
  /**
   * Whether the provider is usable with these settings, judged on the host
   * from its settings alone (its `isAvailable()` answer). When given,
   * `hermes memory status` does not start the provider's sandbox.
   */
  available?: boolean;
  /** Why not, when `available` is false (its `unavailableReason()`). */
  unavailableReason?: string;
  /** What the configuration needs from the sandbox grant. */
  needs?: {
    /** Hosts (`host[:port]`) the configured server needs. */
    net?: string[];
    /** Files the configuration writes outside the provider's data folder. */
    write?: string[];
  };
  /** Provider-specific summaries (e.g. the outbox), shown as they are. */
  extra?: Record<string, unknown>;
  /** Problems found (doctor detail). */
  problems?: ProviderProblem[];
}

/**
 * The optional status hook of a provider's `cli.ts`:
 * `export function describeStatus(ctx)`. `hermes memory status` and
 * `hermes memory doctor` call it (a bundled provider's in the CLI process;
 * a user or project provider's in its sandbox process, under its grant,
 * with only its own sections of `config.yaml` and its granted variables),
 * so a provider that keeps its settings in its own file reports them;
 * secrets must come back masked, and the result must be plain data. It must stay cheap without `ctx.probe` and
 * bounded by `ctx.probeTimeoutMs` with it.
 */
export type DescribeStatus = (
  context: ProviderStatusContext,
) => ProviderStatusDescription | Promise<ProviderStatusDescription>;
