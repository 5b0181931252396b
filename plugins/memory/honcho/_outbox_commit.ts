/**
 * The outbox's group commit (private to the outbox): message appends and
 * control lines (attempts, settles, acks, drops) handed in while the
 * previous write was on its way to the disk are written together, under
 * the state lock, with one `fdatasync`, in the order they were handed in.
 * Appends are deduplicated by id and checked against the size bound
 * (refused messages are counted, with one warning naming the file until
 * the outbox drains).
 *
 * @module
 */

import { log } from "../../../src/provider/mod.ts";
import {
  messageLine,
  type OutboxLog,
  type OutboxRecord,
} from "./_outbox_log.ts";

/** What an append (`HonchoOutbox.append`) did. */
export interface OutboxAppendResult {
  /** Ids of the messages now queued (including ones that already were), in input order. */
  accepted: string[];
  /** How many messages were refused because the outbox is full (a warning was logged). */
  rejected: number;
}

/** A record to append, and whether it is looked up before its first send. */
export interface AppendRecord {
  /** The record. */
  record: OutboxRecord;
  /** Look the id up on Honcho before the first send. */
  verify: boolean;
}

const encoder = new TextEncoder();

type CommitJob =
  | {
    kind: "messages";
    records: AppendRecord[];
    resolve: (result: OutboxAppendResult) => void;
    reject: (error: unknown) => void;
  }
  | {
    kind: "lines";
    lines: string[];
    resolve: () => void;
    reject: (error: unknown) => void;
  };

/** The outbox's size bound. */
export interface OutboxBounds {
  /** The most queued messages. */
  maxPendingMessages: number;
  /** The most bytes of queued records. */
  maxPendingBytes: number;
}

/** Writes to an {@linkcode OutboxLog} in groups (see the module doc). */
export class GroupCommitter {
  #file: OutboxLog;
  #maxPendingMessages: number;
  #maxPendingBytes: number;
  #warnedFull = false;
  #jobs: CommitJob[] = [];
  #committer: Promise<void> | undefined;

  /**
   * Creates the committer (no I/O).
   *
   * @param outboxLog The log it writes to.
   * @param bounds The size bound.
   */
  constructor(outboxLog: OutboxLog, bounds: OutboxBounds) {
    this.#file = outboxLog;
    this.#maxPendingMessages = bounds.maxPendingMessages;
    this.#maxPendingBytes = bounds.maxPendingBytes;
  }

  /**
   * Queues message records durably (within the next group).
   *
   * @param records The records, in order.
   * @returns The accepted ids and the refused count.
   */
  append(records: AppendRecord[]): Promise<OutboxAppendResult> {
    return new Promise((resolve, reject) => {
      this.#enqueue({ kind: "messages", records, resolve, reject });
    });
  }

  /**
   * Appends control lines durably (within the next group).
   *
   * @param lines The lines.
   * @returns Resolves when they are durable.
   */
  commitLines(lines: string[]): Promise<void> {
    return new Promise((resolve, reject) => {
      this.#enqueue({ kind: "lines", lines, resolve, reject });
    });
  }

  /** Messages left the queue: the "full" warning may be given again once below 90 %. */
  noteRemoved(): void {
    if (
      this.#warnedFull &&
      this.#file.entries.size < this.#maxPendingMessages * 0.9
    ) this.#warnedFull = false;
  }

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
        await this.#file.locked(async () => {
          await this.#file.catchUp();
          const lines: string[] = [];
          let count = this.#file.entries.size;
          let bytes = this.#file.bytes;
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
              if (this.#file.entries.has(record.id) || queued.has(record.id)) {
                result.accepted.push(record.id);
                continue;
              }
              const line = messageLine(record, verify);
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
          if (lines.length > 0) await this.#file.appendLines(lines);
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

  #warnFull(refused: number): void {
    if (!this.#warnedFull) {
      this.#warnedFull = true;
      log(
        "warn",
        `Honcho outbox ${this.#file.path} is full (${this.#file.entries.size} messages, ${this.#file.bytes} bytes pending; limits ${this.#maxPendingMessages} messages, ${this.#maxPendingBytes} bytes): new messages are refused until Honcho accepts the backlog`,
      );
    } else {
      log(
        "debug",
        `Honcho outbox ${this.#file.path} is still full: refused ${refused} message(s)`,
      );
    }
  }
}
