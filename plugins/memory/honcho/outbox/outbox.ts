/**
 * The durable outbox of Honcho message writes: a JSONL log per workspace (`_log.ts`), group
 * commits with one `fdatasync` (`_commit.ts`), ordered at-most-once delivery under a lease
 * (`_delivery.ts`). Here: staging with back-pressure and background delivery per
 * `writeFrequency`. A failure never drops messages; auth or a denied permission schedules no retry.
 * @module
 */

import {
  atomicWriteText,
  contextBound,
  type DrainResult,
  getHermesHome,
  log,
  spawnContextTask,
} from "../../../../src/provider/mod.ts";
import { join, resolve } from "../../../../src/provider/_bundled.ts";
import type { HonchoClient } from "../client/client.ts";
import { abortableSleep, type SleepLike } from "../client/_transport.ts";
import { type JsonObject, MAX_MESSAGE_CHARS } from "../client/wire.ts";
import type { WriteFrequency } from "../config/_lookup.ts";
import { HONCHO_TIMINGS, type RetryTiming } from "../config/timings_table.ts";
import { isHonchoError } from "../client/errors.ts";
import {
  type AppendRecord,
  GroupCommitter,
  type OutboxAppendResult,
} from "./_commit.ts";
import {
  noDelivery,
  type OutboxDeliverOptions,
  type OutboxDeliverResult,
  OutboxDelivery,
  type OutboxDeliveryOptions,
  SETTLE_LOOKUP_INTERVAL_MS,
} from "./_delivery.ts";
import {
  OUTBOX_ID_METADATA_KEY,
  OutboxLog,
  type OutboxRecord,
  readRejectedFile,
  type RejectedRecord,
} from "./_log.ts";
import { backoffDelayMs, isRetryableHonchoError } from "../client/_backoff.ts";
import { waitFor, waitWhile } from "../_runtime.ts";
import { deadlineSignal, errorText, sha256Hex } from "../_util.ts";

export { OUTBOX_ID_METADATA_KEY };

/** A message to queue (content at most 25 000 characters: chunk first). */
export interface OutboxMessageInput {
  session: string;
  peer: string;
  content: string;
  /** `hermes_outbox_id` is added. */
  metadata?: JsonObject;
  /** ISO. @default {now} */
  createdAt?: string;
  /** A stable id (an imported turn): queued at most once, and looked up on Honcho before its first send. @default {a random UUID} */
  id?: string;
  /** Look the id up before the first send. @default {true when `id` is given} */
  checkFirst?: boolean;
}

export interface OutboxStats {
  pending: number;
  bytes: number;
  /** Queued messages whose delivery was attempted but not acknowledged. */
  attempted: number;
  /** Of those, messages an uncertain attempt may still land for. */
  waiting: number;
  /** When the last of those attempts can no longer land (epoch ms), if any. */
  settlesAt?: number;
  /** Messages looked up on Honcho before their first send (stable ids). */
  verifying: number;
}

/** How this process delivers in the background (the provider's outbox). */
export interface BackgroundDelivery {
  client: HonchoClient;
  /** When turns are delivered. @default {"async"} */
  writeFrequency?: WriteFrequency;
  /** Session set-up before each delivery (so Honcho never creates it with default settings). */
  ensureReady?: (signal: AbortSignal) => Promise<void>;
  /** Told the result of each background round (notices). */
  onResult?: (result: OutboxDeliverResult) => void;
}

export interface HonchoOutboxOptions {
  /** The workspace (one outbox file per workspace). */
  workspace: string;
  /** The profile home, captured at construction. @default {getHermesHome()} */
  hermesHome?: string;
  /** The most queued messages. @default {10000} */
  maxPendingMessages?: number;
  /** The most bytes of queued records. @default {52428800} (50 MiB) */
  maxPendingBytes?: number;
  /** Consecutive transient failures one `deliver()` tolerates. @default {HONCHO_TIMINGS.delivery.retries} */
  maxRetries?: number;
  /**
   * Base of the exponential backoff within a round and before the next background round, in ms.
   * @default {HONCHO_TIMINGS.delivery.baseMs}
   */
  retryBaseDelayMs?: number;
  /** Ceiling of one backoff delay (within and between rounds), in ms. @default {HONCHO_TIMINGS.delivery.maxMs} */
  retryMaxDelayMs?: number;
  /** Ceiling of an honoured `Retry-After`, in ms. @default {HONCHO_TIMINGS.delivery.retryAfterCapMs} */
  retryAfterCapMs?: number;
  /**
   * How long after its client gave up a request may still be committed by Honcho, in ms: an
   * uncertain attempt is looked up only after its start + request timeout + this. @default {30000}
   */
  lateCommitGraceMs?: number;
  /** Compaction threshold for a file with acknowledged lines, in bytes. @default {1048576} */
  compactAfterBytes?: number;
  /** Staged messages waiting for the disk above which `stage()` pushes back. @default {5000} */
  maxStagedMessages?: number;
  /** The longest one `stage()` waits for room, in ms. @default {5000} */
  stageWaitMs?: number;
  /** Sets a queued session up (its peers' observation settings) before messages go to it. */
  prepareSession?: OutboxDeliveryOptions["prepareSession"];
  /** Background delivery of staged turns; none without it. */
  delivery?: BackgroundDelivery;
  /** For a report: reading leaves the files as they are (a torn last line stays). */
  readOnly?: boolean;
  /** The sleep between retries. @default {abortableSleep} */
  sleep?: SleepLike;
  /** Random numbers in [0, 1) for jitter. @default {Math.random} */
  random?: () => number;
  /** The clock, epoch ms. @default {Date.now} */
  now?: () => number;
}

/** How a `writeFrequency` value behaves. */
export type WriteMode =
  | { kind: "async" }
  | { kind: "turn" }
  | { kind: "every"; n: number }
  | { kind: "session" };

/** `"async"`, `"turn"`, a positive integer N (also as a string); anything else is `"session"` (deferred until the session ends). */
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

/** `<workspace>.jsonl`, characters outside `[A-Za-z0-9_-]` replaced (plus a short hash when any were). */
export function outboxFileName(workspace: string): string {
  const safe = workspace.replace(/[^A-Za-z0-9_-]/g, "_");
  if (safe === workspace && safe !== "") return `${safe}.jsonl`;
  const hash = sha256Hex(workspace).slice(0, 8);
  return `${safe || "workspace"}-${hash}.jsonl`;
}

/** A UUID-shaped id derived from its parts, for a message stored at most once across runs (an import). */
export function stableOutboxId(parts: readonly (string | number)[]): string {
  const hex = sha256Hex(JSON.stringify(parts));
  const variant = ((Number.parseInt(hex[16]!, 16) & 0x3) | 0x8).toString(16);
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-5${
    hex.slice(13, 16)
  }-${variant}${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}

export class HonchoOutbox {
  readonly workspace: string;
  readonly path: string;
  readonly rejectedPath: string;
  readonly mode: WriteMode;
  #file: OutboxLog;
  #commit: GroupCommitter;
  #delivery: OutboxDelivery;
  #sleep: SleepLike;
  #now: () => number;
  #random: () => number;
  #background: BackgroundDelivery | undefined;
  /** Turns made durable by this instance (for `writeFrequency` N). */
  #turns = 0;
  /** Messages this instance put into the file (the rest is an earlier process's backlog). */
  #added = 0;
  #running: Promise<void> | undefined;
  #again = false;
  #retryTimer: ReturnType<typeof setTimeout> | undefined;
  #failures = 0;
  #retry: RetryTiming;
  #controller = new AbortController();
  #closed = false;

  /** @throws {RangeError} When `workspace` is empty or a bound is not positive. */
  constructor(options: HonchoOutboxOptions) {
    if (!options.workspace) {
      throw new RangeError(
        "Cannot create a Honcho outbox: 'workspace' is empty",
      );
    }
    this.workspace = options.workspace;
    const t = HONCHO_TIMINGS;
    const home = resolve(options.hermesHome ?? getHermesHome());
    const dir = join(home, "honcho", "outbox");
    const name = outboxFileName(options.workspace);
    this.#now = options.now ?? Date.now;
    this.#random = options.random ?? Math.random;
    this.#background = options.delivery;
    this.mode = writeModeOf(options.delivery?.writeFrequency);
    this.#file = new OutboxLog(dir, name, options.workspace, this.#now);
    this.#file.readOnly = options.readOnly === true;
    this.path = this.#file.path;
    this.rejectedPath = join(dir, name.replace(/\.jsonl$/, ".rejected.jsonl"));
    const bounds = {
      maxPendingMessages: options.maxPendingMessages ?? 10_000,
      maxPendingBytes: options.maxPendingBytes ?? 50 * 1024 * 1024,
    };
    for (const [name, value] of Object.entries(bounds)) {
      if (!(value > 0)) {
        throw new RangeError(
          `Cannot create a Honcho outbox: '${name}' must be positive: current value is ${value}`,
        );
      }
    }
    this.#commit = new GroupCommitter(this.#file, {
      ...bounds,
      maxStaged: Math.max(1, options.maxStagedMessages ?? 5_000),
      stageWaitMs: Math.max(0, options.stageWaitMs ?? t.stageWaitMs),
      random: this.#random,
      onCommitted: (turns, added) => {
        this.#added += added;
        if (turns > 0) this.#route(turns);
      },
    });
    this.#sleep = options.sleep ?? abortableSleep;
    const retry = this.#retry = {
      baseMs: options.retryBaseDelayMs ?? t.delivery.baseMs,
      maxMs: options.retryMaxDelayMs ?? t.delivery.maxMs,
      retryAfterCapMs: options.retryAfterCapMs ?? t.delivery.retryAfterCapMs,
    };
    this.#delivery = new OutboxDelivery({
      workspace: options.workspace,
      file: this.#file,
      commit: this.#commit,
      rejectedPath: this.rejectedPath,
      leasePath: `${this.path}.deliver.lock`,
      pending: async () => (await this.stats()).pending,
      prepareSession: options.prepareSession,
      policy: {
        maxRetries: Math.max(0, options.maxRetries ?? t.deliveryRetries),
        ...retry,
        lateCommitGraceMs: Math.max(
          0,
          options.lateCommitGraceMs ?? t.lateCommitGraceMs,
        ),
        compactAfterBytes: options.compactAfterBytes ?? 1024 * 1024,
        sleep: this.#sleep,
        random: this.#random,
        now: this.#now,
      },
    });
  }

  get notDurable(): number {
    return this.#commit.notDurable;
  }

  /**
   * Queues messages durably (resolves once synced); an `id` already queued is accepted without a
   * second copy, past the size bound messages are refused. RangeError for an invalid message.
   */
  async append(
    messages: readonly OutboxMessageInput[],
  ): Promise<OutboxAppendResult> {
    const records = this.#records(messages);
    if (records.length === 0) return { accepted: [], rejected: 0 };
    return await this.#commit.append(records);
  }

  /**
   * Stages one turn's messages (in order, retried while the disk refuses them), then delivers per
   * `writeFrequency`; a promise only when over `maxStagedMessages` wait for the disk.
   */
  stage(
    messages:
      | readonly OutboxMessageInput[]
      | Promise<readonly OutboxMessageInput[]>,
    count?: number,
  ): Promise<void> | undefined {
    if (this.#closed) return undefined;
    return this.#commit.stage(
      "then" in messages
        ? messages.then((list) => this.#records(list))
        : this.#records(messages),
      count,
    );
  }

  /** Appends outside the turn count (a checkpoint), kept like a turn; resolves to how many the bound refused. */
  async appendHeld(messages: readonly OutboxMessageInput[]): Promise<number> {
    if (messages.length === 0) return 0;
    if (this.#closed) throw new Error("the Honcho outbox is closed");
    return (await this.#commit.append(this.#records(messages), true)).rejected;
  }

  /** Waits (at most `timeoutMs`) until everything staged is in the file; counts what is not. */
  async drain(timeoutMs?: number): Promise<DrainResult> {
    await waitWhile(
      () => this.#commit.notDurable === 0 ? undefined : this.#commit.running,
      timeoutMs ?? Infinity,
    );
    // Counts what is not on disk, not what is undelivered: once in the file, delivery is
    // the outbox's own promise (a host may forget a handed-over write on this answer).
    const pending = this.#commit.notDurable;
    return { drained: pending === 0, pending };
  }

  /** The queued messages, oldest first (also what other processes queued). */
  async pending(): Promise<OutboxRecord[]> {
    return await this.#file.locked(async () => {
      await this.#file.catchUp();
      return [...this.#file.entries.values()].map((entry) =>
        structuredClone(entry.record)
      );
    });
  }

  async stats(): Promise<OutboxStats> {
    return await this.#file.locked(async () => {
      await this.#file.catchUp();
      const now = this.#now();
      let attempted = 0;
      let waiting = 0;
      let verifying = 0;
      let settlesAt: number | undefined;
      for (const entry of this.#file.entries.values()) {
        if (entry.attempted) attempted++;
        if (entry.verify) verifying++;
        if (entry.attempted && entry.landBy > now) {
          waiting++;
          settlesAt = Math.max(settlesAt ?? 0, entry.landBy);
        }
      }
      const stats: OutboxStats = {
        pending: this.#file.entries.size,
        bytes: this.#file.bytes,
        attempted,
        waiting,
        verifying,
      };
      if (settlesAt !== undefined) stats.settlesAt = settlesAt;
      return stats;
    });
  }

  /** The messages Honcho refused permanently, oldest first. */
  async rejected(): Promise<RejectedRecord[]> {
    return await this.#file.locked(() =>
      readRejectedFile(this.rejectedPath, this.workspace)
    );
  }

  /** Queues refused messages again (all when `ids` is omitted); returns how many. */
  async retryRejected(ids?: readonly string[]): Promise<number> {
    const wanted = ids === undefined ? undefined : new Set(ids);
    const picked = (await readRejectedFile(this.rejectedPath, this.workspace))
      .filter((r) => !wanted || wanted.has(r.id));
    if (picked.length === 0) return 0;
    // Queued first, removed from the rejected file after: a kill between the
    // two leaves a message in both files (its id dedupes the next retry and
    // is looked up before sending), never in neither. Keep the id, so a retry
    // of the retry cannot duplicate it.
    const { accepted } = await this.append(picked.map((r) => ({
      id: r.id,
      session: r.session,
      peer: r.peer,
      content: r.content,
      metadata: r.metadata,
      createdAt: r.createdAt,
    })));
    // Only what the outbox took leaves the file (a full outbox refuses some).
    const queued = new Set(accepted);
    if (queued.size === 0) return 0;
    await this.#file.locked(async () => {
      const all = await readRejectedFile(this.rejectedPath, this.workspace);
      await atomicWriteText(
        this.rejectedPath,
        all.filter((r) => !queued.has(r.id))
          .map((r) => `${JSON.stringify(r)}\n`).join(""),
        { mode: 0o600 },
      );
    });
    return queued.size;
  }

  /**
   * Delivers in order (≤100 per batch) with the outbox's workspace until empty, aborted, past the
   * deadline or failing; `busy: true` at once when another delivery holds the lease.
   */
  deliver(
    client: HonchoClient,
    options: OutboxDeliverOptions = {},
  ): Promise<OutboxDeliverResult> {
    return this.#delivery.deliver(client, options);
  }

  /**
   * Delivers everything within `timeoutMs`, retrying transient failures
   * and waiting for another delivery's lease; `true` when empty afterwards.
   */
  async flush(client: HonchoClient, timeoutMs: number): Promise<boolean> {
    const deadline = this.#now() + Math.max(0, timeoutMs);
    const { signal, reason, clear } = deadlineSignal(
      timeoutMs,
      "Honcho outbox flush deadline passed",
    );
    try {
      for (;;) {
        const result = await this.deliver(client, {
          signal,
          maxRetries: Infinity,
          deadline,
        });
        if (result.pending === 0) return true;
        if (!result.busy || this.#now() >= deadline) return false;
        await this.#sleep(Math.min(100, deadline - this.#now()), signal);
      }
    } catch (error) {
      if (error === reason) return (await this.stats()).pending === 0;
      throw error;
    } finally {
      clear();
    }
  }

  /**
   * The background delivery's flush (session end, shutdown, checkpoint): staged turns made durable,
   * then everything delivered within `timeoutMs`; `true` when the outbox is empty afterwards.
   */
  async flushAll(timeoutMs: number): Promise<boolean> {
    const deadline = Date.now() + Math.max(0, timeoutMs);
    const remaining = (): number => Math.max(0, deadline - Date.now());
    // Staged turns first: a flush that skipped them would report an empty outbox while
    // turns still wait for the disk.
    if (!(await this.drain(remaining())).drained) return false;
    if (this.#running && !await waitFor(this.#running, remaining())) {
      return false;
    }
    this.#clearRetry();
    const background = this.#background;
    try {
      if ((await this.stats()).pending === 0) return true;
      if (!background) return false;
      if (background.ensureReady) {
        const limit = deadlineSignal(
          remaining(),
          "Honcho deadline passed",
          this.#controller.signal,
        );
        try {
          await background.ensureReady(limit.signal);
        } finally {
          limit.clear();
        }
      }
      const empty = await this.flush(background.client, remaining());
      if (empty) this.#failures = 0;
      return empty;
    } catch (error) {
      log("debug", `Honcho flush failed: ${errorText(error)}`);
      return false;
    }
  }

  /** Starts a background round now unless one runs or a retry waits. */
  kick(): void {
    if (this.#closed || !this.#background || this.#retryTimer !== undefined) {
      return;
    }
    if (this.#running) {
      this.#again = true;
      return;
    }
    this.#running = spawnContextTask(() => this.#deliverLoop(), {
      name: "honcho-deliver",
    }).done.catch(() => {}).finally(() => {
      this.#running = undefined;
    });
  }

  /** Once Honcho is ready: `async` and `turn` deliver everything queued; deferred modes only what earlier processes left. */
  resume(): void {
    if (this.mode.kind === "async" || this.mode.kind === "turn") this.kick();
    else void this.deliverBacklog();
  }

  /**
   * Kicks a round when the file holds more than this instance put there (an earlier process's
   * backlog), so a deferred `writeFrequency` is not bypassed for this process's own turns.
   */
  async deliverBacklog(): Promise<void> {
    try {
      if ((await this.stats()).pending > this.#added) this.kick();
    } catch (error) {
      log("debug", `Honcho backlog check failed: ${errorText(error)}`);
    }
  }

  /** Waits until every staged turn is durable and no round runs (a scheduled retry is not waited for). */
  async idle(): Promise<void> {
    for (;;) {
      await this.#commit.running?.catch(() => {});
      await this.#running;
      if (!this.#commit.running && !this.#running) return;
    }
  }

  /**
   * Stops: no new turns, no retry; waits (at most `timeoutMs`) for staged turns to reach the file,
   * then aborts the running round. Queued messages stay in the file.
   */
  async close(timeoutMs: number): Promise<void> {
    const deadline = Date.now() + Math.max(0, timeoutMs);
    this.#closed = true;
    this.#commit.close();
    this.#clearRetry();
    await this.drain(Math.max(0, deadline - Date.now()));
    // Held turns are given up only once the budget for writing them is spent.
    this.#commit.stop();
    // Aborting a round mid-request is safe: its attempt line is on disk, so the next start
    // waits or looks up before sending again.
    this.#controller.abort(new DOMException("Outbox closed", "AbortError"));
    await waitFor(
      Promise.all([this.#commit.running, this.#running]),
      Math.max(0, deadline - Date.now()),
    );
  }

  #records(messages: readonly OutboxMessageInput[]): AppendRecord[] {
    messages.forEach((message, index) => {
      if (!message.session || !message.peer) {
        throw new RangeError(
          `Cannot queue Honcho message ${index}: 'session' and 'peer' must be non-empty`,
        );
      }
      if (
        typeof message.content !== "string" ||
        message.content.length > MAX_MESSAGE_CHARS
      ) {
        throw new RangeError(
          `Cannot queue Honcho message ${index}: content must be a string of at most ${MAX_MESSAGE_CHARS} characters, chunk it first`,
        );
      }
    });
    const now = new Date(this.#now()).toISOString();
    return messages.map((message) => {
      const id = message.id ?? crypto.randomUUID();
      return {
        record: {
          id,
          workspace: this.workspace,
          session: message.session,
          peer: message.peer,
          content: message.content,
          metadata: { ...message.metadata, [OUTBOX_ID_METADATA_KEY]: id },
          createdAt: message.createdAt ?? now,
        },
        // A caller's id may be on Honcho already (an import run again, a turn handed over
        // again): looked up first. A fresh UUID cannot be, so it skips the round-trip.
        verify: message.checkFirst ?? message.id !== undefined,
      };
    });
  }

  #route(turns: number): void {
    const before = this.#turns;
    this.#turns += turns;
    const mode = this.mode;
    if (mode.kind === "async" || mode.kind === "turn") this.kick();
    else if (
      mode.kind === "every" &&
      Math.floor(this.#turns / mode.n) > Math.floor(before / mode.n)
    ) this.kick();
  }

  async #deliverLoop(): Promise<void> {
    const background = this.#background!;
    do {
      this.#again = false;
      if (this.#closed) return;
      const signal = this.#controller.signal;
      let result: OutboxDeliverResult;
      try {
        // Nothing queued: no session set-up, no request.
        if ((await this.stats()).pending === 0) return;
        await background.ensureReady?.(signal);
        result = await this.deliver(background.client, {
          signal,
          // One pass per round: failures and uncertain attempts are retried by the timer below,
          // so a background round never holds the lease while it sleeps.
          maxRetries: 0,
          maxWaitMs: 0,
        });
      } catch (error) {
        if (signal.aborted) return;
        // Session set-up failed: systemic unless a retry may help.
        result = {
          ...noDelivery(-1),
          error,
          systemic: !isRetryableHonchoError(error),
        };
      }
      try {
        background.onResult?.(result);
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
        // Auth or a denied permission cannot heal by waiting: no timer; the next turn or flush
        // tries again.
        if (!isHonchoError(result.error, "auth", "permission")) {
          this.#scheduleRetry(undefined, result.error);
        }
        return;
      }
      if (result.busy) {
        // Another delivery holds the lease; look again in case it stops first.
        this.#scheduleRetry(this.#retry.baseMs);
        return;
      }
      this.#failures = 0;
      if (result.settlesAt !== undefined) {
        // Look again soon (Honcho may show the unconfirmed messages), and at
        // the latest once the uncertain attempt can no longer land.
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
    // A Retry-After (429 or 503 on a write or the session set-up) sets the wait.
    const delay = fixedDelay ?? Math.max(
      Math.min(this.#retry.baseMs, 10),
      backoffDelayMs(this.#failures - 1, error, {
        ...this.#retry,
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
    clearTimeout(this.#retryTimer);
    this.#retryTimer = undefined;
  }
}
