/**
 * `honcho`: the bundled Honcho memory provider.
 *
 * Before each turn it injects what Honcho knows about the user (a base
 * layer of summary, representation and cards refreshed every
 * `contextCadence` turns, plus a dialectic answer every `dialecticCadence`
 * turns); after each turn it stores the user and assistant text through a
 * durable outbox under `$HERMES_HOME/honcho/outbox/`. Five tools
 * (`honcho_profile`, `honcho_search`, `honcho_context`,
 * `honcho_reasoning`, `honcho_conclude`) are offered in `hybrid` and
 * `tools` recall modes. It implements pre-compress checkpoint API v2.
 *
 * See `README.md` in this folder for settings and for exactly what leaves
 * the machine.
 *
 * @example Registering the provider
 * ```ts no-assert
 * import { HonchoMemoryProvider, register } from "./mod.ts";
 * register({ registerMemoryProvider: (provider) => provider });
 * const provider = new HonchoMemoryProvider();
 * ```
 *
 * @module
 */

import type { MemoryProvider } from "@hermes/memory";
import { HonchoMemoryProvider, type QueryRewriter } from "./provider.ts";

export {
  type HonchoLivenessSnapshot,
  HonchoMemoryProvider,
  type HonchoProviderOptions,
  type HonchoSessionIdentity,
  type QueryRewriter,
} from "./provider.ts";

/** The registration context a provider's `register` receives. */
export interface HonchoRegistrationContext {
  /**
   * Captures the provider instance (the last call wins).
   *
   * @param provider The provider.
   */
  registerMemoryProvider(provider: MemoryProvider): unknown;
  /** The host's shared memory query rewriter, when it has one. */
  memoryQueryRewriter?: QueryRewriter;
}

/**
 * The plugin's entry point: registers one {@linkcode HonchoMemoryProvider}
 * (with the host's shared query rewriter, when it offers one).
 *
 * @param ctx The registration context.
 *
 * @example Registering with a host
 * ```ts no-assert
 * import { register } from "./mod.ts";
 * register({ registerMemoryProvider: () => {} });
 * ```
 */
export function register(ctx: HonchoRegistrationContext): void {
  ctx.registerMemoryProvider(
    new HonchoMemoryProvider({ queryRewriter: ctx.memoryQueryRewriter }),
  );
}
