// The CLI's one seam over the plugin API (area D). PROVISIONAL: built-in
// fallbacks until src/plugin_*.ts lands; then this file only re-exports.

import type { MemoryProvider } from "../memory_provider.ts";
import type { HermesCommand } from "./hermes_command.ts";

const SENTINELS = new Set(["", "default", "builtin", "built-in", "none"]);

export function isBuiltinSentinel(value: unknown): boolean {
  return typeof value === "string" &&
    SENTINELS.has(value.trim().toLowerCase());
}

export interface DiscoveredProvider {
  name: string;
  description: string;
  source: string;
  available: boolean;
}

export function discoverProviders(): Promise<DiscoveredProvider[]> {
  return Promise.resolve([]);
}

export function listProviderNames(): Promise<string[]> {
  return Promise.resolve([]);
}

export interface ProviderLocation {
  dir: string;
  source: string;
}

export function locateProvider(
  _name: string,
): Promise<ProviderLocation | null> {
  return Promise.resolve(null);
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

export function sandboxGrant(
  _name: string,
  _config: Record<string, unknown>,
): Promise<SandboxInfo | undefined> {
  return Promise.resolve(undefined);
}

export interface PreparedDependencies {
  messages: string[];
}

export function prepareDependencies(
  _name: string,
): Promise<PreparedDependencies> {
  return Promise.resolve({ messages: [] });
}

/** Provider part of the host's `deno run` flags (the worker grant). */
export function providerRunFlags(
  _name: string,
  _config: Record<string, unknown>,
): Promise<string[]> {
  return Promise.resolve([]);
}
