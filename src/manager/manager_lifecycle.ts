/**
 * The memory manager's lifecycle: initializing the providers, the background
 * queue that end-of-turn work runs on, waiting for that work and for the
 * providers' own `drain()` ({@linkcode ManagerLifecycle.flushPending}), and
 * the shutdown drain with its report.
 *
 * @module
 */

import {
  BackgroundQueue,
  type BackgroundTaskKind,
} from "./background_queue.ts";
import { getHermesHome } from "../profile/hermes_home.ts";
import { log } from "../core/log.ts";
import type { InitializeOptions } from "../core/memory_provider.ts";
import { providerHook } from "../core/provider_hooks.ts";
import { isRecord } from "../_util/is_record.ts";
import { isThenable, type ProviderFanOut } from "./provider_fan_out.ts";

/** The default bound of the shutdown drain, in milliseconds. */
export const DEFAULT_SHUTDOWN_DRAIN_TIMEOUT_MS = 5000;

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
  /**
   * Items providers accepted (turns, messages) and reported not yet durable
   * when their own drain ended; a provider that cannot count adds nothing
   * here but is named in `undrainedProviders`.
   */
  readonly notDurable: number;
  /** Providers whose `drain()` did not report everything durable in time. */
  readonly undrainedProviders: readonly string[];
}

/** `pending`'s value, or `undefined` when it does not settle within `ms`. */
function raceTimeout<T>(
  pending: Promise<T>,
  ms: number,
): Promise<T | undefined> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<undefined>((resolve) => {
    timer = setTimeout(() => resolve(undefined), ms);
  });
  return Promise.race([pending, timeout]).finally(() => clearTimeout(timer));
}

/** The memory manager's lifecycle; see `MemoryManager`. */
export class ManagerLifecycle {
  readonly #fanOut: ProviderFanOut;
  readonly #drainTimeoutMs: number;
  #queue: BackgroundQueue | undefined = undefined;
  #shuttingDown = false;
  #shutdown: Promise<void> | undefined = undefined;
  #drainState: ShutdownDrainState = {
    status: "not_started",
    abandonedWrites: 0,
    abandonedPrefetches: 0,
    activeTasks: 0,
    notDurable: 0,
    undrainedProviders: [],
  };

  /**
   * Creates the lifecycle of a manager.
   *
   * @param fanOut The registered providers.
   * @param drainTimeoutMs The shutdown budget, in milliseconds.
   */
  constructor(fanOut: ProviderFanOut, drainTimeoutMs: number) {
    this.#fanOut = fanOut;
    this.#drainTimeoutMs = drainTimeoutMs;
  }

  /**
   * Queues `task` on the background queue (started on first use); refused
   * with a warning once shutdown began.
   *
   * @param kind `write` or `prefetch`.
   * @param task The work.
   */
  submit(kind: BackgroundTaskKind, task: () => unknown): void {
    if (this.#shuttingDown) {
      log(
        "warn",
        `Memory manager is shutting down; rejecting late ${kind} task`,
      );
      return;
    }
    this.#queue ??= new BackgroundQueue();
    this.#queue.submit(task, kind);
  }

  /**
   * See `MemoryManager.initializeAll()`.
   *
   * @param sessionId The session id.
   * @param options What the host knows about the session.
   */
  async initializeAll(
    sessionId: string,
    options: InitializeOptions,
  ): Promise<void> {
    const forwarded = withHome(options);
    await this.#fanOut.each(
      this.#fanOut.entries,
      "initialize",
      (e) => e.provider.initialize(sessionId, { ...forwarded }),
    );
  }

  /**
   * See `MemoryManager.initializeAllForInspection()`.
   *
   * @param sessionId The session id.
   * @param options What the host knows about the session.
   */
  async initializeAllForInspection(
    sessionId: string,
    options: InitializeOptions,
  ): Promise<void> {
    const forwarded = withHome(options);
    await this.#fanOut.each(
      this.#fanOut.entries,
      "initializeForInspection",
      (e) =>
        providerHook(e.provider, "initializeForInspection").call(
          e.provider,
          sessionId,
          {
            ...forwarded,
          },
        ),
    );
  }

  /**
   * See `MemoryManager.flushPending()`.
   *
   * @param timeoutMs How long to wait at most; without limit when omitted.
   * @returns `true` when drained, `false` on timeout.
   */
  async flushPending(timeoutMs?: number): Promise<boolean> {
    const started = performance.now();
    const queue = this.#queue;
    if (queue !== undefined && !(await queue.flush(timeoutMs))) return false;
    if (this.#shuttingDown) return true;
    const left = timeoutMs === undefined
      ? undefined
      : Math.max(0, timeoutMs - (performance.now() - started));
    const report = await this.#drainProviders(left);
    return report.undrained.length === 0;
  }

  /**
   * Calls `drain(ms)` on every provider that defines it, in parallel, each
   * bounded by `timeoutMs` (a drain that throws, hangs or answers garbage
   * counts as not drained).
   */
  async #drainProviders(
    timeoutMs: number | undefined,
  ): Promise<{ undrained: string[]; notDurable: number }> {
    const undrained: string[] = [];
    let notDurable = 0;
    await Promise.all(this.#fanOut.entries.map(async (entry) => {
      const provider = entry.provider;
      if (typeof provider.drain !== "function") return;
      let result: unknown;
      try {
        const pending = Promise.resolve(provider.drain(timeoutMs));
        result = timeoutMs === undefined
          ? await pending
          : await raceTimeout(pending, timeoutMs);
      } catch (error) {
        this.#fanOut.failHook(entry, "drain", error);
      }
      const report = isRecord(result) ? result : {};
      if (report.drained !== true) undrained.push(entry.name);
      if (
        typeof report.pending === "number" &&
        Number.isInteger(report.pending) &&
        report.pending > 0
      ) notDurable += report.pending;
    }));
    return { undrained, notDurable };
  }

  /** The outcome of the last shutdown drain (a copy). */
  get shutdownDrainState(): ShutdownDrainState {
    return { ...this.#drainState };
  }

  /**
   * See `MemoryManager.shutdownAll()`.
   *
   * @returns When every provider was shut down.
   */
  shutdownAll(): Promise<void> {
    this.#shutdown ??= this.#shutdownOnce();
    return this.#shutdown;
  }

  /**
   * One budget for the whole shutdown: the queue gets all of it, each
   * provider's `drain(ms)` what the queue left, each `shutdown()` what is
   * left after that (still called when nothing is, but not waited for).
   */
  async #shutdownOnce(): Promise<void> {
    this.#shuttingDown = true;
    const deadline = performance.now() + this.#drainTimeoutMs;
    const left = (): number => Math.max(0, deadline - performance.now());
    const queue = this.#queue;
    let state: ShutdownDrainState = {
      status: "draining",
      abandonedWrites: 0,
      abandonedPrefetches: 0,
      activeTasks: queue?.size ?? 0,
      notDurable: 0,
      undrainedProviders: [],
    };
    this.#drainState = state;
    if (queue !== undefined) {
      const result = await queue.close(this.#drainTimeoutMs);
      state = {
        ...state,
        status: result.drained ? "drained" : "timed_out",
        abandonedWrites: result.abandonedWrites,
        abandonedPrefetches: result.abandonedPrefetches,
        activeTasks: result.activeTasks,
      };
      if (!result.drained) {
        log(
          "warn",
          `Memory shutdown drain timed out after ${
            (this.#drainTimeoutMs / 1000).toFixed(2)
          }s; abandoning ${result.abandonedWrites} queued memory write(s) and ${result.abandonedPrefetches} queued prefetch(es); ${result.activeTasks} active task(s) remain detached`,
        );
      }
    } else {
      state = { ...state, status: "drained" };
    }
    const providers = await this.#drainProviders(left());
    if (providers.undrained.length > 0) {
      state = {
        ...state,
        status: "timed_out",
        notDurable: providers.notDurable,
        undrainedProviders: providers.undrained,
      };
      log(
        "warn",
        `Memory shutdown: ${
          providers.undrained.map((n) => `'${n}'`).join(", ")
        } did not report every accepted write durable within ${
          (this.#drainTimeoutMs / 1000).toFixed(2)
        }s${
          providers.notDurable > 0
            ? ` (${providers.notDurable} item(s) not durable)`
            : ""
        }`,
      );
    }
    this.#drainState = state;
    const reversed = [...this.#fanOut.entries].reverse();
    await this.#fanOut.each(reversed, "shutdown", async (e) => {
      const done = providerHook(e.provider, "shutdown").call(e.provider);
      if (isThenable(done) && !(await settledBefore(done, left()))) {
        throw new Error(
          `it did not finish within the ${this.#drainTimeoutMs} ms shutdown budget; raise shutdownDrainTimeoutMs to wait longer`,
        );
      }
    });
  }
}

/**
 * Resolves `true` when `pending` settles within `ms`; rejections propagate.
 * With `ms` 0 a provider that settles at once (in promise reactions) still
 * counts as settled.
 */
function settledBefore(
  pending: PromiseLike<unknown>,
  ms: number,
): Promise<boolean> {
  return new Promise<boolean>((resolve, reject) => {
    const timer = setTimeout(() => resolve(false), ms);
    Promise.resolve(pending).then(
      () => {
        clearTimeout(timer);
        resolve(true);
      },
      (error: unknown) => {
        clearTimeout(timer);
        reject(error);
      },
    );
  });
}

/** The options with the profile home filled in when the host left it out. */
function withHome(options: InitializeOptions): InitializeOptions {
  return options.hermesHome === undefined
    ? { ...options, hermesHome: getHermesHome() }
    : { ...options };
}
