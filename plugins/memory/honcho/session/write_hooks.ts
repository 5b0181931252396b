/**
 * The provider's write side (plugins/memory/honcho/SPEC.md §9): turns become outbox records in
 * `syncTurn` order, memory writes conclusions; checkpoints (API v2) ensure the evidence is stored.
 * @module
 */

import {
  type ChatMessage,
  type DrainResult,
  log,
  type MemoryTarget,
  type MemoryWriteAction,
  permissionDenialsReportedByHost,
  type SyncTurnOptions,
} from "../../../../src/provider/mod.ts";
import { chunkMessage } from "./chunking.ts";
import {
  CHUNK_METADATA_KEY,
  DIGEST_METADATA_KEY,
  evidenceItems,
  missingEvidence,
  ROLE_METADATA_KEY,
  storedDigestCounts,
  storedText,
  turnDigest,
} from "./checkpoint.ts";
import type { HonchoConfig } from "../config/config.ts";
import {
  describeHonchoError,
  HonchoError,
  isHonchoError,
} from "../client/errors.ts";
import { classifyFailure, type NoticeCause } from "../notices.ts";
import {
  HonchoOutbox,
  type HonchoOutboxOptions,
  type OutboxMessageInput,
  stableOutboxId,
} from "../outbox/outbox.ts";
import type { OutboxDeliverResult } from "../outbox/_delivery.ts";
import { type PeerNamingConfig, resolveAuthorPeerId } from "./peers.ts";
import type { HonchoSession, HonchoSessionIdentity } from "./session.ts";
import { a2aSessionKey, honchoSessionId } from "./naming.ts";
import { isInternalGatewayNotification } from "./turn_filter.ts";
import { type HonchoRuntime, waitFor } from "../_runtime.ts";
import { deadlineSignal, errorText, sanitizeId } from "../_util.ts";

/** Who wrote the user side of a turn (`id` unset: the session's user). */
export interface TurnAuthorInfo {
  id: string | undefined;
  name: string | undefined;
  isBot: boolean;
}

/** A turn's author, from `onTurnStart`'s options or `syncTurn`'s `turnAuthor` (no id: the session's user). */
export function turnAuthorInfo(
  id: unknown,
  name: unknown,
  isBot: unknown,
): TurnAuthorInfo {
  return {
    id: typeof id === "string" && id.trim() ? id.trim() : undefined,
    name: typeof name === "string" ? name : undefined,
    isBot: isBot === true,
  };
}

export interface HonchoWriteHooksOptions {
  /** The profile home (the outbox lives under it). */
  hermesHome: string;
  outbox?: Omit<HonchoOutboxOptions, "workspace" | "hermesHome" | "delivery">;
  maxStagedMessages?: number;
  /** @default {max(10000, request timeout)} */
  checkpointTimeoutMs?: number;
}

/** The planned join of an author peer (`create`: an a2a session to create). */
export interface TurnJoin {
  session: string;
  peer: string;
  create: boolean;
}

const BEST_EFFORT_CHECKPOINT_MS = 2_000;

export class HonchoWriteHooks {
  readonly outbox: HonchoOutbox;
  #rt: HonchoRuntime;
  #session: HonchoSession;
  #checkpointTimeoutMs: number | undefined;
  #memoryWrites = new Set<Promise<void>>();
  #warned = new Set<NoticeCause>();
  /** The last delivery round failed to reach Honcho (see #onDeliveryResult). */
  #missedOnce = false;

  constructor(
    runtime: HonchoRuntime,
    session: HonchoSession,
    options: HonchoWriteHooksOptions,
  ) {
    this.#rt = runtime;
    this.#session = session;
    this.#checkpointTimeoutMs = options.checkpointTimeoutMs;
    const config = runtime.config;
    // The file keeps the configured name (earlier versions queued there); delivery sanitises it.
    this.outbox = new HonchoOutbox({
      ...options.outbox,
      workspace: config.workspaceId,
      hermesHome: options.hermesHome,
      maxStagedMessages: options.maxStagedMessages,
      prepareSession: (client, id, peers, signal) =>
        session.prepare(client, id, peers, signal),
      delivery: {
        client: runtime.client,
        writeFrequency: config.writeFrequency,
        ensureReady: (signal) => session.ensure(signal),
        onResult: (result) => this.#onDeliveryResult(result),
      },
    });
  }

  /** Stores a completed turn: returns without waiting for the disk or the network, unless the disk is far behind (back-pressure). */
  syncTurn(
    userContent: string,
    assistantContent: string,
    options: SyncTurnOptions,
    author: TurnAuthorInfo,
  ): Promise<void> | undefined {
    const config = this.#rt.config;
    if (!config.saveMessages || this.#rt.stopped()) return;
    const user = typeof userContent === "string" ? userContent : "";
    if (isInternalGatewayNotification(user)) return;
    const userText = storedText(user);
    const aiText = storedText(
      typeof assistantContent === "string" ? assistantContent : "",
    );
    if (userText === "" && aiText === "") return;
    if (!this.#session.ready && config.recallMode !== "tools") {
      this.#session.kick();
    }
    const messages = (userText ? 1 : 0) + (aiText ? 1 : 0);
    const turnId = typeof options.turnId === "string" && options.turnId
      ? options.turnId
      : undefined;
    const given = options.turnAuthor;
    const turnAuthor = given
      ? turnAuthorInfo(given.id, given.name, given.isBot)
      : author;
    const records = (identity: HonchoSessionIdentity | undefined) => {
      if (!identity) return [];
      const turn = turnRecords(config, identity, {
        author: turnAuthor,
        userText,
        aiText,
        turnId,
        writeId: options.writeId || undefined,
      });
      if (turn.join) {
        const { session, peer, create } = turn.join;
        this.#session.planJoin(session, peer, identity.aiPeerId, create);
      }
      return turn.records;
    };
    // Until the session is named (naming may await `git`), the turn holds
    // its place in the outbox's queue: turns stay in `syncTurn` order.
    const known = this.#session.identity;
    return known
      ? this.outbox.stage(records(known))
      : this.outbox.stage(this.#session.named().then(records), messages);
  }

  /**
   * Mirrors an `add` to the user profile as a conclusion about the user, in
   * the background (before the session is ready it only starts set-up).
   */
  memoryWrite(
    action: MemoryWriteAction,
    target: MemoryTarget,
    content: string,
  ): void {
    const config = this.#rt.config;
    const text = typeof content === "string" ? storedText(content) : "";
    if (
      !config.saveMessages || action !== "add" || target !== "user" ||
      text === ""
    ) return;
    const session = this.#session;
    if (!session.ready) {
      session.kick();
      return;
    }
    const identity = session.identity!;
    const client = this.#rt.client;
    const observer = session.aiObservesOthers()
      ? identity.aiPeerId
      : identity.userPeerId;
    const write = this.#rt.tasks.spawn("honcho-memory-write", async () => {
      try {
        await client.createConclusions([{
          observerId: observer,
          observedId: identity.userPeerId,
          content: text,
          sessionId: identity.sessionId,
        }], { signal: this.#rt.signal });
      } catch (error) {
        this.#rt.notices.reportError(error);
        log(
          "warn",
          `Honcho could not store a memory write as a conclusion: ${
            this.#rt.scrub(errorText(error))
          }`,
        );
      }
    });
    this.#memoryWrites.add(write);
    write.finally(() => this.#memoryWrites.delete(write));
  }

  /**
   * Waits (at most `timeoutMs`) until every turn is in the fsynced outbox
   * (delivery may still be pending) and every memory write is answered.
   */
  async drain(timeoutMs?: number): Promise<DrainResult> {
    const now = this.#rt.now;
    const deadline = now() + Math.max(0, timeoutMs ?? Infinity);
    const left = (): number => Math.max(0, deadline - now());
    // Durable means in the fsynced outbox, not delivered: a sandbox host forgets a
    // handed-over write on this answer, so it must not come before the fsync.
    const staged = await this.outbox.drain(left());
    let pending = staged.pending ?? 0;
    // A conclusion is sent once, not queued: it stays pending until Honcho answered.
    if (this.#memoryWrites.size > 0) {
      await waitFor(Promise.all([...this.#memoryWrites]), left());
      pending += this.#memoryWrites.size;
    }
    return { drained: pending === 0, pending };
  }

  /**
   * Shutdown after `drain()` and the abort: delivers what is queued (when
   * everything was durable and `saveMessages` is on), closes the outbox,
   * and warns about what did not reach it or is still queued.
   */
  async close(
    durable: DrainResult,
    budgetMs: number,
    left: () => number,
  ): Promise<void> {
    const outbox = this.outbox;
    // Turns not on disk yet get the budget (outbox.close drains them) before any delivery:
    // a turn lost on shutdown is worse than one delivered on the next start.
    if (this.#rt.config.saveMessages && durable.drained) {
      await outbox.flushAll(left());
    }
    await outbox.close(left());
    const stats = await outbox.stats().catch(() => undefined);
    if (!durable.drained || outbox.notDurable > 0) {
      log(
        "warn",
        `Honcho shut down before ${
          durable.pending ?? outbox.notDurable
        } message(s) reached its outbox ${outbox.path} (the disk did not keep up within ${budgetMs} ms)`,
      );
    } else if (stats && stats.pending > 0) {
      log(
        "warn",
        `Honcho shut down with ${stats.pending} message(s) still queued in ${outbox.path}; they are delivered on the next start`,
      );
    }
  }

  /** Flushes the outbox; otherwise throws what it still holds, by reason. */
  async #confirm(what: string, timeoutMs: number): Promise<void> {
    if (await this.outbox.flushAll(timeoutMs)) return;
    const stats = await this.outbox.stats().catch(() => undefined);
    const failure = (why: string) =>
      new Error(`${what} not confirmed by Honcho yet: ${why}`);
    if (stats === undefined) throw failure("the outbox cannot be read");
    const parts: string[] = [];
    if (stats.waiting > 0) {
      parts.push(
        `${stats.waiting} message(s) whose acknowledgement was lost and that Honcho does not show yet (that write may still land until ${
          new Date(stats.settlesAt ?? this.#rt.now()).toISOString()
        }; they are looked up again, never sent twice)`,
      );
    }
    const unsent = stats.pending - stats.waiting;
    if (unsent > 0) parts.push(`${unsent} message(s) not delivered yet`);
    throw failure(
      `${
        parts.join("; ") || "nothing is queued now"
      } (${this.outbox.path}); retry the checkpoint later`,
    );
  }

  /**
   * Checkpoint API v2: resolves only when every evidence message is stored (missing digests queued
   * and delivered), else throws; a best-effort one takes at most 2 s and leaves the rest queued.
   */
  async checkpoint(messages: ChatMessage[], required: boolean): Promise<void> {
    const config = this.#rt.config;
    const outbox = this.outbox;
    if (!config.saveMessages) {
      throw new Error("saveMessages is off, so nothing is stored in Honcho");
    }
    const full = this.#checkpointTimeoutMs ??
      Math.max(10_000, this.#rt.timeoutMs);
    const budget = required ? full : Math.min(full, BEST_EFFORT_CHECKPOINT_MS);
    const deadline = this.#rt.now() + budget;
    const left = (): number => Math.max(0, deadline - this.#rt.now());
    const { signal, clear } = deadlineSignal(
      budget,
      "Honcho checkpoint deadline passed",
    );
    try {
      const items = evidenceItems(Array.isArray(messages) ? messages : []);
      await this.#session.ensure(signal);
      const identity = this.#session.identity!;
      // The outbox first (every uncertain attempt resolved): counting stored digests while a
      // write may still land would queue that evidence a second time.
      await this.#confirm("queued messages are", left());
      if (items.length === 0) return;
      const stored = await storedDigestCounts(
        this.#rt.client,
        identity.sessionId,
        items.map((item) => item.digest),
        signal,
      );
      const missing = missingEvidence(items, stored);
      if (missing.length === 0) return;
      const records = missing.flatMap((item) =>
        chunkRecords(config.messageMaxChars, {
          ...item,
          session: identity.sessionId,
          peer: item.role === "user" ? identity.userPeerId : identity.aiPeerId,
          source: "checkpoint",
        })
      );
      const rejected = await outbox.appendHeld(records);
      if (rejected > 0) {
        throw new Error(
          `the Honcho outbox is full (${rejected} message(s) refused)`,
        );
      }
      if (!required) {
        outbox.kick();
        return;
      }
      await this.#confirm("the checkpoint's messages are", left());
    } finally {
      clear();
    }
  }

  /**
   * A systemic failure (a denied permission, auth, a refused workspace,
   * session or peer) gets one notice and one warning naming the cause and
   * the fix per episode; a round that delivered ends the episode.
   */
  #onDeliveryResult(result: OutboxDeliverResult): void {
    const error = result.error;
    const notices = this.#rt.notices;
    if (error === undefined) {
      if (result.delivered > 0 || result.duplicates > 0) {
        this.#warned.clear();
        this.#missedOnce = false;
      }
      return;
    }
    const host = isHonchoError(error, "permission") ? error.host : undefined;
    let cause = classifyFailure(error);
    let reason = describeHonchoError(error);
    if (
      cause === undefined && result.systemic &&
      error instanceof HonchoError
    ) {
      cause = "refused";
      reason = this.#rt.scrub(errorText(error));
    }
    if (cause === undefined) return;
    // One lost answer (a dropped acknowledgement, looked up before any
    // resend) while Honcho answers the rest is no outage: "unreachable"
    // waits for a second round in a row that cannot reach it.
    if (cause === "unreachable" && !this.#missedOnce) {
      this.#missedOnce = true;
      return;
    }
    notices.report(cause, reason, host);
    if (!result.systemic || this.#warned.has(cause)) return;
    // In a sandbox worker the host has already warned about the denial,
    // naming the same key; the notice above still tells the user.
    if (cause === "permission" && permissionDenialsReportedByHost()) return;
    this.#warned.add(cause);
    const queued = result.pending >= 0
      ? ` (${result.pending} message(s) in ${this.outbox.path})`
      : "";
    log("warn", `${notices.warning(cause, reason, host)}${queued}`);
  }
}

/** A turn's records (user side first, in chunk order) and the join they need. */
export interface TurnRecords {
  records: OutboxMessageInput[];
  join?: TurnJoin;
}

/**
 * The outbox records of one turn (plugins/memory/honcho/SPEC.md §9), chunked at `messageMaxChars`.
 * The user side goes to the user peer, another human author's peer (joined first), or a bot
 * author's peer in its a2a session (none without `a2aSessions`, or when the bot is the AI peer). A
 * `turnId` gives stable ids: the same turn handed over again is stored once.
 */
export function turnRecords(
  config:
    & PeerNamingConfig
    & Pick<HonchoConfig, "a2aSessions" | "messageMaxChars" | "workspaceId">,
  identity: HonchoSessionIdentity,
  turn: {
    author: TurnAuthorInfo;
    userText: string;
    aiText: string;
    turnId?: string;
    /** The host's id of the turn: a stable key, looked up on Honcho only when handed over again (`turnId`). */
    writeId?: string;
  },
): TurnRecords {
  const author = turn.author;
  let session = identity.sessionId;
  let userPeer = identity.userPeerId;
  let join: TurnJoin | undefined;
  if (author.isBot) {
    if (!config.a2aSessions || !author.id) return { records: [] };
    const botPeer = resolveAuthorPeerId(config, author.id) ??
      sanitizeId(author.id);
    if (botPeer === identity.aiPeerId) return { records: [] };
    const colon = author.id.indexOf(":");
    const key = a2aSessionKey(identity.sessionKey, {
      prefix: colon > 0 ? author.id.slice(0, colon) : "a2a",
      ident: colon > 0 ? author.id.slice(colon + 1) : author.id,
      aiPeer: identity.aiPeerId,
    });
    session = honchoSessionId(key);
    userPeer = botPeer;
    join = { session, peer: botPeer, create: true };
  } else if (author.id && !identity.runtimeIds.includes(author.id)) {
    const peer = resolveAuthorPeerId(config, author.id);
    if (peer && peer !== identity.userPeerId && peer !== identity.aiPeerId) {
      userPeer = peer;
      join = { session, peer, create: false };
    }
  }
  // The same key both times (the host sets `turnId` to the write id when it hands a write
  // over again), so the ids match and the lookup finds a copy an ended process stored.
  const key = turn.turnId ?? turn.writeId;
  const side = (role: "user" | "assistant", peer: string, text: string) =>
    text === "" ? [] : chunkRecords(config.messageMaxChars, {
      session,
      peer,
      role,
      text,
      digest: turnDigest(role, text),
      id: key === undefined
        ? undefined
        : (index) =>
          stableOutboxId([config.workspaceId, session, key, role, index]),
    });
  const records = [
    ...side("user", userPeer, turn.userText),
    ...side("assistant", identity.aiPeerId, turn.aiText),
  ];
  // Looked up on Honcho first only when handed over again (`turnId`).
  for (const record of records) record.checkFirst = turn.turnId !== undefined;
  return join ? { records, join } : { records };
}

/** One message's records, chunked, each with role, digest and chunk number. */
function chunkRecords(
  maxChars: number,
  message: {
    session: string;
    peer: string;
    role: "user" | "assistant";
    text: string;
    digest: string;
    source?: string;
    /** A stable id per chunk: the same turn handed over again is stored once. */
    id?: (index: number) => string;
  },
): OutboxMessageInput[] {
  const { session, peer, role, digest, source, id } = message;
  return chunkMessage(message.text, maxChars).map((content, index) => {
    const record: OutboxMessageInput = {
      session,
      peer,
      content,
      metadata: {
        [ROLE_METADATA_KEY]: role,
        [DIGEST_METADATA_KEY]: digest,
        [CHUNK_METADATA_KEY]: index,
        ...(source === undefined ? {} : { hermes_source: source }),
      },
    };
    if (id) record.id = id(index);
    return record;
  });
}
