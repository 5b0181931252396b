/** The manager's isolated fan-out over providers: one failure never stops the others or the turn. */

import { log, type LogLevel } from "../core/log.ts";
import type { MemoryProvider } from "../core/memory_provider.ts";
import {
  PROVIDER_HOOKS,
  type ProviderHookName,
} from "../core/provider_hooks.ts";
import { redactText } from "../core/redact.ts";
import { errorText } from "../_util/error_text.ts";
import { isRecord } from "../_util/is_record.ts";

/** One registered provider; a busy flag stays set while its last bounded call is stuck. */
export interface ProviderEntry {
  readonly provider: MemoryProvider;
  readonly name: string;
  /** Not `builtin`. */
  readonly external: boolean;
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
  stack = false,
): void {
  let message = `Memory provider '${entry.name}' ${what} failed: ${
    redactedErrorText(error)
  }`;
  if (stack && error instanceof Error && error.stack) {
    message += `\n${redactText(error.stack)}`;
  }
  log(level, message);
}

/** Logs a failed hook at the level the hook table gives it. */
export function logHookFailure(
  entry: ProviderEntry,
  name: ProviderHookName,
  error: unknown,
): void {
  const spec = PROVIDER_HOOKS[name];
  logFailure(spec.failureLevel, entry, spec.label, error, spec.stack);
}

/** Calls `call` on each entry in order; failures are logged and skipped. */
export async function eachProvider<T>(
  entries: Iterable<ProviderEntry>,
  name: ProviderHookName,
  call: (entry: ProviderEntry) => T | PromiseLike<T>,
): Promise<T[]> {
  const results: T[] = [];
  for (const entry of entries) {
    try {
      results.push(await call(entry));
    } catch (error) {
      logHookFailure(entry, name, error);
    }
  }
  return results;
}

/**
 * Awaits an external provider's promise for at most `boundMs`. The busy flag
 * stays set until the promise settles, even after a timeout, so a stuck
 * provider is skipped rather than piling up calls.
 */
export function bounded<T>(
  entry: ProviderEntry,
  flag: BusyFlag,
  what: string,
  pending: PromiseLike<T>,
  boundMs: number,
): Promise<T | typeof TIMED_OUT> {
  entry[flag] = true;
  return new Promise<T | typeof TIMED_OUT>((resolve, reject) => {
    let decided = false;
    const timer = setTimeout(() => {
      decided = true;
      log(
        "warn",
        `Memory provider '${entry.name}' ${what} timed out after ${
          (boundMs / 1000).toFixed(1)
        }s; skipping it until the stuck call returns`,
      );
      resolve(TIMED_OUT);
    }, boundMs);
    Promise.resolve(pending).then(
      (value) => {
        entry[flag] = false;
        if (decided) return;
        decided = true;
        clearTimeout(timer);
        resolve(value);
      },
      (error: unknown) => {
        entry[flag] = false;
        if (decided) {
          logFailure("debug", entry, `${what} (after timeout)`, error);
          return;
        }
        decided = true;
        clearTimeout(timer);
        reject(error);
      },
    );
  });
}

/** `pending`'s value, or `undefined` when it does not settle within `ms`. */
function raceTimeout<T>(
  pending: Promise<T>,
  ms: number,
): Promise<T | undefined> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<undefined>((resolve) => {
    timer = setTimeout(() => resolve(undefined), ms);
  });
  return Promise.race([pending, timeout]).finally(() => clearTimeout(timer));
}

/**
 * Resolves `true` when `pending` settles within `ms`; rejections propagate.
 * With `ms` 0 a provider that settles at once still counts as settled.
 */
export function settledBefore(
  pending: PromiseLike<unknown>,
  ms: number,
): Promise<boolean> {
  return new Promise<boolean>((resolve, reject) => {
    const timer = setTimeout(() => resolve(false), ms);
    Promise.resolve(pending).then(
      () => {
        clearTimeout(timer);
        resolve(true);
      },
      (error: unknown) => {
        clearTimeout(timer);
        reject(error);
      },
    );
  });
}

/**
 * Calls `drain(ms)` on every provider that defines it, in parallel, each
 * bounded by `timeoutMs`; a drain that throws, hangs or answers garbage
 * counts as not drained.
 */
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
      result = timeoutMs === undefined
        ? await pending
        : await raceTimeout(pending, timeoutMs);
    } catch (error) {
      logHookFailure(entry, "drain", error);
    }
    const report = isRecord(result) ? result : {};
    if (report.drained !== true) undrained.push(entry.name);
    if (
      typeof report.pending === "number" &&
      Number.isInteger(report.pending) &&
      report.pending > 0
    ) notDurable += report.pending;
  }));
  return { undrained, notDurable };
}
