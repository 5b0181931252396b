/**
 * The memory manager's turn pipeline: the per-turn fan-out (system prompt,
 * prefetch with its bound and spill policy, the recall indicator, turn
 * start, delegation) and the end-of-turn work handed to the background
 * queue (turn sync, queued prefetch).
 *
 * @module
 */

import type { BackgroundTaskKind } from "./background_queue.ts";
import { log } from "../core/log.ts";
import {
  type ChatMessage,
  type DelegationOptions,
  INDICATOR_GLYPH,
  type PrefetchOptions,
  RECALL_FAILED_GLYPH,
  type SyncTurnOptions,
  type TurnAuthor,
  type TurnStartOptions,
} from "../core/memory_provider.ts";
import {
  applyRecallSpill,
  prefetchSpillSource,
  type RecallSpillPolicy,
} from "../context/prefetch_spill.ts";
import { providerHook } from "../core/provider_hooks.ts";
import { redactForEgress, redactText } from "../core/redact.ts";
import { extractUserInstructionFromSkillMessage } from "../context/skill_invocation.ts";
import { isRecord } from "../_util/is_record.ts";
import {
  describeValue,
  isThenable,
  type ProviderEntry,
  type ProviderFanOut,
  TIMED_OUT,
} from "./provider_fan_out.ts";

/** The default bound of one external provider's prefetch, in milliseconds. */
export const DEFAULT_EXTERNAL_PREFETCH_TIMEOUT_MS = 8000;

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

/** Queues a task on the manager's background queue (or refuses it). */
export type SubmitBackground = (
  kind: BackgroundTaskKind,
  task: () => unknown,
) => void;

/**
 * The user text providers may see, or `null` to skip the call.
 *
 * @param text The user's message.
 * @returns The text without skill scaffolding, `null` when empty.
 */
export function cleanQuery(text: unknown): string | null {
  const clean = extractUserInstructionFromSkillMessage(text);
  return clean === null || clean === "" ? null : clean;
}

/** The per-turn hooks of the memory manager; see `MemoryManager`. */
export class TurnPipeline {
  readonly #fanOut: ProviderFanOut;
  readonly #submit: SubmitBackground;
  /** The prefetch spill policy, snapshotted when the external registers. */
  spillPolicy: RecallSpillPolicy | undefined = undefined;
  #recallFailures: string[] = [];
  #recallNotes: string[] = [];

  /** The failures the last `describeRecall()` reported (`label: why`). */
  get recallFailures(): readonly string[] {
    return this.#recallFailures;
  }

  /** The notes the last `describeRecall()` collected (`label: note`). */
  get recallNotes(): readonly string[] {
    return this.#recallNotes;
  }

  /**
   * Creates the pipeline.
   *
   * @param fanOut The registered providers.
   * @param submit Queues end-of-turn work.
   */
  constructor(fanOut: ProviderFanOut, submit: SubmitBackground) {
    this.#fanOut = fanOut;
    this.#submit = submit;
  }

  /**
   * See `MemoryManager.buildSystemPrompt()`.
   *
   * @returns The combined block, `""` when none.
   */
  async buildSystemPrompt(): Promise<string> {
    const blocks = await this.#fanOut.each(
      this.#fanOut.entries,
      "systemPromptBlock",
      (e) => providerHook(e.provider, "systemPromptBlock").call(e.provider),
    );
    return blocks.filter((b) => typeof b === "string" && b.trim() !== "")
      .join("\n\n");
  }

  /**
   * See `MemoryManager.prefetchAll()`.
   *
   * @param query The user's message.
   * @param options The session.
   * @returns Non-blank results joined with a blank line, `""` when none.
   */
  async prefetchAll(
    query: string,
    options: PrefetchOptions,
  ): Promise<string> {
    const entries = this.#fanOut.entries;
    if (entries.length === 0) return "";
    const clean = cleanQuery(query);
    if (clean === null) return "";
    const redacted = redactText(clean);
    const sessionId = options.sessionId ?? "";
    const parts: (string | Promise<string>)[] = new Array(entries.length);
    for (let i = 0; i < entries.length; i++) {
      parts[i] = this.#prefetchOne(entries[i]!, redacted, sessionId);
    }
    let out = "";
    for (const part of parts) {
      const text = typeof part === "string" ? part : await part;
      if (text !== "" && text.trim() !== "") {
        out = out === "" ? text : `${out}\n\n${text}`;
      }
    }
    return out;
  }

  /** One provider's prefetch; never throws or rejects. */
  #prefetchOne(
    entry: ProviderEntry,
    query: string,
    sessionId: string,
  ): string | Promise<string> {
    if (entry.prefetchBusy) {
      log(
        "debug",
        `Memory provider '${entry.name}' prefetch is still running; skipping this turn`,
      );
      return "";
    }
    let result: unknown;
    try {
      result = providerHook(entry.provider, "prefetch").call(
        entry.provider,
        query,
        {
          sessionId,
        },
      );
    } catch (error) {
      this.#fanOut.failHook(entry, "prefetch", error);
      return "";
    }
    if (!isThenable(result)) {
      return this.#finishPrefetch(entry, result, sessionId);
    }
    const settled = entry.external
      ? this.#fanOut.bounded(entry, "prefetchBusy", "prefetch", result)
      : Promise.resolve(result);
    return settled.then(
      (value) =>
        value === TIMED_OUT
          ? ""
          : this.#finishPrefetch(entry, value, sessionId),
      (error: unknown) => {
        this.#fanOut.failHook(entry, "prefetch", error);
        return "";
      },
    );
  }

  #finishPrefetch(
    entry: ProviderEntry,
    value: unknown,
    sessionId: string,
  ): string | Promise<string> {
    if (value == null) return "";
    if (typeof value !== "string") {
      this.#fanOut.fail(
        "debug",
        entry,
        "prefetch",
        `returned ${describeValue(value)} instead of a string`,
      );
      return "";
    }
    const policy = this.spillPolicy;
    if (!entry.external || value.trim() === "" || policy === undefined) {
      return value;
    }
    // Text within the limit comes back unchanged; skip the async call then.
    const limit = policy.spillEnabled
      ? policy.settings.maxChars
      : policy.ceilingChars;
    if (value.length <= limit) return value;
    // The single place the prefetch spill policy (src/context/SPEC.md §4) is applied.
    return applyRecallSpill(policy, value, {
      source: prefetchSpillSource(entry.name),
      sessionId,
    }).catch((error: unknown) => {
      this.#fanOut.fail("debug", entry, "prefetch spill", error);
      return value;
    });
  }

  /**
   * See `MemoryManager.describeRecall()`.
   *
   * @returns The indicator line, `""` when no provider reports a status.
   */
  async describeRecall(): Promise<string> {
    const statuses = await this.#fanOut.each(
      this.#fanOut.entries.filter((e) => !e.recallBusy),
      "recallStatus",
      (e) => {
        const status = providerHook(e.provider, "recallStatus").call(
          e.provider,
        );
        return isThenable(status) && e.external
          ? this.#fanOut.bounded(e, "recallBusy", "recallStatus()", status)
          : status;
      },
    );
    const segments: string[] = [];
    const failures: string[] = [];
    const notes: string[] = [];
    for (const status of statuses) {
      if (!isRecord(status)) continue;
      const label = status.providerLabel;
      const count = status.count;
      if (typeof label !== "string" || typeof count !== "number") continue;
      const failure = typeof status.failure === "string"
        ? status.failure
        : undefined;
      const glyph = typeof status.glyph === "string"
        ? status.glyph
        : failure !== undefined
        ? RECALL_FAILED_GLYPH
        : INDICATOR_GLYPH;
      if (failure !== undefined) failures.push(`${label}: ${failure}`);
      if (typeof status.note === "string") {
        notes.push(`${label}: ${status.note}`);
      }
      const detail = failure !== undefined
        ? failure
        : count === 1
        ? "recalled 1 memory"
        : count > 1
        ? `recalled ${count} memories`
        : "recalled relevant memory";
      segments.push(`${glyph} ${label} — ${detail}`);
    }
    this.#recallFailures = failures;
    this.#recallNotes = notes;
    return segments.join("  ");
  }

  /**
   * See `MemoryManager.queuePrefetchAll()`.
   *
   * @param query The user's message.
   * @param options The session.
   */
  queuePrefetchAll(query: string, options: PrefetchOptions): void {
    const entries = this.#fanOut.entries;
    if (entries.length === 0) return;
    const clean = cleanQuery(query);
    if (clean === null) return;
    const redacted = redactText(clean);
    const sessionId = options.sessionId ?? "";
    this.#submit("prefetch", () =>
      this.#fanOut.each(
        entries,
        "queuePrefetch",
        (e) =>
          providerHook(e.provider, "queuePrefetch").call(e.provider, redacted, {
            sessionId,
          }),
      ));
  }

  /**
   * See `MemoryManager.syncAll()`.
   *
   * @param userContent The user's message.
   * @param assistantContent The assistant's reply.
   * @param options The session, transcript and author.
   */
  syncAll(
    userContent: string,
    assistantContent: string,
    options: SyncAllOptions,
  ): void {
    const entries = this.#fanOut.entries;
    if (entries.length === 0) return;
    const clean = cleanQuery(userContent);
    if (clean === null) return;
    const messages = options.messages ?? undefined;
    const [user, assistant, redactedMessages] = redactForEgress([
      clean,
      typeof assistantContent === "string"
        ? assistantContent
        : String(assistantContent ?? ""),
      messages,
    ]) as [string, string, ChatMessage[] | undefined];
    const sessionId = options.sessionId ?? "";
    const turnAuthor = options.turnAuthor ?? undefined;
    const turnId = typeof options.turnId === "string" && options.turnId !== ""
      ? options.turnId
      : undefined;
    this.#submit("write", () =>
      this.#fanOut.each(entries, "syncTurn", (e) => {
        const turn: SyncTurnOptions = { sessionId };
        if (redactedMessages !== undefined) turn.messages = redactedMessages;
        if (turnAuthor !== undefined) turn.turnAuthor = turnAuthor;
        if (turnId !== undefined) turn.turnId = turnId;
        return providerHook(e.provider, "syncTurn").call(
          e.provider,
          user,
          assistant,
          turn,
        );
      }));
  }

  /**
   * See `MemoryManager.onTurnStart()`.
   *
   * @param turnNumber The 1-based turn number.
   * @param message The user's message.
   * @param options What the host knows about the turn.
   */
  async onTurnStart(
    turnNumber: number,
    message: string,
    options: TurnStartOptions,
  ): Promise<void> {
    const entries = this.#fanOut.entries;
    if (entries.length === 0) return;
    const redacted = redactText(
      typeof message === "string" ? message : String(message ?? ""),
    );
    for (const entry of entries) {
      if (entry.turnStartBusy) continue;
      try {
        const result = providerHook(entry.provider, "onTurnStart").call(
          entry.provider,
          turnNumber,
          redacted,
          { ...options },
        );
        if (isThenable(result)) {
          await (entry.external
            ? this.#fanOut.bounded(
              entry,
              "turnStartBusy",
              "onTurnStart",
              result,
            )
            : result);
        }
      } catch (error) {
        this.#fanOut.failHook(entry, "onTurnStart", error);
      }
    }
  }

  /**
   * See `MemoryManager.onDelegation()`.
   *
   * @param task The task given to the subagent.
   * @param result The subagent's result.
   * @param options The child's session id and anything else.
   */
  async onDelegation(
    task: string,
    result: string,
    options: DelegationOptions,
  ): Promise<void> {
    const [t, r] = redactForEgress([String(task ?? ""), String(result ?? "")]);
    const forwarded: DelegationOptions = {
      ...options,
      childSessionId: options.childSessionId ?? "",
    };
    await this.#fanOut.each(
      this.#fanOut.entries,
      "onDelegation",
      (e) =>
        providerHook(e.provider, "onDelegation").call(e.provider, t, r, {
          ...forwarded,
        }),
    );
  }
}
