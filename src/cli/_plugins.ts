// The CLI's one seam over the plugin API (area D). PROVISIONAL: built-in
// fallbacks until src/plugin_*.ts lands; then this file only re-exports.

import type { MemoryProvider } from "../memory_provider.ts";
import {
  discoverMemoryProviders,
  findMemoryProvider,
  listMemoryProviderNames,
} from "../plugin_discovery.ts";
import { denoRunFlags, providerPermissions } from "../provider_permissions.ts";
import type { HermesCommand } from "./hermes_command.ts";

export { isBuiltinSentinel } from "../plugin_discovery.ts";

/** A discovered provider, as the CLI lists it. */
export interface DiscoveredProvider {
  name: string;
  description: string;
  source: string;
  available: boolean | null;
}

/** Lists providers with their availability probe. */
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

export function loadProvider(_name: string): Promise<MemoryProvider | null> {
  return Promise.resolve(null);
}

export interface ProviderCli {
  name: string;
  description: string;
  registerCli(command: HermesCommand): void | Promise<void>;
}

export function loadCli(_name: string): Promise<ProviderCli | null> {
  return Promise.resolve(null);
}

export interface DependencyInfo {
  ready: boolean;
  summary: string;
  details: string[];
}

export function providerDependencies(
  _name: string,
): Promise<DependencyInfo | undefined> {
  return Promise.resolve(undefined);
}

export interface SandboxInfo {
  mode: string;
  read: string[];
  write: string[];
  env: string[];
  net: string[];
  npm: string[];
}

/** The provider's effective sandbox grant. */
export async function sandboxGrant(
  name: string,
  config: Record<string, unknown>,
): Promise<SandboxInfo | undefined> {
  const grant = await providerPermissions(name, { config });
  if (grant === null) return undefined;
  return {
    mode: "worker",
    read: grant.read.map((e) => e.value),
    write: grant.write.map((e) => e.value),
    env: grant.env.map((e) => e.value),
    net: grant.net.map((e) => e.value),
    npm: grant.npm ? ["allowed"] : [],
  };
}

/** Provider part of the host's `deno run` flags (the worker grant). */
export async function providerRunFlags(
  name: string,
  config: Record<string, unknown>,
): Promise<string[]> {
  const grant = await providerPermissions(name, { config });
  return grant === null ? [] : denoRunFlags(grant);
}

export interface PreparedDependencies {
  messages: string[];
}

export function prepareDependencies(
  _name: string,
): Promise<PreparedDependencies> {
  return Promise.resolve({ messages: [] });
}
