/**
 * The built-in `MEMORY.md` / `USER.md` entries as a person sees and edits
 * them, for `hermes memory entries`, the dashboard and the MCP server: a
 * numbered listing with usage against each file's limit, and one change at
 * a time sent through the `memory` tool's own handler
 * ({@linkcode handleMemoryToolCall}: argument checks, threat scan, file
 * lock, drift guard, budget), so no surface can write what the agent's
 * tool would refuse.
 *
 * @module
 */

import { loadConfig } from "../config/config.ts";
import { getHermesHome } from "../profile/hermes_home.ts";
import type { HermesConfig, MemoryTarget } from "../core/memory_provider.ts";
import { MemoryStore } from "../builtin/memory_store.ts";
import { readStoreUsage } from "../builtin/memory_files.ts";
import {
  handleMemoryToolCall,
  type MemoryToolCallOptions,
} from "../builtin/memory_tool.ts";
import {
  formatUsage,
  memoryFileName,
  usagePercent,
} from "../builtin/memory_format.ts";
import { sanitizeMemoryEntry } from "../builtin/threat_scan.ts";

/** The two built-in targets, in listing order. */
export const ENTRY_TARGETS: readonly MemoryTarget[] = ["memory", "user"];

/** One entry of a built-in file. */
export interface BuiltinEntry {
  /** Its 1-based number in the file. */
  number: number;
  /** The entry as stored. */
  text: string;
  /**
   * Whether the threat scan keeps it out of the system prompt (the agent
   * sees a `[BLOCKED: …]` placeholder instead).
   */
  blocked: boolean;
}

/** One built-in file's entries and usage. */
export interface BuiltinEntryFile {
  /** `memory` or `user`. */
  target: MemoryTarget;
  /** `MEMORY.md` or `USER.md`. */
  file: string;
  /** The file's path. */
  path: string;
  /** Whether the target is enabled in `config.yaml`. */
  enabled: boolean;
  /** Whether the file exists. */
  exists: boolean;
  /** Why the file could not be read, if it could not. */
  error: string | null;
  /** Characters used, as the memory tool counts them. */
  chars: number;
  /** The file's budget in characters. */
  limit: number;
  /** `chars` as a whole percentage of `limit`. */
  percent: number;
  /** The usage line the memory tool reports: `62% — 1,364/2,200 chars`. */
  usage: string;
  /** The entries, numbered from 1. */
  entries: BuiltinEntry[];
}

/**
 * Lists the entries of `MEMORY.md` and `USER.md` of a profile with their
 * usage. Reads only; creates nothing.
 *
 * @param options The profile home and its parsed `config.yaml` (both read
 * from the active profile when absent).
 * @returns One record per file, `memory` first.
 */
export async function listBuiltinEntries(
  options: { hermesHome?: string; config?: HermesConfig } = {},
): Promise<BuiltinEntryFile[]> {
  const home = options.hermesHome ?? getHermesHome();
  const config = options.config ?? await loadConfig({ hermesHome: home });
  const usage = await readStoreUsage(home, config);
  const store = MemoryStore.fromConfig(config, { hermesHome: home });
  const files: BuiltinEntryFile[] = [];
  for (const target of ENTRY_TARGETS) {
    const u = usage[target];
    const texts = await store.readDiskEntries(target) ?? [];
    const name = memoryFileName(target);
    files.push({
      target,
      file: name,
      path: u.path,
      enabled: u.enabled,
      exists: u.exists,
      error: u.readable ? null : `${name} could not be read as UTF-8 text`,
      chars: u.chars,
      limit: u.limit,
      percent: usagePercent(u.chars, u.limit),
      usage: formatUsage(u.chars, u.limit),
      entries: texts.map((text, i) => ({
        number: i + 1,
        text,
        blocked: sanitizeMemoryEntry(text, name) !== text,
      })),
    });
  }
  return files;
}

/** One change to a built-in file, as a person asks for it. */
export type EntryChange =
  | { action: "add"; target: MemoryTarget; content: string }
  | {
    action: "replace";
    target: MemoryTarget;
    /** The entry's number in the current listing. */
    number: number;
    content: string;
  }
  | { action: "remove"; target: MemoryTarget; number: number };

/** What {@linkcode applyEntryChange} did. */
export interface EntryChangeOutcome {
  /** Whether the memory tool saved (or staged) the change. */
  ok: boolean;
  /** The `memory` tool's own result, parsed. */
  result: Record<string, unknown>;
  /** The `memory` tool arguments that were sent. */
  args: Record<string, unknown>;
}

/** A change that names an entry the file does not have. */
export class EntryNumberError extends RangeError {
  /**
   * Creates the error.
   *
   * @param message What is wrong and how to fix it.
   */
  constructor(message: string) {
    super(message);
    this.name = "EntryNumberError";
  }
}

/**
 * Applies one change through the `memory` tool's handler with a store
 * freshly loaded from disk. An entry number is turned into the entry's
 * full text as `old_text`; the tool refuses it when that text also occurs
 * inside another entry (it then lists the matches).
 *
 * @param change The change.
 * @param options The profile home, and the tool call options (the
 * approval callback when `memory.write_approval` is on).
 * @returns The tool's result.
 * @throws {EntryNumberError} When the number names no entry.
 */
export async function applyEntryChange(
  change: EntryChange,
  options: { hermesHome?: string; tool?: MemoryToolCallOptions } = {},
): Promise<EntryChangeOutcome> {
  const home = options.hermesHome ?? getHermesHome();
  const config = await loadConfig({ hermesHome: home });
  const store = MemoryStore.fromConfig(config, { hermesHome: home });
  await store.loadFromDisk();
  const args: Record<string, unknown> = {
    action: change.action,
    target: change.target,
  };
  if (change.action !== "add") {
    const entries = store.entries(change.target);
    const entry = entries[change.number - 1];
    if (!Number.isInteger(change.number) || entry === undefined) {
      throw new EntryNumberError(
        entries.length === 0
          ? `${memoryFileName(change.target)} has no entries`
          : `${
            memoryFileName(change.target)
          } has no entry ${change.number}: pick 1-${entries.length} (list them with 'hermes memory entries')`,
      );
    }
    args.old_text = entry;
  }
  if (change.action !== "remove") args.content = change.content;
  const result = JSON.parse(
    await handleMemoryToolCall(store, args, options.tool),
  ) as Record<string, unknown>;
  return { ok: result.success === true, result, args };
}
