// The built-in store's files under a profile home, apart from any session:
// paths, usage, reset, the `memory:` settings, and reading, drift-checking
// and atomically writing one file.

import { join } from "../_util/path.ts";
import { atomicWriteText, unlessMissing } from "../io/atomic_write.ts";
import { withFileLock } from "../io/file_lock.ts";
import { getHermesHome } from "../profile/hermes_home.ts";
import { log } from "../core/log.ts";
import type { HermesConfig, MemoryTarget } from "../core/memory_provider.ts";
import { configFlag, configSwitch } from "../config/config_values.ts";
import { pythonInt } from "../_util/python_values.ts";
import { errorText } from "../_util/error_text.ts";
import { isRecord } from "../_util/is_record.ts";
import {
  codePointLength,
  decodeMemoryBytes,
  DEFAULT_MEMORY_CHAR_LIMIT,
  DEFAULT_USER_CHAR_LIMIT,
  entriesSize,
  findLoneSurrogate,
  memoryFileName,
  parseEntries,
  pythonStrip,
  serializeEntries,
} from "./memory_format.ts";

export const TARGETS: readonly MemoryTarget[] = ["memory", "user"];

/** The built-in store's settings from the `memory:` section of `config.yaml`. */
export interface MemoryConfig {
  memoryEnabled: boolean;
  userProfileEnabled: boolean;
  memoryCharLimit: number;
  userCharLimit: number;
  writeApproval: boolean;
}

/**
 * Paths of the built-in store's files under one profile home.
 *
 * @category Built-in store
 */
export interface MemoryFilePaths {
  /** `<home>/memories`. */
  dir: string;
  /** `<home>/memories/MEMORY.md`. */
  memory: string;
  /** `<home>/memories/USER.md`. */
  user: string;
}

/**
 * What {@linkcode readStoreUsage} reports for one target.
 *
 * @category Built-in store
 */
export interface StoreUsage {
  /** The file's path. */
  path: string;
  /** Whether the file exists. */
  exists: boolean;
  /** Whether it could be read and decoded (`true` when missing). */
  readable: boolean;
  /** Whether the target is enabled in config. */
  enabled: boolean;
  /** The file's size in bytes (`0` when missing). */
  bytes: number;
  /** The store's size in characters, as the memory tool counts it. */
  chars: number;
  /** The target's budget in characters. */
  limit: number;
  /** How many entries the file holds (after dedupe). */
  entryCount: number;
}

/**
 * Which files {@linkcode resetMemoryFiles} deletes.
 *
 * @category Built-in store
 */
export type ResetTarget = "all" | "memory" | "user";

// Hermes' coercions: flags by Python truthiness, limits by `int()`; an
// unreadable `memory_char_limit` defaults both limits (`load_on_disk_store`).
export function readMemoryConfig(
  config: HermesConfig | undefined,
): MemoryConfig {
  const raw = config?.memory;
  const section = isRecord(raw) ? raw : {};
  const limit = (key: string, fallback: number): number | undefined =>
    Object.hasOwn(section, key) ? pythonInt(section[key]) : fallback;
  let memoryCharLimit = limit("memory_char_limit", DEFAULT_MEMORY_CHAR_LIMIT);
  let userCharLimit = memoryCharLimit === undefined
    ? DEFAULT_USER_CHAR_LIMIT
    : limit("user_char_limit", DEFAULT_USER_CHAR_LIMIT);
  memoryCharLimit ??= DEFAULT_MEMORY_CHAR_LIMIT;
  userCharLimit ??= DEFAULT_USER_CHAR_LIMIT;
  return {
    memoryEnabled: configFlag(section.memory_enabled, true),
    userProfileEnabled: configFlag(section.user_profile_enabled, true),
    memoryCharLimit,
    userCharLimit,
    writeApproval: configSwitch(section.write_approval),
  };
}

/**
 * The paths of the built-in store's files under a profile home (default:
 * the active one).
 *
 * @category Built-in store
 */
export function memoryFilePaths(hermesHome?: string): MemoryFilePaths {
  const dir = join(hermesHome ?? getHermesHome(), "memories");
  return {
    dir,
    memory: join(dir, memoryFileName("memory")),
    user: join(dir, memoryFileName("user")),
  };
}

/**
 * Reports each target's file, size, budget and entry count without
 * creating anything (for `hermes memory status`).
 *
 * @category Built-in store
 */
export async function readStoreUsage(
  hermesHome?: string,
  config?: HermesConfig,
): Promise<Record<MemoryTarget, StoreUsage>> {
  const paths = memoryFilePaths(hermesHome);
  const settings = readMemoryConfig(config);
  const result = {} as Record<MemoryTarget, StoreUsage>;
  for (const target of TARGETS) {
    const path = paths[target];
    const file = await readMemoryFile(path);
    const entries = file.state === "ok" ? parseEntries(file.text) : [];
    result[target] = {
      path,
      exists: file.state !== "missing",
      readable: file.state !== "unreadable",
      enabled: target === "user"
        ? settings.userProfileEnabled
        : settings.memoryEnabled,
      bytes: file.state === "ok"
        ? file.bytes.length
        : file.state === "unreadable"
        ? file.size
        : 0,
      chars: entriesSize(entries),
      limit: target === "user"
        ? settings.userCharLimit
        : settings.memoryCharLimit,
      entryCount: entries.length,
    };
  }
  return result;
}

/**
 * Deletes the built-in store's files (not `.lock` / `.bak.*`), each under its
 * lock, and returns the paths deleted. Running sessions keep their snapshot.
 *
 * @throws {RangeError} When `target` is not `all`, `memory` or `user`.
 *
 * @category Built-in store
 */
export async function resetMemoryFiles(
  hermesHome?: string,
  target: ResetTarget = "all",
): Promise<string[]> {
  if (target !== "all" && target !== "memory" && target !== "user") {
    throw new RangeError(
      `Cannot reset memory files as 'target' must be all, memory or user: current value is ${
        String(target)
      }`,
    );
  }
  const paths = memoryFilePaths(hermesHome);
  const selected = target === "all" ? TARGETS : [target];
  const deleted: string[] = [];
  for (const t of selected) {
    const path = paths[t];
    if (await unlessMissing(Deno.lstat(path)) === undefined) continue;
    await withFileLock(`${path}.lock`, async () => {
      if (await unlessMissing(Deno.remove(path).then(() => true))) {
        deleted.push(path);
      }
    });
  }
  return deleted;
}

/** A memory file as read: missing, unreadable (and why), or its text. */
export type MemoryFileRead =
  | { state: "missing" }
  | { state: "unreadable"; reason: string; size: number }
  | { state: "ok"; text: string; bytes: Uint8Array };

/** Reads and decodes a memory file (as Python's `read_text` would). */
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

/** Whether a file's text would not round-trip through the memory tool (edited by something else). */
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

/** Backs a drifted file up to `<file>.bak.<secs>` and builds the refusal naming it. */
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

/** Writes a target's entries atomically, refusing a lone surrogate (UTF-8 cannot store it). */
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
