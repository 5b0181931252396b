// The memory-provider contract: `MemoryProvider`, its option and result types
// and constants.

/**
 * The highest pre-compress checkpoint API version this framework speaks.
 *
 * @category Contract
 */
export const PRE_COMPRESS_CHECKPOINT_API_VERSION = 2;

/**
 * The glyph shown beside recall status lines.
 *
 * @category Contract
 */
export const INDICATOR_GLYPH = "🧠";

/**
 * The glyph of a recall status line that reports a failure.
 *
 * @category Contract
 */
export const RECALL_FAILED_GLYPH = "\u26a0";

/**
 * A value, or a promise of it: what any provider method may return.
 *
 * @category Contract
 */
export type MaybePromise<T> = T | Promise<T>;

/**
 * A JSON value.
 *
 * @category Contract
 */
export type JsonValue =
  | string
  | number
  | boolean
  | null
  | JsonValue[]
  | { [key: string]: JsonValue };

/**
 * One chat message in OpenAI format (`role`, `content`, and for assistant
 * messages possibly `tool_calls`; tool results carry `tool_call_id`). Keys stay
 * snake_case because they are the wire format agents already use.
 *
 * @category Contract
 */
export interface ChatMessage {
  /** `system`, `user`, `assistant` or `tool`. */
  role?: string;
  /** The text, or structured content parts. */
  content?: unknown;
  /** Any other key of the message. */
  [key: string]: unknown;
}

/**
 * A tool schema as a provider declares it: a bare function schema.
 *
 * @category Contract
 */
export interface ToolSchema {
  /** The tool's name, unique across the agent. */
  name: string;
  /** What the tool does, for the model. */
  description?: string;
  /** A JSON-schema object describing the arguments. */
  parameters?: Record<string, unknown>;
  /** Any other key of the schema. */
  [key: string]: unknown;
}

/**
 * What a provider reports about its last prefetch, shown to the user as
 * `"<glyph> <providerLabel> — <detail>"`.
 *
 * @category Contract
 */
export interface RecallStatus {
  /** The label shown for the provider. */
  readonly providerLabel: string;
  /** How many memories were recalled; `0` or less means "no discrete count". */
  readonly count: number;
  /** The glyph shown before the label. */
  readonly glyph: string;
  /** Why recall failed or is off this turn, shown instead of the count (an extension of Hermes' record). */
  readonly failure?: string;
  /** A remark on how this recall was made, for previews; not part of the status line. */
  readonly note?: string;
}

/**
 * Options of {@linkcode recallStatus}.
 *
 * @category Contract
 */
export interface RecallStatusOptions {
  /**
   * The glyph shown before the label.
   *
   * @default {"🧠", or {@linkcode RECALL_FAILED_GLYPH} with `failure`}
   */
  glyph?: string;
  /** Why recall failed or is off ({@linkcode RecallStatus.failure}). */
  failure?: string;
  /** A remark for previews ({@linkcode RecallStatus.note}). */
  note?: string;
}

/**
 * Builds a frozen {@linkcode RecallStatus}.
 *
 * @param providerLabel The label shown for the provider.
 * @param count How many memories were recalled (`0`: no discrete count).
 * @param options The glyph, when not the default.
 *
 * @category Contract
 */
export function recallStatus(
  providerLabel: string,
  count: number,
  options: RecallStatusOptions = {},
): RecallStatus {
  const failed = options.failure !== undefined;
  return Object.freeze({
    providerLabel,
    count,
    glyph: options.glyph ?? (failed ? RECALL_FAILED_GLYPH : INDICATOR_GLYPH),
    ...(failed ? { failure: options.failure } : {}),
    ...(options.note !== undefined ? { note: options.note } : {}),
  });
}

/**
 * Who wrote a turn, when the host knows (gateways serving several people).
 *
 * @category Contract
 */
export interface TurnAuthor {
  /** A stable id of the author on the platform. */
  id: string;
  /** A display name. */
  name?: string;
  /** Whether the author is a bot. */
  isBot?: boolean;
}

/**
 * Where an agent runs; non-`primary` contexts skip automatic writes.
 *
 * @category Contract
 */
export type AgentContext = "primary" | "subagent" | "cron" | "flush";

/**
 * A callback the CLI hands providers for user-visible warnings or status.
 *
 * @category Contract
 */
export type UserNoticeCallback = (message: string) => void;

/**
 * Options of {@linkcode MemoryProvider.initialize} (Python's `**kwargs`).
 * Identity keys are present only when the host knows a non-empty value.
 *
 * @category Contract
 */
export interface InitializeOptions {
  /** The profile's home; the manager injects it when the caller did not. */
  hermesHome?: string;
  /** `cli`, `telegram`, `discord`, `cron`, `gui`, `acp`, `tui`, `api_server`, `tool`, … */
  platform?: string;
  /** Where the agent runs. */
  agentContext?: AgentContext;
  /** The active profile's name. */
  agentIdentity?: string;
  /** The workspace name (`"hermes"`). */
  agentWorkspace?: string;
  /** The session this one was branched or resumed from. */
  parentSessionId?: string;
  /** The platform user id. */
  userId?: string;
  /** An alternative user id on the same platform. */
  userIdAlt?: string;
  /** The user's display name. */
  userName?: string;
  /** The chat id. */
  chatId?: string;
  /** The chat's name. */
  chatName?: string;
  /** The chat's type (`dm`, `group`, …). */
  chatType?: string;
  /** The thread id. */
  threadId?: string;
  /** The gateway's session key. */
  gatewaySessionKey?: string;
  /** The session's title. */
  sessionTitle?: string;
  /** How the title was made: `derived`, `llm` or `user`. */
  sessionTitleSource?: string;
  /** The conversation's working directory (only when non-empty). */
  cwd?: string;
  /** CLI only: shows a warning to the user. */
  warningCallback?: UserNoticeCallback;
  /** CLI only: shows a status line to the user. */
  statusCallback?: UserNoticeCallback;
  /** Any other key a host passes. */
  [key: string]: unknown;
}

/**
 * Options of {@linkcode MemoryProvider.prefetch} and `queuePrefetch`.
 *
 * @category Contract
 */
export interface PrefetchOptions {
  /**
   * The session the query belongs to.
   *
   * @default {""}
   */
  sessionId?: string;
}

/**
 * Options of {@linkcode MemoryProvider.syncTurn}.
 *
 * @category Contract
 */
export interface SyncTurnOptions {
  /**
   * The session the turn belongs to (always passed by the manager).
   *
   * @default {""}
   */
  sessionId?: string;
  /** The whole OpenAI-format transcript, tool calls and results included. */
  messages?: ChatMessage[];
  /** Who wrote the user message, when known. */
  turnAuthor?: TurnAuthor;
  /**
   * A stable key of this turn, set when the same turn may be handed over
   * again (`hermes memory import` re-run on the same transcript). A
   * provider that stores turns should store a turn whose key it already
   * holds at most once. Absent for live turns, except when a supervising
   * host hands a turn over again after the provider's process ended: then
   * it is the turn's `writeId`.
   */
  turnId?: string;
  /**
   * The id a supervising host gave this accepted turn (sandboxed providers):
   * a provider that stores turns durably keys the turn with it, so that the
   * same turn handed over again (with `turnId` set to this id) is stored once.
   */
  writeId?: string;
}

/**
 * Options of {@linkcode MemoryProvider.onTurnStart}.
 *
 * @category Contract
 */
export interface TurnStartOptions {
  /** Tokens left in the model's context window. */
  remainingTokens?: number;
  /** The model's name. */
  model?: string;
  /** The platform the turn came from. */
  platform?: string;
  /** How many tools the agent offers. */
  toolCount?: number;
  /** The author's id, or `null` when unknown. */
  authorId?: string | null;
  /** The author's name, or `null` when unknown. */
  authorName?: string | null;
  /** Whether the author is a bot (`false` when unknown). */
  authorIsBot?: boolean;
  /** Any other key a host passes. */
  [key: string]: unknown;
}

/**
 * Options of {@linkcode MemoryProvider.onSessionSwitch}.
 *
 * @category Contract
 */
export interface SessionSwitchOptions {
  /**
   * The session switched away from.
   *
   * @default {""}
   */
  parentSessionId?: string;
  /**
   * A genuinely new conversation (`/new`, `/reset`).
   *
   * @default {false}
   */
  reset?: boolean;
  /** Same id, truncated transcript; present only when `true`. */
  rewound?: boolean;
  /** Why: `resume`, `new_session`, `branch`, `compression`, … */
  reason?: string;
  /** Any other key a host passes. */
  [key: string]: unknown;
}

/**
 * Options of {@linkcode MemoryProvider.onPreCompress}.
 *
 * @category Contract
 */
export interface PreCompressOptions {
  /**
   * The host requires a durable checkpoint: throw unless it is committed.
   * Passed only to providers of checkpoint API version 2.
   *
   * @default {false}
   */
  requireCheckpoint?: boolean;
}

/**
 * Options of {@linkcode MemoryProvider.onDelegation}.
 *
 * @category Contract
 */
export interface DelegationOptions {
  /**
   * The subagent's session id.
   *
   * @default {""}
   */
  childSessionId?: string;
  /** Any other key a host passes. */
  [key: string]: unknown;
}

/**
 * Options of {@linkcode MemoryProvider.handleToolCall}.
 *
 * @category Contract
 */
export interface ToolCallOptions {
  /** The session the call belongs to. */
  sessionId?: string;
  /** Any other key a host passes. */
  [key: string]: unknown;
}

/**
 * A built-in memory store target.
 *
 * @category Contract
 */
export type MemoryTarget = "memory" | "user";

/**
 * A mirrored built-in memory write action.
 *
 * @category Contract
 */
export type MemoryWriteAction = "add" | "replace" | "remove";

/**
 * Provenance of a mirrored memory write (keys as Hermes has them:
 * `write_origin`, `execution_context`, `session_id`, `parent_session_id`,
 * `platform`, `tool_name`, `old_text`, `previous_content`).
 *
 * @category Contract
 */
export type MemoryWriteMetadata = Record<string, unknown>;

/**
 * Options of {@linkcode MemoryProvider.onMemoryEvict}.
 *
 * @category Contract
 */
export interface MemoryEvictOptions {
  /** Provenance plus `eviction_reason` (and `old_text` when present). */
  metadata?: MemoryWriteMetadata;
}

/**
 * One field of a provider's setup schema. Keys stay as Hermes has them
 * (`env_var`, `default_from`), since provider schemas are a shared format.
 *
 * @category Contract
 */
export interface ConfigField {
  /** The config key. */
  key: string;
  /** What the field is for. */
  description?: string;
  /** A secret: written to `.env` through `env_var`, never to `config.yaml`. */
  secret?: boolean;
  /** Whether setup needs a value. */
  required?: boolean;
  /** The default value. */
  default?: unknown;
  /** Allowed values (shown as a picker). */
  choices?: unknown[];
  /** Allowed values with labels. */
  options?: unknown[];
  /** `text`, `integer`, `number` or `boolean`. */
  type?: string;
  /** Alias of `type`. */
  kind?: string;
  /** The smallest allowed number. */
  minimum?: number;
  /** The largest allowed number. */
  maximum?: number;
  /** The step between numbers. */
  step?: number;
  /** Where to obtain a credential. */
  url?: string;
  /** The environment variable the value is stored under. */
  env_var?: string;
  /** Shown only when every `providerConfig[k] === v`. */
  when?: Record<string, unknown>;
  /** A default looked up from another field's value. */
  default_from?: { field: string; map: Record<string, unknown> };
  /** The label shown. */
  label?: string;
  /** The placeholder shown. */
  placeholder?: string;
  /** Any other key. */
  [key: string]: unknown;
}

/**
 * The parsed `config.yaml` (or any part of it).
 *
 * @category Contract
 */
export type HermesConfig = Record<string, unknown>;

/**
 * What {@linkcode MemoryProvider.drain} reports.
 *
 * @category Contract
 */
export interface DrainResult {
  /** Whether everything handed to the provider before the call is durable (or delivered). */
  drained: boolean;
  /** How many accepted items are not durable yet; absent when the provider cannot tell. */
  pending?: number;
}

/**
 * The contract every memory provider implements.
 *
 * Abstract members: {@linkcode MemoryProvider.name},
 * {@linkcode MemoryProvider.isAvailable}, {@linkcode MemoryProvider.initialize}
 * and {@linkcode MemoryProvider.getToolSchemas}. Every other method has the
 * default the Hermes contract gives it.
 *
 * @example A minimal provider
 * ```ts
 * import { MemoryProvider, type ToolSchema } from "@hermes/memory";
 *
 * class NotesProvider extends MemoryProvider {
 *   get name(): string { return "notes"; }
 *   isAvailable(): boolean { return true; }
 *   initialize(): void {}
 *   getToolSchemas(): ToolSchema[] { return []; }
 * }
 * const provider = new NotesProvider();
 * ```
 *
 * @category Contract
 */
export abstract class MemoryProvider {
  /**
   * The pre-compress checkpoint API this provider implements: `1` is the
   * historical best-effort call, `2` means every normal return of
   * {@linkcode MemoryProvider.onPreCompress} is a committed durable checkpoint.
   */
  readonly preCompressCheckpointApiVersion: number = 1;

  /**
   * Whether {@linkcode MemoryProvider.syncTurn} reads
   * {@linkcode SyncTurnOptions.messages} (the transcript so far, on every
   * turn). `false` declares it does not: the manager then neither redacts nor
   * passes it, and a sandbox never carries it across (Hermes passes
   * `messages` only to a `sync_turn` whose signature takes it).
   */
  readonly syncTurnTakesMessages: boolean = true;

  /** A short id; `"builtin"` is reserved for the built-in store. */
  abstract get name(): string;

  /** Whether the provider can run: checks config and dependencies only, never the network. */
  abstract isAvailable(): MaybePromise<boolean>;

  /** Called once at agent start. Must tolerate missing optional keys. */
  abstract initialize(
    sessionId: string,
    options: InitializeOptions,
  ): MaybePromise<void>;

  /**
   * The tools the provider offers, as bare function schemas (`[]` when
   * context-only).
   */
  abstract getToolSchemas(): MaybePromise<ToolSchema[]>;

  /**
   * Side-effect-free load for inspection-only agents; defaults to
   * {@linkcode MemoryProvider.initialize}.
   */
  initializeForInspection(
    sessionId: string,
    options: InitializeOptions,
  ): MaybePromise<void> {
    return this.initialize(sessionId, options);
  }

  /** A short hint shown when {@linkcode MemoryProvider.isAvailable} is false (default `""`). */
  unavailableReason(): MaybePromise<string> {
    return "";
  }

  /** Static text for the system prompt; `""` (the default) skips it. */
  systemPromptBlock(): MaybePromise<string> {
    return "";
  }

  /**
   * Recalled context for the coming model call (default `""`). Must be fast:
   * return what a background job already fetched.
   */
  prefetch(_query: string, _options: PrefetchOptions): MaybePromise<string> {
    return "";
  }

  /**
   * Warms results for the next {@linkcode MemoryProvider.prefetch}; runs in
   * the background after a turn.
   */
  queuePrefetch(_query: string, _options: PrefetchOptions): MaybePromise<void> {
  }

  /** Describes only the last prefetch; `null` (the default) shows nothing. */
  recallStatus(): MaybePromise<RecallStatus | null> {
    return null;
  }

  /** Records a completed turn; runs on the manager's background queue. */
  syncTurn(
    _userContent: string,
    _assistantContent: string,
    _options: SyncTurnOptions,
  ): MaybePromise<void> {
  }

  /**
   * Runs one of the provider's own tools; returns a JSON string.
   *
   * @throws {Error} By default: the provider does not handle the tool.
   */
  handleToolCall(
    toolName: string,
    _args: Record<string, unknown>,
    _options: ToolCallOptions,
  ): MaybePromise<string> {
    throw new Error(`Provider ${this.name} does not handle tool ${toolName}`);
  }

  /** Flushes and closes; called at process exit or agent close. */
  shutdown(): MaybePromise<void> {
  }

  /**
   * Called at the start of each turn, before prefetch.
   *
   * @param _turnNumber The 1-based turn number.
   */
  onTurnStart(
    _turnNumber: number,
    _message: string,
    _options: TurnStartOptions,
  ): MaybePromise<void> {
  }

  /**
   * A cheap, read-only signature of the provider's identity settings
   * (default `{}`), called on an uninitialized instance; a change busts
   * cached agents.
   */
  identitySignature(): MaybePromise<Record<string, unknown>> {
    return {};
  }

  /** Called at real session boundaries only, never per turn. */
  onSessionEnd(_messages: ChatMessage[]): MaybePromise<void> {
  }

  /**
   * Rebinds per-session state on `/resume`, `/branch`, `/reset`, `/new` or
   * compression. Returning literal `false` reports failure.
   */
  onSessionSwitch(
    _newSessionId: string,
    _options: SessionSwitchOptions,
  ): MaybePromise<void | boolean> {
  }

  /**
   * Called before lossy compression of the transcript. For API version 2
   * providers every normal return means a durable checkpoint is committed.
   *
   * @param _messages The raw transcript (v1) or normalized evidence (v2).
   * @returns Text fed to the summary prompt, `""` by default.
   */
  onPreCompress(
    _messages: ChatMessage[],
    _options: PreCompressOptions,
  ): MaybePromise<string> {
    return "";
  }

  /** Called on the parent when a subagent finishes. */
  onDelegation(
    _task: string,
    _result: string,
    _options: DelegationOptions,
  ): MaybePromise<void> {
  }

  /** The fields `hermes memory setup` asks for (default `[]`). */
  getConfigSchema(): MaybePromise<ConfigField[]> {
    return [];
  }

  /** Stores the non-secret values setup collected, the provider's own way. */
  saveConfig(
    _values: Record<string, unknown>,
    _hermesHome: string,
  ): MaybePromise<void> {
  }

  /** Mirrors a committed write of the built-in `memory` tool (metadata: provenance, `old_text`, `previous_content`). */
  onMemoryWrite(
    _action: MemoryWriteAction,
    _target: MemoryTarget,
    _content: string,
    _metadata?: MemoryWriteMetadata,
  ): MaybePromise<void> {
  }

  /** Called when the built-in store terminally dropped a fact (metadata with `eviction_reason`). */
  onMemoryEvict(
    _content: string,
    _target: MemoryTarget,
    _options: MemoryEvictOptions,
  ): MaybePromise<void> {
  }

  /**
   * Absolute paths outside `HERMES_HOME` that `hermes backup` should include
   * (default `[]`); must work without `initialize` and the network.
   */
  backupPaths(): MaybePromise<string[]> {
    return [];
  }

  /** When defined, owns the whole of `hermes memory setup <provider>`. */
  postSetup?(hermesHome: string, config: HermesConfig): MaybePromise<void>;

  /** When defined, a display-safe view of the `memory.<name>` section for `hermes memory status`. */
  getStatusConfig?(
    providerConfig: Record<string, unknown>,
  ): MaybePromise<Record<string, unknown>>;

  /**
   * When defined, waits up to `timeoutMs` (unbounded when omitted) until the
   * work accepted in one-way hooks is durable, and says what is not; the
   * manager calls it from `flushPending()` and before `shutdown()`.
   */
  drain?(timeoutMs?: number): MaybePromise<DrainResult>;
}

/**
 * Tells whether a value is a memory provider: an instance of
 * {@linkcode MemoryProvider}, or an object with its four abstract members
 * (a provider built against another copy of the framework).
 *
 * @category Contract
 */
export function isMemoryProvider(value: unknown): value is MemoryProvider {
  if (value instanceof MemoryProvider) return true;
  if (value === null || typeof value !== "object") return false;
  const v = value as Record<string, unknown>;
  return typeof v.name === "string" && typeof v.isAvailable === "function" &&
    typeof v.initialize === "function" &&
    typeof v.getToolSchemas === "function";
}
