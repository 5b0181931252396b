// Snapshot of a plugins tree (paths, content hashes, modes and mtimes), to
// prove that nothing hermes does deletes or rewrites anything under
// $HERMES_HOME/plugins/. Shared with the CLI tests.
import { join, relative } from "node:path";

/** One entry of a snapshot. */
export interface TreeEntry {
  /** Path relative to the snapshot root (`/`-separated). */
  path: string;
  /** What it is. */
  kind: "file" | "dir" | "symlink";
  /** SHA-256 of a file's bytes, hex. */
  sha256?: string;
  /** Where a symlink points. */
  target?: string;
  /** Modification time in milliseconds (files and symlinks). */
  mtimeMs?: number;
  /** Permission bits. */
  mode?: number;
}

async function sha256(path: string): Promise<string> {
  const bytes = await Deno.readFile(path);
  const digest = await crypto.subtle.digest("SHA-256", bytes);
  return [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, "0"))
    .join("");
}

/** Walks `root` (not following symlinks) into a sorted list of entries. */
export async function snapshotTree(root: string): Promise<TreeEntry[]> {
  const entries: TreeEntry[] = [];
  async function walk(dir: string): Promise<void> {
    for await (const entry of Deno.readDir(dir)) {
      const path = join(dir, entry.name);
      const rel = relative(root, path).split("\\").join("/");
      const info = await Deno.lstat(path);
      const base = { path: rel, mode: info.mode ?? undefined };
      if (entry.isSymlink) {
        entries.push({
          ...base,
          kind: "symlink",
          target: await Deno.readLink(path),
          mtimeMs: info.mtime?.getTime(),
        });
      } else if (entry.isDirectory) {
        entries.push({ ...base, kind: "dir" });
        await walk(path);
      } else {
        entries.push({
          ...base,
          kind: "file",
          sha256: await sha256(path),
          mtimeMs: info.mtime?.getTime(),
        });
      }
    }
  }
  await walk(root);
  return entries.sort((a, b) => (a.path < b.path ? -1 : 1));
}

/** Describes how two snapshots differ, one line per change (`[]`: same). */
export function diffTrees(before: TreeEntry[], after: TreeEntry[]): string[] {
  const lines: string[] = [];
  const old = new Map(before.map((e) => [e.path, e]));
  const now = new Map(after.map((e) => [e.path, e]));
  for (const [path, entry] of old) {
    const current = now.get(path);
    if (current === undefined) lines.push(`deleted ${path}`);
    else if (JSON.stringify(current) !== JSON.stringify(entry)) {
      lines.push(
        `changed ${path}: ${JSON.stringify(entry)} -> ${
          JSON.stringify(current)
        }`,
      );
    }
  }
  for (const path of now.keys()) {
    if (!old.has(path)) lines.push(`added ${path}`);
  }
  return lines;
}
