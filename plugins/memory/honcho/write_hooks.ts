/**
 * The write hooks of the Honcho provider (plugins/memory/honcho/SPEC.md §9): what
 * `syncTurn`, `onMemoryWrite`, `onSessionEnd`, `onPreCompress` and `drain`
 * do, on top of the {@linkcode HonchoWriter} (durable staging and delivery,
 * `writer.ts`) and the outbox it feeds.
 *
 * - **Turns** become outbox records: user and assistant prose (fences
 *   removed), chunked at `messageMaxChars`, with role, digest and chunk
 *   metadata; the user side goes to the user peer, another human author's
 *   peer (joined to the session first), or a bot author's a2a session.
 * - **Order.** Turns are staged in the order `syncTurn` was called: a turn
 *   handed over while the session is still being named waits for the name,
 *   and every later turn waits behind it (one FIFO), however many awaits
 *   naming takes. Until staged, its messages count as not durable.
 * - **Memory writes** (`add` to the user profile) become Honcho conclusions,
 *   sent in the background; `drain()` waits for their answers.
 * - **Checkpoints** (API v2) make sure every evidence message is stored.
 * - **Delivery results**: a systemic failure gets one notice and one
 *   warning naming the cause and the fix per episode.
 *
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
  type TurnAuthor,
  type TurnStartOptions,
} from "../../../src/provider/mod.ts";
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
import type { HonchoConfig } from "./config.ts";
import { describeHonchoError, HonchoError, isHonchoError } from "./errors.ts";
import type { NoticeCause } from "./notices.ts";
import {
  HonchoOutbox,
  type HonchoOutboxOptions,
  type OutboxDeliverResult,
  type OutboxMessageInput,
  stableOutboxId,
} from "./outbox.ts";
import { type PeerNamingConfig, resolveAuthorPeerId } from "./peers.ts";
import type { HonchoSession, HonchoSessionIdentity } from "./session.ts";
import {
  a2aSessionKey,
  honchoSessionId,
  sanitizeId,
} from "./session_naming.ts";
import { isInternalGatewayNotification } from "./turn_filter.ts";
import { HonchoWriter } from "./writer.ts";
import { type HonchoRuntime, waitFor } from "./_runtime.ts";
import { errorText } from "./_util.ts";

/** Who wrote the user side of a turn. */
export interface TurnAuthorInfo {
  /** The author's platform id, when it is not the session's user. */
  id: string | undefined;
  /** The author's display name. */
  name: string | undefined;
  /** Whether the author is a bot (a2a). */
  isBot: boolean;
}

/**
 * The author `onTurnStart` reported (`authorId` trimmed; empty means the
 * session's user).
 *
 * @param options The options of `onTurnStart`.
 * @returns The author.
 */
export function authorFromTurnStart(options: TurnStartOptions): TurnAuthorInfo {
  return {
    id: typeof options.authorId === "string" && options.authorId.trim()
      ? options.authorId.trim()
      : undefined,
    name: typeof options.authorName === "string"
      ? options.authorName
      : undefined,
    isBot: options.authorIsBot === true,
  };
}

/**
 * The author `syncTurn`'s `turnAuthor` names (id trimmed; empty means the
 * session's user).
 *
 * @param author The turn's author.
 * @returns The author.
 */
export function authorFromTurn(author: TurnAuthor): TurnAuthorInfo {
  return {
    id: author.id?.trim() || undefined,
    name: author.name,
    isBot: author.isBot === true,
  };
}

/** Options of {@linkcode HonchoWriteHooks}. */
export interface HonchoWriteHooksOptions {
  /** The profile home (the outbox lives under it). */
  hermesHome: string;
  /** Outbox overrides (bounds, retry policy). */
  outbox?: Omit<HonchoOutboxOptions, "workspace" | "hermesHome">;
  /** First retry delay of a failed background delivery, in ms. */
  retryBaseDelayMs?: number;
  /** Ceiling of the background delivery retry delay, in ms. */
  retryMaxDelayMs?: number;
  /** Messages waiting for the disk above which `syncTurn` pushes back. */
  maxStagedMessages?: number;
  /** How long a required checkpoint may take, in ms. @default {max(10000, request timeout)} */
  checkpointTimeoutMs?: number;
}

/** The planned join of an author peer (or the creation of an a2a session). */
export interface TurnJoin {
  /** The Honcho session. */
  session: string;
  /** The author's peer. */
  peer: string;
  /** Create the session (a2a) instead of joining it. */
  create: boolean;
}

const BEST_EFFORT_CHECKPOINT_MS = 2_000;

/** The provider's write hooks (see the module doc). */
export class HonchoWriteHooks {
  #rt: HonchoRuntime;
  #session: HonchoSession;
  #writer: HonchoWriter;
  #checkpointTimeoutMs: number | undefined;
  /** Messages of turns waiting for the session's name (not durable yet). */
  #unnamedMessages = 0;
  /** Settles once every turn waiting for the session's name is staged. */
  #unnamedTail: Promise<void> | undefined;
  /** Memory writes (conclusions) sent but not answered yet. */
  #memoryWrites = new Set<Promise<void>>();
  /** Write-path causes already warned about in this episode. */
  #warned = new Set<NoticeCause>();

  /**
   * Creates the hooks with the profile's outbox and writer (no I/O).
   *
   * @param runtime What the provider's parts share.
   * @param session The session writes go to (delivery sets it up first).
   * @param options The home, outbox overrides and write timings.
   */
  constructor(
    runtime: HonchoRuntime,
    session: HonchoSession,
    options: HonchoWriteHooksOptions,
  ) {
    this.#rt = runtime;
    this.#session = session;
    this.#checkpointTimeoutMs = options.checkpointTimeoutMs;
    const config = runtime.config;
    // The outbox keeps the configured name (its file stays where an
    // earlier version queued it); delivery uses the client's workspace.
    const outbox = new HonchoOutbox({
      ...options.outbox,
      workspace: config.workspaceId,
      hermesHome: options.hermesHome,
    });
    this.#writer = new HonchoWriter({
      outbox,
      client: runtime.client,
      writeFrequency: config.writeFrequency,
      ensureReady: (signal) => session.ensure(signal),
      retryBaseDelayMs: options.retryBaseDelayMs,
      retryMaxDelayMs: options.retryMaxDelayMs,
      maxStagedMessages: options.maxStagedMessages,
      onResult: (result) => this.#onDeliveryResult(result),
    });
  }

  /** The writer (staging and delivery). */
  get writer(): HonchoWriter {
    return this.#writer;
  }

  /**
   * Delivers what earlier processes left in the outbox once the session is
   * named (tools mode, where set-up waits for the first tool call).
   */
  deliverBacklogWhenNamed(): void {
    this.#rt.tasks.track(
      this.#session.named().then(() => this.#writer.deliverBacklog()),
    );
  }

  /**
   * Stores a completed turn (see the module doc). Returns without waiting
   * for the disk or the network, unless the disk is far behind
   * (back-pressure: the writer's promise).
   *
   * @param userContent The user's message.
   * @param assistantContent The assistant's reply.
   * @param options The turn's author (else `author`) and a stable turn id
   * (an import: the turn is stored once).
   * @param author The author `onTurnStart` reported.
   * @returns Nothing, or the promise to await.
   */
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
    const turnAuthor = options.turnAuthor
      ? authorFromTurn(options.turnAuthor)
      : author;
    return this.#stageInOrder(messages, (identity) => {
      const turn = turnRecords(config, identity, {
        author: turnAuthor,
        userText,
        aiText,
        turnId,
      });
      if (turn.join) {
        const { session, peer, create } = turn.join;
        this.#session.planJoin(session, peer, identity.aiPeerId, create);
      }
      return turn.records;
    });
  }

  /**
   * Mirrors an `add` to the built-in user profile as a conclusion about the
   * user, in the background (once the session is ready; before, it only
   * starts set-up).
   *
   * @param action The write action.
   * @param target The memory target.
   * @param content The entry's text.
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
   * At a real session end: delivers everything queued (bounded by
   * max(10 s, request timeout)).
   *
   * @returns Resolves when done or out of time.
   */
  async sessionEnd(): Promise<void> {
    if (!this.#rt.config.saveMessages) return;
    await this.#writer.flushAll(Math.max(10_000, this.#rt.timeoutMs));
  }

  /**
   * Waits (at most `timeoutMs`) until every turn handed to `syncTurn` and
   * every memory write is durable: turns in the fsynced outbox (delivery
   * may still be pending; that is durable), memory writes answered by
   * Honcho.
   *
   * @param timeoutMs How long to wait; without limit when omitted.
   * @returns Whether everything is durable, and how many messages are not.
   */
  async drain(timeoutMs?: number): Promise<DrainResult> {
    const now = this.#rt.now;
    const deadline = timeoutMs === undefined
      ? Infinity
      : now() + Math.max(0, timeoutMs);
    const left = (): number => Math.max(0, deadline - now());
    if (this.#unnamedTail) await waitFor(this.#unnamedTail, left());
    let pending = this.#unnamedMessages;
    const staged = await this.#writer.drain(
      deadline === Infinity ? undefined : left(),
    );
    pending += staged.pending ?? 0;
    if (this.#memoryWrites.size > 0) {
      await waitFor(Promise.all([...this.#memoryWrites]), left());
      pending += this.#memoryWrites.size;
    }
    return { drained: pending === 0, pending };
  }

  /**
   * The writer's part of shutdown, after `drain()` and the abort: delivers
   * what is queued (only when everything was durable and `saveMessages` is
   * on), closes the writer, and warns about what did not reach the outbox
   * or is still queued.
   *
   * @param durable What `drain()` said.
   * @param budgetMs The whole shutdown budget (for the warning).
   * @param left The time left of it.
   * @returns Resolves when the writer is closed.
   */
  async close(
    durable: DrainResult,
    budgetMs: number,
    left: () => number,
  ): Promise<void> {
    const writer = this.#writer;
    if (this.#rt.config.saveMessages && durable.drained) {
      await writer.flushAll(left());
    }
    await writer.close(left());
    const stats = await writer.outbox.stats().catch(() => undefined);
    if (!durable.drained || writer.notDurable > 0) {
      log(
        "warn",
        `Honcho shut down before ${
          durable.pending ?? writer.notDurable
        } message(s) reached its outbox ${writer.outbox.path} (the disk did not keep up within ${budgetMs} ms)`,
      );
    } else if (stats && stats.pending > 0) {
      log(
        "warn",
        `Honcho shut down with ${stats.pending} message(s) still queued in ${writer.outbox.path}; they are delivered on the next start`,
      );
    }
  }

  /**
   * Checkpoint API v2: returns only when every evidence message (user and
   * assistant prose) is stored in Honcho — the outbox is flushed, the
   * messages Honcho lacks (by content digest) are queued and delivered. A
   * best-effort checkpoint takes at most 2 s and leaves what it could not
   * deliver queued.
   *
   * @param messages The evidence (or raw transcript).
   * @param required Whether the checkpoint is required.
   * @returns Resolves when confirmed.
   * @throws {Error} When it cannot be confirmed.
   */
  /** What the outbox still holds, by reason, for a checkpoint's error. */
  async #unconfirmed(): Promise<string> {
    const stats = await this.#writer.outbox.stats().catch(() => undefined);
    if (stats === undefined) return "the outbox cannot be read";
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
    return `${
      parts.join("; ") || "nothing is queued now"
    } (${this.#writer.outbox.path}); retry the checkpoint later`;
  }

  async checkpoint(messages: ChatMessage[], required: boolean): Promise<void> {
    const config = this.#rt.config;
    const writer = this.#writer;
    if (!config.saveMessages) {
      throw new Error("saveMessages is off, so nothing is stored in Honcho");
    }
    const full = this.#checkpointTimeoutMs ??
      Math.max(10_000, this.#rt.timeoutMs);
    // A best-effort checkpoint must not hold up compression for long.
    const budget = required ? full : Math.min(full, BEST_EFFORT_CHECKPOINT_MS);
    const deadline = this.#rt.now() + budget;
    const left = (): number => Math.max(0, deadline - this.#rt.now());
    const controller = new AbortController();
    const timer = setTimeout(
      () =>
        controller.abort(
          new DOMException("Honcho checkpoint deadline passed", "TimeoutError"),
        ),
      budget,
    );
    try {
      const items = evidenceItems(Array.isArray(messages) ? messages : []);
      await this.#session.ensure(controller.signal);
      const identity = this.#session.identity!;
      if (!await writer.flushAll(left())) {
        throw new Error(
          `queued messages are not confirmed by Honcho yet: ${await this
            .#unconfirmed()}`,
        );
      }
      if (items.length === 0) return;
      const stored = await storedDigestCounts(
        this.#rt.client,
        identity.sessionId,
        items.map((item) => item.digest),
        controller.signal,
      );
      const missing = missingEvidence(items, stored);
      if (missing.length === 0) return;
      const records: OutboxMessageInput[] = [];
      for (const item of missing) {
        const peer = item.role === "user"
          ? identity.userPeerId
          : identity.aiPeerId;
        chunkMessage(item.text, config.messageMaxChars).forEach(
          (content, index) => {
            records.push({
              session: identity.sessionId,
              peer,
              content,
              metadata: {
                [ROLE_METADATA_KEY]: item.role,
                [DIGEST_METADATA_KEY]: item.digest,
                [CHUNK_METADATA_KEY]: index,
                hermes_source: "checkpoint",
              },
            });
          },
        );
      }
      const rejected = await writer.appendNow(records);
      if (rejected > 0) {
        throw new Error(
          `the Honcho outbox is full (${rejected} message(s) refused)`,
        );
      }
      if (!required) {
        writer.kick();
        return;
      }
      if (!await writer.flushAll(left())) {
        throw new Error(
          `the checkpoint's messages are not confirmed by Honcho yet: ${await this
            .#unconfirmed()}`,
        );
      }
    } finally {
      clearTimeout(timer);
    }
  }

  /**
   * Stages a turn's records in `syncTurn` order (see the module doc):
   * at once when the session is named and no earlier turn still waits for
   * the name; otherwise behind every earlier turn, once the name is known.
   */
  #stageInOrder(
    messages: number,
    records: (identity: HonchoSessionIdentity) => OutboxMessageInput[],
  ): Promise<void> | undefined {
    const writer = this.#writer;
    const known = this.#session.identity;
    if (known && this.#unnamedTail === undefined) {
      const list = records(known);
      // Back-pressure: a promise only when the disk is behind.
      return list.length > 0 ? writer.stage(list) : undefined;
    }
    this.#unnamedMessages += messages;
    const named = known ? Promise.resolve(known) : this.#session.named();
    let pressure: Promise<void> | undefined;
    const staged = Promise.all([this.#unnamedTail, named]).then(
      ([, identity]) => {
        if (!identity) return;
        const list = records(identity);
        if (list.length > 0) pressure = writer.stage(list);
      },
    ).finally(() => {
      this.#unnamedMessages -= messages;
    });
    const tail = staged.catch(() => {});
    this.#unnamedTail = tail;
    tail.then(() => {
      if (this.#unnamedTail === tail) this.#unnamedTail = undefined;
    });
    this.#rt.tasks.track(tail);
    return tail.then(() => pressure);
  }

  /**
   * Reports a delivery round: a systemic failure (one retrying cannot fix:
   * a denied permission, auth, a refused workspace, session or peer) gets
   * one notice and one warning naming the cause and the fix; the messages
   * stay queued. A round that delivered ends the episode.
   */
  #onDeliveryResult(result: OutboxDeliverResult): void {
    const error = result.error;
    const notices = this.#rt.notices;
    if (error === undefined) {
      if (result.delivered > 0 || result.duplicates > 0) this.#warned.clear();
      return;
    }
    let cause = notices.reportError(error);
    let reason = describeHonchoError(error);
    if (
      cause === undefined && result.systemic &&
      error instanceof HonchoError
    ) {
      cause = "refused";
      reason = this.#rt.scrub(errorText(error));
      notices.report(cause, reason);
    }
    if (cause === undefined || !result.systemic || this.#warned.has(cause)) {
      return;
    }
    // In a sandbox worker the host has already warned about the denial,
    // naming the same key; the notice above still tells the user.
    if (cause === "permission" && permissionDenialsReportedByHost()) return;
    this.#warned.add(cause);
    const host = isHonchoError(error, "permission") ? error.host : undefined;
    const queued = result.pending >= 0
      ? ` (${result.pending} message(s) in ${this.#writer.outbox.path})`
      : "";
    log("warn", `${notices.warning(cause, reason, host)}${queued}`);
  }
}

/** What {@linkcode turnRecords} makes of a turn. */
export interface TurnRecords {
  /** The outbox records, user side first, in chunk order. */
  records: OutboxMessageInput[];
  /** A join the author needs before the records are delivered, if any. */
  join?: TurnJoin;
}

/**
 * The outbox records of one turn (plugins/memory/honcho/SPEC.md §9): each side chunked at
 * `messageMaxChars` with role, digest and chunk metadata. The user side
 * goes to the session's user peer; to another human author's peer (which
 * must join the session); or, for a bot author with `a2aSessions` on, to
 * the bot's peer in its own a2a session (no records otherwise, and none
 * when the bot is the AI peer itself). A `turnId` gives stable ids, so the
 * same turn handed over again is stored once.
 *
 * @param config The config.
 * @param identity The session and peers.
 * @param turn The author, the stored texts and the turn id.
 * @returns The records and the join they need.
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
  const records: OutboxMessageInput[] = [];
  const add = (role: "user" | "assistant", peer: string, text: string) => {
    if (text === "") return;
    const digest = turnDigest(role, text);
    const chunks = chunkMessage(text, config.messageMaxChars);
    chunks.forEach((content, index) => {
      const record: OutboxMessageInput = {
        session,
        peer,
        content,
        metadata: {
          [ROLE_METADATA_KEY]: role,
          [DIGEST_METADATA_KEY]: digest,
          [CHUNK_METADATA_KEY]: index,
        },
      };
      if (turn.turnId !== undefined) {
        // The same turn handed over again (an import re-run) gets the same
        // ids, so the outbox and Honcho hold it once.
        record.id = stableOutboxId([
          config.workspaceId,
          session,
          turn.turnId,
          role,
          index,
        ]);
      }
      records.push(record);
    });
  };
  add("user", userPeer, turn.userText);
  add("assistant", identity.aiPeerId, turn.aiText);
  return join ? { records, join } : { records };
}
