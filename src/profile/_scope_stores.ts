// The stores of the per-task scopes, created when scopes.ts loads. Readers
// (getHermesHome, resolveAgentCwd, getSecret) import only this, so a process
// that opens no scope (the `hermes` CLI in its own home) never evaluates
// `node:async_hooks`, about 15 Node-compatibility modules and 10 ms of every
// start. Unset: no scope can have been opened.
import type { AsyncLocalStorage } from "node:async_hooks";

export const scopeStores: {
  home?: AsyncLocalStorage<string>;
  cwd?: AsyncLocalStorage<string>;
  secrets?: AsyncLocalStorage<Readonly<Record<string, string>>>;
} = {};
