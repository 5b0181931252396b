/**
 * The memory manager's session hooks: the session's end, switches to another
 * session (with the retry of the providers that failed one), the session
 * boundary queued on the background queue, and the pre-compress checkpoint
 * (API v2) fan-out.
 *
 * @module
 */

import { log } from "../core/log.ts";
import {
  type ChatMessage,
  type MemoryProvider,
  PRE_COMPRESS_CHECKPOINT_API_VERSION,
  type SessionSwitchOptions,
} from "../core/memory_provider.ts";
import { providerHook } from "../core/provider_hooks.ts";
import { redactForEgress } from "../core/redact.ts";
import {
  type ProviderEntry,
  type ProviderFanOut,
  redactedErrorText,
} from "./provider_fan_out.ts";
import type { SubmitBackground } from "./turn_pipeline.ts";

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
  /**
   * The host-normalized evidence, handed only to checkpoint providers
   * (others always get the raw transcript).
   */
  evidenceMessages?: ChatMessage[] | null;
  /**
   * A durable checkpoint is required: a checkpoint provider's failure is
   * re-thrown, and an error is thrown when none succeeded.
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

interface PendingSessionSwitch {
  readonly newSessionId: string;
  readonly options: SessionSwitchOptions;
  readonly failed: Set<ProviderEntry>;
}

/** Python-style int() of a checkpoint API version; unparseable gives 1. */
function checkpointVersionOf(provider: MemoryProvider): number {
  let raw: unknown;
  try {
    raw = (provider as { preCompressCheckpointApiVersion?: unknown })
      .preCompressCheckpointApiVersion;
  } catch {
    return 1;
  }
  if (raw === undefined) return 1;
  if (typeof raw === "number") {
    return Number.isFinite(raw) ? Math.trunc(raw) : 1;
  }
  if (typeof raw === "boolean") return raw ? 1 : 0;
  if (typeof raw === "string" && /^\s*[+-]?\d+\s*$/.test(raw)) {
    return Number.parseInt(raw, 10);
  }
  return 1;
}

/** The session hooks of the memory manager; see `MemoryManager`. */
export class SessionHooks {
  readonly #fanOut: ProviderFanOut;
  readonly #submit: SubmitBackground;
  #pendingSwitch: PendingSessionSwitch | undefined = undefined;

  /**
   * Creates the hooks.
   *
   * @param fanOut The registered providers.
   * @param submit Queues a session boundary.
   */
  constructor(fanOut: ProviderFanOut, submit: SubmitBackground) {
    this.#fanOut = fanOut;
    this.#submit = submit;
  }

  /**
   * See `MemoryManager.onSessionEnd()`.
   *
   * @param messages The full transcript (`null` counts as `[]`).
   */
  async onSessionEnd(
    messages: ChatMessage[] | null | undefined,
  ): Promise<void> {
    const redacted = redactForEgress(Array.isArray(messages) ? messages : []);
    await this.#fanOut.each(
      this.#fanOut.entries,
      "onSessionEnd",
      (e) =>
        providerHook(e.provider, "onSessionEnd").call(e.provider, redacted),
    );
  }

  /**
   * See `MemoryManager.onSessionSwitch()`.
   *
   * @param newSessionId The session switched to.
   * @param options Parent, reset, rewound, reason.
   * @returns `true` when every provider succeeded.
   */
  async onSessionSwitch(
    newSessionId: string,
    options: SessionSwitchOptions,
  ): Promise<boolean> {
    if (!newSessionId) return true;
    const { rewound, ...rest } = options;
    const forwarded: SessionSwitchOptions = {
      ...rest,
      parentSessionId: options.parentSessionId ?? "",
      reset: options.reset ?? false,
    };
    if (rewound === true) forwarded.rewound = true;
    const failed = await this.#switchEach(
      this.#fanOut.entries,
      newSessionId,
      forwarded,
    );
    this.#pendingSwitch = failed.size === 0
      ? undefined
      : { newSessionId, options: forwarded, failed };
    return failed.size === 0;
  }

  async #switchEach(
    entries: Iterable<ProviderEntry>,
    newSessionId: string,
    options: SessionSwitchOptions,
  ): Promise<Set<ProviderEntry>> {
    const failed = new Set<ProviderEntry>();
    for (const entry of entries) {
      try {
        const result = await providerHook(entry.provider, "onSessionSwitch")
          .call(
            entry.provider,
            newSessionId,
            { ...options },
          );
        if (result === false) {
          failed.add(entry);
          log(
            "debug",
            `Memory provider '${entry.name}' onSessionSwitch failed: returned false`,
          );
        }
      } catch (error) {
        failed.add(entry);
        this.#fanOut.failHook(entry, "onSessionSwitch", error);
      }
    }
    return failed;
  }

  /**
   * See `MemoryManager.retryPendingSessionSwitch()`.
   *
   * @returns `true` when no switch is pending any more.
   */
  async retryPendingSessionSwitch(): Promise<boolean> {
    const pending = this.#pendingSwitch;
    if (pending === undefined) return true;
    const failed = await this.#switchEach(
      pending.failed,
      pending.newSessionId,
      pending.options,
    );
    if (this.#pendingSwitch !== pending) {
      return this.#pendingSwitch === undefined;
    }
    if (failed.size === 0) {
      this.#pendingSwitch = undefined;
      return true;
    }
    this.#pendingSwitch = { ...pending, failed };
    return false;
  }

  /** Whether a failed session switch is waiting for a retry. */
  get hasPendingSessionSwitch(): boolean {
    return this.#pendingSwitch !== undefined;
  }

  /**
   * See `MemoryManager.commitSessionBoundary()`.
   *
   * @param messages The transcript of the session that ended.
   * @param options The new session, its parent and the reason.
   */
  commitSessionBoundary(
    messages: ChatMessage[] | null | undefined,
    options: CommitSessionBoundaryOptions,
  ): void {
    if (this.#fanOut.entries.length === 0) return;
    const snapshot = Array.isArray(messages) ? [...messages] : [];
    const { newSessionId, parentSessionId = "", reason = "new_session" } =
      options;
    this.#submit("write", async () => {
      try {
        await this.onSessionEnd(snapshot);
      } catch (error) {
        log(
          "warn",
          `Session-boundary extraction failed: ${redactedErrorText(error)}`,
        );
      }
      try {
        await this.onSessionSwitch(newSessionId, {
          parentSessionId,
          reset: true,
          reason,
        });
      } catch (error) {
        log(
          "warn",
          `Session-boundary switch failed: ${redactedErrorText(error)}`,
        );
      }
    });
  }

  /**
   * See `MemoryManager.supportsPreCompressCheckpoint()`.
   *
   * @param apiVersion The version needed.
   * @returns `true` when a provider qualifies.
   */
  supportsPreCompressCheckpoint(apiVersion: number): boolean {
    return this.#fanOut.entries.some((e) =>
      checkpointVersionOf(e.provider) >= apiVersion
    );
  }

  /**
   * See `MemoryManager.onPreCompress()`.
   *
   * @param messages The raw transcript.
   * @param options Evidence, strictness and the API version.
   * @returns Non-blank results joined with a blank line.
   */
  async onPreCompress(
    messages: ChatMessage[] | null | undefined,
    options: ManagerPreCompressOptions,
  ): Promise<string> {
    const requireCheckpoint = options.requireCheckpoint === true;
    const apiVersion = options.checkpointApiVersion ??
      PRE_COMPRESS_CHECKPOINT_API_VERSION;
    const [raw, evidence] = redactForEgress([
      Array.isArray(messages) ? messages : [],
      options.evidenceMessages ?? undefined,
    ]) as [ChatMessage[], ChatMessage[] | undefined];
    const parts: string[] = [];
    let checkpointed = false;
    for (const entry of this.#fanOut.entries) {
      const isCheckpoint = checkpointVersionOf(entry.provider) >= apiVersion;
      const given = isCheckpoint && evidence !== undefined ? evidence : raw;
      try {
        const result = await providerHook(entry.provider, "onPreCompress").call(
          entry.provider,
          given,
          isCheckpoint ? { requireCheckpoint } : {},
        );
        if (typeof result === "string" && result.trim() !== "") {
          parts.push(result);
        }
        if (isCheckpoint) checkpointed = true;
      } catch (error) {
        this.#fanOut.failHook(entry, "onPreCompress", error);
        if (requireCheckpoint && isCheckpoint) throw error;
      }
    }
    if (requireCheckpoint && !checkpointed) {
      throw new Error(
        `No active memory provider completed pre-compress checkpoint API v${apiVersion}`,
      );
    }
    return parts.join("\n\n");
  }
}
