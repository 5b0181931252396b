// Review of `memory` tool writes staged while `memory.write_approval` is on
// (`/memory pending | approve <id|all> | reject <id|all>`).

import { join } from "../_util/path.ts";
import type { MemoryTarget } from "../core/memory_provider.ts";
import type { MemoryStore } from "./memory_store.ts";
import {
  handleMemoryToolCall,
  pendingMemoryDir,
  type PendingMemoryWrite,
} from "./memory_tool.ts";
import { pythonJsonDumps } from "../_util/python_json.ts";
import { isRecord } from "../_util/is_record.ts";
import { unlessMissing } from "../io/atomic_write.ts";

/**
 * What happened to one staged write at approval.
 *
 * @category Built-in store
 */
export interface ApprovalOutcome {
  /** The pending record's id. */
  id: string;
  /** The record's summary. */
  summary: string;
  /** The tool arguments that were replayed (for mirroring to providers). */
  args: Record<string, unknown>;
  /** The JSON result string, as the `memory` tool returns it. */
  result: string;
  /** Whether the write was applied (the record is then deleted). */
  applied: boolean;
}

/**
 * Lists staged memory writes, oldest first (unreadable records skipped).
 *
 * @category Built-in store
 */
export async function listPendingMemoryWrites(
  hermesHome?: string,
): Promise<PendingMemoryWrite[]> {
  const dir = pendingMemoryDir(hermesHome);
  const records: PendingMemoryWrite[] = [];
  let names: string[];
  try {
    names = [];
    for await (const entry of Deno.readDir(dir)) {
      if (entry.isFile && entry.name.endsWith(".json")) names.push(entry.name);
    }
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return [];
    throw error;
  }
  for (const name of names) {
    const record = await readRecord(join(dir, name));
    if (record !== null) records.push(record);
  }
  return records.sort((a, b) => a.created_at - b.created_at);
}

/**
 * Approves staged writes (`id`, or `"all"` oldest first): each is replayed
 * against `store` through the `memory` tool and its record deleted once
 * applied; a replace/remove whose reviewed entry changed is refused. One
 * outcome per record (`[]` when the id is unknown).
 *
 * @category Built-in store
 */
export async function approvePendingMemoryWrites(
  store: MemoryStore,
  id: string,
): Promise<ApprovalOutcome[]> {
  const dir = pendingMemoryDir(store.hermesHome());
  const records = (await listPendingMemoryWrites(store.hermesHome())).filter((
    r,
  ) => id === "all" || r.id === id);
  const outcomes: ApprovalOutcome[] = [];
  for (const record of records) {
    const args = { ...record.payload };
    let result: string | undefined;
    const pinned = record.matched_entry;
    if (
      typeof pinned === "string" &&
      (args.action === "replace" || args.action === "remove")
    ) {
      const target: MemoryTarget = args.target === "user" ? "user" : "memory";
      const entries = await store.readDiskEntries(target);
      if (entries === null || !entries.includes(pinned)) {
        result = pythonJsonDumps({
          success: false,
          error:
            `Entry changed since it was staged, so this write was not applied: '${pinned}' is no longer in memory as reviewed. Recreate the change against the current entry or reject it; the pending record has been preserved.`,
        });
      } else {
        // Address exactly the reviewed entry.
        args.old_text = pinned;
      }
    }
    result ??= await handleMemoryToolCall(store, args, {
      bypassApproval: true,
    });
    const applied = isApplied(result);
    if (applied) {
      await Deno.remove(join(dir, `${record.id}.json`)).catch(() => {});
    }
    outcomes.push({
      id: record.id,
      summary: record.summary,
      args,
      result,
      applied,
    });
  }
  return outcomes;
}

/**
 * Rejects staged writes (`id`, or `"all"`): deletes their records unapplied
 * and returns their ids.
 *
 * @category Built-in store
 */
export async function rejectPendingMemoryWrites(
  id: string,
  options: { hermesHome?: string } = {},
): Promise<string[]> {
  const dir = pendingMemoryDir(options.hermesHome);
  const removed: string[] = [];
  for (const record of await listPendingMemoryWrites(options.hermesHome)) {
    if (id !== "all" && record.id !== id) continue;
    const path = join(dir, `${record.id}.json`);
    if (await unlessMissing(Deno.remove(path).then(() => true))) {
      removed.push(record.id);
    }
  }
  return removed;
}

async function readRecord(path: string): Promise<PendingMemoryWrite | null> {
  try {
    const r: unknown = JSON.parse(await Deno.readTextFile(path));
    if (
      !isRecord(r) || typeof r.id !== "string" || r.subsystem !== "memory" ||
      !isRecord(r.payload)
    ) {
      return null;
    }
    return {
      id: r.id,
      subsystem: "memory",
      action: typeof r.action === "string" ? r.action : "",
      summary: typeof r.summary === "string" ? r.summary : "",
      origin: r.origin === "background_review"
        ? "background_review"
        : "foreground",
      created_at: typeof r.created_at === "number" ? r.created_at : 0,
      payload: r.payload,
      ...(typeof r.matched_entry === "string"
        ? { matched_entry: r.matched_entry }
        : {}),
    };
  } catch {
    return null;
  }
}

function isApplied(result: string): boolean {
  try {
    const parsed = JSON.parse(result) as Record<string, unknown>;
    return parsed.success === true && parsed.staged !== true;
  } catch {
    return false;
  }
}
