/**
 * The outbox's one write queue: appends and control lines handed in while the previous write was on
 * its way to the disk go out together, in order, under the state lock, with one `fdatasync`.
 * @module
 */

import { log } from "../../../../src/provider/mod.ts";
import { messageLine, type OutboxLog, type OutboxRecord } from "./_log.ts";
import { backoffDelayMs } from "../client/_backoff.ts";
import { HONCHO_TIMINGS } from "../config/timings_table.ts";
import { errorText } from "../_util.ts";

/** What an append (`HonchoOutbox.append`) did. */
export interface OutboxAppendResult {
  /** Ids of the messages now queued (including ones that already were), in input order. */
  accepted: string[];
  /** How many messages were refused because the outbox is full (a warning was logged). */
  rejected: number;
}

export interface AppendRecord {
  record: OutboxRecord;
  verify: boolean;
}

export interface CommitOptions {
  maxPendingMessages: number;
  maxPendingBytes: number;
  /** Held messages not on disk yet above which `stage()` pushes back. */
  maxStaged: number;
  stageWaitMs: number;
  random: () => number;
  /** Called after each group with the turns it made durable and the messages it added. */
  onCommitted: (turns: number, added: number) => void;
}

interface Job {
  records: AppendRecord[];
  /** Records known later (a turn waiting for the session's name): jobs behind it wait. */
  later?: Promise<AppendRecord[]>;
  count: number;
  lines: string[];
  /** A turn or checkpoint: kept in memory and retried while the disk refuses it. */
  held: boolean;
  turn: boolean;
  resolve: (result: OutboxAppendResult) => void;
  reject: (error: unknown) => void;
}

const encoder = new TextEncoder();

export class GroupCommitter {
  #file: OutboxLog;
  #options: CommitOptions;
  #warnedFull = false;
  #jobs: Job[] = [];
  #running: Promise<void> | undefined;
  #held = 0;
  #roomWaiters = new Set<() => void>();
  #warnedSlowDisk = false;
  #diskFailures = 0;
  #closed = false;
  #stopped = false;

  constructor(outboxLog: OutboxLog, options: CommitOptions) {
    this.#file = outboxLog;
    this.#options = options;
  }

  get notDurable(): number {
    return this.#held;
  }

  get running(): Promise<void> | undefined {
    return this.#running;
  }

  append(
    records: AppendRecord[],
    held = false,
    turn = false,
  ): Promise<OutboxAppendResult> {
    return new Promise((resolve, reject) => {
      // Counted before the write starts, so drain() reports it not durable until its fsync.
      const count = held ? records.length : 0;
      this.#held += count;
      this.#enqueue({ records, count, held, turn, resolve, reject });
    });
  }

  commitLines(lines: string[]): Promise<void> {
    return new Promise((resolve, reject) => {
      this.#enqueue({ lines, resolve: () => resolve(), reject });
    });
  }

  /**
   * Holds a turn until it is on disk, in order (records known `later` hold back the turns behind
   * them, `count` messages estimated meanwhile); returns a promise only when more than `maxStaged`
   * messages wait for the disk (back-pressure, at most `stageWaitMs`; the turn is kept either way).
   */
  stage(
    records: AppendRecord[] | Promise<AppendRecord[]>,
    count = 0,
  ): Promise<void> | undefined {
    if (this.#closed) return undefined;
    if (Array.isArray(records)) {
      if (records.length === 0) return undefined;
      // Held jobs are retried until written (or stop()): the caller learns durability from
      // drain(), not from this promise.
      this.append(records, true, true).catch(() => {});
    } else {
      this.#held += count;
      this.#enqueue({
        // Queued now, filled later: its place is fixed at `syncTurn` time, so turns stay in
        // order even when naming the session takes a while.
        later: records,
        count,
        held: true,
        turn: true,
        resolve: () => {},
        reject: () => {},
      });
    }
    if (this.#held <= this.#options.maxStaged) return undefined;
    return this.#waitForRoom();
  }

  /** Takes no new turns; wakes pushed-back callers. */
  close(): void {
    this.#closed = true;
    for (const wake of this.#roomWaiters) wake();
  }

  /** Gives up on held messages the disk still refuses (shutdown, out of time). */
  stop(): void {
    this.#stopped = true;
  }

  /** Messages left the queue: the "full" warning may be given again once below 90 %. */
  noteRemoved(): void {
    if (
      this.#warnedFull &&
      this.#file.entries.size < this.#options.maxPendingMessages * 0.9
    ) this.#warnedFull = false;
  }

  #enqueue(job: Partial<Job> & Pick<Job, "resolve" | "reject">): void {
    const defaults = { records: [], count: 0, lines: [], held: false };
    this.#jobs.push({ ...defaults, turn: false, ...job });
    this.#start();
  }

  #start(): void {
    this.#running ??= this.#loop().finally(() => {
      this.#running = undefined;
      // Handed in between the loop's last look and this reset.
      if (this.#jobs.length > 0) this.#start();
    });
  }

  async #loop(): Promise<void> {
    while (this.#jobs.length > 0) {
      const head = this.#jobs[0]!;
      // A job whose records are not known yet holds back every job behind it: writing them
      // first would put later turns before it in the file, and so on Honcho.
      if (head.later) {
        head.records = await head.later.catch(() => []);
        head.later = undefined;
        this.#held += head.records.length - head.count;
        head.count = head.records.length;
        continue;
      }
      const next = this.#jobs.findIndex((job) => job.later !== undefined);
      const jobs = this.#jobs.splice(0, next < 0 ? this.#jobs.length : next);
      let results: OutboxAppendResult[];
      try {
        results = await this.#write(jobs);
      } catch (error) {
        const held = jobs.filter((job) => job.held);
        const rest = jobs.filter((job) => !job.held);
        // Delivery records may still fit (the reserve) without the turns.
        if (held.length > 0 && rest.length > 0) await this.#settle(rest);
        else for (const job of rest) job.reject(error);
        if (held.length === 0) continue;
        // Back at the front, in their order: a later turn must not reach the file before them.
        this.#jobs.unshift(...held);
        if (++this.#diskFailures === 1) {
          log(
            "warn",
            `Honcho cannot write its outbox ${this.#file.path} (${
              errorText(error)
            }): ${this.#held} message(s) are held in memory and the write is retried`,
          );
        }
        const delay = backoffDelayMs(this.#diskFailures - 1, error, {
          ...HONCHO_TIMINGS.disk,
          random: this.#options.random,
        });
        await new Promise((resolve) =>
          setTimeout(resolve, Math.max(10, delay))
        );
        // Given up only at shutdown (stop()): `#held` still counts them, so the close warns
        // that they never reached the file.
        if (this.#stopped) {
          for (const job of this.#jobs.filter((job) => job.held)) {
            job.reject(error);
          }
          this.#jobs = this.#jobs.filter((job) => !job.held);
        }
        continue;
      }
      if (this.#diskFailures > 0) {
        log("warn", `Honcho outbox ${this.#file.path} is writable again`);
      }
      this.#diskFailures = 0;
      this.#done(jobs, results);
    }
  }

  async #settle(jobs: Job[]): Promise<void> {
    try {
      this.#done(jobs, await this.#write(jobs));
    } catch (error) {
      for (const job of jobs) job.reject(error);
    }
  }

  #done(jobs: Job[], results: OutboxAppendResult[]): void {
    let turns = 0;
    let added = 0;
    // Called only after the group's write and fdatasync: a count drops and a promise
    // resolves only for what is on disk.
    jobs.forEach((job, index) => {
      const result = results[index]!;
      this.#held -= job.count;
      if (job.turn && job.records.length > 0) turns++;
      added += result.accepted.length;
      job.resolve(result);
    });
    if (this.#held <= this.#options.maxStaged) {
      this.#warnedSlowDisk = false;
      for (const wake of [...this.#roomWaiters]) wake();
    }
    // Delivery reads only what the file holds: it is kicked once these turns are in it.
    this.#options.onCommitted(turns, added);
  }

  /** Writes a group: deduplicated by id, checked against the size bound. */
  async #write(jobs: Job[]): Promise<OutboxAppendResult[]> {
    const results: OutboxAppendResult[] = [];
    await this.#file.locked(async () => {
      // Under the state lock, after replaying other processes' lines: the id dedupe and the
      // bounds see the whole queue, not only this process's part.
      await this.#file.catchUp();
      const lines: string[] = [];
      let count = this.#file.entries.size;
      let bytes = this.#file.bytes;
      let refused = 0;
      const queued = new Set<string>();
      for (const job of jobs) {
        // Lines go out in hand-in order: an attempt precedes its ack or settle line.
        lines.push(...job.lines);
        const result: OutboxAppendResult = { accepted: [], rejected: 0 };
        for (const { record, verify } of job.records) {
          // An id already queued (a turn handed over again, an import run twice) is accepted
          // without a second line: Honcho would store both copies.
          if (this.#file.entries.has(record.id) || queued.has(record.id)) {
            result.accepted.push(record.id);
            continue;
          }
          const line = messageLine(record, verify);
          const size = encoder.encode(line).length + 1;
          if (
            count + 1 > this.#options.maxPendingMessages ||
            bytes + size > this.#options.maxPendingBytes
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
      if (lines.length > 0) await this.#file.appendLines(lines);
      if (refused > 0) this.#warnFull(refused);
    });
    return results;
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
            `Honcho's outbox ${this.#file.path} is not keeping up: ${this.#held} message(s) are waiting for the disk (more than ${this.#options.maxStaged}); they are kept in memory until written`,
          );
        }
        resolve();
      }, this.#options.stageWaitMs);
      this.#roomWaiters.add(wake);
    });
  }

  #warnFull(refused: number): void {
    const { maxPendingMessages, maxPendingBytes } = this.#options;
    if (!this.#warnedFull) {
      this.#warnedFull = true;
      log(
        "warn",
        `Honcho outbox ${this.#file.path} is full (${this.#file.entries.size} messages, ${this.#file.bytes} bytes pending; limits ${maxPendingMessages} messages, ${maxPendingBytes} bytes): new messages are refused until Honcho accepts the backlog`,
      );
    } else {
      log(
        "debug",
        `Honcho outbox ${this.#file.path} is still full: refused ${refused} message(s)`,
      );
    }
  }
}
