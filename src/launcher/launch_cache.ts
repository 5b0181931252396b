/**
 * Where the launcher keeps what it computed, and the keys it is filed
 * under. Plain Deno APIs only: this runs on every start.
 *
 * The cache lives outside every profile home
 * (`$XDG_CACHE_HOME/hermes-memory/launcher/`, else
 * `~/.cache/hermes-memory/launcher/`; `%LOCALAPPDATA%` on Windows), so
 * neither the CLI (whose grant is the profile home) nor a sandboxed
 * provider can write the grant the next start will use.
 *
 * @module
 */

import { denoCacheDir, readProcessEnv } from "../core/env.ts";

export { denoCacheDir };
import { type Observation, sha256Hex } from "./input_record.ts";

/** The format of a cached launch record; older ones are recomputed. */
export const LAUNCH_FORMAT = 3;

/** How many launch records are kept (one per profile and directory). */
const KEEP_RECORDS = 64;

/** What the launcher computed for one profile, directory and install. */
export interface LaunchRecord {
  /** {@linkcode LAUNCH_FORMAT}. */
  format: number;
  /** The `deno` arguments before the user's: `run`, flags, entry. */
  denoArgs: string[];
  /** Variables set for the CLI. */
  env: Record<string, string>;
  /** The reads the computation made (replayed to check the record). */
  observations: Observation[];
  /** SHA-256 over everything those reads returned. */
  inputsDigest: string;
  /** The framework source files the grant code is (local checkouts). */
  sources: string[];
  /** Their modification times then ({@linkcode sourceStamp}). */
  sourceStamp: string;
}

function join(...parts: string[]): string {
  return parts.join(Deno.build.os === "windows" ? "\\" : "/");
}

/**
 * The launcher's cache directory, or `undefined` when no home is known.
 *
 * @returns The directory (not created).
 */
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
const GRANT_CODE = [
  "_util",
  "core",
  "io",
  "profile",
  "config",
  "sandbox",
  "plugins",
  "cli",
  "launcher",
];

/**
 * The framework's own source files whose change must recompute the grant
 * when it runs from a local checkout: the `src/` folders that compute it
 * (and those folders themselves, whose modification time changes when a
 * file is added or removed), `deno.json` and `deno.lock`.
 */
export function grantSources(root: string): string[] {
  const paths: string[] = [join(root, "deno.json"), join(root, "deno.lock")];
  const walk = (dir: string, depth: number): void => {
    let entries: Deno.DirEntry[];
    try {
      entries = [...Deno.readDirSync(dir)];
    } catch {
      return;
    }
    paths.push(dir);
    for (const entry of entries) {
      const path = join(dir, entry.name);
      if (entry.isDirectory && depth < 6) walk(path, depth + 1);
      else if (entry.isFile && /\.(ts|json|yaml)$/.test(entry.name)) {
        paths.push(path);
      }
    }
  };
  for (const dir of GRANT_CODE) walk(join(root, "src", dir), 0);
  return paths;
}

/**
 * The modification times of some files, as one string (`-` for a file
 * that is gone): equal stamps mean none of them was edited, added or
 * removed.
 */
export function sourceStamp(paths: readonly string[]): string {
  return paths.map((path) => {
    try {
      return String(Deno.statSync(path).mtime?.getTime() ?? 0);
    } catch {
      return "-";
    }
  }).join(",");
}

/**
 * Reads a launch record; `undefined` when absent, unreadable or of
 * another format.
 */
export function readLaunchRecord(path: string): LaunchRecord | undefined {
  try {
    const record = JSON.parse(Deno.readTextFileSync(path)) as LaunchRecord;
    if (
      record?.format !== LAUNCH_FORMAT || !Array.isArray(record.denoArgs) ||
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

/**
 * Writes a file atomically (temporary file, then rename), mode 0600,
 * creating the directory (mode 0700). Failures are ignored: the cache
 * only saves time.
 */
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

/**
 * Keeps the newest {@linkcode KEEP_RECORDS} launch records.
 */
export function pruneLaunchRecords(dir: string): void {
  try {
    const records: { path: string; mtime: number }[] = [];
    for (const entry of Deno.readDirSync(dir)) {
      if (!entry.isFile || !/^plan-[0-9a-f]+\.json$/.test(entry.name)) continue;
      const path = join(dir, entry.name);
      records.push({ path, mtime: Deno.statSync(path).mtime?.getTime() ?? 0 });
    }
    records.sort((a, b) => b.mtime - a.mtime);
    for (const old of records.slice(KEEP_RECORDS)) Deno.removeSync(old.path);
  } catch {
    // Pruning is best effort.
  }
}

/**
 * The key a launch record is filed under: everything the computation
 * depends on that its recorded reads and source stamp do not show (the
 * launcher itself, the Deno version, the working directory, the
 * `--profile` value and the setup target).
 *
 * @returns 64 hex digits.
 */
export function launchKey(parts: Record<string, unknown>): Promise<string> {
  return sha256Hex(JSON.stringify({ format: LAUNCH_FORMAT, ...parts }));
}
