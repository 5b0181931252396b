/**
 * A durable outbox for Honcho message writes.
 *
 * **Durable first.** Every message goes first to an append-only JSONL log
 * under `$HERMES_HOME/honcho/outbox/<workspace>.jsonl`. Appends are group
 * committed: whatever was handed in while the previous write was on its way
 * to the disk is written together, with one `fdatasync` for the group, so
 * appends keep up with any caller and never wait behind a delivery (no HTTP
 * request is ever made under the file lock).
 *
 * **Delivered once.** Messages are delivered in order (batches of at most
 * 100 per session). Each carries its outbox id in
 * `metadata.hermes_outbox_id`. Before a batch is sent an `attempt` line is
 * made durable with the time after which that request can no longer be
 * committed by Honcho: its start, plus the request timeout (or what was left
 * of a delivery deadline), plus `lateCommitGraceMs` — a server may still
 * commit a request its client gave up on, so the grace bounds how long
 * Honcho takes to finish a request it already received (default 30 s).
 * After any uncertain outcome (a timeout, a dropped connection, a 502/503/504
 * from a proxy, a process that died mid-request) the message is not sent
 * again before that time has passed; then Honcho is asked which of the ids
 * it holds (`messages/list` filtered on `metadata.hermes_outbox_id`), and
 * only the others are sent. A failure the server answered (4xx, 500, 429)
 * or a connection that never opened settles the attempt at once. Requests
 * that create messages are never re-sent by the transport either (see the
 * client). One process at a time delivers an outbox: the delivery lease is
 * an exclusive lock on `<file>.deliver.lock`, released by the OS when its
 * holder dies; the next holder reads the dead one's `attempt` lines.
 *
 * **Refusals.** Only Honcho's refusal of one message itself (a 422 that
 * points into the message, or a 413) is permanent: that record is copied to
 * `<workspace>.rejected.jsonl` with the reason, a warning names the file,
 * and `hermes honcho outbox retry` can queue it again. Everything else that
 * retrying cannot fix (401/403, 404, any other 400/409/422, a 400 on the
 * dedup read, a denied network permission) is systemic: delivery stops,
 * every message stays queued, and the caller gets the error to report once.
 *
 * **Bounds.** Nothing is lost while Honcho is down; the outbox has a size
 * bound (`maxPendingMessages`, `maxPendingBytes`) and, when it is reached,
 * refuses new messages with a warning naming the file, never silently.
 *
 * Log lines: a `header` (format version, generation), `message` records,
 * `attempt` marks (`ids`, `at`, `until`), `settle` (an attempt that ended
 * without being able to land later: Honcho answered, or it never left),
 * `ack` (Honcho holds them) and `drop` (refused; copied to the rejected
 * file). A torn last line (a crash
 * mid-write) is ignored with a warning and cut off. The file is compacted
 * when everything is acknowledged, or when acknowledged lines dominate.
 * Processes sharing a profile share its outbox safely: every change
 * happens under a cross-process file lock after replaying what other
 * processes appended. Two profiles (different `HERMES_HOME`) never share an
 * outbox.
 *
 * {@linkcode HonchoOutbox} is the facade; `_outbox_log.ts` holds the file
 * format and the state replayed from it, `_outbox_commit.ts` the group
 * commit, `_outbox_delivery.ts` the delivery with its attempts and lease.
 *
 * @module
 */

import { createHash } from "node:crypto";
import { join, resolve } from "node:path";
import { atomicWriteText, getHermesHome } from "../../../src/provider/mod.ts";
import {
  abortableSleep,
  type HonchoClient,
  type JsonObject,
  MAX_MESSAGE_CHARS,
  type SleepLike,
} from "./client.ts";
import { GroupCommitter, type OutboxAppendResult } from "./_outbox_commit.ts";
import {
  type OutboxDeliverOptions,
  type OutboxDeliverResult,
  OutboxDelivery,
} from "./_outbox_delivery.ts";
import {
  OUTBOX_ID_METADATA_KEY,
  OutboxLog,
  type OutboxRecord,
  readRejectedFile,
  type RejectedRecord,
} from "./_outbox_log.ts";

export { OUTBOX_ID_METADATA_KEY };
export type {
  OutboxAppendResult,
  OutboxDeliverOptions,
  OutboxDeliverResult,
  OutboxRecord,
  RejectedRecord,
};

/** How long Honcho may take to finish a request its client gave up on, by default (ms). */
export const DEFAULT_LATE_COMMIT_GRACE_MS = 30_000;

/** A message to queue. */
export interface OutboxMessageInput {
  /** The Honcho session id. */
  session: string;
  /** The author peer id. */
  peer: string;
  /** The text (at most 25 000 characters; chunk longer text first). */
  content: string;
  /** Extra metadata; `hermes_outbox_id` is added. */
  metadata?: JsonObject;
  /** When it was said (ISO). @default {now} */
  createdAt?: string;
  /**
   * A stable outbox id (for example derived from an imported turn). A
   * message whose id is already queued is not queued again, and one that
   * Honcho may already hold (an earlier run) is looked up by id before it
   * is first sent. @default {a random UUID}
   */
  id?: string;
  /**
   * Whether Honcho may already hold this id, so it is looked up before the
   * first send. @default {true when `id` is given}
   */
  checkFirst?: boolean;
}

/** Sizes of the outbox. */
export interface OutboxStats {
  /** Queued messages. */
  pending: number;
  /** Bytes of queued message records. */
  bytes: number;
  /** Queued messages whose delivery was attempted but not acknowledged. */
  attempted: number;
  /** Of those, messages an uncertain attempt may still land for. */
  waiting: number;
  /** When the last of those attempts can no longer land (epoch ms), if any. */
  settlesAt?: number;
  /** Messages that are checked against Honcho before they are first sent (stable ids). */
  verifying: number;
}

/** Options of {@linkcode HonchoOutbox}. */
export interface HonchoOutboxOptions {
  /** The workspace (one outbox file per workspace). */
  workspace: string;
  /** The profile home, captured at construction. @default {getHermesHome()} */
  hermesHome?: string;
  /** The most queued messages. @default {10000} */
  maxPendingMessages?: number;
  /** The most bytes of queued records. @default {52428800} (50 MiB) */
  maxPendingBytes?: number;
  /** Consecutive transient failures one `deliver()` tolerates. @default {5} */
  maxRetries?: number;
  /** Base of the exponential backoff, in ms. @default {1000} */
  retryBaseDelayMs?: number;
  /** Ceiling of one backoff delay, in ms. @default {60000} */
  retryMaxDelayMs?: number;
  /** Ceiling of an honoured `Retry-After`, in ms. @default {60000} */
  retryAfterCapMs?: number;
  /**
   * How long after its client gave up a request may still be committed by
   * Honcho, in ms: an uncertain attempt is resolved only after its start +
   * request timeout + this. @default {30000}
   */
  lateCommitGraceMs?: number;
  /** Compaction threshold for a file with acknowledged lines, in bytes. @default {1048576} */
  compactAfterBytes?: number;
  /** The sleep between retries. @default {abortableSleep} */
  sleep?: SleepLike;
  /** Random numbers in [0, 1) for jitter. @default {Math.random} */
  random?: () => number;
  /** The clock, epoch ms. @default {Date.now} */
  now?: () => number;
}

/**
 * The file name an outbox uses for a workspace: the id with characters
 * outside `[A-Za-z0-9_-]` replaced (plus a short hash when any were).
 *
 * @param workspace The workspace id.
 * @returns The file name (`<name>.jsonl`).
 *
 * @example Using outboxFileName
 * ```ts
 * import { outboxFileName } from "./outbox.ts";
 * import assert from "node:assert/strict";
 * assert.equal(outboxFileName("hermes"), "hermes.jsonl");
 * ```
 */
export function outboxFileName(workspace: string): string {
  const safe = workspace.replace(/[^A-Za-z0-9_-]/g, "_");
  if (safe === workspace && safe !== "") return `${safe}.jsonl`;
  const hash = createHash("sha256").update(workspace).digest("hex").slice(0, 8);
  return `${safe || "workspace"}-${hash}.jsonl`;
}

/**
 * A stable outbox id (UUID-shaped) derived from its parts, for messages
 * that must be stored at most once across runs (an imported turn).
 *
 * @param parts What identifies the message (workspace, session, turn key, index…).
 * @returns A UUID-shaped id.
 *
 * @example The same parts give the same id
 * ```ts
 * import { stableOutboxId } from "./outbox.ts";
 * import assert from "node:assert/strict";
 * assert.equal(stableOutboxId(["ws", "s1", "turn-1", 0]), stableOutboxId(["ws", "s1", "turn-1", 0]));
 * assert.match(stableOutboxId(["x"]), /^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
 * ```
 */
export function stableOutboxId(parts: readonly (string | number)[]): string {
  const hex = createHash("sha256").update(JSON.stringify(parts)).digest("hex");
  const variant = ((Number.parseInt(hex[16]!, 16) & 0x3) | 0x8).toString(16);
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-5${
    hex.slice(13, 16)
  }-${variant}${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}

/**
 * The durable outbox of one workspace in one profile.
 */
export class HonchoOutbox {
  /** The workspace. */
  readonly workspace: string;
  /** The JSONL log. */
  readonly path: string;
  /** Where permanently refused messages are kept. */
  readonly rejectedPath: string;
  #file: OutboxLog;
  #commit: GroupCommitter;
  #delivery: OutboxDelivery;
  #sleep: SleepLike;
  #now: () => number;
  #delivering: Promise<unknown> = Promise.resolve();

  /**
   * Creates the outbox (no I/O until the first call).
   *
   * @param options Workspace, home, bounds, retry policy and injected I/O.
   * @throws {RangeError} When `workspace` is empty or a bound is not positive.
   */
  constructor(options: HonchoOutboxOptions) {
    if (!options.workspace) {
      throw new RangeError(
        "Cannot create a Honcho outbox: 'workspace' is empty",
      );
    }
    this.workspace = options.workspace;
    const dir = join(
      resolve(options.hermesHome ?? getHermesHome()),
      "honcho",
      "outbox",
    );
    const name = outboxFileName(options.workspace);
    this.#now = options.now ?? Date.now;
    this.#file = new OutboxLog(dir, name, options.workspace, this.#now);
    this.path = this.#file.path;
    this.rejectedPath = join(
      dir,
      name.replace(/\.jsonl$/, ".rejected.jsonl"),
    );
    this.#commit = new GroupCommitter(this.#file, {
      maxPendingMessages: positive(
        options.maxPendingMessages ?? 10_000,
        "maxPendingMessages",
      ),
      maxPendingBytes: positive(
        options.maxPendingBytes ?? 50 * 1024 * 1024,
        "maxPendingBytes",
      ),
    });
    this.#sleep = options.sleep ?? abortableSleep;
    this.#delivery = new OutboxDelivery({
      workspace: options.workspace,
      file: this.#file,
      commit: this.#commit,
      rejectedPath: this.rejectedPath,
      leasePath: `${this.path}.deliver.lock`,
      pending: async () => (await this.stats()).pending,
      policy: {
        maxRetries: Math.max(0, options.maxRetries ?? 5),
        retryBaseDelayMs: options.retryBaseDelayMs ?? 1_000,
        retryMaxDelayMs: options.retryMaxDelayMs ?? 60_000,
        retryAfterCapMs: options.retryAfterCapMs ?? 60_000,
        lateCommitGraceMs: Math.max(
          0,
          options.lateCommitGraceMs ?? DEFAULT_LATE_COMMIT_GRACE_MS,
        ),
        compactAfterBytes: options.compactAfterBytes ?? 1024 * 1024,
        sleep: this.#sleep,
        random: options.random ?? Math.random,
        now: this.#now,
      },
    });
  }

  /**
   * Queues messages durably: resolves once they are in the file and synced
   * (group commit: concurrent calls share one write and one `fdatasync`).
   * A message whose `id` is already queued counts as accepted without a
   * second copy. When the size bound is reached, further messages are
   * refused: the result counts them and a warning naming the file is
   * logged (once until the outbox drains).
   *
   * @param messages The messages, in order.
   * @returns The accepted ids and the refused count.
   * @throws {RangeError} When a message has no session or peer, or its
   * content exceeds 25 000 characters (nothing is queued then).
   */
  async append(
    messages: readonly OutboxMessageInput[],
  ): Promise<OutboxAppendResult> {
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
    if (messages.length === 0) return { accepted: [], rejected: 0 };
    const now = new Date(this.#now()).toISOString();
    const records = messages.map((message) => {
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
        verify: message.checkFirst ?? message.id !== undefined,
      };
    });
    return await this.#commit.append(records);
  }

  /**
   * The queued messages, oldest first (includes what other processes of the
   * profile queued).
   *
   * @returns Copies of the records.
   */
  async pending(): Promise<OutboxRecord[]> {
    return await this.#file.locked(async () => {
      await this.#file.catchUp();
      return [...this.#file.entries.values()].map((entry) =>
        structuredClone(entry.record)
      );
    });
  }

  /**
   * Counts what is queued.
   *
   * @returns Pending messages, bytes, attempted-but-unacknowledged messages
   * and those an uncertain attempt may still land for.
   */
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

  /**
   * The messages Honcho refused permanently, oldest first.
   *
   * @returns The records with their reasons (`[]` when none).
   */
  async rejected(): Promise<RejectedRecord[]> {
    return await this.#file.locked(() =>
      readRejectedFile(this.rejectedPath, this.workspace)
    );
  }

  /**
   * Queues refused messages again (after the cause was fixed) and removes
   * them from the rejected file.
   *
   * @param ids The ids to retry; all when omitted.
   * @returns How many were queued again.
   */
  async retryRejected(ids?: readonly string[]): Promise<number> {
    const wanted = ids === undefined ? undefined : new Set(ids);
    const picked = await this.#file.locked(async () => {
      const all = await readRejectedFile(this.rejectedPath, this.workspace);
      const take = all.filter((r) => !wanted || wanted.has(r.id));
      if (take.length === 0) return [];
      const keep = all.filter((r) => wanted && !wanted.has(r.id));
      await atomicWriteText(
        this.rejectedPath,
        keep.map((r) => `${JSON.stringify(r)}\n`).join(""),
        { mode: 0o600 },
      );
      return take;
    });
    if (picked.length === 0) return 0;
    // A refused message was not stored, but a retry of the retry must not
    // duplicate it: keep the id and look it up first.
    await this.append(picked.map((r) => ({
      id: r.id,
      session: r.session,
      peer: r.peer,
      content: r.content,
      metadata: r.metadata,
      createdAt: r.createdAt,
    })));
    return picked.length;
  }

  /**
   * Delivers queued messages in order, in batches of at most 100 per
   * session, until the outbox is empty, the signal aborts, the deadline
   * comes, or delivery fails. Transient failures (429, 5xx, connection,
   * timeout) are retried with full-jitter backoff honouring `Retry-After`
   * up to `maxRetries` times in a row; a systemic failure stops at once
   * (messages kept, `systemic: true`); Honcho's refusal of one message
   * moves it to the rejected file with a warning. A message that may
   * already be stored is looked up by id — after the attempt that may have
   * stored it can no longer land — and never sent twice. When another
   * process holds the delivery lease, returns at once with `busy: true`.
   *
   * @param client A client for the server (its workspace is replaced by the outbox's).
   * @param options Signal, retry budget and deadline.
   * @returns Counts, and the error that stopped delivery early, if any.
   * @throws The signal's reason, unchanged, when it aborts.
   */
  deliver(
    client: HonchoClient,
    options: OutboxDeliverOptions = {},
  ): Promise<OutboxDeliverResult> {
    const run = this.#delivering.catch(() => {}).then(() =>
      this.#delivery.deliver(client, options)
    );
    this.#delivering = run;
    return run;
  }

  /**
   * Delivers everything within `timeoutMs`, retrying transient failures
   * until the deadline (waiting for another process's delivery when it
   * holds the lease).
   *
   * @param client A client for the server.
   * @param timeoutMs The deadline.
   * @returns `true` when the outbox is empty afterwards.
   */
  async flush(client: HonchoClient, timeoutMs: number): Promise<boolean> {
    const deadline = this.#now() + Math.max(0, timeoutMs);
    const controller = new AbortController();
    const reason = new DOMException(
      "Honcho outbox flush deadline passed",
      "TimeoutError",
    );
    const timer = setTimeout(
      () => controller.abort(reason),
      Math.max(0, timeoutMs),
    );
    try {
      for (;;) {
        const result = await this.deliver(client, {
          signal: controller.signal,
          maxRetries: Infinity,
          deadline,
        });
        if (result.pending === 0) return true;
        if (!result.busy || this.#now() >= deadline) return false;
        await this.#sleep(
          Math.min(100, deadline - this.#now()),
          controller.signal,
        );
      }
    } catch (error) {
      if (error === reason) return (await this.stats()).pending === 0;
      throw error;
    } finally {
      clearTimeout(timer);
    }
  }
}

function positive(value: number, name: string): number {
  if (!(value > 0)) {
    throw new RangeError(
      `Cannot create a Honcho outbox: '${name}' must be positive: current value is ${value}`,
    );
  }
  return value;
}
