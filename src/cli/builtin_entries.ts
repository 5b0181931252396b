// The built-in entries as a person sees and edits them (entries command,
// dashboard): numbered with usage, and one change at a time through the
// `memory` tool's own handler, so no surface writes what the tool would refuse.

import { loadConfig } from "../config/config.ts";
import { getHermesHome } from "../profile/hermes_home.ts";
import type { HermesConfig, MemoryTarget } from "../core/memory_provider.ts";
import { MemoryStore } from "../builtin/memory_store.ts";
import { readStoreUsage, type StoreUsage } from "../builtin/memory_files.ts";
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

/** What each built-in file holds, in listing order. */
export const TARGET_DESCRIPTIONS: Readonly<Record<MemoryTarget, string>> = {
  memory: "agent notes",
  user: "user profile",
};

/**
 * One built-in file's entries (numbered from 1; `blocked`: kept out of the
 * system prompt by the threat scan) and usage (`62% — 1,364/2,200 chars`).
 */
export interface BuiltinEntryFile
  extends Pick<StoreUsage, "path" | "enabled" | "exists" | "chars" | "limit"> {
  target: MemoryTarget;
  file: string;
  error: string | null;
  percent: number;
  usage: string;
  entries: { number: number; text: string; blocked: boolean }[];
}

/** Reads only; creates nothing. */
export async function listBuiltinEntries(
  options: { hermesHome?: string; config?: HermesConfig } = {},
): Promise<BuiltinEntryFile[]> {
  const home = options.hermesHome ?? getHermesHome();
  const config = options.config ?? await loadConfig({ hermesHome: home });
  const usage = await readStoreUsage(home, config);
  const store = MemoryStore.fromConfig(config, { hermesHome: home });
  const files: BuiltinEntryFile[] = [];
  for (const target of ["memory", "user"] as const) {
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

/** One change to a built-in file; `number` is the entry's in the current listing. */
export type EntryChange =
  | { action: "add"; target: MemoryTarget; content: string }
  | {
    action: "replace";
    target: MemoryTarget;
    number: number;
    content: string;
  }
  | { action: "remove"; target: MemoryTarget; number: number };

/** A change that names an entry the file does not have. */
export class EntryNumberError extends RangeError {
  constructor(message: string) {
    super(message);
    this.name = "EntryNumberError";
  }
}

/**
 * Applies one change through the `memory` tool's handler on a store fresh
 * from disk. An entry number becomes the entry's full text as `old_text`
 * (the tool refuses it when that text also occurs in another entry). `ok`:
 * the tool saved (or staged) it; `result` is the tool's own.
 */
export async function applyEntryChange(
  change: EntryChange,
  options: { hermesHome?: string; tool?: MemoryToolCallOptions } = {},
): Promise<{
  ok: boolean;
  result: Record<string, unknown>;
  args: Record<string, unknown>;
}> {
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
