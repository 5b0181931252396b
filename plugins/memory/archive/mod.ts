/**
 * `archive`: the reference checkpointing memory provider (pre-compress
 * checkpoint API version 2). Before every lossy compression it appends the
 * user and assistant text to `$HERMES_HOME/archive/<session>/transcript.jsonl`
 * and `fsync`s it; any failure throws. Each message is keyed
 * `<sha256 of role and content>:<occurrence>`, so a checkpoint archives only
 * what follows the part the archive already ends with. A torn last line is
 * ignored by readers and cut off by the next checkpoint.
 *
 * Who imports it: the framework's loader (by URL, in the provider's sandbox)
 * when `memory.provider` is `archive`; an agent or a test only to build the
 * provider itself, in-process.
 *
 * @example Registering the provider
 * ```ts no-assert
 * import { ArchiveMemoryProvider, register } from "./mod.ts";
 * register({ registerMemoryProvider: (provider) => provider });
 * const provider = new ArchiveMemoryProvider();
 * ```
 *
 * @module
 */

import {
  type ChatMessage,
  getHermesHome,
  type InitializeOptions,
  log,
  MemoryProvider,
  normalizePreCompressEvidence,
  type PreCompressOptions,
  type SessionSwitchOptions,
  type ToolSchema,
} from "../../../src/provider/mod.ts";
import { join, resolve } from "../../../src/provider/_bundled.ts";
import { createHash } from "node:crypto";

// The provider contract, so the provider's API can be named from this entry alone.
export type {
  AgentContext,
  ChatMessage,
  ConfigField,
  DelegationOptions,
  DrainResult,
  HermesConfig,
  InitializeOptions,
  MaybePromise,
  MemoryEvictOptions,
  MemoryProvider,
  MemoryTarget,
  MemoryWriteAction,
  MemoryWriteMetadata,
  PreCompressOptions,
  PrefetchOptions,
  RecallStatus,
  SessionSwitchOptions,
  SyncTurnOptions,
  ToolCallOptions,
  ToolSchema,
  TurnAuthor,
  TurnStartOptions,
  UserNoticeCallback,
} from "../../../src/provider/mod.ts";

/** Options of the {@linkcode ArchiveMemoryProvider} constructor. */
export interface ArchiveProviderOptions {
  /**
   * The profile home the archive lives under; `initialize` may set it.
   *
   * @default {getHermesHome() at each checkpoint}
   */
  hermesHome?: string;
  /**
   * The session whose transcript is archived; `initialize` and
   * `onSessionSwitch` update it.
   *
   * @default {""}
   */
  sessionId?: string;
}

/** Options of {@linkcode ArchiveMemoryProvider.readArchive}. */
export interface ReadArchiveOptions {
  /**
   * The session to read.
   *
   * @default {the current session}
   */
  sessionId?: string;
}

/** One archived message, as stored on one line of `transcript.jsonl`. */
export interface ArchivedMessage {
  /** `<sha256 of role and content>:<occurrence number>`. */
  key: string;
  /** `user` or `assistant`. */
  role: string;
  /** The message content, as the agent had it. */
  content: unknown;
  /** When the line was written (ISO 8601). */
  archivedAt: string;
}

/** The registration context a provider's `register` receives. */
export interface ArchiveRegistrationContext {
  /** Captures the provider instance (the last call wins). */
  registerMemoryProvider(provider: MemoryProvider): unknown;
}

/** The archive's digests in order, counts per hex digest, bytes of whole lines. */
interface ArchiveIndex {
  digests: DigestSequence;
  counts: Map<string, number>;
  size: number;
}

const ARCHIVE_FILE = "transcript.jsonl";
const WRITE_CHUNK_BYTES = 64 * 1024;
const NEWLINE = 0x0a;

/**
 * The reference checkpointing provider (checkpoint API version 2). It has
 * no tools and recalls nothing; it only keeps a durable, de-duplicated
 * archive of the conversation before it is compressed.
 *
 * @example Checkpointing a transcript
 * ```ts ignore
 * import { ArchiveMemoryProvider } from "./mod.ts";
 * const provider = new ArchiveMemoryProvider({ hermesHome: "/tmp/hermes" });
 * await provider.initialize("s1", {});
 * await provider.onPreCompress([{ role: "user", content: "hi" }], {
 *   requireCheckpoint: true,
 * });
 * ```
 */
export class ArchiveMemoryProvider extends MemoryProvider {
  /** This provider implements pre-compress checkpoint API version 2. */
  override readonly preCompressCheckpointApiVersion: number = 2;
  /** It records no turns: no transcript on every turn. */
  override readonly syncTurnTakesMessages: boolean = false;

  #hermesHome: string | undefined;
  #sessionId: string;
  #indexes = new Map<string, ArchiveIndex>();
  #queues = new Map<string, Promise<unknown>>();

  /** Builds the provider with the profile home and session, when known up front. */
  constructor(options: ArchiveProviderOptions = {}) {
    super();
    this.#hermesHome = options.hermesHome;
    this.#sessionId = options.sessionId ?? "";
  }

  /** The provider's name: `archive`. */
  get name(): string {
    return "archive";
  }

  /** Always usable: it needs only the profile home. */
  isAvailable(): boolean {
    return true;
  }

  /** Binds the session and the profile home (`options.hermesHome`). */
  initialize(sessionId: string, options: InitializeOptions): void {
    this.#sessionId = sessionId ?? "";
    if (options?.hermesHome) this.#hermesHome = options.hermesHome;
  }

  /** No tools: `[]`. */
  getToolSchemas(): ToolSchema[] {
    return [];
  }

  /** Rebinds to the new session; later checkpoints go to its archive. */
  override onSessionSwitch(
    newSessionId: string,
    _options: SessionSwitchOptions,
  ): void {
    if (newSessionId) this.#sessionId = newSessionId;
  }

  /**
   * Archives the transcript's user and assistant text durably and returns a
   * one-line note naming the archive; throws unless every message is on disk
   * and synced (required or not: this is a version 2 provider).
   */
  override async onPreCompress(
    messages: ChatMessage[],
    _options: PreCompressOptions,
  ): Promise<string> {
    const path = this.archivePath();
    try {
      const total = await this.#serialized(
        path,
        () => this.#checkpoint(path, messages),
      );
      return total === 0
        ? ""
        : `Transcript archived before compression: ${total} messages in ${path}`;
    } catch (error) {
      throw new Error(
        `Archive checkpoint to ${path} failed: ${
          error instanceof Error ? error.message : String(error)
        }`,
        { cause: error },
      );
    }
  }

  /**
   * The absolute archive file of a session (default: the current one):
   * `<HERMES_HOME>/archive/<session id with / \ .. as _>/transcript.jsonl`.
   */
  archivePath(sessionId: string = this.#sessionId): string {
    const home = resolve(this.#hermesHome ?? getHermesHome());
    return join(home, "archive", sessionSegment(sessionId), ARCHIVE_FILE);
  }

  /** Reads a session's archived messages in order (`[]` when none), ignoring a torn last line. */
  async readArchive(
    options: ReadArchiveOptions = {},
  ): Promise<ArchivedMessage[]> {
    const path = this.archivePath(options.sessionId ?? this.#sessionId);
    let file: Deno.FsFile;
    try {
      file = await Deno.open(path, { read: true });
    } catch (error) {
      if (error instanceof Deno.errors.NotFound) return [];
      throw error;
    }
    const out: ArchivedMessage[] = [];
    try {
      await scanLines(file, path, (record) =>
        out.push({
          key: record.key,
          role: record.role,
          content: record.content,
          archivedAt: record.archived_at,
        }));
    } finally {
      file.close();
    }
    return out;
  }

  async #serialized<T>(path: string, fn: () => Promise<T>): Promise<T> {
    const previous = this.#queues.get(path) ?? Promise.resolve();
    const run = previous.catch(() => {}).then(fn);
    const tail = run.catch(() => {});
    this.#queues.set(path, tail);
    try {
      return await run;
    } finally {
      if (this.#queues.get(path) === tail) this.#queues.delete(path);
    }
  }

  async #checkpoint(path: string, messages: ChatMessage[]): Promise<number> {
    // The framework's evidence rule, applied here too: a provider may be
    // handed the raw transcript.
    const entries = normalizePreCompressEvidence(messages);
    const digests = new DigestSequence();
    for (const message of entries) digests.push(messageDigest(message));
    const directory = join(path, "..");
    // In a sandbox the host created archive/ (its data directory) and made
    // it durable; the profile home itself is out of the provider's reach.
    const rootCreated = await ensureDirectory(join(directory, ".."));
    const created = await ensureDirectory(directory);
    const file = await Deno.open(path, {
      read: true,
      write: true,
      create: true,
      mode: 0o600,
    });
    try {
      await file.lock(true);
      try {
        const index = await this.#loadIndex(path, file);
        const from = firstNew(digests, index.digests);
        if (from < entries.length) {
          const now = new Date().toISOString();
          const counts = index.counts;
          const lines = function* (): Generator<string> {
            for (let i = from; i < entries.length; i++) {
              const message = entries[i]!;
              const digest = digests.hex(i);
              const n = counts.get(digest) ?? 0;
              counts.set(digest, n + 1);
              yield JSON.stringify({
                key: `${digest}:${n}`,
                role: String(message.role),
                content: message.content ?? null,
                archived_at: now,
              }) + "\n";
            }
          };
          await file.seek(index.size, Deno.SeekMode.Start);
          index.size += await appendLines(file, lines());
          for (let i = from; i < entries.length; i++) {
            index.digests.pushFrom(digests, i);
          }
        }
        await file.syncData();
        if (created) {
          // Make the new directory entries durable too (session dir, archive
          // dir, and the profile home when archive/ is new).
          await syncDirectory(directory);
          await syncDirectory(join(directory, ".."));
          if (rootCreated) await syncDirectory(join(directory, "..", ".."));
        }
        return index.digests.length;
      } finally {
        await file.unlock().catch(() => {});
      }
    } catch (error) {
      this.#indexes.delete(path);
      throw error;
    } finally {
      file.close();
    }
  }

  async #loadIndex(path: string, file: Deno.FsFile): Promise<ArchiveIndex> {
    const size = (await file.stat()).size;
    const cached = this.#indexes.get(path);
    if (cached && cached.size === size) return cached;
    await file.seek(0, Deno.SeekMode.Start);
    const index: ArchiveIndex = {
      digests: new DigestSequence(),
      counts: new Map(),
      size: 0,
    };
    index.size = await scanLines(file, path, (record) => {
      const digest = record.key.slice(0, record.key.lastIndexOf(":"));
      if (!/^[0-9a-f]{64}$/.test(digest)) return;
      index.digests.push(hexBytes(digest));
      index.counts.set(digest, (index.counts.get(digest) ?? 0) + 1);
    });
    if (index.size < size) {
      // A torn tail from an interrupted append: cut it before appending.
      await file.truncate(index.size);
      await file.syncData();
    }
    this.#indexes.set(path, index);
    return index;
  }
}

/** The plugin's entry point: registers one {@linkcode ArchiveMemoryProvider}. */
export function register(ctx: ArchiveRegistrationContext): void {
  ctx.registerMemoryProvider(new ArchiveMemoryProvider());
}

interface StoredRecord {
  key: string;
  role: string;
  content: unknown;
  archived_at: string;
}

/** SHA-256 of a message's role and content (the key's first part). */
function messageDigest(message: ChatMessage): Uint8Array {
  const role = String(message.role);
  const body = typeof message.content === "string"
    ? message.content
    : JSON.stringify(message.content ?? null);
  return createHash("sha256").update(role).update("\u0000").update(body)
    .digest();
}

function hexBytes(hex: string): Uint8Array {
  const out = new Uint8Array(32);
  for (let i = 0; i < 32; i++) {
    out[i] = Number.parseInt(hex.slice(i * 2, i * 2 + 2), 16);
  }
  return out;
}

/** A growable sequence of 32-byte digests in one buffer. */
class DigestSequence {
  #bytes = new Uint8Array(32 * 64);
  length = 0;

  push(digest: Uint8Array): void {
    this.#grow();
    this.#bytes.set(digest.subarray(0, 32), this.length * 32);
    this.length++;
  }

  pushFrom(other: DigestSequence, index: number): void {
    this.push(other.#bytes.subarray(index * 32, index * 32 + 32));
  }

  equals(i: number, other: DigestSequence, j: number): boolean {
    const a = this.#bytes;
    const b = other.#bytes;
    const x = i * 32;
    const y = j * 32;
    for (let k = 0; k < 32; k++) if (a[x + k] !== b[y + k]) return false;
    return true;
  }

  hex(i: number): string {
    return Array.from(
      this.#bytes.subarray(i * 32, i * 32 + 32),
      (b) => b.toString(16).padStart(2, "0"),
    ).join("");
  }

  #grow(): void {
    if ((this.length + 1) * 32 <= this.#bytes.length) return;
    const next = new Uint8Array(this.#bytes.length * 2);
    next.set(this.#bytes);
    this.#bytes = next;
  }
}

/**
 * Where the new part of a transcript starts: after the longest common prefix
 * with the archive, then after the longest overlap of the rest with the
 * archive's end (a retry, a compaction's kept tail), by Knuth–Morris–Pratt.
 */
function firstNew(transcript: DigestSequence, archive: DigestSequence): number {
  let p = 0;
  while (
    p < transcript.length && p < archive.length &&
    transcript.equals(p, archive, p)
  ) p++;
  if (p === archive.length || p === transcript.length) return p;
  // The longest prefix of transcript[p..] that is a suffix of archive[p..].
  const m = Math.min(transcript.length - p, archive.length - p);
  const fail = new Int32Array(m);
  for (let i = 1, k = 0; i < m; i++) {
    while (k > 0 && !transcript.equals(p + i, transcript, p + k)) {
      k = fail[k - 1]!;
    }
    if (transcript.equals(p + i, transcript, p + k)) k++;
    fail[i] = k;
  }
  let matched = 0;
  for (let j = archive.length - m; j < archive.length; j++) {
    while (matched > 0 && !archive.equals(j, transcript, p + matched)) {
      matched = fail[matched - 1]!;
    }
    if (archive.equals(j, transcript, p + matched)) matched++;
    if (matched === m && j < archive.length - 1) matched = fail[matched - 1]!;
  }
  return p + matched;
}

// Writes the lines through a fixed 64 KiB buffer, so a large checkpoint is
// never held in memory twice; returns the bytes written. A crash mid-way
// leaves a torn last line, which the next checkpoint cuts off.
async function appendLines(
  file: Deno.FsFile,
  lines: Iterable<string>,
): Promise<number> {
  const encoder = new TextEncoder();
  const buffer = new Uint8Array(WRITE_CHUNK_BYTES);
  let used = 0;
  let written = 0;
  const writeAll = async (bytes: Uint8Array): Promise<void> => {
    let offset = 0;
    while (offset < bytes.length) {
      offset += await file.write(bytes.subarray(offset));
    }
    written += bytes.length;
  };
  for (const line of lines) {
    let bytes = encoder.encode(line);
    while (bytes.length > 0) {
      const n = Math.min(bytes.length, buffer.length - used);
      buffer.set(bytes.subarray(0, n), used);
      used += n;
      bytes = bytes.subarray(n);
      if (used === buffer.length) {
        await writeAll(buffer);
        used = 0;
      }
    }
  }
  if (used > 0) await writeAll(buffer.subarray(0, used));
  return written;
}

function parseRecord(line: string): StoredRecord | undefined {
  try {
    const record = JSON.parse(line) as StoredRecord;
    return record && typeof record.key === "string" ? record : undefined;
  } catch {
    return undefined;
  }
}

// Calls `onRecord` per whole line, reading 64 KiB chunks; returns the bytes
// of whole lines (a torn last line is ignored).
async function scanLines(
  file: Deno.FsFile,
  path: string,
  onRecord: (record: StoredRecord) => void,
): Promise<number> {
  const decoder = new TextDecoder();
  const chunk = new Uint8Array(WRITE_CHUNK_BYTES);
  let carry = new Uint8Array(0);
  let consumed = 0;
  let skipped = 0;
  for (;;) {
    const n = await file.read(chunk);
    if (n === null) break;
    let data: Uint8Array = chunk.subarray(0, n);
    if (carry.length > 0) {
      const joined = new Uint8Array(carry.length + n);
      joined.set(carry);
      joined.set(data, carry.length);
      data = joined;
    }
    let start = 0;
    for (;;) {
      const end = data.indexOf(NEWLINE, start);
      if (end === -1) break;
      const line = decoder.decode(data.subarray(start, end));
      consumed += end + 1 - start;
      start = end + 1;
      if (line.trim() === "") continue;
      const record = parseRecord(line);
      if (record) onRecord(record);
      else skipped++;
    }
    carry = data.slice(start);
  }
  if (skipped > 0) {
    log("warn", `Skipped ${skipped} unreadable line(s) in ${path}`);
  }
  return consumed;
}

function sessionSegment(sessionId: string): string {
  const raw = sessionId ? String(sessionId) : "no-session";
  const segment = raw.replace(/\.\.|[/\\]/g, "_");
  return segment === "." || segment === "" ? "_" : segment;
}

async function ensureDirectory(directory: string): Promise<boolean> {
  try {
    const info = await Deno.lstat(directory);
    if (info.isSymlink || !info.isDirectory) {
      throw new Error(`${directory} is not a real directory`);
    }
    return false;
  } catch (error) {
    if (!(error instanceof Deno.errors.NotFound)) throw error;
  }
  await Deno.mkdir(directory, { recursive: true, mode: 0o700 });
  return true;
}

async function syncDirectory(directory: string): Promise<void> {
  if (Deno.build.os === "windows") return;
  let dir: Deno.FsFile | undefined;
  try {
    dir = await Deno.open(directory, { read: true });
    await dir.syncData();
  } catch {
    // Not every platform can sync a directory; the file itself is synced.
  } finally {
    dir?.close();
  }
}
