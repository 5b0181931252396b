/**
 * Loading a memory provider by name: discovery, the `plugins.disabled`
 * gate, the sandbox, skills.
 *
 * By default a provider runs in a permission-confined worker
 * ({@linkcode SandboxedMemoryProvider}); `sandbox: "none"` imports it
 * in-process, for trusted code and tests. Every load failure is a warning
 * naming the provider and the cause, and the result is `null`:
 *
 * - `Failed to load memory provider '<name>': <cause>`;
 * - `Memory provider '<name>' loaded but no provider instance found`.
 *
 * A sandboxed load refuses (never falls back to running unconfined) when
 * worker permissions are not enabled, when the host runs on a terminal
 * without `--no-prompt` (when that is detectable), when the host itself
 * lacks part of the grant, when the provider directory holds a symlink
 * leading out of it, and when provider code mentions `npm:` without
 * `permissions.npm: true`.
 *
 * @module
 */

import { extname, join, resolve } from "node:path";
import { getConfigPath, loadConfig } from "../config/config.ts";
import { getHermesHome } from "../profile/hermes_home.ts";
import { checkHostSafety } from "../sandbox/host_safety.ts";
import { log } from "../core/log.ts";
import type { HermesConfig, MemoryProvider } from "../core/memory_provider.ts";
import {
  extractMemoryProvider,
  type SkillRegistration,
} from "../core/plugin_context.ts";
import {
  candidateModuleDir,
  type DiscoveredProvider,
  type DiscoveryOptions,
  findEscapingSymlink,
  findMemoryProvider,
  isBuiltinSentinel,
  type ProviderCandidate,
  scanMemoryProviders,
} from "./plugin_discovery.ts";
import {
  grantForCandidate,
  missingHostPermissions,
} from "./provider_permissions.ts";
import {
  pruneInactiveProviderSkills,
  registerProviderSkill,
} from "./provider_skills.ts";
import {
  ProviderPermissionError,
  SandboxedMemoryProvider,
} from "../sandbox/sandboxed_provider.ts";
import { errorText } from "../_util/error_text.ts";

/** How a provider is run: in a confined worker, or in-process. */
export type SandboxMode = "worker" | "none";

/** Options of {@linkcode loadMemoryProvider}. */
export interface LoadProviderOptions extends DiscoveryOptions {
  /**
   * `worker`: a permission-confined worker; `none`: in-process (trusted
   * code and tests only).
   *
   * @default {"worker"}
   */
  sandbox?: SandboxMode;
  /**
   * Register the provider's skills (pruning other providers' skills).
   *
   * @default {name === memory.provider}
   */
  registerSkills?: boolean;
  /**
   * Check the host's Deno flags before a sandboxed load (see
   * `checkHostSafety`). Definite problems refuse the load; unconfirmed
   * ones are warned about once.
   *
   * @default {true}
   */
  hostCheck?: boolean;
  /**
   * How long a sandboxed load may take.
   *
   * @default {30000}
   */
  loadTimeoutMs?: number;
  /**
   * How long one sandboxed call may take.
   *
   * @default {30000}
   */
  callTimeoutMs?: number;
  /**
   * How long a sandbox worker may leave pings unanswered before it is
   * declared stuck and terminated.
   *
   * @default {5000}
   */
  unresponsiveAfterMs?: number;
}

const warned = new Set<string>();

function warnOnce(message: string): void {
  if (warned.has(message)) return;
  warned.add(message);
  log("warn", message);
}

/** Thrown inside the loader for a refusal; logged as the load failure. */
class LoadRefused extends Error {}

const SOURCE_EXTENSIONS = new Set([
  ".ts",
  ".tsx",
  ".mts",
  ".cts",
  ".js",
  ".jsx",
  ".mjs",
  ".cjs",
]);
const NPM_SPECIFIER_REGEXP = /["'`]npm:/;

/** The first source file under `dir` that mentions an `npm:` specifier. */
async function findNpmMention(dir: string): Promise<string | undefined> {
  const queue = [dir];
  let budget = 2000;
  while (queue.length > 0 && budget > 0) {
    const current = queue.shift() as string;
    for await (const entry of Deno.readDir(current)) {
      if (--budget <= 0) break;
      const path = join(current, entry.name);
      if (entry.isDirectory && entry.name !== "node_modules") {
        queue.push(path);
      } else if (entry.isFile && SOURCE_EXTENSIONS.has(extname(entry.name))) {
        const info = await Deno.stat(path);
        if (info.size > 4 << 20) continue;
        if (NPM_SPECIFIER_REGEXP.test(await Deno.readTextFile(path))) {
          return path;
        }
      }
    }
  }
  return undefined;
}

function configured(config: HermesConfig, key: string): unknown {
  let current: unknown = config;
  for (const part of key.split(".")) {
    if (current === null || typeof current !== "object") return undefined;
    current = (current as Record<string, unknown>)[part];
  }
  return current;
}

async function readConfigOrEmpty(hermesHome: string): Promise<HermesConfig> {
  try {
    return await loadConfig({ hermesHome });
  } catch (error) {
    warnOnce(`${errorText(error)}; memory providers load without its settings`);
    return {};
  }
}

interface Loaded {
  provider: MemoryProvider | null;
  skills: SkillRegistration[];
}

async function loadInProcess(candidate: ProviderCandidate): Promise<Loaded> {
  const skills: SkillRegistration[] = [];
  const module = await import(String(candidate.specifier));
  const provider = await extractMemoryProvider(
    module as Record<string, unknown>,
    {
      providerName: candidate.name,
      acceptInstances: candidate.source === "package",
      onSkill: (skill) => skills.push(skill),
    },
  );
  return { provider, skills };
}

async function loadSandboxed(
  candidate: ProviderCandidate,
  hermesHome: string,
  config: HermesConfig,
  options: LoadProviderOptions,
): Promise<Loaded> {
  if (options.hostCheck ?? true) {
    const report = await checkHostSafety();
    if (report.problems.length > 0) {
      throw new LoadRefused(report.problems.join("; "));
    }
    for (const warning of report.warnings) warnOnce(warning);
  }
  const grant = grantForCandidate(candidate, { hermesHome, config });
  const missing = missingHostPermissions(grant);
  if (missing.length > 0) {
    throw new LoadRefused(
      `its sandbox needs ${
        missing.join(" ")
      }, which the hermes process itself lacks (a worker cannot get more than its host): add them to the deno command ('hermes memory permissions' prints the flags)`,
    );
  }
  const dir = candidateModuleDir(candidate);
  if (dir !== undefined) {
    const escape = await findEscapingSymlink(dir);
    if (escape !== undefined) {
      throw new LoadRefused(
        `${escape.path} is a symlink to ${escape.target}, outside the provider's directory ${dir}, and would widen its sandbox: replace it with a copy`,
      );
    }
    if (!grant.npm) {
      const file = await findNpmMention(dir);
      if (file !== undefined) {
        const manifest = candidate.dir !== undefined
          ? join(candidate.dir, "plugin.yaml")
          : undefined;
        throw new LoadRefused(
          `${file} imports an npm: package, which its sandbox does not allow: set permissions.npm: true in ${
            manifest ?? "its plugin.yaml"
          } (or grant memory.permissions.${candidate.name}.npm: true in ${
            getConfigPath(hermesHome)
          })`,
        );
      }
    }
  }
  const skills: SkillRegistration[] = [];
  const provider = await SandboxedMemoryProvider.start(candidate, {
    grant,
    onSkill: (skill) => skills.push(skill),
    loadTimeoutMs: options.loadTimeoutMs,
    callTimeoutMs: options.callTimeoutMs,
    unresponsiveAfterMs: options.unresponsiveAfterMs,
  });
  return { provider, skills };
}

async function loadCandidate(
  candidate: ProviderCandidate,
  hermesHome: string,
  config: HermesConfig,
  options: LoadProviderOptions,
): Promise<MemoryProvider | null> {
  const name = candidate.name;
  let loaded: Loaded;
  try {
    loaded = (options.sandbox ?? "worker") === "none"
      ? await loadInProcess(candidate)
      : await loadSandboxed(candidate, hermesHome, config, options);
  } catch (error) {
    const cause = error instanceof ProviderPermissionError
      ? error.message.replace(/^Memory provider '[^']*' /, "it ")
      : errorText(error);
    log("warn", `Failed to load memory provider '${name}': ${cause}`);
    return null;
  }
  if (loaded.provider === null) {
    log(
      "warn",
      `Memory provider '${name}' loaded but no provider instance found`,
    );
    return null;
  }
  const registerSkills = options.registerSkills ??
    (configured(config, "memory.provider") === name);
  if (registerSkills) {
    pruneInactiveProviderSkills(name, { hermesHome });
    const providerDir = candidateModuleDir(candidate);
    for (const skill of loaded.skills) {
      try {
        registerProviderSkill(name, skill.name, skill.path, {
          description: skill.description,
          hermesHome,
          ...(providerDir !== undefined ? { providerDir } : {}),
        });
      } catch (error) {
        log(
          "debug",
          `Memory provider '${name}' skill '${skill.name}' not registered: ${
            errorText(error)
          }`,
        );
      }
    }
  }
  return loaded.provider;
}

/**
 * Loads a memory provider by name.
 *
 * @param name The provider's name (`memory.provider`).
 * @param options Sandbox mode, skills, home, config and timeouts.
 * @returns The provider, or `null`: a built-in sentinel or unknown name
 * (logged at debug), a provider disabled in `plugins.disabled`, or a load
 * failure (both warned).
 *
 * @example Loading the configured provider
 * ```ts ignore
 * import { loadConfig, loadMemoryProvider } from "@hermes/memory";
 * const config = await loadConfig();
 * const name = String((config.memory as Record<string, unknown>)?.provider ?? "");
 * const provider = await loadMemoryProvider(name, { config });
 * ```
 */
export async function loadMemoryProvider(
  name: string,
  options: LoadProviderOptions = {},
): Promise<MemoryProvider | null> {
  const wanted = name.trim();
  if (isBuiltinSentinel(wanted)) {
    log("debug", `Memory provider '${wanted}' means built-in memory only`);
    return null;
  }
  const hermesHome = resolve(options.hermesHome ?? getHermesHome());
  const config = options.config ?? await readConfigOrEmpty(hermesHome);
  const candidate = await findMemoryProvider(wanted, {
    ...options,
    hermesHome,
    config,
  });
  if (candidate === null) {
    log("debug", `Memory provider '${wanted}' not found in any plugin source`);
    return null;
  }
  const disabled = configured(config, "plugins.disabled");
  if (
    candidate.source !== "package" && Array.isArray(disabled) &&
    disabled.includes(wanted)
  ) {
    log(
      "warn",
      `Memory provider '${wanted}' is disabled by plugins.disabled in ${
        getConfigPath(hermesHome)
      }: run 'hermes plugins enable ${wanted}' or change memory.provider`,
    );
    return null;
  }
  return await loadCandidate(candidate, hermesHome, config, options);
}

/**
 * The availability probe of discovery: loads the provider without
 * registering skills, asks `isAvailable()`, and shuts a sandboxed one
 * down. Any failure counts as unavailable.
 *
 * @param candidate The provider (from discovery).
 * @param options Home, config, sandbox mode and timeouts.
 * @returns Whether it loaded and says it is available.
 *
 * @example
 * ```ts ignore
 * import { findMemoryProvider, probeMemoryProvider } from "@hermes/memory";
 * const candidate = await findMemoryProvider("honcho");
 * const ok = candidate !== null && await probeMemoryProvider(candidate);
 * ```
 */
export async function probeMemoryProvider(
  candidate: ProviderCandidate,
  options: LoadProviderOptions = {},
): Promise<boolean> {
  const hermesHome = resolve(options.hermesHome ?? getHermesHome());
  const config = options.config ?? await readConfigOrEmpty(hermesHome);
  const provider = await loadCandidate(candidate, hermesHome, config, {
    callTimeoutMs: 10_000,
    ...options,
    registerSkills: false,
  });
  if (provider === null) return false;
  try {
    return Boolean(await provider.isAvailable());
  } catch (error) {
    log(
      "debug",
      `Memory provider '${candidate.name}' isAvailable() failed: ${
        errorText(error)
      }`,
    );
    return false;
  } finally {
    if (provider instanceof SandboxedMemoryProvider) await provider.shutdown();
  }
}

/** Options of {@linkcode discoverMemoryProviders}. */
export interface DiscoverOptions extends DiscoveryOptions {
  /**
   * Load each provider (sandboxed, skills not registered) and ask
   * `isAvailable()`. When `false`, `available` is `null` and nothing is
   * imported.
   *
   * @default {true}
   */
  probe?: boolean;
  /**
   * Loads one provider for the probe.
   *
   * @default {probeMemoryProvider}
   */
  probeProvider?: (
    candidate: ProviderCandidate,
    options: DiscoveryOptions,
  ) => Promise<boolean>;
}

/**
 * Lists providers with their descriptions, sources and (when probed)
 * availability. Probing loads each provider in its sandbox without
 * registering skills, calls `isAvailable()` and shuts it down; any failure
 * counts as unavailable.
 *
 * @param options Home, config, directories and the probe.
 * @returns One entry per provider, in precedence order.
 *
 * @example
 * ```ts ignore
 * import { discoverMemoryProviders } from "@hermes/memory";
 * for (const p of await discoverMemoryProviders({ probe: false })) {
 *   console.log(`${p.name} (${p.source}): ${p.description}`);
 * }
 * ```
 */
export async function discoverMemoryProviders(
  options: DiscoverOptions = {},
): Promise<DiscoveredProvider[]> {
  const candidates = await scanMemoryProviders(options);
  const probe = options.probe ?? true;
  const result: DiscoveredProvider[] = [];
  for (const candidate of candidates) {
    let available: boolean | null = null;
    if (probe) {
      try {
        const probeProvider = options.probeProvider ??
          probeMemoryProvider;
        available = await probeProvider(candidate, options);
      } catch (error) {
        log(
          "debug",
          `Memory provider '${candidate.name}' availability probe failed: ${
            errorText(error)
          }`,
        );
        available = false;
      }
    }
    const entry: DiscoveredProvider = {
      name: candidate.name,
      description: candidate.manifest.description,
      source: candidate.source,
      available,
    };
    if (candidate.dir !== undefined) entry.dir = candidate.dir;
    result.push(entry);
  }
  return result;
}
