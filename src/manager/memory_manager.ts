// The memory manager: the built-in provider plus at most one external one
// behind one set of agent hooks (src/manager/SPEC.md).

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
  type SyncTurnOptions,
  type ToolCallOptions,
  type ToolSchema,
  type TurnStartOptions,
} from "../core/memory_provider.ts";
import { redactForEgress, redactText } from "../core/redact.ts";
import {
  type RecallSpillPolicy,
  recallSpillPolicyFromConfig,
} from "../context/prefetch_spill.ts";
import { extractUserInstructionFromSkillMessage } from "../context/skill_invocation.ts";
import { getHermesHome } from "../profile/hermes_home.ts";
import {
  BackgroundQueue,
  type BackgroundTaskKind,
} from "./background_queue.ts";
import {
  type CommitSessionBoundaryOptions,
  type ManagerPreCompressOptions,
  type MemoryManagerOptions,
  NOT_STARTED,
  type NotifyMemoryToolWriteOptions,
  type ShutdownDrainState,
  type SyncAllOptions,
  validTimeout,
} from "./manager_options.ts";
import { prefetchEach, recallIndicator } from "./_recall.ts";
import { mirroredOperations, mirrorMetadata } from "./_builtin_mirror.ts";
import {
  callProviderTool,
  collectToolSchemas,
  routeTools,
  toolError,
} from "./tool_schema.ts";
import {
  boundedEach,
  BUILTIN,
  callEach,
  checkpointVersionOf,
  describeValue,
  drainProviders,
  type PendingSessionSwitch,
  preCompressEach,
  type ProviderEntry,
  redactedErrorText,
  shutdownWithin,
  switchEach,
} from "./_fan_out.ts";

/** The user text providers may see, or `null` to skip the call. */
function cleanQuery(text: unknown): string | null {
  const clean = extractUserInstructionFromSkillMessage(text);
  return clean === null || clean === "" ? null : clean;
}

/**
 * Runs the agent's memory providers: the built-in store (`builtin`) plus at
 * most one external provider.
 *
 * @example One turn through the manager
 * ```ts
 * import { MemoryManager, MemoryProvider } from "@hermes/memory";
 * import assert from "node:assert/strict";
 *
 * class Notes extends MemoryProvider {
 *   get name() { return "notes"; }
 *   isAvailable() { return true; }
 *   initialize() {}
 *   getToolSchemas() { return []; }
 *   override prefetch(query: string) { return `recalled for: ${query}`; }
 * }
 *
 * const manager = new MemoryManager();
 * await manager.addProvider(new Notes());
 * await manager.initializeAll("session-1", { platform: "cli" });
 * assert.equal(await manager.prefetchAll("tabs?"), "recalled for: tabs?");
 * manager.syncAll("tabs?", "Tabs.", { sessionId: "session-1" });
 * assert.equal(await manager.flushPending(1000), true);
 * await manager.shutdownAll();
 * ```
 *
 * @category Manager
 */
export class MemoryManager {
  readonly #config: HermesConfig;
  readonly #prefetchTimeoutMs: number;
  readonly #drainTimeoutMs: number;
  /** Replaced, never changed, on registration: callers keep it as a snapshot. */
  #entries: readonly ProviderEntry[] = [];
  #routes = new Map<string, ProviderEntry>();
  #spillPolicy: RecallSpillPolicy | undefined = undefined;
  #recallFailures: string[] = [];
  #recallNotes: string[] = [];
  #pendingSwitch: PendingSessionSwitch | undefined = undefined;
  readonly #queue = new BackgroundQueue();
  #shutdown: Promise<void> | undefined = undefined;
  #drainState: ShutdownDrainState = NOT_STARTED;

  /**
   * Creates an empty manager.
   *
   * @throws {RangeError} When a timeout is not a positive number.
   */
  constructor(options: MemoryManagerOptions = {}) {
    const { externalPrefetchTimeoutMs, shutdownDrainTimeoutMs } = options;
    this.#prefetchTimeoutMs = validTimeout({ externalPrefetchTimeoutMs }, 8000);
    this.#drainTimeoutMs = validTimeout({ shutdownDrainTimeoutMs }, 5000);
    this.#config = options.config ?? {};
  }

  get #externals(): ProviderEntry[] {
    return this.#entries.filter((e) => e.external);
  }

  /** Queues end-of-turn work; refused (with a warning) once shutdown began. */
  #submit(kind: BackgroundTaskKind, task: () => unknown): void {
    if (this.#queue.closed) {
      log(
        "warn",
        `Memory manager is shutting down; rejecting late ${kind} task`,
      );
      return;
    }
    this.#queue.submit(task, kind);
  }

  /**
   * Registers a provider: `builtin` plus at most one external one; a second
   * external is rejected with a warning (src/manager/SPEC.md §1).
   *
   * @returns `true` when added, `false` when rejected.
   * @throws {TypeError} When `provider` is not a memory provider, or its
   * `getToolSchemas()` does not return an array.
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
    if (external) this.#spillPolicy = recallSpillPolicyFromConfig(this.#config);
    const entry: ProviderEntry = {
      provider,
      name,
      external,
      messages: provider.syncTurnTakesMessages !== false,
      prefetchBusy: false,
      turnStartBusy: false,
      recallBusy: false,
    };
    this.#entries = [...this.#entries, entry];
    routeTools(this.#routes, entry, schemas);
    log(
      "info",
      `Memory provider '${name}' registered (${schemas.length} tools)`,
    );
    return true;
  }

  #rejectSecondExternal(name: string): boolean {
    const existing = this.#externals[0];
    if (existing === undefined) return false;
    log(
      "warn",
      `Rejected memory provider '${name}' — external provider '${existing.name}' is already registered. Only one external memory provider is allowed at a time. Configure which one via memory.provider in config.yaml.`,
    );
    return true;
  }

  /** The registered providers, in registration order (a copy). */
  get providers(): MemoryProvider[] {
    return this.#entries.map((e) => e.provider);
  }

  /** Finds a registered provider by name, or `null`. */
  getProvider(name: string): MemoryProvider | null {
    return this.#entries.find((e) => e.name === name)?.provider ?? null;
  }

  /** The names of every routed provider tool, as a new set. */
  getAllToolNames(): Set<string> {
    return new Set(this.#routes.keys());
  }

  /** Whether a provider handles a tool. */
  hasTool(name: string): boolean {
    return this.#routes.has(name);
  }

  /** Joins every provider's non-blank `systemPromptBlock()` with a blank line. */
  async buildSystemPrompt(): Promise<string> {
    const blocks = await callEach(this.#entries, "systemPromptBlock", () => []);
    return blocks.filter((b) => typeof b === "string" && b.trim() !== "")
      .join("\n\n");
  }

  /**
   * Collects recalled context for the coming model call, the external
   * provider bounded by `externalPrefetchTimeoutMs` (src/manager/SPEC.md §3).
   *
   * @returns Non-blank results joined with a blank line, `""` when none.
   */
  async prefetchAll(
    query: string,
    options: PrefetchOptions = {},
  ): Promise<string> {
    const entries = this.#entries;
    if (entries.length === 0) return "";
    const clean = cleanQuery(query);
    if (clean === null) return "";
    const redacted = redactText(clean);
    const sessionId = options.sessionId ?? "";
    return await prefetchEach(
      entries,
      redacted,
      sessionId,
      this.#prefetchTimeoutMs,
      this.#spillPolicy,
    );
  }

  /**
   * Describes what the last prefetch recalled, for the user
   * (`"<glyph> <label> — recalled N memories"`, one segment per provider).
   *
   * @returns The indicator line, `""` when no provider reports a status.
   */
  async describeRecall(): Promise<string> {
    const statuses = await boundedEach(
      this.#entries,
      this.#prefetchTimeoutMs,
      "recallStatus",
      "recallBusy",
      "recallStatus()",
      () => [],
    );
    const { line, failures, notes } = recallIndicator(statuses);
    this.#recallFailures = failures;
    this.#recallNotes = notes;
    return line;
  }

  /**
   * The providers whose recall failed or was off at the last
   * {@linkcode MemoryManager.describeRecall} (`"<label>: <why>"` each).
   */
  get recallFailures(): readonly string[] {
    return this.#recallFailures;
  }

  /** The providers' remarks on the last recall (`"<label>: <note>"` each). */
  get recallNotes(): readonly string[] {
    return this.#recallNotes;
  }

  /** Queues `queuePrefetch()` on every provider for the next turn. */
  queuePrefetchAll(query: string, options: PrefetchOptions = {}): void {
    const entries = this.#entries;
    if (entries.length === 0) return;
    const clean = cleanQuery(query);
    if (clean === null) return;
    const redacted = redactText(clean);
    const sessionId = options.sessionId ?? "";
    this.#submit(
      "prefetch",
      () => callEach(entries, "queuePrefetch", () => [redacted, { sessionId }]),
    );
  }

  /**
   * Records a completed turn with every provider, redacted, on the
   * background queue (never inside this call; src/manager/SPEC.md §3–§4).
   */
  syncAll(
    userContent: string,
    assistantContent: string,
    options: SyncAllOptions = {},
  ): void {
    const entries = this.#entries;
    if (entries.length === 0) return;
    const clean = cleanQuery(userContent);
    if (clean === null) return;
    // The transcript is redacted and passed only where `syncTurn` takes it.
    const [user, assistant, messages] = redactForEgress([
      clean,
      typeof assistantContent === "string"
        ? assistantContent
        : String(assistantContent ?? ""),
      (entries.some((e) => e.messages) && options.messages) || undefined,
    ]) as [string, string, ChatMessage[] | undefined];
    const turn: SyncTurnOptions = { sessionId: options.sessionId ?? "" };
    if (options.turnAuthor != null) turn.turnAuthor = options.turnAuthor;
    if (typeof options.turnId === "string" && options.turnId !== "") {
      turn.turnId = options.turnId;
    }
    const full = messages ? { ...turn, messages } : turn;
    this.#submit(
      "write",
      () =>
        callEach(entries, "syncTurn", (e) => [user, assistant, {
          ...(e.messages ? full : turn),
        }]),
    );
  }

  /**
   * Tells every provider a turn starts (before prefetch); the external one
   * is bounded like prefetch.
   */
  async onTurnStart(
    turnNumber: number,
    message: string,
    options: TurnStartOptions = {},
  ): Promise<void> {
    const redacted = redactText(
      typeof message === "string" ? message : String(message ?? ""),
    );
    await boundedEach(
      this.#entries,
      this.#prefetchTimeoutMs,
      "onTurnStart",
      "turnStartBusy",
      "onTurnStart",
      () => [turnNumber, redacted, { ...options }],
    );
  }

  /** Tells every provider a subagent finished (task and result redacted). */
  async onDelegation(
    task: string,
    result: string,
    options: DelegationOptions = {},
  ): Promise<void> {
    const [t, r] = redactForEgress([String(task ?? ""), String(result ?? "")]);
    const forwarded: DelegationOptions = {
      ...options,
      childSessionId: options.childSessionId ?? "",
    };
    await callEach(
      this.#entries,
      "onDelegation",
      () => [t, r, { ...forwarded }],
    );
  }

  /**
   * Tells every provider the session really ended (never per turn), with a
   * redacted copy of the transcript (`null` counts as `[]`).
   */
  async onSessionEnd(
    messages: ChatMessage[] | null | undefined,
  ): Promise<void> {
    const redacted = redactForEgress(Array.isArray(messages) ? messages : []);
    await callEach(this.#entries, "onSessionEnd", () => [redacted]);
  }

  /**
   * Rebinds providers to another session (src/manager/SPEC.md §5). Failed
   * providers are remembered for {@linkcode MemoryManager.retryPendingSessionSwitch}.
   *
   * @returns `true` when every provider succeeded.
   */
  async onSessionSwitch(
    newSessionId: string,
    options: SessionSwitchOptions = {},
  ): Promise<boolean> {
    if (!newSessionId) return true;
    const { rewound, ...rest } = options;
    const forwarded: SessionSwitchOptions = {
      ...rest,
      parentSessionId: options.parentSessionId ?? "",
      reset: options.reset ?? false,
    };
    if (rewound === true) forwarded.rewound = true;
    const failed = await switchEach(
      this.#entries,
      newSessionId,
      forwarded,
    );
    this.#pendingSwitch = failed.size === 0
      ? undefined
      : { newSessionId, options: forwarded, failed };
    return failed.size === 0;
  }

  /**
   * Re-runs the last session switch on the providers that failed it.
   *
   * @returns `true` when no switch is pending any more.
   */
  async retryPendingSessionSwitch(): Promise<boolean> {
    const pending = this.#pendingSwitch;
    if (pending === undefined) return true;
    const failed = await switchEach(
      pending.failed,
      pending.newSessionId,
      pending.options,
    );
    // A newer switch ran meanwhile: its outcome is the one that counts.
    if (this.#pendingSwitch !== pending) {
      return this.#pendingSwitch === undefined;
    }
    this.#pendingSwitch = failed.size === 0
      ? undefined
      : { ...pending, failed };
    return failed.size === 0;
  }

  /** Whether a failed session switch is waiting for a retry. */
  get hasPendingSessionSwitch(): boolean {
    return this.#pendingSwitch !== undefined;
  }

  /**
   * Queues a real session boundary as one background task: `onSessionEnd`
   * with a transcript snapshot, then `onSessionSwitch` with `reset: true`.
   */
  commitSessionBoundary(
    messages: ChatMessage[] | null | undefined,
    options: CommitSessionBoundaryOptions,
  ): void {
    if (this.#entries.length === 0) return;
    const snapshot = Array.isArray(messages) ? [...messages] : [];
    const { newSessionId, parentSessionId = "", reason = "new_session" } =
      options;
    const steps = {
      extraction: () => this.onSessionEnd(snapshot),
      switch: () =>
        this.onSessionSwitch(newSessionId, {
          parentSessionId,
          reset: true,
          reason,
        }),
    };
    this.#submit("write", async () => {
      for (const [what, step] of Object.entries(steps)) {
        try {
          await step();
        } catch (error) {
          const why = redactedErrorText(error);
          log("warn", `Session-boundary ${what} failed: ${why}`);
        }
      }
    });
  }

  /**
   * Whether any provider advertises at least `apiVersion` of the
   * pre-compress checkpoint API (unparseable values count as 1).
   */
  supportsPreCompressCheckpoint(
    apiVersion: number = PRE_COMPRESS_CHECKPOINT_API_VERSION,
  ): Promise<boolean> {
    return Promise.resolve(
      this.#entries.some((e) => checkpointVersionOf(e.provider) >= apiVersion),
    );
  }

  /**
   * Notifies providers before lossy compression (src/context/SPEC.md §5).
   *
   * @returns Non-blank results joined with a blank line.
   * @throws {Error} With `requireCheckpoint`, what a checkpoint provider
   * throws, or an error when no checkpoint provider succeeded.
   */
  async onPreCompress(
    messages: ChatMessage[] | null | undefined,
    options: ManagerPreCompressOptions = {},
  ): Promise<string> {
    const requireCheckpoint = options.requireCheckpoint === true;
    const apiVersion = options.checkpointApiVersion ??
      PRE_COMPRESS_CHECKPOINT_API_VERSION;
    const [raw, evidence] = redactForEgress([
      Array.isArray(messages) ? messages : [],
      options.evidenceMessages ?? undefined,
    ]) as [ChatMessage[], ChatMessage[] | undefined];
    return await preCompressEach(
      this.#entries,
      raw,
      evidence,
      apiVersion,
      requireCheckpoint,
    );
  }

  /**
   * Initializes every provider (`hermesHome` defaults to the active
   * profile's); a failing one is logged and stays registered.
   */
  initializeAll(
    sessionId: string,
    options: InitializeOptions = {},
  ): Promise<void> {
    return this.#initializeEach("initialize", sessionId, options);
  }

  /** Like {@linkcode MemoryManager.initializeAll}, with `initializeForInspection()`. */
  initializeAllForInspection(
    sessionId: string,
    options: InitializeOptions = {},
  ): Promise<void> {
    return this.#initializeEach("initializeForInspection", sessionId, options);
  }

  async #initializeEach(
    hook: "initialize" | "initializeForInspection",
    sessionId: string,
    options: InitializeOptions,
  ): Promise<void> {
    const forwarded = options.hermesHome === undefined
      ? { ...options, hermesHome: getHermesHome() }
      : { ...options };
    await callEach(this.#entries, hook, () => [sessionId, { ...forwarded }]);
  }

  /**
   * Waits until the background work queued before this call has run and
   * every provider's `drain()` reports it durable, within one bound.
   *
   * @param timeoutMs How long to wait at most; without limit when omitted.
   * @returns `true` when drained (or shut down), `false` on timeout.
   */
  async flushPending(timeoutMs?: number): Promise<boolean> {
    const started = performance.now();
    if (!(await this.#queue.flush(timeoutMs))) return false;
    if (this.#queue.closed) return true;
    const left = timeoutMs === undefined
      ? undefined
      : Math.max(0, timeoutMs - (performance.now() - started));
    const report = await drainProviders(this.#entries, left);
    return report.undrained.length === 0;
  }

  /** The outcome of the last shutdown drain (a copy). */
  get shutdownDrainState(): ShutdownDrainState {
    return { ...this.#drainState };
  }

  /**
   * Shuts down within `shutdownDrainTimeoutMs` (src/manager/SPEC.md §9);
   * calling it again returns the same promise.
   */
  shutdownAll(): Promise<void> {
    this.#shutdown ??= shutdownWithin(
      this.#queue,
      this.#entries,
      this.#drainTimeoutMs,
      (state) => this.#drainState = state,
    );
    return this.#shutdown;
  }

  /** Every provider's tool schemas, deduplicated by name (src/manager/SPEC.md §6). */
  getAllToolSchemas(): Promise<ToolSchema[]> {
    return collectToolSchemas(this.#entries);
  }

  /**
   * Runs a provider tool with redacted arguments.
   *
   * @returns The provider's JSON string, or `{"error": …}` when no provider
   * handles the tool or the provider failed.
   */
  handleToolCall(
    toolName: string,
    args: Record<string, unknown>,
    options: ToolCallOptions = {},
  ): Promise<string> {
    const entry = this.#routes.get(toolName);
    return entry === undefined
      ? Promise.resolve(
        toolError(`No memory provider handles tool '${toolName}'`),
      )
      : callProviderTool(entry, toolName, args, options);
  }

  /**
   * Mirrors a committed write of the built-in `memory` tool to the external
   * provider, one call per operation (src/manager/SPEC.md §7).
   */
  async notifyMemoryToolWrite(
    result: unknown,
    args: Record<string, unknown>,
    options: NotifyMemoryToolWriteOptions = {},
  ): Promise<void> {
    const { target, ops } = mirroredOperations(result, args);
    for (const op of ops) {
      try {
        const metadata = mirrorMetadata(op, options.buildMetadata?.());
        await (op.evictionReason !== undefined
          ? this.onMemoryEvict(op.content, target, { metadata })
          : this.onMemoryWrite(op.action, target, op.content, metadata));
      } catch (error) {
        const why = redactedErrorText(error);
        log(
          "debug",
          `notifyMemoryToolWrite failed for op ${op.action}: ${why}`,
        );
      }
    }
  }

  /**
   * Fans a built-in memory write out to the external providers, redacted;
   * each gets its own metadata copy.
   */
  async onMemoryWrite(
    action: MemoryWriteAction,
    target: MemoryTarget,
    content: string,
    metadata: MemoryWriteMetadata = {},
  ): Promise<void> {
    const [text, meta] = redactForEgress([String(content ?? ""), {
      ...(metadata ?? {}),
    }]);
    await callEach(
      this.#externals,
      "onMemoryWrite",
      () => [action, target, text, { ...meta }],
    );
  }

  /** Tells the external providers the built-in store terminally dropped a fact. */
  async onMemoryEvict(
    content: string,
    target: MemoryTarget,
    options: MemoryEvictOptions = {},
  ): Promise<void> {
    const [text, meta] = redactForEgress([String(content ?? ""), {
      ...(options.metadata ?? {}),
    }]);
    await callEach(
      this.#externals,
      "onMemoryEvict",
      () => [text, target, { metadata: { ...meta } }],
    );
  }
}
