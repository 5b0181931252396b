/**
 * The memory manager: runs the built-in provider plus at most one external
 * provider behind one set of agent hooks, and keeps the agent's turn fast and
 * safe while doing it.
 *
 * - Every fan-out calls providers in registration order and isolates
 *   failures: a provider that throws is logged
 *   (`Memory provider '<name>' <what> failed: <error>`) and skipped.
 * - External prefetch is bounded (8 s by default); a provider whose previous
 *   prefetch is still running is skipped, so a hung provider never delays a
 *   later turn.
 * - Turn sync, queued prefetch and session boundaries run on one FIFO
 *   background queue, never inside the caller's turn, in the caller's async
 *   context (profile home, secret scope).
 * - Everything handed to a provider is redacted first
 *   (`redactForEgress()` of `src/core/redact.ts`).
 *
 * {@linkcode MemoryManager} is the facade; the work lives beside it:
 * `provider_fan_out.ts` (the registered providers, the isolated fan-out
 * driven by the hook table), `tool_router.ts` (tool routes, schemas and
 * dispatch), `turn_pipeline.ts` (prefetch, sync and the other per-turn
 * hooks), `session_hooks.ts` (session end, switch, boundary, pre-compress),
 * `manager_lifecycle.ts` (initialize, background queue, flush, drain,
 * shutdown) and `builtin_mirror.ts` (built-in memory writes mirrored to the
 * external provider).
 *
 * @module
 */

import { log } from "../core/log.ts";
import {
  type ChatMessage,
  type DelegationOptions,
  type HermesConfig,
  type InitializeOptions,
  isMemoryProvider,
  type MemoryEvictOptions,
  type MemoryProvider,
  type MemoryTarget,
  type MemoryWriteAction,
  type MemoryWriteMetadata,
  PRE_COMPRESS_CHECKPOINT_API_VERSION,
  type PrefetchOptions,
  type SessionSwitchOptions,
  type ToolCallOptions,
  type ToolSchema,
  type TurnStartOptions,
} from "../core/memory_provider.ts";
import { recallSpillPolicyFromConfig } from "../context/prefetch_spill.ts";
import {
  BUILTIN,
  describeValue,
  type ProviderEntry,
  ProviderFanOut,
} from "./provider_fan_out.ts";
import { ToolRouter } from "./tool_router.ts";
import {
  DEFAULT_EXTERNAL_PREFETCH_TIMEOUT_MS,
  type SyncAllOptions,
  TurnPipeline,
} from "./turn_pipeline.ts";
import {
  type CommitSessionBoundaryOptions,
  type ManagerPreCompressOptions,
  SessionHooks,
} from "./session_hooks.ts";
import {
  DEFAULT_SHUTDOWN_DRAIN_TIMEOUT_MS,
  ManagerLifecycle,
  type ShutdownDrainState,
} from "./manager_lifecycle.ts";
import {
  BuiltinMemoryMirror,
  type NotifyMemoryToolWriteOptions,
} from "./builtin_mirror.ts";

export { DEFAULT_EXTERNAL_PREFETCH_TIMEOUT_MS } from "./turn_pipeline.ts";
export type { SyncAllOptions } from "./turn_pipeline.ts";
export type {
  CommitSessionBoundaryOptions,
  ManagerPreCompressOptions,
} from "./session_hooks.ts";
export { DEFAULT_SHUTDOWN_DRAIN_TIMEOUT_MS } from "./manager_lifecycle.ts";
export type {
  ShutdownDrainState,
  ShutdownDrainStatus,
} from "./manager_lifecycle.ts";
export type { NotifyMemoryToolWriteOptions } from "./builtin_mirror.ts";

/**
 * Options of {@linkcode MemoryManager}.
 *
 * @category Manager
 */
export interface MemoryManagerOptions {
  /**
   * How long an external provider's prefetch may take before the turn goes
   * on without it (the provider is then skipped until the stuck call
   * returns). Must be positive.
   *
   * @default {8000}
   */
  externalPrefetchTimeoutMs?: number;
  /**
   * The one budget of {@linkcode MemoryManager.shutdownAll}, in all: queued
   * background work, then each provider's `drain(ms)` with the time left,
   * then each provider's `shutdown()` within what remains. Must be positive.
   *
   * @default {5000}
   */
  shutdownDrainTimeoutMs?: number;
  /**
   * The loaded `config.yaml`; the prefetch spill policy
   * (`hooks.output_spill`, `memory.prefetch_spill_enabled`) is snapshotted
   * from it when the external provider registers.
   *
   * @default {{}}
   */
  config?: HermesConfig;
}

function validTimeout(
  name: string,
  value: number | undefined,
  fallback: number,
): number {
  if (value === undefined) return fallback;
  if (typeof value !== "number" || !(value > 0) || !Number.isFinite(value)) {
    throw new RangeError(
      `Cannot create MemoryManager: option '${name}' must be a positive number of milliseconds, got ${
        String(value)
      }`,
    );
  }
  return value;
}

/**
 * Runs the agent's memory providers: the built-in store (`builtin`) plus at
 * most one external provider.
 *
 * @example One turn through the manager
 * ```ts
 * import { MemoryManager, MemoryProvider, type ToolSchema } from "@hermes/memory";
 * import assert from "node:assert/strict";
 *
 * class Notes extends MemoryProvider {
 *   synced: string[] = [];
 *   get name(): string {
 *     return "notes";
 *   }
 *   isAvailable(): boolean {
 *     return true;
 *   }
 *   initialize(): void {}
 *   getToolSchemas(): ToolSchema[] {
 *     return [];
 *   }
 *   override prefetch(query: string): string {
 *     return `recalled for: ${query}`;
 *   }
 *   override syncTurn(user: string): void {
 *     this.synced.push(user);
 *   }
 * }
 *
 * const notes = new Notes();
 * const manager = new MemoryManager();
 * await manager.addProvider(notes);
 * await manager.initializeAll("session-1", { platform: "cli" });
 * assert.equal(await manager.prefetchAll("tabs or spaces?"), "recalled for: tabs or spaces?");
 * manager.syncAll("tabs or spaces?", "Tabs.", { sessionId: "session-1" });
 * assert.equal(await manager.flushPending(1000), true);
 * assert.deepEqual(notes.synced, ["tabs or spaces?"]);
 * await manager.shutdownAll();
 * ```
 *
 * @category Manager
 */
export class MemoryManager {
  readonly #fanOut: ProviderFanOut;
  readonly #tools: ToolRouter;
  readonly #turns: TurnPipeline;
  readonly #sessions: SessionHooks;
  readonly #lifecycle: ManagerLifecycle;
  readonly #mirror: BuiltinMemoryMirror;
  readonly #config: HermesConfig;
  #hasExternal = false;

  /**
   * Creates an empty manager.
   *
   * @param options Timeouts and the loaded config.
   * @throws {RangeError} When a timeout is not a positive number.
   */
  constructor(options: MemoryManagerOptions = {}) {
    const prefetchTimeoutMs = validTimeout(
      "externalPrefetchTimeoutMs",
      options.externalPrefetchTimeoutMs,
      DEFAULT_EXTERNAL_PREFETCH_TIMEOUT_MS,
    );
    const drainTimeoutMs = validTimeout(
      "shutdownDrainTimeoutMs",
      options.shutdownDrainTimeoutMs,
      DEFAULT_SHUTDOWN_DRAIN_TIMEOUT_MS,
    );
    this.#config = options.config ?? {};
    const fanOut = new ProviderFanOut(prefetchTimeoutMs);
    const lifecycle = new ManagerLifecycle(fanOut, drainTimeoutMs);
    const submit = lifecycle.submit.bind(lifecycle);
    this.#fanOut = fanOut;
    this.#lifecycle = lifecycle;
    this.#tools = new ToolRouter(fanOut);
    this.#turns = new TurnPipeline(fanOut, submit);
    this.#sessions = new SessionHooks(fanOut, submit);
    this.#mirror = new BuiltinMemoryMirror(fanOut);
  }

  // -- Registration --------------------------------------------------------

  /**
   * Registers a provider. `builtin` is always accepted; only one other
   * (external) provider may be registered: a second one is rejected with a
   * warning naming both and nothing changes. The provider's tool schemas are
   * loaded before anything changes; each tool is routed to it unless its
   * name is a reserved core tool or already routed (warnings).
   *
   * @param provider The provider.
   * @returns `true` when added, `false` when rejected.
   * @throws {TypeError} When `provider` is not a memory provider, or its
   * `getToolSchemas()` returns something other than an array.
   * @throws {unknown} Whatever the provider's `getToolSchemas()` throws (the
   * manager is left untouched).
   */
  async addProvider(provider: MemoryProvider): Promise<boolean> {
    if (!isMemoryProvider(provider)) {
      throw new TypeError(
        `Cannot add memory provider: got ${
          describeValue(provider)
        }, pass an object with name, isAvailable(), initialize() and getToolSchemas()`,
      );
    }
    const name = String(provider.name);
    const external = name !== BUILTIN;
    if (external && this.#rejectSecondExternal(name)) return false;
    const schemas = await provider.getToolSchemas();
    if (!Array.isArray(schemas)) {
      throw new TypeError(
        `Memory provider '${name}' getToolSchemas() returned ${
          describeValue(schemas)
        }: return an array of tool schemas ([] when it has no tools)`,
      );
    }
    // Re-checked: another external provider may have registered meanwhile.
    if (external && this.#rejectSecondExternal(name)) return false;
    if (external) {
      this.#hasExternal = true;
      this.#turns.spillPolicy = recallSpillPolicyFromConfig(this.#config);
    }
    const entry: ProviderEntry = {
      provider,
      name,
      external,
      prefetchBusy: false,
      turnStartBusy: false,
      recallBusy: false,
    };
    this.#fanOut.add(entry);
    this.#tools.route(entry, schemas);
    log(
      "info",
      `Memory provider '${name}' registered (${schemas.length} tools)`,
    );
    return true;
  }

  #rejectSecondExternal(name: string): boolean {
    if (!this.#hasExternal) return false;
    const existing = this.#fanOut.externals[0]?.name ?? "unknown";
    log(
      "warn",
      `Rejected memory provider '${name}' — external provider '${existing}' is already registered. Only one external memory provider is allowed at a time. Configure which one via memory.provider in config.yaml.`,
    );
    return true;
  }

  /** The registered providers, in registration order (a copy). */
  get providers(): MemoryProvider[] {
    return this.#fanOut.entries.map((e) => e.provider);
  }

  /**
   * Finds a registered provider by name.
   *
   * @param name The provider's name.
   * @returns The provider, or `null`.
   */
  getProvider(name: string): MemoryProvider | null {
    return this.#fanOut.entries.find((e) => e.name === name)?.provider ??
      null;
  }

  /**
   * The names of every routed provider tool.
   *
   * @returns A new set.
   */
  getAllToolNames(): Set<string> {
    return this.#tools.names();
  }

  /**
   * Whether a provider handles a tool.
   *
   * @param name The tool's name.
   * @returns `true` when routed.
   */
  hasTool(name: string): boolean {
    return this.#tools.has(name);
  }

  // -- Per-turn hooks (turn_pipeline.ts) -----------------------------------

  /**
   * Joins every provider's non-blank `systemPromptBlock()` with a blank
   * line. Failures are logged as warnings.
   *
   * @returns The combined block, `""` when none.
   */
  buildSystemPrompt(): Promise<string> {
    return this.#turns.buildSystemPrompt();
  }

  /**
   * Collects recalled context for the coming model call. The query is
   * stripped of skill scaffolding (a bare `/skill` invocation recalls
   * nothing) and redacted. The built-in provider runs unbounded; an external
   * provider is bounded by `externalPrefetchTimeoutMs` and skipped while its
   * previous prefetch is still running. `null` and non-string results count
   * as `""`; non-empty external results pass through the prefetch spill
   * policy.
   *
   * @param query The user's message.
   * @param options The session.
   * @returns Non-blank results joined with a blank line, `""` when none.
   */
  prefetchAll(query: string, options: PrefetchOptions = {}): Promise<string> {
    return this.#turns.prefetchAll(query, options);
  }

  /**
   * Describes what the last prefetch recalled, for the user:
   * `"<glyph> <label> — recalled 1 memory"`, `"… — recalled N memories"` or
   * `"… — recalled relevant memory"` (count 0 or less), one segment per
   * provider with a status, joined with two spaces. An external provider's
   * returned promise is bounded like prefetch (and the provider skipped
   * while a previous call is stuck), so a hung status never holds the turn.
   *
   * @returns The indicator line, `""` when no provider reports a status.
   */
  describeRecall(): Promise<string> {
    return this.#turns.describeRecall();
  }

  /**
   * The providers whose recall failed or was off at the last
   * {@linkcode MemoryManager.describeRecall} (`"<label>: <why>"` each;
   * empty when every recall worked).
   *
   * @returns The failures.
   */
  get recallFailures(): readonly string[] {
    return this.#turns.recallFailures;
  }

  /**
   * Remarks the providers made about the last recall (how it was made),
   * as of the last {@linkcode MemoryManager.describeRecall}
   * (`"<label>: <note>"` each).
   *
   * @returns The notes.
   */
  get recallNotes(): readonly string[] {
    return this.#turns.recallNotes;
  }

  /**
   * Queues `queuePrefetch()` on every provider for the next turn, on the
   * background queue (kind `prefetch`). Skipped when there are no providers
   * or the cleaned query is empty.
   *
   * @param query The user's message.
   * @param options The session.
   */
  queuePrefetchAll(query: string, options: PrefetchOptions = {}): void {
    this.#turns.queuePrefetchAll(query, options);
  }

  /**
   * Records a completed turn with every provider, on the background queue
   * (never inside this call). Skipped when there are no providers or the
   * cleaned user text is empty. User text, assistant text and the transcript
   * are redacted together; each provider gets `sessionId`, plus `messages`
   * and `turnAuthor` when they are not `null`/`undefined`. Failures are
   * logged as warnings.
   *
   * @param userContent The user's message.
   * @param assistantContent The assistant's reply.
   * @param options The session, transcript and author.
   */
  syncAll(
    userContent: string,
    assistantContent: string,
    options: SyncAllOptions = {},
  ): void {
    this.#turns.syncAll(userContent, assistantContent, options);
  }

  /**
   * Tells every provider a turn starts (before prefetch). The message is
   * redacted. An external provider's returned promise is bounded like
   * prefetch, and the provider is skipped while a previous call is stuck.
   *
   * @param turnNumber The 1-based turn number.
   * @param message The user's message.
   * @param options What the host knows about the turn.
   */
  onTurnStart(
    turnNumber: number,
    message: string,
    options: TurnStartOptions = {},
  ): Promise<void> {
    return this.#turns.onTurnStart(turnNumber, message, options);
  }

  /**
   * Tells every provider a subagent finished (task and result redacted).
   *
   * @param task The task given to the subagent.
   * @param result The subagent's result.
   * @param options The child's session id and anything else.
   */
  onDelegation(
    task: string,
    result: string,
    options: DelegationOptions = {},
  ): Promise<void> {
    return this.#turns.onDelegation(task, result, options);
  }

  // -- Session hooks (session_hooks.ts) ------------------------------------

  /**
   * Tells every provider the session really ended (never per turn), with a
   * redacted copy of the transcript. Failures are logged as warnings with
   * the stack.
   *
   * @param messages The full transcript (`null` counts as `[]`).
   */
  onSessionEnd(messages: ChatMessage[] | null | undefined): Promise<void> {
    return this.#sessions.onSessionEnd(messages);
  }

  /**
   * Rebinds providers to another session (`/resume`, `/branch`, `/reset`,
   * `/new`, compression). An empty id is a no-op. `rewound` is forwarded
   * only when `true`; other options (such as `reason`) are forwarded as
   * they are. A provider that throws or returns literal `false` failed; the
   * failures are remembered for {@linkcode MemoryManager.retryPendingSessionSwitch}.
   *
   * @param newSessionId The session switched to.
   * @param options Parent, reset, rewound, reason.
   * @returns `true` when every provider succeeded.
   */
  onSessionSwitch(
    newSessionId: string,
    options: SessionSwitchOptions = {},
  ): Promise<boolean> {
    return this.#sessions.onSessionSwitch(newSessionId, options);
  }

  /**
   * Re-runs the last session switch on the providers that failed it.
   *
   * @returns `true` when no switch is pending any more.
   */
  retryPendingSessionSwitch(): Promise<boolean> {
    return this.#sessions.retryPendingSessionSwitch();
  }

  /** Whether a failed session switch is waiting for a retry. */
  get hasPendingSessionSwitch(): boolean {
    return this.#sessions.hasPendingSessionSwitch;
  }

  /**
   * Queues a real session boundary as one background task: `onSessionEnd`
   * with a snapshot of the transcript, then `onSessionSwitch(newSessionId,
   * {parentSessionId, reset: true, reason})`, in that order, serialized with
   * every other background write. No-op without providers.
   *
   * @param messages The transcript of the session that ended.
   * @param options The new session, its parent and the reason.
   */
  commitSessionBoundary(
    messages: ChatMessage[] | null | undefined,
    options: CommitSessionBoundaryOptions,
  ): void {
    this.#sessions.commitSessionBoundary(messages, options);
  }

  /**
   * Whether any provider advertises at least `apiVersion` of the
   * pre-compress checkpoint API (`preCompressCheckpointApiVersion`;
   * unparseable values count as 1).
   *
   * @param apiVersion The version needed.
   * @returns `true` when a provider qualifies.
   */
  supportsPreCompressCheckpoint(
    apiVersion: number = PRE_COMPRESS_CHECKPOINT_API_VERSION,
  ): Promise<boolean> {
    return Promise.resolve(
      this.#sessions.supportsPreCompressCheckpoint(apiVersion),
    );
  }

  /**
   * Notifies providers before lossy compression and returns their combined
   * text for the summary prompt. Both lists are redacted. A provider
   * advertising at least `checkpointApiVersion` is a checkpoint provider: it
   * gets `evidenceMessages` when given (else the raw list) and
   * `{requireCheckpoint}`; other providers get the raw list and `{}`. A
   * checkpoint provider that returns normally counts as a committed
   * checkpoint.
   *
   * @param messages The raw transcript.
   * @param options Evidence, strictness and the API version.
   * @returns Non-blank results joined with a blank line.
   * @throws {unknown} With `requireCheckpoint`, whatever a checkpoint
   * provider throws.
   * @throws {Error} With `requireCheckpoint`, when no checkpoint provider
   * succeeded: `No active memory provider completed pre-compress checkpoint
   * API v<version>`.
   */
  onPreCompress(
    messages: ChatMessage[] | null | undefined,
    options: ManagerPreCompressOptions = {},
  ): Promise<string> {
    return this.#sessions.onPreCompress(messages, options);
  }

  // -- Lifecycle (manager_lifecycle.ts) ------------------------------------

  /**
   * Initializes every provider. `hermesHome` is set to the active profile's
   * home when the caller did not pass one. A provider that fails is logged
   * as a warning and stays registered.
   *
   * @param sessionId The session id.
   * @param options What the host knows about the session.
   */
  initializeAll(
    sessionId: string,
    options: InitializeOptions = {},
  ): Promise<void> {
    return this.#lifecycle.initializeAll(sessionId, options);
  }

  /**
   * Like {@linkcode MemoryManager.initializeAll} but calls
   * `initializeForInspection()` (side-effect-free loads for inspection-only
   * agents).
   *
   * @param sessionId The session id.
   * @param options What the host knows about the session.
   */
  initializeAllForInspection(
    sessionId: string,
    options: InitializeOptions = {},
  ): Promise<void> {
    return this.#lifecycle.initializeAllForInspection(sessionId, options);
  }

  /**
   * Waits until the background work queued before this call (turn syncs,
   * queued prefetches, session boundaries) has run, then until every
   * provider that defines `drain()` (a sandboxed provider's one-way hooks,
   * a provider's own write queue) reports it durable, all within the same
   * bound.
   *
   * @param timeoutMs How long to wait at most; without limit when omitted.
   * @returns `true` when drained (or nothing was queued, or the manager is
   * shut down), `false` on timeout.
   */
  flushPending(timeoutMs?: number): Promise<boolean> {
    return this.#lifecycle.flushPending(timeoutMs);
  }

  /** The outcome of the last shutdown drain (a copy). */
  get shutdownDrainState(): ShutdownDrainState {
    return this.#lifecycle.shutdownDrainState;
  }

  /**
   * Shuts down within one budget (`shutdownDrainTimeoutMs`): stops accepting
   * background work, lets queued work finish in order (abandoning what has
   * not started; see {@linkcode MemoryManager.shutdownDrainState}), gives
   * every provider's `drain(ms)` the time left, then calls `shutdown()` on
   * every provider in reverse registration order, each waited for only
   * until the budget runs out (failures and late ones are warnings). Calling
   * it again returns the same promise.
   *
   * @returns When every provider was shut down or the budget ran out.
   */
  shutdownAll(): Promise<void> {
    return this.#lifecycle.shutdownAll();
  }

  // -- Tools (tool_router.ts) ----------------------------------------------

  /**
   * Every provider's tool schemas, bare (unwrapped), deduplicated by name
   * (first wins), reserved core names dropped, nameless ones dropped with a
   * warning. A provider whose schemas fail to load is logged as a warning.
   *
   * @returns The schemas.
   */
  getAllToolSchemas(): Promise<ToolSchema[]> {
    return this.#tools.schemas();
  }

  /**
   * Runs a provider tool. The arguments are redacted before the provider
   * sees them.
   *
   * @param toolName The tool's name.
   * @param args The model's arguments.
   * @param options Extra call context, passed through.
   * @returns The provider's JSON string, or `{"error": …}` when no provider
   * handles the tool or the provider failed.
   */
  handleToolCall(
    toolName: string,
    args: Record<string, unknown>,
    options: ToolCallOptions = {},
  ): Promise<string> {
    return this.#tools.call(toolName, args, options);
  }

  // -- Built-in memory write mirroring (builtin_mirror.ts) -----------------

  /**
   * Mirrors a committed write of the built-in `memory` tool to the external
   * provider (`onMemoryWrite`), one call per `add`/`replace`/`remove`
   * operation, in order. Nothing is mirrored unless the result (a JSON string
   * or object) has `success: true` and is not `staged`. `previous_content` is
   * taken only from the committed result (`replaced_entry` /
   * `removed_entry`, or for batches `replaced_entries` / `removed_entries`
   * keyed by the 1-based operation index). A terminal failure
   * (`success: false, done: true, error`) of `add`/`replace` operations is
   * mirrored as `onMemoryEvict` instead. Per-operation failures are logged
   * at debug level.
   *
   * @param result The memory tool's result.
   * @param args The memory tool's arguments.
   * @param options How to build each operation's provenance.
   */
  notifyMemoryToolWrite(
    result: unknown,
    args: Record<string, unknown>,
    options: NotifyMemoryToolWriteOptions = {},
  ): Promise<void> {
    return this.#mirror.notifyMemoryToolWrite(result, args, options);
  }

  /**
   * Fans a built-in memory write out to the external providers (never to
   * `builtin`, the source). Content and metadata are redacted; each provider
   * gets its own metadata copy as the fourth argument.
   *
   * @param action `add`, `replace` or `remove`.
   * @param target `memory` or `user`.
   * @param content The entry's text.
   * @param metadata Provenance, `old_text`, `previous_content`.
   */
  onMemoryWrite(
    action: MemoryWriteAction,
    target: MemoryTarget,
    content: string,
    metadata: MemoryWriteMetadata = {},
  ): Promise<void> {
    return this.#mirror.onMemoryWrite(action, target, content, metadata);
  }

  /**
   * Tells the external providers the built-in store terminally dropped a
   * fact. Content and metadata are redacted; failures are logged at debug.
   *
   * @param content The dropped text.
   * @param target `memory` or `user`.
   * @param options Metadata with `eviction_reason`.
   */
  onMemoryEvict(
    content: string,
    target: MemoryTarget,
    options: MemoryEvictOptions = {},
  ): Promise<void> {
    return this.#mirror.onMemoryEvict(content, target, options);
  }
}
