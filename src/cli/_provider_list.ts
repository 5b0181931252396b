// What the CLI shows of discovery: the providers there are and the one
// config.yaml selects, from manifests only. Apart from _plugins.ts (loading,
// permissions, provider CLIs) so a built-in-only status loads none of that.

import type { HermesConfig } from "../core/memory_provider.ts";
import {
  type DiscoveredProvider as Discovered,
  findMemoryProvider,
  isBuiltinSentinel,
  listMemoryProviderNames,
} from "../plugins/plugin_discovery.ts";
import { discoverMemoryProviders } from "../plugins/provider_listing.ts";
import { getConfigValue, loadConfig } from "../config/config.ts";
import { getHermesHome } from "../profile/hermes_home.ts";
import { join } from "../_util/path.ts";

/** `memory.provider` when it names an external provider, else `null`. */
export function activeProviderName(config: HermesConfig): string | null {
  const raw = getConfigValue(config, "memory.provider");
  const name = typeof raw === "string" ? raw.trim() : "";
  return name === "" || isBuiltinSentinel(name) ? null : name;
}

/**
 * The active provider of `config.yaml` read now, or `null` for none; a
 * broken config.yaml counts as none (status and setup report it).
 */
export function readActiveProvider(): Promise<string | null> {
  return loadConfig().then(activeProviderName, () => null);
}

/** A discovered provider, as the CLI lists it (without its directory). */
export type DiscoveredProvider = Omit<Discovered, "dir">;

/**
 * Lists providers with their availability decided from each manifest: no
 * provider code runs and no worker starts (status and list must never run
 * an unselected provider, nor a project plugin).
 */
export async function discoverProviders(): Promise<DiscoveredProvider[]> {
  return (await discoverMemoryProviders()).map(({ dir: _dir, ...p }) => p);
}

/** The names of all discovered providers (no import). */
export { listMemoryProviderNames as listProviderNames };

/**
 * When `$HERMES_HOME/plugins/<name>/` holds a Python provider (Hermes
 * Agent's `plugin.yaml` + `__init__.py`, no `mod.ts`): what it is, and what
 * to do; `undefined` otherwise.
 */
export function pythonProvider(
  name: string,
): { what: string; fix: string } | undefined {
  const dir = join(getHermesHome(), "plugins", name);
  if (name.includes("/") || !exists(join(dir, "__init__.py"))) return;
  return {
    what:
      `'${name}' in ${dir}/ is a Python provider (plugin.yaml + __init__.py, for Hermes Agent), which this module cannot run`,
    fix:
      "run it with Hermes Agent, add a TypeScript port of it (mod.ts) in that folder, or pick another provider with 'hermes memory setup'",
  };
}

/** The Python providers in `$HERMES_HOME/plugins/` (see {@linkcode pythonProvider}). */
export function pythonProviderNames(): string[] {
  try {
    return [...Deno.readDirSync(join(getHermesHome(), "plugins"))]
      .filter((e) => e.isDirectory && pythonProvider(e.name)).map((e) => e.name)
      .sort();
  } catch {
    return []; // No plugins/ folder.
  }
}

function exists(path: string): boolean {
  try {
    return Deno.statSync(path).isFile;
  } catch {
    return false;
  }
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

/** One discovered provider plugin, with whether it is `memory.provider`. */
export interface PluginReport extends DiscoveredProvider {
  active: boolean;
}

/** The discovered provider plugins, in discovery order, with an active marker. */
export async function listPluginReports(
  active: string | null,
): Promise<PluginReport[]> {
  return (await discoverProviders()).map((p) => ({
    ...p,
    active: p.name === active,
  }));
}
