// The memory an agent of the active profile would run with (built-in store
// plus the configured provider when available), for recall, import, MCP and
// the dashboard. A program that wants a MemoryManager builds one itself.

import { errorText } from "../_util/error_text.ts";
import type { CliIo } from "./cli_io.ts";
import { closeProvider, loadProvider } from "./_plugins.ts";
import { activeProviderName } from "./_provider_list.ts";
import { getHermesHome } from "../profile/hermes_home.ts";
import { loadConfig } from "../config/config.ts";
import type { MemoryManager } from "../manager/memory_manager.ts";
import { BuiltinMemoryProvider } from "../builtin/builtin_provider.ts";
import type { HermesConfig, MemoryProvider } from "../core/memory_provider.ts";
import { lazyImport } from "../_util/lazy_import.ts";

/** What {@linkcode openAgentMemory} built. */
export interface AgentMemory {
  manager: MemoryManager;
  /** The built-in store, `null` when the manager refused it. */
  builtin: BuiltinMemoryProvider | null;
  config: HermesConfig;
  /** The external provider in use, or `null` (built-in only). */
  external: string | null;
  /** `memory.provider` as configured (`null` for built-in only). */
  configured: string | null;
  /** Why the configured provider is not in use, if it is not. */
  skipped?: string;
}

/**
 * A configured provider that cannot be loaded or is not available is left
 * out (as the agent does) with a warning; `inspection` initializes without
 * side effects. Throws `ConfigError` when `config.yaml` does not parse. The
 * provider's sandbox process starts first: the manager's modules load while
 * it boots (`hermes memory mcp` lists tools once it has loaded).
 */
export async function openAgentMemory(
  io: CliIo,
  options: {
    sessionId: string;
    inspection?: boolean;
    platform?: string;
    /** Called once the providers are added, before they initialize (their tools are known). */
    onAdded?: (memory: AgentMemory) => void;
  },
): Promise<AgentMemory> {
  const home = getHermesHome();
  const config = await loadConfig();
  const configured = activeProviderName(config);
  const spawned = Promise.withResolvers<void>();
  const loading = configured === null ? null : loadProvider(configured, {
    inspection: options.inspection,
    config,
    onStarted: spawned.resolve,
  });
  // Until its process is spawned nothing else competes for this thread.
  await Promise.race([spawned.promise, loading?.catch(() => null)]);
  const { MemoryManager } = await lazyImport<
    typeof import("../manager/memory_manager.ts")
  >("../manager/memory_manager.ts", import.meta.url);
  const manager = new MemoryManager({ config });
  const builtin = new BuiltinMemoryProvider({ hermesHome: home, config });
  const result: AgentMemory = {
    manager,
    builtin: await manager.addProvider(builtin) ? builtin : null,
    config,
    external: null,
    configured,
  };
  if (loading !== null) {
    let provider: MemoryProvider | null = null;
    try {
      provider = await loading;
      if (provider === null) {
        result.skipped = "it could not be loaded";
      } else if (!(await provider.isAvailable())) {
        const reason = String(await provider.unavailableReason() ?? "");
        result.skipped = `it is not available${reason ? `: ${reason}` : ""}`;
      } else if (await manager.addProvider(provider)) {
        result.external = provider.name;
      } else {
        result.skipped = "the manager refused it";
      }
    } catch (error) {
      result.skipped = `it failed to load: ${errorText(error)}`;
    }
    if (result.external === null) await closeProvider(provider);
    if (result.skipped) {
      io.stderr(
        `warning: memory provider '${configured}' is not used because ${result.skipped}; see 'hermes memory status'\n`,
      );
    }
  }
  options.onAdded?.(result);
  const init = {
    platform: options.platform ?? "cli",
    hermesHome: home,
    agentContext: "primary" as const,
    agentWorkspace: "hermes",
  };
  await (options.inspection
    ? manager.initializeAllForInspection(options.sessionId, init)
    : manager.initializeAll(options.sessionId, init));
  return result;
}

const STARTING_WAIT_MS = 15_000;

/**
 * A provider still setting up its session answers "try again shortly"
 * (Honcho); an agent would retry on its next turn, so this retries for up
 * to 15 seconds.
 */
export async function callProviderTool(
  memory: AgentMemory,
  name: string,
  args: Record<string, unknown>,
): Promise<string> {
  const deadline = Date.now() + STARTING_WAIT_MS;
  let delay = 50;
  while (true) {
    const text = await memory.manager.handleToolCall(name, args);
    if (!/try again shortly/i.test(text) || Date.now() >= deadline) {
      return text;
    }
    await new Promise((resolve) => setTimeout(resolve, delay));
    delay = Math.min(delay * 2, 500);
  }
}
