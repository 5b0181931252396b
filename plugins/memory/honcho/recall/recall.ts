/**
 * The recall scheduler (plugins/memory/honcho/SPEC.md §6–§8): what `prefetch`
 * injects (a cached base layer refreshed every `contextCadence` turns, a
 * dialectic answer every effective `dialecticCadence` turns) and when
 * background work refreshes it. Only turn 1 waits, bounded.
 * @module
 */

import { isTrivialPrompt, log } from "../../../../src/provider/mod.ts";
import { dirname } from "../../../../src/provider/_bundled.ts";
import type { HonchoConfig } from "../config/config.ts";
import type { ReasoningLevel } from "../config/_lookup.ts";
import {
  applyTokenBudget,
  type BaseContextData,
  capDialecticInput,
  capDialecticResult,
  cleanHonchoSummary,
  formatBaseContext,
} from "./context.ts";
import {
  effectiveCadence,
  PREWARM_QUERY,
  runDialecticDepth,
} from "./dialectic.ts";
import { isHonchoError } from "../client/errors.ts";
import { ReadBackoff } from "../client/_backoff.ts";
import { HONCHO_TIMINGS } from "../config/timings_table.ts";
import type { HonchoSession } from "../session/session.ts";
import { type HonchoRuntime, type TaskGroup, waitFor } from "../_runtime.ts";
import { deadlineSignal, errorText, logFailure } from "../_util.ts";

/** A function that rewrites a user message into a better recall question. */
export type QueryRewriter = (query: string) => Promise<string> | string;

/** A snapshot of the dialectic pipeline, for diagnostics (plugins/memory/honcho/SPEC.md §6). */
export interface HonchoLivenessSnapshot {
  /** The current turn. */
  turnCount: number;
  /** The turn the last dialectic result was fired for (-999: never). */
  lastDialecticTurn: number;
  /** `firedAt` of the pending result, or `null`. */
  pendingResultFiredAt: number | null;
  /** Empty or failed dialectic answers in a row. */
  emptyStreak: number;
  /** The cadence in effect. */
  effectiveCadence: number;
  /** Whether a dialectic is running. */
  threadAlive: boolean;
  /** Seconds the running dialectic has been running, or `null`. */
  threadAgeSeconds: number | null;
}

/** The snapshot of a provider whose recall has not started (no dialectic ran or runs). */
export function idleLiveness(
  turn: number,
  dialecticCadence: number,
  emptyStreak = 0,
): HonchoLivenessSnapshot {
  return {
    turnCount: turn,
    lastDialecticTurn: NEVER,
    pendingResultFiredAt: null,
    emptyStreak,
    effectiveCadence: effectiveCadence(dialecticCadence, emptyStreak),
    threadAlive: false,
    threadAgeSeconds: null,
  };
}

export interface HonchoRecallOptions {
  turn: () => number;
  /** Rewrites the user message into the pass-0 question when `queryRewrite` is on. */
  queryRewriter?: QueryRewriter;
  /** First pause of reads after a failure, in ms. @default {HONCHO_TIMINGS.recall.baseMs} */
  retryBaseDelayMs?: number;
  /** Longest pause of reads, in ms. @default {HONCHO_TIMINGS.recall.maxMs} */
  retryMaxDelayMs?: number;
}

/** "Never": the turn of a layer that was never fetched. */
export const NEVER = -999;
const SEARCH_QUERY_MAX_CHARS = 1000;

interface PendingDialectic {
  result: string;
  firedAt: number;
  epoch: object;
}

interface DialecticRun {
  done: Promise<void>;
  startedAt: number;
  firedAt: number;
}

export class HonchoRecall {
  #warmUpAnswer = false;
  #rt: HonchoRuntime;
  #session: HonchoSession;
  #turn: () => number;
  #rewriter: QueryRewriter | undefined;
  /** Changes every turn: a recallSync answer for an older turn is dropped. */
  #turnGen: object = {};
  #lastContextTurn = NEVER;
  #lastDialecticTurn = NEVER;
  #baseCache = "";
  #baseStarted = false;
  #pendingContext: { data: BaseContextData; epoch: object } | undefined;
  #contextRun: Promise<void> | undefined;
  #dialecticRun: DialecticRun | undefined;
  #pendingDialectic: PendingDialectic | undefined;
  #emptyStreak = 0;
  #syncBusy = false;
  #lastQuery = "";

  constructor(
    runtime: HonchoRuntime,
    session: HonchoSession,
    options: HonchoRecallOptions,
  ) {
    this.#rt = runtime;
    this.#session = session;
    this.#turn = options.turn;
    this.#rewriter = options.queryRewriter;
    const t = HONCHO_TIMINGS.recall;
    this.#reads = new ReadBackoff({
      ...t,
      baseMs: options.retryBaseDelayMs ?? t.baseMs,
      maxMs: options.retryMaxDelayMs ?? t.maxMs,
      random: Math.random,
    });
  }

  /** Pauses background reads while Honcho is failing (one notice per episode). */
  #reads: ReadBackoff;

  /** A new turn starts: answers still running for the last one are dropped. */
  startTurn(): void {
    this.#turnGen = {};
  }

  /** Whether the last prefetch's dialectic answer came from the turn-1 warm-up question. */
  get warmUpAnswer(): boolean {
    return this.#warmUpAnswer;
  }

  /** The context to inject now (plugins/memory/honcho/SPEC.md §6); `""` in `tools` mode. */
  async prefetch(query: string): Promise<string> {
    this.#warmUpAnswer = false;
    const config = this.#rt.config;
    if (config.recallMode === "tools") {
      return this.#log("cron-or-tools-mode", "");
    }
    return config.recallSync
      ? await this.#syncPrefetch(config, query)
      : await this.#asyncPrefetch(config, query);
  }

  /** After the turn, warms the next one in the background (plugins/memory/honcho/SPEC.md §6). */
  queuePrefetch(query: string): void {
    const config = this.#rt.config;
    if (config.recallMode === "tools" || config.recallSync) return;
    if (this.#rt.stopped()) return;
    if (!this.#session.exists || !query || !query.trim()) {
      this.#session.kick();
      return;
    }
    if (isTrivialPrompt(query)) return;
    const turn = this.#turn();
    if (
      config.injectionFrequency !== "first-turn" &&
      (config.contextCadence <= 1 ||
        turn - this.#lastContextTurn >= config.contextCadence) &&
      !this.#contextRun
    ) {
      this.#lastContextTurn = turn;
      this.#startContextFetch(query);
    }
    if (this.#dialecticAlive()) return;
    if (
      turn - this.#lastDialecticTurn <
        effectiveCadence(config.dialecticCadence, this.#emptyStreak)
    ) return;
    this.#startDialectic(query, turn);
  }

  /** The session is named (its creation sent) or set up: a late base-layer fetch, and the dialectic prewarm unless a rewriter waits. */
  sessionReady(stale: boolean): void {
    const config = this.#rt.config;
    if (config.recallMode === "tools" || config.recallSync) return;
    if (this.#turn() >= 1) this.#startBase(this.#lastQuery);
    if (
      !(config.queryRewrite && this.#rewriter) && !stale &&
      !this.#dialecticAlive() && this.#lastDialecticTurn === NEVER &&
      !this.#rt.stopped()
    ) {
      this.#startDialectic(PREWARM_QUERY, 0);
    }
  }

  /** Drops the answers not injected yet (a session switch, a shutdown). */
  discard(): void {
    this.#turnGen = {};
    this.#pendingDialectic = undefined;
    this.#pendingContext = undefined;
  }

  /** The session moved to another Honcho session: caches and cadences restart. */
  sessionMoved(): void {
    this.#baseCache = "";
    this.#baseStarted = false;
    this.#lastContextTurn = NEVER;
    this.#lastDialecticTurn = NEVER;
    this.#emptyStreak = 0;
  }

  /** A `honcho_reasoning` tool call answered: it counts for the dialectic cadence. */
  noteReasoning(): void {
    this.#lastDialecticTurn = this.#turn();
  }

  /** The dialectic pipeline's state (plugins/memory/honcho/SPEC.md §6). */
  liveness(): HonchoLivenessSnapshot {
    const run = this.#dialecticRun;
    const cadence = this.#rt.config.dialecticCadence;
    return {
      ...idleLiveness(this.#turn(), cadence, this.#emptyStreak),
      lastDialecticTurn: this.#lastDialecticTurn,
      pendingResultFiredAt: this.#pendingDialectic?.firedAt ?? null,
      threadAlive: run !== undefined,
      threadAgeSeconds: run ? (this.#rt.now() - run.startedAt) / 1000 : null,
    };
  }

  async #asyncPrefetch(config: HonchoConfig, query: string): Promise<string> {
    const session = this.#session;
    const turn = this.#turn();
    const firstTurn = turn <= 1;
    if (query.trim()) this.#lastQuery = query;
    const waitMs = (seconds: number): number =>
      Math.max(0, Math.min(seconds * 1000, this.#rt.timeoutMs));
    const baseDeadline = this.#rt.now() +
      (firstTurn ? waitMs(config.firstTurnBaseWait) : 0);
    if (!session.ready) {
      session.kick();
      if (firstTurn && session.creating) {
        // Turn 1's reads go out beside the session's creation (they need no session) and it waits
        // for that, not for the peer-config read-back: one round trip, as a careful SDK user's turn.
        if (session.identity) this.#startBase(query);
        await waitFor(session.creating, baseDeadline - this.#rt.now());
      }
      if (!session.exists) {
        return this.#log("session-not-ready", this.#rt.notices.take());
      }
    }
    if (isTrivialPrompt(query)) {
      const pending = this.#consumeDialectic(config);
      return this.#log("trivial-prompt", pending);
    }
    const parts: string[] = [];
    if (config.injectionFrequency !== "first-turn" || firstTurn) {
      this.#startBase(query);
      if (firstTurn && this.#contextRun) {
        // Turn 1 waits (bounded) for the first base layer, whoever started it.
        await waitFor(this.#contextRun, baseDeadline - this.#rt.now());
      }
      const fresh = this.#pendingContext;
      this.#pendingContext = undefined;
      if (fresh && fresh.epoch === session.epoch) {
        const formatted = formatBaseContext(
          fresh.data,
          config.injectionSessionStart,
        );
        if (formatted) this.#baseCache = formatted;
      }
      if (this.#baseCache) parts.push(this.#baseCache);
    }
    if (this.#lastDialecticTurn === NEVER) {
      if (this.#pendingDialectic) {
        this.#lastDialecticTurn = turn;
      } else if (query.trim()) {
        if (!this.#dialecticAlive()) this.#startDialectic(query, turn);
        const run = this.#dialecticRun;
        if (firstTurn && run) {
          await waitFor(run.done, waitMs(config.firstTurnDialecticWait));
        }
      }
    }
    const dialectic = this.#consumeDialectic(config);
    if (dialectic) parts.push(dialectic);
    // The first turn's answer comes from the warm-up question about the
    // user (the cold/warm prompt), not from this message.
    this.#warmUpAnswer = Boolean(dialectic) && firstTurn;
    const notice = this.#rt.notices.take();
    if (notice) parts.unshift(notice);
    const text = applyTokenBudget(parts.join("\n\n"), config.contextTokens);
    return this.#log(text ? "injected" : "fetched-but-empty", text);
  }

  async #syncPrefetch(config: HonchoConfig, query: string): Promise<string> {
    const budgetMs = config.timeout !== undefined && config.timeout > 0 &&
        Number.isFinite(config.timeout)
      ? config.timeout * 1000
      : HONCHO_TIMINGS.recallSyncMs;
    if (isTrivialPrompt(query) || this.#syncBusy) {
      return this.#log("trivial-prompt", "");
    }
    if (!this.#reads.open(this.#rt.now())) {
      // Honcho failed a moment ago: no request until the pause ends.
      return this.#log("recall-sync-empty", this.#rt.notices.take());
    }
    this.#syncBusy = true;
    const outer = this.#rt.signal;
    const controller = deadlineSignal(
      budgetMs,
      "Honcho recall budget passed",
      outer,
    );
    const turnGen = this.#turnGen;
    const epoch = this.#session.epoch;
    try {
      await this.#session.ensure(controller.signal);
      const turn = this.#turn();
      const contextDue = !(config.injectionFrequency === "first-turn" &&
        turn > 1) &&
        turn - this.#lastContextTurn >= config.contextCadence;
      const dialecticDue = turn - this.#lastDialecticTurn >=
        effectiveCadence(config.dialecticCadence, this.#emptyStreak);
      if (!contextDue && !dialecticDue) {
        return this.#log("recall-sync-empty", this.#rt.notices.take());
      }
      const [base, dialectic] = await Promise.all([
        contextDue
          ? this.#fetchBaseContext(query, controller.signal)
          : Promise.resolve(undefined),
        dialecticDue
          ? runDialecticDepth({
            query,
            cold: !this.#baseCache,
            settings: config,
            currentRequest: capDialecticInput(
              query,
              config.dialecticMaxInputChars,
            ),
            runPass: (prompt, level) =>
              this.#dialecticQuery(prompt, level, controller.signal),
          })
          : Promise.resolve(undefined),
      ]);
      if (turnGen !== this.#turnGen || epoch !== this.#session.epoch) {
        return "";
      }
      const parts: string[] = [];
      if (base !== undefined) {
        this.#lastContextTurn = turn;
        const formatted = formatBaseContext(base, config.injectionSessionStart);
        if (formatted) {
          this.#baseCache = formatted;
          parts.push(formatted);
        }
      }
      if (dialectic !== undefined) {
        if (dialectic) {
          this.#lastDialecticTurn = turn;
          this.#emptyStreak = 0;
          parts.push(capDialecticResult(dialectic, config.dialecticMaxChars));
        } else {
          this.#emptyStreak++;
        }
      }
      this.#rt.notices.clear();
      this.#reads.succeeded();
      const text = applyTokenBudget(parts.join("\n\n"), config.contextTokens);
      return this.#log(text ? "injected" : "recall-sync-empty", text);
    } catch (error) {
      if (!outer.aborted) this.#reads.failed(error, this.#rt.now());
      this.#rt.notices.reportError(error);
      return this.#log("recall-sync-empty", this.#rt.notices.take());
    } finally {
      controller.clear();
      this.#syncBusy = false;
    }
  }

  #consumeDialectic(config: HonchoConfig): string {
    const pending = this.#pendingDialectic;
    this.#pendingDialectic = undefined;
    if (!pending || pending.epoch !== this.#session.epoch) return "";
    if (
      pending.firedAt >= 0 &&
      this.#turn() - pending.firedAt > config.dialecticCadence * 2
    ) return "";
    const text = pending.result.trim();
    return text ? capDialecticResult(text, config.dialecticMaxChars) : "";
  }

  /** The first base-layer fetch of the session (turn 1's, or a late one), once reads may go out. */
  #startBase(query: string): void {
    if (this.#baseStarted || !this.#reads.open(this.#rt.now())) return;
    this.#baseStarted = true;
    this.#lastContextTurn = this.#turn();
    this.#startContextFetch(query);
  }

  #startContextFetch(query: string): void {
    if (this.#contextRun || this.#rt.stopped()) return;
    if (!this.#reads.open(this.#rt.now())) return;
    const epoch = this.#session.epoch;
    const signal = this.#rt.signal;
    const run = this.#rt.tasks.spawn("honcho-context", async () => {
      try {
        const data = await this.#fetchBaseContext(query, signal);
        this.#reads.succeeded();
        if (epoch === this.#session.epoch) {
          this.#pendingContext = { data, epoch };
        }
      } catch (error) {
        // A read beside a failed creation fails with it (set-up retries are paced already):
        // no read pause, and the set-up's success fetches the base layer again.
        if (this.#session.exists) this.#reads.failed(error, this.#rt.now());
        else this.#baseStarted = false;
        if (epoch === this.#session.epoch) {
          this.#rt.notices.reportError(error);
        }
        logFailure("context fetch", error, this.#rt.scrub);
      }
    });
    this.#contextRun = run;
    run.finally(() => {
      if (this.#contextRun === run) this.#contextRun = undefined;
    });
  }

  /** The user side (session context) and AI side (peer context) in parallel; throws when both fail (auth first). */
  async #fetchBaseContext(
    query: string,
    signal: AbortSignal,
  ): Promise<BaseContextData> {
    const config = this.#rt.config;
    const client = this.#rt.client;
    const identity = this.#session.identity!;
    const sections = config.injectionSessionStart;
    const wants = (name: string): boolean =>
      sections === undefined || (sections as string[]).includes(name);
    const cards = (list: string[] | null): string =>
      (list ?? []).map((f) => f.trim()).filter(Boolean).join("\n");
    const data: BaseContextData = {};
    const jobs: Promise<void>[] = [];
    if (wants("summary") || wants("peerRepresentation") || wants("peerCard")) {
      const aiObserves = this.#session.aiObservesOthers();
      jobs.push(
        client.getSessionContext(identity.sessionId, {
          summary: true,
          tokens: config.contextTokens && config.contextTokens > 0
            ? Math.floor(config.contextTokens)
            : undefined,
          peerTarget: identity.userPeerId,
          peerPerspective: aiObserves ? identity.aiPeerId : undefined,
          searchQuery: query.trim()
            ? capDialecticInput(query.trim(), SEARCH_QUERY_MAX_CHARS)
            : undefined,
          signal,
        }).then((ctx) => {
          const summary = cleanHonchoSummary(ctx.summary?.content);
          if (summary) data.summary = summary;
          const representation = ctx.peerRepresentation?.trim();
          if (representation) data.representation = representation;
          const card = cards(ctx.peerCard);
          if (card) data.card = card;
        }),
      );
    }
    if (wants("aiRepresentation") || wants("aiCard")) {
      jobs.push(
        client.getPeerContext(identity.aiPeerId, {
          target: identity.aiPeerId,
          signal,
        }).then((ctx) => {
          const representation = ctx.representation?.trim();
          if (representation) data.aiRepresentation = representation;
          const card = cards(ctx.peerCard);
          if (card) data.aiCard = card;
        }),
      );
    }
    const outcomes = await Promise.allSettled(jobs);
    if (signal.aborted) throw signal.reason;
    const failures = outcomes.flatMap((o) =>
      o.status === "rejected" ? [o.reason as unknown] : []
    );
    const auth = failures.find((e) => isHonchoError(e, "auth"));
    if (auth !== undefined) throw auth;
    if (failures.length > 0 && failures.length === outcomes.length) {
      throw failures[0];
    }
    // A read's success ends a failure episode once set-up did (it may not have, beside the reads).
    if (!failures.length && outcomes.length && this.#session.ready) {
      this.#rt.notices.clear();
    }
    return data;
  }

  #dialecticAlive(): boolean {
    const run = this.#dialecticRun;
    if (!run) return false;
    const staleAfterMs = 2 * (this.#rt.config.timeout ?? 8) * 1000;
    return this.#rt.now() - run.startedAt < staleAfterMs;
  }

  /** Starts a full-depth dialectic in the background (plugins/memory/honcho/SPEC.md §8). */
  #startDialectic(query: string, firedAt: number): void {
    const config = this.#rt.config;
    if (this.#rt.stopped()) return;
    if (!this.#reads.open(this.#rt.now())) return;
    const epoch = this.#session.epoch;
    const signal = this.#rt.signal;
    const cold = !this.#baseCache;
    const rewriter = this.#rewriter;
    const done = this.#rt.tasks.spawn("honcho-dialectic", async () => {
      try {
        let rewritten: string | undefined;
        if (config.queryRewrite && rewriter && firedAt > 0) {
          try {
            rewritten = (await rewriter(query))?.trim() || undefined;
          } catch {
            rewritten = undefined;
          }
        }
        const result = await runDialecticDepth({
          query,
          cold,
          settings: config,
          rewritten,
          runPass: (prompt, level) =>
            this.#dialecticQuery(prompt, level, signal),
        });
        this.#reads.succeeded();
        if (epoch !== this.#session.epoch) return;
        if (result.trim()) {
          this.#pendingDialectic = { result, firedAt, epoch };
          this.#lastDialecticTurn = firedAt;
          this.#emptyStreak = 0;
          if (this.#session.ready) this.#rt.notices.clear();
        } else {
          this.#emptyStreak++;
        }
      } catch (error) {
        if (!signal.aborted && this.#session.exists) {
          this.#reads.failed(error, this.#rt.now());
        }
        if (epoch !== this.#session.epoch || signal.aborted) return;
        if (!isHonchoError(error, "auth")) this.#emptyStreak++;
        this.#rt.notices.reportError(error);
        logFailure("dialectic", error, this.#rt.scrub);
      }
    });
    const run: DialecticRun = { done, startedAt: this.#rt.now(), firedAt };
    this.#dialecticRun = run;
    done.finally(() => {
      if (this.#dialecticRun === run) this.#dialecticRun = undefined;
    });
  }

  /** One dialectic call (plugins/memory/honcho/SPEC.md §8): level, input cap, observer/target. */
  async #dialecticQuery(
    prompt: string,
    level: ReasoningLevel,
    signal: AbortSignal,
  ): Promise<string> {
    const config = this.#rt.config;
    const client = this.#rt.client;
    const identity = this.#session.identity!;
    const effectiveLevel = config.dialecticDynamic
      ? level
      : config.dialecticReasoningLevel;
    const query = capDialecticInput(prompt, config.dialecticMaxInputChars);
    const asAi = this.#session.aiObservesOthers();
    const answer = await client.peerChat(
      asAi ? identity.aiPeerId : identity.userPeerId,
      query,
      {
        target: asAi ? identity.userPeerId : undefined,
        reasoningLevel: effectiveLevel,
        signal,
      },
    );
    return answer?.trim() ?? "";
  }

  /** Logs the injection (when on) and returns it. */
  #log(reason: string, payload: string): string {
    logInjection(this.#rt.config, this.#rt.tasks, {
      turn: this.#turn(),
      sessionKey: this.#session.identity?.sessionKey,
      reason,
      payload,
    });
    return payload;
  }
}

export interface InjectionLogEntry {
  turn: number;
  sessionKey: string | undefined;
  /** Why this was (or was not) injected. */
  reason: string;
  payload: string;
}

/** Appends one line to `injectionLogPath` (when `logging` is on) as a background task. */
export function logInjection(
  config: Pick<HonchoConfig, "injectionLogPath" | "recallMode"> | undefined,
  tasks: TaskGroup,
  entry: InjectionLogEntry,
): void {
  const path = config?.injectionLogPath;
  if (!path) return;
  const line = `${
    JSON.stringify({
      ts: new Date().toISOString(),
      turn: entry.turn,
      session_key: entry.sessionKey ?? null,
      recall_mode: config?.recallMode ?? null,
      reason: entry.reason,
      bytes: new TextEncoder().encode(entry.payload).length,
      payload: entry.payload,
    })
  }\n`;
  tasks.spawn("honcho-injection-log", async () => {
    try {
      await Deno.mkdir(dirname(path), { recursive: true, mode: 0o700 });
      // Not node:fs/promises: Node's fs layer, a few ms of every start, for an optional log.
      await Deno.writeTextFile(path, line, { append: true, mode: 0o600 });
    } catch (error) {
      log("debug", `Honcho injection log failed: ${errorText(error)}`);
    }
  });
}
