/** What the Honcho provider's parts share for one initialized session. */

import { spawnContextTask } from "../../../src/provider/mod.ts";
import type { HonchoClient } from "./client/client.ts";
import { DEFAULT_HONCHO_TIMEOUT_MS } from "./client/connection.ts";
import type { HonchoConfig } from "./config/config.ts";
import type { NoticeBoard } from "./notices.ts";

export interface HonchoRuntime {
  readonly config: HonchoConfig;
  readonly client: HonchoClient;
  /** The one-time `[Honcho memory status]` notices. */
  readonly notices: NoticeBoard;
  /** Aborted when the provider shuts down. */
  readonly signal: AbortSignal;
  /** The provider's background tasks (awaited by `idle()` and `shutdown()`). */
  readonly tasks: TaskGroup;
  readonly now: () => number;
  /** Whether the provider is shutting down (no new background work starts). */
  readonly stopped: () => boolean;
  /** The request timeout in ms (30 s when unset): bounds waits and flushes. */
  readonly timeoutMs: number;
  /** Replaces the API key in a text (logs, tool results). */
  scrub(text: string): string;
}

/** `timeout` seconds in ms, or 30 s when unset or not positive. */
export function requestTimeoutMs(
  config: Pick<HonchoConfig, "timeout">,
): number {
  const seconds = config.timeout;
  return seconds !== undefined && seconds > 0
    ? seconds * 1000
    : DEFAULT_HONCHO_TIMEOUT_MS;
}

/** The provider's background tasks, tracked until settled (a tracked promise never rejects). */
export class TaskGroup {
  #tasks = new Set<Promise<unknown>>();

  get size(): number {
    return this.#tasks.size;
  }

  /** Runs `fn` as a tracked context task (in the caller's async context). */
  spawn(name: string, fn: () => Promise<void>): Promise<void> {
    const done = spawnContextTask(fn, { name }).done.catch(() => {});
    this.track(done);
    return done;
  }

  track(promise: Promise<unknown>): void {
    const tracked = promise.catch(() => {}).finally(() => {
      this.#tasks.delete(tracked);
    });
    this.#tasks.add(tracked);
  }

  /** Settles when every task tracked now has settled. */
  current(): Promise<unknown> {
    return Promise.all([...this.#tasks]);
  }

  /** Waits (at most `timeoutMs`) until no task is left, including ones started meanwhile. */
  settle(timeoutMs: number, now: () => number): Promise<boolean> {
    return waitWhile(
      () => this.#tasks.size > 0 ? this.current() : undefined,
      timeoutMs,
      now,
    );
  }
}

/** Waits on `next()` until it returns nothing; `false` when `timeoutMs` passes first. */
export async function waitWhile(
  next: () => Promise<unknown> | undefined,
  timeoutMs: number,
  now: () => number = Date.now,
): Promise<boolean> {
  const deadline = now() + Math.max(0, timeoutMs);
  for (let wait = next(); wait; wait = next()) {
    const left = deadline - now();
    if (left <= 0 || !await waitFor(wait, left)) return false;
  }
  return true;
}

/** Whether `promise` settles within `ms` (`ms <= 0`: whether it already has). */
export async function waitFor(
  promise: Promise<unknown>,
  ms: number,
): Promise<boolean> {
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
