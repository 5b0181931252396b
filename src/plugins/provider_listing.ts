/**
 * The provider list `hermes memory status` and `list` show: every
 * discovered provider with its description, source and availability,
 * decided from its manifest without running any provider code. Probing
 * (`probe: true`) loads the sandbox, and only then.
 *
 * @module
 */

import { resolve } from "node:path";
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

/**
 * Options of {@linkcode discoverMemoryProviders}.
 *
 * @category Plugins: discovery, loading, permissions
 */
export interface DiscoverOptions extends DiscoveryOptions {
  /**
   * Load each provider (sandboxed, skills not registered) and ask
   * `isAvailable()`, instead of deciding from its manifest. This runs every
   * provider's code: `hermes memory status` and `list` never do it.
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
 * Lists providers with their descriptions, sources and availability. By
 * default availability comes from each manifest ({@linkcode
 * manifestAvailability}): no provider code runs and no worker starts. With
 * `probe: true` each provider is loaded in its sandbox without registering
 * skills, asked `isAvailable()` and shut down; any failure counts as
 * unavailable.
 *
 * @param options Home, config, directories and the probe.
 * @returns One entry per provider, in precedence order.
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
        const probeProvider = options.probeProvider ??
          (await import("./provider_loader.ts")).probeMemoryProvider;
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
