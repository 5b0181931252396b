/**
 * `archive`: the reference checkpointing memory provider.
 *
 * Before every lossy compression it archives the normalized transcript
 * (user and assistant text) to
 * `$HERMES_HOME/archive/<session>/transcript.jsonl` and implements
 * pre-compress checkpoint API version 2: a normal return means the archive
 * is durably on disk (appended, then `fsync`ed); any failure throws.
 *
 * Checkpoints are idempotent. Each message is keyed by the SHA-256 of its
 * role and content plus its occurrence number among identical messages of
 * the same transcript; keys already archived are skipped, so a retry, or a
 * transcript that grew since the last checkpoint, never duplicates a line.
 * The file is append-only JSON Lines: a write torn by a crash leaves at most
 * one partial last line, which readers ignore and the next checkpoint cuts
 * off before appending.
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
  type PreCompressOptions,
  type SessionSwitchOptions,
  type ToolSchema,
} from "@hermes/memory/provider";
import { createHash } from "node:crypto";
import { join, resolve } from "node:path";

// The provider contract (the framework's `MemoryProvider` and the types its
// methods take and return), so that the provider's API can be named from
// `@hermes/memory/archive` alone.
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
} from "@hermes/memory/provider";

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
  /**
   * Captures the provider instance (the last call wins).
   *
   * @param provider The provider.
   */
  registerMemoryProvider(provider: MemoryProvider): unknown;
}

interface ArchiveIndex {
  keys: Set<string>;
  size: number;
}

const ARCHIVE_FILE = "transcript.jsonl";
/** Lines are written in chunks of about this many bytes. */
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

  #hermesHome: string | undefined;
  #sessionId: string;
  #indexes = new Map<string, ArchiveIndex>();
  #queues = new Map<string, Promise<unknown>>();

  /**
   * Builds the provider.
   *
   * @param options The profile home and session, when known up front.
   */
  constructor(options: ArchiveProviderOptions = {}) {
    super();
    this.#hermesHome = options.hermesHome;
    this.#sessionId = options.sessionId ?? "";
  }

  /** The provider's name: `archive`. */
  get name(): string {
    return "archive";
  }

  /**
   * Always usable: it needs only the profile home.
   *
   * @returns `true`.
   */
  isAvailable(): boolean {
    return true;
  }

  /**
   * Binds the session and the profile home.
   *
   * @param sessionId The session id.
   * @param options What the host knows; `hermesHome` is used.
   */
  initialize(sessionId: string, options: InitializeOptions): void {
    this.#sessionId = sessionId ?? "";
    if (options?.hermesHome) this.#hermesHome = options.hermesHome;
  }

  /**
   * No tools.
   *
   * @returns `[]`.
   */
  getToolSchemas(): ToolSchema[] {
    return [];
  }

  /**
   * Rebinds to the new session; later checkpoints go to its archive.
   *
   * @param newSessionId The session switched to.
   * @param _options Unused.
   */
  override onSessionSwitch(
    newSessionId: string,
    _options: SessionSwitchOptions,
  ): void {
    if (newSessionId) this.#sessionId = newSessionId;
  }

  /**
   * Archives the transcript's user and assistant text durably. Returns only
   * once every message is on disk and synced; throws otherwise (whether or
   * not a checkpoint is required: this is a version 2 provider).
   *
   * @param messages The normalized evidence (raw messages are normalized
   * again: system, tool and summary messages are skipped).
   * @param _options Whether the host requires the checkpoint.
   * @returns A one-line note naming the archive, for the summary prompt.
   * @throws {Error} When the archive could not be committed.
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
   * The archive file of a session:
   * `<HERMES_HOME>/archive/<session segment>/transcript.jsonl`, where the
   * segment is the session id (or `no-session`) with `/`, `\` and `..`
   * replaced by `_`.
   *
   * @param sessionId The session (default: the current one).
   * @returns An absolute path.
   */
  archivePath(sessionId: string = this.#sessionId): string {
    const home = resolve(this.#hermesHome ?? getHermesHome());
    return join(home, "archive", sessionSegment(sessionId), ARCHIVE_FILE);
  }

  /**
   * Reads a session's archive, ignoring a torn last line.
   *
   * @param options The session (default: the current one).
   * @returns The archived messages in archive order (`[]` when none).
   */
  async readArchive(
    options: ReadArchiveOptions = {},
  ): Promise<ArchivedMessage[]> {
    const path = this.archivePath(options.sessionId ?? this.#sessionId);
    let bytes: Uint8Array;
    try {
      bytes = await Deno.readFile(path);
    } catch (error) {
      if (error instanceof Deno.errors.NotFound) return [];
      throw error;
    }
    const out: ArchivedMessage[] = [];
    for (const record of parseLines(bytes, path).records) {
      out.push({
        key: record.key,
        role: record.role,
        content: record.content,
        archivedAt: record.archived_at,
      });
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
    const entries = keyedEntries(messages);
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
        const fresh = entries.filter((entry) => !index.keys.has(entry.key));
        if (fresh.length > 0) {
          const now = new Date().toISOString();
          await file.seek(index.size, Deno.SeekMode.Start);
          index.size += await appendLines(
            file,
            fresh.map((entry) =>
              JSON.stringify({
                key: entry.key,
                role: entry.role,
                content: entry.content,
                archived_at: now,
              }) + "\n"
            ),
          );
          for (const entry of fresh) index.keys.add(entry.key);
        }
        await file.syncData();
        if (created) {
          // Make the new directory entries durable too (session dir, archive
          // dir, and the profile home when archive/ is new).
          await syncDirectory(directory);
          await syncDirectory(join(directory, ".."));
          if (rootCreated) await syncDirectory(join(directory, "..", ".."));
        }
        return index.keys.size;
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
    const bytes = new Uint8Array(size);
    await file.seek(0, Deno.SeekMode.Start);
    let read = 0;
    while (read < size) {
      const n = await file.read(bytes.subarray(read));
      if (n === null) break;
      read += n;
    }
    const parsed = parseLines(bytes.subarray(0, read), path);
    if (parsed.validLength < size) {
      // A torn tail from an interrupted append: cut it before appending.
      await file.truncate(parsed.validLength);
      await file.syncData();
    }
    const index = {
      keys: new Set(parsed.records.map((r) => r.key)),
      size: parsed.validLength,
    };
    this.#indexes.set(path, index);
    return index;
  }
}

/**
 * The plugin's entry point: registers one {@linkcode ArchiveMemoryProvider}.
 *
 * @param ctx The registration context.
 *
 * @example Registering with a collector
 * ```ts no-assert
 * import { register } from "./mod.ts";
 * register({ registerMemoryProvider: () => {} });
 * ```
 */
export function register(ctx: ArchiveRegistrationContext): void {
  ctx.registerMemoryProvider(new ArchiveMemoryProvider());
}

interface KeyedEntry {
  key: string;
  role: string;
  content: unknown;
}

interface StoredRecord {
  key: string;
  role: string;
  content: unknown;
  archived_at: string;
}

function keyedEntries(messages: readonly unknown[]): KeyedEntry[] {
  const seen = new Map<string, number>();
  const out: KeyedEntry[] = [];
  for (const message of evidence(messages)) {
    const role = String(message.role);
    const body = typeof message.content === "string"
      ? message.content
      : JSON.stringify(message.content ?? null);
    const digest = createHash("sha256").update(role).update("\u0000").update(
      body,
    ).digest("hex");
    const occurrence = seen.get(digest) ?? 0;
    seen.set(digest, occurrence + 1);
    out.push({
      key: `${digest}:${occurrence}`,
      role,
      content: message.content ?? null,
    });
  }
  return out;
}

/**
 * The same reduction as the framework's evidence normalization, repeated
 * here because a provider may be called with a raw transcript: only user and
 * assistant messages, no compression summaries, no tool-call-only turns.
 */
function evidence(messages: readonly unknown[]): ChatMessage[] {
  if (!Array.isArray(messages)) return [];
  const out: ChatMessage[] = [];
  for (const m of messages) {
    if (m === null || typeof m !== "object" || Array.isArray(m)) continue;
    const message = m as ChatMessage;
    if (message.role !== "user" && message.role !== "assistant") continue;
    if (truthy(message._compressed_summary)) continue;
    if (message.role === "assistant" && truthy(message.tool_calls)) {
      const c = message.content;
      if (typeof c === "string" ? c.trim() === "" : !truthy(c)) continue;
    }
    out.push(message);
  }
  return out;
}

function truthy(value: unknown): boolean {
  if (Array.isArray(value)) return value.length > 0;
  if (value !== null && typeof value === "object") {
    return Object.keys(value).length > 0;
  }
  return Boolean(value);
}

/**
 * Writes the lines at the file's position through a fixed 64 KiB buffer, so
 * a large checkpoint never holds a second full copy in memory. Chunks do not
 * follow line boundaries: a crash between two writes leaves a partial last
 * line, which readers ignore and the next checkpoint cuts off.
 *
 * @returns The number of bytes written.
 */
async function appendLines(
  file: Deno.FsFile,
  lines: readonly string[],
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

function parseLines(
  bytes: Uint8Array,
  path: string,
): { records: StoredRecord[]; validLength: number } {
  const records: StoredRecord[] = [];
  const decoder = new TextDecoder();
  let start = 0;
  let skipped = 0;
  for (;;) {
    const end = bytes.indexOf(NEWLINE, start);
    if (end === -1) break;
    const line = decoder.decode(bytes.subarray(start, end));
    start = end + 1;
    if (line.trim() === "") continue;
    try {
      const record = JSON.parse(line) as StoredRecord;
      if (record && typeof record.key === "string") records.push(record);
      else skipped++;
    } catch {
      skipped++;
    }
  }
  if (skipped > 0) {
    log("warn", `Skipped ${skipped} unreadable line(s) in ${path}`);
  }
  return { records, validLength: start };
}

function sessionSegment(sessionId: string): string {
  const raw = sessionId ? String(sessionId) : "no-session";
  const segment = raw.replaceAll("..", "_").replaceAll("/", "_").replaceAll(
    "\\",
    "_",
  );
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
