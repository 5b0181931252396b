/**
 * Outbox delivery: batches of at most 100 per session, in order, under a lease on
 * `<file>.deliver.lock` (the OS releases it when its holder dies). A durable `attempt` line names
 * when the request can no longer land (start + timeout + `lateCommitGraceMs`: servers finish
 * requests clients gave up on); after an uncertain outcome the ids are looked up then, and only
 * the missing ones sent. Only a refusal of one message (413, 422 into it) rejects it; other
 * unfixable errors stop delivery as systemic with everything kept queued.
 * @module
 */

import { log } from "../../../../src/provider/mod.ts";
import type { HonchoClient } from "../client/client.ts";
import { abortableSleep, type SleepLike } from "../client/_transport.ts";
import { MAX_MESSAGES_PER_BATCH, type MessageInput } from "../client/wire.ts";
import { HonchoError, isHonchoError } from "../client/errors.ts";
import type { GroupCommitter } from "./_commit.ts";
import {
  appendSynced,
  attemptLine,
  type Entry,
  finishLine,
  OUTBOX_ID_METADATA_KEY,
  type OutboxLog,
  type OutboxRecord,
  type RejectedRecord,
  settleLine,
} from "./_log.ts";
import { backoffDelayMs, isRetryableHonchoError } from "../client/_backoff.ts";
import type { RetryTiming } from "../config/timings_table.ts";
import { deadlineSignal, errorText, isRecord } from "../_util.ts";

/** A request is not started with less time than this before the deadline. */
const MIN_REQUEST_MS = 250;
/** How often a message whose acknowledgement was lost is looked up while its attempt could still land. */
export const SETTLE_LOOKUP_INTERVAL_MS = 2_000;
const IDS_PER_QUERY = 40;
/** The most ids of one session {@linkcode OutboxDelivery} keeps to answer a lookup by a count. */
const MAX_OURS = 100_000;

const encoder = new TextEncoder();

/** What a delivery (`HonchoOutbox.deliver`) did. */
export interface OutboxDeliverResult {
  delivered: number;
  /** Messages found already stored (sent before a crash, a timeout, an earlier import) and not re-sent. */
  duplicates: number;
  /** Messages Honcho refused permanently (moved to the rejected file, warned). */
  rejected: number;
  pending: number;
  /** Queued messages an earlier uncertain attempt may still land for. */
  waiting?: number;
  /** When delivery stopped to wait: when the first of those attempts settles (epoch ms). */
  settlesAt?: number;
  /** Another process holds the delivery lease: nothing was delivered here. */
  busy?: boolean;
  /** Why delivery stopped early (Honcho down after all retries, or a systemic refusal), if it did. */
  error?: unknown;
  /** `true` when `error` is one retrying cannot fix (auth, 404, a refused id, a denied permission). */
  systemic?: boolean;
}

/** Options of a delivery (`HonchoOutbox.deliver`). */
export interface OutboxDeliverOptions {
  /** Stops delivery; its reason is rethrown unchanged. */
  signal?: AbortSignal;
  /** Consecutive transient failures tolerated before returning. @default {HonchoOutboxOptions.maxRetries} */
  maxRetries?: number;
  /** Epoch ms by which delivery ends: no request or wait runs past it. */
  deadline?: number;
  /** The longest sleep for an uncertain attempt to settle before returning (with `settlesAt`), in ms. @default {Infinity} */
  maxWaitMs?: number;
}

/** The outbox's timings: its backoff (with jitter), retries, grace and clock. */
export interface DeliveryPolicy extends RetryTiming {
  maxRetries: number;
  lateCommitGraceMs: number;
  compactAfterBytes: number;
  sleep: SleepLike;
  random: () => number;
  now: () => number;
}

export interface OutboxDeliveryOptions {
  workspace: string;
  file: OutboxLog;
  commit: GroupCommitter;
  rejectedPath: string;
  leasePath: string;
  policy: DeliveryPolicy;
  pending: () => Promise<number>;
  /** Sets a session up before messages go to it (see {@linkcode BackgroundDelivery.prepareSession}). */
  prepareSession?: (
    client: HonchoClient,
    session: string,
    peers: string[],
    signal?: AbortSignal,
  ) => Promise<void>;
}

interface Batch {
  session: string;
  entries: Entry[];
  /** Ids to look up first (attempted or verify). */
  check: string[];
}

type Pick =
  | { kind: "batch"; batch: Batch }
  | { kind: "wait"; until: number; waiting: number }
  | { kind: "empty" };

class StageError extends Error {
  constructor(readonly stage: "check" | "send", readonly error: unknown) {
    super(errorText(error));
  }
}

export class OutboxDelivery {
  #o: OutboxDeliveryOptions;
  /** When each unconfirmed id was last looked up (epoch ms). */
  #lookedUp = new Map<string, number>();
  /**
   * Per session seen empty: the ids this process stored there since, while
   * nothing else is (`null`: not known, looked up by id).
   */
  #ours = new Map<string, Set<string> | null>();
  /** Refusal causes already warned about (one warning per cause). */
  #warnedRefusals = new Set<string>();
  /** Ids delivered one by one to find the one Honcho refuses. */
  #isolate = new Set<string>();

  constructor(options: OutboxDeliveryOptions) {
    this.#o = options;
  }

  /**
   * Delivers under the lease; `busy: true` at once when another holds it.
   * @throws The signal's reason, unchanged, when it aborts.
   */
  async deliver(
    client: HonchoClient,
    options: OutboxDeliverOptions,
  ): Promise<OutboxDeliverResult> {
    const signal = options.signal;
    if (signal?.aborted) throw signal.reason;
    await Deno.mkdir(this.#o.file.dir, { recursive: true, mode: 0o700 });
    const lease = await Deno.open(this.#o.leasePath, {
      read: true,
      write: true,
      create: true,
      mode: 0o600,
    });
    try {
      // One deliverer per outbox across processes, or two would send the same message. The OS
      // frees the lock when its holder dies; the dead one's attempt lines still bind the next.
      if (!await lease.tryLock(true)) {
        return { ...noDelivery(await this.#o.pending()), busy: true };
      }
      try {
        return await this.#deliverLocked(
          client.withWorkspace(this.#o.workspace),
          signal,
          options.maxRetries ?? this.#o.policy.maxRetries,
          options.deadline,
          options.maxWaitMs ?? Infinity,
        );
      } finally {
        await lease.unlock().catch(() => {});
      }
    } finally {
      lease.close();
    }
  }

  async #deliverLocked(
    client: HonchoClient,
    signal: AbortSignal | undefined,
    maxRetries: number,
    deadline: number | undefined,
    maxWaitMs: number,
  ): Promise<OutboxDeliverResult> {
    const result = noDelivery(0);
    let failures = 0;
    const refusals = new Map<string, Refusal>();
    try {
      for (;;) {
        if (signal?.aborted) throw signal.reason;
        const pick = await this.#o.file.locked(async () => {
          // Replayed first: an ack or attempt another process wrote since must be seen before
          // picking, or an acknowledged message could be sent again.
          await this.#o.file.catchUp();
          return this.#pickBatch(this.#o.policy.now());
        });
        if (pick.kind === "empty") break;
        if (
          pick.kind === "wait" &&
          await this.#settleByLookup(client, result, signal)
        ) continue;
        if (pick.kind === "wait") {
          // All wait for uncertain attempts; a flush whose deadline comes first keeps looking up.
          const now = this.#o.policy.now();
          const lookAgain = maxWaitMs === Infinity && deadline !== undefined &&
            now + SETTLE_LOOKUP_INTERVAL_MS < deadline;
          if (
            (deadline !== undefined && pick.until > deadline && !lookAgain) ||
            pick.until - now > maxWaitMs
          ) {
            result.waiting = pick.waiting;
            result.settlesAt = pick.until;
            break;
          }
          // A real wait (not the injected backoff sleep): time must pass.
          const until = lookAgain
            ? Math.min(pick.until, now + SETTLE_LOOKUP_INTERVAL_MS)
            : pick.until;
          await abortableSleep(Math.max(1, until - now), signal);
          continue;
        }
        const left = deadline === undefined
          ? Infinity
          : deadline - this.#o.policy.now();
        // Too little time left: a request cut off at the deadline would only leave an
        // uncertain attempt, holding its session back for the grace on the next start.
        if (left < MIN_REQUEST_MS) break;
        try {
          await this.#deliverBatch(client, pick.batch, result, signal, left);
          failures = 0;
        } catch (caught) {
          if (signal?.aborted) throw signal.reason;
          const { stage, error } = caught instanceof StageError
            ? caught
            : { stage: "send" as const, error: caught };
          if (isRetryableHonchoError(error)) {
            failures++;
            if (failures > maxRetries) {
              result.error = error;
              break;
            }
            log(
              "debug",
              `Honcho outbox delivery failed, retrying: ${errorText(error)}`,
            );
            const delay = backoffDelayMs(failures - 1, error, this.#o.policy);
            if (
              deadline !== undefined && this.#o.policy.now() + delay >= deadline
            ) {
              result.error = error;
              break;
            }
            await this.#o.policy.sleep(delay, signal);
            continue;
          }
          const refused = stage === "send"
            ? refusedMessage(error, pick.batch.entries.length)
            : undefined;
          // Anything but a refusal of that very message keeps the whole queue: rejecting on a
          // systemic error (auth, 404) would move every message aside.
          if (refused === undefined) {
            result.error = error;
            result.systemic = true;
            break;
          }
          if (refused === "isolate") {
            // Find the refused message: deliver this batch one by one.
            for (const entry of pick.batch.entries) {
              this.#isolate.add(entry.record.id);
            }
            continue;
          }
          const record = pick.batch.entries[refused]!.record;
          await this.#reject(record, error);
          result.rejected++;
          const key = refusalKey(error);
          const refusal = refusals.get(key) ??
            { reason: errorText(error), ids: [], sessions: new Set() };
          refusal.ids.push(record.id);
          refusal.sessions.add(record.session);
          refusals.set(key, refusal);
        }
      }
    } finally {
      this.#warnRefusals(refusals);
      await this.#o.file.locked(async () => {
        await this.#o.file.catchUp();
        // Acks accumulate only here, so this is where the file shrinks and the reserve is
        // taken back.
        await this.#o.file.maybeCompact(this.#o.policy.compactAfterBytes);
        result.pending = this.#o.file.entries.size;
      }).catch(() => {});
    }
    return result;
  }

  async #deliverBatch(
    client: HonchoClient,
    batch: Batch,
    result: OutboxDeliverResult,
    signal: AbortSignal | undefined,
    left: number,
  ): Promise<void> {
    let toSend = batch.entries;
    try {
      // A session queued entirely during an outage was never set up: posting
      // would make Honcho create it and its peers with no observation settings.
      await this.#o.prepareSession?.(client, batch.session, [
        ...new Set(toSend.map((entry) => entry.record.peer)),
      ], signal);
    } catch (error) {
      throw new StageError("check", error);
    }
    if (batch.check.length > 0) {
      let stored: Set<string>;
      try {
        stored = await this.#findStored(
          client,
          batch.session,
          batch.check,
          signal,
          // Never sent from here (handed over: an import): a count may answer for all.
          !batch.entries.some((entry) => entry.attempted),
        );
      } catch (error) {
        throw new StageError("check", error);
      }
      if (stored.size > 0) {
        // Found stored (sent before a crash, a lost answer, an earlier import): acked, not
        // sent. The id lookup is what makes a resend idempotent.
        await this.#finish("ack", [...stored]);
        result.duplicates += stored.size;
        toSend = toSend.filter((entry) => !stored.has(entry.record.id));
      }
      // The others are certainly not stored: no longer in doubt.
      for (const entry of toSend) entry.verify = false;
    }
    if (toSend.length === 0) return;
    const timeoutMs = Math.max(1, Math.min(client.timeoutMs, left));
    const ids = toSend.map((entry) => entry.record.id);
    const before = toSend.map((entry) => ({
      entry,
      attempted: entry.attempted,
      landBy: entry.landBy,
    }));
    // The attempt line is durable before the request leaves: after a crash mid-request the
    // next holder waits until `until`, then looks the ids up instead of sending again.
    // `until`: our timeout plus the grace a server may still take to commit after we gave up.
    const at = this.#o.policy.now();
    await this.#o.commit.commitLines([
      attemptLine(ids, at, at + timeoutMs + this.#o.policy.lateCommitGraceMs),
    ]);
    const limit = deadlineSignal(
      Number.isFinite(left) ? timeoutMs : Infinity,
      "Honcho delivery deadline passed",
      signal,
    );
    try {
      await client.createMessages(
        batch.session,
        toSend.map((entry) => toMessageInput(entry.record)),
        { signal: limit.signal },
      );
    } catch (caught) {
      // Our own deadline ended the request: a timeout like any other.
      const error = limit.signal.aborted && !signal?.aborted
        ? new HonchoError(
          "timeout",
          `Honcho POST messages was cut off at the delivery deadline after ${timeoutMs} ms`,
          { cause: caught },
        )
        : caught;
      const outcome = sendOutcome(error);
      if (outcome !== "doubt") {
        // This attempt cannot land later (if surely unsent, no lookup either): only earlier
        // attempts count. Recorded, so another process (or a restart) need not wait either.
        const groups = new Map<
          string,
          { ids: string[]; landBy: number; attempted: boolean }
        >();
        for (const { entry, attempted, landBy } of before) {
          // Unsent: this attempt never happened, the state before it stands. Over: it may have
          // stored, so look up (attempted), but it cannot land later: no wait for it.
          const now = outcome === "unsent" ? attempted : true;
          entry.attempted = now;
          entry.landBy = landBy;
          const key = `${landBy}:${now}`;
          const group = groups.get(key) ?? { ids: [], landBy, attempted: now };
          group.ids.push(entry.record.id);
          groups.set(key, group);
        }
        // Best effort: without the settle line the attempt's own `until` applies, only later.
        await this.#o.commit.commitLines(
          [...groups.values()].map(settleLine),
        ).catch(() => {});
      }
      throw new StageError("send", error);
    } finally {
      limit.clear();
    }
    // Acked only after Honcho answered with success: a crash before this leaves the attempt
    // line, so the ids are looked up later, neither lost nor sent twice.
    const ours = this.#ours.get(batch.session);
    for (const id of ours ? ids : []) ours!.add(id);
    if (ours && ours.size > MAX_OURS) this.#ours.set(batch.session, null);
    await this.#finish("ack", ids);
    result.delivered += ids.length;
  }

  #pickBatch(now: number): Pick {
    const blocked = new Set<string>();
    let until = Infinity;
    let waiting = 0;
    let session: string | undefined;
    const entries: Entry[] = [];
    const check: string[] = [];
    for (const entry of this.#o.file.entries.values()) {
      const record = entry.record;
      if (blocked.has(record.session)) continue;
      if (session !== undefined && record.session !== session) continue;
      if (entry.attempted && entry.landBy > now) {
        // An earlier attempt may still land: this session waits (order).
        blocked.add(record.session);
        until = Math.min(until, entry.landBy);
        waiting++;
        // A blocked message inside the batch's session ends the batch: what follows it must
        // not overtake it.
        if (session !== undefined) break;
        continue;
      }
      session = record.session;
      const isolated = this.#isolate.has(record.id);
      if (isolated && entries.length > 0) break;
      entries.push(entry);
      if (entry.attempted || entry.verify) check.push(record.id);
      if (isolated || entries.length >= MAX_MESSAGES_PER_BATCH) break;
    }
    if (session !== undefined) {
      return { kind: "batch", batch: { session, entries, check } };
    }
    return Number.isFinite(until)
      ? { kind: "wait", until, waiting }
      : { kind: "empty" };
  }

  /**
   * Acknowledges the messages of uncertain attempts Honcho already holds, so
   * a lost acknowledgement holds the session back only for this lookup (each
   * id at most once per {@linkcode SETTLE_LOOKUP_INTERVAL_MS}).
   */
  async #settleByLookup(
    client: HonchoClient,
    result: OutboxDeliverResult,
    signal: AbortSignal | undefined,
  ): Promise<boolean> {
    const now = this.#o.policy.now();
    const bySession = new Map<string, string[]>();
    for (const entry of this.#o.file.entries.values()) {
      if (!entry.attempted || entry.landBy <= now) continue;
      const id = entry.record.id;
      const last = this.#lookedUp.get(id);
      if (last !== undefined && now - last < SETTLE_LOOKUP_INTERVAL_MS) {
        continue;
      }
      const ids = bySession.get(entry.record.session) ?? [];
      if (ids.length < MAX_MESSAGES_PER_BATCH) ids.push(id);
      bySession.set(entry.record.session, ids);
    }
    let settled = false;
    for (const [session, ids] of bySession) {
      for (const id of ids) this.#lookedUp.set(id, now);
      let found: Set<string>;
      try {
        found = await this.#findStored(client, session, ids, signal);
      } catch (error) {
        if (signal?.aborted) throw signal.reason;
        log(
          "debug",
          `Honcho outbox could not look up unconfirmed messages: ${
            errorText(error)
          }`,
        );
        return settled;
      }
      // Not found proves nothing while the attempt may still land: those wait for its `until`.
      if (found.size === 0) continue;
      await this.#finish("ack", [...found]);
      for (const id of found) this.#lookedUp.delete(id);
      result.duplicates += found.size;
      settled = true;
    }
    return settled;
  }

  /**
   * Which of `ids` the session holds. With `count`, a session that holds just
   * what this process stored there since it was seen empty is answered by one
   * count instead of a lookup per 40 ids (a page that disagrees with its
   * `total`, from a server that sends none, is no count).
   */
  async #findStored(
    client: HonchoClient,
    session: string,
    ids: readonly string[],
    signal: AbortSignal | undefined,
    count = false,
  ): Promise<Set<string>> {
    if (count && this.#ours.get(session) !== null) {
      const { items, total } = await client.listMessages(session, {
        size: 1,
        signal,
      });
      const ours = this.#ours.get(session) ?? new Set<string>();
      const known = items.length === Math.min(total, 1) && ours.size === total;
      this.#ours.set(session, known ? ours : null);
      if (known) return new Set(ids.filter((id) => ours.has(id)));
    }
    const wanted = new Set(ids);
    const found = new Set<string>();
    for (let i = 0; i < ids.length; i += IDS_PER_QUERY) {
      const group = ids.slice(i, i + IDS_PER_QUERY);
      const page = await client.listMessages(session, {
        filters: {
          OR: group.map((id) => ({
            metadata: { [OUTBOX_ID_METADATA_KEY]: id },
          })),
        },
        size: 100,
        signal,
      });
      for await (const message of page) {
        const id = message.metadata[OUTBOX_ID_METADATA_KEY];
        if (typeof id === "string" && wanted.has(id)) found.add(id);
      }
    }
    return found;
  }

  async #finish(
    type: "ack" | "drop",
    ids: readonly string[],
    reason?: string,
  ): Promise<void> {
    await this.#o.commit.commitLines([
      finishLine(type, ids, this.#o.policy.now(), reason),
    ]);
    for (const id of ids) this.#isolate.delete(id);
    this.#o.commit.noteRemoved();
  }

  async #reject(record: OutboxRecord, error: unknown): Promise<void> {
    const reason = errorText(error);
    await Deno.mkdir(this.#o.file.dir, { recursive: true, mode: 0o700 });
    const rejected: RejectedRecord = {
      ...record,
      reason,
      rejectedAt: new Date(this.#o.policy.now()).toISOString(),
    };
    if (error instanceof HonchoError && error.status !== undefined) {
      rejected.status = error.status;
    }
    // The rejected copy is fsynced before the drop line: a crash between them leaves the
    // message queued (refused again, listed twice), never lost.
    await this.#o.file.locked(() =>
      appendSynced(
        this.#o.rejectedPath,
        encoder.encode(`${JSON.stringify(rejected)}\n`),
      )
    );
    await this.#finish("drop", [record.id], reason);
  }

  /** One warning per refusal cause (a 413 for ten messages is one), naming the file and how to retry. */
  #warnRefusals(refusals: Map<string, Refusal>): void {
    for (const [key, { reason, ids, sessions }] of refusals) {
      const first = !this.#warnedRefusals.has(key);
      this.#warnedRefusals.add(key);
      const count = ids.length === 1
        ? `outbox message ${ids[0]}`
        : `${ids.length} outbox messages`;
      const where = [...sessions].map((s) => `'${s}'`).join(", ");
      log(
        first ? "warn" : "debug",
        `Honcho refused ${count} for session${
          sessions.size === 1 ? "" : "s"
        } ${where} (${reason}): moved to ${this.#o.rejectedPath}; 'hermes honcho outbox retry' queues ${
          ids.length === 1 ? "it" : "them"
        } again once the cause is fixed${
          first ? "" : " (this cause was reported before)"
        }`,
      );
    }
  }
}

/**
 * What a failed send says: `"unsent"` (refused before storing, or never
 * left), `"over"` (Honcho finished with it, stored or not: look it up now),
 * `"doubt"` (Honcho may still be working on it: wait for its `until`).
 */
function sendOutcome(error: unknown): "unsent" | "over" | "doubt" {
  if (isHonchoError(error, "permission") || error instanceof RangeError) {
    return "unsent";
  }
  if (isHonchoError(error, "connection")) {
    return error.requestSent === false ? "unsent" : "doubt";
  }
  if (isHonchoError(error, "invalid_response")) return "over";
  if (isHonchoError(error, "server_error")) {
    // A 504 is a proxy that gave up while Honcho may still work; 500/502/503 end the request.
    return error.status === 504 ? "doubt" : "over";
  }
  return error instanceof HonchoError && error.status !== undefined
    ? "unsent"
    : "doubt";
}

interface Refusal {
  reason: string;
  ids: string[];
  sessions: Set<string>;
}

/** What makes two refusals the same cause: the status and the server's detail. */
function refusalKey(error: unknown): string {
  if (error instanceof HonchoError) {
    const detail = detailOf(error);
    return `${error.status}:${
      typeof detail === "string" ? detail : JSON.stringify(detail ?? null)
    }`;
  }
  return error instanceof Error ? `${error.name}:${error.message}` : "other";
}

/**
 * Whether Honcho refused one message itself (a 413, or a 422 pointing only into `body.messages`):
 * its index, `"isolate"` (send one by one to find it), or `undefined` (systemic).
 */
function refusedMessage(
  error: unknown,
  batchSize: number,
): number | "isolate" | undefined {
  if (error instanceof RangeError) return batchSize === 1 ? 0 : "isolate";
  if (!(error instanceof HonchoError)) return undefined;
  let index: number | undefined;
  if (error.status === 422) {
    const detail = detailOf(error);
    if (!Array.isArray(detail) || detail.length === 0) return undefined;
    const indexes = new Set<number>();
    for (const issue of detail) {
      const loc = isRecord(issue) && Array.isArray(issue.loc) ? issue.loc : [];
      if (loc[0] !== "body" || loc[1] !== "messages") return undefined;
      if (typeof loc[2] === "number") indexes.add(loc[2]);
    }
    if (indexes.size === 1) index = [...indexes][0];
  } else if (error.status !== 413) {
    return undefined;
  }
  if (batchSize === 1) return 0;
  return index !== undefined && index < batchSize ? index : "isolate";
}

function detailOf(error: HonchoError): unknown {
  return isRecord(error.body) ? error.body.detail : undefined;
}

export function noDelivery(pending: number): OutboxDeliverResult {
  return { delivered: 0, duplicates: 0, rejected: 0, pending };
}

function toMessageInput(record: OutboxRecord): MessageInput {
  return {
    peerId: record.peer,
    content: record.content,
    metadata: record.metadata,
    createdAt: record.createdAt,
  };
}
