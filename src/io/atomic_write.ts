// Crash-safe file replacement (same-directory temp file, fsync, rename) and
// tolerant JSON reading; temp files stay `flock`ed until renamed, so only dead
// processes' leftovers are removed.

import { basename, dirname, isAbsolute, join, resolve } from "../_util/path.ts";
import { isRecord } from "../_util/is_record.ts";

/**
 * Options of {@linkcode atomicWriteText} and {@linkcode atomicJsonWrite}.
 *
 * @category Durable files and the log
 */
export interface AtomicWriteOptions {
  /** The file mode, e.g. `0o600` for credentials (default: the existing file's, else `0o644`; ignored on Windows). */
  mode?: number;
}

const DEFAULT_NEW_FILE_MODE = 0o644;
const IS_WINDOWS = Deno.build.os === "windows";

/** How old a leftover temp file must be before a later write removes it where locks cannot tell (Windows). */
const STALE_TEMP_FILE_MS = 10 * 60 * 1000;

/** Temporary files of writes running in this process (never cleaned up). */
const writing = new Set<string>();

/**
 * Replaces the content of `path` with `text` atomically: temp file in the
 * same directory, fsync, rename. An existing file keeps its mode (and, where
 * the process may, its owner); a symlink is kept and its target is
 * rewritten.
 *
 * @throws {Deno.errors.NotFound} When the parent directory is missing.
 *
 * @category Durable files and the log
 */
export async function atomicWriteText(
  path: string,
  text: string,
  options: AtomicWriteOptions = {},
): Promise<void> {
  const target = await resolveWriteTarget(path);
  const existing = await unlessMissing(Deno.stat(target));
  if (existing?.isDirectory) {
    throw new Deno.errors.IsADirectory(
      `Cannot write file ${target}: it is a directory, remove it or choose another path`,
    );
  }
  const mode = options.mode ??
    (existing?.mode != null ? existing.mode & 0o7777 : DEFAULT_NEW_FILE_MODE);
  const dir = dirname(target);
  for (let attempt = 0;; attempt++) {
    try {
      await writeAndRename(target, dir, text, mode, existing);
      break;
    } catch (error) {
      if (isDiskFull(error)) {
        throw new DiskFullError(
          `Cannot write ${target}: no space left on device; ${
            existing
              ? `the previous ${target} is kept unchanged`
              : `${target} was not created`
          } (the partial temporary file was removed). Free some disk space and try again`,
          { cause: error },
        );
      }
      // A cleaner of another process removed our brand-new temp file in the
      // instant between its creation and its lock: write it again.
      if (!(error instanceof TempFileVanished) || attempt >= 2) throw error;
    }
  }
  await removeOrphanedTempFiles(dir, basename(target));
}

class TempFileVanished extends Error {}

/**
 * A write that failed because the disk (or quota) is full; its message
 * names the file and what was kept.
 *
 * @category Durable files and the log
 */
export class DiskFullError extends Error {
  /** `"DiskFullError"`. */
  override name = "DiskFullError";
}

/**
 * Whether an error is the OS's "no space left on device" (`ENOSPC`) or
 * "disk quota exceeded" (`EDQUOT`).
 *
 * @category Durable files and the log
 */
export function isDiskFull(error: unknown): boolean {
  if (error instanceof DiskFullError) return true;
  const code = (error as { code?: unknown } | null)?.code;
  if (code === "ENOSPC" || code === "EDQUOT") return true;
  return error instanceof Error &&
    /\(os error (28|122)\)/.test(error.message);
}

async function writeAndRename(
  target: string,
  dir: string,
  text: string,
  mode: number,
  existing: Deno.FileInfo | undefined,
): Promise<void> {
  const temp = join(
    dir,
    `.${basename(target)}.tmp.${Deno.pid}.${crypto.randomUUID().slice(0, 8)}`,
  );
  writing.add(temp);
  let renamed = false;
  try {
    const file = await Deno.open(temp, {
      read: true,
      write: true,
      createNew: true,
      mode: 0o600,
    });
    try {
      // Held until the rename: a cleaner in another process can tell a
      // live write from the leftover of a killed one.
      if (!IS_WINDOWS) await file.lock(true);
      await writeAll(file, new TextEncoder().encode(text));
      await file.sync();
      if (!IS_WINDOWS) {
        await Deno.chmod(temp, mode);
        if (existing?.uid != null && existing.gid != null) {
          // Keep the owner where the process may (root rewriting a user's file).
          await Deno.chown(temp, existing.uid, existing.gid).catch(() => {});
        }
      }
      try {
        await Deno.rename(temp, target);
      } catch (error) {
        if (error instanceof Deno.errors.NotFound) {
          throw new TempFileVanished(`${temp} was removed`);
        }
        throw error;
      }
      renamed = true;
    } finally {
      file.close();
    }
    await syncDirectory(dir);
  } finally {
    writing.delete(temp);
    if (!renamed) await Deno.remove(temp).catch(() => {});
  }
}

/**
 * Removes leftover temp files of interrupted writes of `name` in `dir`, best
 * effort: a temp file whose lock can be taken belongs to a dead process
 * (on Windows: older than {@linkcode STALE_TEMP_FILE_MS}).
 */
async function removeOrphanedTempFiles(
  dir: string,
  name: string,
): Promise<void> {
  try {
    for await (const entry of Deno.readDir(dir)) {
      if (!entry.isFile || !isTempFileOf(entry.name, name)) continue;
      const path = join(dir, entry.name);
      if (writing.has(path)) continue;
      await removeIfOrphaned(path);
    }
  } catch {
    // The directory cannot be listed: leave the leftovers.
  }
}

/** Whether `entry` names a temp file of a write of `name`: `.<name>.tmp.<pid>.<rand>` (this version) or `.<name>.tmp-<rand>` (earlier ones). */
export function isTempFileOf(entry: string, name: string): boolean {
  const prefix = `.${name}.tmp`;
  const rest = entry.startsWith(prefix) ? entry.slice(prefix.length) : "";
  return /^\.\d+\.[0-9a-f]{8}$/.test(rest) || /^-[0-9a-f]{8}$/.test(rest);
}

async function removeIfOrphaned(path: string): Promise<void> {
  if (IS_WINDOWS) {
    const info = await Deno.stat(path).catch(() => undefined);
    const age = Date.now() - (info?.mtime?.getTime() ?? Date.now());
    if (age >= STALE_TEMP_FILE_MS) await Deno.remove(path).catch(() => {});
    return;
  }
  const file = await Deno.open(path, { read: true, write: true })
    .catch(() => undefined);
  if (file === undefined) return;
  try {
    if (await file.tryLock(true)) await Deno.remove(path);
  } catch {
    // Gone already, or not ours to remove.
  } finally {
    file.close();
  }
}

/**
 * Writes `value` as JSON (indent 2, UTF-8 without ASCII escaping, trailing
 * newline) through {@linkcode atomicWriteText}.
 *
 * @throws {TypeError} When `value` cannot be serialized as JSON.
 *
 * @category Durable files and the log
 */
export async function atomicJsonWrite(
  path: string,
  value: unknown,
  options: AtomicWriteOptions = {},
): Promise<void> {
  const json = JSON.stringify(value, null, 2);
  if (json === undefined) {
    throw new TypeError(
      `Cannot write ${path}: the value (${typeof value}) has no JSON form, pass an object, array or primitive`,
    );
  }
  await atomicWriteText(path, `${json}\n`, options);
}

/**
 * Reads a JSON object from `path`, or a fresh `{}` when the file is missing,
 * unreadable, malformed, or not an object. A UTF-8 BOM is tolerated.
 *
 * @category Durable files and the log
 */
export async function readJsonOrEmpty(
  path: string,
): Promise<Record<string, unknown>> {
  try {
    const text = await Deno.readTextFile(path);
    const value: unknown = JSON.parse(text.replace(/^\uFEFF/, ""));
    if (isRecord(value)) return value;
  } catch {
    // Missing, unreadable or malformed: treated like a missing file, as Hermes does.
  }
  return {};
}

async function resolveWriteTarget(path: string): Promise<string> {
  const absolute = resolve(path);
  const real = await unlessMissing(Deno.realPath(absolute));
  if (real !== undefined) return real;
  // Missing, or a dangling symlink: follow links by hand to the file to create.
  let current = absolute;
  for (let hops = 0; hops < 40; hops++) {
    let info: Deno.FileInfo;
    try {
      info = await Deno.lstat(current);
    } catch {
      return current;
    }
    if (!info.isSymlink) return current;
    const link = await Deno.readLink(current);
    current = isAbsolute(link) ? link : resolve(dirname(current), link);
  }
  throw new Deno.errors.FilesystemLoop(
    `Cannot write ${path}: too many levels of symbolic links, fix the link chain`,
  );
}

/** What `read` resolves to, or `undefined` when the file is missing (any other error is thrown). */
export async function unlessMissing<T>(
  read: Promise<T>,
): Promise<T | undefined> {
  try {
    return await read;
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return undefined;
    throw error;
  }
}

export async function writeAll(
  file: Deno.FsFile,
  bytes: Uint8Array,
): Promise<void> {
  let offset = 0;
  while (offset < bytes.length) {
    offset += await file.write(bytes.subarray(offset));
  }
}

/**
 * Makes a directory's entries durable (`fsync` of the directory), best
 * effort: a no-op on Windows and where the filesystem refuses.
 */
export async function syncDirectory(dir: string): Promise<void> {
  if (IS_WINDOWS) return;
  try {
    const handle = await Deno.open(dir, { read: true });
    try {
      await handle.sync();
    } finally {
      handle.close();
    }
  } catch {
    // Best effort: some filesystems refuse to fsync a directory.
  }
}
