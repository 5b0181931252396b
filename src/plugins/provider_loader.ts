/**
 * Loading a memory provider by name: discovery, the `plugins.disabled`
 * gate, the sandbox, skills.
 *
 * @module
 */

import { join, resolve } from "../_util/path.ts";
import {
  getConfigPath,
  getConfigValue,
  loadConfigOrEmpty,
} from "../config/config.ts";
import { getHermesHome } from "../profile/hermes_home.ts";
import { checkHostSafety } from "../sandbox/host_safety.ts";
import {
  chooseTransport,
  type SandboxTransport,
} from "../sandbox/transport.ts";
import { log } from "../core/log.ts";
import type { HermesConfig, MemoryProvider } from "../core/memory_provider.ts";
import {
  extractMemoryProvider,
  type SkillRegistration,
} from "../core/plugin_context.ts";
import {
  candidateModuleDir,
  type DiscoveryOptions,
  findEscapingSymlink,
  findMemoryProvider,
  isBuiltinSentinel,
  type ProviderCandidate,
  warnOnce,
} from "./plugin_discovery.ts";
import {
  dataDirProblem,
  grantForCandidate,
  missingHostPermissions,
} from "./provider_permissions.ts";
import {
  pruneInactiveProviderSkills,
  registerProviderSkill,
} from "./provider_skills.ts";
import {
  SandboxedMemoryProvider,
  setMaxLiveProviders,
} from "../sandbox/sandboxed_provider.ts";
import type { SandboxFramework } from "../sandbox/sandbox_launch.ts";
import { ProviderPermissionError } from "../sandbox/denial.ts";
import { scanProviderSources } from "../sandbox/source_scan.ts";
import type { ProviderGrant } from "../sandbox/grant.ts";
import { errorText } from "../_util/error_text.ts";

/**
 * How a provider is run: sandboxed (`worker`) or in-process (`none`).
 *
 * @category Plugins: discovery, loading, permissions
 */
export type SandboxMode = "worker" | "none";

/**
 * Options of {@linkcode loadMemoryProvider}.
 *
 * @category Plugins: discovery, loading, permissions
 */
export interface LoadProviderOptions extends DiscoveryOptions {
  /**
   * `worker`: a permission-confined worker; `none`: in-process (trusted
   * code and tests only).
   *
   * @default {"worker"}
   */
  sandbox?: SandboxMode;
  /**
   * How the sandbox is carried: `process` (a `deno run` child) or `worker`
   * (a confined worker; the default in a `deno compile` binary).
   *
   * @default {chooseTransport()}
   */
  transport?: SandboxTransport;
  /**
   * The heap cap of a provider's sandbox process, in MiB.
   *
   * @default {512}
   */
  heapLimitMb?: number;
  /**
   * The most provider sandboxes this process runs at once (sets
   * `setMaxLiveProviders`' process-wide cap).
   *
   * @default {Infinity, or what an earlier load set}
   */
  maxLiveProviders?: number;
  /**
   * Register the provider's skills (pruning other providers' skills).
   *
   * @default {name === memory.provider}
   */
  registerSkills?: boolean;
  /** Called once its sandbox is started, before the provider has loaded. */
  onStarted?: () => void;
  /**
   * Check the host's Deno flags before a sandboxed load (`checkHostSafety`).
   *
   * @default {true}
   */
  hostCheck?: boolean;
  /**
   * Load only to inspect the provider (status, doctor): writes nothing.
   *
   * @default {false}
   */
  inspection?: boolean;
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
   * How long a sandbox may leave pings unanswered before it is declared stuck.
   *
   * @default {5000}
   */
  unresponsiveAfterMs?: number;
}

/** Thrown inside the loader for a refusal; logged as the load failure. */
class LoadRefused extends Error {}

/** The parts of `config.yaml` a provider is handed: `<name>`, `memory.provider`, `memory.<name>`; nothing else. */
export function providerConfigView(
  name: string,
  config: HermesConfig,
): HermesConfig {
  const view: HermesConfig = {};
  const own = config[name];
  if (own !== undefined) view[name] = own;
  const memory = config.memory;
  if (memory !== null && typeof memory === "object" && !Array.isArray(memory)) {
    const section: Record<string, unknown> = {};
    const m = memory as Record<string, unknown>;
    if (m.provider !== undefined) section.provider = m.provider;
    if (
      m[name] !== undefined && name !== "permissions" && name !== "packages"
    ) {
      section[name] = m[name];
    }
    view.memory = section;
  }
  return structuredClone(view);
}

/** A symlink at the top of the data directory leading out of it. */
async function dataDirEscape(dataDir: string): Promise<string | undefined> {
  try {
    const escape = await findEscapingSymlink(dataDir, { deep: false });
    return escape === undefined
      ? undefined
      : `${escape.path} is a symlink to ${escape.target}, outside its data directory ${dataDir}, and would widen its sandbox: replace it with a copy`;
  } catch {
    return undefined; // Not created yet.
  }
}

function readConfigOrEmpty(hermesHome: string): Promise<HermesConfig> {
  return loadConfigOrEmpty(
    hermesHome,
    (why) => warnOnce(`${why}; memory providers load without its settings`),
  );
}

interface Loaded {
  provider: MemoryProvider | null;
  skills: SkillRegistration[];
}

async function loadInProcess(
  candidate: ProviderCandidate,
  config: HermesConfig,
): Promise<Loaded> {
  const skills: SkillRegistration[] = [];
  const module = await import(String(candidate.specifier));
  const provider = await extractMemoryProvider(
    module as Record<string, unknown>,
    {
      providerName: candidate.name,
      acceptInstances: candidate.source === "package",
      hermesConfig: providerConfigView(candidate.name, config),
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
  const transport = chooseTransport(options.transport);
  // A sandbox process gets its own flags (--no-prompt, --cached-only, its
  // grant): only a worker depends on the host's.
  if (transport === "worker" && (options.hostCheck ?? true)) {
    const report = await checkHostSafety();
    if (report.problems.length > 0) {
      throw new LoadRefused(report.problems.join("; "));
    }
    for (const warning of report.warnings) warnOnce(warning);
  }
  const { grant, framework } = await checkedSandbox(
    candidate,
    hermesHome,
    config,
    transport,
  );
  if (options.maxLiveProviders !== undefined) {
    setMaxLiveProviders(options.maxLiveProviders);
  }
  const skills: SkillRegistration[] = [];
  const provider = await SandboxedMemoryProvider.start(candidate, {
    grant,
    framework,
    config: providerConfigView(candidate.name, config),
    onSkill: (skill) => skills.push(skill),
    onStarted: options.onStarted,
    loadTimeoutMs: options.loadTimeoutMs,
    callTimeoutMs: options.callTimeoutMs,
    unresponsiveAfterMs: options.unresponsiveAfterMs,
    transport,
    heapLimitMb: options.heapLimitMb,
    createDataDir: options.inspection !== true,
  });
  return { provider, skills };
}

/**
 * The grant and bootstrap of a provider's sandbox (or its `cli.ts`'s), after
 * the checks that refuse to start it: a data directory not its own, a
 * symlink out of its code, a forbidden npm import, a grant the host lacks.
 *
 * @throws {Error} Why it may not start (a `LoadRefused`).
 */
export async function checkedSandbox(
  candidate: ProviderCandidate,
  hermesHome: string,
  config: HermesConfig,
  transport: SandboxTransport,
): Promise<{ grant: ProviderGrant; framework: SandboxFramework }> {
  const problem = dataDirProblem(candidate.name, hermesHome);
  if (problem !== undefined) throw new LoadRefused(problem);
  const grant = grantForCandidate(candidate, { hermesHome, config });
  const missing = transport === "worker" ? missingHostPermissions(grant) : [];
  if (missing.length > 0) {
    throw new LoadRefused(
      `its sandbox needs ${
        missing.join(" ")
      }, which the hermes process itself lacks (a worker cannot get more than its host): add them to the deno command ('hermes memory permissions' prints the flags)`,
    );
  }
  let framework: SandboxFramework = "provider";
  const dir = candidateModuleDir(candidate);
  // Bundled providers ship with the framework and import only
  // @hermes/memory/provider (tests/project_hygiene_test.ts checks it).
  if (dir !== undefined && candidate.source !== "bundled") {
    const escape = await findEscapingSymlink(dir);
    if (escape !== undefined) {
      throw new LoadRefused(
        `${escape.path} is a symlink to ${escape.target}, outside the provider's directory ${dir}, and would widen its sandbox: replace it with a copy`,
      );
    }
    const scan = await scanProviderSources(dir);
    if (!grant.npm && scan.npmFile !== undefined) {
      const manifest = candidate.dir !== undefined
        ? join(candidate.dir, "plugin.yaml")
        : undefined;
      throw new LoadRefused(
        `${scan.npmFile} imports an npm: package, which its sandbox does not allow: set permissions.npm: true in ${
          manifest ?? "its plugin.yaml"
        } (or grant memory.permissions.${candidate.name}.npm: true in ${
          getConfigPath(hermesHome)
        })`,
      );
    }
    if (scan.fullFramework) framework = "full";
  }
  if (grant.dataDir !== undefined) {
    const escape = await dataDirEscape(grant.dataDir);
    if (escape !== undefined) throw new LoadRefused(escape);
  }
  return { grant, framework };
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
      ? await loadInProcess(candidate, config)
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
    (getConfigValue(config, "memory.provider") === name);
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
 * Loads a memory provider by name (`memory.provider`).
 *
 * @returns The provider, or `null` for a built-in sentinel or unknown name,
 * a provider in `plugins.disabled`, or a load failure (the last two warned).
 *
 * @category Plugins: discovery, loading, permissions
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
  const disabled = getConfigValue(config, "plugins.disabled");
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
 * The availability probe of discovery: loads the provider without skills,
 * asks `isAvailable()` and shuts it down; any failure counts as unavailable.
 *
 * @category Plugins: discovery, loading, permissions
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
    // Asking isAvailable() writes nothing.
    inspection: true,
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
