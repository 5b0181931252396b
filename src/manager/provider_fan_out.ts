/**
 * The memory manager's registered providers and the fan-out over them: every
 * hook is called on each provider in registration order, a failure is logged
 * as the single hook table ({@linkcode PROVIDER_HOOKS}) says and skipped, and
 * an external provider's promise can be bounded so a hung provider never
 * holds the turn.
 *
 * @module
 */

import { log, type LogLevel } from "../core/log.ts";
import type { MemoryProvider } from "../core/memory_provider.ts";
import {
  PROVIDER_HOOKS,
  type ProviderHookName,
} from "../core/provider_hooks.ts";
import { redactText } from "../core/redact.ts";
import { errorText } from "../_util/error_text.ts";

/** One registered provider and what the manager tracks about it. */
export interface ProviderEntry {
  /** The provider. */
  readonly provider: MemoryProvider;
  /** Its name, as registered. */
  readonly name: string;
  /** Whether it is the external provider (not `builtin`). */
  readonly external: boolean;
  /** The provider's previous prefetch has not settled yet. */
  prefetchBusy: boolean;
  /** The provider's previous onTurnStart has not settled yet. */
  turnStartBusy: boolean;
  /** The provider's previous recallStatus has not settled yet. */
  recallBusy: boolean;
}

/** The busy flag of a bounded hook. */
export type BusyFlag = "prefetchBusy" | "turnStartBusy" | "recallBusy";

/** What {@linkcode ProviderFanOut.bounded} gives when the bound ran out. */
export const TIMED_OUT: unique symbol = Symbol("timed out");

/** The name of the built-in provider. */
export const BUILTIN = "builtin";

/**
 * Whether a value is a promise-like.
 *
 * @param value Anything.
 * @returns `true` when it has a `then` method.
 */
export function isThenable(value: unknown): value is PromiseLike<unknown> {
  return value !== null &&
    (typeof value === "object" || typeof value === "function") &&
    typeof (value as { then?: unknown }).then === "function";
}

/**
 * An error's text for a log line or tool result, secrets masked.
 *
 * @param error Anything thrown.
 * @returns The redacted text.
 */
export function redactedErrorText(error: unknown): string {
  return redactText(errorText(error));
}

/**
 * What a value is, for an error message (`null`, `an array`, `a number`).
 *
 * @param value Anything.
 * @returns The description.
 */
export function describeValue(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  return typeof value === "object" ? "an object" : `a ${typeof value}`;
}

/**
 * The registered providers, in registration order, and the isolated
 * fan-out over them.
 */
export class ProviderFanOut {
  #entries: ProviderEntry[] = [];
  readonly #boundMs: number;

  /**
   * Creates an empty set.
   *
   * @param boundMs How long {@linkcode ProviderFanOut.bounded} waits.
   */
  constructor(boundMs: number) {
    this.#boundMs = boundMs;
  }

  /**
   * The entries in registration order. The array is replaced, never
   * changed, on registration, so a caller may keep it as a snapshot.
   */
  get entries(): readonly ProviderEntry[] {
    return this.#entries;
  }

  /** The external entries (never `builtin`), as a new array. */
  get externals(): ProviderEntry[] {
    return this.#entries.filter((e) => e.external);
  }

  /**
   * Appends an entry.
   *
   * @param entry The new entry.
   */
  add(entry: ProviderEntry): void {
    this.#entries = [...this.#entries, entry];
  }

  /**
   * Logs `Memory provider '<name>' <what> failed: <error>`, redacted.
   *
   * @param level The level.
   * @param entry The provider.
   * @param what What failed.
   * @param error The failure.
   * @param stack Whether to add the stack.
   */
  fail(
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

  /**
   * Logs a failed hook as the hook table says (level, name, stack).
   *
   * @param entry The provider.
   * @param name The hook.
   * @param error The failure.
   */
  failHook(
    entry: ProviderEntry,
    name: ProviderHookName,
    error: unknown,
  ): void {
    const spec = PROVIDER_HOOKS[name];
    this.fail(spec.failureLevel, entry, spec.label, error, spec.stack);
  }

  /**
   * Calls `call` on each entry in order, awaiting promises; failures are
   * logged as the hook table says for `name` and skipped.
   *
   * @param entries The entries to call.
   * @param name The hook, for the failure line.
   * @param call The call.
   * @returns The successful results.
   */
  async each<T>(
    entries: Iterable<ProviderEntry>,
    name: ProviderHookName,
    call: (entry: ProviderEntry) => T | PromiseLike<T>,
  ): Promise<T[]> {
    const results: T[] = [];
    for (const entry of entries) {
      try {
        results.push(await call(entry));
      } catch (error) {
        this.failHook(entry, name, error);
      }
    }
    return results;
  }

  /**
   * Awaits an external provider's promise for at most the bound. The busy
   * flag stays set until the promise settles, even after a timeout, so the
   * provider is skipped while it is stuck. The timer is cleared as soon as
   * the promise settles.
   *
   * @param entry The provider.
   * @param flag Its busy flag for this hook.
   * @param what The hook, for the log lines.
   * @param pending The provider's promise.
   * @returns The value, or {@linkcode TIMED_OUT}.
   */
  bounded<T>(
    entry: ProviderEntry,
    flag: BusyFlag,
    what: string,
    pending: PromiseLike<T>,
  ): Promise<T | typeof TIMED_OUT> {
    entry[flag] = true;
    return new Promise<T | typeof TIMED_OUT>((resolve, reject) => {
      let decided = false;
      const timer = setTimeout(() => {
        decided = true;
        log(
          "warn",
          `Memory provider '${entry.name}' ${what} timed out after ${
            (this.#boundMs / 1000).toFixed(1)
          }s; skipping it until the stuck call returns`,
        );
        resolve(TIMED_OUT);
      }, this.#boundMs);
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
            this.fail("debug", entry, `${what} (after timeout)`, error);
            return;
          }
          decided = true;
          clearTimeout(timer);
          reject(error);
        },
      );
    });
  }
}
