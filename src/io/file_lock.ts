// A cross-process lock for read-modify-write of shared files: a FIFO in the
// process, an OS lock on `<file>.lock` (never deleted, or two processes could
// lock different files).

import { dirname, resolve } from "../_util/path.ts";

const queues = new Map<string, Promise<void>>();

/**
 * Runs `fn` while holding an exclusive lock on `lockPath`, released when
 * `fn` settles. The lock's parent directory is created if missing.
 *
 * The lock is not re-entrant: calling `withFileLock` on the same path from
 * inside `fn` waits forever.
 *
 * @typeParam T What `fn` resolves to.
 * @param lockPath The lock file, conventionally `<file>.lock`.
 * @throws Whatever `fn` throws, after the lock is released; an OS error when
 * the lock file cannot be created.
 *
 * @category Durable files and the log
 */
export async function withFileLock<T>(
  lockPath: string,
  fn: () => Promise<T>,
): Promise<T> {
  const key = resolve(lockPath);
  const previous = queues.get(key) ?? Promise.resolve();
  let release!: () => void;
  const mine = new Promise<void>((resolveTurn) => release = resolveTurn);
  const tail = previous.then(() => mine);
  queues.set(key, tail);
  await previous;
  try {
    await Deno.mkdir(dirname(key), { recursive: true });
    const file = await Deno.open(key, {
      read: true,
      write: true,
      create: true,
      mode: 0o600,
    });
    try {
      await file.lock(true);
      try {
        return await fn();
      } finally {
        await file.unlock().catch(() => {});
      }
    } finally {
      file.close();
    }
  } finally {
    release();
    if (queues.get(key) === tail) queues.delete(key);
  }
}
