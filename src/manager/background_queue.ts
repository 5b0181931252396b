// The manager's one FIFO lane for end-of-turn work (turn N syncs before turn
// N+1), never inline and in the submitter's async context.

import { setImmediate } from "node:timers";
import { log } from "../core/log.ts";
import { redactText } from "../core/redact.ts";
import { errorText } from "../_util/error_text.ts";
import { raceTimeout } from "../_util/race_timeout.ts";

/** What a background task is, for shutdown accounting. */
export type BackgroundTaskKind = "write" | "prefetch";

/** The outcome of {@linkcode BackgroundQueue.close}. */
export interface BackgroundDrainResult {
  /** Every task submitted before the close finished in time. */
  readonly drained: boolean;
  /** Queued writes that never started and never will. */
  readonly abandonedWrites: number;
  /** Queued prefetches that never started and never will. */
  readonly abandonedPrefetches: number;
  /** Tasks that started but had not finished (left running, detached). */
  readonly activeTasks: number;
}

/** Waits for a promise for a bounded time (the timer cleared as soon as it settles). */
export function settlesWithin(
  promise: Promise<unknown>,
  timeoutMs: number,
): Promise<boolean> {
  return raceTimeout(promise.then(() => true, () => true), timeoutMs)
    .then((settled) => settled === true);
}

/**
 * A serial FIFO queue of background tasks that run in their submitter's
 * async context and never inline.
 */
export class BackgroundQueue {
  #tail: Promise<void> = Promise.resolve();
  #outstanding = 0;
  #running = 0;
  #queuedWrites = 0;
  #queuedPrefetches = 0;
  #closed = false;
  #abandoned = false;

  /** Tasks submitted and not yet finished (queued or running). */
  get size(): number {
    return this.#outstanding;
  }

  /** Whether {@linkcode BackgroundQueue.close} was called. */
  get closed(): boolean {
    return this.#closed;
  }

  /** Queues `task` behind every earlier one; a failure is logged at debug and never stops the queue. */
  submit(task: () => unknown, kind: BackgroundTaskKind = "write"): boolean {
    if (this.#closed) return false;
    if (this.#outstanding === 0) {
      // Idle: start on a later macrotask, never inside the submitter's turn.
      this.#tail = new Promise<void>((resolve) => setImmediate(resolve));
    }
    this.#outstanding++;
    if (kind === "prefetch") this.#queuedPrefetches++;
    else this.#queuedWrites++;
    // Registered here, so the reaction runs in the submitter's async context.
    this.#tail = this.#tail.then(() => this.#run(task, kind));
    return true;
  }

  async #run(task: () => unknown, kind: BackgroundTaskKind): Promise<void> {
    if (kind === "prefetch") this.#queuedPrefetches--;
    else this.#queuedWrites--;
    if (this.#abandoned) {
      this.#outstanding--;
      return;
    }
    this.#running++;
    try {
      await task();
    } catch (error) {
      log(
        "debug",
        `Memory background ${kind} task failed: ${
          redactText(errorText(error))
        }`,
      );
    } finally {
      this.#running--;
      this.#outstanding--;
    }
  }

  /** Waits until every task submitted before this call has finished. */
  flush(timeoutMs?: number): Promise<boolean> {
    if (this.#outstanding === 0 || this.#closed) return Promise.resolve(true);
    const target = this.#tail;
    if (timeoutMs === undefined) return target.then(() => true);
    return settlesWithin(target, timeoutMs);
  }

  /** Stops accepting tasks; queued ones get `timeoutMs` to finish, then unstarted ones are abandoned. */
  async close(timeoutMs: number): Promise<BackgroundDrainResult> {
    this.#closed = true;
    // Once the tail settles nothing is queued or running: the counts are 0.
    const drained = this.#outstanding === 0 ||
      await settlesWithin(this.#tail, timeoutMs);
    if (!drained) this.#abandoned = true;
    return {
      drained,
      abandonedWrites: this.#queuedWrites,
      abandonedPrefetches: this.#queuedPrefetches,
      activeTasks: this.#running,
    };
  }
}
