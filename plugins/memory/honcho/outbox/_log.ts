/**
 * The outbox's JSONL format and the state replayed from it: `header`, `message`, `attempt`,
 * `settle`, `ack`, `drop` (built only here). Every {@linkcode OutboxLog} call runs under the
 * cross-process state lock ({@linkcode OutboxLog.locked}).
 * @module
 */

import {
  atomicWriteText,
  log,
  withFileLock,
} from "../../../../src/provider/mod.ts";
import { join } from "../../../../src/provider/_bundled.ts";
import type { JsonObject } from "../client/wire.ts";
import { isRecord } from "../_util.ts";

export const OUTBOX_ID_METADATA_KEY = "hermes_outbox_id";

/** A file whose header names a newer version is moved aside unchanged, never read, sent or deleted. */
const FORMAT_VERSION = 1;
/** An attempt recorded before `until` existed: assume twice the default request timeout. */
const LEGACY_ATTEMPT_WINDOW_MS = 60_000;

/**
 * Bytes kept in `<outbox>.reserve` so that delivery records (about 3,000
 * messages' worth) still fit on a full disk: released when such an append
 * finds no space, taken again after compaction. New messages never use it.
 */
export const OUTBOX_RESERVE_BYTES = 256 * 1024;

const encoder = new TextEncoder();
const decoder = new TextDecoder();

export interface OutboxRecord {
  /** The outbox id (a UUID), also in `metadata.hermes_outbox_id`. */
  id: string;
  workspace: string;
  session: string;
  peer: string;
  content: string;
  metadata: JsonObject;
  createdAt: string;
}

export interface RejectedRecord extends OutboxRecord {
  reason: string;
  status?: number;
  rejectedAt: string;
}

export interface Entry {
  record: OutboxRecord;
  /** The size of its line, newline included. */
  bytes: number;
  attempted: boolean;
  /** Epoch ms after which no attempt made so far can land (0: none). */
  landBy: number;
  /** Look the id up on Honcho before the first send. */
  verify: boolean;
}

/** The size of a header line (its generation is a UUID), newline included. */
const HEADER_BYTES = headerLine().length + 1;

function headerLine(): string {
  return JSON.stringify({
    type: "header",
    version: FORMAT_VERSION,
    generation: crypto.randomUUID(),
  });
}

export function messageLine(record: OutboxRecord, verify: boolean): string {
  return JSON.stringify({
    type: "message",
    ...record,
    ...(verify ? { verify: true } : {}),
  });
}

/** The `attempt` line recorded before a batch is sent. */
export function attemptLine(
  ids: readonly string[],
  at: number,
  until: number,
): string {
  return JSON.stringify({
    type: "attempt",
    ids,
    at: new Date(at).toISOString(),
    until,
  });
}

/** The `settle` line of an attempt that ended without being able to land. */
export function settleLine(
  group: { ids: string[]; landBy: number; attempted: boolean },
): string {
  return JSON.stringify({ type: "settle", ...group });
}

/** The `ack` or `drop` line that removes messages from the queue. */
export function finishLine(
  type: "ack" | "drop",
  ids: readonly string[],
  at: number,
  reason?: string,
): string {
  const line: JsonObject = { type, ids, at: new Date(at).toISOString() };
  if (reason !== undefined) line.reason = reason;
  return JSON.stringify(line);
}

export class OutboxLog {
  readonly path: string;
  readonly dir: string;
  /** Queued messages by id, oldest first. */
  readonly entries: Map<string, Entry> = new Map();
  #workspace: string;
  #lockPath: string;
  #now: () => number;
  #bytes = 0;
  #offset = 0;
  #fileSize = 0;
  #ino: number | null | undefined;
  #generation: string | undefined;
  /** Lines this version cannot read, kept verbatim through compaction. */
  #kept: string[] = [];
  #keptBytes = 0;
  #keptNoticed = false;
  /** Reads change nothing on disk (a report by a read-only command). */
  readOnly = false;

  constructor(dir: string, name: string, workspace: string, now: () => number) {
    this.dir = dir;
    this.path = join(dir, name);
    this.#workspace = workspace;
    this.#lockPath = `${this.path}.lock`;
    this.#now = now;
  }

  get bytes(): number {
    return this.#bytes;
  }

  locked<T>(fn: () => Promise<T>): Promise<T> {
    return withFileLock(this.#lockPath, fn);
  }

  #reset(): void {
    this.entries.clear();
    this.#bytes = 0;
    this.#offset = 0;
    this.#fileSize = 0;
    this.#ino = undefined;
    this.#generation = undefined;
    this.#kept = [];
    this.#keptBytes = 0;
  }

  /** Lines of the file this version cannot read (kept, never sent). */
  get unreadable(): number {
    return this.#kept.length;
  }

  /** The file's first line, when it is a header. */
  async #header(): Promise<Record<string, unknown> | undefined> {
    try {
      const head = decoder.decode(await readFrom(this.path, 0, 4096));
      const end = head.indexOf("\n");
      const first: unknown = JSON.parse(end < 0 ? head : head.slice(0, end));
      return isRecord(first) && first.type === "header" ? first : undefined;
    } catch {
      return undefined;
    }
  }

  /** Moves a file written by a newer outbox format aside, byte for byte, with one warning; returns whether it did. */
  async #setAsideNewer(): Promise<boolean> {
    const version = (await this.#header())?.version;
    if (typeof version !== "number" || !(version > FORMAT_VERSION)) {
      return false;
    }
    let kept = `${this.path}.format-v${version}.kept`;
    for (let n = 2; await exists(kept); n++) {
      kept = `${this.path}.format-v${version}-${n}.kept`;
    }
    await Deno.rename(this.path, kept);
    log(
      "warn",
      `Honcho outbox ${this.path} was written by a newer hermes-memory (outbox format version ${version}; this version reads version ${FORMAT_VERSION}): moved unchanged to ${kept}; this version never sends or deletes those messages and starts a new outbox. To deliver them, upgrade hermes-memory, then move ${kept} back to ${this.path} while no hermes process runs`,
    );
    return true;
  }

  #keep(line: string, size: number): void {
    this.#kept.push(line);
    this.#keptBytes += size;
  }

  /** Replays what any process appended since the last read; a torn last line is cut off with a warning. */
  async catchUp(): Promise<void> {
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
    if (
      this.#offset === 0 && info.size > 0 && !this.readOnly &&
      await this.#setAsideNewer()
    ) {
      this.#reset();
      return;
    }
    const ino = info.ino ?? null;
    // Another process compacted (atomic replace) or emptied the file: our offset points into
    // other bytes, so the whole file is replayed from its start.
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
      // A report leaves the torn line for the next run that delivers.
      // Under the state lock no writer is mid-append, so a partial line is one a dead or
      // refused writer never reported durable: cutting it loses nothing that was promised.
      if (end < bytes.length && !this.readOnly) {
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
    if (this.#kept.length > 0 && !this.#keptNoticed) {
      this.#keptNoticed = true;
      log(
        "warn",
        `Honcho outbox ${this.path} holds ${this.#kept.length} line${
          this.#kept.length === 1 ? "" : "s"
        } this version cannot read (outbox format version ${FORMAT_VERSION}; written by another hermes-memory version or edited by hand): they are kept unchanged in the file and never sent or deleted. Upgrade hermes-memory to the version that wrote them to deliver them`,
      );
    }
  }

  #apply(line: string, size: number): void {
    let item: unknown;
    try {
      item = JSON.parse(line);
    } catch {
      // Kept below, like any line this version cannot read.
    }
    if (!isRecord(item)) {
      this.#keep(line, size);
      return;
    }
    switch (item.type) {
      case "header":
        this.#generation = typeof item.generation === "string"
          ? item.generation
          : undefined;
        return;
      case "message": {
        const record = toRecord(item, this.#workspace);
        if (!record) {
          this.#keep(line, size);
          return;
        }
        // One entry per id: a line repeating a queued id adds nothing, so that message is
        // still sent once.
        if (!this.entries.has(record.id)) {
          this.entries.set(record.id, {
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
          const entry = this.entries.get(id);
          if (!entry) continue;
          // The latest `until` counts: any earlier request may still land until then, so nothing
          // is re-sent (only looked up) before it.
          entry.attempted = true;
          entry.landBy = Math.max(entry.landBy, until);
        }
        return;
      }
      case "settle": {
        // An attempt that ended without landing later: earlier ones count.
        const landBy = typeof item.landBy === "number" ? item.landBy : 0;
        for (const id of stringIds(item.ids)) {
          const entry = this.entries.get(id);
          if (!entry) continue;
          // Written only once that attempt's outcome was known (refused, or over), never for
          // one that may still be in flight, so it cannot shorten a needed wait.
          entry.landBy = landBy;
          if (item.attempted === false) entry.attempted = false;
        }
        return;
      }
      // Written only once Honcho holds the message (its answer, or a lookup: ack) or the
      // rejected file does (drop): a message leaves the queue only once it is kept elsewhere.
      case "ack":
      case "drop":
        for (const id of stringIds(item.ids)) {
          const entry = this.entries.get(id);
          if (entry) {
            this.entries.delete(id);
            this.#bytes -= entry.bytes;
          }
        }
        return;
      default:
        this.#keep(line, size);
    }
  }

  /**
   * Appends lines (a header first in a new file) with one write and one `fdatasync`, then replays
   * them. Messages need the reserve held: the room its release freed is for delivery records only.
   */
  async appendLines(lines: readonly string[]): Promise<void> {
    await Deno.mkdir(this.dir, { recursive: true, mode: 0o700 });
    // A header first in a new file (decided again for the retry).
    const data = (): Uint8Array =>
      encoder.encode(
        (this.#offset === 0 ? [headerLine(), ...lines] : lines)
          .map((line) => `${line}\n`).join(""),
      );
    const records = lines.every((line) =>
      !line.startsWith('{"type":"message"')
    );
    // Turns can wait in memory on a full disk; delivery records cannot, or nothing queued
    // could be acknowledged and the file could never shrink. Hence no turns without the reserve.
    if (!records && !await this.ensureReserve()) {
      throw diskFullError(this.path, "no reserve", this.entries.size);
    }
    for (let attempt = 0;; attempt++) {
      try {
        await appendSynced(this.path, data());
        break;
      } catch (error) {
        if (!diskFull(error)) throw error;
        // A torn tail is cut by the replay; then, for delivery records
        // only, the reserve makes room.
        await this.catchUp().catch(() => {});
        if (records && attempt === 0 && await this.#releaseReserve()) continue;
        if (records && await this.#emptyIfSettled(lines)) return;
        throw diskFullError(this.path, error, this.entries.size);
      }
    }
    // Replay our own lines so state and offset follow the file exactly.
    await this.catchUp();
  }

  /** Truncates the file when `lines` (acks, drops) settle every queued message: no space needed. */
  async #emptyIfSettled(lines: readonly string[]): Promise<boolean> {
    const done = lines.filter((line) => /^\{"type":"(ack|drop)"/.test(line));
    const settled = new Set(done.flatMap((l) => stringIds(JSON.parse(l).ids)));
    for (const id of this.entries.keys()) if (!settled.has(id)) return false;
    // Lines this version cannot read belong to another version: never truncated away.
    if (this.#kept.length > 0) return false;
    await Deno.truncate(this.path, 0);
    this.#reset();
    return true;
  }

  get reservePath(): string {
    return `${this.path}.reserve`;
  }

  async #releaseReserve(): Promise<boolean> {
    try {
      await Deno.remove(this.reservePath);
      log(
        "warn",
        `The disk holding Honcho outbox ${this.path} is full: its ${
          OUTBOX_RESERVE_BYTES / 1024
        } KiB reserve was released so deliveries can be recorded; new turns are kept in memory until space is freed`,
      );
      return true;
    } catch (error) {
      if (error instanceof Deno.errors.NotFound) return false;
      throw error;
    }
  }

  /** Takes the reserve (real blocks, not a sparse file) when it is missing; returns whether it is held (on a full disk it is not). */
  async ensureReserve(): Promise<boolean> {
    try {
      await Deno.lstat(this.reservePath);
      return true;
    } catch (error) {
      // Cannot tell: counted as not held, so turns wait rather than use the delivery room.
      if (!(error instanceof Deno.errors.NotFound)) return false;
    }
    try {
      await Deno.mkdir(this.dir, { recursive: true, mode: 0o700 });
      await Deno.writeFile(
        this.reservePath,
        new Uint8Array(OUTBOX_RESERVE_BYTES),
        { mode: 0o600 },
      );
      return true;
    } catch {
      await Deno.remove(this.reservePath).catch(() => {});
      return false;
    }
  }

  async #readGeneration(): Promise<string | undefined> {
    const generation = (await this.#header())?.generation;
    return typeof generation === "string" ? generation : undefined;
  }

  /** Rewrites the file with only what is queued (and attempts that still count) when acknowledged lines dominate. */
  async maybeCompact(compactAfterBytes: number): Promise<void> {
    if (this.#fileSize === 0) return;
    // A file of nothing but its header and kept lines has nothing to drop.
    if (this.#fileSize <= HEADER_BYTES + this.#keptBytes + this.#bytes) return;
    const allDone = this.entries.size === 0;
    const bloated = this.#fileSize > compactAfterBytes &&
      this.#bytes * 2 < this.#fileSize;
    if (!allDone && !bloated) return;
    const lines = [headerLine(), ...this.#kept];
    const attempts = new Map<number, string[]>();
    for (const entry of this.entries.values()) {
      lines.push(messageLine(entry.record, entry.verify));
      // An attempted message keeps its attempt through compaction: without it a restart
      // would send it again without waiting or looking up (a duplicate).
      if (entry.attempted) {
        const ids = attempts.get(entry.landBy) ?? [];
        ids.push(entry.record.id);
        attempts.set(entry.landBy, ids);
      }
    }
    for (const [until, ids] of attempts) {
      lines.push(attemptLine(ids, this.#now(), until));
    }
    try {
      // Atomic replace: a crash mid-compaction leaves the old file whole; other processes
      // see a new inode (or generation) and replay from the start.
      await atomicWriteText(
        this.path,
        lines.map((line) => `${line}\n`).join(""),
        { mode: 0o600 },
      );
    } catch (error) {
      // A full disk has no room for the copy; a settled queue needs none.
      if (!diskFull(error) || !await this.#emptyIfSettled([])) throw error;
    }
    this.#reset();
    await this.catchUp();
    // The file shrank: take the reserve back if it was released.
    await this.ensureReserve();
  }
}

export async function readRejectedFile(
  path: string,
  workspace: string,
): Promise<RejectedRecord[]> {
  let text: string;
  try {
    text = await Deno.readTextFile(path);
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
      const record = toRecord(value, workspace);
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

/** A record read from a log or rejected-file line, or `undefined` when malformed. */
export function toRecord(
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
  // The id always travels in the metadata: it is what the lookup after an uncertain send
  // finds on Honcho, so a resend can be avoided.
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

/** ENOSPC or EDQUOT (as `isDiskFull` in src/io/atomic_write.ts, which the worker's imports lack). */
function diskFull(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return code === "ENOSPC" || code === "EDQUOT" ||
    (error instanceof Error && (error.name === "DiskFullError" ||
      /\(os error (28|122)\)/.test(error.message)));
}

function diskFullError(
  path: string,
  cause: unknown,
  queued: number,
): Error {
  const error = new Error(
    `Cannot append to Honcho outbox ${path}: no space left on device; the ${queued} message(s) already in it are kept, nothing in it was changed. Free some disk space; queued turns are delivered and the file shrinks once Honcho has them`,
    { cause },
  );
  error.name = "DiskFullError";
  return error;
}

async function exists(path: string): Promise<boolean> {
  try {
    await Deno.lstat(path);
    return true;
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return false;
    throw error;
  }
}

/** Appends all of `data` (a write may be partial), then `fdatasync`s. */
export async function appendSynced(
  path: string,
  data: Uint8Array,
): Promise<void> {
  const file = await Deno.open(path, {
    append: true,
    create: true,
    mode: 0o600,
  });
  try {
    let written = 0;
    while (written < data.length) {
      written += await file.write(data.subarray(written));
    }
    // Callers report lines durable (turns accepted, attempts recorded) only after this:
    // data first, then the answer.
    await file.syncData();
  } finally {
    file.close();
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
    const chunks: Uint8Array<ArrayBuffer>[] = [];
    let total = 0;
    const buffer = new Uint8Array(64 * 1024);
    while (total < limit) {
      const n = await file.read(buffer);
      if (n === null) break;
      chunks.push(buffer.slice(0, n));
      total += n;
    }
    const out = new Uint8Array(await new Blob(chunks).arrayBuffer());
    return limit === Infinity ? out : out.subarray(0, Math.min(total, limit));
  } finally {
    file.close();
  }
}
