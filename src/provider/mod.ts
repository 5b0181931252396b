/**
 * `@hermes/memory/provider`: all a provider's sandbox worker loads.
 *
 * Who imports it: a memory provider's code (an agent imports
 * `@hermes/memory`). It holds the {@linkcode MemoryProvider} contract, {@linkcode getHermesHome},
 * {@linkcode getSecret}, {@linkcode log}, durable files and background work
 * bound to the turn's profile. No npm package, so a worker starts in
 * milliseconds. A provider gets its `config.yaml` sections as
 * `ctx.hermesConfig` in `register(ctx)`; its sandbox cannot read the file.
 *
 * @example A provider that remembers the last turn
 * ```ts
 * import {
 *   getHermesHome,
 *   MemoryProvider,
 *   type ProviderRegistrationContext,
 *   type ToolSchema,
 * } from "@hermes/memory/provider";
 * import assert from "node:assert/strict";
 *
 * class LastTurn extends MemoryProvider {
 *   #last = "";
 *   get name(): string { return "last_turn"; }
 *   isAvailable(): boolean { return true; }
 *   initialize(): void {}
 *   getToolSchemas(): ToolSchema[] { return []; }
 *   override prefetch(): string { return this.#last; }
 *   override syncTurn(user: string): void { this.#last = `${getHermesHome()}: ${user}`; }
 * }
 *
 * export function register(ctx: ProviderRegistrationContext): void {
 *   ctx.registerMemoryProvider(new LastTurn());
 * }
 *
 * const provider = new LastTurn();
 * provider.syncTurn("the kite is red");
 * assert.match(provider.prefetch(), /the kite is red$/);
 * ```
 *
 * @module
 */

// The contract.
export * from "../core/memory_provider.ts";
// What `register(ctx)` receives.
export type {
  ProviderRegistrationContext,
  SkillRegistration,
} from "../core/plugin_context.ts";
// Where the profile lives, and its secrets.
export {
  getDefaultHermesRoot,
  getHermesHome,
  getHermesRoot,
  getUserHome,
} from "../profile/hermes_home.ts";
export { getSecret, UnscopedSecretError } from "../profile/secret_scope.ts";
export { resolveAgentCwd } from "../profile/runtime_cwd.ts";
// The host's log, and masking for it.
export { log, type LogLevel } from "../core/log.ts";
export { maskSecret } from "../core/mask.ts";
// Durable files.
export {
  atomicJsonWrite,
  type AtomicWriteOptions,
  atomicWriteText,
} from "../io/atomic_write.ts";
export { withFileLock } from "../io/file_lock.ts";
// Background work that keeps the turn's profile and secrets.
export {
  contextBound,
  type ContextTask,
  spawnContextTask,
  type SpawnContextTaskOptions,
} from "../profile/context_task.ts";
// Text helpers.
export { sanitizeContext } from "../context/context_fence.ts";
export { normalizePreCompressEvidence } from "../context/pre_compress.ts";
export { isTrivialPrompt } from "../context/trivial_prompt.ts";
export { toolError } from "../core/tool_result.ts";
// Permission denials.
export {
  isPermissionDenial,
  permissionDenialsReportedByHost,
} from "./permission_denial.ts";
