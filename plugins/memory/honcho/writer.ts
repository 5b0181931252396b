/**
 * Turn writes on top of the durable outbox (honcho-provider §8).
 *
 * {@linkcode HonchoWriter.stage} takes a turn's messages without waiting:
 * a serial background chain appends them to the outbox (fsynced) in order
 * and then routes the turn by `writeFrequency`:
 *
 * | `writeFrequency` | delivery |
 * |---|---|
 * | `"async"` (default) | a background delivery is scheduled; turns that arrive meanwhile join its batches |
 * | `"turn"` | delivered right after this turn's append, in the same chain |
 * | integer `N > 0` | delivered after every N-th turn |
 * | `"session"`, other strings, `N <= 0` | kept until {@linkcode HonchoWriter.flushAll} (session end, shutdown) |
 *
 * A failed delivery never drops anything: messages stay in the outbox and a
 * retry is scheduled with full-jitter exponential backoff (turns arriving
 * during the backoff do not shorten it). All timers and requests are
 * cancelled by {@linkcode HonchoWriter.close}.
 *
 * @module
 */

import { contextBound, log, spawnContextTask } from "@hermes/memory/provider";
import type { HonchoClient } from "./client.ts";
import { AuthError } from "./errors.ts";
import type {
  HonchoOutbox,
  OutboxDeliverResult,
  OutboxMessageInput,
} from "./outbox.ts";
import type { WriteFrequency } from "./config.ts";
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

/**
 * Routes staged turns into the outbox and delivers them per
 * `writeFrequency`.
 *
 * @example Staging a turn and waiting until it is delivered
 * ```ts ignore
 * const writer = new HonchoWriter({ outbox, client, writeFrequency: "turn" });
 * writer.stage([{ session: "s1", peer: "alice", content: "Hi" }]);
 * await writer.idle();
 * await writer.close(5000);
 * ```
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
  #chain: Promise<void> = Promise.resolve();
  #turns = 0;
  #delivery: Promise<void> | undefined;
  #again = false;
  #retryTimer: ReturnType<typeof setTimeout> | undefined;
  #failures = 0;
  #controller = new AbortController();
  #closed = false;

  /**
   * Creates the writer (no I/O).
   *
   * @param options Outbox, client, frequency, readiness hook and retry policy.
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
  }

  /** The outbox this writer feeds. */
  get outbox(): HonchoOutbox {
    return this.#outbox;
  }

  /** Whether a delivery is running or a retry is scheduled. */
  get busy(): boolean {
    return this.#delivery !== undefined || this.#retryTimer !== undefined;
  }

  /**
   * Stages one turn's messages: they are appended to the outbox in the
   * background (in staging order), then the turn is routed per
   * `writeFrequency`. Returns at once.
   *
   * @param messages The turn's messages (already chunked).
   */
  stage(messages: readonly OutboxMessageInput[]): void {
    if (this.#closed || messages.length === 0) return;
    const batch = [...messages];
    this.#enqueue(async () => {
      await this.#outbox.append(batch);
      this.#turns++;
      await this.#route();
    }, "honcho-stage");
  }

  /**
   * Appends messages outside the turn count (checkpoints) and waits until
   * they are in the outbox.
   *
   * @param messages The messages.
   * @returns How many the outbox refused (full).
   */
  async appendNow(messages: readonly OutboxMessageInput[]): Promise<number> {
    if (messages.length === 0) return 0;
    let rejected = 0;
    const batch = [...messages];
    await this.#enqueue(async () => {
      rejected = (await this.#outbox.append(batch)).rejected;
    }, "honcho-append");
    return rejected;
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
   * Waits until every staged turn is in the outbox and no delivery is
   * running (a scheduled retry is not waited for).
   *
   * @returns Resolves when idle.
   */
  async idle(): Promise<void> {
    for (;;) {
      const chain = this.#chain;
      await chain.catch(() => {});
      const delivery = this.#delivery;
      if (delivery) await delivery;
      if (chain === this.#chain && this.#delivery === undefined) return;
    }
  }

  /**
   * Delivers everything queued (all sessions, all frequencies) within
   * `timeoutMs`, retrying transient failures until the deadline.
   *
   * @param timeoutMs The deadline.
   * @returns `true` when the outbox is empty afterwards.
   */
  async flushAll(timeoutMs: number): Promise<boolean> {
    const deadline = Date.now() + Math.max(0, timeoutMs);
    const remaining = (): number => Math.max(0, deadline - Date.now());
    const staged = await settlesWithin(this.#chain, remaining());
    if (!staged) return false;
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
      log(
        "debug",
        `Honcho flush failed: ${errorText(error)}`,
      );
      return false;
    }
  }

  /**
   * Stops the writer: no new work, the retry timer is cleared, running
   * requests are aborted, and it waits (at most `timeoutMs`) for the chain
   * and delivery to settle. Queued messages stay in the outbox.
   *
   * @param timeoutMs How long to wait for running work.
   * @returns Resolves when stopped.
   */
  async close(timeoutMs: number): Promise<void> {
    this.#closed = true;
    this.#clearRetry();
    this.#controller.abort(new DOMException("Writer closed", "AbortError"));
    await settlesWithin(
      Promise.all([this.#chain, this.#delivery ?? Promise.resolve()]),
      timeoutMs,
    );
  }

  #enqueue(fn: () => Promise<void>, name: string): Promise<void> {
    const run = contextBound(fn);
    const next = this.#chain.catch(() => {}).then(() =>
      spawnContextTask(run, { name }).done
    );
    this.#chain = next.catch((error) => {
      log(
        "warn",
        `Honcho could not queue a turn: ${errorText(error)}`,
      );
    });
    return next;
  }

  async #route(): Promise<void> {
    switch (this.mode.kind) {
      case "async":
        this.kick();
        return;
      case "turn":
        await this.#deliverOnce();
        return;
      case "every":
        if (this.#turns % this.mode.n === 0) await this.#deliverOnce();
        return;
      default:
        return;
    }
  }

  async #deliverOnce(): Promise<void> {
    if (this.#closed) return;
    if (this.#delivery) await this.#delivery;
    if (this.#retryTimer !== undefined) return; // Backing off already.
    this.#delivery = this.#deliverLoop().finally(() => {
      this.#delivery = undefined;
    });
    await this.#delivery;
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
        });
      } catch (error) {
        if (signal.aborted) return;
        result = {
          delivered: 0,
          duplicates: 0,
          rejected: 0,
          pending: -1,
          error,
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
            result.error instanceof Error
              ? result.error.message
              : String(result.error)
          }`,
        );
        if (!(result.error instanceof AuthError)) this.#scheduleRetry();
        return;
      }
      this.#failures = 0;
    } while (this.#again);
  }

  #scheduleRetry(): void {
    if (this.#closed || this.#retryTimer !== undefined) return;
    const ceiling = Math.min(
      this.#retryMaxDelayMs,
      this.#retryBaseDelayMs * 2 ** Math.min(this.#failures - 1, 20),
    );
    const delay = Math.max(
      Math.min(this.#retryBaseDelayMs, ceiling),
      Math.floor(this.#random() * ceiling),
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
