// The built-in `MEMORY.md` / `USER.md` store of one session: every mutation
// locks, re-reads, validates and atomically replaces the file, so concurrent
// sessions never lose each other's entries. Results keep Hermes' keys and order.

import { withFileLock } from "../io/file_lock.ts";
import { getHermesHome } from "../profile/hermes_home.ts";
import { log } from "../core/log.ts";
import type { HermesConfig, MemoryTarget } from "../core/memory_provider.ts";
import {
  codePointLength,
  dedupeEntries,
  DEFAULT_MEMORY_CHAR_LIMIT,
  DEFAULT_USER_CHAR_LIMIT,
  entriesSize,
  formatShortUsage,
  formatThousands,
  formatUsage,
  memoryFileName,
  parseEntries,
  previewEntry,
  pythonStrip,
  renderMemoryBlock,
  splitEntries,
} from "./memory_format.ts";
import { sanitizeMemoryEntry, scanMemoryContent } from "./threat_scan.ts";
import {
  applyBatch,
  checkBatchArguments,
  findCandidates,
} from "./_memory_batch.ts";
import {
  driftResult,
  hasDrift,
  type MemoryFilePaths,
  memoryFilePaths,
  readMemoryConfig,
  readMemoryFile,
  TARGETS,
  writeMemoryEntries,
} from "./memory_files.ts";

/**
 * A result of a store operation or of the `memory` tool: a JSON object with
 * Hermes' keys (`success`, `error`, `usage`, `entry_count`, …) in Hermes'
 * order.
 *
 * @category Built-in store
 */
export type MemoryResult = Record<string, unknown>;

/** Options of {@linkcode MemoryStore}. */
interface MemoryStoreOptions {
  /** The profile home holding `memories/` (default: `getHermesHome()` on every call). */
  hermesHome?: string;
  /** The budget of `MEMORY.md` in characters (default `2200`). */
  memoryCharLimit?: number;
  /** The budget of `USER.md` in characters (default `1375`). */
  userCharLimit?: number;
  /** Whether `MEMORY.md` is enabled; writes to a disabled target are refused (default `true`). */
  memoryEnabled?: boolean;
  /** Whether `USER.md` is enabled; writes to a disabled target are refused (default `true`). */
  userProfileEnabled?: boolean;
  /** `memory.write_approval`: `memory` tool writes need approval; the store's own methods write directly (default `false`). */
  writeApproval?: boolean;
}

const CONSOLIDATION_FAILURE_LIMIT = 3;

const SUCCESS_NOTE =
  "Write saved. This update is complete \u2014 do not repeat it.";
const BATCH_SUFFIX = " No operations were applied (batch is all-or-nothing).";

/**
 * The built-in `MEMORY.md` / `USER.md` store of one agent session. Call
 * {@linkcode MemoryStore.loadFromDisk} once at session start; mutations
 * resolve to result objects and throw only when the file cannot be written.
 *
 * @category Built-in store
 */
export class MemoryStore {
  #hermesHome: string | undefined;
  #limits: Record<MemoryTarget, number>;
  #enabled: Record<MemoryTarget, boolean>;
  #entries: Record<MemoryTarget, string[]> = { memory: [], user: [] };
  #snapshot: Record<MemoryTarget, string> = { memory: "", user: "" };
  #failures = 0;
  #writeApproval: boolean;

  /**
   * Creates a store; nothing is read until {@linkcode MemoryStore.loadFromDisk}.
   *
   * @throws {RangeError} When a limit is not an integer (zero or less is
   * accepted, as in Hermes: every write is then over budget).
   */
  constructor(options: MemoryStoreOptions = {}) {
    this.#hermesHome = options.hermesHome;
    this.#limits = {
      memory: checkLimit(
        "memoryCharLimit",
        options.memoryCharLimit ?? DEFAULT_MEMORY_CHAR_LIMIT,
      ),
      user: checkLimit(
        "userCharLimit",
        options.userCharLimit ?? DEFAULT_USER_CHAR_LIMIT,
      ),
    };
    this.#enabled = {
      memory: options.memoryEnabled ?? true,
      user: options.userProfileEnabled ?? true,
    };
    this.#writeApproval = options.writeApproval ?? false;
  }

  /** Builds a store, not loaded yet, from a parsed `config.yaml`'s `memory.*` limits and flags. */
  static fromConfig(
    config: HermesConfig | undefined,
    options: { hermesHome?: string } = {},
  ): MemoryStore {
    return new MemoryStore({
      hermesHome: options.hermesHome,
      ...readMemoryConfig(config),
    });
  }

  /** Whether `memory` tool writes need approval (`memory.write_approval`). */
  get writeApproval(): boolean {
    return this.#writeApproval;
  }

  /** The absolute profile home in use now (the option, else resolved on every call). */
  hermesHome(): string {
    return this.#hermesHome ?? getHermesHome();
  }

  /** The budget of a target in characters. */
  charLimit(target: MemoryTarget): number {
    return this.#limits[norm(target)];
  }

  /** Whether a target is enabled (writes to a disabled one are refused). */
  isTargetEnabled(target: MemoryTarget): boolean {
    return this.#enabled[norm(target)];
  }

  /** The directory and file paths in use now (the home resolved on every call unless fixed). */
  paths(): MemoryFilePaths {
    return memoryFilePaths(this.hermesHome());
  }

  /** A target's entries straight from disk, no lock (`[]` when missing, `null` when unreadable). */
  async readDiskEntries(target: MemoryTarget): Promise<string[] | null> {
    const file = await readMemoryFile(this.paths()[norm(target)]);
    if (file.state === "unreadable") return null;
    return file.state === "ok" ? parseEntries(file.text) : [];
  }

  /** The live entries of a target, as of this store's last load or write. */
  entries(target: MemoryTarget): string[] {
    return [...this.#entries[norm(target)]];
  }

  /** The live size of a target: its entries' serialised length in characters. */
  size(target: MemoryTarget): number {
    return entriesSize(this.#entries[norm(target)]);
  }

  /** The system-prompt block of a target frozen at the last {@linkcode MemoryStore.loadFromDisk}. */
  formatForSystemPrompt(target: MemoryTarget): string {
    return this.#snapshot[norm(target)];
  }

  /** How many consolidation failures this turn has returned so far. */
  get consolidationFailures(): number {
    return this.#failures;
  }

  /** Starts a new user turn: resets the per-turn consolidation-failure count. */
  resetTurnFailures(): void {
    this.#failures = 0;
  }

  /**
   * Reads both files (unreadable: no entries) and freezes the system-prompt
   * snapshot, poisoned entries as `[BLOCKED: …]`. No lock: writes are atomic
   * renames. `create: false` leaves a missing folder missing.
   */
  async loadFromDisk(options: { create?: boolean } = {}): Promise<void> {
    const paths = this.paths();
    if (options.create !== false) {
      await Deno.mkdir(paths.dir, { recursive: true }).catch(() => {});
    }
    for (const target of TARGETS) {
      const file = await readMemoryFile(paths[target]);
      if (file.state === "unreadable") {
        log(
          "warn",
          `Memory file ${paths[target]} could not be read: ${file.reason}`,
        );
      }
      const entries = file.state === "ok" ? parseEntries(file.text) : [];
      this.#entries[target] = entries;
      const limit = this.#limits[target];
      const size = entriesSize(entries);
      if (size > limit) {
        log(
          "warn",
          `${memoryFileName(target)} is over its budget (${
            formatShortUsage(size, limit)
          } chars); new entries will be refused until it is consolidated`,
        );
      }
      this.#snapshot[target] = renderMemoryBlock(
        target,
        entries.map((e) => sanitizeMemoryEntry(e, memoryFileName(target))),
        limit,
      );
    }
  }

  /**
   * Appends an entry (threat-scanned; an exact duplicate is a no-op; over
   * budget is a consolidation failure). Throws when the file cannot be written.
   */
  async add(target: MemoryTarget, content: string): Promise<MemoryResult> {
    const t = norm(target);
    if (!this.#enabled[t]) return disabledResult(t);
    const text = pythonStrip(content);
    if (text === "") {
      return { success: false, error: "Content cannot be empty." };
    }
    const blocked = scanMemoryContent(text);
    if (blocked !== null) return { success: false, error: blocked };
    return await this.#locked(t, false, (entries) => {
      if (entries.includes(text)) {
        return this.#success(t, "Entry already exists (no duplicate added).");
      }
      const limit = this.#limits[t];
      const current = entriesSize(entries);
      if (entriesSize([...entries, text]) > limit) {
        return this.#failure({
          success: false,
          error: `Memory at ${formatThousands(current)}/${
            formatThousands(limit)
          } chars. Adding this entry (${
            codePointLength(text)
          } chars) would exceed the limit. Consolidate now: use 'replace' to merge overlapping entries into shorter ones or 'remove' stale or less important entries (see current_entries below), then retry this add \u2014 all in this turn.`,
          current_entries: this.sanitizedEntries(t),
          usage: formatShortUsage(current, limit),
        });
      }
      return new Commit(
        [...entries, text],
        () => this.#success(t, "Entry added."),
      );
    });
  }

  /**
   * Overwrites the one entry containing `oldText` (case-sensitive) with
   * `newContent`; success carries `replaced_entry`. Throws when the file
   * cannot be written.
   */
  async replace(
    target: MemoryTarget,
    oldText: string,
    newContent: string,
  ): Promise<MemoryResult> {
    const t = norm(target);
    if (!this.#enabled[t]) return disabledResult(t);
    const old = pythonStrip(oldText);
    const text = pythonStrip(newContent);
    if (old === "") {
      return { success: false, error: "old_text cannot be empty." };
    }
    if (text === "") {
      return {
        success: false,
        error: "new_content cannot be empty. Use 'remove' to delete entries.",
      };
    }
    const blocked = scanMemoryContent(text);
    if (blocked !== null) return { success: false, error: blocked };
    return await this.#locked(t, true, (entries) => {
      const match = this.#match(t, entries, old, "replace");
      if ("result" in match) return match.result;
      const previous = entries[match.index] as string;
      const next = [...entries];
      next[match.index] = text;
      const limit = this.#limits[t];
      const newSize = entriesSize(next);
      if (newSize > limit) {
        return this.#failure({
          success: false,
          error: `Replacement would put memory at ${formatThousands(newSize)}/${
            formatThousands(limit)
          } chars. Shorten the new content, or 'remove' other stale or less important entries to make room (see current_entries below), then retry \u2014 all in this turn.`,
          current_entries: this.sanitizedEntries(t),
          usage: formatShortUsage(entriesSize(entries), limit),
        });
      }
      return new Commit(
        next,
        () => this.#success(t, "Entry replaced.", { replaced_entry: previous }),
      );
    });
  }

  /**
   * Deletes the one entry containing `oldText` (case-sensitive); success
   * carries `removed_entry`. Throws when the file cannot be written.
   */
  async remove(target: MemoryTarget, oldText: string): Promise<MemoryResult> {
    const t = norm(target);
    if (!this.#enabled[t]) return disabledResult(t);
    const old = pythonStrip(oldText);
    if (old === "") {
      return { success: false, error: "old_text cannot be empty." };
    }
    return await this.#locked(t, true, (entries) => {
      const match = this.#match(t, entries, old, "remove");
      if ("result" in match) return match.result;
      const previous = entries[match.index] as string;
      const next = entries.filter((_, i) => i !== match.index);
      return new Commit(
        next,
        () => this.#success(t, "Entry removed.", { removed_entry: previous }),
      );
    });
  }

  /**
   * Applies add/replace/remove operations all-or-nothing, each seeing the
   * earlier ones; only the final size is checked. Success carries
   * `replaced_entries` / `removed_entries` by 1-based index. Throws when the
   * file cannot be written.
   */
  async applyOperations(
    target: MemoryTarget,
    operations: readonly unknown[],
  ): Promise<MemoryResult> {
    const t = norm(target);
    if (!this.#enabled[t]) return disabledResult(t);
    const checked = checkBatchArguments(operations);
    if ("result" in checked) return checked.result;
    const { ops } = checked;
    return await this.#locked(t, true, (entries) => {
      const limit = this.#limits[t];
      const usage = formatShortUsage(entriesSize(entries), limit);
      const outcome = applyBatch(entries, ops);
      if ("result" in outcome) return outcome.result;
      if ("abort" in outcome) {
        return this.#failure({
          success: false,
          error: outcome.abort + BATCH_SUFFIX,
          current_entries: this.sanitizedEntries(t),
          usage,
        });
      }
      const { work, replaced, removed } = outcome;
      const newSize = entriesSize(work);
      if (newSize > limit) {
        return this.#failure({
          success: false,
          error:
            `After applying all ${ops.length} operations, memory would be at ${
              formatThousands(newSize)
            }/${
              formatThousands(limit)
            } chars -- over the limit. Remove or shorten more entries in the same batch (see current_entries below), then retry.`,
          current_entries: this.sanitizedEntries(t),
          usage,
        });
      }
      const extras: MemoryResult = {};
      if (Object.keys(replaced).length > 0) extras.replaced_entries = replaced;
      if (Object.keys(removed).length > 0) extras.removed_entries = removed;
      return new Commit(
        work,
        () => this.#success(t, `Applied ${ops.length} operation(s).`, extras),
      );
    });
  }

  /** The live entries as error results show them: poisoned ones as `[BLOCKED: …]`. */
  sanitizedEntries(target: MemoryTarget): string[] {
    const name = memoryFileName(norm(target));
    return this.#entries[norm(target)].map((e) => sanitizeMemoryEntry(e, name));
  }

  #success(
    t: MemoryTarget,
    message: string,
    extras: MemoryResult = {},
  ): MemoryResult {
    this.#failures = 0;
    const entries = this.#entries[t];
    const result: MemoryResult = {
      success: true,
      done: true,
      target: t,
      usage: formatUsage(entriesSize(entries), this.#limits[t]),
      entry_count: entries.length,
    };
    if (message) result.message = message;
    Object.assign(result, extras);
    result.note = SUCCESS_NOTE;
    return result;
  }

  #failure(result: MemoryResult): MemoryResult {
    this.#failures++;
    if (this.#failures > CONSOLIDATION_FAILURE_LIMIT) {
      return {
        success: false,
        done: true,
        error:
          `Memory consolidation failed ${this.#failures} times this turn. Stop retrying memory calls \u2014 leave memory unchanged for now and continue with your reply to the user. The fact can be saved in a later turn.`,
      };
    }
    return result;
  }

  #match(
    t: MemoryTarget,
    entries: readonly string[],
    old: string,
    verb: "replace" | "remove",
  ): { index: number } | { result: MemoryResult } {
    const candidates = findCandidates(entries, old);
    if (candidates.length === 0) {
      return {
        result: this.#failure({
          success: false,
          error:
            `No entry matched '${old}'. Check current_entries below and retry with the exact text of the entry you want to ${verb}.`,
          current_entries: this.sanitizedEntries(t),
        }),
      };
    }
    if (new Set(candidates.map((c) => entries[c])).size > 1) {
      return {
        result: {
          success: false,
          error: `Multiple entries matched '${old}'. Be more specific.`,
          matches: candidates.map((c) => previewEntry(entries[c] as string)),
        },
      };
    }
    return { index: candidates[0] as number };
  }

  // Takes the target's lock, re-reads the file (refusing unreadable files,
  // and drifted ones when `driftGuard`), hands the entries to `decide`, and
  // writes what it asks for before building the success result.
  async #locked(
    t: MemoryTarget,
    driftGuard: boolean,
    decide: (entries: string[]) => MemoryResult | Commit,
  ): Promise<MemoryResult> {
    const paths = this.paths();
    const path = paths[t];
    await Deno.mkdir(paths.dir, { recursive: true });
    return await withFileLock(`${path}.lock`, async () => {
      const file = await readMemoryFile(path);
      if (file.state === "unreadable") {
        return {
          success: false,
          error: `Refusing to write ${
            memoryFileName(t)
          }: the file exists on disk but could not be read right now (temporarily locked by another program, a permission change, invalid/corrupt text encoding, or a filesystem error). Treating an unreadable file as empty and saving would wipe existing memory, so the write is refused. Nothing was changed \u2014 retry in a moment.`,
        };
      }
      const text = file.state === "ok" ? file.text : "";
      const parsed = splitEntries(text);
      if (
        driftGuard && file.state === "ok" &&
        hasDrift(text, parsed, this.#limits[t])
      ) {
        return await driftResult(t, path, file.bytes);
      }
      const entries = dedupeEntries(parsed);
      this.#entries[t] = entries;
      const decision = decide([...entries]);
      if (!(decision instanceof Commit)) return decision;
      const refused = await writeMemoryEntries(
        t,
        path,
        paths.dir,
        decision.write,
      );
      if (refused !== undefined) return refused;
      this.#entries[t] = [...decision.write];
      return decision.result();
    });
  }
}

// What a mutation decided to write, and how to report it once written.
class Commit {
  constructor(readonly write: string[], readonly result: () => MemoryResult) {}
}

/** The refusal of a write to a target disabled in config. */
export function disabledResult(t: MemoryTarget): MemoryResult {
  return {
    success: false,
    error: `Built-in ${
      memoryFileName(t)
    } writes are disabled in memory config.`,
    target: t,
  };
}

function norm(target: MemoryTarget | string): MemoryTarget {
  return target === "user" ? "user" : "memory";
}

function checkLimit(name: string, value: number): number {
  if (!Number.isInteger(value)) {
    throw new RangeError(
      `Cannot create the memory store as '${name}' must be an integer: current value is ${value}`,
    );
  }
  return value;
}
