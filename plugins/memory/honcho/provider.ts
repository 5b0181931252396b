/**
 * The Honcho memory provider (honcho-provider §5–§8): the turn pipeline
 * (two-layer context on cadences, first-turn bounded waits, recallSync),
 * durable writes through the outbox, the five tools, checkpoint API v2, and
 * a failure policy where no hook ever throws into the agent.
 *
 * @module
 */

import { appendFile } from "node:fs/promises";
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
  resolveAgentCwd,
  type SessionSwitchOptions,
  spawnContextTask,
  type SyncTurnOptions,
  type ToolCallOptions,
  type ToolSchema,
  type TurnStartOptions,
} from "@hermes/memory";
import { isTrivialPrompt } from "@hermes/memory";
import { chunkMessage } from "./chunking.ts";
import {
  CHUNK_METADATA_KEY,
  DIGEST_METADATA_KEY,
  evidenceItems,
  missingEvidence,
  ROLE_METADATA_KEY,
  storedDigestCounts,
  storedText,
  turnDigest,
} from "./checkpoint.ts";
import {
  HonchoClient,
  type HonchoTransportOptions,
  type SessionPeerConfig,
} from "./client.ts";
import { globalHonchoConfigPath } from "./config_paths.ts";
import {
  type HonchoConfig,
  isHonchoUsable,
  loadHonchoConfig,
  type ReasoningLevel,
} from "./config.ts";
import { saveHonchoConfig } from "./config_file.ts";
import {
  getHonchoConfigFields,
  HONCHO_CONFIG_SCHEMA,
} from "./config_schema.ts";
import {
  applyTokenBudget,
  type BaseContextData,
  capDialecticInput,
  capDialecticResult,
  cleanHonchoSummary,
  formatBaseContext,
} from "./context.ts";
import {
  type DialecticSettings,
  effectiveCadence,
  PREWARM_QUERY,
  runDialecticDepth,
} from "./dialectic.ts";
import {
  AuthError,
  HonchoConfigError,
  HonchoError,
  HonchoPeerUnresolvedError,
  PermissionDeniedError,
} from "./errors.ts";
import {
  failureReason,
  NoticeBoard,
  type NoticeCause,
  noticeText,
} from "./notices.ts";
import {
  mergeServerObservation,
  type SessionObservation,
} from "./observation.ts";
import {
  HonchoOutbox,
  type HonchoOutboxOptions,
  type OutboxDeliverResult,
  type OutboxMessageInput,
  stableOutboxId,
} from "./outbox.ts";
import {
  resolveAiPeerId,
  resolveAuthorPeerId,
  resolveUserPeerId,
} from "./peers.ts";
import {
  a2aSessionKey,
  type GitTopLevel,
  honchoSessionId,
  resolveSessionKey,
  sanitizeId,
} from "./session_naming.ts";
import {
  HONCHO_TOOL_NAMES,
  honchoToolSchemas,
  runHonchoTool,
  systemPromptFor,
  toolErrorJson,
} from "./tools.ts";
import { isInternalGatewayNotification } from "./turn_filter.ts";
import { HonchoWriter } from "./writer.ts";
import { errorText } from "./_util.ts";

/** A function that rewrites a user message into a better recall question. */
export type QueryRewriter = (query: string) => Promise<string> | string;

/** Options of {@linkcode HonchoMemoryProvider}. */
export interface HonchoProviderOptions {
  /** Rewrites the user message into the pass-0 question when `queryRewrite` is on. */
  queryRewriter?: QueryRewriter;
  /** Transport overrides for the HTTP client (`fetch`, retries, sleep). */
  transport?: HonchoTransportOptions;
  /** Outbox overrides (bounds, retry policy); workspace and home come from the config. */
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
  /** Finds the git top level for `per-repo` naming (tests). */
  gitTopLevel?: GitTopLevel;
  /** The clock, epoch ms (liveness ages). @default {Date.now} */
  now?: () => number;
}

/** A snapshot of the dialectic pipeline, for diagnostics (§5.11). */
export interface HonchoLivenessSnapshot {
  /** The current turn. */
  turnCount: number;
  /** The turn the last dialectic result was fired for (-999: never). */
  lastDialecticTurn: number;
  /** `firedAt` of the pending result, or `null`. */
  pendingResultFiredAt: number | null;
  /** Empty or failed dialectic answers in a row. */
  emptyStreak: number;
  /** The cadence in effect. */
  effectiveCadence: number;
  /** Whether a dialectic is running. */
  threadAlive: boolean;
  /** Seconds the running dialectic has been running, or `null`. */
  threadAgeSeconds: number | null;
}

/** The Honcho session and peers a provider writes to and reads from. */
export interface HonchoSessionIdentity {
  /** The resolved session name (§2), before id sanitising. */
  sessionKey: string;
  /** The Honcho session id. */
  sessionId: string;
  /** The user peer. */
  userPeerId: string;
  /** The AI peer. */
  aiPeerId: string;
  /** The runtime user ids the host passed (`userId`, `userIdAlt`). */
  runtimeIds: string[];
}

type Identity = HonchoSessionIdentity;

interface PendingDialectic {
  result: string;
  firedAt: number;
  generation: object;
}

interface DialecticRun {
  done: Promise<void>;
  startedAt: number;
  firedAt: number;
}

interface TurnAuthorInfo {
  id: string | undefined;
  name: string | undefined;
  isBot: boolean;
}

const NEVER = -999;
const INIT_WAIT_FALLBACK_S = 30;
const SEARCH_QUERY_MAX_CHARS = 1000;
const BEST_EFFORT_CHECKPOINT_MS = 2_000;
/** Honcho's shutdown budget: inside the manager's and the sandbox's 5 s. */
const SHUTDOWN_BUDGET_MS = 4_000;

/**
 * The Honcho memory provider: recalls what Honcho knows about the user
 * before each turn and stores the conversation through a durable outbox.
 *
 * Every hook fails open: reads return what is cached (or `""`) with a
 * one-time notice naming the cause; writes stay in the outbox until Honcho
 * accepts them; no hook throws into the agent (except
 * {@linkcode HonchoMemoryProvider.onPreCompress} when a checkpoint is
 * required and cannot be confirmed, as checkpoint API v2 demands).
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
export class HonchoMemoryProvider extends MemoryProvider {
  /** Implements pre-compress checkpoint API version 2. */
  override readonly preCompressCheckpointApiVersion: number = 2;

  #options: HonchoProviderOptions;
  #now: () => number;
  #initialized = false;
  #inert = false;
  #hermesHome: string | undefined;
  #platform = "cli";
  #initOptions: InitializeOptions = {};
  #hermesSessionId = "";
  #config: HonchoConfig | undefined;
  #configPromise: Promise<HonchoConfig | undefined> | undefined;
  #client: HonchoClient | undefined;
  #writer: HonchoWriter | undefined;
  #apiKey: string | undefined;
  #identity: Identity | undefined;
  #identityPromise: Promise<Identity | undefined> | undefined;
  #peerError: HonchoPeerUnresolvedError | undefined;
  #ready = false;
  #initRun: Promise<void> | undefined;
  #lastInitAttempt = Number.NEGATIVE_INFINITY;
  #observation: SessionObservation | undefined;
  #sessionSetups = new Map<string, () => Promise<void>>();
  #notices = new NoticeBoard();
  #sessionGen: object = {};
  #recallGen: object = {};
  #controller = new AbortController();
  #tasks = new Set<Promise<unknown>>();
  #shutdown = false;
  // Turn state (§5).
  #turn = 0;
  #lastContextTurn = NEVER;
  #lastDialecticTurn = NEVER;
  #baseCache: string | null = null;
  #baseStarted = false;
  #pendingContext: { data: BaseContextData; generation: object } | undefined;
  #contextRun: Promise<void> | undefined;
  #dialecticRun: DialecticRun | undefined;
  #pendingDialectic: PendingDialectic | undefined;
  #emptyStreak = 0;
  #recallSyncBusy = false;
  #lastQuery = "";
  #author: TurnAuthorInfo = { id: undefined, name: undefined, isBot: false };
  #lastInjected = false;
  #identitySignatureMemo:
    | { stamp: string; value: Record<string, unknown> }
    | undefined;

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

  /** The resolved configuration, once loaded. */
  get config(): HonchoConfig | undefined {
    return this.#config;
  }

  /** The Honcho session id and peers in use, once resolved. */
  get sessionIdentity(): Readonly<HonchoSessionIdentity> | undefined {
    return this.#identity ? { ...this.#identity } : undefined;
  }

  /** The profile's outbox, once initialized. */
  get outbox(): HonchoOutbox | undefined {
    return this.#writer?.outbox;
  }

  /** Whether the Honcho session is set up on the server. */
  get ready(): boolean {
    return this.#ready;
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
    return "Set HONCHO_API_KEY or run 'hermes honcho setup' (a local Honcho needs only a baseUrl).";
  }

  /**
   * Loads the profile's config, builds the client and the outbox, and
   * starts session setup in the background (no network is awaited). Cron
   * and flush agents leave the provider inert. Never throws.
   *
   * @param sessionId The Hermes session id.
   * @param options What the host knows about the session.
   */
  async initialize(
    sessionId: string,
    options: InitializeOptions = {},
  ): Promise<void> {
    try {
      this.#initialized = true;
      this.#hermesSessionId = sessionId;
      this.#initOptions = { ...options };
      this.#hermesHome = options.hermesHome ?? getHermesHome();
      this.#platform = options.platform || "cli";
      this.#notices = new NoticeBoard(this.#platform, this.#hermesHome);
      this.#writeWarnings.clear();
      this.#sessionGen = {};
      this.#recallGen = {};
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
      try {
        this.#client = HonchoClient.fromConfig(config, {
          ...this.#options.transport,
          hermesVersion: this.#options.hermesVersion,
          hermesConfig: this.#options.hermesConfig,
        });
      } catch (error) {
        log("warn", `Honcho is inactive: ${this.#scrub(errorText(error))}`);
        this.#config = undefined;
        return;
      }
      this.#apiKey = config.apiKey;
      if (this.#client.workspaceId !== config.workspaceId) {
        log(
          "warn",
          `Honcho workspace '${config.workspaceId}' (${config.configPath}) has characters Honcho refuses; using '${this.#client.workspaceId}'. Set "workspace" to an id of letters, digits, _ and - to silence this`,
        );
      }
      // The outbox keeps the configured name (its file stays where an
      // earlier version queued it); delivery uses the client's workspace.
      const outbox = new HonchoOutbox({
        ...this.#options.outbox,
        workspace: config.workspaceId,
        hermesHome: this.#hermesHome,
      });
      this.#writer = new HonchoWriter({
        outbox,
        client: this.#client,
        writeFrequency: config.writeFrequency,
        ensureReady: (signal) => this.#ensureSession(signal),
        retryBaseDelayMs: this.#options.writerRetryBaseDelayMs,
        retryMaxDelayMs: this.#options.writerRetryMaxDelayMs,
        maxStagedMessages: this.#options.maxStagedMessages,
        onResult: (result) => this.#onDeliveryResult(result),
      });
      this.#identityPromise = this.#resolveIdentity();
      if (config.recallMode !== "tools") {
        this.#kickInit(true);
      } else if (config.initOnSessionStart) {
        await this.#waitFor(
          this.#ensureSession(this.#controller.signal).catch(() => {}),
          this.#timeoutMs(),
        );
      } else {
        // Tools mode: the session is set up on the first tool call; the
        // backlog of an earlier process is still delivered.
        this.#track(
          this.#identityPromise.then(() => this.#writer?.deliverBacklog()),
        );
      }
    } catch (error) {
      log(
        "warn",
        `Honcho initialize failed: ${this.#scrub(errorText(error))}`,
      );
    }
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
   *
   * @returns The schemas.
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
   *
   * @returns The fields.
   */
  override getConfigSchema(): ConfigField[] {
    return getHonchoConfigFields();
  }

  /**
   * Saves non-secret setup values into `$HERMES_HOME/honcho.json`: root
   * fields at the root, the rest in the profile's host block.
   *
   * @param values The values.
   * @param hermesHome The profile home.
   */
  override async saveConfig(
    values: Record<string, unknown>,
    hermesHome: string,
  ): Promise<void> {
    const root: Record<string, unknown> = {};
    const host: Record<string, unknown> = {};
    const scopes = new Map(
      HONCHO_CONFIG_SCHEMA.fields.map((f) => [f.key, f] as const),
    );
    for (const [key, value] of Object.entries(values)) {
      const field = scopes.get(key);
      if (field?.kind === "secret") continue;
      (field?.scope === "root" ? root : host)[key] = value;
    }
    if (Object.keys(root).length > 0) {
      await saveHonchoConfig(root, hermesHome);
    }
    if (Object.keys(host).length > 0) {
      await saveHonchoConfig(host, hermesHome, { hostBlock: true });
    }
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
      const config = await loadHonchoConfig({
        hermesHome: this.#hermesHome,
        configPath: this.#options.configPath,
      });
      let stamp = `${config.configPath}:missing`;
      try {
        const info = await Deno.stat(config.configPath);
        stamp = `${config.configPath}:${info.mtime?.getTime()}:${info.size}`;
      } catch {
        // Missing file: env-only settings.
      }
      if (this.#identitySignatureMemo?.stamp === stamp) {
        return { ...this.#identitySignatureMemo.value };
      }
      const value: Record<string, unknown> = {
        workspace: config.workspaceId,
        peerName: config.peerName ?? null,
        aiPeer: config.aiPeer,
        pinUserPeer: config.pinUserPeer,
        runtimePeerPrefix: config.runtimePeerPrefix,
        userPeerAliases: { ...config.userPeerAliases },
        sessionPeerPrefix: config.sessionPeerPrefix,
        sessionAiPeerPrefix: config.sessionAiPeerPrefix,
        a2aSessions: config.a2aSessions,
      };
      this.#identitySignatureMemo = { stamp, value };
      return { ...value };
    } catch {
      return {};
    }
  }

  // -------------------------------------------------------------------------
  // The turn
  // -------------------------------------------------------------------------

  /**
   * Records the turn number and its author; starts a new recall generation.
   *
   * @param turnNumber The 1-based turn.
   * @param _message The user's message.
   * @param options Author details.
   */
  override onTurnStart(
    turnNumber: number,
    _message: string,
    options: TurnStartOptions = {},
  ): void {
    try {
      if (Number.isFinite(turnNumber)) this.#turn = Math.floor(turnNumber);
      this.#recallGen = {};
      this.#author = {
        id: typeof options.authorId === "string" && options.authorId.trim()
          ? options.authorId.trim()
          : undefined,
        name: typeof options.authorName === "string"
          ? options.authorName
          : undefined,
        isBot: options.authorIsBot === true,
      };
    } catch {
      // Never throw into the agent.
    }
  }

  /**
   * The context to inject before the model call (§5.3): the cached base
   * layer plus a ready dialectic result, within `contextTokens`. Waits only
   * on the first turn (for at most `firstTurnBaseWait` /
   * `firstTurnDialecticWait`); afterwards it returns what background work
   * already fetched. Never throws.
   *
   * @param query The user's message.
   * @param _options The session.
   * @returns The context, or `""`.
   */
  override async prefetch(
    query: string,
    _options: PrefetchOptions = {},
  ): Promise<string> {
    try {
      const config = this.#config;
      if (this.#inert || !config || config.recallMode === "tools") {
        this.#lastInjected = false;
        this.#logInjection("cron-or-tools-mode", "");
        return "";
      }
      const text = config.recallSync
        ? await this.#recallSyncPrefetch(config, query)
        : await this.#asyncPrefetch(config, query);
      this.#lastInjected = text !== "";
      return text;
    } catch (error) {
      log("debug", `Honcho prefetch failed: ${this.#scrub(errorText(error))}`);
      this.#lastInjected = false;
      return "";
    }
  }

  /**
   * Describes the last prefetch: `Honcho` with no discrete count when
   * something was injected, else `null`.
   *
   * @returns The status.
   */
  override recallStatus(): RecallStatus | null {
    return this.#lastInjected ? recallStatus("Honcho", 0) : null;
  }

  /**
   * After the turn, warms the next one (§5.10): a base-context refresh every
   * `contextCadence` turns and a dialectic every (effective)
   * `dialecticCadence` turns, both in the background. Never throws.
   *
   * @param query The user's message.
   * @param _options The session.
   */
  override queuePrefetch(query: string, _options: PrefetchOptions = {}): void {
    try {
      const config = this.#config;
      if (
        this.#inert || !config || config.recallMode === "tools" ||
        config.recallSync || this.#shutdown
      ) return;
      if (!this.#ready || !query || !query.trim()) {
        this.#kickInit();
        return;
      }
      if (isTrivialPrompt(query)) return;
      const turn = this.#turn;
      if (
        config.injectionFrequency !== "first-turn" &&
        (config.contextCadence <= 1 ||
          turn - this.#lastContextTurn >= config.contextCadence) &&
        !this.#contextRun
      ) {
        this.#lastContextTurn = turn;
        this.#startContextFetch(query);
      }
      if (this.#dialecticAlive()) return;
      if (
        turn - this.#lastDialecticTurn <
          effectiveCadence(config.dialecticCadence, this.#emptyStreak)
      ) return;
      this.#startDialectic(query, turn);
    } catch (error) {
      log(
        "debug",
        `Honcho queuePrefetch failed: ${this.#scrub(errorText(error))}`,
      );
    }
  }

  /**
   * Stores a completed turn (§5.5): user and assistant text (fences
   * removed), chunked at `messageMaxChars`, attributed to the user (or the
   * turn's author) and AI peers, queued in the durable outbox and
   * delivered per `writeFrequency`. Tool calls and tool results in
   * `options.messages` are never sent. Returns without waiting for the
   * disk or the network. Never throws.
   *
   * @param userContent The user's message.
   * @param assistantContent The assistant's reply.
   * @param options The session, transcript and author.
   */
  override syncTurn(
    userContent: string,
    assistantContent: string,
    options: SyncTurnOptions = {},
  ): Promise<void> | void {
    try {
      const config = this.#config;
      const writer = this.#writer;
      if (this.#inert || !config || !writer || !config.saveMessages) return;
      if (this.#shutdown) return;
      const user = typeof userContent === "string" ? userContent : "";
      if (isInternalGatewayNotification(user)) return;
      const userText = storedText(user);
      const aiText = storedText(
        typeof assistantContent === "string" ? assistantContent : "",
      );
      if (userText === "" && aiText === "") return;
      const author: TurnAuthorInfo = options.turnAuthor
        ? {
          id: options.turnAuthor.id?.trim() || undefined,
          name: options.turnAuthor.name,
          isBot: options.turnAuthor.isBot === true,
        }
        : this.#author;
      if (!this.#ready && config.recallMode !== "tools") this.#kickInit();
      const turnId = typeof options.turnId === "string" && options.turnId
        ? options.turnId
        : undefined;
      const waiting = (userText ? 1 : 0) + (aiText ? 1 : 0);
      return this.#stageInOrder(
        waiting,
        (identity) =>
          this.#turnRecords(config, identity, author, userText, aiText, turnId),
      );
    } catch (error) {
      log("debug", `Honcho syncTurn failed: ${this.#scrub(errorText(error))}`);
    }
  }

  /**
   * Mirrors an `add` to the built-in user profile as a Honcho conclusion
   * about the user, in the background. Never throws.
   *
   * @param action The write action.
   * @param target The memory target.
   * @param content The entry's text.
   * @param _metadata Provenance (not used).
   */
  override onMemoryWrite(
    action: MemoryWriteAction,
    target: MemoryTarget,
    content: string,
    _metadata?: MemoryWriteMetadata,
  ): void {
    try {
      const config = this.#config;
      const text = typeof content === "string" ? storedText(content) : "";
      if (
        this.#inert || !config || !config.saveMessages || action !== "add" ||
        target !== "user" || text === "" || this.#author.isBot
      ) return;
      if (!this.#ready) {
        this.#kickInit();
        return;
      }
      const identity = this.#identity!;
      const client = this.#client!;
      const observer = this.#aiObservesOthers()
        ? identity.aiPeerId
        : identity.userPeerId;
      const write = this.#spawn("honcho-memory-write", async () => {
        try {
          await client.createConclusions([{
            observerId: observer,
            observedId: identity.userPeerId,
            content: text,
            sessionId: identity.sessionId,
          }], { signal: this.#controller.signal });
        } catch (error) {
          this.#notices.reportError(error);
          log(
            "warn",
            `Honcho could not store a memory write as a conclusion: ${
              this.#scrub(errorText(error))
            }`,
          );
        }
      });
      this.#memoryWrites.add(write);
      write.finally(() => this.#memoryWrites.delete(write));
    } catch {
      // Never throw into the agent.
    }
  }

  /**
   * At a real session end: delivers everything queued (bounded). Never throws.
   *
   * @param _messages The transcript (turns were already synced).
   */
  override async onSessionEnd(_messages: ChatMessage[]): Promise<void> {
    try {
      const config = this.#config;
      if (this.#inert || !config || !config.saveMessages || !this.#writer) {
        return;
      }
      await this.#writer.flushAll(Math.max(10_000, this.#timeoutMs()));
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
   *
   * @param newSessionId The Hermes session switched to.
   * @param _options Parent, reset, rewound and reason.
   */
  override async onSessionSwitch(
    newSessionId: string,
    _options: SessionSwitchOptions = {},
  ): Promise<void> {
    try {
      this.#sessionGen = {};
      this.#recallGen = {};
      this.#pendingDialectic = undefined;
      this.#pendingContext = undefined;
      if (!newSessionId || this.#inert || !this.#config) return;
      this.#hermesSessionId = newSessionId;
      const before = this.#identity?.sessionId;
      this.#identityPromise = this.#resolveIdentity();
      const after = await this.#identityPromise;
      if (after && after.sessionId !== before) {
        this.#ready = false;
        this.#observation = undefined;
        this.#baseCache = null;
        this.#baseStarted = false;
        this.#lastContextTurn = NEVER;
        this.#lastDialecticTurn = NEVER;
        this.#emptyStreak = 0;
        if (this.#config.recallMode !== "tools") this.#kickInit(true);
      }
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
   * @param messages The evidence (or raw transcript).
   * @param options Whether a checkpoint is required.
   * @returns `""` (nothing is added to the summary prompt).
   * @throws {Error} When a required checkpoint cannot be confirmed.
   */
  override async onPreCompress(
    messages: ChatMessage[],
    options: PreCompressOptions = {},
  ): Promise<string> {
    const required = options.requireCheckpoint === true;
    try {
      await this.#checkpoint(messages, required);
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
   * Runs one of the five tools (§7); always returns a JSON string.
   *
   * @param toolName The tool.
   * @param args The model's arguments.
   * @param _options Call context.
   * @returns The JSON result or `{"error": …}`.
   */
  override async handleToolCall(
    toolName: string,
    args: Record<string, unknown>,
    _options: ToolCallOptions = {},
  ): Promise<string> {
    try {
      if (this.#inert) {
        return toolErrorJson("Honcho is not active (cron context).");
      }
      const config = this.#config;
      if (!config || !this.#client) {
        return toolErrorJson("Honcho is not active for this session.");
      }
      if (!HONCHO_TOOL_NAMES.includes(toolName)) {
        return toolErrorJson(`Unknown tool: ${toolName}`);
      }
      if (!this.#ready) {
        if (this.#initRun) {
          return toolErrorJson(
            "Honcho session is still initializing; try again shortly.",
          );
        }
        try {
          await this.#ensureSession(this.#controller.signal);
        } catch (error) {
          if (error instanceof AuthError) {
            return toolErrorJson(
              `Honcho memory authentication failed: ${
                this.#scrub(errorText(error))
              }`,
            );
          }
          if (error instanceof HonchoPeerUnresolvedError) {
            return toolErrorJson(
              noticeText("no-peer", { platform: this.#platform }),
            );
          }
          return toolErrorJson("Honcho session could not be initialized.");
        }
      }
      const identity = this.#identity!;
      const observation = this.#observation;
      return await runHonchoTool(toolName, args ?? {}, {
        client: this.#client,
        sessionId: identity.sessionId,
        userPeerId: identity.userPeerId,
        aiPeerId: identity.aiPeerId,
        aiObservesOthers: this.#aiObservesOthers(),
        observationOf: (peerId) =>
          peerId === identity.aiPeerId
            ? observation?.ai
            : peerId === identity.userPeerId
            ? observation?.user
            : undefined,
        turn: this.#turn,
        dialecticCadence: config.dialecticCadence,
        contextTokens: config.contextTokens,
        defaultReasoningLevel: config.dialecticReasoningLevel,
        dialecticDynamic: config.dialecticDynamic,
        dialecticMaxInputChars: config.dialecticMaxInputChars,
        botTurn: this.#author.isBot,
        signal: this.#controller.signal,
        onReasoning: () => {
          this.#lastDialecticTurn = this.#turn;
        },
        scrub: (text) => this.#scrub(text),
      });
    } catch (error) {
      return toolErrorJson(
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
    this.#sessionGen = {};
    this.#recallGen = {};
    const budget = this.#options.shutdownTimeoutMs ?? SHUTDOWN_BUDGET_MS;
    const deadline = this.#now() + budget;
    const left = (): number => Math.max(0, deadline - this.#now());
    try {
      const writer = this.#writer;
      const durable = await this.drain(left());
      this.#controller.abort(
        new DOMException("Honcho provider shut down", "AbortError"),
      );
      if (writer) {
        if (this.#config?.saveMessages && durable.drained) {
          await writer.flushAll(left());
        }
        await writer.close(left());
        const stats = await writer.outbox.stats().catch(() => undefined);
        if (!durable.drained || writer.notDurable > 0) {
          log(
            "warn",
            `Honcho shut down before ${
              durable.pending ?? writer.notDurable
            } message(s) reached its outbox ${writer.outbox.path} (the disk did not keep up within ${budget} ms)`,
          );
        } else if (stats && stats.pending > 0) {
          log(
            "warn",
            `Honcho shut down with ${stats.pending} message(s) still queued in ${writer.outbox.path}; they are delivered on the next start`,
          );
        }
      }
      await this.#drainTasks(left());
    } catch (error) {
      log("warn", `Honcho shutdown failed: ${this.#scrub(errorText(error))}`);
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
      const writer = this.#writer?.idle() ?? Promise.resolve();
      const tasks = Promise.all([...this.#tasks]);
      const left = deadline - this.#now();
      if (left <= 0) return false;
      if (!await this.#waitFor(Promise.all([writer, tasks]), left)) {
        return false;
      }
      // A scheduled delivery retry is not waited for.
      if (this.#tasks.size === 0) return true;
    }
  }

  /**
   * The dialectic pipeline's state (§5.11).
   *
   * @returns The snapshot.
   */
  livenessSnapshot(): HonchoLivenessSnapshot {
    const run = this.#dialecticRun;
    return {
      turnCount: this.#turn,
      lastDialecticTurn: this.#lastDialecticTurn,
      pendingResultFiredAt: this.#pendingDialectic?.firedAt ?? null,
      emptyStreak: this.#emptyStreak,
      effectiveCadence: effectiveCadence(
        this.#config?.dialecticCadence ?? 1,
        this.#emptyStreak,
      ),
      threadAlive: run !== undefined,
      threadAgeSeconds: run ? (this.#now() - run.startedAt) / 1000 : null,
    };
  }

  // -------------------------------------------------------------------------
  // Prefetch internals
  // -------------------------------------------------------------------------

  async #asyncPrefetch(config: HonchoConfig, query: string): Promise<string> {
    const turn = this.#turn;
    const firstTurn = turn <= 1;
    if (query.trim()) this.#lastQuery = query;
    const waitMs = (seconds: number): number =>
      Math.max(0, Math.min(seconds * 1000, this.#timeoutMs()));
    const baseDeadline = this.#now() +
      (firstTurn ? waitMs(config.firstTurnBaseWait) : 0);
    if (!this.#ready) {
      this.#kickInit();
      if (firstTurn && this.#initRun) {
        await this.#waitFor(this.#initRun, baseDeadline - this.#now());
      }
      if (!this.#ready) {
        const notice = this.#notices.take();
        this.#logInjection("session-not-ready", notice);
        return notice;
      }
    }
    if (isTrivialPrompt(query)) {
      const pending = this.#consumeDialectic(config);
      this.#logInjection("trivial-prompt", pending);
      return pending;
    }
    const parts: string[] = [];
    if (config.injectionFrequency !== "first-turn" || firstTurn) {
      if (!this.#baseStarted) {
        this.#baseStarted = true;
        this.#baseCache = "";
        this.#lastContextTurn = turn;
        this.#startContextFetch(query);
      }
      if (firstTurn && this.#contextRun) {
        // Turn 1 waits (bounded) for the first base layer, whoever started it.
        await this.#waitFor(this.#contextRun, baseDeadline - this.#now());
      }
      const fresh = this.#pendingContext;
      this.#pendingContext = undefined;
      if (fresh && fresh.generation === this.#sessionGen) {
        const formatted = formatBaseContext(
          fresh.data,
          config.injectionSessionStart,
        );
        if (formatted) this.#baseCache = formatted;
      }
      if (this.#baseCache) parts.push(this.#baseCache);
    }
    if (this.#lastDialecticTurn === NEVER) {
      if (this.#pendingDialectic) {
        this.#lastDialecticTurn = turn;
      } else if (query.trim()) {
        if (!this.#dialecticAlive()) this.#startDialectic(query, turn);
        const run = this.#dialecticRun;
        if (firstTurn && run) {
          await this.#waitFor(
            run.done,
            waitMs(config.firstTurnDialecticWait),
          );
        }
      }
    }
    const dialectic = this.#consumeDialectic(config);
    if (dialectic) parts.push(dialectic);
    const notice = this.#notices.take();
    if (notice) parts.unshift(notice);
    const text = applyTokenBudget(parts.join("\n\n"), config.contextTokens);
    this.#logInjection(text ? "injected" : "fetched-but-empty", text);
    return text;
  }

  async #recallSyncPrefetch(
    config: HonchoConfig,
    query: string,
  ): Promise<string> {
    const budgetMs = config.timeout !== undefined && config.timeout > 0 &&
        Number.isFinite(config.timeout)
      ? config.timeout * 1000
      : 5_000;
    if (isTrivialPrompt(query) || this.#recallSyncBusy) {
      this.#logInjection("trivial-prompt", "");
      return "";
    }
    this.#recallSyncBusy = true;
    const controller = new AbortController();
    const onAbort = (): void =>
      controller.abort(this.#controller.signal.reason);
    this.#controller.signal.addEventListener("abort", onAbort, { once: true });
    const timer = setTimeout(
      () =>
        controller.abort(
          new DOMException("Honcho recall budget passed", "TimeoutError"),
        ),
      budgetMs,
    );
    const generation = this.#recallGen;
    const sessionGen = this.#sessionGen;
    try {
      await this.#ensureSession(controller.signal);
      const turn = this.#turn;
      const contextDue = !(config.injectionFrequency === "first-turn" &&
        turn > 1) &&
        turn - this.#lastContextTurn >= config.contextCadence;
      const dialecticDue = turn - this.#lastDialecticTurn >=
        effectiveCadence(config.dialecticCadence, this.#emptyStreak);
      if (!contextDue && !dialecticDue) {
        const notice = this.#notices.take();
        this.#logInjection("recall-sync-empty", notice);
        return notice;
      }
      const [base, dialectic] = await Promise.all([
        contextDue
          ? this.#fetchBaseContext(query, controller.signal)
          : Promise.resolve(undefined),
        dialecticDue
          ? runDialecticDepth({
            query,
            cold: !this.#baseCache,
            settings: this.#dialecticSettings(config),
            currentRequest: capDialecticInput(
              query,
              config.dialecticMaxInputChars,
            ),
            runPass: (prompt, level) =>
              this.#dialecticQuery(prompt, level, controller.signal),
          })
          : Promise.resolve(undefined),
      ]);
      if (generation !== this.#recallGen || sessionGen !== this.#sessionGen) {
        return "";
      }
      const parts: string[] = [];
      if (base !== undefined) {
        this.#lastContextTurn = turn;
        const formatted = formatBaseContext(base, config.injectionSessionStart);
        if (formatted) {
          this.#baseCache = formatted;
          parts.push(formatted);
        }
      }
      if (dialectic !== undefined) {
        if (dialectic) {
          this.#lastDialecticTurn = turn;
          this.#emptyStreak = 0;
          parts.push(capDialecticResult(dialectic, config.dialecticMaxChars));
        } else {
          this.#emptyStreak++;
        }
      }
      this.#notices.clear();
      const text = applyTokenBudget(parts.join("\n\n"), config.contextTokens);
      this.#logInjection(text ? "injected" : "recall-sync-empty", text);
      return text;
    } catch (error) {
      this.#notices.reportError(error);
      const notice = this.#notices.take();
      this.#logInjection("recall-sync-empty", notice);
      return notice;
    } finally {
      clearTimeout(timer);
      this.#controller.signal.removeEventListener("abort", onAbort);
      this.#recallSyncBusy = false;
    }
  }

  #consumeDialectic(config: HonchoConfig): string {
    const pending = this.#pendingDialectic;
    this.#pendingDialectic = undefined;
    if (!pending || pending.generation !== this.#sessionGen) return "";
    if (
      pending.firedAt >= 0 &&
      this.#turn - pending.firedAt > config.dialecticCadence * 2
    ) return "";
    const text = pending.result.trim();
    return text ? capDialecticResult(text, config.dialecticMaxChars) : "";
  }

  #startContextFetch(query: string): void {
    if (this.#contextRun || this.#shutdown) return;
    const generation = this.#sessionGen;
    const signal = this.#controller.signal;
    const run = this.#spawn("honcho-context", async () => {
      try {
        const data = await this.#fetchBaseContext(query, signal);
        if (generation === this.#sessionGen) {
          this.#pendingContext = { data, generation };
        }
      } catch (error) {
        if (generation === this.#sessionGen) this.#notices.reportError(error);
        log(
          "debug",
          `Honcho context fetch failed: ${this.#scrub(errorText(error))}`,
        );
      }
    });
    this.#contextRun = run;
    run.finally(() => {
      if (this.#contextRun === run) this.#contextRun = undefined;
    });
  }

  /**
   * Fetches the base layer: one session-context request for the user side
   * (summary, representation, card) and one peer-context request for the AI
   * side, in parallel; sections excluded by `injection.sessionStart` are not
   * fetched. A side that fails is left out; when both fail the error is
   * thrown (auth first).
   */
  async #fetchBaseContext(
    query: string,
    signal: AbortSignal,
  ): Promise<BaseContextData> {
    const config = this.#config!;
    const client = this.#client!;
    const identity = this.#identity!;
    const sections = config.injectionSessionStart;
    const wants = (name: string): boolean =>
      sections === undefined || (sections as string[]).includes(name);
    const cards = (list: string[] | null): string =>
      (list ?? []).map((f) => f.trim()).filter(Boolean).join("\n");
    const data: BaseContextData = {};
    const jobs: Promise<void>[] = [];
    if (wants("summary") || wants("peerRepresentation") || wants("peerCard")) {
      const aiObserves = this.#aiObservesOthers();
      jobs.push(
        client.getSessionContext(identity.sessionId, {
          summary: true,
          tokens: config.contextTokens && config.contextTokens > 0
            ? Math.floor(config.contextTokens)
            : undefined,
          peerTarget: identity.userPeerId,
          peerPerspective: aiObserves ? identity.aiPeerId : undefined,
          searchQuery: query.trim()
            ? capDialecticInput(query.trim(), SEARCH_QUERY_MAX_CHARS)
            : undefined,
          signal,
        }).then((ctx) => {
          const summary = cleanHonchoSummary(ctx.summary?.content);
          if (summary) data.summary = summary;
          const representation = ctx.peerRepresentation?.trim();
          if (representation) data.representation = representation;
          const card = cards(ctx.peerCard);
          if (card) data.card = card;
        }),
      );
    }
    if (wants("aiRepresentation") || wants("aiCard")) {
      jobs.push(
        client.getPeerContext(identity.aiPeerId, {
          target: identity.aiPeerId,
          signal,
        }).then((ctx) => {
          const representation = ctx.representation?.trim();
          if (representation) data.aiRepresentation = representation;
          const card = cards(ctx.peerCard);
          if (card) data.aiCard = card;
        }),
      );
    }
    const outcomes = await Promise.allSettled(jobs);
    if (signal.aborted) throw signal.reason;
    const failures = outcomes.flatMap((o) =>
      o.status === "rejected" ? [o.reason as unknown] : []
    );
    const auth = failures.find((e) => e instanceof AuthError);
    if (auth !== undefined) throw auth;
    if (failures.length > 0 && failures.length === outcomes.length) {
      throw failures[0];
    }
    if (failures.length === 0 && outcomes.length > 0) this.#notices.clear();
    return data;
  }

  #dialecticSettings(config: HonchoConfig): DialecticSettings {
    return {
      dialecticDepth: config.dialecticDepth,
      dialecticDepthLevels: config.dialecticDepthLevels,
      dialecticReasoningLevel: config.dialecticReasoningLevel,
      reasoningHeuristic: config.reasoningHeuristic,
      reasoningLevelCap: config.reasoningLevelCap,
    };
  }

  #dialecticAlive(): boolean {
    const run = this.#dialecticRun;
    if (!run) return false;
    const staleAfterMs = 2 * (this.#config?.timeout ?? 8) * 1000;
    return this.#now() - run.startedAt < staleAfterMs;
  }

  /** Starts a full-depth dialectic in the background (§6.5, §6.6). */
  #startDialectic(query: string, firedAt: number): void {
    const config = this.#config;
    if (!config || this.#shutdown) return;
    const generation = this.#sessionGen;
    const signal = this.#controller.signal;
    const cold = !this.#baseCache;
    const rewriter = this.#options.queryRewriter;
    const done = this.#spawn("honcho-dialectic", async () => {
      try {
        let rewritten: string | undefined;
        if (config.queryRewrite && rewriter && firedAt > 0) {
          try {
            rewritten = (await rewriter(query))?.trim() || undefined;
          } catch {
            rewritten = undefined;
          }
        }
        const result = await runDialecticDepth({
          query,
          cold,
          settings: this.#dialecticSettings(config),
          rewritten,
          runPass: (prompt, level) =>
            this.#dialecticQuery(prompt, level, signal),
        });
        if (generation !== this.#sessionGen) return;
        if (result.trim()) {
          this.#pendingDialectic = { result, firedAt, generation };
          this.#lastDialecticTurn = firedAt;
          this.#emptyStreak = 0;
          this.#notices.clear();
        } else {
          this.#emptyStreak++;
        }
      } catch (error) {
        if (generation !== this.#sessionGen || signal.aborted) return;
        if (!(error instanceof AuthError)) this.#emptyStreak++;
        this.#notices.reportError(error);
        log(
          "debug",
          `Honcho dialectic failed: ${this.#scrub(errorText(error))}`,
        );
      }
    });
    const run: DialecticRun = { done, startedAt: this.#now(), firedAt };
    this.#dialecticRun = run;
    done.finally(() => {
      if (this.#dialecticRun === run) this.#dialecticRun = undefined;
    });
  }

  /** One dialectic call (§6.4): level, input cap, observer/target. */
  async #dialecticQuery(
    prompt: string,
    level: ReasoningLevel,
    signal: AbortSignal,
  ): Promise<string> {
    const config = this.#config!;
    const identity = this.#identity!;
    const effectiveLevel = config.dialecticDynamic
      ? level
      : config.dialecticReasoningLevel;
    const query = capDialecticInput(prompt, config.dialecticMaxInputChars);
    const answer = this.#aiObservesOthers()
      ? await this.#client!.peerChat(identity.aiPeerId, query, {
        target: identity.userPeerId,
        reasoningLevel: effectiveLevel,
        signal,
      })
      : await this.#client!.peerChat(identity.userPeerId, query, {
        reasoningLevel: effectiveLevel,
        signal,
      });
    return answer?.trim() ?? "";
  }

  // -------------------------------------------------------------------------
  // Session setup
  // -------------------------------------------------------------------------

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

  /** Resolves the session key and peers (local work: config, cwd, git). */
  async #resolveIdentity(): Promise<Identity | undefined> {
    const config = this.#config;
    if (!config) return undefined;
    const options = this.#initOptions;
    const runtimeIds = [options.userId, options.userIdAlt].filter(
      (id): id is string => typeof id === "string" && id.trim() !== "",
    ).map((id) => id.trim());
    try {
      const userPeerId = resolveUserPeerId(config, { runtimeIds });
      const sessionKey = await resolveSessionKey(config, {
        cwd: typeof options.cwd === "string" && options.cwd
          ? options.cwd
          : safeAgentCwd(),
        sessionTitle: options.sessionTitle,
        sessionTitleSource: options.sessionTitleSource,
        sessionId: this.#hermesSessionId,
        gatewaySessionKey: options.gatewaySessionKey,
        gitTopLevel: this.#options.gitTopLevel,
      });
      const identity: Identity = {
        sessionKey,
        sessionId: honchoSessionId(sessionKey),
        userPeerId,
        aiPeerId: resolveAiPeerId(config),
        runtimeIds,
      };
      this.#identity = identity;
      this.#peerError = undefined;
      return identity;
    } catch (error) {
      if (error instanceof HonchoPeerUnresolvedError) {
        this.#peerError = error;
        this.#notices.report("no-peer");
      } else {
        log(
          "warn",
          `Honcho cannot name the session: ${this.#scrub(errorText(error))}`,
        );
      }
      this.#identity = undefined;
      return undefined;
    }
  }

  /** Starts session init in the background unless running or throttled. */
  #kickInit(force = false): void {
    if (this.#ready || this.#initRun || this.#shutdown || this.#peerError) {
      return;
    }
    if (!this.#config || !this.#client) return;
    const retryMs = this.#options.initRetryDelayMs ?? 5_000;
    if (!force && this.#now() - this.#lastInitAttempt < retryMs) return;
    this.#track(
      this.#ensureSession(this.#controller.signal).catch(() => {}),
    );
  }

  /**
   * Makes sure the current Honcho session exists with its observation
   * config (and any pending author joins or a2a sessions); single-flight.
   */
  async #ensureSession(signal: AbortSignal): Promise<void> {
    if (this.#ready) {
      await this.#runSessionSetups(signal);
      return;
    }
    if (!this.#initRun) {
      this.#lastInitAttempt = this.#now();
      const run = this.#doSessionInit(signal);
      this.#initRun = run;
      run.then(() => {}, () => {}).finally(() => {
        if (this.#initRun === run) this.#initRun = undefined;
      });
    }
    await this.#initRun;
    await this.#runSessionSetups(signal);
  }

  async #doSessionInit(signal: AbortSignal): Promise<void> {
    const identity = await (this.#identityPromise ?? this.#resolveIdentity());
    if (!identity) {
      throw this.#peerError ??
        new HonchoConfigError("Honcho session could not be named");
    }
    const config = this.#config!;
    const client = this.#client!;
    const generation = this.#sessionGen;
    const flags = config.observationFlags;
    try {
      const peers: Record<string, SessionPeerConfig> = {
        [identity.userPeerId]: {
          observeMe: flags.user.observeMe,
          observeOthers: flags.user.observeOthers,
        },
      };
      if (identity.aiPeerId !== identity.userPeerId) {
        peers[identity.aiPeerId] = {
          observeMe: flags.ai.observeMe,
          observeOthers: flags.ai.observeOthers,
        };
      }
      await client.getOrCreateSession(identity.sessionId, { peers, signal });
      const [userServer, aiServer] = await Promise.all([
        client.getSessionPeerConfig(identity.sessionId, identity.userPeerId, {
          signal,
        }).catch(() => undefined),
        identity.aiPeerId === identity.userPeerId
          ? Promise.resolve(undefined)
          : client.getSessionPeerConfig(identity.sessionId, identity.aiPeerId, {
            signal,
          }).catch(() => undefined),
      ]);
      if (this.#identity?.sessionId !== identity.sessionId) return;
      this.#observation = {
        user: mergeServerObservation(flags.user, serverFlags(userServer)),
        ai: mergeServerObservation(flags.ai, serverFlags(aiServer)),
      };
      this.#ready = true;
      this.#notices.clear();
    } catch (error) {
      this.#notices.reportError(error);
      log(
        "debug",
        `Honcho session init failed: ${this.#scrub(errorText(error))}`,
      );
      throw error;
    }
    if (
      config.recallMode !== "tools" && !config.recallSync &&
      this.#turn >= 1 && !this.#baseStarted && !this.#shutdown
    ) {
      // A late start (Honcho was down on turn 1): fetch the base layer now so
      // the next prefetch has it.
      this.#baseStarted = true;
      this.#baseCache = "";
      this.#lastContextTurn = this.#turn;
      this.#startContextFetch(this.#lastQuery);
    }
    if (
      config.recallMode !== "tools" && !config.recallSync &&
      !(config.queryRewrite && this.#options.queryRewriter) &&
      generation === this.#sessionGen && !this.#dialecticAlive() &&
      this.#lastDialecticTurn === NEVER && !this.#shutdown
    ) {
      this.#startDialectic(PREWARM_QUERY, 0);
    }
    this.#writer?.resume();
  }

  async #runSessionSetups(signal: AbortSignal): Promise<void> {
    for (const [key, setup] of [...this.#sessionSetups]) {
      if (signal.aborted) throw signal.reason;
      await setup();
      this.#sessionSetups.delete(key);
    }
  }

  #aiObservesOthers(): boolean {
    return (this.#observation?.ai ?? this.#config?.observationFlags.ai)
      ?.observeOthers ?? true;
  }

  // -------------------------------------------------------------------------
  // Writes
  // -------------------------------------------------------------------------

  #turnRecords(
    config: HonchoConfig,
    identity: Identity,
    author: TurnAuthorInfo,
    userText: string,
    aiText: string,
    turnId?: string,
  ): OutboxMessageInput[] {
    let session = identity.sessionId;
    let userPeer = identity.userPeerId;
    if (author.isBot) {
      if (!config.a2aSessions || !author.id) return [];
      const botPeer = resolveAuthorPeerId(config, author.id) ??
        sanitizeId(author.id);
      if (botPeer === identity.aiPeerId) return [];
      const colon = author.id.indexOf(":");
      const key = a2aSessionKey(identity.sessionKey, {
        prefix: colon > 0 ? author.id.slice(0, colon) : "a2a",
        ident: colon > 0 ? author.id.slice(colon + 1) : author.id,
        aiPeer: identity.aiPeerId,
      });
      session = honchoSessionId(key);
      userPeer = botPeer;
      this.#planSession(session, botPeer, identity.aiPeerId, true);
    } else if (author.id && !identity.runtimeIds.includes(author.id)) {
      const peer = resolveAuthorPeerId(config, author.id);
      if (peer && peer !== identity.userPeerId && peer !== identity.aiPeerId) {
        userPeer = peer;
        this.#planSession(session, peer, identity.aiPeerId, false);
      }
    }
    const records: OutboxMessageInput[] = [];
    const add = (role: "user" | "assistant", peer: string, text: string) => {
      if (text === "") return;
      const digest = turnDigest(role, text);
      const chunks = chunkMessage(text, config.messageMaxChars);
      chunks.forEach((content, index) => {
        const record: OutboxMessageInput = {
          session,
          peer,
          content,
          metadata: {
            [ROLE_METADATA_KEY]: role,
            [DIGEST_METADATA_KEY]: digest,
            [CHUNK_METADATA_KEY]: index,
          },
        };
        if (turnId !== undefined) {
          // The same turn handed over again (an import re-run) gets the same
          // ids, so the outbox and Honcho hold it once.
          record.id = stableOutboxId([
            config.workspaceId,
            session,
            turnId,
            role,
            index,
          ]);
        }
        records.push(record);
      });
    };
    add("user", userPeer, userText);
    add("assistant", identity.aiPeerId, aiText);
    return records;
  }

  /**
   * Stages a turn's records into the writer in the order `syncTurn` was
   * called, whatever session naming awaits: at once when the session is
   * named and no earlier turn still waits for the name; otherwise after
   * every earlier turn, once the name is known (until then its messages
   * count as not durable). Returns the writer's back-pressure promise, if
   * any.
   */
  #stageInOrder(
    messages: number,
    records: (identity: Identity) => OutboxMessageInput[],
  ): Promise<void> | undefined {
    const writer = this.#writer!;
    const known = this.#identity;
    if (known && this.#unnamedTail === undefined) {
      const list = records(known);
      // Back-pressure: a promise only when the disk is behind.
      return list.length > 0 ? writer.stage(list) : undefined;
    }
    this.#unnamedMessages += messages;
    const named = known
      ? Promise.resolve(known)
      : (this.#identityPromise ?? Promise.resolve(undefined));
    let pressure: Promise<void> | undefined;
    const staged = Promise.all([this.#unnamedTail, named]).then(
      ([, identity]) => {
        if (!identity) return;
        const list = records(identity);
        if (list.length > 0) pressure = writer.stage(list);
      },
    ).finally(() => {
      this.#unnamedMessages -= messages;
    });
    const tail = staged.catch(() => {});
    this.#unnamedTail = tail;
    tail.then(() => {
      if (this.#unnamedTail === tail) this.#unnamedTail = undefined;
    });
    this.#track(tail);
    return tail.then(() => pressure);
  }

  /** Queues a one-time server setup for an author peer or an a2a session. */
  #planSession(
    session: string,
    peer: string,
    aiPeer: string,
    create: boolean,
  ): void {
    const key = `${session}\u0000${peer}`;
    if (this.#sessionSetups.has(key) || this.#joined.has(key)) return;
    const client = this.#client!;
    const flags = this.#observation ?? this.#config!.observationFlags;
    const userConfig: SessionPeerConfig = {
      observeMe: flags.user.observeMe,
      observeOthers: flags.user.observeOthers,
    };
    this.#sessionSetups.set(key, async () => {
      const signal = this.#controller.signal;
      if (create) {
        await client.getOrCreateSession(session, {
          peers: {
            [peer]: userConfig,
            [aiPeer]: {
              observeMe: flags.ai.observeMe,
              observeOthers: flags.ai.observeOthers,
            },
          },
          signal,
        });
      } else {
        await client.addSessionPeers(session, { [peer]: userConfig }, {
          signal,
        });
      }
      this.#joined.add(key);
    });
  }

  #joined = new Set<string>();
  /** Messages of turns staged before the session was named (not durable yet). */
  #unnamedMessages = 0;
  /** Settles once every turn waiting for the session's name is staged. */
  #unnamedTail: Promise<void> | undefined;
  /** Memory writes (conclusions) sent but not answered yet. */
  #memoryWrites = new Set<Promise<void>>();
  /** Write-path causes already warned about in this episode. */
  #writeWarnings = new Set<NoticeCause>();

  /**
   * Reports a delivery round: a systemic failure (one retrying cannot fix:
   * a denied permission, auth, a refused workspace, session or peer) gets
   * one notice and one warning naming the cause and the fix; the messages
   * stay queued. A round that delivered ends the episode.
   */
  #onDeliveryResult(result: OutboxDeliverResult): void {
    const error = result.error;
    if (error === undefined) {
      if (result.delivered > 0 || result.duplicates > 0) {
        this.#writeWarnings.clear();
      }
      return;
    }
    let cause = this.#notices.reportError(error);
    let reason = failureReason(error);
    if (
      cause === undefined && result.systemic &&
      (error instanceof HonchoError || error instanceof HonchoConfigError)
    ) {
      cause = "refused";
      reason = this.#scrub(errorText(error));
      this.#notices.report(cause, reason);
    }
    if (
      cause === undefined || !result.systemic ||
      this.#writeWarnings.has(cause)
    ) return;
    this.#writeWarnings.add(cause);
    const host = error instanceof PermissionDeniedError
      ? error.host
      : undefined;
    const queued = result.pending >= 0
      ? ` (${result.pending} message(s) in ${this.#writer?.outbox.path})`
      : "";
    log("warn", `${this.#notices.warning(cause, reason, host)}${queued}`);
  }

  /**
   * Waits (at most `timeoutMs`) until every turn handed to `syncTurn` and
   * every memory write is durable: turns in the fsynced outbox (delivery
   * may still be pending; that is durable), memory writes answered by
   * Honcho.
   *
   * @param timeoutMs How long to wait; without limit when omitted.
   * @returns Whether everything is durable, and how many messages are not.
   */
  override async drain(timeoutMs?: number): Promise<DrainResult> {
    const deadline = timeoutMs === undefined
      ? Infinity
      : this.#now() + Math.max(0, timeoutMs);
    const left = (): number => Math.max(0, deadline - this.#now());
    try {
      if (this.#unnamedTail) await this.#waitFor(this.#unnamedTail, left());
      const writer = this.#writer;
      let pending = this.#unnamedMessages;
      if (writer) {
        const staged = await writer.drain(
          deadline === Infinity ? undefined : left(),
        );
        pending += staged.pending ?? 0;
      }
      if (this.#memoryWrites.size > 0) {
        await this.#waitFor(Promise.all([...this.#memoryWrites]), left());
        pending += this.#memoryWrites.size;
      }
      return { drained: pending === 0, pending };
    } catch {
      return { drained: false };
    }
  }

  async #checkpoint(messages: ChatMessage[], required: boolean): Promise<void> {
    const config = this.#config;
    const writer = this.#writer;
    if (this.#inert) throw new Error("Honcho is not active (cron context)");
    if (!config || !writer || !this.#client) {
      throw new Error("Honcho is not configured");
    }
    if (!config.saveMessages) {
      throw new Error("saveMessages is off, so nothing is stored in Honcho");
    }
    const full = this.#options.checkpointTimeoutMs ??
      Math.max(10_000, this.#timeoutMs());
    // A best-effort checkpoint must not hold up compression for long.
    const budget = required ? full : Math.min(full, BEST_EFFORT_CHECKPOINT_MS);
    const deadline = this.#now() + budget;
    const left = (): number => Math.max(0, deadline - this.#now());
    const controller = new AbortController();
    const timer = setTimeout(
      () =>
        controller.abort(
          new DOMException("Honcho checkpoint deadline passed", "TimeoutError"),
        ),
      budget,
    );
    try {
      const items = evidenceItems(Array.isArray(messages) ? messages : []);
      await this.#ensureSession(controller.signal);
      const identity = this.#identity!;
      if (!await writer.flushAll(left())) {
        throw new Error("queued messages could not be delivered to Honcho");
      }
      if (items.length === 0) return;
      const stored = await storedDigestCounts(
        this.#client,
        identity.sessionId,
        items.map((item) => item.digest),
        controller.signal,
      );
      const missing = missingEvidence(items, stored);
      if (missing.length === 0) return;
      const records: OutboxMessageInput[] = [];
      for (const item of missing) {
        const peer = item.role === "user"
          ? identity.userPeerId
          : identity.aiPeerId;
        chunkMessage(item.text, config.messageMaxChars).forEach(
          (content, index) => {
            records.push({
              session: identity.sessionId,
              peer,
              content,
              metadata: {
                [ROLE_METADATA_KEY]: item.role,
                [DIGEST_METADATA_KEY]: item.digest,
                [CHUNK_METADATA_KEY]: index,
                hermes_source: "checkpoint",
              },
            });
          },
        );
      }
      const rejected = await writer.appendNow(records);
      if (rejected > 0) {
        throw new Error(
          `the Honcho outbox is full (${rejected} message(s) refused)`,
        );
      }
      if (!required) {
        writer.kick();
        return;
      }
      if (!await writer.flushAll(left())) {
        throw new Error("missing messages could not be delivered to Honcho");
      }
    } finally {
      clearTimeout(timer);
    }
  }

  // -------------------------------------------------------------------------
  // Plumbing
  // -------------------------------------------------------------------------

  #timeoutMs(): number {
    const seconds = this.#config?.timeout;
    return (seconds !== undefined && seconds > 0
      ? seconds
      : INIT_WAIT_FALLBACK_S) *
      1000;
  }

  #scrub(text: string): string {
    const key = this.#apiKey;
    return key && key.length >= 4 ? text.split(key).join("[redacted]") : text;
  }

  /** Runs `fn` as a tracked context task; the promise never rejects. */
  #spawn(name: string, fn: () => Promise<void>): Promise<void> {
    const task = spawnContextTask(fn, { name });
    const done = task.done.catch(() => {});
    this.#track(done);
    return done;
  }

  #track(promise: Promise<unknown>): void {
    const tracked = promise.catch(() => {}).finally(() => {
      this.#tasks.delete(tracked);
    });
    this.#tasks.add(tracked);
  }

  async #drainTasks(timeoutMs: number): Promise<void> {
    const deadline = this.#now() + timeoutMs;
    while (this.#tasks.size > 0) {
      const left = deadline - this.#now();
      if (
        left <= 0 || !await this.#waitFor(Promise.all([...this.#tasks]), left)
      ) {
        log(
          "warn",
          `Honcho shut down with ${this.#tasks.size} background task(s) still running`,
        );
        return;
      }
    }
  }

  /** Waits for `promise` at most `ms`; `true` when it settled in time. */
  async #waitFor(promise: Promise<unknown>, ms: number): Promise<boolean> {
    if (ms === Infinity) {
      await promise.catch(() => {});
      return true;
    }
    if (ms <= 0) {
      let settled = false;
      promise.then(() => settled = true, () => settled = true);
      await Promise.resolve();
      return settled;
    }
    let timer: ReturnType<typeof setTimeout> | undefined;
    const late = new Promise<false>((resolve) => {
      timer = setTimeout(() => resolve(false), ms);
    });
    try {
      return await Promise.race([promise.then(() => true, () => true), late]);
    } finally {
      clearTimeout(timer);
    }
  }

  #logInjection(reason: string, payload: string): void {
    const path = this.#config?.injectionLogPath;
    if (!path) return;
    const line = `${
      JSON.stringify({
        ts: new Date().toISOString(),
        turn: this.#turn,
        session_key: this.#identity?.sessionKey ?? null,
        recall_mode: this.#config?.recallMode ?? null,
        reason,
        bytes: new TextEncoder().encode(payload).length,
        payload,
      })
    }\n`;
    this.#spawn("honcho-injection-log", async () => {
      try {
        await Deno.mkdir(dirname(path), { recursive: true, mode: 0o700 });
        await appendFile(path, line, { mode: 0o600 });
      } catch (error) {
        log("debug", `Honcho injection log failed: ${errorText(error)}`);
      }
    });
  }
}

function serverFlags(
  config: SessionPeerConfig | undefined,
): { observeMe: boolean | null; observeOthers: boolean | null } | undefined {
  if (!config) return undefined;
  return {
    observeMe: config.observeMe ?? null,
    observeOthers: config.observeOthers ?? null,
  };
}

function safeAgentCwd(): string | undefined {
  try {
    return resolveAgentCwd();
  } catch {
    return undefined;
  }
}
