// The host's on-disk copy of writes a provider accepted but never reported
// durable because its process kept failing to start, or the host shut down
// first: `<profile home>/pending_writes/<provider>.json` (mode 0600), handed
// over at the provider's next start in any host, shown by status and doctor.

import { join } from "../_util/path.ts";
import { errorText } from "../_util/error_text.ts";
import { log } from "../core/log.ts";
import { atomicJsonWrite } from "../io/atomic_write.ts";
import { withFileLock } from "../io/file_lock.ts";

/** One accepted write: its id, the hook, its arguments and the profile home it was posted under. */
export interface AcceptedWrite {
  wid: string;
  method: string;
  args: unknown[];
  hermesHome: string;
}

/**
 * The writes kept in `path` (none when it is missing).
 *
 * @throws {Error} When the file is not one this module wrote.
 */
export async function readKeptWrites(
  path: string,
): Promise<{ reason: string; writes: AcceptedWrite[] }> {
  const value = await Deno.readTextFile(path).then(JSON.parse).catch((e) =>
    e instanceof Deno.errors.NotFound ? { reason: "", writes: [] } : {}
  );
  if (
    !Array.isArray(value?.writes) ||
    value.writes.some((w: AcceptedWrite) =>
      typeof w?.wid !== "string" || !Array.isArray(w.args)
    )
  ) {
    throw new Error(
      `${path} is not a file of kept memory writes: move it away (its writes are then dropped)`,
    );
  }
  return { reason: String(value.reason ?? ""), writes: value.writes };
}

/** A provider's file of kept writes as one host sees it: the ids it put there, its updates in order. */
export class KeptWrites {
  /** The file. */
  readonly path: string;
  #name: string;
  #mine = new Set<string>();
  #queue: Promise<void> = Promise.resolve();

  /** The file of provider `name` in a profile home. */
  constructor(hermesHome: string, name: string) {
    const file = `${name.replace(/[^\w.-]/g, "_")}.json`;
    this.path = join(hermesHome, "pending_writes", file);
    this.#name = name;
  }

  /** What an earlier host kept (this host owns those ids from now on). */
  async adopt(): Promise<AcceptedWrite[]> {
    const kept = await readKeptWrites(this.path).catch((error) => {
      log("warn", `Memory provider '${this.#name}': ${errorText(error)}`);
    });
    for (const { wid } of kept?.writes ?? []) this.#mine.add(wid);
    return kept?.writes ?? [];
  }

  /** Adds those of `writes` not in the file yet, with one warning saying where and why. */
  keep(writes: readonly AcceptedWrite[], reason: string): Promise<void> {
    const add = writes.filter(({ wid }) => !this.#mine.has(wid));
    if (add.length === 0) return this.#queue;
    for (const { wid } of add) this.#mine.add(wid);
    const what = `Memory provider '${this.#name}' ${
      reason.replace(/^it /, "")
    }`;
    return this.#update(reason, add, new Set(), (total) =>
      log(
        "warn",
        `${what}: ${total} accepted write(s) it did not report durable are kept in ${this.path} and handed over when it next starts`,
      ));
  }

  /** Drops the ids the provider reported durable. */
  forget(wids: readonly string[]): void {
    // Only ids this host owns (kept or adopted): another host sharing the profile holds its own.
    const gone = new Set(wids.filter((wid) => this.#mine.delete(wid)));
    if (gone.size === 0) return;
    this.#update("", [], gone);
  }

  /**
   * Adds `add` and drops `remove` under the file's lock (hosts sharing a
   * profile each change only their own ids), in order; replaced atomically,
   * removed when nothing is left.
   */
  #update(
    reason: string,
    add: readonly AcceptedWrite[],
    remove: ReadonlySet<string>,
    then = (_total: number) => {},
  ): Promise<void> {
    const path = this.path;
    const task = () =>
      withFileLock(`${path}.lock`, async () => {
        // Read again under the lock: the ids other hosts added since are kept as they are.
        const { writes } = await readKeptWrites(path);
        const known = new Set(writes.map((w) => w.wid));
        const kept = [...writes, ...add.filter((w) => !known.has(w.wid))]
          .filter((w) => !remove.has(w.wid));
        if (kept.length === 0) await Deno.remove(path).catch(() => {});
        else {
          const updatedAt = new Date().toISOString();
          // Atomic replace: a crash mid-write leaves the previous list, never a torn file that
          // the next start would refuse (and its writes with it).
          await atomicJsonWrite(path, { reason, updatedAt, writes: kept }, {
            mode: 0o600,
          });
        }
        then(kept.length);
      });
    // Chained: a forget must never run before the keep that added its ids.
    this.#queue = this.#queue.then(task).catch((error) =>
      log("error", `Cannot update ${path}: ${errorText(error)}`)
    );
    return this.#queue;
  }
}

/** Every provider with writes kept in a profile home, for `memory status` and `doctor`. */
export async function listKeptWrites(
  hermesHome: string,
): Promise<
  { provider: string; count: number; reason: string; path: string }[]
> {
  const reports = [];
  const dir = join(hermesHome, "pending_writes");
  const names = await Array.fromAsync(Deno.readDir(dir)).catch(() => []);
  for (const { name } of names) {
    if (!name.endsWith(".json")) continue;
    const path = join(dir, name);
    const report = { provider: name.slice(0, -5), count: 0, reason: "", path };
    try {
      const { reason, writes } = await readKeptWrites(path);
      reports.push({ ...report, count: writes.length, reason });
    } catch (error) {
      reports.push({ ...report, reason: (error as Error).message });
    }
  }
  return reports.filter((r) => r.count > 0 || r.reason !== "");
}
