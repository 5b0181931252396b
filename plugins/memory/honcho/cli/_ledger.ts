/**
 * The migration ledger, `$HERMES_HOME/state/honcho_migration.json`: what
 * `migrate` and `identity` already sent, keyed by server, workspace, peer,
 * kind, file name and content digest, so running them again sends nothing
 * twice (and an edited file is sent again). Written atomically, `0600`,
 * under a lock, after each successful send.
 *
 * Internal to the Honcho CLI.
 *
 * @module
 */

import { join } from "node:path";
import {
  atomicJsonWrite,
  readJsonOrEmpty,
  withFileLock,
} from "../../../../mod.ts";
import { isRecord } from "./_common.ts";

/** What was sent once. */
export interface LedgerEntry {
  /** The ledger key (also sent as `migration_id` message metadata). */
  id: string;
  /** `upload` (a user memory file) or `identity` (an AI identity seed). */
  kind: "upload" | "identity";
  /** The server. */
  baseUrl: string;
  /** The workspace. */
  workspace: string;
  /** The peer the content was attributed to. */
  peer: string;
  /** The local file name (`USER.md`). */
  file: string;
  /** The local path read. */
  source: string;
  /** SHA-256 of the content, hex. */
  digest: string;
  /** The Honcho session it went to. */
  sessionId: string;
  /** When it was sent (ISO 8601). */
  at: string;
  /** The message ids created (empty when found on the server instead). */
  messageIds: string[];
}

/** The identity of one send, before it happens. */
export interface LedgerKey {
  /** `upload` or `identity`. */
  kind: "upload" | "identity";
  /** The server. */
  baseUrl: string;
  /** The workspace. */
  workspace: string;
  /** The peer. */
  peer: string;
  /** The local file name. */
  file: string;
  /** SHA-256 of the content, hex. */
  digest: string;
}

/**
 * The ledger file of a profile home.
 *
 * @param hermesHome The profile home.
 * @returns `<home>/state/honcho_migration.json`.
 *
 * @example
 * ```ts
 * import { ledgerPath } from "./_ledger.ts";
 * import assert from "node:assert/strict";
 * assert.equal(ledgerPath("/h"), "/h/state/honcho_migration.json");
 * ```
 */
export function ledgerPath(hermesHome: string): string {
  return join(hermesHome, "state", "honcho_migration.json");
}

/**
 * SHA-256 of a text, as lowercase hex.
 *
 * @param text The text.
 * @returns The digest.
 *
 * @example
 * ```ts
 * import { sha256Hex } from "./_ledger.ts";
 * import assert from "node:assert/strict";
 * assert.equal((await sha256Hex("")).slice(0, 8), "e3b0c442");
 * ```
 */
export async function sha256Hex(text: string): Promise<string> {
  const bytes = new Uint8Array(
    await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text)),
  );
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}

/**
 * The ledger id of a send: 32 hex digits of the SHA-256 of its key fields.
 *
 * @param key What is sent where.
 * @returns The id.
 *
 * @example
 * ```ts
 * import { ledgerId } from "./_ledger.ts";
 * import assert from "node:assert/strict";
 * const id = await ledgerId({ kind: "upload", baseUrl: "http://h", workspace: "w", peer: "p", file: "USER.md", digest: "d" });
 * assert.equal(id.length, 32);
 * ```
 */
export async function ledgerId(key: LedgerKey): Promise<string> {
  const text = [
    key.kind,
    key.baseUrl,
    key.workspace,
    key.peer,
    key.file,
    key.digest,
  ].join("\n");
  return (await sha256Hex(text)).slice(0, 32);
}

/**
 * Reads the ledger (`{}` when missing or unreadable).
 *
 * @param hermesHome The profile home.
 * @returns Entries by id.
 *
 * @example
 * ```ts no-assert
 * import { readLedger } from "./_ledger.ts";
 * const entries = await readLedger("/tmp/home");
 * ```
 */
export async function readLedger(
  hermesHome: string,
): Promise<Record<string, LedgerEntry>> {
  const raw = await readJsonOrEmpty(ledgerPath(hermesHome));
  const entries = isRecord(raw.entries) ? raw.entries : {};
  const out: Record<string, LedgerEntry> = {};
  for (const [id, value] of Object.entries(entries)) {
    if (isRecord(value) && typeof value.id === "string") {
      out[id] = value as unknown as LedgerEntry;
    }
  }
  return out;
}

/**
 * Adds one entry (read-modify-write under a lock, atomic, `0600`).
 *
 * @param hermesHome The profile home.
 * @param entry The entry.
 * @returns Resolves once written.
 *
 * @example
 * ```ts no-assert
 * import { recordLedgerEntry } from "./_ledger.ts";
 * await recordLedgerEntry("/tmp/home", { id: "x", kind: "upload", baseUrl: "http://h", workspace: "w", peer: "p", file: "USER.md", source: "/x/USER.md", digest: "d", sessionId: "s", at: new Date().toISOString(), messageIds: [] });
 * ```
 */
export async function recordLedgerEntry(
  hermesHome: string,
  entry: LedgerEntry,
): Promise<void> {
  const path = ledgerPath(hermesHome);
  await Deno.mkdir(join(hermesHome, "state"), { recursive: true });
  await withFileLock(`${path}.lock`, async () => {
    const raw = await readJsonOrEmpty(path);
    const entries = isRecord(raw.entries) ? { ...raw.entries } : {};
    entries[entry.id] = entry;
    await atomicJsonWrite(path, { version: 1, entries }, { mode: 0o600 });
  });
}
