/**
 * `honcho`: the bundled Honcho memory provider.
 *
 * Who imports it: the framework's loader (by URL, in the provider's
 * sandbox) when `memory.provider` is `honcho`; an agent or a test only to
 * build the provider itself, in-process.
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
 * It exports the provider, {@linkcode register} and the types they name;
 * the provider's hooks are the framework's contract, documented by
 * `@hermes/memory/provider`. The client, config and outbox the provider is
 * built on are internal (tests import them by path).
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
  registerMemoryProvider(provider: HonchoMemoryProvider): unknown;
  /** The host's shared memory query rewriter, when it has one. */
  memoryQueryRewriter?: QueryRewriter;
  /**
   * The provider's sections of `config.yaml`, handed over by the host
   * (`honcho.base_url` and `honcho.timeout` fallbacks live there).
   */
  hermesConfig?: Record<string, unknown>;
}

/**
 * The plugin's entry point: registers one {@linkcode HonchoMemoryProvider}
 * (with the host's shared query rewriter, when it offers one, and the
 * `config.yaml` sections the host handed over).
 *
 * @param ctx The registration context.
 */
export function register(ctx: HonchoRegistrationContext): void {
  ctx.registerMemoryProvider(
    new HonchoMemoryProvider({
      queryRewriter: ctx.memoryQueryRewriter,
      hermesConfig: ctx.hermesConfig,
    }),
  );
}
