/**
 * `@hermes/memory`: memory that persists across sessions for AI agents,
 * compatible with the memory-provider plugin system of Hermes Agent.
 *
 * - {@linkcode MemoryProvider}: the contract every provider implements.
 * - `MemoryManager`: runs one external provider beside the built-in
 *   `MEMORY.md` / `USER.md` store and keeps the agent's turn fast.
 * - Profile isolation and per-turn secret scoping on `AsyncLocalStorage`.
 *
 * @example Importing the contract
 * ```ts no-assert
 * import { MemoryProvider, getHermesHome } from "@hermes/memory";
 * ```
 *
 * @module
 */

export * from "./src/core/env.ts";
export * from "./src/core/log.ts";
export * from "./src/profile/hermes_home.ts";
export * from "./src/core/memory_provider.ts";
export * from "./src/core/mask.ts";
export * from "./src/io/atomic_write.ts";
export * from "./src/io/file_lock.ts";
export * from "./src/profile/env_file.ts";
export * from "./src/profile/secret_scope.ts";
export * from "./src/config/config.ts";
export * from "./src/config/config_values.ts";
export * from "./src/_util/python_values.ts";
export * from "./src/profile/runtime_cwd.ts";
export * from "./src/profile/context_task.ts";
export * from "./src/context/pre_compress.ts";
export * from "./src/context/prefetch_spill.ts";
export * from "./src/context/compression_gate.ts";
export * from "./src/_util/python_json.ts";
export * from "./src/builtin/memory_format.ts";
export * from "./src/builtin/threat_scan.ts";
export * from "./src/builtin/memory_store.ts";
export * from "./src/builtin/memory_tool.ts";
export * from "./src/builtin/memory_approval.ts";
export * from "./src/builtin/builtin_provider.ts";
export * from "./src/manager/memory_manager.ts";
export * from "./src/manager/background_queue.ts";
export * from "./src/context/context_fence.ts";
export * from "./src/core/redact.ts";
export * from "./src/context/trivial_prompt.ts";
export * from "./src/manager/tool_schema.ts";
export * from "./src/context/skill_invocation.ts";
export * from "./src/plugins/plugin_manifest.ts";
export * from "./src/plugins/plugin_discovery.ts";
export * from "./src/plugins/provider_permissions.ts";
export * from "./src/plugins/provider_skills.ts";
export * from "./src/core/plugin_context.ts";
export * from "./src/sandbox/worker_rpc.ts";
export * from "./src/sandbox/sandboxed_provider.ts";
export * from "./src/sandbox/host_safety.ts";
export * from "./src/plugins/provider_loader.ts";
export * from "./src/plugins/provider_deps.ts";
export * from "./src/plugins/provider_cli.ts";
