/**
 * One built-in memory file on disk, apart from the store that locks it:
 * reading and decoding it, the drift guard (content the memory tool would
 * not write back the same is backed up and the write refused), and writing
 * a list of entries atomically. Results are `MemoryResult` objects (plain
 * JSON objects with Hermes' keys, in Hermes' order). Not public API.
 *
 * @module
 */

import { atomicWriteText } from "../io/atomic_write.ts";
import { log } from "../core/log.ts";
import type { MemoryTarget } from "../core/memory_provider.ts";
import {
  codePointLength,
  decodeMemoryBytes,
  findLoneSurrogate,
  memoryFileName,
  pythonStrip,
  serializeEntries,
} from "./memory_format.ts";
import { errorText } from "../_util/error_text.ts";

/** A memory file as read: missing, unreadable (and why), or its text. */
export type MemoryFileRead =
  | { state: "missing" }
  | { state: "unreadable"; reason: string; size: number }
  | { state: "ok"; text: string; bytes: Uint8Array };

/**
 * Reads and decodes a memory file (as Python's `read_text` would).
 *
 * @param path The file.
 * @returns What was found; never throws.
 */
export async function readMemoryFile(path: string): Promise<MemoryFileRead> {
  let bytes: Uint8Array;
  try {
    bytes = await Deno.readFile(path);
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return { state: "missing" };
    const size = await Deno.stat(path).then((s) => s.size, () => 0);
    return { state: "unreadable", reason: errorText(error), size };
  }
  try {
    return { state: "ok", text: decodeMemoryBytes(bytes), bytes };
  } catch (error) {
    return {
      state: "unreadable",
      reason: errorText(error),
      size: bytes.length,
    };
  }
}

/**
 * Whether a file's text would not round-trip through the memory tool: its
 * parsed entries serialise to something else, or one entry alone is over
 * the budget (both mean it was edited by something else).
 *
 * @param text The file's text.
 * @param parsed Its entries as split (before deduplication).
 * @param limit The target's budget.
 * @returns `true` when the file has drifted.
 */
export function hasDrift(
  text: string,
  parsed: readonly string[],
  limit: number,
): boolean {
  const trimmed = pythonStrip(text);
  if (trimmed === "") return false;
  if (trimmed !== serializeEntries(parsed)) return true;
  return parsed.some((e) => codePointLength(e) > limit);
}

/**
 * Backs a drifted file up to `<file>.bak.<secs>` and builds the refusal
 * naming the backup (or saying that the backup failed).
 *
 * @param t The target.
 * @param path The file.
 * @param bytes Its content as read.
 * @returns The error result.
 */
export async function driftResult(
  t: MemoryTarget,
  path: string,
  bytes: Uint8Array,
): Promise<Record<string, unknown>> {
  let backup = `${path}.bak.${Math.floor(Date.now() / 1000)}`;
  try {
    await Deno.writeFile(backup, bytes);
  } catch (error) {
    log(
      "warn",
      `Could not back up drifted memory file ${path}: ${errorText(error)}`,
    );
    backup = `${backup} (BACKUP FAILED \u2014 file unchanged on disk)`;
  }
  return {
    success: false,
    error: `Refusing to write ${
      memoryFileName(t)
    }: file on disk has content that wouldn't round-trip through the memory tool (likely added by the patch tool, a shell append, a manual edit, or a concurrent session). A snapshot was saved to ${backup}. Resolve the drift first \u2014 either rewrite the file as a clean \u00a7-delimited list of entries, or move the extra content out \u2014 then retry. This guard exists to prevent silent data loss (issue #26045).`,
    drift_backup: backup,
    remediation:
      "Open the .bak file, integrate the missing entries into the memory tool one at a time via memory(action=add, content=...), then remove or rewrite the original file to a clean state.",
  };
}

/**
 * Writes a target's entries to its file atomically, refusing text that
 * UTF-8 cannot store (a lone surrogate).
 *
 * @param t The target.
 * @param path The file.
 * @param dir The memories directory (created when missing).
 * @param entries The entries to write.
 * @returns `undefined` once written, or the error result when refused.
 * @throws {Error} When the file cannot be written (naming it).
 */
export async function writeMemoryEntries(
  t: MemoryTarget,
  path: string,
  dir: string,
  entries: readonly string[],
): Promise<Record<string, unknown> | undefined> {
  const serialized = serializeEntries(entries);
  const lone = findLoneSurrogate(serialized);
  if (lone !== undefined) {
    return {
      error: `Cannot save to ${
        memoryFileName(t)
      }: the text contains a lone surrogate (U+${
        lone.toString(16).toUpperCase()
      }), half of a UTF-16 pair that UTF-8 cannot store. Nothing was changed; resend the text as valid Unicode.`,
      success: false,
    };
  }
  await Deno.mkdir(dir, { recursive: true });
  try {
    await atomicWriteText(path, serialized);
  } catch (error) {
    throw new Error(
      `Failed to write memory file ${path}: ${errorText(error)}`,
      {
        cause: error,
      },
    );
  }
  return undefined;
}
