// The launcher's cache (plain Deno APIs: runs on every start). It is under
// the floor (no grant reaches it), and each record is sealed (AES-GCM) with a
// key kept beside it: a record changed by anyone but the launcher, or moved
// to another name, does not open and is recomputed, never run.

import { hermesCacheDir } from "../core/env.ts";
import type { Observation } from "./input_record.ts";
import { sha256Hex } from "../_util/sha256.ts";

/** The format of a cached launch record; older ones are recomputed. */
export const LAUNCH_FORMAT = 5;

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
  const base = hermesCacheDir();
  return base && join(base, "launcher");
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

/**
 * The launcher's sealing key: 32 random bytes in `key` (mode 0600) in its
 * cache directory, made on first use; `undefined` when it cannot be kept
 * (then no record is kept either).
 */
export async function launcherKey(dir: string): Promise<CryptoKey | undefined> {
  const path = join(dir, "key");
  try {
    Deno.statSync(path);
  } catch {
    try {
      Deno.mkdirSync(dir, { recursive: true, mode: 0o700 });
      const raw = crypto.getRandomValues(new Uint8Array(32));
      Deno.writeFileSync(path, raw, { mode: 0o600, createNew: true });
    } catch {
      // Made by another launcher meanwhile, or not kept: the read tells.
    }
  }
  try {
    const raw = Deno.readFileSync(path) as Uint8Array<ArrayBuffer>;
    if (raw.length !== 32) return undefined;
    const uses: KeyUsage[] = ["encrypt", "decrypt"];
    return await crypto.subtle.importKey("raw", raw, "AES-GCM", false, uses);
  } catch {
    return undefined;
  }
}

const gcm = (name: string, iv: Uint8Array<ArrayBuffer>) => ({
  name: "AES-GCM",
  iv,
  additionalData: new TextEncoder().encode(name),
});

/** A record sealed under `key` for the file `name` (12-byte nonce, then the ciphertext). */
export async function sealRecord(
  record: LaunchRecord,
  key: CryptoKey,
  name: string,
): Promise<Uint8Array> {
  const iv = crypto.getRandomValues(new Uint8Array(12));
  const text = new TextEncoder().encode(JSON.stringify(record));
  const sealed = await crypto.subtle.encrypt(gcm(name, iv), key, text);
  return new Uint8Array([...iv, ...new Uint8Array(sealed)]);
}

/** Opens a sealed launch record; `undefined` when absent, changed, sealed by another key or of another format. */
export async function readLaunchRecord(
  dir: string,
  name: string,
  key: CryptoKey,
): Promise<LaunchRecord | undefined> {
  try {
    const bytes = Deno.readFileSync(join(dir, name));
    const iv = bytes.slice(0, 12);
    const plain = await crypto.subtle.decrypt(
      gcm(name, iv),
      key,
      bytes.subarray(12),
    );
    const record = JSON.parse(new TextDecoder().decode(plain)) as LaunchRecord;
    return record?.format === LAUNCH_FORMAT ? record : undefined;
  } catch {
    return undefined;
  }
}

/** Writes a file atomically, mode 0600 (directory 0700); failures only cost speed. */
export function writeCacheFile(
  dir: string,
  name: string,
  data: Uint8Array,
): void {
  try {
    Deno.mkdirSync(dir, { recursive: true, mode: 0o700 });
    const temp = join(dir, `.${name}.${crypto.randomUUID().slice(0, 8)}.tmp`);
    Deno.writeFileSync(temp, data, { mode: 0o600 });
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
