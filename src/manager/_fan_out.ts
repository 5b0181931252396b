// The manager's isolated fan-out over providers: one failure never stops the
// others or the turn, and calls on the turn's path are bounded.

import { log, type LogLevel } from "../core/log.ts";
import type {
  ChatMessage,
  MemoryProvider,
  SessionSwitchOptions,
} from "../core/memory_provider.ts";
import {
  logProviderHookFailure,
  providerHook,
  type ProviderHookName,
  toDrainResult,
} from "../core/provider_hooks.ts";
import { redactText } from "../core/redact.ts";
import type { BackgroundQueue } from "./background_queue.ts";
import { NOT_STARTED, type ShutdownDrainState } from "./manager_options.ts";
import { errorText } from "../_util/error_text.ts";
import { raceTimeout } from "../_util/race_timeout.ts";

/** One registered provider; a busy flag stays set while its last bounded call is stuck. */
export interface ProviderEntry {
  readonly provider: MemoryProvider;
  readonly name: string;
  /** Not `builtin`. */
  readonly external: boolean;
  /** Its `syncTurn` takes `messages` (`syncTurnTakesMessages` is not `false`). */
  readonly messages: boolean;
  prefetchBusy: boolean;
  turnStartBusy: boolean;
  recallBusy: boolean;
}

export type BusyFlag = "prefetchBusy" | "turnStartBusy" | "recallBusy";

/** What {@linkcode bounded} gives when the bound ran out. */
export const TIMED_OUT: unique symbol = Symbol("timed out");

export const BUILTIN = "builtin";

export function isThenable(value: unknown): value is PromiseLike<unknown> {
  return value !== null &&
    (typeof value === "object" || typeof value === "function") &&
    typeof (value as { then?: unknown }).then === "function";
}

export function redactedErrorText(error: unknown): string {
  return redactText(errorText(error));
}

/** What a value is, for an error message (`null`, `an array`, `a number`). */
export function describeValue(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  return typeof value === "object" ? "an object" : `a ${typeof value}`;
}

/** Logs `Memory provider '<name>' <what> failed: <error>`, redacted. */
export function logFailure(
  level: LogLevel,
  entry: ProviderEntry,
  what: string,
  error: unknown,
): void {
  log(
    level,
    `Memory provider '${entry.name}' ${what} failed: ${
      redactedErrorText(error)
    }`,
  );
}

/** Logs a failed hook at the level the hook table gives it. */
export function logHookFailure(
  entry: ProviderEntry,
  name: ProviderHookName,
  error: unknown,
): void {
  logProviderHookFailure(entry.name, name, error);
}

type Hook = (...args: unknown[]) => unknown;

/** Calls `hook` on each entry with fresh arguments per provider, so one provider's edits never reach the next. */
export function callEach(
  entries: readonly ProviderEntry[],
  hook: ProviderHookName,
  args: (entry: ProviderEntry) => unknown[],
): Promise<unknown[]> {
  return eachProvider(
    entries,
    hook,
    (e) =>
      (providerHook(e.provider, hook) as Hook).call(e.provider, ...args(e)),
  );
}

/**
 * {@linkcode callEach} on the turn's path: a provider still stuck in `flag`
 * is skipped, and an external provider's promise is bounded by `boundMs`.
 */
export function boundedEach(
  entries: readonly ProviderEntry[],
  boundMs: number,
  hook: ProviderHookName,
  flag: BusyFlag,
  what: string,
  args: () => unknown[],
): Promise<unknown[]> {
  return eachProvider(entries, hook, (e): unknown => {
    if (e[flag]) return TIMED_OUT;
    const result = (providerHook(e.provider, hook) as Hook).call(
      e.provider,
      ...args(),
    );
    return e.external && isThenable(result)
      ? bounded(e, flag, what, result, boundMs)
      : result;
  });
}

/** Calls `call` on each entry in order (a synchronous result is not awaited); failures are logged and skipped. */
export async function eachProvider<T>(
  entries: Iterable<ProviderEntry>,
  name: ProviderHookName,
  call: (entry: ProviderEntry) => T | PromiseLike<T>,
): Promise<T[]> {
  const results: T[] = [];
  for (const entry of entries) {
    try {
      const result = call(entry);
      results.push(isThenable(result) ? await result : result);
    } catch (error) {
      logHookFailure(entry, name, error);
    }
  }
  return results;
}

/**
 * Awaits an external provider's promise for at most `boundMs`; the busy flag
 * stays set until it settles, so a stuck provider is skipped, not piled on.
 */
export async function bounded<T>(
  entry: ProviderEntry,
  flag: BusyFlag,
  what: string,
  pending: PromiseLike<T>,
  boundMs: number,
): Promise<T | typeof TIMED_OUT> {
  entry[flag] = true;
  let late = false;
  const outcome = Promise.resolve(pending).then((value) => ({ value }), (
    error: unknown,
  ) => {
    if (late) logFailure("debug", entry, `${what} (after timeout)`, error);
    return { error };
  }).finally(() => entry[flag] = false);
  const settled = await raceTimeout(outcome, boundMs);
  if (settled === undefined) {
    late = true;
    log(
      "warn",
      `Memory provider '${entry.name}' ${what} timed out after ${
        (boundMs / 1000).toFixed(1)
      }s; skipping it until the stuck call returns`,
    );
    return TIMED_OUT;
  }
  if ("error" in settled) throw settled.error;
  return settled.value;
}

/** Calls `drain(ms)` on every provider that defines it, in parallel; a failure counts as not drained. */
export async function drainProviders(
  entries: readonly ProviderEntry[],
  timeoutMs: number | undefined,
): Promise<{ undrained: string[]; notDurable: number }> {
  const undrained: string[] = [];
  let notDurable = 0;
  await Promise.all(entries.map(async (entry) => {
    const provider = entry.provider;
    if (typeof provider.drain !== "function") return;
    let result: unknown;
    try {
      const pending = Promise.resolve(provider.drain(timeoutMs));
      result = await raceTimeout(pending, timeoutMs ?? Infinity);
    } catch (error) {
      logHookFailure(entry, "drain", error);
    }
    const report = toDrainResult(result);
    if (!report.drained) undrained.push(entry.name);
    notDurable += report.pending ?? 0;
  }));
  return { undrained, notDurable };
}

/** Shuts providers down within one budget: queue, then `drain(ms)`, then `shutdown()` (always called). */
export async function shutdownWithin(
  queue: BackgroundQueue,
  entries: readonly ProviderEntry[],
  budget: number,
  report: (state: ShutdownDrainState) => void,
): Promise<void> {
  const deadline = performance.now() + budget;
  const left = (): number => Math.max(0, deadline - performance.now());
  const seconds = `${(budget / 1000).toFixed(2)}s`;
  let state: ShutdownDrainState = {
    ...NOT_STARTED,
    status: "draining",
    activeTasks: queue.size,
  };
  report(state);
  const result = await queue.close(budget);
  state = {
    ...state,
    status: result.drained ? "drained" : "timed_out",
    abandonedWrites: result.abandonedWrites,
    abandonedPrefetches: result.abandonedPrefetches,
    activeTasks: result.activeTasks,
  };
  if (!result.drained) {
    log(
      "warn",
      `Memory shutdown drain timed out after ${seconds}; abandoning ${result.abandonedWrites} queued memory write(s) and ${result.abandonedPrefetches} queued prefetch(es); ${result.activeTasks} active task(s) remain detached`,
    );
  }
  const { undrained, notDurable } = await drainProviders(entries, left());
  if (undrained.length > 0) {
    state = {
      ...state,
      status: "timed_out",
      notDurable,
      undrainedProviders: undrained,
    };
    log(
      "warn",
      `Memory shutdown: ${
        undrained.map((n) => `'${n}'`).join(", ")
      } did not report every accepted write durable within ${seconds}${
        notDurable > 0 ? ` (${notDurable} item(s) not durable)` : ""
      }`,
    );
  }
  report(state);
  await eachProvider([...entries].reverse(), "shutdown", async (e) => {
    const done = providerHook(e.provider, "shutdown").call(e.provider);
    if (!isThenable(done)) return;
    // A provider that settles at once still counts with 0 ms left.
    const settled = Promise.resolve(done).then(() => true);
    if (await raceTimeout(settled, left()) !== true) {
      throw new Error(
        `it did not finish within the ${budget} ms shutdown budget; raise shutdownDrainTimeoutMs to wait longer`,
      );
    }
  });
}

/** Python-style int() of a checkpoint API version; unparseable gives 1. */
export function checkpointVersionOf(provider: MemoryProvider): number {
  let raw: unknown;
  try {
    raw = (provider as { preCompressCheckpointApiVersion?: unknown })
      .preCompressCheckpointApiVersion;
  } catch {
    return 1;
  }
  if (typeof raw === "number") {
    return Number.isFinite(raw) ? Math.trunc(raw) : 1;
  }
  if (typeof raw === "boolean") return raw ? 1 : 0;
  return typeof raw === "string" && /^\s*[+-]?\d+\s*$/.test(raw)
    ? Number.parseInt(raw, 10)
    : 1;
}

/** A session switch some providers failed, kept for the retry. */
export interface PendingSessionSwitch {
  readonly newSessionId: string;
  readonly options: SessionSwitchOptions;
  readonly failed: Set<ProviderEntry>;
}

/** Calls `onSessionSwitch` on each entry; the ones that threw or returned `false` failed. */
export async function switchEach(
  entries: Iterable<ProviderEntry>,
  newSessionId: string,
  options: SessionSwitchOptions,
): Promise<Set<ProviderEntry>> {
  const failed = new Set(entries);
  await eachProvider([...failed], "onSessionSwitch", async (entry) => {
    const result = await providerHook(entry.provider, "onSessionSwitch")
      .call(entry.provider, newSessionId, { ...options });
    if (result === false) {
      logFailure("debug", entry, "onSessionSwitch", "returned false");
    } else failed.delete(entry);
  });
  return failed;
}

/** Calls `onPreCompress` on each entry (src/context/SPEC.md §5). */
export async function preCompressEach(
  entries: readonly ProviderEntry[],
  raw: ChatMessage[],
  evidence: ChatMessage[] | undefined,
  apiVersion: number,
  requireCheckpoint: boolean,
): Promise<string> {
  const parts: string[] = [];
  let checkpointed = false;
  for (const entry of entries) {
    const isCheckpoint = checkpointVersionOf(entry.provider) >= apiVersion;
    const given = isCheckpoint && evidence !== undefined ? evidence : raw;
    try {
      const result = await providerHook(entry.provider, "onPreCompress").call(
        entry.provider,
        given,
        isCheckpoint ? { requireCheckpoint } : {},
      );
      if (typeof result === "string" && result.trim() !== "") {
        parts.push(result);
      }
      if (isCheckpoint) checkpointed = true;
    } catch (error) {
      logHookFailure(entry, "onPreCompress", error);
      if (requireCheckpoint && isCheckpoint) throw error;
    }
  }
  if (requireCheckpoint && !checkpointed) {
    throw new Error(
      `No active memory provider completed pre-compress checkpoint API v${apiVersion}`,
    );
  }
  return parts.join("\n\n");
}
