/**
 * {@linkcode SandboxedMemoryProvider}: a `MemoryProvider` whose real
 * implementation runs in a permission-confined worker.
 *
 * Its methods are built from the hook table (`PROVIDER_HOOKS`) and cross
 * the worker boundary by structured clone, in one of two ways:
 *
 * - **Calls** (every hook whose result or failure the caller needs:
 *   `prefetch`, `systemPromptBlock`, `handleToolCall`, `onPreCompress`,
 *   `onSessionSwitch`, `initialize`, `shutdown`, …) are numbered requests
 *   answered by the worker; they reject after `callTimeoutMs`.
 * - **Casts** (the void hooks `syncTurn`, `queuePrefetch`, `onTurnStart`,
 *   `onMemoryWrite`, `onMemoryEvict`, `onDelegation`, `onSessionEnd`) are
 *   posted one-way: the returned promise resolves as soon as the message is
 *   posted (it rejects only when the worker is already gone or the
 *   arguments cannot be cloned). The worker runs casts one at a time in
 *   arrival order, and every later call starts only after them, so a
 *   `prefetch` sees what an earlier `syncTurn` wrote. A cast that throws is
 *   logged on the host as the memory manager would have logged it (the
 *   hook table's level and label); a cast still running after
 *   `castTimeoutMs` is abandoned in the worker (and logged the same way) so
 *   the next message can start. {@linkcode SandboxedMemoryProvider.drain}
 *   waits until every cast posted before it has run; `shutdown()` drains
 *   first.
 *
 * With each call and cast go the profile home (the caller's
 * `withHermesHome` override, else the home the provider was loaded for)
 * and the caller's secret scope limited to the environment names the
 * provider is granted, both captured when it is posted; the worker
 * re-installs both around it. `name` and the tool schemas are fetched once
 * at load (and the schemas again after `initialize`), so `name` stays
 * synchronous.
 *
 * A worker that stops answering pings while a call or drain is pending (a
 * busy loop), or that sends anything outside the protocol, is terminated
 * with one warning and every later call rejects at once; `shutdown()` ends
 * the worker. A denied permission surfaces as a
 * {@linkcode ProviderPermissionError} that says which grant to add and
 * where, and the first denial of each target is logged once as a warning
 * even when the provider swallows it.
 *
 * @module
 */

import { join } from "node:path";
import { syncDirectory } from "../io/atomic_write.ts";
import { getHermesHomeOverride } from "../profile/hermes_home.ts";
import { log } from "../core/log.ts";
import { redactText } from "../core/redact.ts";
import {
  type DrainResult,
  type HermesConfig,
  type InitializeOptions,
  MemoryProvider,
  type ToolSchema,
} from "../core/memory_provider.ts";
import type { SkillRegistration } from "../core/plugin_context.ts";
import {
  PROVIDER_HOOK_NAMES,
  PROVIDER_HOOKS,
  type ProviderHookName,
} from "../core/provider_hooks.ts";
import {
  type ProviderGrant,
  type SandboxTarget,
  workerPermissions,
} from "./grant.ts";
import { explainDenial, ProviderPermissionError } from "./denial.ts";
import { scanProviderSources } from "./source_scan.ts";
import {
  currentSecretScope,
  isMultiplexActive,
} from "../profile/secret_scope.ts";
import {
  type CallbackMarker,
  type CallContext,
  type ProviderDescription,
  reviveError,
  type SerializedError,
  type WorkerMessage,
} from "./worker_protocol.ts";
import { WorkerRpc } from "./worker_rpc.ts";
import { errorText } from "../_util/error_text.ts";

export { explainDenial, ProviderPermissionError };

/** Which worker entry a provider gets. */
export type SandboxFramework = "provider" | "full";

/** Options of {@linkcode SandboxedMemoryProvider.start}. */
export interface SandboxStartOptions {
  /** The grant the worker runs with (from `grantForCandidate`). */
  grant: ProviderGrant;
  /**
   * The provider's own sections of `config.yaml`, handed to it as
   * `ctx.hermesConfig`.
   */
  config?: HermesConfig;
  /**
   * What the worker preloads: `provider` (`@hermes/memory/provider`, the
   * fast default) or `full` (the whole framework, for providers that import
   * `@hermes/memory`).
   *
   * @default {`full` when the provider's own files import `@hermes/memory`, else `provider`}
   */
  framework?: SandboxFramework;
  /**
   * Called for each skill the provider registers in `register(ctx)`.
   *
   * @param skill The registration, not yet validated.
   */
  onSkill?: (skill: SkillRegistration) => void;
  /**
   * Create the grant's data folder when it is missing (`false` for loads
   * that only inspect the provider: they write nothing).
   *
   * @default {true}
   */
  createDataDir?: boolean;
  /**
   * How long loading (worker start, import, `register`) may take.
   *
   * @default {30000}
   */
  loadTimeoutMs?: number;
  /**
   * How long the first worker may take to start listening before it is
   * replaced by a second one (Deno 2.9 occasionally never starts a worker,
   * for example the first one of a `deno test --parallel` thread; a second
   * one starts). The second worker gets the rest of `loadTimeoutMs`.
   *
   * @default {5000}
   */
  startTimeoutMs?: number;
  /**
   * How long one call may take before it rejects (including the wait for
   * casts posted before it).
   *
   * @default {30000}
   */
  callTimeoutMs?: number;
  /**
   * How long the worker lets one cast run before it abandons it, logs it as
   * failed and starts the next message.
   *
   * @default {callTimeoutMs}
   */
  castTimeoutMs?: number;
  /**
   * How long the worker may leave a ping unanswered (while calls are
   * pending) before it is declared stuck and terminated.
   *
   * @default {5000}
   */
  unresponsiveAfterMs?: number;
  /**
   * How long `shutdown()` waits, in all, for the casts still queued in the
   * worker and then the provider's own `shutdown`, before the worker is
   * terminated anyway.
   *
   * @default {5000}
   */
  shutdownTimeoutMs?: number;
}

interface SandboxState {
  rpc: WorkerRpc;
  description: ProviderDescription;
  candidate: SandboxTarget;
  grant: ProviderGrant;
  manifestPath: string | undefined;
  callbacks: Map<string, (...args: unknown[]) => unknown>;
  callTimeoutMs: number;
  shutdownTimeoutMs: number;
}

const POSTED: Promise<void> = Promise.resolve();

const WORKER_URLS: Record<SandboxFramework, URL> = {
  provider: new URL("../provider/worker_bootstrap.ts", import.meta.url),
  full: new URL("../provider/worker_bootstrap_full.ts", import.meta.url),
};

/** Hooks the class defines itself; every other hook is forwarded as the table says. */
const OWN_HOOKS: ReadonlySet<ProviderHookName> = new Set([
  "isAvailable",
  "initialize",
  "initializeForInspection",
  "getToolSchemas",
  "shutdown",
  "drain",
]);

/** Creates the data directory a grant names (mode 0700), refusing a symlink. */
async function prepareDataDir(
  grant: ProviderGrant,
  create: boolean,
): Promise<void> {
  const dir = grant.dataDir;
  if (dir === undefined) return;
  try {
    const info = await Deno.lstat(dir);
    if (info.isSymlink) {
      throw new Error(
        `its data directory ${dir} is a symlink, which would widen its sandbox: replace it with a directory`,
      );
    }
    if (!info.isDirectory) {
      throw new Error(
        `its data directory ${dir} exists and is not a directory: move that file away`,
      );
    }
  } catch (error) {
    if (!(error instanceof Deno.errors.NotFound)) throw error;
    if (!create) return;
    await Deno.mkdir(dir, { recursive: true, mode: 0o700 });
    // Make the new entry durable: the provider cannot sync the profile home.
    await syncDirectory(join(dir, ".."));
  }
}

/**
 * A memory provider running in a permission-confined worker; the host
 * sees an ordinary {@linkcode MemoryProvider}.
 *
 * @example Loading a provider into its sandbox
 * ```ts ignore
 * import { loadMemoryProvider } from "@hermes/memory";
 * const provider = await loadMemoryProvider("notes"); // a SandboxedMemoryProvider
 * console.log(provider?.name, await provider?.isAvailable());
 * await provider?.shutdown();
 * ```
 */
export class SandboxedMemoryProvider extends MemoryProvider {
  #state: SandboxState;
  #schemas: ToolSchema[] | null;
  #shutdown: Promise<void> | undefined;
  #denials = new Set<string>();
  /** Casts posted that no drain has seen finish yet. */
  #unconfirmed = 0;

  /** The provider's checkpoint API version, read at load. */
  override readonly preCompressCheckpointApiVersion: number;

  static {
    // One forwarding method per hook of the table: a request for a call
    // hook, a one-way post for a cast hook.
    for (const name of PROVIDER_HOOK_NAMES) {
      const spec = PROVIDER_HOOKS[name];
      if (OWN_HOOKS.has(name) || spec.optional) continue;
      const forward = spec.transport === "cast"
        ? function (this: SandboxedMemoryProvider, ...args: unknown[]) {
          return this.#cast(name, args);
        }
        : function (this: SandboxedMemoryProvider, ...args: unknown[]) {
          return this.#call(name, args);
        };
      Object.defineProperty(forward, "name", { value: name });
      Object.defineProperty(this.prototype, name, {
        value: forward,
        writable: true,
        configurable: true,
      });
    }
  }

  /** Use {@linkcode SandboxedMemoryProvider.start}. */
  private constructor(state: SandboxState) {
    super();
    this.#state = state;
    this.#schemas = state.description.toolSchemas as ToolSchema[] | null;
    this.preCompressCheckpointApiVersion = state.description.apiVersion;
    const self = this as unknown as Record<string, unknown>;
    for (const name of state.description.optional) {
      if (
        name !== "drain" && Object.hasOwn(PROVIDER_HOOKS, name) &&
        PROVIDER_HOOKS[name as ProviderHookName].optional
      ) {
        self[name] = (...args: unknown[]) => this.#call(name, args);
      }
    }
  }

  /**
   * Starts a worker with the grant's permissions (after creating the
   * grant's data directory), loads the provider in it and returns the
   * host-side proxy.
   *
   * @param candidate The provider (from discovery).
   * @param options Grant, config, skill callback and timeouts.
   * @returns The proxy, or `null` when the module offers no provider.
   * @throws {Error} When the worker cannot start or the module fails to
   * load (a denial is a {@linkcode ProviderPermissionError}).
   */
  static async start(
    candidate: SandboxTarget,
    options: SandboxStartOptions,
  ): Promise<SandboxedMemoryProvider | null> {
    const grant = options.grant;
    const manifestPath = candidate.dir !== undefined &&
        candidate.source !== "bundled"
      ? join(candidate.dir, "plugin.yaml")
      : undefined;
    await prepareDataDir(grant, options.createDataDir !== false);
    let framework = options.framework;
    if (framework === undefined) {
      const scan = candidate.dir !== undefined && candidate.source !== "bundled"
        ? await scanProviderSources(candidate.dir)
        : undefined;
      framework = scan?.fullFramework ? "full" : "provider";
    }
    const entry = WORKER_URLS[framework];
    const callbacks = new Map<string, (...args: unknown[]) => unknown>();
    // Set once loaded; cast failures can only arrive after that.
    const loaded: { proxy?: SandboxedMemoryProvider } = {};
    const early: WorkerMessage[] = [];
    // A worker replaced because it never started stops quietly.
    let replacing = false;
    const spawn = (): WorkerRpc => {
      const worker = new Worker(entry, {
        type: "module",
        name: `memory-provider-${candidate.name}`,
        deno: { permissions: workerPermissions(grant) },
      });
      return new WorkerRpc(worker, {
        provider: candidate.name,
        unresponsiveAfterMs: options.unresponsiveAfterMs,
        onEvent: (message) => {
          if (message.t === "skill") options.onSkill?.(message.skill);
          else if (message.t === "log") log(message.level, message.message);
          else if (loaded.proxy) loaded.proxy.#onEvent(message);
          else early.push(message);
        },
        onStopped: (reason) => {
          if (replacing) return;
          log("warn", `Memory provider '${candidate.name}' stopped: ${reason}`);
        },
      });
    };
    const loadTimeoutMs = options.loadTimeoutMs ?? 30_000;
    const callTimeoutMs = options.callTimeoutMs ?? 30_000;
    const startTimeoutMs = Math.min(
      options.startTimeoutMs ?? 5000,
      loadTimeoutMs,
    );
    const startedAt = Date.now();
    const load = (rpc: WorkerRpc): Promise<unknown> =>
      rpc.request({
        t: "load",
        specifier: candidate.specifier,
        providerName: candidate.name,
        acceptInstances: candidate.source === "package",
        context: {
          hermesHome: grant.hermesHome,
          multiplex: isMultiplexActive(),
          scope: limitScope(grant),
        },
        castTimeoutMs: options.castTimeoutMs ?? callTimeoutMs,
        config: options.config ?? {},
      }, {
        timeoutMs: Math.max(1, loadTimeoutMs - (Date.now() - startedAt)),
        label: "load",
      });
    // The load request is posted at once: the worker reads it as soon as
    // its bootstrap listens, which saves a round trip.
    let rpc = spawn();
    let pending = load(rpc);
    let description: ProviderDescription | null;
    try {
      try {
        replacing = startTimeoutMs < loadTimeoutMs;
        await rpc.ready(startTimeoutMs);
      } catch (error) {
        // Only a worker that never started is replaced; a bootstrap that
        // failed would fail again.
        if (!replacing || !/did not start/.test(rpc.stopped ?? "")) {
          throw error;
        }
        pending.catch(() => {});
        log(
          "debug",
          `Memory provider '${candidate.name}': its sandbox worker did not start within ${startTimeoutMs} ms; starting a new one`,
        );
        rpc.terminate("it did not start");
        replacing = false;
        rpc = spawn();
        pending = load(rpc);
      } finally {
        replacing = false;
      }
      description = await pending as ProviderDescription | null;
    } catch (error) {
      rpc.terminate("its load failed");
      throw error instanceof Error
        ? explainDenial(candidate.name, grant, manifestPath, error)
        : error;
    }
    if (description === null) {
      rpc.terminate("it offers no provider");
      return null;
    }
    const proxy = new SandboxedMemoryProvider({
      rpc,
      description,
      candidate,
      grant,
      manifestPath,
      callbacks,
      callTimeoutMs,
      shutdownTimeoutMs: options.shutdownTimeoutMs ?? 5_000,
    });
    loaded.proxy = proxy;
    for (const message of early.splice(0)) proxy.#onEvent(message);
    return proxy;
  }

  /** The provider's name, as it reported it at load. */
  get name(): string {
    return this.#state.description.name;
  }

  /** The grant the worker runs with. */
  get grant(): ProviderGrant {
    return this.#state.grant;
  }

  /** Where the provider was found. */
  get candidate(): SandboxTarget {
    return this.#state.candidate;
  }

  /** Why the worker stopped, or `undefined` while it runs. */
  get stopped(): string | undefined {
    return this.#state.rpc.stopped;
  }

  /** A worker event after load: log line, cast failure, callback, denial. */
  #onEvent(message: WorkerMessage): void {
    const name = this.#state.candidate.name;
    switch (message.t) {
      case "castFailed":
        this.#logCastFailure(message.method, message.error);
        return;
      case "denied": {
        const explained = this.#explain(reviveError(message.error)) as Error;
        if (this.#denials.has(explained.message)) return;
        this.#denials.add(explained.message);
        log("warn", explained.message);
        return;
      }
      case "callback":
        try {
          this.#state.callbacks.get(message.name)?.(...message.args);
        } catch (error) {
          log(
            "debug",
            `Memory provider '${name}' callback ${message.name} failed: ${
              errorText(error)
            }`,
          );
        }
    }
  }

  /** The caller's home and (limited) secret scope, captured now. */
  #context(): CallContext {
    const grant = this.#state.grant;
    const context: CallContext = {
      hermesHome: getHermesHomeOverride() ?? grant.hermesHome,
      multiplex: isMultiplexActive(),
    };
    const scope = limitScope(grant);
    if (scope !== undefined) context.scope = scope;
    return context;
  }

  #explain(error: unknown): unknown {
    if (!(error instanceof Error)) return error;
    const state = this.#state;
    return explainDenial(
      state.candidate.name,
      state.grant,
      state.manifestPath,
      error,
    );
  }

  async #call(
    method: string,
    args: unknown[],
    timeoutMs: number = this.#state.callTimeoutMs,
  ): Promise<never> {
    try {
      return await this.#state.rpc.request(
        { t: "call", method, args, context: this.#context() },
        { timeoutMs, label: method },
      ) as never;
    } catch (error) {
      throw this.#explain(error);
    }
  }

  /**
   * Posts a void hook one-way. Resolves once posted; rejects only when it
   * cannot be posted (worker gone, arguments not cloneable).
   */
  #cast(method: string, args: unknown[]): Promise<void> {
    try {
      this.#state.rpc.cast({
        t: "cast",
        method,
        args,
        context: this.#context(),
      });
    } catch (error) {
      return Promise.reject(this.#explain(error));
    }
    this.#unconfirmed++;
    return POSTED;
  }

  /** Logs a failed cast exactly as the memory manager logs that hook. */
  #logCastFailure(method: string, serialized: SerializedError): void {
    const spec = Object.hasOwn(PROVIDER_HOOKS, method)
      ? PROVIDER_HOOKS[method as ProviderHookName]
      : undefined;
    const error = reviveError(serialized);
    const explained = this.#explain(error) as Error;
    let message = `Memory provider '${this.name}' ${
      spec?.label ?? method
    } failed: ${redactText(explained.message)}`;
    if (spec?.stack && error.stack) {
      message += `\n${redactText(error.stack)}`;
    }
    log(spec?.failureLevel ?? "warn", message);
  }

  /**
   * Waits until every cast posted before this call (`syncTurn`,
   * `queuePrefetch`, the other void hooks) has finished in the worker, or
   * was abandoned there after `castTimeoutMs`; then, when the provider
   * defines `drain()`, waits for it with the time left.
   *
   * @param timeoutMs How long to wait at most; without limit when omitted
   * (the worker's cast timeout and the busy-loop check still bound it).
   * @returns `drained: true` when everything ran and the provider's own
   * drain (if any) reported it durable; `false` on timeout, or when the
   * worker is gone with casts it may not have run (`pending` counts them)
   * or with a drain of its own that can no longer answer.
   *
   * @example Waiting for the turn's writes
   * ```ts ignore
   * await provider.syncTurn("the kite is red", "noted", { sessionId: "s1" });
   * assert.equal((await provider.drain(5000)).drained, true); // the write has run
   * ```
   */
  override async drain(timeoutMs?: number): Promise<DrainResult> {
    const state = this.#state;
    const ownDrain = state.description.optional.includes("drain");
    if (state.rpc.stopped !== undefined) {
      const pending = this.#unconfirmed;
      return pending === 0 && !ownDrain
        ? { drained: true, pending: 0 }
        : { drained: false, ...(pending > 0 ? { pending } : {}) };
    }
    const started = performance.now();
    const posted = this.#unconfirmed;
    try {
      await state.rpc.request({ t: "drain" }, {
        timeoutMs: timeoutMs ?? Infinity,
        label: "drain",
      });
      this.#unconfirmed -= posted;
      if (!ownDrain) return { drained: true };
      const left = timeoutMs === undefined
        ? state.callTimeoutMs
        : Math.max(1, timeoutMs - (performance.now() - started));
      return toDrainResult(
        await this.#call("drain", [timeoutMs ?? left], left),
      );
    } catch (error) {
      log(
        "debug",
        `Memory provider '${this.name}' drain failed: ${errorText(error)}`,
      );
      return { drained: false };
    }
  }

  /**
   * Whether the provider can run (no network by contract).
   *
   * @returns The provider's answer.
   */
  isAvailable(): Promise<boolean> {
    return this.#call("isAvailable", []);
  }

  /**
   * Initializes the provider; callbacks in `options` are called back on the
   * host. The tool schemas are fetched again afterwards.
   *
   * @param sessionId The session id.
   * @param options What the host knows.
   */
  async initialize(
    sessionId: string,
    options: InitializeOptions,
  ): Promise<void> {
    await this.#call("initialize", [sessionId, this.#marshal(options)]);
    await this.#refresh();
  }

  /**
   * Side-effect-free initialization for inspection.
   *
   * @param sessionId The session id.
   * @param options What the host knows.
   */
  override async initializeForInspection(
    sessionId: string,
    options: InitializeOptions,
  ): Promise<void> {
    await this.#call("initializeForInspection", [
      sessionId,
      this.#marshal(options),
    ]);
    await this.#refresh();
  }

  /**
   * The tool schemas (cached from load and `initialize`).
   *
   * @returns The schemas.
   */
  getToolSchemas(): ToolSchema[] | Promise<ToolSchema[]> {
    if (this.#schemas !== null) return structuredClone(this.#schemas);
    return this.#call("getToolSchemas", []);
  }

  async #refresh(): Promise<void> {
    try {
      const d = await this.#call("__describe", []) as ProviderDescription;
      this.#schemas = d.toolSchemas as ToolSchema[] | null;
    } catch {
      this.#schemas = null;
    }
  }

  #marshal(options: InitializeOptions): InitializeOptions {
    const out: Record<string, unknown> = {};
    for (const [key, value] of Object.entries(options ?? {})) {
      if (typeof value === "function") {
        this.#state.callbacks.set(
          key,
          value as (...args: unknown[]) => unknown,
        );
        out[key] = { __hermesCallback: key } satisfies CallbackMarker;
      } else {
        out[key] = value;
      }
    }
    return out as InitializeOptions;
  }

  /**
   * Drains the casts still queued in the worker, calls the provider's
   * `shutdown`, then terminates the worker; all of it bounded by
   * `shutdownTimeoutMs`. When the casts do not finish in time the
   * provider's `shutdown` is skipped (it would wait behind them) and a
   * warning says so. Safe to call twice; concurrent calls share one
   * shutdown.
   */
  override shutdown(): Promise<void> {
    this.#shutdown ??= this.#shutdownOnce();
    return this.#shutdown;
  }

  async #shutdownOnce(): Promise<void> {
    const state = this.#state;
    if (state.rpc.stopped !== undefined) return;
    const started = performance.now();
    try {
      if (!(await this.drain(state.shutdownTimeoutMs)).drained) {
        if (state.rpc.stopped === undefined) {
          log(
            "warn",
            `Memory provider '${this.name}' did not finish its queued hooks within ${state.shutdownTimeoutMs} ms; its worker is terminated without them`,
          );
        }
        return;
      }
      const left = state.shutdownTimeoutMs - (performance.now() - started);
      await this.#call("shutdown", [], Math.max(1, left));
    } catch (error) {
      log(
        "debug",
        `Memory provider '${this.name}' shutdown failed: ${errorText(error)}`,
      );
    } finally {
      state.rpc.terminate("it was shut down");
    }
  }

  /** Terminates the worker at once, without calling the provider. */
  terminate(): void {
    this.#state.rpc.terminate("it was terminated");
  }

  /** Shuts the provider down (for `await using`). */
  async [Symbol.asyncDispose](): Promise<void> {
    await this.shutdown();
  }
}

function limitScope(grant: ProviderGrant): Record<string, string> | undefined {
  const scope = currentSecretScope();
  if (scope === undefined) return undefined;
  const limited: Record<string, string> = {};
  for (const entry of grant.env) {
    if (Object.hasOwn(scope, entry.value)) {
      limited[entry.value] = scope[entry.value] as string;
    }
  }
  return limited;
}

/** A drain answer from the worker, checked (anything else counts as not drained). */
function toDrainResult(value: unknown): DrainResult {
  if (value === null || typeof value !== "object") return { drained: false };
  const { drained, pending } = value as Record<string, unknown>;
  const result: DrainResult = { drained: drained === true };
  if (
    typeof pending === "number" && Number.isInteger(pending) && pending >= 0
  ) {
    result.pending = pending;
  }
  return result;
}
