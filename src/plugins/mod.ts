/**
 * `@hermes/memory/plugins`: finding, approving and loading memory providers
 * yourself, for a host that does more than `openMemory` (a gateway
 * serving many profiles, a tool that lists or probes providers).
 *
 * Who imports it: a library host or gateway operator. It starts with
 * {@linkcode loadMemoryProvider} (a provider in its own sandboxed process,
 * under the grant the user approved) and {@linkcode setMaxLiveProviders}
 * (how many provider processes may live at once). An agent needs only
 * `@hermes/memory`'s `openMemory`.
 *
 * @example A gateway loading one profile's provider
 * ```ts ignore
 * import { MemoryManager } from "jsr:@hermes/memory@^0.1";
 * import {
 *   loadMemoryProvider,
 *   setMaxLiveProviders,
 * } from "jsr:@hermes/memory@^0.1/plugins";
 *
 * setMaxLiveProviders(8);
 * const manager = new MemoryManager();
 * const provider = await loadMemoryProvider("honcho");
 * if (provider) await manager.addProvider(provider);
 * ```
 *
 * @module
 */

// Loading and probing
export {
  loadMemoryProvider,
  type LoadProviderOptions,
  probeMemoryProvider,
  type SandboxMode,
} from "./provider_loader.ts";
export {
  liveProviderCount,
  SandboxedMemoryProvider,
  setMaxLiveProviders,
} from "../sandbox/sandboxed_provider.ts";
export type { SandboxTransport } from "../sandbox/transport.ts";
// Discovery and manifests
export {
  discoverMemoryProviders,
  type DiscoverOptions,
} from "./provider_listing.ts";
export type {
  DiscoveredProvider,
  DiscoveryOptions,
  ProviderCandidate,
  ProviderSource,
} from "./plugin_discovery.ts";
export {
  type ExternalDependency,
  type ManifestAvailability,
  type ManifestPermissions,
  type PluginManifest,
  PluginManifestError,
} from "./plugin_manifest.ts";
// Permissions and dependencies
export {
  denoRunFlags,
  type GrantEntry,
  type GrantOrigin,
  type ProviderGrant,
  providerPermissions,
  type SandboxTarget,
} from "./provider_permissions.ts";
export {
  DependencyInstallError,
  type DependencyOptions,
  prepareProviderDependencies,
  type PrepareResult,
  type ProviderDependency,
} from "./provider_deps.ts";
// Errors a provider call can end with
export { ProviderPermissionError } from "../sandbox/denial.ts";
export { ProviderWorkerStoppedError } from "../sandbox/worker_rpc.ts";
export { ProviderCallTimeoutError } from "../sandbox/worker_protocol.ts";
// The contract the above names (the same as `./provider`'s)
export * from "../core/memory_provider.ts";
