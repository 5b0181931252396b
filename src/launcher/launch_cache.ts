// The launcher's cache (plain Deno APIs: runs on every start). It lives
// outside every profile home, so neither the CLI nor a sandboxed provider can
// write the grant the next start uses.

import { readProcessEnv } from "../core/env.ts";
import type { Observation } from "./input_record.ts";
import { sha256Hex } from "../_util/sha256.ts";

/** The format of a cached launch record; older ones are recomputed. */
export const LAUNCH_FORMAT = 4;

/** How many launch records (one per profile and directory) and cache markers are kept. */
const KEEP_RECORDS = 64;
const KEPT = /^(plan-[0-9a-f]+\.json|deps-[0-9a-f]+)$/;

/** What the launcher computed for one profile, directory and install. */
export interface LaunchRecord {
  format: number;
  /** `run`, flags, entry: before the user's arguments. */
  denoArgs: string[];
  env: Record<string, string>;
  /** The module cache's state it was made with (`depsState`). */
  deps: string;
  /** Replayed to check the record. */
  observations: Observation[];
  inputsDigest: string;
  /** The grant code's source files (local checkouts) and their stamp. */
  sources: string[];
  sourceStamp: string;
}

function join(...parts: string[]): string {
  return parts.join(Deno.build.os === "windows" ? "\\" : "/");
}

/** The launcher's cache directory (not created), or `undefined` without a home. */
export function launcherCacheDir(): string | undefined {
  const os = Deno.build.os;
  const home = readProcessEnv("HOME") || readProcessEnv("USERPROFILE");
  let base: string | undefined;
  if (os === "windows") base = readProcessEnv("LOCALAPPDATA");
  else if (os === "darwin") {
    base = home ? join(home, "Library", "Caches") : undefined;
  } else {
    base = readProcessEnv("XDG_CACHE_HOME") ||
      (home ? join(home, ".cache") : undefined);
  }
  return base ? join(base, "hermes-memory", "launcher") : undefined;
}

/** The `src/` folders whose code computes the grant. */
const GRANT_CODE = "_util core io profile config sandbox plugins cli launcher"
  .split(" ");

/**
 * Files (and folders: their mtime shows adds and removes) whose change
 * recomputes the grant; not subfolders (`cli/commands/`: a test checks that
 * `plan.ts` imports nothing outside this list); `deno.json` and `deno.lock`
 * are in the record's `deps`.
 */
export function grantSources(root: string): string[] {
  const paths: string[] = [];
  for (const name of GRANT_CODE) {
    const dir = join(root, "src", name);
    try {
      const files = [...Deno.readDirSync(dir)].filter((e) =>
        e.isFile && /\.(ts|json|yaml)$/.test(e.name)
      );
      paths.push(dir, ...files.map((e) => join(dir, e.name)));
    } catch {
      // Not there: nothing to watch.
    }
  }
  return paths;
}

/** The files' modification times as one string (`-`: gone). */
export function sourceStamp(paths: readonly string[]): string {
  return paths.map((path) => {
    try {
      return String(Deno.statSync(path).mtime?.getTime() ?? 0);
    } catch {
      return "-";
    }
  }).join(",");
}

/** Reads a launch record; `undefined` when absent, unreadable or of another format. */
export function readLaunchRecord(path: string): LaunchRecord | undefined {
  try {
    const record = JSON.parse(Deno.readTextFileSync(path)) as LaunchRecord;
    if (
      record?.format !== LAUNCH_FORMAT || !Array.isArray(record.denoArgs) ||
      typeof record.deps !== "string" ||
      !Array.isArray(record.observations) ||
      typeof record.inputsDigest !== "string" ||
      !Array.isArray(record.sources) || typeof record.sourceStamp !== "string"
    ) {
      return undefined;
    }
    return record;
  } catch {
    return undefined;
  }
}

/** Writes a file atomically, mode 0600 (directory 0700); failures only cost speed. */
export function writeCacheFile(dir: string, name: string, text: string): void {
  try {
    Deno.mkdirSync(dir, { recursive: true, mode: 0o700 });
    const temp = join(dir, `.${name}.${crypto.randomUUID().slice(0, 8)}.tmp`);
    Deno.writeTextFileSync(temp, text, { mode: 0o600 });
    Deno.renameSync(temp, join(dir, name));
  } catch {
    // A read-only or full cache directory only costs speed.
  }
}

/** Keeps the newest {@linkcode KEEP_RECORDS} launch records and cache markers. */
export function pruneLaunchRecords(dir: string): void {
  try {
    const records: { path: string; mtime: number }[] = [];
    for (const entry of Deno.readDirSync(dir)) {
      if (!entry.isFile || !KEPT.test(entry.name)) continue;
      const path = join(dir, entry.name);
      records.push({ path, mtime: Deno.statSync(path).mtime?.getTime() ?? 0 });
    }
    records.sort((a, b) => b.mtime - a.mtime);
    for (const old of records.slice(KEEP_RECORDS)) Deno.removeSync(old.path);
  } catch {
    // Pruning is best effort.
  }
}

/** A record's key: what the computation depends on beyond its reads and stamp. */
export function launchKey(parts: Record<string, unknown>): Promise<string> {
  return sha256Hex(JSON.stringify({ format: LAUNCH_FORMAT, ...parts }));
}
