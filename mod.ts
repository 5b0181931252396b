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

export * from "./src/env.ts";
export * from "./src/log.ts";
export * from "./src/hermes_home.ts";
export * from "./src/memory_provider.ts";
export * from "./src/mask.ts";
export * from "./src/atomic_write.ts";
export * from "./src/file_lock.ts";
export * from "./src/env_file.ts";
export * from "./src/secret_scope.ts";
export * from "./src/config.ts";
export * from "./src/runtime_cwd.ts";
export * from "./src/context_task.ts";
export * from "./src/pre_compress.ts";
export * from "./src/prefetch_spill.ts";
export * from "./src/compression_gate.ts";
export * from "./src/python_json.ts";
export * from "./src/memory_format.ts";
export * from "./src/threat_scan.ts";
export * from "./src/memory_store.ts";
export * from "./src/memory_tool.ts";
export * from "./src/memory_approval.ts";
export * from "./src/builtin_provider.ts";
export * from "./src/memory_manager.ts";
export * from "./src/background_queue.ts";
export * from "./src/context_fence.ts";
export * from "./src/redact.ts";
export * from "./src/trivial_prompt.ts";
export * from "./src/tool_schema.ts";
export * from "./src/skill_invocation.ts";
export * from "./src/plugin_manifest.ts";
export * from "./src/plugin_discovery.ts";
export * from "./src/provider_permissions.ts";
export * from "./src/provider_skills.ts";
export * from "./src/plugin_context.ts";
export * from "./src/worker_rpc.ts";
export * from "./src/sandboxed_provider.ts";
export * from "./src/host_safety.ts";
export * from "./src/provider_loader.ts";
export * from "./src/provider_deps.ts";
export * from "./src/provider_cli.ts";
