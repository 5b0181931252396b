// The options and results named by `MemoryManager`'s methods.

import type {
  ChatMessage,
  HermesConfig,
  MemoryWriteMetadata,
  TurnAuthor,
} from "../core/memory_provider.ts";

/**
 * Options of {@linkcode MemoryManager}.
 *
 * @category Manager
 */
export interface MemoryManagerOptions {
  /**
   * How long an external provider's prefetch may take before the turn goes
   * on without it. Must be positive.
   *
   * @default {8000}
   */
  externalPrefetchTimeoutMs?: number;
  /**
   * The one budget of {@linkcode MemoryManager.shutdownAll}: queued work,
   * providers' `drain(ms)`, then their `shutdown()`. Must be positive.
   *
   * @default {5000}
   */
  shutdownDrainTimeoutMs?: number;
  /**
   * The loaded `config.yaml` (the prefetch spill policy is read from it).
   *
   * @default {{}}
   */
  config?: HermesConfig;
}

/**
 * Options of {@linkcode MemoryManager.syncAll}.
 *
 * @category Manager
 */
export interface SyncAllOptions {
  /**
   * The session the turn belongs to; always passed to providers.
   *
   * @default {""}
   */
  sessionId?: string;
  /** The whole OpenAI-format transcript; passed only when not `null`. */
  messages?: ChatMessage[] | null;
  /** Who wrote the user message; passed only when not `null`. */
  turnAuthor?: TurnAuthor | null;
  /** A stable key of the turn (see `SyncTurnOptions.turnId`); passed when set. */
  turnId?: string;
}

/**
 * Options of {@linkcode MemoryManager.commitSessionBoundary}.
 *
 * @category Manager
 */
export interface CommitSessionBoundaryOptions {
  /** The session switched to. */
  newSessionId: string;
  /**
   * The session that ended.
   *
   * @default {""}
   */
  parentSessionId?: string;
  /**
   * Why the boundary happened.
   *
   * @default {"new_session"}
   */
  reason?: string;
}

/**
 * Options of {@linkcode MemoryManager.onPreCompress}.
 *
 * @category Manager
 */
export interface ManagerPreCompressOptions {
  /** The host-normalized evidence, handed only to checkpoint providers. */
  evidenceMessages?: ChatMessage[] | null;
  /**
   * A durable checkpoint is required: failures are thrown.
   *
   * @default {false}
   */
  requireCheckpoint?: boolean;
  /**
   * The checkpoint API version a provider must advertise to count.
   *
   * @default {2}
   */
  checkpointApiVersion?: number;
}

/**
 * Options of {@linkcode MemoryManager.notifyMemoryToolWrite}.
 *
 * @category Manager
 */
export interface NotifyMemoryToolWriteOptions {
  /** Builds the provenance of the write (`write_origin`, `session_id`, …), once per mirrored operation. */
  buildMetadata?: () => MemoryWriteMetadata;
}

/**
 * How the last shutdown drain went.
 *
 * @category Manager
 */
export type ShutdownDrainStatus =
  | "not_started"
  | "draining"
  | "drained"
  | "timed_out";

/**
 * The outcome of the shutdown drain, see {@linkcode MemoryManager.shutdownDrainState}.
 *
 * @category Manager
 */
export interface ShutdownDrainState {
  /** Where the drain is. */
  readonly status: ShutdownDrainStatus;
  /** Queued writes dropped because the drain timed out. */
  readonly abandonedWrites: number;
  /** Queued prefetches dropped because the drain timed out. */
  readonly abandonedPrefetches: number;
  /** Background tasks still running (detached) when the drain ended. */
  readonly activeTasks: number;
  /** Items providers reported not yet durable when their drain ended (uncounted ones: see `undrainedProviders`). */
  readonly notDurable: number;
  /** Providers whose `drain()` did not report everything durable in time. */
  readonly undrainedProviders: readonly string[];
}

export const NOT_STARTED: ShutdownDrainState = Object.freeze({
  status: "not_started",
  abandonedWrites: 0,
  abandonedPrefetches: 0,
  activeTasks: 0,
  notDurable: 0,
  undrainedProviders: [],
});

/** The one option (`{name: value}`) checked at the boundary: a positive number of milliseconds. */
export function validTimeout(
  option: Record<string, number | undefined>,
  fallback: number,
): number {
  const [name, value] = Object.entries(option)[0]!;
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
