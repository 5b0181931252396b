/**
 * Local memory files sent to Honcho once (plugins/memory/honcho/SPEC.md §11):
 * a ledger in `state/honcho_migration.json` and a `migration_id` tag per send.
 * @module
 */

import { basename, join } from "../../../../src/provider/_bundled.ts";
import {
  atomicJsonWrite,
  readJsonOrEmpty,
  withFileLock,
} from "../../../../mod.ts";
import type { HonchoClient } from "../client/client.ts";
import { MAX_MESSAGE_CHARS } from "../client/wire.ts";
import type { HonchoConfig } from "../config/config.ts";
import { chunkMessage } from "../session/chunking.ts";
import { resolveAiPeerId } from "../session/peers.ts";
import { isRecord, sanitizeId } from "../_util.ts";
import { connectHoncho } from "./_common.ts";

/** `description` is what it holds, for the `<context>` note. */
interface UserMemoryFile {
  file: string;
  uploadName: string;
  description: string;
}

/** One send; its ledger id is 32 hex digits of the SHA-256 of these fields. */
interface LedgerKey {
  kind: "upload" | "identity";
  baseUrl: string;
  workspace: string;
  peer: string;
  file: string;
  /** SHA-256 of the content, hex. */
  digest: string;
}

/** `messageIds` is empty when the send was found on the server instead. */
interface LedgerEntry extends LedgerKey {
  /** Also sent as `migration_id` message metadata. */
  id: string;
  /** The local path read. */
  source: string;
  sessionId: string;
  at: string;
  messageIds: string[];
}

/** The user memory files, in upload order. */
export const USER_MEMORY_FILES: readonly UserMemoryFile[] = Object.freeze([
  {
    file: "USER.md",
    uploadName: "user_profile.md",
    description: "the user's profile and preferences",
  },
  {
    file: "MEMORY.md",
    uploadName: "consolidated_memory.md",
    description: "long-term agent notes and preferences about the user",
  },
]);

/** The agent files seeded into the AI peer, in order. */
export const AGENT_IDENTITY_FILES: readonly string[] = Object.freeze([
  "SOUL.md",
  "IDENTITY.md",
  "AGENTS.md",
  "TOOLS.md",
  "BOOTSTRAP.md",
]);

/** Where a send goes (the client's workspace; the home's ledger). */
export interface SeedTarget {
  client: HonchoClient;
  config: HonchoConfig;
  sessionId: string;
  hermesHome: string;
}

/** What one send did: `already-sent` when the ledger or the server has it. */
export interface SeedResult {
  status: "sent" | "already-sent";
  entry: LedgerEntry;
}

/** A `<prior_memory_file>` block with its `<context>` note. */
function wrapPriorMemoryFile(
  file: UserMemoryFile,
  content: string,
): string {
  return [
    "<prior_memory_file>",
    "<context>",
    `This file (${file.file}) was consolidated locally before Honcho was activated. It holds ${file.description}.`,
    "</context>",
    "",
    content.trim(),
    "</prior_memory_file>",
  ].join("\n");
}

function identitySeedText(source: string, content: string): string {
  return `<ai_identity_seed>\n<source>${source}</source>\n${content.trim()}\n</ai_identity_seed>`;
}

/** Connects and creates the session with both peers and their observation switches, as the provider does. */
export async function openSeedTarget(
  config: HonchoConfig,
  sessionId: string,
  hermesHome: string,
): Promise<SeedTarget> {
  const client = await connectHoncho(config);
  const flags = config.observationFlags;
  const peers: Record<string, { observeMe: boolean; observeOthers: boolean }> =
    { [resolveAiPeerId(config)]: { ...flags.ai } };
  if (config.peerName) {
    peers[sanitizeId(config.peerName)] = { ...flags.user };
  }
  await client.getOrCreateSession(sessionId);
  await client.addSessionPeers(sessionId, peers);
  return { client, config, sessionId, hermesHome };
}

const ledgerPath = (hermesHome: string): string =>
  join(hermesHome, "state", "honcho_migration.json");

async function sha256Hex(text: string): Promise<string> {
  const bytes = new Uint8Array(
    await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text)),
  );
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}

async function readLedger(
  hermesHome: string,
): Promise<Record<string, LedgerEntry>> {
  const raw = await readJsonOrEmpty(ledgerPath(hermesHome));
  const entries = Object.entries(isRecord(raw.entries) ? raw.entries : {});
  return Object.fromEntries(
    entries.filter(([, v]) => isRecord(v) && typeof v.id === "string"),
  ) as Record<string, LedgerEntry>;
}

/** Adds one entry: read-modify-write under a lock, atomic, `0600`. */
async function recordLedgerEntry(
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

async function findOnServer(target: SeedTarget, id: string): Promise<boolean> {
  try {
    const page = await target.client.listMessages(target.sessionId, {
      filters: { metadata: { migration_id: id } },
      size: 1,
    });
    return page.items.length > 0;
  } catch {
    return false;
  }
}

/** Sends `content` once (unless `force`): skipped when the ledger or the session has it. */
async function sendOnce(
  target: SeedTarget,
  key: Omit<LedgerKey, "baseUrl" | "workspace" | "digest">,
  path: string,
  content: string,
  force: boolean,
  send: (id: string) => Promise<string[]>,
): Promise<SeedResult> {
  const full: LedgerKey = {
    kind: key.kind,
    baseUrl: target.client.baseUrl,
    workspace: target.client.workspaceId,
    peer: key.peer,
    file: key.file,
    digest: await sha256Hex(content),
  };
  const id = (await sha256Hex(Object.values(full).join("\n"))).slice(0, 32);
  const done = force ? undefined : (await readLedger(target.hermesHome))[id];
  if (done) return { status: "already-sent", entry: done };
  const onServer = !force && await findOnServer(target, id);
  const messageIds = onServer ? [] : await send(id);
  const entry: LedgerEntry = {
    id,
    ...full,
    source: path,
    sessionId: target.sessionId,
    at: new Date().toISOString(),
    messageIds,
  };
  await recordLedgerEntry(target.hermesHome, entry);
  return { status: onServer ? "already-sent" : "sent", entry };
}

/** Uploads one user memory file to the user peer (multipart upload route). */
export async function uploadUserMemoryFile(
  target: SeedTarget,
  file: UserMemoryFile,
  path: string,
  content: string,
): Promise<SeedResult> {
  const peer = sanitizeId(target.config.peerName ?? "");
  return await sendOnce(
    target,
    { kind: "upload", peer, file: file.file },
    path,
    content,
    false,
    async (id) =>
      (await target.client.uploadFile(target.sessionId, {
        peerId: peer,
        file: wrapPriorMemoryFile(file, content),
        filename: file.uploadName,
        contentType: "text/plain",
        metadata: {
          source: "local_memory",
          original_file: file.file,
          target_peer: "user",
          migration_id: id,
        },
      })).map((m) => m.id),
  );
}

/** Seeds the AI peer: messages authored by it, chunked past Honcho's limit. */
export async function seedAiIdentity(
  target: SeedTarget,
  path: string,
  content: string,
  force: boolean,
): Promise<SeedResult> {
  const peer = resolveAiPeerId(target.config);
  const name = basename(path);
  return await sendOnce(
    target,
    { kind: "identity", peer, file: name },
    path,
    content,
    force,
    async (id) => {
      const whole = identitySeedText(name, content);
      const texts = whole.length <= MAX_MESSAGE_CHARS
        ? [whole]
        : chunkMessage(content.trim(), MAX_MESSAGE_CHARS - 200).map((part) =>
          identitySeedText(name, part)
        );
      const metadata = {
        source: "ai_identity_seed",
        original_file: name,
        target_peer: "ai",
        migration_id: id,
      };
      const created = [];
      for (let i = 0; i < texts.length; i += 100) {
        created.push(
          ...await target.client.createMessages(
            target.sessionId,
            texts.slice(i, i + 100).map((text) => ({
              peerId: peer,
              content: text,
              metadata,
            })),
          ),
        );
      }
      return created.map((m) => m.id);
    },
  );
}
