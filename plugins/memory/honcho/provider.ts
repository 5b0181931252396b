/**
 * The Honcho memory provider (plugins/memory/honcho/SPEC.md §6–§9): contract hooks over `session.ts`,
 * `recall.ts`, `write_hooks.ts`/`outbox.ts` and `tools.ts`.
 * @module
 */

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
import { dirname } from "../../../src/provider/_bundled.ts";
import { HonchoClient } from "./client/client.ts";
import type { HonchoTransportOptions } from "./client/_transport.ts";
import { globalHonchoConfigPath } from "./config/paths.ts";
import {
  HONCHO_UNAVAILABLE_REASON,
  type HonchoConfig,
  isHonchoUsable,
  loadHonchoConfig,
  type LoadHonchoConfigOptions,
} from "./config/config.ts";
import {
  getHonchoConfigFields,
  saveHonchoSetupValues,
} from "./config/schema.ts";
import {
  NoticeBoard,
  type NoticeCause,
  RECALL_FAILURE_TEXT,
} from "./notices.ts";
import type { HonchoOutbox, HonchoOutboxOptions } from "./outbox/outbox.ts";
import {
  type HonchoLivenessSnapshot,
  HonchoRecall,
  idleLiveness,
  logInjection,
  type QueryRewriter,
} from "./recall/recall.ts";
import {
  HonchoSession,
  type HonchoSessionIdentity,
  type IdentitySignature,
  identitySignatureOf,
} from "./session/session.ts";
import type { GitTopLevel } from "./session/naming.ts";
import { callHonchoTool, honchoToolSchemas, systemPromptFor } from "./tools.ts";
import {
  HonchoWriteHooks,
  type TurnAuthorInfo,
  turnAuthorInfo,
} from "./session/write_hooks.ts";
import {
  type HonchoRuntime,
  requestTimeoutMs,
  TaskGroup,
  waitFor,
} from "./_runtime.ts";
import { HONCHO_TIMINGS } from "./config/timings_table.ts";
import { errorText, logFailure, scrubberOf } from "./_util.ts";

export type { HonchoLivenessSnapshot, HonchoSessionIdentity, QueryRewriter };

/** Options of {@linkcode HonchoMemoryProvider}. */
export interface HonchoProviderOptions {
  /** Rewrites the user message into the pass-0 question when `queryRewrite` is on. */
  queryRewriter?: QueryRewriter;
  /** @ignore */
  transport?: HonchoTransportOptions;
  /** @ignore */
  outbox?: Omit<HonchoOutboxOptions, "workspace" | "hermesHome" | "delivery">;
  /** First retry delay of a failed delivery (within a round and before the next), in ms. @default {HONCHO_TIMINGS.delivery.baseMs} */
  deliveryRetryBaseDelayMs?: number;
  /** Ceiling of the delivery retry delay, in ms. @default {HONCHO_TIMINGS.delivery.maxMs} */
  deliveryRetryMaxDelayMs?: number;
  /** First pause of recall's reads after a failure, in ms. @default {HONCHO_TIMINGS.recall.baseMs} */
  recallRetryBaseDelayMs?: number;
  /** Longest pause of recall's reads, in ms. @default {HONCHO_TIMINGS.recall.maxMs} */
  recallRetryMaxDelayMs?: number;
  /** @deprecated Sets both `deliveryRetryBaseDelayMs` and `recallRetryBaseDelayMs`. */
  writerRetryBaseDelayMs?: number;
  /** @deprecated Sets both `deliveryRetryMaxDelayMs` and `recallRetryMaxDelayMs`. */
  writerRetryMaxDelayMs?: number;
  /** Least time between two session-init attempts started by hooks, in ms. @default {5000} */
  initRetryDelayMs?: number;
  /**
   * Shutdown budget, in ms: staged turns are made durable, then queued messages delivered until it
   * runs out (the rest waits for the next start). @default {4000}
   */
  shutdownTimeoutMs?: number;
  /**
   * Messages waiting for the disk above which `syncTurn` pushes back (its
   * promise resolves when there is room, at most 5 s later). @default {5000}
   */
  maxStagedMessages?: number;
  /**
   * How long a required pre-compress checkpoint may take, in ms (a
   * best-effort one: at most 2 s). @default {max(10000, request timeout)}
   */
  checkpointTimeoutMs?: number;
  /** Read this `honcho.json` instead of resolving one. */
  configPath?: string;
  /** The Hermes version for the telemetry header. */
  hermesVersion?: string;
  /** Hermes' parsed `config.yaml` (`honcho.base_url`, `honcho.timeout` fallbacks). */
  hermesConfig?: Record<string, unknown>;
  /** @ignore */
  gitTopLevel?: GitTopLevel;
  /** The clock, epoch ms (liveness ages). @default {Date.now} */
  now?: () => number;
}

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

/** What the last prefetch did, for its recall status. */
interface LastRecall {
  injected: boolean;
  failure?: NoticeCause;
  warmUp: boolean;
}

const NO_RECALL: LastRecall = { injected: false, warmUp: false };

function recallStatusOf(last: LastRecall): RecallStatus | null {
  if (last.failure !== undefined) {
    return recallStatus("Honcho", 0, {
      failure: RECALL_FAILURE_TEXT[last.failure],
    });
  }
  if (!last.injected) return null;
  return recallStatus("Honcho", 0, last.warmUp ? { note: WARM_UP_NOTE } : {});
}

const WARM_UP_NOTE =
  "turn 1 shows Honcho's answer to its warm-up question about the user (who they are, what they prefer), not to this message; later turns use what was prefetched after the previous message";

/**
 * `MemoryProvider` unchanged, so that the Honcho entry's documentation does not repeat the contract
 * (`@hermes/memory/provider` documents it).
 * @ignore
 */
abstract class ProviderContract extends MemoryProvider {}

/**
 * The Honcho memory provider: recalls what Honcho knows about the user before each turn and stores
 * the conversation through a durable outbox. Its hooks are the `MemoryProvider` contract's
 * (`@hermes/memory/provider`).
 *
 * Every hook fails open: reads return what is cached (or `""`) with a one-time notice naming the
 * cause; writes stay in the outbox until Honcho accepts them; no hook throws into the agent (except
 * {@linkcode HonchoMemoryProvider.onPreCompress} when a required checkpoint cannot be confirmed, as
 * checkpoint API v2 demands).
 *
 * @example Serving one session
 * ```ts ignore
 * import { HonchoMemoryProvider } from "./provider.ts";
 * const provider = new HonchoMemoryProvider();
 * await provider.initialize("session-1", { platform: "cli", userId: "alice" });
 * const context = await provider.prefetch("What did I plan for Oslo?", {});
 * await provider.syncTurn("What did I plan for Oslo?", "A hiking trip.", {});
 * await provider.shutdown();
 * ```
 */
export class HonchoMemoryProvider extends ProviderContract {
  /** Implements pre-compress checkpoint API version 2. */
  override readonly preCompressCheckpointApiVersion: number = 2;
  /** Its `syncTurn` stores the turn's two texts, never the transcript (as Hermes' Honcho). */
  override readonly syncTurnTakesMessages: boolean = false;

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
  #turn = 0;
  #author: TurnAuthorInfo = { id: undefined, name: undefined, isBot: false };
  #last: LastRecall = NO_RECALL;
  #signature: IdentitySignature | undefined;

  /** Creates the provider (no I/O). */
  constructor(options: HonchoProviderOptions = {}) {
    super();
    this.#options = { ...options };
    this.#now = options.now ?? Date.now;
  }

  /** The provider's name: `"honcho"`. */
  get name(): string {
    return "honcho";
  }

  /** @ignore */
  get config(): HonchoConfig | undefined {
    return this.#config;
  }

  /** The Honcho session id and peers in use, once resolved. */
  get sessionIdentity(): Readonly<HonchoSessionIdentity> | undefined {
    const identity = this.#parts?.session.identity;
    return identity ? { ...identity } : undefined;
  }

  /** @ignore */
  get outbox(): HonchoOutbox | undefined {
    return this.#parts?.writes.outbox;
  }

  /** Whether the Honcho session is set up on the server. */
  get ready(): boolean {
    return this.#parts?.session.ready ?? false;
  }

  /**
   * Whether Honcho is configured and enabled (an API key or a base URL);
   * reads the config file, never the network.
   */
  async isAvailable(): Promise<boolean> {
    try {
      const config = this.#config ?? await loadHonchoConfig(this.#where());
      return isHonchoUsable(config);
    } catch {
      return false;
    }
  }

  /** The hint shown when Honcho is not usable. */
  override unavailableReason(): string {
    return HONCHO_UNAVAILABLE_REASON;
  }

  /**
   * Loads the config, builds the parts, starts set-up in the background; cron and flush agents stay inert.
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
      // One loaded earlier (getToolSchemas) may be another home's.
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
      const parts = this.#assemble(sessionId, options, config, client);
      this.#parts = parts;
      await parts.session.start();
      if (config.recallMode === "tools" && !config.initOnSessionStart) {
        // Set-up waits for the first tool call; the backlog is still delivered.
        if (!parts.inspection) {
          this.#tasks.track(
            parts.session.named().then(() =>
              parts.writes.outbox.deliverBacklog()
            ),
          );
        }
      }
    } catch (error) {
      logFailure("initialize", error, this.#scrub, "warn");
    }
  }

  /** @ignore */
  override initializeForInspection(
    sessionId: string,
    options: InitializeOptions = {},
  ): Promise<void> {
    const preview = { ...options };
    INSPECTING.add(preview);
    return this.initialize(sessionId, preview);
  }

  /** The static system-prompt block for the recall mode; `""` when inert or not configured. */
  override systemPromptBlock(): string {
    if (this.#inert || !this.#config) return "";
    return systemPromptFor(this.#config.recallMode);
  }

  /**
   * `[]` in `context` mode, inert or unconfigured.
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

  /** @ignore */
  override getConfigSchema(): ConfigField[] {
    return getHonchoConfigFields();
  }

  /** @ignore */
  override async saveConfig(
    values: Record<string, unknown>,
    hermesHome: string,
  ): Promise<void> {
    await saveHonchoSetupValues(values, hermesHome);
  }

  /** State outside `HERMES_HOME`: the global `~/.honcho` folder. */
  override backupPaths(): string[] {
    return [dirname(globalHonchoConfigPath())];
  }

  /**
   * The identity-affecting settings (workspace, peers, naming flags),
   * memoized on the config file's modification time and size; `{}` on error.
   */
  override async identitySignature(): Promise<Record<string, unknown>> {
    try {
      this.#signature = await identitySignatureOf(
        this.#where(),
        this.#signature,
      );
      return { ...this.#signature.value };
    } catch {
      return {};
    }
  }

  /** @ignore */
  override onTurnStart(
    turnNumber: number,
    _message: string,
    options: TurnStartOptions = {},
  ): void {
    try {
      if (Number.isFinite(turnNumber)) this.#turn = Math.floor(turnNumber);
      this.#parts?.recall.startTurn();
      this.#author = turnAuthorInfo(
        options.authorId,
        options.authorName,
        options.authorIsBot,
      );
    } catch {
      // Never throw into the agent.
    }
  }

  /** @ignore */
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
      this.#last = {
        injected: text !== "",
        failure: parts.rt.notices.active,
        warmUp: parts.recall.warmUpAnswer,
      };
      return text;
    } catch (error) {
      logFailure("prefetch", error, this.#scrub);
      this.#last = NO_RECALL;
      return "";
    }
  }

  /** @ignore */
  override recallStatus(): RecallStatus | null {
    return recallStatusOf(this.#last);
  }

  /** @ignore */
  override queuePrefetch(query: string, _options: PrefetchOptions = {}): void {
    try {
      if (this.#inert || this.#shutdown) return;
      this.#parts?.recall.queuePrefetch(query);
    } catch (error) {
      logFailure("queuePrefetch", error, this.#scrub);
    }
  }

  /** @ignore */
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
      logFailure("syncTurn", error, this.#scrub);
    }
  }

  /** @ignore */
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

  /** @ignore */
  override async onSessionEnd(_messages: ChatMessage[]): Promise<void> {
    try {
      const parts = this.#parts;
      if (this.#inert || !parts?.rt.config.saveMessages) return;
      await parts.writes.outbox.flushAll(Math.max(10_000, parts.rt.timeoutMs));
    } catch (error) {
      logFailure("session-end flush", error, this.#scrub);
    }
  }

  /** @ignore */
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
      logFailure("session switch", error, this.#scrub);
    }
  }

  /** @ignore */
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

  /** @ignore */
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
   * Stops within `shutdownTimeoutMs` (4 s): every turn handed to `syncTurn` is made durable, then
   * queued messages are delivered until the budget runs out (the rest stays in the outbox for the
   * next start, with a warning). Never throws.
   */
  override async shutdown(): Promise<void> {
    if (this.#shutdown) return;
    this.#shutdown = true;
    this.#parts?.session.stop();
    this.#parts?.recall.discard();
    const budget = this.#options.shutdownTimeoutMs ?? HONCHO_TIMINGS.shutdownMs;
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
      logFailure("shutdown", error, this.#scrub, "warn");
    }
  }

  /** @ignore */
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
   * @returns `true` when idle.
   */
  async idle(timeoutMs = 30_000): Promise<boolean> {
    const deadline = this.#now() + timeoutMs;
    for (;;) {
      const outbox = this.#parts?.writes.outbox.idle() ?? Promise.resolve();
      const tasks = this.#tasks.current();
      const left = deadline - this.#now();
      if (left <= 0) return false;
      if (!await waitFor(Promise.all([outbox, tasks]), left)) return false;
      // A scheduled delivery retry is not waited for.
      if (this.#tasks.size === 0) return true;
    }
  }

  /** The dialectic pipeline's state (plugins/memory/honcho/SPEC.md §6). */
  livenessSnapshot(): HonchoLivenessSnapshot {
    return this.#parts?.recall.liveness() ??
      idleLiveness(this.#turn, this.#config?.dialecticCadence ?? 1);
  }

  /** Wires one session's parts: set-up resumes recall and delivery; a move resets recall. */
  #assemble(
    sessionId: string,
    initOptions: InitializeOptions,
    config: HonchoConfig,
    client: HonchoClient,
  ): Parts {
    const o = this.#options;
    const inspection = INSPECTING.has(initOptions);
    const rt: HonchoRuntime = {
      // An MCP client asks and waits: recall answers its query
      // (plugins/memory/honcho/SPEC.md §6).
      config: this.#platform === "mcp"
        ? { ...config, recallSync: true }
        : config,
      client,
      notices: new NoticeBoard(this.#platform, this.#hermesHome!),
      signal: this.#controller.signal,
      tasks: this.#tasks,
      now: this.#now,
      stopped: () => this.#shutdown,
      timeoutMs: requestTimeoutMs(config),
      scrub: this.#scrub,
    };
    const session: HonchoSession = new HonchoSession(rt, {
      sessionId,
      initOptions: { ...initOptions },
      gitTopLevel: o.gitTopLevel,
      initRetryDelayMs: o.initRetryDelayMs,
      // Reads start beside the session's creation (turn 1 waits one round trip), with the flags
      // the creation gives Honcho; a different read-back applies from the next read.
      onNamed: () => recall.sessionReady(false),
      onReady: (stale) => {
        recall.sessionReady(stale);
        if (!inspection) writes.outbox.resume();
      },
      onMoved: () => {
        recall.sessionMoved();
        if (config.recallMode !== "tools") session.kick(true);
      },
    });
    const recall = new HonchoRecall(rt, session, {
      turn: () => this.#turn,
      queryRewriter: o.queryRewriter,
      retryBaseDelayMs: o.recallRetryBaseDelayMs ?? o.writerRetryBaseDelayMs,
      retryMaxDelayMs: o.recallRetryMaxDelayMs ?? o.writerRetryMaxDelayMs,
    });
    const writes = new HonchoWriteHooks(rt, session, {
      hermesHome: this.#hermesHome!,
      outbox: {
        retryBaseDelayMs: o.deliveryRetryBaseDelayMs ??
          o.writerRetryBaseDelayMs,
        retryMaxDelayMs: o.deliveryRetryMaxDelayMs ?? o.writerRetryMaxDelayMs,
        ...o.outbox,
      },
      maxStagedMessages: o.maxStagedMessages,
      checkpointTimeoutMs: o.checkpointTimeoutMs,
    });
    return { rt, session, recall, writes, inspection };
  }

  #where(): LoadHonchoConfigOptions {
    return {
      hermesHome: this.#hermesHome,
      configPath: this.#options.configPath,
    };
  }

  async #loadConfig(): Promise<HonchoConfig | undefined> {
    this.#configPromise ??= loadHonchoConfig(this.#where()).then((config) => {
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

/** The client, with one warning when the workspace id had to be sanitised. */
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
