/**
 * {@linkcode openMemory}: config, manager, built-in store and the configured
 * provider, assembled and initialized for one session.
 *
 * @module
 */

import { resolve } from "../_util/path.ts";
import { getConfigValue, loadConfig } from "../config/config.ts";
import type { InitializeOptions } from "../core/memory_provider.ts";
import { BuiltinMemoryProvider } from "../builtin/builtin_provider.ts";
import { MemoryManager } from "../manager/memory_manager.ts";
import { loadMemoryProvider } from "../plugins/provider_loader.ts";
import {
  getHermesHome,
  getProfileHome,
  missingProfile,
} from "../profile/hermes_home.ts";
import { withHermesHome } from "../profile/context_scope.ts";

/**
 * Options of {@linkcode openMemory}.
 *
 * @category Manager
 */
export interface OpenMemoryOptions {
  /** The session's id: pass the same id to the per-turn calls. */
  sessionId: string;
  /**
   * The profile to open: `default` (the root, `~/.hermes`) or the name of
   * one under `<root>/profiles/`, which must exist (`hermes --profile NAME
   * memory setup` creates one). Ignored when `hermesHome` is given.
   *
   * @default {the process's profile: `HERMES_HOME`, else `~/.hermes`}
   */
  profile?: string;
  /**
   * The profile's home directory itself.
   *
   * @default {the home of `profile`}
   */
  hermesHome?: string;
  /**
   * The external provider to run beside the built-in store: its name, or
   * `false` for the built-in store only.
   *
   * @default {`memory.provider` of the profile's `config.yaml`}
   */
  provider?: string | false;
  /**
   * What the agent knows about the session, passed to every provider's
   * `initialize()` (the profile's home is filled in).
   *
   * @default {{ platform: "cli" }}
   */
  initialize?: Omit<InitializeOptions, "hermesHome">;
}

/**
 * An opened memory session: what {@linkcode openMemory} returns. The
 * per-turn calls are those of {@linkcode MemoryManager}, on `manager`;
 * `await using` (or `close()`) ends the session.
 *
 * @category Manager
 */
export interface OpenedMemory extends AsyncDisposable {
  /** The initialized manager: the per-turn calls. */
  readonly manager: MemoryManager;
  /** The built-in `MEMORY.md` / `USER.md` store (the `memory` tool's). */
  readonly builtin: BuiltinMemoryProvider;
  /** The session's id. */
  readonly sessionId: string;
  /** The profile's home. */
  readonly hermesHome: string;
  /**
   * Runs the model's `memory` tool call on the built-in store and mirrors a
   * committed write to the external provider.
   *
   * @returns The tool's JSON result string, for the model.
   */
  memoryTool(args: Record<string, unknown>): Promise<string>;
  /** Ends the session: `manager.shutdownAll()` (queued writes drained within its budget). */
  close(): Promise<void>;
}

/**
 * Opens memory for one session of an agent: reads the profile's
 * `config.yaml`, registers the built-in store and the configured provider
 * (in its sandbox; one that fails to load is a warning, as in Hermes), and
 * initializes them. The module example of `@hermes/memory` shows it.
 *
 * @throws {HermesHomeUnknownError} When the profile's home cannot be told
 * (the process needs `--allow-env=HOME,HERMES_HOME`).
 * @throws {RangeError} When `profile` is not a plain profile name.
 * @throws {Error} When the named `profile` does not exist.
 * @throws {ConfigError} When the profile's `config.yaml` does not parse.
 *
 * @category Manager
 */
export async function openMemory(
  options: OpenMemoryOptions,
): Promise<OpenedMemory> {
  const hermesHome = resolve(
    options.hermesHome ??
      (options.profile !== undefined
        ? getProfileHome(options.profile)
        : getHermesHome()),
  );
  if (options.hermesHome === undefined && options.profile !== undefined) {
    // A typo never silently creates a profile.
    const missing = await missingProfile(options.profile, hermesHome);
    if (missing !== undefined) {
      throw new Error(`Cannot open memory: ${missing.problem}: ${missing.fix}`);
    }
  }
  const sessionId = options.sessionId;
  return await withHermesHome(hermesHome, async () => {
    const config = await loadConfig({ hermesHome });
    const manager = new MemoryManager({ config });
    const builtin = new BuiltinMemoryProvider({ config, hermesHome });
    await manager.addProvider(builtin);
    const configured = getConfigValue(config, "memory.provider");
    const name = options.provider ??
      (typeof configured === "string" ? configured.trim() : undefined);
    if (name) {
      const external = await loadMemoryProvider(name, { hermesHome, config });
      if (external !== null) await manager.addProvider(external);
    }
    await manager.initializeAll(sessionId, {
      platform: "cli",
      ...options.initialize,
      hermesHome,
    });
    const close = (): Promise<void> => manager.shutdownAll();
    return {
      manager,
      builtin,
      sessionId,
      hermesHome,
      async memoryTool(args: Record<string, unknown>): Promise<string> {
        const result = await builtin.handleMemoryTool(args);
        await manager.notifyMemoryToolWrite(result, args);
        return result;
      },
      close,
      [Symbol.asyncDispose]: close,
    };
  });
}
