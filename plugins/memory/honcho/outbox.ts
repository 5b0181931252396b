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
 * @module
 */

import { createHash } from "node:crypto";
import { join, resolve } from "node:path";
import {
  atomicWriteText,
  getHermesHome,
  log,
  withFileLock,
} from "@hermes/memory/provider";
import {
  abortableSleep,
  type HonchoClient,
  type JsonObject,
  MAX_MESSAGE_CHARS,
  MAX_MESSAGES_PER_BATCH,
  type MessageInput,
  type SleepLike,
} from "./client.ts";
import {
  ConnectionError,
  HonchoError,
  InvalidResponseError,
  PermissionDeniedError,
  ServerError,
  TimeoutError,
} from "./errors.ts";
import { backoffDelayMs, isRetryableHonchoError } from "./_backoff.ts";
import { errorText, isRecord } from "./_util.ts";

/** The metadata key that carries a message's outbox id. */
export const OUTBOX_ID_METADATA_KEY = "hermes_outbox_id";

/** How long Honcho may take to finish a request its client gave up on, by default (ms). */
export const DEFAULT_LATE_COMMIT_GRACE_MS = 30_000;

const FORMAT_VERSION = 1;
/** An attempt recorded before `until` existed: assume twice the default request timeout. */
const LEGACY_ATTEMPT_WINDOW_MS = 60_000;
/** A request is not started with less time than this before the deadline. */
const MIN_REQUEST_MS = 250;
/** Ids asked about per dedup request. */
const IDS_PER_QUERY = 40;

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

/** A queued message. */
export interface OutboxRecord {
  /** The outbox id (a UUID), also in `metadata.hermes_outbox_id`. */
  id: string;
  /** The workspace. */
  workspace: string;
  /** The session. */
  session: string;
  /** The author peer. */
  peer: string;
  /** The text. */
  content: string;
  /** Metadata including `hermes_outbox_id`. */
  metadata: JsonObject;
  /** When it was said (ISO). */
  createdAt: string;
}

/** A message Honcho refused, kept in the rejected file. */
export interface RejectedRecord extends OutboxRecord {
  /** Honcho's reason. */
  reason: string;
  /** The HTTP status of the refusal, when there was one. */
  status?: number;
  /** When it was moved aside (ISO). */
  rejectedAt: string;
}

/** What {@linkcode HonchoOutbox.append} did. */
export interface OutboxAppendResult {
  /** Ids of the messages now queued (including ones that already were), in input order. */
  accepted: string[];
  /** How many messages were refused because the outbox is full (a warning was logged). */
  rejected: number;
}

/** What {@linkcode HonchoOutbox.deliver} did. */
export interface OutboxDeliverResult {
  /** Messages Honcho acknowledged in this call. */
  delivered: number;
  /** Messages found already stored (sent before a crash, a timeout, an earlier import) and not re-sent. */
  duplicates: number;
  /** Messages Honcho refused permanently (moved to the rejected file, warned). */
  rejected: number;
  /** Messages still queued afterwards. */
  pending: number;
  /**
   * Queued messages an earlier uncertain attempt may still land for; they
   * are resolved once it no longer can (see {@linkcode OutboxStats.settlesAt}).
   */
  waiting?: number;
  /** When delivery stopped to wait: the time the first of those attempts settles (epoch ms). */
  settlesAt?: number;
  /** Another process holds the delivery lease: nothing was delivered here. */
  busy?: boolean;
  /** Why delivery stopped early (Honcho down after all retries, or a systemic refusal), if it did. */
  error?: unknown;
  /** `true` when `error` is one retrying cannot fix (auth, 404, a refused id, a denied permission). */
  systemic?: boolean;
}

/** Options of {@linkcode HonchoOutbox.deliver}. */
export interface OutboxDeliverOptions {
  /** Stops delivery; its reason is rethrown unchanged. */
  signal?: AbortSignal;
  /** Consecutive transient failures tolerated before returning. @default {HonchoOutboxOptions.maxRetries} */
  maxRetries?: number;
  /**
   * Epoch ms by which delivery ends: no request is started that could run
   * past it, and no wait for an uncertain attempt goes past it.
   */
  deadline?: number;
  /**
   * The longest delivery sleeps for an uncertain earlier attempt to settle
   * before it returns (with `settlesAt`), in ms. @default {Infinity}
   */
  maxWaitMs?: number;
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

interface Entry {
  record: OutboxRecord;
  bytes: number;
  /** A delivery was attempted. */
  attempted: boolean;
  /** Epoch ms after which no attempt made so far can land (0: none). */
  landBy: number;
  /** Look the id up on Honcho before the first send. */
  verify: boolean;
}

interface Batch {
  session: string;
  entries: Entry[];
  /** Ids to look up first (attempted or verify). */
  check: string[];
  /** Stop after the first message: it is being isolated. */
}

type Pick =
  | { kind: "batch"; batch: Batch }
  | { kind: "wait"; until: number; waiting: number }
  | { kind: "empty" };

type CommitJob =
  | {
    kind: "messages";
    records: { record: OutboxRecord; verify: boolean }[];
    resolve: (result: OutboxAppendResult) => void;
    reject: (error: unknown) => void;
  }
  | {
    kind: "lines";
    lines: string[];
    resolve: () => void;
    reject: (error: unknown) => void;
  };

/** Where delivery failed: looking up stored ids, or sending. */
class StageError extends Error {
  constructor(readonly stage: "check" | "send", readonly error: unknown) {
    super(errorText(error));
  }
}

const encoder = new TextEncoder();
const decoder = new TextDecoder();

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
 *
 * @example Queue, then deliver
 * ```ts ignore
 * import { HonchoClient } from "./client.ts";
 * import { HonchoOutbox } from "./outbox.ts";
 * const client = new HonchoClient({ workspaceId: "hermes", baseUrl: "http://localhost:8000" });
 * const outbox = new HonchoOutbox({ workspace: "hermes" });
 * await outbox.append([{ session: "s1", peer: "alice", content: "Hello" }]);
 * const result = await outbox.deliver(client);
 * console.log(result.delivered, result.pending);
 * ```
 */
export class HonchoOutbox {
  /** The workspace. */
  readonly workspace: string;
  /** The JSONL log. */
  readonly path: string;
  /** Where permanently refused messages are kept. */
  readonly rejectedPath: string;
  #dir: string;
  #lockPath: string;
  #deliverLockPath: string;
  #maxPendingMessages: number;
  #maxPendingBytes: number;
  #maxRetries: number;
  #retryBaseDelayMs: number;
  #retryMaxDelayMs: number;
  #retryAfterCapMs: number;
  #graceMs: number;
  #compactAfterBytes: number;
  #sleep: SleepLike;
  #random: () => number;
  #now: () => number;
  #entries = new Map<string, Entry>();
  #bytes = 0;
  #offset = 0;
  #fileSize = 0;
  #ino: number | null | undefined;
  #generation: string | undefined;
  #isolate = new Set<string>();
  #warnedFull = false;
  #jobs: CommitJob[] = [];
  #committer: Promise<void> | undefined;
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
    this.#dir = join(
      resolve(options.hermesHome ?? getHermesHome()),
      "honcho",
      "outbox",
    );
    const name = outboxFileName(options.workspace);
    this.path = join(this.#dir, name);
    this.rejectedPath = join(
      this.#dir,
      name.replace(/\.jsonl$/, ".rejected.jsonl"),
    );
    this.#lockPath = `${this.path}.lock`;
    this.#deliverLockPath = `${this.path}.deliver.lock`;
    this.#maxPendingMessages = positive(
      options.maxPendingMessages ?? 10_000,
      "maxPendingMessages",
    );
    this.#maxPendingBytes = positive(
      options.maxPendingBytes ?? 50 * 1024 * 1024,
      "maxPendingBytes",
    );
    this.#maxRetries = Math.max(0, options.maxRetries ?? 5);
    this.#retryBaseDelayMs = options.retryBaseDelayMs ?? 1_000;
    this.#retryMaxDelayMs = options.retryMaxDelayMs ?? 60_000;
    this.#retryAfterCapMs = options.retryAfterCapMs ?? 60_000;
    this.#graceMs = Math.max(
      0,
      options.lateCommitGraceMs ?? DEFAULT_LATE_COMMIT_GRACE_MS,
    );
    this.#compactAfterBytes = options.compactAfterBytes ?? 1024 * 1024;
    this.#sleep = options.sleep ?? abortableSleep;
    this.#random = options.random ?? Math.random;
    this.#now = options.now ?? Date.now;
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
    return await new Promise((resolve, reject) => {
      this.#enqueue({ kind: "messages", records, resolve, reject });
    });
  }

  /**
   * The queued messages, oldest first (includes what other processes of the
   * profile queued).
   *
   * @returns Copies of the records.
   */
  async pending(): Promise<OutboxRecord[]> {
    return await this.#locked(async () => {
      await this.#catchUp();
      return [...this.#entries.values()].map((entry) =>
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
    return await this.#locked(async () => {
      await this.#catchUp();
      const now = this.#now();
      let attempted = 0;
      let waiting = 0;
      let verifying = 0;
      let settlesAt: number | undefined;
      for (const entry of this.#entries.values()) {
        if (entry.attempted) attempted++;
        if (entry.verify) verifying++;
        if (entry.attempted && entry.landBy > now) {
          waiting++;
          settlesAt = Math.max(settlesAt ?? 0, entry.landBy);
        }
      }
      const stats: OutboxStats = {
        pending: this.#entries.size,
        bytes: this.#bytes,
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
    return await this.#locked(() => this.#readRejected());
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
    const picked = await this.#locked(async () => {
      const all = await this.#readRejected();
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
      this.#deliverWithLease(client, options)
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

  // -------------------------------------------------------------------------
  // Group commit
  // -------------------------------------------------------------------------

  #enqueue(job: CommitJob): void {
    this.#jobs.push(job);
    this.#startCommitter();
  }

  #startCommitter(): void {
    this.#committer ??= this.#commitLoop().finally(() => {
      this.#committer = undefined;
      // A job queued between the loop's last look and this reset.
      if (this.#jobs.length > 0) this.#startCommitter();
    });
  }

  async #commitLoop(): Promise<void> {
    while (this.#jobs.length > 0) {
      const jobs = this.#jobs.splice(0);
      const results: OutboxAppendResult[] = [];
      try {
        await this.#locked(async () => {
          await this.#catchUp();
          const lines: string[] = [];
          let count = this.#entries.size;
          let bytes = this.#bytes;
          let refused = 0;
          const queued = new Set<string>();
          for (const job of jobs) {
            if (job.kind === "lines") {
              lines.push(...job.lines);
              results.push({ accepted: [], rejected: 0 });
              continue;
            }
            const result: OutboxAppendResult = { accepted: [], rejected: 0 };
            for (const { record, verify } of job.records) {
              if (this.#entries.has(record.id) || queued.has(record.id)) {
                result.accepted.push(record.id);
                continue;
              }
              const line = JSON.stringify({
                type: "message",
                ...record,
                ...(verify ? { verify: true } : {}),
              });
              const size = encoder.encode(line).length + 1;
              if (
                count + 1 > this.#maxPendingMessages ||
                bytes + size > this.#maxPendingBytes
              ) {
                result.rejected++;
                continue;
              }
              count++;
              bytes += size;
              lines.push(line);
              queued.add(record.id);
              result.accepted.push(record.id);
            }
            refused += result.rejected;
            results.push(result);
          }
          if (lines.length > 0) await this.#appendLines(lines);
          if (refused > 0) this.#warnFull(refused);
        });
      } catch (error) {
        for (const job of jobs) job.reject(error);
        continue;
      }
      jobs.forEach((job, index) => {
        if (job.kind === "lines") job.resolve();
        else job.resolve(results[index]!);
      });
    }
  }

  /** Appends control lines durably (through the group commit). */
  #commitLines(lines: string[]): Promise<void> {
    return new Promise((resolve, reject) => {
      this.#enqueue({ kind: "lines", lines, resolve, reject });
    });
  }

  #warnFull(refused: number): void {
    if (!this.#warnedFull) {
      this.#warnedFull = true;
      log(
        "warn",
        `Honcho outbox ${this.path} is full (${this.#entries.size} messages, ${this.#bytes} bytes pending; limits ${this.#maxPendingMessages} messages, ${this.#maxPendingBytes} bytes): new messages are refused until Honcho accepts the backlog`,
      );
    } else {
      log(
        "debug",
        `Honcho outbox ${this.path} is still full: refused ${refused} message(s)`,
      );
    }
  }

  // -------------------------------------------------------------------------
  // Delivery
  // -------------------------------------------------------------------------

  async #deliverWithLease(
    client: HonchoClient,
    options: OutboxDeliverOptions,
  ): Promise<OutboxDeliverResult> {
    const signal = options.signal;
    if (signal?.aborted) throw signal.reason;
    await Deno.mkdir(this.#dir, { recursive: true, mode: 0o700 });
    const lease = await Deno.open(this.#deliverLockPath, {
      read: true,
      write: true,
      create: true,
      mode: 0o600,
    });
    try {
      if (!await lease.tryLock(true)) {
        const stats = await this.stats();
        return {
          delivered: 0,
          duplicates: 0,
          rejected: 0,
          pending: stats.pending,
          busy: true,
        };
      }
      try {
        return await this.#deliverLocked(
          client.withWorkspace(this.workspace),
          signal,
          options.maxRetries ?? this.#maxRetries,
          options.deadline,
          options.maxWaitMs ?? Infinity,
        );
      } finally {
        await lease.unlock().catch(() => {});
      }
    } finally {
      lease.close();
    }
  }

  async #deliverLocked(
    client: HonchoClient,
    signal: AbortSignal | undefined,
    maxRetries: number,
    deadline: number | undefined,
    maxWaitMs: number,
  ): Promise<OutboxDeliverResult> {
    const result: OutboxDeliverResult = {
      delivered: 0,
      duplicates: 0,
      rejected: 0,
      pending: 0,
    };
    let failures = 0;
    try {
      for (;;) {
        if (signal?.aborted) throw signal.reason;
        const pick = await this.#locked(async () => {
          await this.#catchUp();
          return this.#pickBatch(this.#now());
        });
        if (pick.kind === "empty") break;
        if (pick.kind === "wait") {
          // Every deliverable message waits for an uncertain attempt.
          if (
            (deadline !== undefined && pick.until > deadline) ||
            pick.until - this.#now() > maxWaitMs
          ) {
            result.waiting = pick.waiting;
            result.settlesAt = pick.until;
            break;
          }
          // A real wait (not the injected backoff sleep): time must pass.
          await abortableSleep(Math.max(1, pick.until - this.#now()), signal);
          continue;
        }
        const left = deadline === undefined ? Infinity : deadline - this.#now();
        if (left < MIN_REQUEST_MS) break;
        try {
          await this.#deliverBatch(client, pick.batch, result, signal, left);
          failures = 0;
        } catch (caught) {
          if (signal?.aborted) throw signal.reason;
          const { stage, error } = caught instanceof StageError
            ? caught
            : { stage: "send" as const, error: caught };
          if (isRetryableHonchoError(error)) {
            failures++;
            if (failures > maxRetries) {
              result.error = error;
              break;
            }
            log(
              "debug",
              `Honcho outbox delivery failed, retrying: ${errorText(error)}`,
            );
            const delay = backoffDelayMs(failures - 1, error, {
              baseMs: this.#retryBaseDelayMs,
              maxMs: this.#retryMaxDelayMs,
              retryAfterCapMs: this.#retryAfterCapMs,
              random: this.#random,
            });
            if (deadline !== undefined && this.#now() + delay >= deadline) {
              result.error = error;
              break;
            }
            await this.#sleep(delay, signal);
            continue;
          }
          const refused = stage === "send"
            ? refusedMessage(error, pick.batch.entries.length)
            : undefined;
          if (refused === undefined) {
            result.error = error;
            result.systemic = true;
            break;
          }
          if (refused === "isolate") {
            // Find the refused message: deliver this batch one by one.
            for (const entry of pick.batch.entries) {
              this.#isolate.add(entry.record.id);
            }
            continue;
          }
          await this.#reject(pick.batch.entries[refused]!.record, error);
          result.rejected++;
        }
      }
    } finally {
      await this.#locked(async () => {
        await this.#catchUp();
        await this.#maybeCompact();
        result.pending = this.#entries.size;
      }).catch(() => {});
    }
    return result;
  }

  async #deliverBatch(
    client: HonchoClient,
    batch: Batch,
    result: OutboxDeliverResult,
    signal: AbortSignal | undefined,
    left: number,
  ): Promise<void> {
    let toSend = batch.entries;
    if (batch.check.length > 0) {
      let stored: Set<string>;
      try {
        stored = await this.#findStored(
          client,
          batch.session,
          batch.check,
          signal,
        );
      } catch (error) {
        throw new StageError("check", error);
      }
      if (stored.size > 0) {
        await this.#finish("ack", [...stored]);
        result.duplicates += stored.size;
        toSend = toSend.filter((entry) => !stored.has(entry.record.id));
      }
      // The others are certainly not stored: no longer in doubt.
      for (const entry of toSend) entry.verify = false;
    }
    if (toSend.length === 0) return;
    const timeoutMs = Math.max(1, Math.min(client.timeoutMs, left));
    const ids = toSend.map((entry) => entry.record.id);
    const before = toSend.map((entry) => ({
      entry,
      attempted: entry.attempted,
      landBy: entry.landBy,
    }));
    const at = this.#now();
    await this.#commitLines([JSON.stringify({
      type: "attempt",
      ids,
      at: new Date(at).toISOString(),
      until: at + timeoutMs + this.#graceMs,
    })]);
    const controller = new AbortController();
    const onAbort = (): void => controller.abort(signal!.reason);
    signal?.addEventListener("abort", onAbort, { once: true });
    const timer = Number.isFinite(left)
      ? setTimeout(
        () =>
          controller.abort(
            new DOMException("Honcho delivery deadline passed", "TimeoutError"),
          ),
        timeoutMs,
      )
      : undefined;
    try {
      await client.createMessages(
        batch.session,
        toSend.map((entry) => toMessageInput(entry.record)),
        { signal: controller.signal },
      );
    } catch (caught) {
      // Our own deadline ended the request: a timeout like any other.
      const error = controller.signal.aborted && !signal?.aborted
        ? new TimeoutError(
          `Honcho POST messages was cut off at the delivery deadline after ${timeoutMs} ms`,
          { cause: caught },
        )
        : caught;
      const outcome = sendOutcome(error);
      if (outcome !== "doubt") {
        // This attempt cannot land later: only earlier attempts still
        // count (and, when it was surely not stored, it needs no lookup).
        // Recorded, so another process (or a restart) need not wait either.
        const groups = new Map<
          string,
          { ids: string[]; landBy: number; attempted: boolean }
        >();
        for (const { entry, attempted, landBy } of before) {
          const now = outcome === "unsent" ? attempted : true;
          entry.attempted = now;
          entry.landBy = landBy;
          const key = `${landBy}:${now}`;
          const group = groups.get(key) ?? { ids: [], landBy, attempted: now };
          group.ids.push(entry.record.id);
          groups.set(key, group);
        }
        await this.#commitLines(
          [...groups.values()].map((group) =>
            JSON.stringify({ type: "settle", ...group })
          ),
        ).catch(() => {});
      }
      throw new StageError("send", error);
    } finally {
      clearTimeout(timer);
      signal?.removeEventListener("abort", onAbort);
    }
    await this.#finish("ack", ids);
    result.delivered += ids.length;
  }

  #pickBatch(now: number): Pick {
    const blocked = new Set<string>();
    let until = Infinity;
    let waiting = 0;
    let session: string | undefined;
    const entries: Entry[] = [];
    const check: string[] = [];
    for (const entry of this.#entries.values()) {
      const record = entry.record;
      if (blocked.has(record.session)) continue;
      if (session !== undefined && record.session !== session) continue;
      if (entry.attempted && entry.landBy > now) {
        // An earlier attempt may still land: this session waits (order).
        blocked.add(record.session);
        until = Math.min(until, entry.landBy);
        waiting++;
        if (session !== undefined) break;
        continue;
      }
      session = record.session;
      const isolated = this.#isolate.has(record.id);
      if (isolated && entries.length > 0) break;
      entries.push(entry);
      if (entry.attempted || entry.verify) check.push(record.id);
      if (isolated || entries.length >= MAX_MESSAGES_PER_BATCH) break;
    }
    if (session !== undefined) {
      return { kind: "batch", batch: { session, entries, check } };
    }
    return Number.isFinite(until)
      ? { kind: "wait", until, waiting }
      : { kind: "empty" };
  }

  async #findStored(
    client: HonchoClient,
    session: string,
    ids: readonly string[],
    signal: AbortSignal | undefined,
  ): Promise<Set<string>> {
    const wanted = new Set(ids);
    const found = new Set<string>();
    for (let i = 0; i < ids.length; i += IDS_PER_QUERY) {
      const group = ids.slice(i, i + IDS_PER_QUERY);
      const page = await client.listMessages(session, {
        filters: {
          OR: group.map((id) => ({
            metadata: { [OUTBOX_ID_METADATA_KEY]: id },
          })),
        },
        size: 100,
        signal,
      });
      for await (const message of page) {
        const id = message.metadata[OUTBOX_ID_METADATA_KEY];
        if (typeof id === "string" && wanted.has(id)) found.add(id);
      }
    }
    return found;
  }

  async #finish(
    type: "ack" | "drop",
    ids: readonly string[],
    reason?: string,
  ): Promise<void> {
    const line: JsonObject = {
      type,
      ids,
      at: new Date(this.#now()).toISOString(),
    };
    if (reason !== undefined) line.reason = reason;
    await this.#commitLines([JSON.stringify(line)]);
    for (const id of ids) this.#isolate.delete(id);
    if (
      this.#warnedFull && this.#entries.size < this.#maxPendingMessages * 0.9
    ) this.#warnedFull = false;
  }

  async #reject(record: OutboxRecord, error: unknown): Promise<void> {
    const reason = errorText(error);
    await Deno.mkdir(this.#dir, { recursive: true, mode: 0o700 });
    const rejected: RejectedRecord = {
      ...record,
      reason,
      rejectedAt: new Date(this.#now()).toISOString(),
    };
    if (error instanceof HonchoError && error.status !== undefined) {
      rejected.status = error.status;
    }
    await this.#locked(async () => {
      const file = await Deno.open(this.rejectedPath, {
        append: true,
        create: true,
        mode: 0o600,
      });
      try {
        await writeAll(file, encoder.encode(`${JSON.stringify(rejected)}\n`));
        await file.syncData();
      } finally {
        file.close();
      }
    });
    await this.#finish("drop", [record.id], reason);
    log(
      "warn",
      `Honcho refused outbox message ${record.id} for session '${record.session}' (${reason}): it was moved to ${this.rejectedPath}; 'hermes honcho outbox retry' queues it again`,
    );
  }

  async #readRejected(): Promise<RejectedRecord[]> {
    let text: string;
    try {
      text = await Deno.readTextFile(this.rejectedPath);
    } catch (error) {
      if (error instanceof Deno.errors.NotFound) return [];
      throw error;
    }
    const out: RejectedRecord[] = [];
    for (const line of text.split("\n")) {
      if (line.trim() === "") continue;
      try {
        const value: unknown = JSON.parse(line);
        if (!isRecord(value)) continue;
        const record = toRecord(value, this.workspace);
        if (!record) continue;
        const item: RejectedRecord = {
          ...record,
          reason: typeof value.reason === "string" ? value.reason : "",
          rejectedAt: typeof value.rejectedAt === "string"
            ? value.rejectedAt
            : "",
        };
        if (typeof value.status === "number") item.status = value.status;
        out.push(item);
      } catch {
        // A torn last line: ignored.
      }
    }
    return out;
  }

  // -------------------------------------------------------------------------
  // The log file (all under the state lock)
  // -------------------------------------------------------------------------

  #locked<T>(fn: () => Promise<T>): Promise<T> {
    return withFileLock(this.#lockPath, fn);
  }

  #reset(): void {
    this.#entries.clear();
    this.#bytes = 0;
    this.#offset = 0;
    this.#fileSize = 0;
    this.#ino = undefined;
    this.#generation = undefined;
  }

  /** Replays what was appended since the last read (by any process). */
  async #catchUp(): Promise<void> {
    let info: Deno.FileInfo;
    try {
      info = await Deno.stat(this.path);
    } catch (error) {
      if (error instanceof Deno.errors.NotFound) {
        this.#reset();
        return;
      }
      throw error;
    }
    const ino = info.ino ?? null;
    if (this.#ino !== undefined) {
      const replaced = ino !== null
        ? ino !== this.#ino
        : (await this.#readGeneration()) !== this.#generation;
      if (replaced || info.size < this.#offset) this.#reset();
    }
    if (info.size > this.#offset) {
      const bytes = await readFrom(this.path, this.#offset);
      const end = bytes.lastIndexOf(10) + 1;
      const text = decoder.decode(bytes.subarray(0, end));
      for (const line of text.split("\n")) {
        if (line.trim() !== "") {
          this.#apply(line, encoder.encode(line).length + 1);
        }
      }
      this.#offset += end;
      if (end < bytes.length) {
        log(
          "warn",
          `Ignoring a torn last line in Honcho outbox ${this.path} (${
            bytes.length - end
          } bytes, a crash during a write): it is removed`,
        );
        await Deno.truncate(this.path, this.#offset);
      }
    }
    this.#ino = ino;
    this.#fileSize = this.#offset;
  }

  #apply(line: string, size: number): void {
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch {
      log("warn", `Ignoring an unreadable line in Honcho outbox ${this.path}`);
      return;
    }
    if (!isRecord(value)) return;
    const item = value;
    switch (item.type) {
      case "header":
        this.#generation = typeof item.generation === "string"
          ? item.generation
          : undefined;
        return;
      case "message": {
        const record = toRecord(item, this.workspace);
        if (!record) {
          log(
            "warn",
            `Ignoring a malformed message record in Honcho outbox ${this.path}`,
          );
          return;
        }
        if (!this.#entries.has(record.id)) {
          this.#entries.set(record.id, {
            record,
            bytes: size,
            attempted: false,
            landBy: 0,
            verify: item.verify === true,
          });
          this.#bytes += size;
        }
        return;
      }
      case "attempt": {
        const at = typeof item.at === "string" ? Date.parse(item.at) : NaN;
        const until = typeof item.until === "number"
          ? item.until
          : (Number.isFinite(at) ? at : this.#now()) +
            LEGACY_ATTEMPT_WINDOW_MS;
        for (const id of stringIds(item.ids)) {
          const entry = this.#entries.get(id);
          if (!entry) continue;
          entry.attempted = true;
          entry.landBy = Math.max(entry.landBy, until);
        }
        return;
      }
      case "settle": {
        // An attempt that ended without landing later: earlier ones count.
        const landBy = typeof item.landBy === "number" ? item.landBy : 0;
        for (const id of stringIds(item.ids)) {
          const entry = this.#entries.get(id);
          if (!entry) continue;
          entry.landBy = landBy;
          if (item.attempted === false) entry.attempted = false;
        }
        return;
      }
      case "ack":
      case "drop":
        for (const id of stringIds(item.ids)) {
          const entry = this.#entries.get(id);
          if (entry) {
            this.#entries.delete(id);
            this.#bytes -= entry.bytes;
          }
        }
        return;
    }
  }

  async #appendLines(lines: readonly string[]): Promise<void> {
    await Deno.mkdir(this.#dir, { recursive: true, mode: 0o700 });
    const all = this.#offset === 0
      ? [
        JSON.stringify({
          type: "header",
          version: FORMAT_VERSION,
          generation: crypto.randomUUID(),
        }),
        ...lines,
      ]
      : [...lines];
    const data = encoder.encode(all.map((line) => `${line}\n`).join(""));
    const file = await Deno.open(this.path, {
      append: true,
      create: true,
      mode: 0o600,
    });
    try {
      await writeAll(file, data);
      await file.syncData();
    } finally {
      file.close();
    }
    // Replay our own lines so state and offset follow the file exactly.
    await this.#catchUp();
  }

  async #readGeneration(): Promise<string | undefined> {
    try {
      const head = decoder.decode(await readFrom(this.path, 0, 512));
      const first = JSON.parse(head.slice(0, head.indexOf("\n")));
      return typeof first?.generation === "string"
        ? first.generation
        : undefined;
    } catch {
      return undefined;
    }
  }

  async #maybeCompact(): Promise<void> {
    if (this.#fileSize === 0) return;
    const allDone = this.#entries.size === 0;
    const bloated = this.#fileSize > this.#compactAfterBytes &&
      this.#bytes * 2 < this.#fileSize;
    if (!allDone && !bloated) return;
    const lines = [
      JSON.stringify({
        type: "header",
        version: FORMAT_VERSION,
        generation: crypto.randomUUID(),
      }),
    ];
    const attempts = new Map<number, string[]>();
    for (const entry of this.#entries.values()) {
      lines.push(JSON.stringify({
        type: "message",
        ...entry.record,
        ...(entry.verify ? { verify: true } : {}),
      }));
      if (entry.attempted) {
        const ids = attempts.get(entry.landBy) ?? [];
        ids.push(entry.record.id);
        attempts.set(entry.landBy, ids);
      }
    }
    for (const [until, ids] of attempts) {
      lines.push(JSON.stringify({
        type: "attempt",
        ids,
        at: new Date(this.#now()).toISOString(),
        until,
      }));
    }
    await atomicWriteText(
      this.path,
      lines.map((line) => `${line}\n`).join(""),
      { mode: 0o600 },
    );
    this.#reset();
    await this.#catchUp();
  }
}

/**
 * What a failed send says about the request:
 *
 * - `"unsent"`: it was not stored — Honcho refused it before storing (a
 *   4xx, a 429), or it never left this process (no connection, a denied
 *   permission, client-side validation);
 * - `"over"`: Honcho finished with it, stored or not (a 500, 502 or 503, an
 *   answer that is not the JSON promised): look it up now, no wait;
 * - `"doubt"`: Honcho may still be working on it (a timeout, a dropped
 *   connection, a 504 from a proxy, an abort): it is not looked up before
 *   its attempt's `until`.
 */
function sendOutcome(error: unknown): "unsent" | "over" | "doubt" {
  if (error instanceof PermissionDeniedError || error instanceof RangeError) {
    return "unsent";
  }
  if (error instanceof ConnectionError) {
    return error.requestSent === false ? "unsent" : "doubt";
  }
  if (error instanceof InvalidResponseError) return "over";
  if (error instanceof ServerError) {
    return error.status === 504 ? "doubt" : "over";
  }
  return error instanceof HonchoError && error.status !== undefined
    ? "unsent"
    : "doubt";
}

/**
 * Whether Honcho refused one message of the batch itself: a 413, or a 422
 * whose issues all point into `body.messages`. Returns the index of the
 * refused message when Honcho named it (or the batch holds one message),
 * `"isolate"` when the batch must be sent one by one to find it, and
 * `undefined` when the refusal is systemic (anything else).
 */
function refusedMessage(
  error: unknown,
  batchSize: number,
): number | "isolate" | undefined {
  if (error instanceof RangeError) return batchSize === 1 ? 0 : "isolate";
  if (!(error instanceof HonchoError)) return undefined;
  let index: number | undefined;
  if (error.status === 422) {
    const detail = isRecord(error.body) ? error.body.detail : undefined;
    if (!Array.isArray(detail) || detail.length === 0) return undefined;
    const indexes = new Set<number>();
    for (const issue of detail) {
      const loc = isRecord(issue) && Array.isArray(issue.loc) ? issue.loc : [];
      if (loc[0] !== "body" || loc[1] !== "messages") return undefined;
      if (typeof loc[2] === "number") indexes.add(loc[2]);
    }
    if (indexes.size === 1) index = [...indexes][0];
  } else if (error.status !== 413) {
    return undefined;
  }
  if (batchSize === 1) return 0;
  return index !== undefined && index < batchSize ? index : "isolate";
}

function toMessageInput(record: OutboxRecord): MessageInput {
  return {
    peerId: record.peer,
    content: record.content,
    metadata: record.metadata,
    createdAt: record.createdAt,
  };
}

function toRecord(
  item: Record<string, unknown>,
  workspace: string,
): OutboxRecord | undefined {
  const { id, session, peer, content, metadata, createdAt } = item;
  if (
    typeof id !== "string" || typeof session !== "string" ||
    typeof peer !== "string" ||
    typeof content !== "string"
  ) {
    return undefined;
  }
  const meta = isRecord(metadata) ? metadata as JsonObject : {};
  return {
    id,
    workspace: typeof item.workspace === "string" ? item.workspace : workspace,
    session,
    peer,
    content,
    metadata: { ...meta, [OUTBOX_ID_METADATA_KEY]: id },
    createdAt: typeof createdAt === "string"
      ? createdAt
      : new Date(0).toISOString(),
  };
}

function stringIds(value: unknown): string[] {
  return Array.isArray(value)
    ? value.filter((id): id is string => typeof id === "string")
    : [];
}

function positive(value: number, name: string): number {
  if (!(value > 0)) {
    throw new RangeError(
      `Cannot create a Honcho outbox: '${name}' must be positive: current value is ${value}`,
    );
  }
  return value;
}

async function writeAll(file: Deno.FsFile, data: Uint8Array): Promise<void> {
  let written = 0;
  while (written < data.length) {
    written += await file.write(data.subarray(written));
  }
}

async function readFrom(
  path: string,
  offset: number,
  limit = Infinity,
): Promise<Uint8Array> {
  const file = await Deno.open(path, { read: true });
  try {
    await file.seek(offset, Deno.SeekMode.Start);
    const chunks: Uint8Array[] = [];
    let total = 0;
    const buffer = new Uint8Array(64 * 1024);
    while (total < limit) {
      const n = await file.read(buffer);
      if (n === null) break;
      chunks.push(buffer.slice(0, n));
      total += n;
    }
    const out = new Uint8Array(total);
    let at = 0;
    for (const chunk of chunks) {
      out.set(chunk, at);
      at += chunk.length;
    }
    return limit === Infinity ? out : out.subarray(0, Math.min(total, limit));
  } finally {
    file.close();
  }
}
