/**
 * Builds the memory an agent of the active profile would run with: a
 * {@linkcode MemoryManager} holding the built-in store and, when one is
 * configured and available, the external provider. Used by `hermes memory
 * recall` and `hermes memory import`.
 *
 * Internal to the CLI; not exported from `@hermes/memory/cli` (a program
 * that wants a {@linkcode MemoryManager} builds one from `@hermes/memory`).
 *
 * @module
 */

import { errorText } from "../_util/error_text.ts";
import type { CliIo } from "./cli_io.ts";
import { closeProvider, isBuiltinSentinel, loadProvider } from "./_plugins.ts";
import { getHermesHome } from "../profile/hermes_home.ts";
import { getConfigValue, loadConfig } from "../config/config.ts";
import { MemoryManager } from "../manager/memory_manager.ts";
import { BuiltinMemoryProvider } from "../builtin/builtin_provider.ts";
import type { HermesConfig, MemoryProvider } from "../core/memory_provider.ts";

/** What {@linkcode openAgentMemory} built. */
export interface AgentMemory {
  /** The manager, initialized for `sessionId`. */
  manager: MemoryManager;
  /** The loaded config. */
  config: HermesConfig;
  /** The external provider in use, or `null` (built-in only). */
  external: string | null;
  /** `memory.provider` as configured (`null` for built-in only). */
  configured: string | null;
  /** Why the configured provider is not in use, if it is not. */
  skipped?: string;
}

/** Options of {@linkcode openAgentMemory}. */
export interface OpenAgentMemoryOptions {
  /** The session id passed to `initialize`. */
  sessionId: string;
  /**
   * Call `initializeForInspection` instead of `initialize` (no side
   * effects, for previews).
   *
   * @default {false}
   */
  inspection?: boolean;
}

/**
 * Loads config and providers of the active profile and initializes them
 * for a CLI session. A configured provider that cannot be loaded or is not
 * available is left out (as the agent does) and the reason is reported.
 *
 * @param io Where warnings go.
 * @param options The session and the initialize mode.
 * @returns The manager and what went into it.
 * @throws {ConfigError} When `config.yaml` does not parse.
 *
 * @example Basic usage
 * ```ts ignore
 * import { memoryCliIo } from "@hermes/memory/cli";
 * import { openAgentMemory } from "./_agent_memory.ts";
 * const { manager } = await openAgentMemory(memoryCliIo(), { sessionId: "s1" });
 * await manager.shutdownAll();
 * ```
 */
export async function openAgentMemory(
  io: CliIo,
  options: OpenAgentMemoryOptions,
): Promise<AgentMemory> {
  const home = getHermesHome();
  const config = await loadConfig();
  const manager = new MemoryManager({ config });
  await manager.addProvider(
    new BuiltinMemoryProvider({ hermesHome: home, config }),
  );
  const raw = getConfigValue(config, "memory.provider");
  const setting = typeof raw === "string" ? raw.trim() : "";
  const configured = setting !== "" && !isBuiltinSentinel(setting)
    ? setting
    : null;
  const result: AgentMemory = {
    manager,
    config,
    external: null,
    configured,
  };
  if (configured !== null) {
    let provider: MemoryProvider | null = null;
    try {
      provider = await loadProvider(configured, {
        inspection: options.inspection === true,
      });
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
  const init = {
    platform: "cli",
    hermesHome: home,
    agentContext: "primary" as const,
    agentWorkspace: "hermes",
  };
  if (options.inspection) {
    await manager.initializeAllForInspection(options.sessionId, init);
  } else {
    await manager.initializeAll(options.sessionId, init);
  }
  return result;
}

/** How long a provider tool call waits for a provider still starting. */
const STARTING_WAIT_MS = 15_000;

/**
 * Runs one of the opened memory's provider tools. A provider still setting
 * up its session answers "try again shortly" (Honcho while its session
 * starts); an agent would retry on its next turn, so this retries for the
 * caller, for up to 15 seconds.
 *
 * @param memory The opened memory.
 * @param name The tool's name.
 * @param args Its arguments.
 * @returns The provider's JSON result string.
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
