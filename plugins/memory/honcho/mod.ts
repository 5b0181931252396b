/**
 * `honcho`: the bundled Honcho memory provider.
 *
 * Who imports it: the framework's loader (by URL, in the provider's
 * sandbox) when `memory.provider` is `honcho`; an agent or a test only to
 * build the provider, its config, client or outbox itself, in-process.
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
 * For advanced use it also exports what the provider is built on:
 * {@linkcode loadHonchoConfig} and {@linkcode HonchoConfig} (the resolved
 * settings), {@linkcode HonchoClient} (the Honcho v3 HTTP client) and
 * {@linkcode HonchoOutbox} (the durable write queue), with their option
 * types, and the framework's provider types its signatures use.
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

import type { MemoryProvider } from "../../../src/provider/mod.ts";
import { HonchoMemoryProvider, type QueryRewriter } from "./provider.ts";

// The provider contract (the framework's `MemoryProvider` and the types its
// methods take and return), so that the provider's API can be named from
// `@hermes/memory/honcho` alone.
export type {
  AgentContext,
  ChatMessage,
  ConfigField,
  DelegationOptions,
  DrainResult,
  HermesConfig,
  InitializeOptions,
  MaybePromise,
  MemoryEvictOptions,
  MemoryProvider,
  MemoryTarget,
  MemoryWriteAction,
  MemoryWriteMetadata,
  PreCompressOptions,
  PrefetchOptions,
  RecallStatus,
  SessionSwitchOptions,
  SyncTurnOptions,
  ToolCallOptions,
  ToolSchema,
  TurnAuthor,
  TurnStartOptions,
  UserNoticeCallback,
} from "../../../src/provider/mod.ts";

export {
  type HonchoLivenessSnapshot,
  HonchoMemoryProvider,
  type HonchoProviderOptions,
  type HonchoSessionIdentity,
  type QueryRewriter,
} from "./provider.ts";

// Advanced API: the configuration the provider resolves, the HTTP client it
// talks through and the durable outbox its writes go through. The provider's
// options and getters refer to these, and they work on their own too.
export {
  type CallOptions,
  type Conclusion,
  type ConclusionInput,
  type ConclusionQueryOptions,
  type ConclusionSearchOptions,
  type FetchLike,
  type FileUpload,
  HonchoClient,
  type HonchoClientFromConfigOptions,
  type HonchoClientOptions,
  HonchoPage,
  type HonchoTransportOptions,
  type JsonObject,
  type ListOptions,
  type Message,
  type MessageInput,
  type Peer,
  type PeerCardOptions,
  type PeerChatOptions,
  type PeerContext,
  type PeerContextOptions,
  type PeerRepresentationOptions,
  type ResourceOptions,
  type SearchOptions,
  type Session,
  type SessionContext,
  type SessionContextOptions,
  type SessionCreateOptions,
  type SessionPeerConfig,
  type SleepLike,
  type Summary,
  type Workspace,
} from "./client.ts";
export {
  type ConfigSource,
  type HonchoConfig,
  type HonchoSettings,
  type InjectionFrequency,
  loadHonchoConfig,
  type LoadHonchoConfigOptions,
  type ReasoningLevel,
  type RecallMode,
  type SessionStartSection,
  type SessionStrategy,
  type WriteFrequency,
} from "./config.ts";
export { type HonchoConfigFileError } from "./config_file.ts";
export {
  type HonchoTelemetryOptions,
  type ResolveHonchoConnectionOptions,
} from "./connection.ts";
export type {
  ObservationMode,
  ObservationOverrides,
  PeerObservation,
  PeerObservationOverride,
  SessionObservation,
} from "./observation.ts";
export {
  HonchoOutbox,
  type HonchoOutboxOptions,
  type OutboxAppendResult,
  type OutboxDeliverOptions,
  type OutboxDeliverResult,
  type OutboxMessageInput,
  type OutboxRecord,
  type OutboxStats,
  type RejectedRecord,
} from "./outbox.ts";
export type { GitTopLevel } from "./session_naming.ts";

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
 *
 * @example Registering with a host
 * ```ts no-assert
 * import { register } from "./mod.ts";
 * register({ registerMemoryProvider: () => {} });
 * ```
 */
export function register(ctx: HonchoRegistrationContext): void {
  ctx.registerMemoryProvider(
    new HonchoMemoryProvider({
      queryRewriter: ctx.memoryQueryRewriter,
      hermesConfig: ctx.hermesConfig,
    }),
  );
}
