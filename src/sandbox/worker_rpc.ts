// The host side of a provider's sandbox: requests with timeouts, one-way casts,
// a drain barrier, and a heartbeat that notices a busy loop.

import { errorText } from "../_util/error_text.ts";
import { type ProviderChannel, workerChannel } from "./transport.ts";
import {
  type AnswerMessage,
  type CastRequest,
  checkWorkerMessage,
  ProviderCallTimeoutError,
  type ReplyRequest,
  reviveError,
  serializeError,
  type WorkerMessage,
} from "./worker_protocol.ts";

/**
 * The sandbox worker of a provider is gone (shut down, crashed or stuck).
 *
 * @category Errors callers catch
 */
export class ProviderWorkerStoppedError extends Error {
  /** The provider's name. */
  readonly provider: string;

  /**
   * Creates the error.
   *
   * @param reason Why the worker stopped.
   */
  constructor(
    provider: string,
    reason: string,
    options: { cause?: unknown } = {},
  ) {
    super(`Memory provider '${provider}' is not running: ${reason}`, {
      cause: options.cause,
    });
    this.name = "ProviderWorkerStoppedError";
    this.provider = provider;
  }
}

/** Options of {@linkcode WorkerRpc}. */
interface WorkerRpcOptions {
  provider: string;
  /**
   * The busy-loop limit, in milliseconds of CPU time (default `5000`): a
   * process sandbox is ended when any of its threads stays busy this long
   * without a pause (`watchdog_process.ts`); a worker sandbox (or a process where no
   * watchdog runs) when a ping goes unanswered while the host process used
   * this much CPU (a worker) or this much wall time passed (a process).
   */
  unresponsiveAfterMs?: number;
  /** How often the host pings a sandbox no watchdog watches (default `500`). */
  heartbeatMs?: number;
  /** Receives the worker's unsolicited events (log lines, skills, callbacks). */
  onEvent?: (message: WorkerMessage) => void;
  /** Called once when the worker stops other than by {@linkcode WorkerRpc.terminate}. */
  onStopped?: (reason: string) => void;
}

/** Options of {@linkcode WorkerRpc.request}. */
interface RequestOptions {
  /** Reject after this many milliseconds (`Infinity`: never). */
  timeoutMs: number;
  label: string;
  /** Stretch the timeout while the machine is loaded (its load average) (default `false`). */
  adaptive?: boolean;
}

interface Pending {
  resolve(value: unknown): void;
  reject(error: unknown): void;
  /** `performance.now()` after which the call times out (may be Infinity). */
  deadline: number;
  timeoutMs: number;
  label: string;
  /** Whether the deadline stretches under load, and how often it did. */
  adaptive: boolean;
  startedAt: number;
}

/**
 * The share of the machine a runnable thread gets, from the 1-minute load
 * average when the host may read it without a prompt (else 1): an adaptive
 * deadline counts wall time times this. Passive: nothing spins to measure.
 */
function loadShare(): number {
  try {
    const sys = { name: "sys", kind: "loadavg" } as const;
    if (Deno.permissions.querySync(sys).state !== "granted") return 1;
    const cores = navigator.hardwareConcurrency || 1;
    return Math.min(1, Math.max(0.05, cores / (Deno.loadavg()[0] ?? 1)));
  } catch {
    return 1;
  }
}

/** `node:process`, loaded for a worker sandbox's pings only: importing it costs a host's start about 17 ms. */
let nodeProcess: { cpuUsage(): { user: number; system: number } } | undefined;

/** The CPU time of this process in milliseconds (a worker sandbox's thread included); `Infinity` until `node:process` is loaded. */
function processCpuMs(): number {
  const usage = nodeProcess?.cpuUsage();
  return usage === undefined ? Infinity : (usage.user + usage.system) / 1000;
}

/** The host side of a sandbox worker's protocol. */
export class WorkerRpc {
  #channel: ProviderChannel;
  #what: string;
  #provider: string;
  #pending = new Map<number, Pending>();
  #nextId = 1;
  #stopped: string | undefined;
  #readyWaiters: Array<(error?: Error) => void> = [];
  #isReady = false;
  #heartbeat: ReturnType<typeof setInterval> | undefined;
  /** When the unanswered ping was sent: wall time, and this process's CPU time for a worker. */
  #pingSentAt: { wall: number; cpu: number } | undefined;
  /** Whether the host's watchdog watches the sandbox process (then no pings). */
  #watched: boolean;
  #deadlineTimer: ReturnType<typeof setTimeout> | undefined;
  #armedFor = Infinity;
  #unresponsiveAfterMs: number;
  #heartbeatMs: number;
  #onEvent: (message: WorkerMessage) => void;
  #onStopped: (reason: string) => void;

  /** Wires the protocol onto a freshly started sandbox. */
  constructor(carrier: Worker | ProviderChannel, options: WorkerRpcOptions) {
    this.#channel = carrier instanceof Worker
      ? workerChannel(carrier)
      : carrier;
    this.#what = `sandbox ${this.#channel.kind}`;
    this.#provider = options.provider;
    this.#unresponsiveAfterMs = options.unresponsiveAfterMs ?? 5000;
    this.#heartbeatMs = options.heartbeatMs ?? 500;
    this.#onEvent = options.onEvent ?? (() => {});
    this.#onStopped = options.onStopped ?? (() => {});
    this.#channel.listen({
      message: (data) => this.#receive(data),
      violation: (what) => this.#violation(what),
      ended: (reason) => this.#stop(reason, true),
      idle: () => this.#pending.size === 0,
    });
    this.#watched = this.#channel.watch?.(
      this.#unresponsiveAfterMs,
      (reason) => this.#stop(reason, true),
    ) ?? false;
  }

  /** Why the worker stopped, or `undefined` while it runs. */
  get stopped(): string | undefined {
    return this.#stopped;
  }

  /** The sandbox process's id (`undefined` for a worker). */
  get pid(): number | undefined {
    return this.#channel.pid;
  }

  /** Settles once the sandbox process has exited (a worker: at once). */
  get exited(): Promise<unknown> {
    return this.#channel.exited ?? Promise.resolve();
  }

  /** Whether a request is waiting for its reply. */
  get busy(): boolean {
    return this.#pending.size > 0;
  }

  /**
   * Waits for the worker's bootstrap to start listening.
   *
   * @throws {ProviderWorkerStoppedError} When it fails or times out.
   */
  ready(timeoutMs: number): Promise<void> {
    if (this.#isReady) return Promise.resolve();
    if (this.#stopped !== undefined) {
      return Promise.reject(
        new ProviderWorkerStoppedError(this.#provider, this.#stopped),
      );
    }
    return new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.#stop(
          `its ${this.#what} did not start within ${timeoutMs} ms`,
          true,
        );
      }, timeoutMs);
      this.#readyWaiters.push((error?: Error) => {
        clearTimeout(timer);
        if (error) reject(error);
        else resolve();
      });
    });
  }

  /**
   * Sends a request and waits for its reply (the timeout covers waiting for
   * the casts posted before it).
   *
   * @throws {ProviderCallTimeoutError} When the timeout expires.
   * @throws {ProviderWorkerStoppedError} When the worker is gone.
   * @throws {Error} The remote error, as an `Error` with the remote name.
   */
  request(request: ReplyRequest, options: RequestOptions): Promise<unknown> {
    if (this.#stopped !== undefined) {
      return Promise.reject(
        new ProviderWorkerStoppedError(this.#provider, this.#stopped),
      );
    }
    const id = this.#nextId++;
    try {
      this.#channel.send({ ...request, id });
    } catch (error) {
      return Promise.reject(this.#cloneError(options.label, error));
    }
    const deadline = performance.now() + options.timeoutMs;
    const { promise, resolve, reject } = Promise.withResolvers<unknown>();
    this.#pending.set(id, {
      resolve,
      reject,
      deadline,
      timeoutMs: options.timeoutMs,
      label: options.label,
      adaptive: options.adaptive ?? false,
      startedAt: performance.now(),
    });
    if (deadline < this.#armedFor) this.#armDeadline(deadline);
    return promise;
  }

  /**
   * Posts a one-way call, run after every message posted before it; a
   * failure arrives later as a `castFailed` event.
   *
   * @throws {ProviderWorkerStoppedError} When the worker is gone.
   * @throws {TypeError} When the arguments cannot be cloned.
   */
  cast(request: CastRequest): void {
    if (this.#stopped !== undefined) {
      throw new ProviderWorkerStoppedError(this.#provider, this.#stopped);
    }
    try {
      this.#channel.send(request);
    } catch (error) {
      throw this.#cloneError(request.method, error);
    }
  }

  /** Answers a prompt the sandboxed `cli.ts` asked (one-way). */
  answer(message: AnswerMessage): void {
    if (this.#stopped !== undefined) return;
    try {
      this.#channel.send(message);
    } catch (error) {
      this.#channel.send(
        {
          t: "answer",
          ask: message.ask,
          ok: false,
          error: serializeError(this.#cloneError("prompt", error)),
        } satisfies AnswerMessage,
      );
    }
  }

  #cloneError(label: string, error: unknown): TypeError {
    return new TypeError(
      `Cannot pass the arguments of ${label}() to memory provider '${this.#provider}': ${
        errorText(error)
      }`,
      { cause: error },
    );
  }

  /** One unreferenced timer per worker for the earliest deadline, left armed when calls finish first (cheap). */
  #armDeadline(deadline: number): void {
    if (deadline === Infinity) return;
    if (this.#deadlineTimer !== undefined) clearTimeout(this.#deadlineTimer);
    this.#armedFor = deadline;
    const timer = setTimeout(
      this.#sweepDeadlines,
      Math.max(0, deadline - performance.now()),
    );
    Deno.unrefTimer(timer);
    this.#deadlineTimer = timer;
  }

  #sweepDeadlines = (): void => {
    this.#deadlineTimer = undefined;
    this.#armedFor = Infinity;
    const now = performance.now();
    let next = Infinity;
    for (const [id, pending] of this.#pending) {
      if (pending.deadline <= now && pending.adaptive) {
        // Count only the CPU time the machine could give it.
        const fair = (now - pending.startedAt) * loadShare();
        if (fair < pending.timeoutMs) {
          pending.deadline = now + (pending.timeoutMs - fair);
        }
      }
      if (pending.deadline <= now) {
        this.#pending.delete(id);
        pending.reject(
          new ProviderCallTimeoutError(
            this.#provider,
            pending.label,
            pending.timeoutMs,
          ),
        );
      } else if (pending.deadline < next) {
        next = pending.deadline;
      }
    }
    if (next !== Infinity) this.#armDeadline(next);
  };

  /** Terminates the worker and rejects every pending call. */
  terminate(reason: string): void {
    this.#stop(reason, false);
  }

  /** Stops the worker for a message outside the protocol (one warning). */
  #violation(what: string): void {
    this.#stop(
      `its ${this.#what} sent ${what}, which the sandbox protocol does not allow, and was stopped`,
      true,
    );
  }

  #receive(data: unknown): void {
    if (this.#stopped !== undefined) return;
    const checked = checkWorkerMessage(data, this.#nextId);
    if (!checked.ok) {
      this.#violation(checked.problem);
      return;
    }
    const message = checked.message;
    this.#pingSentAt = undefined;
    switch (message.t) {
      case "ready": {
        this.#isReady = true;
        // Pings only where no watchdog watches (a worker; a process off
        // Linux), while the sandbox lives: one unreferenced interval.
        if (this.#channel.kind === "worker" && nodeProcess === undefined) {
          import("node:process").then((m) => nodeProcess = m.default);
        }
        if (!this.#watched && this.#heartbeat === undefined) {
          this.#heartbeat = setInterval(
            () => this.#checkAlive(),
            this.#heartbeatMs,
          );
          Deno.unrefTimer(this.#heartbeat);
        }
        for (const waiter of this.#readyWaiters.splice(0)) waiter();
        return;
      }
      case "pong":
        return;
      case "result": {
        const pending = this.#pending.get(message.id);
        if (pending === undefined) return;
        this.#pending.delete(message.id);
        if (message.ok) pending.resolve(message.value);
        else pending.reject(reviveError(message.error));
        return;
      }
      default:
        try {
          this.#onEvent(message);
        } catch {
          // An event handler must never break the protocol.
        }
    }
  }

  #checkAlive(): void {
    // Before its bootstrap listens, a sandbox's start (its modules' load,
    // which uses this process's CPU for a worker) is for the load's timeout.
    if (this.#stopped !== undefined || !this.#isReady) return;
    if (this.#pingSentAt !== undefined) {
      // A worker's spin shows in this process's CPU time; a loaded machine
      // gives it less than wall time, several busy threads more.
      const sent = this.#pingSentAt;
      if (sent.cpu === Infinity) sent.cpu = processCpuMs(); // Loaded since.
      const waited = Math.min(
        performance.now() - sent.wall,
        this.#channel.kind === "worker" ? processCpuMs() - sent.cpu : Infinity,
      );
      if (waited >= this.#unresponsiveAfterMs - 1) {
        this.#stop(
          this.#channel.kind === "process"
            ? `its sandbox process did not answer for ${this.#unresponsiveAfterMs} ms (a busy loop?) and was killed`
            : `its sandbox worker stopped responding while this process used ${this.#unresponsiveAfterMs} ms of CPU time (a busy loop?) and was terminated; Deno 2.9 cannot interrupt JavaScript stuck in a loop, so that thread may keep a CPU busy until hermes exits`,
          true,
        );
      }
      return;
    }
    this.#pingSentAt = { wall: performance.now(), cpu: processCpuMs() };
    try {
      this.#channel.send({ t: "ping", id: 0 });
    } catch {
      // The worker is gone; the next check notices.
    }
  }

  #stop(reason: string, unexpected: boolean): void {
    if (this.#stopped !== undefined) return;
    this.#stopped = reason;
    clearInterval(this.#heartbeat);
    clearTimeout(this.#deadlineTimer);
    this.#channel.close();
    const error = new ProviderWorkerStoppedError(this.#provider, reason);
    for (const pending of this.#pending.values()) pending.reject(error);
    this.#pending.clear();
    for (const waiter of this.#readyWaiters.splice(0)) waiter(error);
    if (unexpected) {
      try {
        this.#onStopped(reason);
      } catch {
        // Never let a handler break shutdown.
      }
    }
  }
}
