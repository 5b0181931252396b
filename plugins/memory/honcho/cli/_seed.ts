/**
 * Sending local memory files to Honcho (plugins/memory/honcho/SPEC.md §11): user memory
 * files uploaded to the user peer through the multipart upload route, and
 * AI identity seeds (`<ai_identity_seed>` messages authored by the AI
 * peer). Both are idempotent through the migration ledger and the
 * `migration_id` metadata of the messages already on the server.
 *
 * Internal to the Honcho CLI.
 *
 * @module
 */

import { basename } from "node:path";
import type { HonchoClient } from "../client.ts";
import type { HonchoConfig } from "../config.ts";
import { chunkMessage } from "../chunking.ts";
import { resolveAiPeerId } from "../peers.ts";
import { sanitizeId } from "../session_naming.ts";
import {
  type LedgerEntry,
  ledgerId,
  type LedgerKey,
  readLedger,
  recordLedgerEntry,
  sha256Hex,
} from "./_ledger.ts";

/** A user memory file and how it is uploaded (plugins/memory/honcho/SPEC.md §11). */
export interface UserMemoryFile {
  /** The local name. */
  file: string;
  /** The name it is uploaded as. */
  uploadName: string;
  /** What it holds, for the `<context>` note. */
  description: string;
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

/** The largest message Honcho accepts, in characters. */
const MAX_MESSAGE_CHARS = 25_000;

/** Where a send goes. */
export interface SeedTarget {
  /** The client (its workspace is used). */
  client: HonchoClient;
  /** The resolved configuration (peers, observation flags). */
  config: HonchoConfig;
  /** The Honcho session. */
  sessionId: string;
  /** The profile home (for the ledger). */
  hermesHome: string;
}

/** What one send did. */
export interface SeedResult {
  /** `sent`, or `skipped` because the ledger or the server already has it. */
  status: "sent" | "already-sent";
  /** The ledger entry. */
  entry: LedgerEntry;
}

/**
 * Wraps a user memory file as plugins/memory/honcho/SPEC.md §11 describes: a `<prior_memory_file>` block
 * with a `<context>` note (consolidated locally before Honcho was
 * activated, and what the file holds), then the content.
 *
 * @param file The file's description.
 * @param content Its text.
 * @returns The text uploaded.
 *
 * @example
 * ```ts
 * import { USER_MEMORY_FILES, wrapPriorMemoryFile } from "./_seed.ts";
 * import assert from "node:assert/strict";
 * assert.match(wrapPriorMemoryFile(USER_MEMORY_FILES[0]!, "Likes tea"), /^<prior_memory_file>/);
 * ```
 */
export function wrapPriorMemoryFile(
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

/**
 * The text of an AI identity seed: `<ai_identity_seed>`, the source name in
 * `<source>`, the content, the closing tag.
 *
 * @param source The source name (a file name).
 * @param content The identity text.
 * @returns The message text.
 *
 * @example
 * ```ts
 * import { identitySeedText } from "./_seed.ts";
 * import assert from "node:assert/strict";
 * assert.equal(identitySeedText("SOUL.md", "Be kind"), "<ai_identity_seed>\n<source>SOUL.md</source>\nBe kind\n</ai_identity_seed>");
 * ```
 */
export function identitySeedText(source: string, content: string): string {
  return `<ai_identity_seed>\n<source>${source}</source>\n${content.trim()}\n</ai_identity_seed>`;
}

/**
 * Gets or creates the session with both peers and their observation
 * switches (as the provider does), so that later sessions find the peers
 * configured.
 *
 * @param target Where the send goes.
 * @returns Resolves once the session exists.
 */
export async function ensureSeedSession(target: SeedTarget): Promise<void> {
  const { client, config, sessionId } = target;
  const aiPeer = resolveAiPeerId(config);
  const flags = config.observationFlags;
  const peers: Record<string, { observeMe: boolean; observeOthers: boolean }> =
    { [aiPeer]: { ...flags.ai } };
  if (config.peerName) {
    peers[sanitizeId(config.peerName)] = { ...flags.user };
  }
  await client.getOrCreateSession(sessionId);
  await client.addSessionPeers(sessionId, peers);
}

async function findOnServer(
  target: SeedTarget,
  id: string,
): Promise<boolean> {
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

async function alreadySent(
  target: SeedTarget,
  key: LedgerKey,
  source: string,
  force: boolean,
): Promise<{ id: string; done?: LedgerEntry }> {
  const id = await ledgerId(key);
  if (force) return { id };
  const ledger = await readLedger(target.hermesHome);
  if (ledger[id]) return { id, done: ledger[id] };
  if (await findOnServer(target, id)) {
    const entry: LedgerEntry = {
      id,
      ...key,
      source,
      sessionId: target.sessionId,
      at: new Date().toISOString(),
      messageIds: [],
    };
    await recordLedgerEntry(target.hermesHome, entry);
    return { id, done: entry };
  }
  return { id };
}

/**
 * Uploads one user memory file to the user peer (multipart upload route,
 * metadata `{source: "local_memory", original_file, target_peer: "user",
 * migration_id}`), unless the ledger or the session already has this
 * content.
 *
 * @param target Where it goes.
 * @param file The file's description.
 * @param path The local path.
 * @param content The file's text (not empty).
 * @returns Whether it was sent.
 */
export async function uploadUserMemoryFile(
  target: SeedTarget,
  file: UserMemoryFile,
  path: string,
  content: string,
): Promise<SeedResult> {
  const userPeer = sanitizeId(target.config.peerName ?? "");
  const key: LedgerKey = {
    kind: "upload",
    baseUrl: target.client.baseUrl,
    workspace: target.client.workspaceId,
    peer: userPeer,
    file: file.file,
    digest: await sha256Hex(content),
  };
  const found = await alreadySent(target, key, path, false);
  if (found.done) return { status: "already-sent", entry: found.done };
  const messages = await target.client.uploadFile(target.sessionId, {
    peerId: userPeer,
    file: wrapPriorMemoryFile(file, content),
    filename: file.uploadName,
    contentType: "text/plain",
    metadata: {
      source: "local_memory",
      original_file: file.file,
      target_peer: "user",
      migration_id: found.id,
    },
  });
  const entry: LedgerEntry = {
    id: found.id,
    ...key,
    source: path,
    sessionId: target.sessionId,
    at: new Date().toISOString(),
    messageIds: messages.map((m) => m.id),
  };
  await recordLedgerEntry(target.hermesHome, entry);
  return { status: "sent", entry };
}

/**
 * Seeds the AI peer with an identity text: one message (more when longer
 * than Honcho's 25 000-character limit) authored by the AI peer,
 * `<ai_identity_seed><source>name</source>…</ai_identity_seed>`, unless the
 * ledger or the session already has this content (`force` sends anyway).
 *
 * @param target Where it goes.
 * @param path The local path (its base name is the source name).
 * @param content The identity text (not empty).
 * @param force Send even when already sent.
 * @returns Whether it was sent.
 */
export async function seedAiIdentity(
  target: SeedTarget,
  path: string,
  content: string,
  force: boolean,
): Promise<SeedResult> {
  const aiPeer = resolveAiPeerId(target.config);
  const name = basename(path);
  const key: LedgerKey = {
    kind: "identity",
    baseUrl: target.client.baseUrl,
    workspace: target.client.workspaceId,
    peer: aiPeer,
    file: name,
    digest: await sha256Hex(content),
  };
  const found = await alreadySent(target, key, path, force);
  if (found.done) return { status: "already-sent", entry: found.done };
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
    migration_id: found.id,
  };
  const created = [];
  for (let i = 0; i < texts.length; i += 100) {
    created.push(
      ...await target.client.createMessages(
        target.sessionId,
        texts.slice(i, i + 100).map((text) => ({
          peerId: aiPeer,
          content: text,
          metadata,
        })),
      ),
    );
  }
  const entry: LedgerEntry = {
    id: found.id,
    ...key,
    source: path,
    sessionId: target.sessionId,
    at: new Date().toISOString(),
    messageIds: created.map((m) => m.id),
  };
  await recordLedgerEntry(target.hermesHome, entry);
  return { status: "sent", entry };
}
