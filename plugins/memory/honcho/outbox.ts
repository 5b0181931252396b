/**
 * A durable outbox for Honcho message writes.
 *
 * Every message goes first to an append-only JSONL log under
 * `$HERMES_HOME/honcho/outbox/<workspace>.jsonl` (fsync on every append),
 * is delivered in order (batches of at most 100 per session) with backoff
 * (honouring `Retry-After`), and leaves the outbox only when Honcho has
 * acknowledged it. Each message carries its outbox id in
 * `metadata.hermes_outbox_id`; a message whose delivery was attempted but
 * not acknowledged (a crash, a timeout) is re-sent only after the session's
 * recent messages were checked for that id, so a restart never stores a
 * message twice. Nothing is lost while Honcho is down; the outbox has a size
 * bound (`maxPendingMessages`, `maxPendingBytes`) and, when it is reached,
 * rejects new messages with a warning naming the file, never silently.
 *
 * Log lines: a `header` (format version, generation), `message` records,
 * `attempt` marks (delivery started), `ack` (Honcho stored them) and `drop`
 * (Honcho permanently refused one; the record is copied to
 * `<workspace>.rejected.jsonl` with the reason). A torn last line (a crash
 * mid-write) is ignored with a warning and cut off. The file is compacted
 * when everything is acknowledged, or when acknowledged lines dominate.
 *
 * Processes sharing a profile share its outbox safely: every change happens
 * under a cross-process file lock after replaying what other processes
 * appended, and one process at a time delivers (a second delivery lock).
 * Two profiles (different `HERMES_HOME`) never share an outbox.
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
  type HonchoPage,
  isRetryableHonchoError,
  type JsonObject,
  MAX_MESSAGE_CHARS,
  MAX_MESSAGES_PER_BATCH,
  type Message,
  type MessageInput,
  type SleepLike,
} from "./client.ts";
import {
  AuthError,
  HonchoError,
  InvalidResponseError,
  ServerError,
  TimeoutError,
} from "./errors.ts";

/** The metadata key that carries a message's outbox id. */
export const OUTBOX_ID_METADATA_KEY = "hermes_outbox_id";

const FORMAT_VERSION = 1;

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

/** What {@linkcode HonchoOutbox.append} did. */
export interface OutboxAppendResult {
  /** Ids of the messages queued, in input order. */
  accepted: string[];
  /** How many messages were refused because the outbox is full (a warning was logged). */
  rejected: number;
}

/** What {@linkcode HonchoOutbox.deliver} did. */
export interface OutboxDeliverResult {
  /** Messages Honcho acknowledged in this call. */
  delivered: number;
  /** Messages found already stored (sent before a crash or timeout) and not re-sent. */
  duplicates: number;
  /** Messages Honcho refused permanently (moved to the rejected file, warned). */
  rejected: number;
  /** Messages still queued afterwards. */
  pending: number;
  /** Why delivery stopped early (Honcho down after all retries, auth failure), if it did. */
  error?: unknown;
}

/** Options of {@linkcode HonchoOutbox.deliver}. */
export interface OutboxDeliverOptions {
  /** Stops delivery; its reason is rethrown unchanged. */
  signal?: AbortSignal;
  /** Consecutive transient failures tolerated before returning. @default {HonchoOutboxOptions.maxRetries} */
  maxRetries?: number;
}

/** Sizes of the outbox. */
export interface OutboxStats {
  /** Queued messages. */
  pending: number;
  /** Bytes of queued message records. */
  bytes: number;
  /** Queued messages whose delivery was attempted but not acknowledged. */
  attempted: number;
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
  /** Pages of 100 recent messages scanned for already-stored ids. @default {3} */
  dedupScanPages?: number;
  /** Compaction threshold for a file with acknowledged lines, in bytes. @default {1048576} */
  compactAfterBytes?: number;
  /** The sleep between retries. @default {abortableSleep} */
  sleep?: SleepLike;
  /** Random numbers in [0, 1) for jitter. @default {Math.random} */
  random?: () => number;
}

interface Entry {
  record: OutboxRecord;
  bytes: number;
  attempted: boolean;
}

interface Batch {
  session: string;
  records: OutboxRecord[];
  needsDedup: string[];
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
  #dedupScanPages: number;
  #compactAfterBytes: number;
  #sleep: SleepLike;
  #random: () => number;
  #entries = new Map<string, Entry>();
  #bytes = 0;
  #offset = 0;
  #fileSize = 0;
  #ino: number | null | undefined;
  #generation: string | undefined;
  #isolate = new Set<string>();
  #warnedFull = false;

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
    this.#dedupScanPages = Math.max(1, options.dedupScanPages ?? 3);
    this.#compactAfterBytes = options.compactAfterBytes ?? 1024 * 1024;
    this.#sleep = options.sleep ?? abortableSleep;
    this.#random = options.random ?? Math.random;
  }

  /**
   * Queues messages durably (fsync before returning). When the size bound
   * is reached, further messages are refused: the result counts them and a
   * warning naming the file is logged (once until the outbox drains).
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
    return await this.#locked(async () => {
      await this.#catchUp();
      const lines: string[] = [];
      const accepted: string[] = [];
      let rejected = 0;
      let count = this.#entries.size;
      let bytes = this.#bytes;
      for (const message of messages) {
        const id = crypto.randomUUID();
        const record: OutboxRecord = {
          id,
          workspace: this.workspace,
          session: message.session,
          peer: message.peer,
          content: message.content,
          metadata: { ...message.metadata, [OUTBOX_ID_METADATA_KEY]: id },
          createdAt: message.createdAt ?? new Date().toISOString(),
        };
        const line = JSON.stringify({ type: "message", ...record });
        const size = encoder.encode(line).length + 1;
        if (
          count + 1 > this.#maxPendingMessages ||
          bytes + size > this.#maxPendingBytes
        ) {
          rejected++;
          continue;
        }
        count++;
        bytes += size;
        lines.push(line);
        accepted.push(id);
      }
      if (lines.length > 0) await this.#appendLines(lines);
      if (rejected > 0) {
        if (!this.#warnedFull) {
          this.#warnedFull = true;
          log(
            "warn",
            `Honcho outbox ${this.path} is full (${this.#entries.size} messages, ${this.#bytes} bytes pending; limits ${this.#maxPendingMessages} messages, ${this.#maxPendingBytes} bytes): new messages are refused until Honcho accepts the backlog`,
          );
        } else {
          log(
            "debug",
            `Honcho outbox ${this.path} is still full: refused ${rejected} message(s)`,
          );
        }
      }
      return { accepted, rejected };
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
   * @returns Pending messages, bytes, and attempted-but-unacknowledged messages.
   */
  async stats(): Promise<OutboxStats> {
    return await this.#locked(async () => {
      await this.#catchUp();
      let attempted = 0;
      for (const entry of this.#entries.values()) {
        if (entry.attempted) attempted++;
      }
      return { pending: this.#entries.size, bytes: this.#bytes, attempted };
    });
  }

  /**
   * Delivers queued messages in order, in batches of at most 100 per
   * session, until the outbox is empty, the signal aborts, or delivery
   * fails: transient failures (429, 5xx, connection, timeout) are retried
   * with full-jitter backoff honouring `Retry-After` up to `maxRetries`
   * times in a row; an auth failure stops at once (messages kept); a
   * permanent refusal of one message moves it to the rejected file with a
   * warning. Messages that may already be stored are checked against the
   * session's recent messages first and never sent twice.
   *
   * @param client A client for the server (its workspace is replaced by the outbox's).
   * @param options Signal and retry budget.
   * @returns Counts, and the error that stopped delivery early, if any.
   * @throws The signal's reason, unchanged, when it aborts.
   */
  async deliver(
    client: HonchoClient,
    options: OutboxDeliverOptions = {},
  ): Promise<OutboxDeliverResult> {
    const signal = options.signal;
    if (signal?.aborted) throw signal.reason;
    const maxRetries = options.maxRetries ?? this.#maxRetries;
    let started = false;
    const run = withFileLock(this.#deliverLockPath, async () => {
      started = true;
      if (signal?.aborted) throw signal.reason;
      return await this.#deliverLocked(
        client.withWorkspace(this.workspace),
        signal,
        maxRetries,
      );
    });
    if (!signal) return await run;
    return await new Promise<OutboxDeliverResult>((resolvePromise, reject) => {
      const onAbort = (): void => {
        if (started) return; // The running delivery observes the signal itself.
        run.catch(() => {});
        reject(signal.reason);
      };
      signal.addEventListener("abort", onAbort, { once: true });
      run.then(resolvePromise, reject).finally(() =>
        signal.removeEventListener("abort", onAbort)
      );
    });
  }

  /**
   * Delivers everything within `timeoutMs`, retrying transient failures
   * until the deadline.
   *
   * @param client A client for the server.
   * @param timeoutMs The deadline.
   * @returns `true` when the outbox is empty afterwards.
   */
  async flush(client: HonchoClient, timeoutMs: number): Promise<boolean> {
    const controller = new AbortController();
    const deadline = new DOMException(
      "Honcho outbox flush deadline passed",
      "TimeoutError",
    );
    const timer = setTimeout(
      () => controller.abort(deadline),
      Math.max(0, timeoutMs),
    );
    try {
      const result = await this.deliver(client, {
        signal: controller.signal,
        maxRetries: Infinity,
      });
      return result.pending === 0;
    } catch (error) {
      if (error === deadline) return false;
      throw error;
    } finally {
      clearTimeout(timer);
    }
  }

  // -------------------------------------------------------------------------
  // Delivery
  // -------------------------------------------------------------------------

  async #deliverLocked(
    client: HonchoClient,
    signal: AbortSignal | undefined,
    maxRetries: number,
  ): Promise<OutboxDeliverResult> {
    const result: OutboxDeliverResult = {
      delivered: 0,
      duplicates: 0,
      rejected: 0,
      pending: 0,
    };
    let failures = 0;
    for (;;) {
      if (signal?.aborted) throw signal.reason;
      const batch = await this.#locked(async () => {
        await this.#catchUp();
        const picked = this.#pickBatch();
        if (!picked) return undefined;
        const fresh = picked.records.filter((record) =>
          !this.#entries.get(record.id)?.attempted
        );
        if (fresh.length > 0) {
          await this.#appendLines([
            JSON.stringify({
              type: "attempt",
              ids: fresh.map((r) => r.id),
              at: new Date().toISOString(),
            }),
          ]);
        }
        return picked;
      });
      if (!batch) break;
      try {
        let toSend = batch.records;
        if (batch.needsDedup.length > 0) {
          const stored = await this.#findStored(
            client,
            batch.session,
            batch.needsDedup,
            signal,
          );
          if (stored.size > 0) {
            await this.#finish("ack", [...stored]);
            result.duplicates += stored.size;
            toSend = toSend.filter((record) => !stored.has(record.id));
          }
        }
        if (toSend.length > 0) {
          await client.createMessages(
            batch.session,
            toSend.map(toMessageInput),
            { signal },
          );
          await this.#finish("ack", toSend.map((record) => record.id));
          result.delivered += toSend.length;
        }
        failures = 0;
      } catch (error) {
        if (signal?.aborted) throw signal.reason;
        if (isTransient(error)) {
          failures++;
          if (failures > maxRetries) {
            result.error = error;
            break;
          }
          log(
            "debug",
            `Honcho outbox delivery failed, retrying: ${
              (error as Error).message
            }`,
          );
          await this.#sleep(this.#backoffMs(failures - 1, error), signal);
          continue;
        }
        if (
          error instanceof AuthError ||
          !(error instanceof HonchoError || error instanceof RangeError)
        ) {
          result.error = error;
          break;
        }
        if (batch.records.length > 1) {
          // Find the refused message: deliver this batch one by one.
          for (const record of batch.records) this.#isolate.add(record.id);
          continue;
        }
        await this.#reject(batch.records[0]!, error as Error);
        result.rejected++;
      }
    }
    await this.#locked(async () => {
      await this.#catchUp();
      await this.#maybeCompact();
      result.pending = this.#entries.size;
    });
    return result;
  }

  #pickBatch(): Batch | undefined {
    let session: string | undefined;
    const records: OutboxRecord[] = [];
    const needsDedup: string[] = [];
    for (const entry of this.#entries.values()) {
      const record = entry.record;
      if (session === undefined) {
        session = record.session;
      } else if (record.session !== session) {
        continue;
      }
      const isolated = this.#isolate.has(record.id);
      if (isolated && records.length > 0) break;
      records.push(record);
      if (entry.attempted) needsDedup.push(record.id);
      if (isolated || records.length >= MAX_MESSAGES_PER_BATCH) break;
    }
    return session === undefined ? undefined : { session, records, needsDedup };
  }

  async #findStored(
    client: HonchoClient,
    session: string,
    ids: readonly string[],
    signal: AbortSignal | undefined,
  ): Promise<Set<string>> {
    const wanted = new Set(ids);
    const found = new Set<string>();
    let page: HonchoPage<Message> | undefined = await client.listMessages(
      session,
      { reverse: true, size: 100, signal },
    );
    for (let scanned = 1; page; scanned++) {
      for (const message of page.items) {
        const id = message.metadata[OUTBOX_ID_METADATA_KEY];
        if (typeof id === "string" && wanted.has(id)) found.add(id);
      }
      if (found.size === wanted.size || scanned >= this.#dedupScanPages) break;
      page = await page.nextPage();
    }
    return found;
  }

  #backoffMs(attempt: number, error: unknown): number {
    const retryAfter = error instanceof HonchoError
      ? (error as { retryAfterMs?: number }).retryAfterMs
      : undefined;
    if (typeof retryAfter === "number") {
      return Math.min(retryAfter, this.#retryAfterCapMs);
    }
    const ceiling = Math.min(
      this.#retryMaxDelayMs,
      this.#retryBaseDelayMs * 2 ** Math.min(attempt, 30),
    );
    return Math.floor(this.#random() * ceiling);
  }

  async #finish(
    type: "ack" | "drop",
    ids: readonly string[],
    reason?: string,
  ): Promise<void> {
    await this.#locked(async () => {
      await this.#catchUp();
      const line: JsonObject = { type, ids, at: new Date().toISOString() };
      if (reason !== undefined) line.reason = reason;
      await this.#appendLines([JSON.stringify(line)]);
      for (const id of ids) this.#isolate.delete(id);
      if (
        this.#warnedFull && this.#entries.size < this.#maxPendingMessages * 0.9
      ) this.#warnedFull = false;
    });
  }

  async #reject(record: OutboxRecord, error: Error): Promise<void> {
    const reason = error.message;
    await Deno.mkdir(this.#dir, { recursive: true, mode: 0o700 });
    const file = await Deno.open(this.rejectedPath, {
      append: true,
      create: true,
      mode: 0o600,
    });
    try {
      await writeAll(
        file,
        encoder.encode(
          `${
            JSON.stringify({
              ...record,
              reason,
              rejectedAt: new Date().toISOString(),
            })
          }\n`,
        ),
      );
      await file.syncData();
    } finally {
      file.close();
    }
    await this.#finish("drop", [record.id], reason);
    log(
      "warn",
      `Honcho refused outbox message ${record.id} for session '${record.session}' (${reason}): it was moved to ${this.rejectedPath}`,
    );
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
    if (typeof value !== "object" || value === null) return;
    const item = value as Record<string, unknown>;
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
          });
          this.#bytes += size;
        }
        return;
      }
      case "attempt":
        for (const id of stringIds(item.ids)) {
          const entry = this.#entries.get(id);
          if (entry) entry.attempted = true;
        }
        return;
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
    const attempted: string[] = [];
    for (const entry of this.#entries.values()) {
      lines.push(JSON.stringify({ type: "message", ...entry.record }));
      if (entry.attempted) attempted.push(entry.record.id);
    }
    if (attempted.length > 0) {
      lines.push(
        JSON.stringify({
          type: "attempt",
          ids: attempted,
          at: new Date().toISOString(),
        }),
      );
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

function isTransient(error: unknown): boolean {
  return isRetryableHonchoError(error) || error instanceof TimeoutError ||
    error instanceof InvalidResponseError || error instanceof ServerError;
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
  const meta = typeof metadata === "object" && metadata !== null &&
      !Array.isArray(metadata)
    ? metadata as JsonObject
    : {};
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
