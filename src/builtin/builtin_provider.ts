/**
 * The `builtin` memory provider: puts the built-in store's frozen
 * `MEMORY.md` / `USER.md` snapshot into the system prompt.
 *
 * The provider offers no tools of its own: the `memory` tool is a core tool
 * of the host agent, which offers {@linkcode BuiltinMemoryProvider.memoryToolSchema}
 * and routes calls to {@linkcode BuiltinMemoryProvider.handleMemoryTool}.
 *
 * @module
 */

import { loadConfig } from "../config/config.ts";
import { log } from "../core/log.ts";
import {
  type HermesConfig,
  type InitializeOptions,
  MemoryProvider,
  type SessionSwitchOptions,
  type ToolSchema,
} from "../core/memory_provider.ts";
import { MemoryStore } from "./memory_store.ts";
import {
  handleMemoryToolCall,
  type MemoryToolCallOptions,
  memoryToolSchema,
} from "./memory_tool.ts";
import { errorText } from "../_util/error_text.ts";

/**
 * Options of {@linkcode BuiltinMemoryProvider}.
 *
 * @category Built-in store
 */
export interface BuiltinMemoryProviderOptions {
  /**
   * A store to use instead of building one from config at
   * {@linkcode BuiltinMemoryProvider.initialize}.
   */
  store?: MemoryStore;
  /**
   * The parsed `config.yaml`; when absent it is loaded from the profile home
   * at initialize (an unreadable config falls back to the defaults).
   */
  config?: HermesConfig;
  /**
   * The profile home; when absent, the `hermesHome` passed to `initialize`,
   * else the active home resolved on every call.
   */
  hermesHome?: string;
}

/**
 * The built-in store as a memory provider named `"builtin"`.
 *
 * At {@linkcode BuiltinMemoryProvider.initialize} (session start) it builds
 * the store from `memory.*` config (unless one was given) and loads it,
 * freezing the snapshot that {@linkcode BuiltinMemoryProvider.systemPromptBlock}
 * returns for the whole session. With both `memory.memory_enabled` and
 * `memory.user_profile_enabled` off there is no store: the prompt block is
 * empty and the tool is not offered.
 *
 * @category Built-in store
 */
export class BuiltinMemoryProvider extends MemoryProvider {
  #store: MemoryStore | null;
  #config: HermesConfig | undefined;
  #hermesHome: string | undefined;
  #initialized = false;

  /**
   * Creates the provider; nothing is read until `initialize`.
   *
   * @param options A ready store, the config, the profile home.
   */
  constructor(options: BuiltinMemoryProviderOptions = {}) {
    super();
    this.#store = options.store ?? null;
    this.#config = options.config;
    this.#hermesHome = options.hermesHome;
  }

  /**
   * Always `"builtin"`.
   *
   * @returns The provider's name.
   */
  get name(): string {
    return "builtin";
  }

  /**
   * The session's store, or `null` before `initialize` and when both
   * targets are disabled.
   */
  get store(): MemoryStore | null {
    return this.#store;
  }

  /** Always available: the store needs nothing but the file system. */
  override isAvailable(): boolean {
    return true;
  }

  /**
   * Builds the store from config (unless one was given) and loads it,
   * freezing the system-prompt snapshot for the session.
   *
   * @param options `hermesHome` is used when the constructor had none.
   */
  override async initialize(
    _sessionId: string,
    options: InitializeOptions = {},
  ): Promise<void> {
    await this.#load(options, true);
  }

  /**
   * Like {@linkcode BuiltinMemoryProvider.initialize}, but a missing memory
   * folder is left missing (previews write nothing).
   *
   * @param options `hermesHome` is used when the constructor had none.
   */
  override async initializeForInspection(
    _sessionId: string,
    options: InitializeOptions = {},
  ): Promise<void> {
    await this.#load(options, false);
  }

  async #load(options: InitializeOptions, create: boolean): Promise<void> {
    if (!this.#initialized && this.#store === null) {
      const home = this.#hermesHome ?? options.hermesHome;
      const config = this.#config ?? await readConfigOrDefaults(home);
      const store = MemoryStore.fromConfig(config, { hermesHome: home });
      const enabled = store.isTargetEnabled("memory") ||
        store.isTargetEnabled("user");
      this.#store = enabled ? store : null;
    }
    this.#initialized = true;
    await this.#store?.loadFromDisk({ create });
  }

  /**
   * No provider tools: the `memory` tool is a host core tool (see
   * {@linkcode BuiltinMemoryProvider.memoryToolSchema}).
   *
   * @returns `[]`.
   */
  override getToolSchemas(): ToolSchema[] {
    return [];
  }

  /**
   * The frozen snapshot: the MEMORY block (when `memory` is enabled and not
   * empty), then the USER PROFILE block (likewise), joined by a blank line.
   *
   * @returns The prompt text, `""` when there is nothing to show.
   */
  override systemPromptBlock(): string {
    const store = this.#store;
    if (store === null) return "";
    const blocks: string[] = [];
    if (store.isTargetEnabled("memory")) {
      blocks.push(store.formatForSystemPrompt("memory"));
    }
    if (store.isTargetEnabled("user")) {
      blocks.push(store.formatForSystemPrompt("user"));
    }
    return blocks.filter((b) => b !== "").join("\n\n");
  }

  /**
   * Re-reads both files and refreshes the frozen snapshot, e.g. before the
   * system prompt is rebuilt after context compression.
   *
   * @returns A promise that resolves once reloaded.
   */
  async reloadSnapshot(): Promise<void> {
    await this.#store?.loadFromDisk();
  }

  /**
   * The `memory` tool schema for this store's enabled targets, or `null`
   * when the tool should not be offered.
   */
  memoryToolSchema(): ToolSchema | null {
    const store = this.#store;
    if (store === null) return null;
    return memoryToolSchema({
      memoryEnabled: store.isTargetEnabled("memory"),
      userProfileEnabled: store.isTargetEnabled("user"),
    });
  }

  /**
   * Runs a `memory` tool call against this session's store.
   *
   * @param options How to get approval when `memory.write_approval` is on.
   * @returns The JSON result string.
   */
  handleMemoryTool(
    args: Record<string, unknown>,
    options: MemoryToolCallOptions = {},
  ): Promise<string> {
    return handleMemoryToolCall(this.#store, args, options);
  }

  /** A new user turn: resets the per-turn consolidation-failure count. */
  override onTurnStart(): void {
    this.#store?.resetTurnFailures();
  }

  /**
   * Refreshes the snapshot when a genuinely new conversation starts
   * (`reset`) or the transcript was compressed; other switches keep it.
   *
   * @param _newSessionId The session switched to.
   * @param options Why the session switched.
   * @returns A promise that resolves once any reload is done.
   */
  override async onSessionSwitch(
    _newSessionId: string,
    options: SessionSwitchOptions = {},
  ): Promise<void> {
    if (options.reset === true || options.reason === "compression") {
      await this.reloadSnapshot();
    }
  }
}

async function readConfigOrDefaults(
  hermesHome: string | undefined,
): Promise<HermesConfig> {
  try {
    return await loadConfig({ hermesHome });
  } catch (error) {
    log(
      "warn",
      `Built-in memory uses default limits: config could not be read: ${
        errorText(error)
      }`,
    );
    return {};
  }
}
