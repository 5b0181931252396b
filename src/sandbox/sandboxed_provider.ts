// `SandboxedMemoryProvider`, a provider run in its own sandbox under exactly
// its grant, and the process-wide cap on running sandboxes.

import { join } from "../_util/path.ts";
import { getHermesHomeOverride } from "../profile/hermes_home.ts";
import { log } from "../core/log.ts";
import { redactText } from "../core/redact.ts";
import {
  type DrainResult,
  type InitializeOptions,
  MemoryProvider,
  type ToolSchema,
} from "../core/memory_provider.ts";
import {
  PROVIDER_HOOK_NAMES,
  PROVIDER_HOOKS,
  type ProviderHookName,
} from "../core/provider_hooks.ts";
import type { ProviderGrant, SandboxTarget } from "./grant.ts";
import { type DenialReporter, denialReporter } from "./denial.ts";
import { scanProviderSources } from "./source_scan.ts";
import { isMultiplexActive } from "../profile/secret_scope.ts";
import {
  type Launched,
  limitScope,
  prepareDataDir,
  sandboxLauncher,
  type SandboxStartOptions,
} from "./sandbox_launch.ts";
import {
  type CallbackMarker,
  type CallContext,
  type ProviderDescription,
  reviveError,
  type SerializedError,
  serializeError,
  type WorkerMessage,
} from "./worker_protocol.ts";
import type { WorkerRpc } from "./worker_rpc.ts";
import { errorText } from "../_util/error_text.ts";

interface SandboxState {
  rpc: WorkerRpc;
  /** Starts the sandbox again (after a stop under the live cap). */
  launch: () => Promise<Launched>;
  description: ProviderDescription;
  candidate: SandboxTarget;
  grant: ProviderGrant;
  denials: DenialReporter;
  callbacks: Map<string, (...args: unknown[]) => unknown>;
  callTimeoutMs: number;
  shutdownTimeoutMs: number;
}

const POSTED: Promise<void> = Promise.resolve();

/** Running sandboxes, least recently used first. */
const LIVE = new Set<SandboxedMemoryProvider>();
let maxLive = Infinity;

/**
 * Caps the number of provider sandboxes running at once in this process
 * (a gateway serving many profiles): at the cap the least recently used
 * idle one is drained, shut down and stopped, and restarts as before on its
 * next call. Busy sandboxes are never stopped, so the cap may be passed.
 *
 * @param limit The most running sandboxes (`Infinity`: no cap).
 * @throws {RangeError} When `limit` is not a positive integer or `Infinity`.
 *
 * @category Plugins: discovery, loading, permissions
 */
export function setMaxLiveProviders(limit: number): void {
  if (!(limit === Infinity || (Number.isInteger(limit) && limit >= 1))) {
    throw new RangeError(
      `The live provider cap must be a whole number of at least 1 (or Infinity), not ${limit}`,
    );
  }
  maxLive = limit;
}

/** Marks a running sandbox most recently used. */
function markUsed(provider: SandboxedMemoryProvider): void {
  if (LIVE.delete(provider)) LIVE.add(provider);
}

/**
 * How many provider sandboxes run in this process now.
 *
 * @category Plugins: discovery, loading, permissions
 */
export function liveProviderCount(): number {
  return LIVE.size;
}

/** Hooks the class defines itself; every other hook is forwarded as the table says. */
const OWN_HOOKS: ReadonlySet<ProviderHookName> = new Set([
  "isAvailable",
  "initialize",
  "initializeForInspection",
  "getToolSchemas",
  "shutdown",
  "drain",
]);

/**
 * A memory provider running in a permission-confined worker; the host
 * sees an ordinary {@linkcode MemoryProvider}.
 *
 * @category Plugins: discovery, loading, permissions
 */
export class SandboxedMemoryProvider extends MemoryProvider {
  #state: SandboxState;
  #schemas: ToolSchema[] | null;
  #shutdown: Promise<void> | undefined;
  /** Casts posted that no drain has seen finish yet. */
  #unconfirmed = 0;
  /** Stopped under the live cap; starts again on the next call. */
  #suspended = false;
  #suspending: Promise<void> | undefined;
  #resuming: Promise<void> | undefined;
  /** Casts waiting for the sandbox to start again, in order. */
  #castChain: Promise<void> = POSTED;
  #queuedCasts = 0;
  /** The arguments of the last `initialize`, replayed after a restart. */
  #initialized: [string, string, InitializeOptions] | undefined;

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
   * Starts a worker with the grant's permissions (its data directory created
   * first), loads the provider in it and returns the host-side proxy.
   *
   * @returns The proxy, or `null` when the module offers no provider.
   * @throws {Error} When the worker cannot start or the module fails to
   * load (a denial is a {@linkcode ProviderPermissionError}).
   */
  static async start(
    candidate: SandboxTarget,
    options: SandboxStartOptions,
  ): Promise<SandboxedMemoryProvider | null> {
    const grant = options.grant;
    const denials = denialReporter(
      candidate.name,
      grant,
      candidate.dir !== undefined && candidate.source !== "bundled"
        ? join(candidate.dir, "plugin.yaml")
        : undefined,
    );
    await prepareDataDir(grant, options.createDataDir !== false);
    let framework = options.framework;
    if (framework === undefined) {
      const scan = candidate.dir !== undefined && candidate.source !== "bundled"
        ? await scanProviderSources(candidate.dir)
        : undefined;
      framework = scan?.fullFramework ? "full" : "provider";
    }
    const callbacks = new Map<string, (...args: unknown[]) => unknown>();
    // Set once loaded; cast failures can only arrive after that.
    const loaded: { proxy?: SandboxedMemoryProvider } = {};
    const early: WorkerMessage[] = [];
    const callTimeoutMs = options.callTimeoutMs ?? 30_000;
    const launch = sandboxLauncher(candidate, options, framework, {
      denials,
      event: (message) => {
        if (loaded.proxy) loaded.proxy.#onEvent(message);
        else early.push(message);
      },
      stopped: () => {
        if (loaded.proxy) LIVE.delete(loaded.proxy);
      },
    });
    await SandboxedMemoryProvider.#makeRoom(undefined);
    const { rpc, description } = await launch();
    if (description === null) return null;
    const proxy = new SandboxedMemoryProvider({
      rpc,
      description,
      candidate,
      grant,
      denials,
      callbacks,
      callTimeoutMs,
      shutdownTimeoutMs: options.shutdownTimeoutMs ?? 5_000,
      launch,
    });
    LIVE.add(proxy);
    loaded.proxy = proxy;
    for (const message of early.splice(0)) proxy.#onEvent(message);
    return proxy;
  }

  /** The provider's name, as it reported it at load. */
  get name(): string {
    return this.#state.description.name;
  }

  /** The sandbox process's id while it runs (`undefined` for a worker, or while paused). */
  get pid(): number | undefined {
    return this.#suspended ? undefined : this.#state.rpc.pid;
  }

  /** The grant the worker runs with. */
  get grant(): ProviderGrant {
    return this.#state.grant;
  }

  /** Where the provider was found. */
  get candidate(): SandboxTarget {
    return this.#state.candidate;
  }

  /** Why the sandbox stopped for good; `undefined` while it runs or is paused. */
  get stopped(): string | undefined {
    return this.#suspended ? undefined : this.#state.rpc.stopped;
  }

  /** Stops LRU idle sandboxes until one more may start. */
  static async #makeRoom(
    except: SandboxedMemoryProvider | undefined,
  ): Promise<void> {
    while (LIVE.size >= maxLive) {
      let victim: SandboxedMemoryProvider | undefined;
      for (const p of LIVE) {
        if (p !== except && p.#idle()) {
          victim = p;
          break;
        }
      }
      if (victim === undefined) return;
      await victim.#suspend();
    }
  }

  #idle(): boolean {
    return !this.#state.rpc.busy && this.#resuming === undefined &&
      this.#suspending === undefined && this.#queuedCasts === 0 &&
      this.#shutdown === undefined && !this.#suspended &&
      this.#state.rpc.stopped === undefined;
  }

  /** Drains, shuts the provider down and ends its sandbox, to resume later. */
  #suspend(): Promise<void> {
    this.#suspending ??= (async () => {
      LIVE.delete(this);
      const state = this.#state;
      const rpc = state.rpc;
      const timeoutMs = state.shutdownTimeoutMs;
      // Paused on behalf of another provider's call, maybe another
      // profile's: its own home, and nobody's secrets.
      const context: CallContext = {
        hermesHome: state.grant.hermesHome,
        multiplex: isMultiplexActive(),
      };
      const call = (method: string, args: unknown[]) =>
        rpc.request(
          { t: "call", method, args, context },
          { timeoutMs, label: method },
        );
      try {
        // Every cast posted so far has run; new ones wait for the restart.
        const posted = this.#unconfirmed;
        await rpc.request({ t: "drain" }, { timeoutMs, label: "drain" });
        this.#unconfirmed -= posted;
      } catch (error) {
        // Not drained: it keeps running rather than lose a write.
        log(
          "debug",
          `Memory provider '${this.name}' was not paused: ${errorText(error)}`,
        );
        if (rpc.stopped === undefined) LIVE.add(this);
        this.#suspending = undefined;
        return;
      }
      try {
        if (state.description.optional.includes("drain")) {
          await call("drain", [timeoutMs]);
        }
        await call("shutdown", []);
      } catch (error) {
        log(
          "debug",
          `Memory provider '${this.name}' pause failed: ${errorText(error)}`,
        );
      } finally {
        if (state.rpc.stopped === undefined) {
          state.rpc.terminate("it was paused under the live provider cap");
          this.#suspended = true;
        }
        this.#suspending = undefined;
      }
    })();
    return this.#suspending;
  }

  /** The running sandbox: started again first when it was paused. */
  async #live(): Promise<WorkerRpc> {
    if (this.#suspending !== undefined) await this.#suspending;
    if (this.#suspended) {
      this.#resuming ??= this.#resume().finally(() => {
        this.#resuming = undefined;
      });
      await this.#resuming;
    } else markUsed(this);
    return this.#state.rpc;
  }

  async #resume(): Promise<void> {
    await SandboxedMemoryProvider.#makeRoom(this);
    if (!this.#suspended) return;
    const { rpc, description } = await this.#state.launch();
    if (description === null) {
      throw new Error(
        `Memory provider '${this.name}' offered no provider when started again`,
      );
    }
    this.#state.rpc = rpc;
    this.#suspended = false;
    LIVE.add(this);
    if (this.#initialized !== undefined) {
      const [method, sessionId, options] = this.#initialized;
      await rpc.request({
        t: "call",
        method,
        args: [sessionId, options],
        context: this.#context(),
      }, { timeoutMs: this.#state.callTimeoutMs, label: method });
    }
  }

  /** A worker event after load: log line, cast failure, callback, denial. */
  #onEvent(message: WorkerMessage): void {
    const name = this.#state.candidate.name;
    switch (message.t) {
      case "castFailed":
        this.#logCastFailure(message.method, message.error);
        return;
      case "denied":
        this.#state.denials.report(message.error);
        return;
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

  async #call(
    method: string,
    args: unknown[],
    timeoutMs: number = this.#state.callTimeoutMs,
  ): Promise<never> {
    try {
      if (this.#queuedCasts > 0) await this.#castChain;
      const rpc = this.#suspended || this.#suspending !== undefined ||
          this.#resuming !== undefined
        ? await this.#live()
        : this.#touch();
      return await rpc.request(
        { t: "call", method, args, context: this.#context() },
        { timeoutMs, label: method },
      ) as never;
    } catch (error) {
      throw this.#state.denials.explain(error);
    }
  }

  /** Posts a void hook one-way; rejects only when it cannot be posted. */
  #cast(method: string, args: unknown[]): Promise<void> {
    const request = {
      t: "cast" as const,
      method,
      args,
      context: this.#context(),
    };
    if (
      this.#suspended || this.#suspending !== undefined ||
      this.#resuming !== undefined || this.#queuedCasts > 0
    ) {
      // Paused under the live cap: posted, in order, once it runs again.
      this.#queuedCasts++;
      this.#unconfirmed++;
      this.#castChain = this.#castChain.then(async () => {
        try {
          (await this.#live()).cast(request);
        } catch (error) {
          this.#unconfirmed--;
          this.#logCastFailure(
            method,
            serializeError(this.#state.denials.explain(error)),
          );
        } finally {
          this.#queuedCasts--;
        }
      });
      return POSTED;
    }
    try {
      this.#touch().cast(request);
    } catch (error) {
      return Promise.reject(this.#state.denials.explain(error));
    }
    this.#unconfirmed++;
    return POSTED;
  }

  /** The running sandbox, marked most recently used. */
  #touch(): WorkerRpc {
    markUsed(this);
    return this.#state.rpc;
  }

  /** Logs a failed cast exactly as the memory manager logs that hook. */
  #logCastFailure(method: string, serialized: SerializedError): void {
    const spec = Object.hasOwn(PROVIDER_HOOKS, method)
      ? PROVIDER_HOOKS[method as ProviderHookName]
      : undefined;
    const error = reviveError(serialized);
    const explained = this.#state.denials.explain(error) as Error;
    let message = `Memory provider '${this.name}' ${
      spec?.label ?? method
    } failed: ${redactText(explained.message)}`;
    if (spec?.stack && error.stack) {
      message += `\n${redactText(error.stack)}`;
    }
    log(spec?.failureLevel ?? "warn", message);
  }

  /**
   * Waits until every cast posted before this call has finished in the
   * worker (or was abandoned after `castTimeoutMs`), then for the
   * provider's own `drain()`, if any, with the time left.
   *
   * @param timeoutMs How long to wait at most; without limit when omitted.
   * @returns `drained: false` on timeout, or when the worker is gone with
   * casts it may not have run (`pending` counts them).
   */
  override async drain(timeoutMs?: number): Promise<DrainResult> {
    const state = this.#state;
    const ownDrain = state.description.optional.includes("drain");
    if (this.#queuedCasts > 0) await this.#castChain;
    if (this.#suspended && this.#queuedCasts === 0) {
      // Paused under the live cap: drained and shut down when paused.
      return { drained: true };
    }
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

  /** Whether the provider can run (no network by contract). */
  isAvailable(): Promise<boolean> {
    return this.#call("isAvailable", []);
  }

  /** Initializes the provider (callbacks run on the host), then refetches the tool schemas. */
  async initialize(
    sessionId: string,
    options: InitializeOptions,
  ): Promise<void> {
    const marshaled = this.#marshal(options);
    this.#initialized = ["initialize", sessionId, marshaled];
    await this.#call("initialize", [sessionId, marshaled]);
    await this.#refresh();
  }

  /** Side-effect-free initialization for inspection. */
  override async initializeForInspection(
    sessionId: string,
    options: InitializeOptions,
  ): Promise<void> {
    const marshaled = this.#marshal(options);
    this.#initialized = ["initializeForInspection", sessionId, marshaled];
    await this.#call("initializeForInspection", [sessionId, marshaled]);
    await this.#refresh();
  }

  /** The tool schemas (cached from load and `initialize`). */
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
   * Drains the worker's queued casts, calls the provider's `shutdown`
   * (skipped with a warning when the casts overrun: it would wait behind
   * them), then terminates the worker, within `shutdownTimeoutMs`.
   * Concurrent calls share one shutdown.
   */
  override shutdown(): Promise<void> {
    this.#shutdown ??= this.#shutdownOnce();
    return this.#shutdown;
  }

  async #shutdownOnce(): Promise<void> {
    const state = this.#state;
    if (this.#queuedCasts > 0) {
      try {
        await this.#castChain;
      } catch {
        // Logged per cast.
      }
    }
    if (this.#suspending !== undefined) await this.#suspending;
    if (this.#resuming !== undefined) {
      await this.#resuming.catch(() => {});
    }
    LIVE.delete(this);
    if (this.#suspended) {
      // Already drained and shut down when it was paused.
      this.#suspended = false;
      return;
    }
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
    LIVE.delete(this);
    this.#suspended = false;
    this.#state.rpc.terminate("it was terminated");
  }

  /** Shuts the provider down (for `await using`). */
  async [Symbol.asyncDispose](): Promise<void> {
    await this.shutdown();
  }
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
