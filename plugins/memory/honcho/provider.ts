/**
 * The Honcho memory provider (plugins/memory/honcho/SPEC.md §6–§9), a thin class that
 * implements the provider contract by delegation:
 *
 * - `session.ts` — {@linkcode HonchoSession}: naming, peers, set-up on the
 *   server and readiness;
 * - `recall.ts` — {@linkcode HonchoRecall}: what `prefetch` injects and the
 *   cadences, caches and first-turn waits behind it;
 * - `write_hooks.ts` — {@linkcode HonchoWriteHooks}: turns, memory writes,
 *   checkpoints and `drain`, on the durable writer (`writer.ts`) and outbox;
 * - `tools.ts` — the five tools.
 *
 * No hook ever throws into the agent (except a required pre-compress
 * checkpoint that cannot be confirmed).
 *
 * @module
 */

import { dirname } from "node:path";
import {
  type ChatMessage,
  type ConfigField,
  type DrainResult,
  getHermesHome,
  type InitializeOptions,
  log,
  MemoryProvider,
  type MemoryTarget,
  type MemoryWriteAction,
  type MemoryWriteMetadata,
  type PreCompressOptions,
  type PrefetchOptions,
  type RecallStatus,
  recallStatus,
  type SessionSwitchOptions,
  type SyncTurnOptions,
  type ToolCallOptions,
  toolError,
  type ToolSchema,
  type TurnStartOptions,
} from "../../../src/provider/mod.ts";
import { HonchoClient, type HonchoTransportOptions } from "./client.ts";
import { globalHonchoConfigPath } from "./config_paths.ts";
import {
  HONCHO_UNAVAILABLE_REASON,
  type HonchoConfig,
  isHonchoUsable,
  loadHonchoConfig,
} from "./config.ts";
import {
  getHonchoConfigFields,
  saveHonchoSetupValues,
} from "./config_schema.ts";
import {
  NoticeBoard,
  type NoticeCause,
  RECALL_FAILURE_TEXT,
} from "./notices.ts";
import type { HonchoOutbox, HonchoOutboxOptions } from "./outbox.ts";
import {
  type HonchoLivenessSnapshot,
  HonchoRecall,
  idleLiveness,
  logInjection,
  type QueryRewriter,
} from "./recall.ts";
import {
  HonchoSession,
  type HonchoSessionIdentity,
  type IdentitySignature,
  identitySignatureOf,
} from "./session.ts";
import type { GitTopLevel } from "./session_naming.ts";
import { callHonchoTool, honchoToolSchemas, systemPromptFor } from "./tools.ts";
import {
  authorFromTurnStart,
  HonchoWriteHooks,
  type TurnAuthorInfo,
} from "./write_hooks.ts";
import {
  type HonchoRuntime,
  requestTimeoutMs,
  scrubberOf,
  TaskGroup,
  waitFor,
} from "./_runtime.ts";
import { errorText } from "./_util.ts";

export type { HonchoLivenessSnapshot, HonchoSessionIdentity, QueryRewriter };

/** Options of {@linkcode HonchoMemoryProvider}. */
export interface HonchoProviderOptions {
  /** Rewrites the user message into the pass-0 question when `queryRewrite` is on. */
  queryRewriter?: QueryRewriter;
  /**
   * Transport overrides for the HTTP client (`fetch`, retries, sleep).
   * @ignore
   */
  transport?: HonchoTransportOptions;
  /**
   * Outbox overrides (bounds, retry policy); workspace and home come from the config.
   * @ignore
   */
  outbox?: Omit<HonchoOutboxOptions, "workspace" | "hermesHome">;
  /** First retry delay of a failed background delivery, in ms. @default {1000} */
  writerRetryBaseDelayMs?: number;
  /** Ceiling of the background delivery retry delay, in ms. @default {30000} */
  writerRetryMaxDelayMs?: number;
  /** Least time between two session-init attempts started by hooks, in ms. @default {5000} */
  initRetryDelayMs?: number;
  /**
   * Honcho's own shutdown budget, in ms: staged turns are made durable,
   * then queued messages are delivered until it runs out (the rest stays
   * in the outbox for the next start). It fits inside the host's bounds
   * (the manager's and the sandbox's 5 s), so it is what applies.
   *
   * @default {4000}
   */
  shutdownTimeoutMs?: number;
  /**
   * Messages waiting for the disk above which `syncTurn` pushes back (its
   * promise resolves when there is room, at most 5 s later).
   *
   * @default {5000}
   */
  maxStagedMessages?: number;
  /**
   * How long a required pre-compress checkpoint may take, in ms (a
   * best-effort one takes at most 2 s).
   *
   * @default {max(10000, request timeout)}
   */
  checkpointTimeoutMs?: number;
  /** Read this `honcho.json` instead of resolving one. */
  configPath?: string;
  /** The Hermes version for the telemetry header. */
  hermesVersion?: string;
  /** Hermes' parsed `config.yaml` (`honcho.base_url`, `honcho.timeout` fallbacks). */
  hermesConfig?: Record<string, unknown>;
  /**
   * Finds the git top level for `per-repo` naming (tests).
   * @ignore
   */
  gitTopLevel?: GitTopLevel;
  /** The clock, epoch ms (liveness ages). @default {Date.now} */
  now?: () => number;
}

/** Honcho's shutdown budget: inside the manager's and the sandbox's 5 s. */
const SHUTDOWN_BUDGET_MS = 4_000;

/** The parts of an initialized provider. */
interface Parts {
  rt: HonchoRuntime;
  session: HonchoSession;
  recall: HonchoRecall;
  writes: HonchoWriteHooks;
  /** A preview (`initializeForInspection`): nothing is queued or flushed. */
  inspection: boolean;
}

/** The options objects of `initializeForInspection` calls. */
const INSPECTING = new WeakSet<InitializeOptions>();

/** Marks an options object as an `initializeForInspection` call's. */
function inspecting(options: InitializeOptions): InitializeOptions {
  const preview = { ...options };
  INSPECTING.add(preview);
  return preview;
}

/** What a finished prefetch did, for its recall status. */
function lastRecall(text: string, parts: Parts): LastRecall {
  return {
    injected: text !== "",
    failure: parts.rt.notices.active,
    warmUp: parts.recall.warmUpAnswer,
  };
}

/** What the last prefetch did, for its recall status. */
interface LastRecall {
  injected: boolean;
  failure?: NoticeCause;
  warmUp: boolean;
}

const NO_RECALL: LastRecall = { injected: false, warmUp: false };

/**
 * The status of a prefetch: a failure line when recall failed or is off,
 * `Honcho` with no discrete count when something was injected (with a note
 * when turn 1 answered the warm-up question), else `null`.
 */
function recallStatusOf(last: LastRecall): RecallStatus | null {
  if (last.failure !== undefined) {
    return recallStatus("Honcho", 0, {
      failure: RECALL_FAILURE_TEXT[last.failure],
    });
  }
  if (!last.injected) return null;
  return recallStatus("Honcho", 0, last.warmUp ? { note: WARM_UP_NOTE } : {});
}

/** The recall preview's note when turn 1 answered the warm-up question. */
const WARM_UP_NOTE =
  "turn 1 shows Honcho's answer to its warm-up question about the user (who they are, what they prefer), not to this message; later turns use what was prefetched after the previous message";

/**
 * The framework's `MemoryProvider`, unchanged: the base of
 * {@linkcode HonchoMemoryProvider}. It stands between the two so that the
 * Honcho entry's documentation does not take in the whole provider contract,
 * which `@hermes/memory/provider` documents; the contract's hooks below are
 * `@ignore`d for the same reason.
 *
 * @ignore
 */
abstract class ProviderContract extends MemoryProvider {}

/**
 * The Honcho memory provider: recalls what Honcho knows about the user
 * before each turn and stores the conversation through a durable outbox.
 *
 * Every hook fails open: reads return what is cached (or `""`) with a
 * one-time notice naming the cause; writes stay in the outbox until Honcho
 * accepts them; no hook throws into the agent (except
 * {@linkcode HonchoMemoryProvider.onPreCompress} when a checkpoint is
 * required and cannot be confirmed, as checkpoint API v2 demands). Its
 * hooks are the `MemoryProvider` contract's (`@hermes/memory/provider`).
 *
 * @example Serving one session
 * ```ts ignore
 * import { HonchoMemoryProvider } from "./provider.ts";
 * const provider = new HonchoMemoryProvider();
 * await provider.initialize("session-1", { platform: "cli", userId: "alice" });
 * await provider.onTurnStart(1, "What did I plan for Oslo?", {});
 * const context = await provider.prefetch("What did I plan for Oslo?", {});
 * await provider.syncTurn("What did I plan for Oslo?", "A hiking trip.", {});
 * await provider.queuePrefetch("What did I plan for Oslo?", {});
 * await provider.shutdown();
 * ```
 */
export class HonchoMemoryProvider extends ProviderContract {
  /** Implements pre-compress checkpoint API version 2. */
  override readonly preCompressCheckpointApiVersion: number = 2;

  #options: HonchoProviderOptions;
  #now: () => number;
  #initialized = false;
  #inert = false;
  #hermesHome: string | undefined;
  #platform = "cli";
  #config: HonchoConfig | undefined;
  #configPromise: Promise<HonchoConfig | undefined> | undefined;
  #parts: Parts | undefined;
  #scrub: (text: string) => string = (text) => text;
  #controller = new AbortController();
  #tasks = new TaskGroup();
  #shutdown = false;
  /** The turn `onTurnStart` reported, and its author. */
  #turn = 0;
  #author: TurnAuthorInfo = { id: undefined, name: undefined, isBot: false };
  #last: LastRecall = NO_RECALL;
  #signature: IdentitySignature | undefined;

  /**
   * Creates the provider (no I/O).
   *
   * @param options Query rewriter, transport and timing overrides.
   */
  constructor(options: HonchoProviderOptions = {}) {
    super();
    this.#options = { ...options };
    this.#now = options.now ?? Date.now;
  }

  /** The provider's name: `"honcho"`. */
  get name(): string {
    return "honcho";
  }

  /**
   * The resolved configuration, once loaded.
   * @ignore
   */
  get config(): HonchoConfig | undefined {
    return this.#config;
  }

  /** The Honcho session id and peers in use, once resolved. */
  get sessionIdentity(): Readonly<HonchoSessionIdentity> | undefined {
    const identity = this.#parts?.session.identity;
    return identity ? { ...identity } : undefined;
  }

  /**
   * The profile's outbox, once initialized.
   * @ignore
   */
  get outbox(): HonchoOutbox | undefined {
    return this.#parts?.writes.writer.outbox;
  }

  /** Whether the Honcho session is set up on the server. */
  get ready(): boolean {
    return this.#parts?.session.ready ?? false;
  }

  /**
   * Whether Honcho is configured and enabled (an API key or a base URL);
   * reads the config file, never the network.
   *
   * @returns `true` when usable.
   */
  async isAvailable(): Promise<boolean> {
    try {
      const config = this.#config ?? await loadHonchoConfig({
        hermesHome: this.#hermesHome,
        configPath: this.#options.configPath,
      });
      return isHonchoUsable(config);
    } catch {
      return false;
    }
  }

  /**
   * The hint shown when Honcho is not usable.
   *
   * @returns The hint.
   */
  override unavailableReason(): string {
    return HONCHO_UNAVAILABLE_REASON;
  }

  /**
   * Loads the profile's config, builds the client and the outbox, and
   * starts session setup in the background (no network is awaited). Cron
   * and flush agents leave the provider inert. Never throws.
   * @ignore
   */
  async initialize(
    sessionId: string,
    options: InitializeOptions = {},
  ): Promise<void> {
    try {
      this.#initialized = true;
      this.#parts = undefined;
      this.#hermesHome = options.hermesHome ?? getHermesHome();
      this.#platform = options.platform || "cli";
      const context = options.agentContext;
      if (
        context === "cron" || context === "flush" || this.#platform === "cron"
      ) {
        this.#inert = true;
        return;
      }
      // A config loaded earlier (getToolSchemas at registration) may be for
      // another home: load this profile's.
      this.#configPromise = undefined;
      const config = await this.#loadConfig();
      if (!config || !isHonchoUsable(config)) {
        this.#config = undefined;
        return;
      }
      const client = connect(config, this.#options);
      if (!client) {
        this.#config = undefined;
        return;
      }
      this.#scrub = scrubberOf(config.apiKey);
      const parts = assemble({
        sessionId,
        initOptions: { ...options },
        config,
        client,
        options: this.#options,
        hermesHome: this.#hermesHome,
        platform: this.#platform,
        signal: this.#controller.signal,
        tasks: this.#tasks,
        now: this.#now,
        stopped: () => this.#shutdown,
        turn: () => this.#turn,
        scrub: this.#scrub,
        inspection: INSPECTING.has(options),
      });
      this.#parts = parts;
      await parts.session.start();
      if (config.recallMode === "tools" && !config.initOnSessionStart) {
        // The session is set up on the first tool call; the backlog of an
        // earlier process is still delivered.
        if (!parts.inspection) parts.writes.deliverBacklogWhenNamed();
      }
    } catch (error) {
      log(
        "warn",
        `Honcho initialize failed: ${this.#scrub(errorText(error))}`,
      );
    }
  }

  /**
   * `initialize` for a preview: nothing is queued, delivered or flushed.
   * @ignore
   */
  override initializeForInspection(
    sessionId: string,
    options: InitializeOptions = {},
  ): Promise<void> {
    return this.initialize(sessionId, inspecting(options));
  }

  /**
   * The static system-prompt block for the recall mode; `""` when inert or
   * not configured.
   *
   * @returns The block.
   */
  override systemPromptBlock(): string {
    if (this.#inert || !this.#config) return "";
    return systemPromptFor(this.#config.recallMode);
  }

  /**
   * The five tool schemas; `[]` in `context` mode, when inert, or when
   * Honcho is not configured.
   * @ignore
   */
  async getToolSchemas(): Promise<ToolSchema[]> {
    if (this.#inert) return [];
    const config = this.#initialized
      ? this.#config
      : await this.#loadConfig().catch(() => undefined);
    if (!config || !isHonchoUsable(config)) return [];
    if (config.recallMode === "context") return [];
    return honchoToolSchemas();
  }

  /**
   * The setup fields of `hermes memory setup`.
   * @ignore
   */
  override getConfigSchema(): ConfigField[] {
    return getHonchoConfigFields();
  }

  /**
   * Saves non-secret setup values into `$HERMES_HOME/honcho.json`: root
   * fields at the root, the rest in the profile's host block.
   * @ignore
   */
  override async saveConfig(
    values: Record<string, unknown>,
    hermesHome: string,
  ): Promise<void> {
    await saveHonchoSetupValues(values, hermesHome);
  }

  /**
   * State outside `HERMES_HOME`: the global `~/.honcho` folder.
   *
   * @returns Absolute paths.
   */
  override backupPaths(): string[] {
    return [dirname(globalHonchoConfigPath())];
  }

  /**
   * The identity-affecting settings (workspace, peers, naming flags),
   * memoized on the config file's modification time and size.
   *
   * @returns The signature, `{}` on error.
   */
  override async identitySignature(): Promise<Record<string, unknown>> {
    try {
      this.#signature = await identitySignatureOf({
        hermesHome: this.#hermesHome,
        configPath: this.#options.configPath,
      }, this.#signature);
      return { ...this.#signature.value };
    } catch {
      return {};
    }
  }

  // -------------------------------------------------------------------------
  // The turn
  // -------------------------------------------------------------------------

  /**
   * Records the turn number and its author; starts a new recall generation.
   * @ignore
   */
  override onTurnStart(
    turnNumber: number,
    _message: string,
    options: TurnStartOptions = {},
  ): void {
    try {
      if (Number.isFinite(turnNumber)) this.#turn = Math.floor(turnNumber);
      this.#parts?.recall.startTurn();
      this.#author = authorFromTurnStart(options);
    } catch {
      // Never throw into the agent.
    }
  }

  /**
   * The context to inject before the model call (plugins/memory/honcho/SPEC.md §6): the cached base
   * layer plus a ready dialectic result, within `contextTokens`. Waits only
   * on the first turn (for at most `firstTurnBaseWait` /
   * `firstTurnDialecticWait`); afterwards it returns what background work
   * already fetched. Never throws.
   * @ignore
   */
  override async prefetch(
    query: string,
    _options: PrefetchOptions = {},
  ): Promise<string> {
    try {
      const parts = this.#parts;
      if (this.#inert || !parts) {
        this.#last = NO_RECALL;
        logInjection(this.#config, this.#tasks, {
          turn: this.#turn,
          sessionKey: undefined,
          reason: "cron-or-tools-mode",
          payload: "",
        });
        return "";
      }
      const text = await parts.recall.prefetch(query);
      this.#last = lastRecall(text, parts);
      return text;
    } catch (error) {
      log("debug", `Honcho prefetch failed: ${this.#scrub(errorText(error))}`);
      this.#last = NO_RECALL;
      return "";
    }
  }

  /**
   * The last prefetch's status ({@linkcode recallStatusOf}).
   * @ignore
   */
  override recallStatus(): RecallStatus | null {
    return recallStatusOf(this.#last);
  }

  /**
   * After the turn, warms the next one (plugins/memory/honcho/SPEC.md §6): a base-context refresh every
   * `contextCadence` turns and a dialectic every (effective)
   * `dialecticCadence` turns, both in the background. Never throws.
   * @ignore
   */
  override queuePrefetch(query: string, _options: PrefetchOptions = {}): void {
    try {
      if (this.#inert || this.#shutdown) return;
      this.#parts?.recall.queuePrefetch(query);
    } catch (error) {
      log(
        "debug",
        `Honcho queuePrefetch failed: ${this.#scrub(errorText(error))}`,
      );
    }
  }

  /**
   * Stores a completed turn (plugins/memory/honcho/SPEC.md §9): user and assistant text (fences
   * removed), chunked at `messageMaxChars`, attributed to the user (or the
   * turn's author) and AI peers, queued in the durable outbox and
   * delivered per `writeFrequency`. Tool calls and tool results in
   * `options.messages` are never sent. Returns without waiting for the
   * disk or the network. Never throws.
   * @ignore
   */
  override syncTurn(
    userContent: string,
    assistantContent: string,
    options: SyncTurnOptions = {},
  ): Promise<void> | void {
    try {
      const parts = this.#parts;
      if (this.#inert || !parts || this.#shutdown) return;
      return parts.writes.syncTurn(
        userContent,
        assistantContent,
        options,
        this.#author,
      );
    } catch (error) {
      log("debug", `Honcho syncTurn failed: ${this.#scrub(errorText(error))}`);
    }
  }

  /**
   * Mirrors an `add` to the built-in user profile as a Honcho conclusion
   * about the user, in the background. Never throws.
   * @ignore
   */
  override onMemoryWrite(
    action: MemoryWriteAction,
    target: MemoryTarget,
    content: string,
    _metadata?: MemoryWriteMetadata,
  ): void {
    try {
      if (this.#inert || this.#author.isBot) return;
      this.#parts?.writes.memoryWrite(action, target, content);
    } catch {
      // Never throw into the agent.
    }
  }

  /**
   * At a real session end: delivers everything queued (bounded). Never throws.
   * @ignore
   */
  override async onSessionEnd(_messages: ChatMessage[]): Promise<void> {
    try {
      if (this.#inert) return;
      await this.#parts?.writes.sessionEnd();
    } catch (error) {
      log(
        "debug",
        `Honcho session-end flush failed: ${this.#scrub(errorText(error))}`,
      );
    }
  }

  /**
   * Rebinds to the new session: in-flight results of the old one are
   * discarded, and the Honcho session is re-resolved (per-session naming
   * moves to the new id; a gateway key stays). Never throws.
   * @ignore
   */
  override async onSessionSwitch(
    newSessionId: string,
    _options: SessionSwitchOptions = {},
  ): Promise<void> {
    try {
      const parts = this.#parts;
      if (this.#inert || !parts) return;
      parts.recall.discard();
      await parts.session.switchTo(newSessionId);
    } catch (error) {
      log(
        "debug",
        `Honcho session switch failed: ${this.#scrub(errorText(error))}`,
      );
    }
  }

  /**
   * Checkpoint API v2: returns only when every evidence message (user and
   * assistant prose) is stored in Honcho: the outbox is flushed, the
   * messages Honcho lacks are added (keyed by content digest, so retries
   * and grown transcripts never duplicate) and delivered. With
   * `requireCheckpoint` a failure throws; otherwise the missing messages
   * stay queued in the outbox and `""` is returned.
   *
   * @throws {Error} When a required checkpoint cannot be confirmed.
   * @ignore
   */
  override async onPreCompress(
    messages: ChatMessage[],
    options: PreCompressOptions = {},
  ): Promise<string> {
    const required = options.requireCheckpoint === true;
    try {
      if (this.#inert) throw new Error("Honcho is not active (cron context)");
      if (!this.#parts) throw new Error("Honcho is not configured");
      await this.#parts.writes.checkpoint(messages, required);
    } catch (error) {
      const reason = this.#scrub(errorText(error));
      if (required) {
        throw new Error(
          `Honcho could not confirm the pre-compress checkpoint: ${reason}`,
          { cause: error },
        );
      }
      log("debug", `Honcho best-effort checkpoint incomplete: ${reason}`);
    }
    return "";
  }

  /**
   * Runs one of the five tools (plugins/memory/honcho/SPEC.md §10); always returns a JSON string.
   * @ignore
   */
  override async handleToolCall(
    toolName: string,
    args: Record<string, unknown>,
    _options: ToolCallOptions = {},
  ): Promise<string> {
    try {
      if (this.#inert) {
        return toolError("Honcho is not active (cron context).");
      }
      const parts = this.#parts;
      if (!parts) {
        return toolError("Honcho is not active for this session.");
      }
      return await callHonchoTool(toolName, args, {
        session: parts.session,
        config: parts.rt.config,
        client: parts.rt.client,
        platform: this.#platform,
        turn: this.#turn,
        botTurn: this.#author.isBot,
        signal: this.#controller.signal,
        onReasoning: () => parts.recall.noteReasoning(),
        scrub: (text) => this.#scrub(text),
      });
    } catch (error) {
      return toolError(
        `Honcho ${toolName} failed: ${this.#scrub(errorText(error))}`,
      );
    }
  }

  /**
   * Stops the provider within its budget (`shutdownTimeoutMs`, 4 s): reads
   * are aborted and discarded; every turn handed to `syncTurn` is made
   * durable in the outbox first; then queued messages are delivered until
   * the budget runs out (a request is never started that could outlive it;
   * what is left stays in the outbox for the next start, with a warning);
   * then every background task and timer is awaited or cleared. Never
   * throws.
   */
  override async shutdown(): Promise<void> {
    if (this.#shutdown) return;
    this.#shutdown = true;
    this.#parts?.session.stop();
    this.#parts?.recall.discard();
    const budget = this.#options.shutdownTimeoutMs ?? SHUTDOWN_BUDGET_MS;
    const deadline = this.#now() + budget;
    const left = (): number => Math.max(0, deadline - this.#now());
    try {
      const durable = await this.drain(left());
      this.#controller.abort(
        new DOMException("Honcho provider shut down", "AbortError"),
      );
      // A preview queued nothing and flushes no earlier backlog.
      const parts = this.#parts?.inspection ? undefined : this.#parts;
      await parts?.writes.close(durable, budget, left);
      if (!await this.#tasks.settle(left(), this.#now)) {
        log(
          "warn",
          `Honcho shut down with ${this.#tasks.size} background task(s) still running`,
        );
      }
    } catch (error) {
      log("warn", `Honcho shutdown failed: ${this.#scrub(errorText(error))}`);
    }
  }

  /**
   * Waits (at most `timeoutMs`) until every turn handed to `syncTurn` and
   * every memory write is durable: turns in the fsynced outbox (delivery
   * may still be pending; that is durable), memory writes answered by
   * Honcho.
   * @ignore
   */
  override async drain(timeoutMs?: number): Promise<DrainResult> {
    try {
      return await this.#parts?.writes.drain(timeoutMs) ??
        { drained: true, pending: 0 };
    } catch {
      return { drained: false };
    }
  }

  /**
   * Waits until staged turns are in the outbox, no delivery is running and
   * every background task of this provider has settled (tests, benchmarks).
   *
   * @param timeoutMs The most to wait.
   * @returns `true` when idle.
   */
  async idle(timeoutMs = 30_000): Promise<boolean> {
    const deadline = this.#now() + timeoutMs;
    for (;;) {
      const writer = this.#parts?.writes.writer.idle() ?? Promise.resolve();
      const tasks = this.#tasks.current();
      const left = deadline - this.#now();
      if (left <= 0) return false;
      if (!await waitFor(Promise.all([writer, tasks]), left)) return false;
      // A scheduled delivery retry is not waited for.
      if (this.#tasks.size === 0) return true;
    }
  }

  /**
   * The dialectic pipeline's state (plugins/memory/honcho/SPEC.md §6).
   *
   * @returns The snapshot.
   */
  livenessSnapshot(): HonchoLivenessSnapshot {
    return this.#parts?.recall.liveness() ??
      idleLiveness(this.#turn, this.#config?.dialecticCadence ?? 1);
  }

  async #loadConfig(): Promise<HonchoConfig | undefined> {
    this.#configPromise ??= loadHonchoConfig({
      hermesHome: this.#hermesHome,
      configPath: this.#options.configPath,
    }).then((config) => {
      this.#config = config;
      return config;
    }, (error) => {
      log("warn", `Cannot load the Honcho config: ${errorText(error)}`);
      this.#configPromise = undefined;
      return undefined;
    });
    return await this.#configPromise;
  }
}

/**
 * The client for a usable config, with one warning when the workspace id
 * had to be sanitised; `undefined` (with a warning) when it cannot be built.
 */
function connect(
  config: HonchoConfig,
  options: HonchoProviderOptions,
): HonchoClient | undefined {
  let client: HonchoClient;
  try {
    client = HonchoClient.fromConfig(config, {
      ...options.transport,
      hermesVersion: options.hermesVersion,
      hermesConfig: options.hermesConfig,
    });
  } catch (error) {
    log(
      "warn",
      `Honcho is inactive: ${scrubberOf(config.apiKey)(errorText(error))}`,
    );
    return undefined;
  }
  if (client.workspaceId !== config.workspaceId) {
    log(
      "warn",
      `Honcho workspace '${config.workspaceId}' (${config.configPath}) has characters Honcho refuses; using '${client.workspaceId}'. Set "workspace" to an id of letters, digits, _ and - to silence this`,
    );
  }
  return client;
}

/** What {@linkcode assemble} wires together. */
interface AssemblyInput {
  sessionId: string;
  initOptions: InitializeOptions;
  config: HonchoConfig;
  client: HonchoClient;
  options: HonchoProviderOptions;
  hermesHome: string;
  platform: string;
  signal: AbortSignal;
  tasks: TaskGroup;
  now: () => number;
  stopped: () => boolean;
  turn: () => number;
  scrub: (text: string) => string;
  /** A preview: delivery never resumes. */
  inspection: boolean;
}

/**
 * Builds the parts of one initialized session and wires them: set-up
 * success starts recall's late work and resumes delivery; a move to
 * another Honcho session resets recall and sets the new one up.
 */
function assemble(input: AssemblyInput): Parts {
  const { config, options } = input;
  const rt: HonchoRuntime = {
    config,
    client: input.client,
    notices: new NoticeBoard(input.platform, input.hermesHome),
    signal: input.signal,
    tasks: input.tasks,
    now: input.now,
    stopped: input.stopped,
    timeoutMs: requestTimeoutMs(config),
    scrub: input.scrub,
  };
  const session: HonchoSession = new HonchoSession(rt, {
    sessionId: input.sessionId,
    initOptions: input.initOptions,
    gitTopLevel: options.gitTopLevel,
    initRetryDelayMs: options.initRetryDelayMs,
    onReady: (stale) => {
      recall.sessionReady(stale);
      if (!input.inspection) writes.writer.resume();
    },
    onMoved: () => {
      recall.sessionMoved();
      if (config.recallMode !== "tools") session.kick(true);
    },
  });
  const recall = new HonchoRecall(rt, session, {
    turn: input.turn,
    queryRewriter: options.queryRewriter,
    // Reads back off as the writes do.
    retryBaseDelayMs: options.writerRetryBaseDelayMs,
    retryMaxDelayMs: options.writerRetryMaxDelayMs,
  });
  const writes = new HonchoWriteHooks(rt, session, {
    hermesHome: input.hermesHome,
    outbox: options.outbox,
    retryBaseDelayMs: options.writerRetryBaseDelayMs,
    retryMaxDelayMs: options.writerRetryMaxDelayMs,
    maxStagedMessages: options.maxStagedMessages,
    checkpointTimeoutMs: options.checkpointTimeoutMs,
  });
  return { rt, session, recall, writes, inspection: input.inspection };
}
