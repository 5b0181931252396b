// The `builtin` memory provider: the built-in store's frozen snapshot in the
// system prompt; the host offers the `memory` tool as a core tool.

import { loadConfigOrEmpty } from "../config/config.ts";
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
 * The built-in store as a memory provider named `"builtin"`: its snapshot,
 * frozen at `initialize`, is the session's system-prompt block. With both
 * targets disabled there is no store, no block and no tool.
 *
 * @category Built-in store
 */
export class BuiltinMemoryProvider extends MemoryProvider {
  /** It records no turns: no transcript on every turn. */
  override readonly syncTurnTakesMessages: boolean = false;
  #store: MemoryStore | null;
  #config: HermesConfig | undefined;
  #hermesHome: string | undefined;
  #initialized = false;

  /** Creates the provider; nothing is read until `initialize`. */
  constructor(options: BuiltinMemoryProviderOptions = {}) {
    super();
    this.#store = options.store ?? null;
    this.#config = options.config;
    this.#hermesHome = options.hermesHome;
  }

  /** Always `"builtin"`. */
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
   * freezing the system-prompt snapshot for the session (`hermesHome` used
   * when the constructor had none).
   */
  override async initialize(
    _sessionId: string,
    options: InitializeOptions = {},
  ): Promise<void> {
    await this.#load(options, true);
  }

  /** Like {@linkcode BuiltinMemoryProvider.initialize}, but writes nothing (a missing folder stays missing). */
  override async initializeForInspection(
    _sessionId: string,
    options: InitializeOptions = {},
  ): Promise<void> {
    await this.#load(options, false);
  }

  async #load(options: InitializeOptions, create: boolean): Promise<void> {
    if (!this.#initialized && this.#store === null) {
      const home = this.#hermesHome ?? options.hermesHome;
      const config = this.#config ??
        await loadConfigOrEmpty(home, (why) =>
          log(
            "warn",
            `Built-in memory uses default limits: config could not be read: ${why}`,
          ));
      const store = MemoryStore.fromConfig(config, { hermesHome: home });
      const enabled = store.isTargetEnabled("memory") ||
        store.isTargetEnabled("user");
      this.#store = enabled ? store : null;
    }
    this.#initialized = true;
    await this.#store?.loadFromDisk({ create });
  }

  /** No provider tools: `memory` is a host core tool ({@linkcode BuiltinMemoryProvider.memoryToolSchema}). */
  override getToolSchemas(): ToolSchema[] {
    return [];
  }

  /** The frozen snapshot: the MEMORY then the USER PROFILE block, each when enabled and not empty. */
  override systemPromptBlock(): string {
    const store = this.#store;
    if (store === null) return "";
    const memory = store.isTargetEnabled("memory")
      ? store.formatForSystemPrompt("memory")
      : "";
    const user = store.isTargetEnabled("user")
      ? store.formatForSystemPrompt("user")
      : "";
    return memory !== "" && user !== ""
      ? `${memory}\n\n${user}`
      : memory || user;
  }

  /** Re-reads both files and refreshes the frozen snapshot (e.g. after compression). */
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

  /** Runs a `memory` tool call against this session's store (`options`: how to get approval). */
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

  /** Refreshes the snapshot on `reset` or after compression; other switches keep it. */
  override async onSessionSwitch(
    _newSessionId: string,
    options: SessionSwitchOptions = {},
  ): Promise<void> {
    if (options.reset === true || options.reason === "compression") {
      await this.reloadSnapshot();
    }
  }
}
