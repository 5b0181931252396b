/**
 * The provider list `hermes memory status` and `list` show.
 *
 * @module
 */

import { resolve } from "../_util/path.ts";
import { getHermesHome } from "../profile/hermes_home.ts";
import { log } from "../core/log.ts";
import { errorText } from "../_util/error_text.ts";
import {
  type DiscoveredProvider,
  type DiscoveryOptions,
  type ProviderCandidate,
  scanMemoryProviders,
} from "./plugin_discovery.ts";
import {
  manifestAvailability,
  readDotenvForAvailability,
} from "./provider_availability.ts";
import { lazyImport } from "../_util/lazy_import.ts";

/**
 * Options of {@linkcode discoverMemoryProviders}.
 *
 * @category Plugins: discovery, loading, permissions
 */
export interface DiscoverOptions extends DiscoveryOptions {
  /**
   * Load each provider in its sandbox and ask `isAvailable()` instead of
   * reading its manifest (this runs every provider's code).
   *
   * @default {false}
   */
  probe?: boolean;
  /**
   * Loads one provider for the probe.
   *
   * @default {probeMemoryProvider} (`provider_loader.ts`)
   */
  probeProvider?: (
    candidate: ProviderCandidate,
    options: DiscoveryOptions,
  ) => Promise<boolean>;
}

/**
 * Lists providers, in precedence order, with their descriptions, sources
 * and availability: from each manifest (no provider code runs), or with
 * `probe: true` from `isAvailable()` in its sandbox.
 *
 * @category Plugins: discovery, loading, permissions
 */
export async function discoverMemoryProviders(
  options: DiscoverOptions = {},
): Promise<DiscoveredProvider[]> {
  const candidates = await scanMemoryProviders(options);
  const hermesHome = resolve(options.hermesHome ?? getHermesHome());
  const dotenv = options.probe
    ? {}
    : await readDotenvForAvailability(hermesHome);
  const result: DiscoveredProvider[] = [];
  for (const candidate of candidates) {
    let available: boolean | null;
    if (options.probe) {
      try {
        // Computed: a literal import would have every start read the
        // sandbox's modules; a probe starts a sandbox, which needs read
        // access to them anyway.
        const probeProvider = options.probeProvider ??
          (await lazyImport<typeof import("./provider_loader.ts")>(
            "./provider_loader.ts",
            import.meta.url,
          )).probeMemoryProvider;
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
    } else {
      available = await manifestAvailability(candidate.manifest, {
        hermesHome,
        dotenv,
      });
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
