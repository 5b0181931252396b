/**
 * Turn writes on top of the durable outbox (plugins/memory/honcho/SPEC.md §9).
 *
 * Two independent paths:
 *
 * - **Durability.** {@linkcode HonchoWriter.stage} takes a turn's messages
 *   and returns at once. Staged turns are appended to the outbox by one
 *   committer, in order, in groups (one write and one `fdatasync` for every
 *   turn staged while the previous group was being written), so a staged
 *   turn is on disk within one group commit — never behind a delivery. When
 *   more than `maxStagedMessages` are waiting for the disk, `stage()`
 *   returns a promise the caller awaits (back-pressure, at most
 *   `stageWaitMs`; after that the turn is still kept, with a warning). A
 *   failed disk write keeps the turns in memory, retries with backoff and
 *   warns once. {@linkcode HonchoWriter.drain} waits for this path only and
 *   counts what is not durable yet.
 * - **Delivery**, per `writeFrequency`, once a turn is durable:
 *
 * | `writeFrequency` | delivery |
 * |---|---|
 * | `"async"` (default) | a background delivery is scheduled; turns that arrive meanwhile join its batches |
 * | `"turn"` | a background delivery is scheduled after each turn |
 * | integer `N > 0` | a background delivery is scheduled after every N-th turn |
 * | `"session"`, other strings, `N <= 0` | kept until {@linkcode HonchoWriter.flushAll} (session end, shutdown) |
 *
 * A failed delivery never drops anything: messages stay in the outbox and a
 * retry is scheduled with the provider's full-jitter backoff (turns arriving
 * during the backoff do not shorten it); after an uncertain attempt the
 * retry is scheduled for when that attempt can no longer land. A denied
 * network permission or an auth failure schedules no retry (it cannot heal
 * in this process); a later turn tries again. All timers and requests are
 * cancelled by {@linkcode HonchoWriter.close}.
 *
 * @module
 */

import {
  contextBound,
  type DrainResult,
  log,
  spawnContextTask,
} from "../../../src/provider/mod.ts";
import type { HonchoClient } from "./client.ts";
import { isHonchoError } from "./errors.ts";
import type {
  HonchoOutbox,
  OutboxDeliverResult,
  OutboxMessageInput,
} from "./outbox.ts";
import type { WriteFrequency } from "./config.ts";
import { backoffDelayMs, isRetryableHonchoError } from "./_backoff.ts";
import { SETTLE_LOOKUP_INTERVAL_MS } from "./_outbox_delivery.ts";

/** The longest `Retry-After` a background delivery round honours. */
const RETRY_AFTER_CAP_MS = 60_000;
import { errorText } from "./_util.ts";

/** Options of {@linkcode HonchoWriter}. */
export interface HonchoWriterOptions {
  /** The profile's durable outbox. */
  outbox: HonchoOutbox;
  /** The client deliveries use. */
  client: HonchoClient;
  /** When turns are delivered. @default {"async"} */
  writeFrequency?: WriteFrequency;
  /**
   * Runs before each delivery (session init with its observation config,
   * so Honcho never creates the session with default settings). A
   * rejection counts as a failed delivery.
   */
  ensureReady?: (signal: AbortSignal) => Promise<void>;
  /** Called after each delivery attempt with its result (notices, tests). */
  onResult?: (result: OutboxDeliverResult) => void;
  /** First retry delay after a failed delivery, in ms. @default {1000} */
  retryBaseDelayMs?: number;
  /** Ceiling of the retry delay, in ms. @default {30000} */
  retryMaxDelayMs?: number;
  /** Random numbers in [0, 1) for jitter. @default {Math.random} */
  random?: () => number;
  /**
   * Messages waiting for the disk above which {@linkcode HonchoWriter.stage}
   * pushes back (returns a promise to await). @default {5000}
   */
  maxStagedMessages?: number;
  /** The longest one `stage()` waits for room, in ms. @default {5000} */
  stageWaitMs?: number;
}

/** How a `writeFrequency` value behaves. */
export type WriteMode =
  | { kind: "async" }
  | { kind: "turn" }
  | { kind: "every"; n: number }
  | { kind: "session" };

/**
 * Interprets a `writeFrequency` value: `"async"`, `"turn"`, a positive
 * integer N (also as a string), and everything else as `"session"`
 * (deferred until the session ends).
 *
 * @param value The setting.
 * @returns The behaviour.
 *
 * @example Integers and unknown strings
 * ```ts
 * import { writeModeOf } from "./writer.ts";
 * import assert from "node:assert/strict";
 * assert.deepEqual(writeModeOf(3), { kind: "every", n: 3 });
 * assert.deepEqual(writeModeOf("sometimes"), { kind: "session" });
 * ```
 */
export function writeModeOf(value: WriteFrequency | undefined): WriteMode {
  if (value === undefined) return { kind: "async" };
  if (typeof value === "number") {
    return Number.isInteger(value) && value > 0
      ? { kind: "every", n: value }
      : { kind: "session" };
  }
  const text = String(value).trim().toLowerCase();
  if (text === "async" || text === "") return { kind: "async" };
  if (text === "turn") return { kind: "turn" };
  if (/^-?\d+$/.test(text)) return writeModeOf(Number(text));
  return { kind: "session" };
}

interface Staged {
  records: (OutboxMessageInput & { id: string })[];
  /** A turn (counted for `writeFrequency`), or a checkpoint append. */
  turn: boolean;
  done?: (rejected: number) => void;
  failed?: (error: unknown) => void;
}

/**
 * Routes staged turns into the outbox and delivers them per
 * `writeFrequency`.
 */
export class HonchoWriter {
  /** The behaviour of the configured `writeFrequency`. */
  readonly mode: WriteMode;
  #outbox: HonchoOutbox;
  #client: HonchoClient;
  #ensureReady: ((signal: AbortSignal) => Promise<void>) | undefined;
  #onResult: ((result: OutboxDeliverResult) => void) | undefined;
  #retryBaseDelayMs: number;
  #retryMaxDelayMs: number;
  #random: () => number;
  #maxStaged: number;
  #stageWaitMs: number;
  #staged: Staged[] = [];
  #stagedMessages = 0;
  #committing: Promise<void> | undefined;
  #roomWaiters = new Set<() => void>();
  #diskFailures = 0;
  #warnedSlowDisk = false;
  #turns = 0;
  /** Messages this writer itself put into the outbox. */
  #committed = 0;
  #delivery: Promise<void> | undefined;
  #again = false;
  #retryTimer: ReturnType<typeof setTimeout> | undefined;
  #failures = 0;
  #controller = new AbortController();
  #closed = false;

  /**
   * Creates the writer (no I/O).
   *
   * @param options Outbox, client, frequency, readiness hook, retry policy and staging bound.
   */
  constructor(options: HonchoWriterOptions) {
    this.mode = writeModeOf(options.writeFrequency);
    this.#outbox = options.outbox;
    this.#client = options.client;
    this.#ensureReady = options.ensureReady;
    this.#onResult = options.onResult;
    this.#retryBaseDelayMs = options.retryBaseDelayMs ?? 1_000;
    this.#retryMaxDelayMs = options.retryMaxDelayMs ?? 30_000;
    this.#random = options.random ?? Math.random;
    this.#maxStaged = Math.max(1, options.maxStagedMessages ?? 5_000);
    this.#stageWaitMs = Math.max(0, options.stageWaitMs ?? 5_000);
  }

  /** The outbox this writer feeds. */
  get outbox(): HonchoOutbox {
    return this.#outbox;
  }

  /** Whether a delivery is running or a retry is scheduled. */
  get busy(): boolean {
    return this.#delivery !== undefined || this.#retryTimer !== undefined;
  }

  /** Messages handed to the writer that are not in the outbox file yet. */
  get notDurable(): number {
    return this.#stagedMessages;
  }

  /**
   * Stages one turn's messages: they reach the outbox within one group
   * commit (in staging order), then the turn is routed per
   * `writeFrequency`. Returns at once, unless more than `maxStagedMessages`
   * are waiting for the disk: then it returns a promise that resolves when
   * there is room again (or after `stageWaitMs`, with a warning); the turn
   * is kept either way.
   *
   * @param messages The turn's messages (already chunked); an `id` makes
   * the message stored at most once (see {@linkcode OutboxMessageInput.id}).
   * @returns Nothing, or the back-pressure promise to await.
   */
  stage(messages: readonly OutboxMessageInput[]): Promise<void> | undefined {
    if (this.#closed || messages.length === 0) return undefined;
    this.#push({ records: withIds(messages), turn: true });
    if (this.#stagedMessages <= this.#maxStaged) return undefined;
    return this.#waitForRoom();
  }

  /**
   * Appends messages outside the turn count (checkpoints) and waits until
   * they are durable in the outbox.
   *
   * @param messages The messages.
   * @returns How many the outbox refused (full).
   * @throws {Error} When the writer is closed.
   */
  appendNow(messages: readonly OutboxMessageInput[]): Promise<number> {
    if (messages.length === 0) return Promise.resolve(0);
    if (this.#closed) {
      return Promise.reject(new Error("the Honcho writer is closed"));
    }
    return new Promise<number>((resolve, reject) => {
      this.#push({
        records: withIds(messages),
        turn: false,
        done: resolve,
        failed: reject,
      });
    });
  }

  /**
   * Waits (at most `timeoutMs`) until everything staged so far is durable
   * in the outbox.
   *
   * @param timeoutMs How long to wait; without limit when omitted.
   * @returns `drained` and the messages still not durable.
   */
  async drain(timeoutMs?: number): Promise<DrainResult> {
    const deadline = timeoutMs === undefined
      ? Infinity
      : Date.now() + Math.max(0, timeoutMs);
    while (this.#stagedMessages > 0 && this.#committing) {
      const left = deadline - Date.now();
      if (left <= 0) break;
      if (!await settlesWithin(this.#committing, left)) break;
    }
    const pending = this.#stagedMessages;
    return pending === 0 ? { drained: true, pending: 0 } : {
      drained: false,
      pending,
    };
  }

  /**
   * Schedules a background delivery now (the backlog of an earlier process,
   * or async mode), unless one is running or a retry backoff is pending.
   */
  kick(): void {
    if (this.#closed || this.#retryTimer !== undefined) return;
    if (this.#delivery) {
      this.#again = true;
      return;
    }
    this.#delivery = spawnContextTask(() => this.#deliverLoop(), {
      name: "honcho-deliver",
    }).done.catch(() => {}).finally(() => {
      this.#delivery = undefined;
    });
  }

  /**
   * Resumes delivery once Honcho is ready (session set up): in `async` and
   * `turn` mode everything queued is delivered; in deferred modes only
   * what earlier processes left ({@linkcode HonchoWriter.deliverBacklog}).
   */
  resume(): void {
    if (this.mode.kind === "async" || this.mode.kind === "turn") this.kick();
    else void this.deliverBacklog();
  }

  /**
   * Delivers what earlier processes left in the outbox (at start-up): kicks
   * a delivery when the outbox holds more than this writer put there, so a
   * deferred `writeFrequency` is not bypassed for this process's own turns.
   *
   * @returns Resolves once the check is done (the delivery runs on).
   */
  async deliverBacklog(): Promise<void> {
    try {
      const stats = await this.#outbox.stats();
      if (stats.pending > this.#committed) this.kick();
    } catch (error) {
      log("debug", `Honcho backlog check failed: ${errorText(error)}`);
    }
  }

  /**
   * Waits until every staged turn is durable and no delivery is running (a
   * scheduled retry is not waited for).
   *
   * @returns Resolves when idle.
   */
  async idle(): Promise<void> {
    for (;;) {
      const committing = this.#committing;
      if (committing) await committing.catch(() => {});
      const delivery = this.#delivery;
      if (delivery) await delivery;
      if (this.#committing === undefined && this.#delivery === undefined) {
        return;
      }
    }
  }

  /**
   * Delivers everything queued (all sessions, all frequencies) within
   * `timeoutMs`: first makes the staged turns durable, then retries
   * transient failures until the deadline.
   *
   * @param timeoutMs The deadline.
   * @returns `true` when the outbox is empty afterwards.
   */
  async flushAll(timeoutMs: number): Promise<boolean> {
    const deadline = Date.now() + Math.max(0, timeoutMs);
    const remaining = (): number => Math.max(0, deadline - Date.now());
    if (!(await this.drain(remaining())).drained) return false;
    if (this.#delivery) {
      if (!await settlesWithin(this.#delivery, remaining())) return false;
    }
    this.#clearRetry();
    try {
      if ((await this.#outbox.stats()).pending === 0) return true;
      if (this.#ensureReady) {
        await withDeadline(
          (signal) => this.#ensureReady!(signal),
          remaining(),
          this.#controller.signal,
        );
      }
      const empty = await this.#outbox.flush(this.#client, remaining());
      if (empty) this.#failures = 0;
      return empty;
    } catch (error) {
      log("debug", `Honcho flush failed: ${errorText(error)}`);
      return false;
    }
  }

  /**
   * Stops the writer: no new work, the retry timer is cleared; it waits (at
   * most `timeoutMs`) for the staged turns to become durable, then aborts
   * running requests and waits for the delivery to settle. Queued messages
   * stay in the outbox.
   *
   * @param timeoutMs How long to wait for running work.
   * @returns Resolves when stopped.
   */
  async close(timeoutMs: number): Promise<void> {
    const deadline = Date.now() + Math.max(0, timeoutMs);
    this.#closed = true;
    this.#clearRetry();
    for (const wake of this.#roomWaiters) wake();
    await this.drain(Math.max(0, deadline - Date.now()));
    this.#controller.abort(new DOMException("Writer closed", "AbortError"));
    await settlesWithin(
      Promise.all([
        this.#committing ?? Promise.resolve(),
        this.#delivery ?? Promise.resolve(),
      ]),
      Math.max(0, deadline - Date.now()),
    );
  }

  // -------------------------------------------------------------------------
  // Durability: the staging queue and its committer
  // -------------------------------------------------------------------------

  #push(item: Staged): void {
    this.#staged.push(item);
    this.#stagedMessages += item.records.length;
    this.#startCommitter();
  }

  #startCommitter(): void {
    this.#committing ??= spawnContextTask(() => this.#commitLoop(), {
      name: "honcho-stage",
    }).done.catch((error) => {
      log("warn", `Honcho could not queue turns: ${errorText(error)}`);
    }).finally(() => {
      this.#committing = undefined;
      // Staged between the loop's last look and this reset.
      if (this.#staged.length > 0 && !this.#controller.signal.aborted) {
        this.#startCommitter();
      }
    });
  }

  async #commitLoop(): Promise<void> {
    while (this.#staged.length > 0) {
      const items = this.#staged.splice(0);
      let accepted: Set<string>;
      try {
        const result = await this.#outbox.append(
          items.flatMap((item) => item.records),
        );
        accepted = new Set(result.accepted);
      } catch (error) {
        // The disk refused the write: keep the turns, warn once, retry.
        this.#staged.unshift(...items);
        this.#diskFailures++;
        if (this.#diskFailures === 1) {
          log(
            "warn",
            `Honcho cannot write its outbox ${this.#outbox.path} (${
              errorText(error)
            }): ${this.#stagedMessages} message(s) are held in memory and the write is retried`,
          );
        }
        const delay = backoffDelayMs(this.#diskFailures - 1, error, {
          baseMs: 100,
          maxMs: 5_000,
          retryAfterCapMs: 0,
          random: this.#random,
        });
        await new Promise((resolve) =>
          setTimeout(resolve, Math.max(10, delay))
        );
        if (this.#closed && this.#controller.signal.aborted) return;
        continue;
      }
      if (this.#diskFailures > 0) {
        log("warn", `Honcho outbox ${this.#outbox.path} is writable again`);
      }
      this.#diskFailures = 0;
      let turns = 0;
      this.#committed += accepted.size;
      for (const item of items) {
        this.#stagedMessages -= item.records.length;
        if (item.turn) turns++;
        item.done?.(
          item.records.filter((record) => !accepted.has(record.id)).length,
        );
      }
      this.#wakeRoomWaiters();
      if (turns > 0) this.#route(turns);
    }
  }

  #waitForRoom(): Promise<void> {
    return new Promise<void>((resolve) => {
      const wake = (): void => {
        clearTimeout(timer);
        this.#roomWaiters.delete(wake);
        resolve();
      };
      const timer = setTimeout(() => {
        this.#roomWaiters.delete(wake);
        if (!this.#warnedSlowDisk) {
          this.#warnedSlowDisk = true;
          log(
            "warn",
            `Honcho's outbox ${this.#outbox.path} is not keeping up: ${this.#stagedMessages} message(s) are waiting for the disk (more than ${this.#maxStaged}); they are kept in memory until written`,
          );
        }
        resolve();
      }, this.#stageWaitMs);
      this.#roomWaiters.add(wake);
    });
  }

  #wakeRoomWaiters(): void {
    if (this.#stagedMessages > this.#maxStaged) return;
    this.#warnedSlowDisk = false;
    for (const wake of [...this.#roomWaiters]) wake();
  }

  // -------------------------------------------------------------------------
  // Delivery
  // -------------------------------------------------------------------------

  #route(turns: number): void {
    const before = this.#turns;
    this.#turns += turns;
    switch (this.mode.kind) {
      case "async":
      case "turn":
        this.kick();
        return;
      case "every": {
        const n = this.mode.n;
        if (Math.floor(this.#turns / n) > Math.floor(before / n)) this.kick();
        return;
      }
      default:
        return;
    }
  }

  async #deliverLoop(): Promise<void> {
    do {
      this.#again = false;
      if (this.#closed) return;
      const signal = this.#controller.signal;
      let result: OutboxDeliverResult;
      try {
        // Nothing queued: no session setup, no request.
        if ((await this.#outbox.stats()).pending === 0) return;
        if (this.#ensureReady) await this.#ensureReady(signal);
        result = await this.#outbox.deliver(this.#client, {
          signal,
          maxRetries: 0,
          maxWaitMs: 0,
        });
      } catch (error) {
        if (signal.aborted) return;
        // Session set-up failed: systemic unless a retry may help.
        result = {
          delivered: 0,
          duplicates: 0,
          rejected: 0,
          pending: -1,
          error,
          systemic: !isRetryableHonchoError(error),
        };
      }
      try {
        this.#onResult?.(result);
      } catch {
        // A broken observer must not stop delivery.
      }
      if (result.error !== undefined) {
        this.#failures++;
        log(
          "debug",
          `Honcho delivery failed (${this.#failures} in a row): ${
            errorText(result.error)
          }`,
        );
        if (
          !isHonchoError(result.error, "auth") &&
          !isHonchoError(result.error, "permission")
        ) this.#scheduleRetry(undefined, result.error);
        return;
      }
      if (result.busy) {
        // Another process delivers; look again in case it stops first.
        this.#scheduleRetry(this.#retryBaseDelayMs);
        return;
      }
      this.#failures = 0;
      if (result.settlesAt !== undefined) {
        // Look again soon (Honcho may show the unconfirmed messages), and
        // at the latest once the uncertain attempt can no longer land.
        this.#scheduleRetry(
          Math.max(
            10,
            Math.min(
              result.settlesAt - Date.now() + 10,
              SETTLE_LOOKUP_INTERVAL_MS,
            ),
          ),
        );
        return;
      }
    } while (this.#again);
  }

  #scheduleRetry(fixedDelay?: number, error?: unknown): void {
    if (this.#closed || this.#retryTimer !== undefined) return;
    // The server's Retry-After (a 429 or 503 on a message write or on the
    // session set-up) sets the wait, as on every other route.
    const delay = fixedDelay ?? Math.max(
      Math.min(this.#retryBaseDelayMs, 10),
      backoffDelayMs(this.#failures - 1, error, {
        baseMs: this.#retryBaseDelayMs,
        maxMs: this.#retryMaxDelayMs,
        retryAfterCapMs: Math.max(this.#retryMaxDelayMs, RETRY_AFTER_CAP_MS),
        random: this.#random,
      }),
    );
    this.#retryTimer = setTimeout(
      contextBound(() => {
        this.#retryTimer = undefined;
        this.kick();
      }),
      delay,
    );
  }

  #clearRetry(): void {
    if (this.#retryTimer !== undefined) {
      clearTimeout(this.#retryTimer);
      this.#retryTimer = undefined;
    }
  }
}

/**
 * Gives every message an id now, so the outbox's answer can be matched (a
 * fresh random id needs no lookup before its first send).
 */
function withIds(
  messages: readonly OutboxMessageInput[],
): (OutboxMessageInput & { id: string })[] {
  return messages.map((message) => ({
    ...message,
    id: message.id ?? crypto.randomUUID(),
    checkFirst: message.checkFirst ?? message.id !== undefined,
  }));
}

/**
 * Waits for a promise at most `ms` milliseconds (its outcome is ignored).
 *
 * @param promise The work.
 * @param ms The limit.
 * @returns `true` when it settled in time.
 */
async function settlesWithin(
  promise: Promise<unknown>,
  ms: number,
): Promise<boolean> {
  if (ms === Infinity) {
    await promise.catch(() => {});
    return true;
  }
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), Math.max(0, ms));
  });
  try {
    return await Promise.race([promise.then(() => true, () => true), late]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Runs `fn` with a signal that aborts after `ms` or when `parent` aborts.
 *
 * @param fn The work.
 * @param ms The limit.
 * @param parent An outer signal.
 * @returns What `fn` resolves to.
 */
async function withDeadline<T>(
  fn: (signal: AbortSignal) => Promise<T>,
  ms: number,
  parent: AbortSignal,
): Promise<T> {
  const controller = new AbortController();
  const onAbort = (): void => controller.abort(parent.reason);
  parent.addEventListener("abort", onAbort, { once: true });
  const timer = setTimeout(
    () =>
      controller.abort(
        new DOMException("Honcho deadline passed", "TimeoutError"),
      ),
    Math.max(0, ms),
  );
  try {
    return await fn(controller.signal);
  } finally {
    clearTimeout(timer);
    parent.removeEventListener("abort", onAbort);
  }
}
