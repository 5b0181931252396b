/** What `hermes memory setup` changed: every key that differs between the files before and after, secrets masked. @module */

import { basename, relative } from "../_util/path.ts";
import { loadConfig } from "../config/config.ts";
import { isCredentialName, loadEnvFile } from "../profile/env_file.ts";
import { maskSecret } from "../core/mask.ts";
import { isRecord } from "../_util/is_record.ts";

export interface TrackedFile {
  path: string;
  format: "yaml" | "json" | "env";
}

/** The flattened keys of one file (`undefined`: missing or unreadable). */
export type FileSnapshot = Map<string, Record<string, unknown> | undefined>;

/** One key setup changed (or, for `memory.provider`, kept); values masked when secret, `null` when absent. */
export interface SettingsChange {
  /** Relative to the profile home (`config.yaml`, `.env`). */
  file: string;
  path: string;
  /** Dotted for nested keys (`hosts.hermes.baseUrl`). */
  key: string;
  change: "set" | "changed" | "removed" | "unchanged";
  before: unknown;
  after: unknown;
}

function flatten(
  value: Record<string, unknown>,
  prefix = "",
  out: Record<string, unknown> = {},
): Record<string, unknown> {
  for (const [key, inner] of Object.entries(value)) {
    const path = prefix === "" ? key : `${prefix}.${key}`;
    if (isRecord(inner) && Object.keys(inner).length > 0) {
      flatten(inner, path, out);
    } else out[path] = inner;
  }
  return out;
}

async function readFlat(
  file: TrackedFile,
): Promise<Record<string, unknown> | undefined> {
  try {
    if (file.format === "env") return { ...await loadEnvFile(file.path) };
    if (file.format === "yaml") {
      const dir = file.path.replace(/[\\/][^\\/]*$/, "");
      return flatten(await loadConfig({ hermesHome: dir }));
    }
    const parsed: unknown = JSON.parse(await Deno.readTextFile(file.path));
    return isRecord(parsed) ? flatten(parsed) : undefined;
  } catch {
    return undefined;
  }
}

export async function snapshotFiles(
  files: readonly TrackedFile[],
): Promise<FileSnapshot> {
  const out: FileSnapshot = new Map();
  for (const file of files) out.set(file.path, await readFlat(file));
  return out;
}

/** Whether a key holds a secret: a credential name in `.env`, elsewhere a key like `apiKey`, `token`, `secret`, `password`, `oauth`. */
export function isSecretKey(
  key: string,
  format: TrackedFile["format"],
): boolean {
  if (format === "env") return isCredentialName(key);
  const last = key.split(".").at(-1) ?? key;
  return /(api_?key|token|secret|password|oauth)$/i.test(last) ||
    /^(api_?key|token|secret|password|oauth)/i.test(last);
}

function shown(key: string, format: TrackedFile["format"], value: unknown) {
  if (value === undefined) return null;
  if (isSecretKey(key, format) && value !== null && value !== "") {
    return maskSecret(
      typeof value === "string" ? value : JSON.stringify(value),
    );
  }
  return value;
}

const same = (a: unknown, b: unknown) =>
  JSON.stringify(a) === JSON.stringify(b);

/** The keys that differ between two snapshots, file by file in the order given, plus `memory.provider` of `config.yaml` always. */
export function diffSnapshots(
  files: readonly TrackedFile[],
  before: FileSnapshot,
  after: FileSnapshot,
  hermesHome: string,
): SettingsChange[] {
  const out: SettingsChange[] = [];
  for (const file of files) {
    const a = before.get(file.path) ?? {};
    const b = after.get(file.path) ?? {};
    const name = relativeName(file.path, hermesHome);
    const keys = [...new Set([...Object.keys(a), ...Object.keys(b)])];
    for (const key of keys) {
      const had = Object.hasOwn(a, key);
      const has = Object.hasOwn(b, key);
      const always = file.format === "yaml" && key === "memory.provider";
      if (had && has && same(a[key], b[key]) && !always) continue;
      out.push({
        file: name,
        path: file.path,
        key,
        change: !had
          ? "set"
          : !has
          ? "removed"
          : same(a[key], b[key])
          ? "unchanged"
          : "changed",
        before: shown(key, file.format, a[key]),
        after: shown(key, file.format, b[key]),
      });
    }
  }
  return out;
}

function relativeName(path: string, home: string): string {
  const rel = relative(home, path);
  return rel.startsWith("..") || rel === "" ? basename(path) : rel;
}

function text(value: unknown): string {
  if (value === null || value === undefined) return "(none)";
  if (typeof value === "string") return value === "" ? '""' : value;
  return JSON.stringify(value);
}

/** One line each: `honcho.json: hosts.hermes.peerName set to alice`. */
export function renderChanges(changes: readonly SettingsChange[]): string {
  if (changes.length === 0) return "\nNo settings file changed.\n";
  let out = "\nChanges:\n";
  for (const c of changes) {
    const what = c.change === "set"
      ? `set to ${text(c.after)}`
      : c.change === "removed"
      ? `removed (was ${text(c.before)})`
      : `${text(c.before)} \u2192 ${text(c.after)}${
        c.change === "unchanged" ? " (unchanged)" : ""
      }`;
    out += `  ${c.file}: ${c.key} ${what}\n`;
  }
  return out;
}
