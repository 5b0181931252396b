/**
 * The per-task scopes on `AsyncLocalStorage`: the profile home, the session
 * directory and the secret scope that everything started inside them keeps
 * (timers, queued tasks, fetch callbacks). Loading this module creates the
 * stores; their readers live apart (`getHermesHome`, `resolveAgentCwd`,
 * `getSecret`) and work without them, so a process that opens no scope never
 * evaluates `node:async_hooks` (about 15 Node-compatibility modules, 6–9 ms
 * of a start).
 *
 * @module
 */

import { AsyncLocalStorage } from "node:async_hooks";
import { resolve } from "../_util/path.ts";
import { scopeStores } from "./hermes_home.ts";

const homeStore = scopeStores.home = new AsyncLocalStorage<string>();
const cwdStore = scopeStores.cwd = new AsyncLocalStorage<string>();
const secretStore = scopeStores.secrets = new AsyncLocalStorage<
  Readonly<Record<string, string>>
>();
scopeStores.snapshot = () => AsyncLocalStorage.snapshot();
scopeStores.unscoped = (fn) =>
  homeStore.exit(() => cwdStore.exit(() => secretStore.exit(fn)));

/**
 * Runs `fn` with `home` (made absolute) as the profile home for everything
 * it does, including timers, queued tasks and fetch callbacks it starts.
 *
 * @category Profiles and secrets
 */
export function withHermesHome<T>(home: string, fn: () => T): T {
  return homeStore.run(resolve(home), fn);
}

/**
 * Runs `fn` with `path` (made absolute) as the conversation's working
 * directory for everything it does; the process's own directory is unchanged.
 *
 * @category Profiles and secrets
 */
export function withSessionCwd<T>(path: string, fn: () => T): T {
  return cwdStore.run(resolve(path), fn);
}

/**
 * Runs `fn` with a frozen copy of `mapping` as the secret scope for
 * everything it does, including timers, queued tasks and fetch callbacks.
 *
 * @example One turn of a profile
 * ```ts
 * import { getSecret, withSecretScope } from "@hermes/memory";
 * import assert from "node:assert/strict";
 * withSecretScope({ HONCHO_API_KEY: "alice-key" }, () => {
 *   assert.equal(getSecret("HONCHO_API_KEY"), "alice-key");
 * });
 * ```
 *
 * @category Profiles and secrets
 */
export function withSecretScope<T>(
  mapping: Record<string, string>,
  fn: () => T,
): T {
  return secretStore.run(Object.freeze({ ...mapping }), fn);
}
