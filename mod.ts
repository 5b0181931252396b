/**
 * `@hermes/memory`: memory that persists across sessions for AI agents,
 * compatible with the memory-provider plugin system of Hermes Agent.
 *
 * Who imports it: an agent (or any Deno program) that hosts memory. It
 * starts with {@linkcode openMemory}: a session's
 * {@linkcode MemoryManager} with the built-in store and the configured
 * provider, initialized. The other entries, by who imports them:
 *
 * | Entry | For | Starts with |
 * | --- | --- | --- |
 * | `@hermes/memory` | an agent | `openMemory`, `MemoryManager` |
 * | `@hermes/memory/provider` | a provider's author | `MemoryProvider`, `register(ctx)` |
 * | `@hermes/memory/plugins` | a host or gateway that loads providers itself | `loadMemoryProvider`, `setMaxLiveProviders` |
 * | `@hermes/memory/cli` | a provider's `cli.ts`, or running `hermes` in-process | `main`, `HermesCommand` |
 *
 * @example Memory written in one session is in the next one's prompt
 * ```ts
 * import { openMemory } from "@hermes/memory";
 * import assert from "node:assert/strict";
 *
 * const hermesHome = await Deno.makeTempDir(); // a fresh profile
 * {
 *   await using memory = await openMemory({ sessionId: "s1", hermesHome });
 *   // The model called the `memory` tool:
 *   await memory.memoryTool({
 *     action: "add",
 *     target: "user",
 *     content: "Prefers metric units",
 *   });
 * } // queued writes drained, providers shut down
 * await using next = await openMemory({ sessionId: "s2", hermesHome });
 * assert.match(await next.manager.buildSystemPrompt(), /Prefers metric units/);
 * ```
 *
 * @module
 */

// The modules loaded by URL at run time, so `deno cache` of an agent
// fetches them too (see the file).
import "./_loaded_by_url.ts";

// Contract
export * from "./src/core/memory_provider.ts";
export type {
  ProviderRegistrationContext,
  SkillRegistration,
} from "./src/core/plugin_context.ts";

// Manager
export {
  type OpenedMemory,
  openMemory,
  type OpenMemoryOptions,
} from "./src/agent/open_memory.ts";
export { MemoryManager } from "./src/manager/memory_manager.ts";
export type {
  CommitSessionBoundaryOptions,
  ManagerPreCompressOptions,
  MemoryManagerOptions,
  NotifyMemoryToolWriteOptions,
  ShutdownDrainState,
  ShutdownDrainStatus,
  SyncAllOptions,
} from "./src/manager/manager_options.ts";
// Whether the agent offers the provider's tools (the contract's tool gate)
export {
  injectMemoryProviderTools,
  type InjectMemoryProviderToolsOptions,
  memoryProviderToolsEnabled,
  type MemoryProviderToolsEnabledOptions,
  memoryProviderToolsExposed,
  type MemoryToolSource,
  type MemoryToolSurface,
} from "./src/manager/tool_schema.ts";

// Built-in store
export {
  BuiltinMemoryProvider,
  type BuiltinMemoryProviderOptions,
} from "./src/builtin/builtin_provider.ts";
export { type MemoryResult, MemoryStore } from "./src/builtin/memory_store.ts";
export {
  type MemoryFilePaths,
  memoryFilePaths,
  readStoreUsage,
  resetMemoryFiles,
  type ResetTarget,
  type StoreUsage,
} from "./src/builtin/memory_files.ts";
export type {
  MemoryToolCallOptions,
  MemoryWriteOrigin,
  PendingMemoryWrite,
} from "./src/builtin/memory_tool.ts";
export {
  type ApprovalOutcome,
  approvePendingMemoryWrites,
  listPendingMemoryWrites,
  rejectPendingMemoryWrites,
} from "./src/builtin/memory_approval.ts";

// Profiles and secrets
export {
  getDefaultHermesRoot,
  getHermesHome,
  getHermesRoot,
  getProfileHome,
  getUserHome,
} from "./src/profile/hermes_home.ts";
export {
  buildProfileSecretScope,
  currentSecretScope,
  getSecret,
  setMultiplexActive,
} from "./src/profile/secret_scope.ts";
export { resolveAgentCwd } from "./src/profile/runtime_cwd.ts";
export {
  withHermesHome,
  withSecretScope,
  withSessionCwd,
} from "./src/profile/context_scope.ts";
export {
  contextBound,
  type ContextTask,
  drainContextTasks,
  spawnContextTask,
  type SpawnContextTaskOptions,
} from "./src/profile/context_task.ts";
export {
  saveEnvValue,
  type SaveEnvValueOptions,
} from "./src/profile/env_file.ts";
export { maskSecret } from "./src/core/mask.ts";

// Config
export {
  getConfigPath,
  getConfigValue,
  loadConfig,
  type LoadConfigOptions,
  saveConfig,
  type SaveConfigOptions,
} from "./src/config/config.ts";

// Durable files and the log
export {
  atomicJsonWrite,
  type AtomicWriteOptions,
  atomicWriteText,
  DiskFullError,
  isDiskFull,
  readJsonOrEmpty,
} from "./src/io/atomic_write.ts";
export { withFileLock } from "./src/io/file_lock.ts";
export { log, type Logger, type LogLevel, setLogger } from "./src/core/log.ts";

// Context safety
export {
  buildMemoryContextBlock,
  sanitizeContext,
  StreamingContextScrubber,
} from "./src/context/context_fence.ts";
export { redactForEgress } from "./src/core/redact.ts";
export { isTrivialPrompt } from "./src/context/trivial_prompt.ts";
export { normalizePreCompressEvidence } from "./src/context/pre_compress.ts";
export {
  type AssertTurnAllowedOptions,
  checkpointBeforeCompression,
  type CheckpointBeforeCompressionOptions,
  type CheckpointManager,
  type CheckpointManagerPreCompressOptions,
  type CompactionPolicy,
  compactionPolicyFromConfig,
  type CompactionPolicyOptions,
  warnIfCheckpointGateUnsatisfied,
} from "./src/context/compression_gate.ts";

// Errors callers catch
export { isPermissionDenial } from "./src/provider/permission_denial.ts";
export { ConfigError } from "./src/config/config_file.ts";
export { HermesHomeUnknownError } from "./src/profile/hermes_home.ts";
export { UnscopedSecretError } from "./src/profile/secret_scope.ts";
export { CompressionCheckpointUnavailable } from "./src/context/compression_gate.ts";
