/**
 * Background work that keeps the caller's per-task context (profile home,
 * session directory, secret scope): started from a listener or another
 * caller's queue, it would otherwise write to the wrong profile or fail
 * closed. Spawned tasks are tracked so shutdown can drain them. The scopes
 * themselves are opened in `context_scope.ts`; this module never loads
 * `node:async_hooks` (a sandbox that opens no scope starts without it).
 *
 * @module
 */

import { log } from "../core/log.ts";
import { redactText } from "../core/redact.ts";
import { errorText } from "../_util/error_text.ts";
import { scopeStores } from "./hermes_home.ts";

/**
 * A background task started by {@linkcode spawnContextTask}.
 *
 * @category Profiles and secrets
 */
export interface ContextTask<T> {
  /** The name given at spawn time, used in logs. */
  readonly name: string;
  /**
   * Settles with the task's outcome. A rejection is also logged and never
   * reported as unhandled, so awaiting this is optional.
   */
  readonly done: Promise<T>;
  /** Whether the task has finished, successfully or not. */
  readonly settled: boolean;
}

/**
 * Options of {@linkcode spawnContextTask}.
 *
 * @category Profiles and secrets
 */
export interface SpawnContextTaskOptions {
  /** A name for logs, e.g. `"honcho-sync"`. */
  name: string;
}

// Each tracked task maps to a promise that resolves once it is untracked.
const active = new Map<ContextTask<unknown>, Promise<void>>();

/**
 * Captures the caller's context now and returns a function that runs `fn`
 * inside it wherever it is called (a listener, another queue's consumer).
 *
 * @category Profiles and secrets
 */
// deno-lint-ignore no-explicit-any
export function contextBound<F extends (...args: any[]) => any>(fn: F): F {
  // No stores yet: no scope was ever opened, so the caller's context is the
  // empty one; if scopes open later, `fn` still runs outside all of them.
  const snapshot = scopeStores.snapshot?.();
  return function bound(this: unknown, ...args: Parameters<F>): ReturnType<F> {
    const call = () => fn.apply(this, args);
    if (snapshot !== undefined) return snapshot(call);
    return scopeStores.unscoped ? scopeStores.unscoped(call) : call();
  } as F;
}

/**
 * Runs `fn` on a later macrotask inside the caller's context, tracked until
 * it settles; a failure is logged with the task's name, never unhandled.
 *
 * @category Profiles and secrets
 */
export function spawnContextTask<T>(
  fn: () => T | Promise<T>,
  options: SpawnContextTaskOptions,
): ContextTask<T> {
  const name = options.name;
  const run = contextBound(fn);
  let settled = false;
  const done = new Promise<T>((resolveTask, rejectTask) => {
    setTimeout(() => {
      try {
        Promise.resolve(run()).then(resolveTask, rejectTask);
      } catch (error) {
        rejectTask(error);
      }
    }, 0);
  });
  const task: ContextTask<T> = {
    name,
    done,
    get settled(): boolean {
      return settled;
    },
  };
  const untracked = done.then(
    () => {},
    (error: unknown) => {
      log(
        "warn",
        `Background task '${name}' failed: ${redactText(errorText(error))}`,
      );
    },
  ).finally(() => {
    settled = true;
    active.delete(task);
  });
  active.set(task, untracked);
  return task;
}

/** The tasks started by {@linkcode spawnContextTask} that have not settled. */
export function activeContextTasks(): ContextTask<unknown>[] {
  return [...active.keys()];
}

/**
 * Waits until every tracked task has settled (including ones spawned
 * meanwhile), for at most `timeoutMs`.
 *
 * @returns `true` when nothing is left running, `false` on timeout.
 *
 * @category Profiles and secrets
 */
export async function drainContextTasks(timeoutMs: number): Promise<boolean> {
  if (active.size === 0) return true;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timedOut = new Promise<"timeout">((resolveTimeout) => {
    timer = setTimeout(() => resolveTimeout("timeout"), Math.max(0, timeoutMs));
  });
  try {
    while (active.size > 0) {
      const all = Promise.all(active.values());
      if (await Promise.race([all, timedOut]) === "timeout") return false;
    }
    return true;
  } finally {
    clearTimeout(timer);
  }
}
