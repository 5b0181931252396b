/**
 * {@linkcode SandboxedMemoryProvider}: a `MemoryProvider` whose real
 * implementation runs in a permission-confined worker.
 *
 * Methods cross the worker boundary by structured clone, in one of two
 * ways:
 *
 * - **Calls** (everything whose result or failure the caller needs:
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
 *   logged on the host as the memory manager would have logged it
 *   (`Memory provider '<name>' <hook> failed: <error>`, at the manager's
 *   level for that hook); a cast still running after `castTimeoutMs` is
 *   abandoned in the worker (and logged the same way) so the next message
 *   can start. {@linkcode SandboxedMemoryProvider.drain} waits until every
 *   cast posted before it has run; `shutdown()` drains first.
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
 * busy loop) is terminated and every later call rejects at once;
 * `shutdown()` ends the worker. A denied permission surfaces as a
 * {@linkcode ProviderPermissionError} that says which grant to add and
 * where.
 *
 * @module
 */

import { join } from "node:path";
import { getConfigPath } from "../config/config.ts";
import { getHermesHomeOverride } from "../profile/hermes_home.ts";
import { log, type LogLevel } from "../core/log.ts";
import { redactText } from "../core/redact.ts";
import {
  type ChatMessage,
  type ConfigField,
  type DelegationOptions,
  type DrainResult,
  type HermesConfig,
  type InitializeOptions,
  type MemoryEvictOptions,
  MemoryProvider,
  type MemoryTarget,
  type MemoryWriteAction,
  type MemoryWriteMetadata,
  type PreCompressOptions,
  type PrefetchOptions,
  type RecallStatus,
  type SessionSwitchOptions,
  type SyncTurnOptions,
  type ToolCallOptions,
  type ToolSchema,
  type TurnStartOptions,
} from "../core/memory_provider.ts";
import type { SkillRegistration } from "../core/plugin_context.ts";
import {
  type ProviderGrant,
  type SandboxTarget,
  workerPermissions,
} from "./grant.ts";
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
  WorkerRpc,
} from "./worker_rpc.ts";
import { errorText } from "../_util/error_text.ts";

/** Options of {@linkcode SandboxedMemoryProvider.start}. */
export interface SandboxStartOptions {
  /** The grant the worker runs with (from `grantForCandidate`). */
  grant: ProviderGrant;
  /**
   * Called for each skill the provider registers in `register(ctx)`.
   *
   * @param skill The registration, not yet validated.
   */
  onSkill?: (skill: SkillRegistration) => void;
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
   * How long the worker lets one cast (a one-way hook such as `syncTurn`)
   * run before it abandons it, logs it as failed and starts the next
   * message.
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

/** A sandboxed provider was denied something its grant does not cover. */
export class ProviderPermissionError extends Error {
  /** The provider's name. */
  readonly provider: string;
  /** `read`, `write`, `env`, `net`, `run`, `ffi`, `sys`, `import` or `all`. */
  readonly permission: string;
  /** The path, variable or host, when Deno named one. */
  readonly target: string | undefined;
  /** Deno's own message. */
  readonly denoMessage: string;

  /**
   * Creates the error.
   *
   * @param provider The provider's name.
   * @param permission The permission kind.
   * @param target What was asked for.
   * @param message The full message.
   * @param denoMessage Deno's own message.
   */
  constructor(
    provider: string,
    permission: string,
    target: string | undefined,
    message: string,
    denoMessage: string,
  ) {
    super(message);
    this.name = "ProviderPermissionError";
    this.provider = provider;
    this.permission = permission;
    this.target = target;
    this.denoMessage = denoMessage;
  }
}

const DENIAL_REGEXP = /Requires (\w+) access(?: to "?([^",]*)"?)?/;

/**
 * Explains a Deno permission denial in terms of the provider's grant:
 * which file and key to add it to (or why it can never be granted).
 *
 * @param provider The provider's name.
 * @param grant Its grant (home and config location).
 * @param manifestPath Its `plugin.yaml`, or `undefined` for packages.
 * @param error The error from the worker.
 * @returns A {@linkcode ProviderPermissionError}, or `error` unchanged when
 * it is not a denial.
 *
 * @example
 * ```ts
 * import { explainDenial } from "@hermes/memory";
 * import assert from "node:assert/strict";
 * const denial = new Error('Requires net access to "evil.example:443", run again with the --allow-net flag');
 * denial.name = "NotCapable";
 * const grant = { provider: "notes", hermesHome: "/h", read: [], write: [], env: [], net: [], import: [], npm: false };
 * const explained = explainDenial("notes", grant, "/h/plugins/notes/plugin.yaml", denial);
 * assert.match(explained.message, /may not connect to evil.example:443/);
 * ```
 */
export function explainDenial(
  provider: string,
  grant: ProviderGrant,
  manifestPath: string | undefined,
  error: Error,
): Error {
  const match = DENIAL_REGEXP.exec(error.message);
  if (match === null) return error;
  const kind = match[1] ?? "";
  const target = match[2] !== undefined && match[2] !== ""
    ? match[2]
    : undefined;
  const config = getConfigPath(grant.hermesHome);
  const declare = (key: string): string =>
    manifestPath !== undefined
      ? `declare it under permissions.${key} in ${manifestPath}, or grant it under memory.permissions.${provider}.${key} in ${config}`
      : `grant it under memory.permissions.${provider}.${key} in ${config}`;
  let message: string;
  switch (kind) {
    case "read":
    case "all":
      message = `Memory provider '${provider}' may not read ${
        target ?? "that path"
      }: ${declare("read")}`;
      break;
    case "write":
      message = `Memory provider '${provider}' may not write ${
        target ?? "that path"
      }: providers may write only inside HERMES_HOME (${grant.hermesHome})`;
      break;
    case "env":
      message = target === undefined
        ? `Memory provider '${provider}' may not list the environment: read the variables it declares under permissions.env one at a time, with getSecret()`
        : `Memory provider '${provider}' may not read the environment variable ${target}: ${
          declare("env")
        }`;
      break;
    case "net":
      message = `Memory provider '${provider}' may not connect to ${
        target ?? "that host"
      }: ${declare("net")}`;
      break;
    case "run":
      message = `Memory provider '${provider}' may not run programs${
        target ? ` (${target})` : ""
      }: memory providers never get run access`;
      break;
    case "ffi":
      message = `Memory provider '${provider}' may not load native libraries${
        target ? ` (${target})` : ""
      }: memory providers never get ffi access`;
      break;
    case "sys":
      message = `Memory provider '${provider}' may not read system information${
        target ? ` (${target})` : ""
      }: memory providers never get sys access`;
      break;
    case "import":
      message = `Memory provider '${provider}' may not import remote modules${
        target ? ` from ${target}` : ""
      }: list the provider under memory.packages in ${config} or vendor the module into its directory`;
      break;
    default:
      return error;
  }
  return new ProviderPermissionError(
    provider,
    kind,
    target,
    message,
    error.message,
  );
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

/** The hooks posted one-way, and the level the manager logs their failures at. */
const CAST_FAILURE_LEVEL: Readonly<Record<string, LogLevel>> = {
  syncTurn: "warn",
  queuePrefetch: "debug",
  onTurnStart: "debug",
  onMemoryWrite: "debug",
  onMemoryEvict: "debug",
  onDelegation: "debug",
  onSessionEnd: "warn",
};

/** Hooks whose failure the manager logs with the stack. */
const CAST_FAILURE_STACK = new Set(["onSessionEnd"]);

const POSTED: Promise<void> = Promise.resolve();

const WORKER_URL = new URL("./worker_bootstrap.ts", import.meta.url);

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

  /** The provider's checkpoint API version, read at load. */
  override readonly preCompressCheckpointApiVersion: number;

  /** Use {@linkcode SandboxedMemoryProvider.start}. */
  private constructor(state: SandboxState) {
    super();
    this.#state = state;
    this.#schemas = state.description.toolSchemas as ToolSchema[] | null;
    this.preCompressCheckpointApiVersion = state.description.apiVersion;
    const self = this as unknown as Record<string, unknown>;
    if (state.description.optional.includes("postSetup")) {
      self.postSetup = (hermesHome: string, config: HermesConfig) =>
        this.#call("postSetup", [hermesHome, config]);
    }
    if (state.description.optional.includes("getStatusConfig")) {
      self.getStatusConfig = (providerConfig: Record<string, unknown>) =>
        this.#call("getStatusConfig", [providerConfig]);
    }
  }

  /**
   * Starts a worker with the grant's permissions, loads the provider in it
   * and returns the host-side proxy.
   *
   * @param candidate The provider (from discovery).
   * @param options Grant, skill callback and timeouts.
   * @returns The proxy, or `null` when the module offers no provider.
   * @throws {Error} When the worker cannot start or the module fails to
   * load (a denial is a {@linkcode ProviderPermissionError}).
   */
  static async start(
    candidate: SandboxTarget,
    options: SandboxStartOptions,
  ): Promise<SandboxedMemoryProvider | null> {
    const grant = options.grant;
    const manifestPath = candidate.dir !== undefined
      ? join(candidate.dir, "plugin.yaml")
      : undefined;
    const callbacks = new Map<string, (...args: unknown[]) => unknown>();
    // Set once loaded; cast failures can only arrive after that.
    const loaded: { proxy?: SandboxedMemoryProvider } = {};
    // A worker replaced because it never started stops quietly.
    let replacing = false;
    const spawn = (): WorkerRpc => {
      const worker = new Worker(WORKER_URL, {
        type: "module",
        name: `memory-provider-${candidate.name}`,
        deno: { permissions: workerPermissions(grant) },
      });
      return new WorkerRpc(worker, {
        provider: candidate.name,
        unresponsiveAfterMs: options.unresponsiveAfterMs,
        onEvent: (message) => {
          if (message.t === "castFailed") {
            const proxy = loaded.proxy;
            if (proxy) proxy.#logCastFailure(message.method, message.error);
          } else if (message.t === "log") {
            log(message.level as LogLevel, message.message);
          } else if (message.t === "skill") {
            options.onSkill?.(message.skill);
          } else if (message.t === "callback") {
            try {
              callbacks.get(message.name)?.(...message.args);
            } catch (error) {
              log(
                "debug",
                `Memory provider '${candidate.name}' callback ${message.name} failed: ${
                  errorText(error)
                }`,
              );
            }
          }
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
    let rpc = spawn();
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
        log(
          "debug",
          `Memory provider '${candidate.name}': its sandbox worker did not start within ${startTimeoutMs} ms; starting a new one`,
        );
        rpc.terminate("it did not start");
        replacing = false;
        rpc = spawn();
        await rpc.ready(
          Math.max(1, loadTimeoutMs - (Date.now() - startedAt)),
        );
      } finally {
        replacing = false;
      }
      description = await rpc.request({
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
      }, { timeoutMs: loadTimeoutMs, label: "load" }) as
        | ProviderDescription
        | null;
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
    return POSTED;
  }

  /** Logs a failed cast exactly as the memory manager logs that hook. */
  #logCastFailure(method: string, serialized: SerializedError): void {
    const error = reviveError(serialized);
    const explained = this.#explain(error) as Error;
    let message = `Memory provider '${this.name}' ${method} failed: ${
      redactText(explained.message)
    }`;
    if (CAST_FAILURE_STACK.has(method) && error.stack) {
      message += `\n${redactText(error.stack)}`;
    }
    log(CAST_FAILURE_LEVEL[method] ?? "warn", message);
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
   * drain (if any) reported it durable; `false` on timeout or when the
   * worker is gone (what it had not run yet is lost).
   *
   * @example Waiting for the turn's writes
   * ```ts ignore
   * await provider.syncTurn("the kite is red", "noted", { sessionId: "s1" });
   * assert.equal((await provider.drain(5000)).drained, true); // the write has run
   * ```
   */
  override async drain(timeoutMs?: number): Promise<DrainResult> {
    const state = this.#state;
    if (state.rpc.stopped !== undefined) return { drained: false };
    const started = performance.now();
    try {
      await state.rpc.request({ t: "drain" }, {
        timeoutMs: timeoutMs ?? Infinity,
        label: "drain",
      });
    } catch (error) {
      log(
        "debug",
        `Memory provider '${this.name}' drain failed: ${errorText(error)}`,
      );
      return { drained: false };
    }
    if (!state.description.optional.includes("drain")) return { drained: true };
    const left = timeoutMs === undefined
      ? state.callTimeoutMs
      : Math.max(1, timeoutMs - (performance.now() - started));
    try {
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
   * The provider's hint when unavailable.
   *
   * @returns The hint.
   */
  override unavailableReason(): Promise<string> {
    return this.#call("unavailableReason", []);
  }

  /**
   * Static system-prompt text.
   *
   * @returns The block.
   */
  override systemPromptBlock(): Promise<string> {
    return this.#call("systemPromptBlock", []);
  }

  /**
   * Recalled context for the coming model call.
   *
   * @param query The user's message.
   * @param options The session.
   * @returns The context.
   */
  override prefetch(query: string, options: PrefetchOptions): Promise<string> {
    return this.#call("prefetch", [query, options]);
  }

  /**
   * Warms the next prefetch.
   * Posted one-way: resolves once posted; the worker runs it in order
   * before any later call, and a failure is logged on the host.
   *
   * @param query The user's message.
   * @param options The session.
   */
  override queuePrefetch(
    query: string,
    options: PrefetchOptions,
  ): Promise<void> {
    return this.#cast("queuePrefetch", [query, options]);
  }

  /**
   * Describes the last prefetch.
   *
   * @returns The status, or `null`.
   */
  override recallStatus(): Promise<RecallStatus | null> {
    return this.#call("recallStatus", []);
  }

  /**
   * Records a completed turn.
   * Posted one-way: resolves once posted; the worker runs it in order
   * before any later call, and a failure is logged on the host.
   *
   * @param userContent The user's message.
   * @param assistantContent The reply.
   * @param options Session, transcript, author.
   */
  override syncTurn(
    userContent: string,
    assistantContent: string,
    options: SyncTurnOptions,
  ): Promise<void> {
    return this.#cast("syncTurn", [userContent, assistantContent, options]);
  }

  /**
   * Runs one of the provider's tools.
   *
   * @param toolName The tool.
   * @param args The model's arguments.
   * @param options Call context.
   * @returns A JSON string.
   */
  override handleToolCall(
    toolName: string,
    args: Record<string, unknown>,
    options: ToolCallOptions,
  ): Promise<string> {
    return this.#call("handleToolCall", [toolName, args, options]);
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

  /**
   * Start-of-turn hook.
   * Posted one-way: resolves once posted; the worker runs it in order
   * before any later call, and a failure is logged on the host.
   *
   * @param turnNumber 1-based.
   * @param message The user's message.
   * @param options Turn details.
   */
  override onTurnStart(
    turnNumber: number,
    message: string,
    options: TurnStartOptions,
  ): Promise<void> {
    return this.#cast("onTurnStart", [turnNumber, message, options]);
  }

  /**
   * The provider's identity signature.
   *
   * @returns The signature.
   */
  override identitySignature(): Promise<Record<string, unknown>> {
    return this.#call("identitySignature", []);
  }

  /**
   * Session-end hook.
   * Posted one-way: resolves once posted; the worker runs it in order
   * before any later call, and a failure is logged on the host.
   *
   * @param messages The transcript.
   */
  override onSessionEnd(messages: ChatMessage[]): Promise<void> {
    return this.#cast("onSessionEnd", [messages]);
  }

  /**
   * Session-switch hook.
   *
   * @param newSessionId The new session.
   * @param options Parent, reset, rewound, reason.
   * @returns `false` on failure.
   */
  override onSessionSwitch(
    newSessionId: string,
    options: SessionSwitchOptions,
  ): Promise<void | boolean> {
    return this.#call("onSessionSwitch", [newSessionId, options]);
  }

  /**
   * Pre-compress hook.
   *
   * @param messages Transcript or evidence.
   * @param options Whether a checkpoint is required.
   * @returns Text for the summary prompt.
   */
  override onPreCompress(
    messages: ChatMessage[],
    options: PreCompressOptions,
  ): Promise<string> {
    return this.#call("onPreCompress", [messages, options]);
  }

  /**
   * Delegation hook.
   * Posted one-way: resolves once posted; the worker runs it in order
   * before any later call, and a failure is logged on the host.
   *
   * @param task The task.
   * @param result The result.
   * @param options The child session.
   */
  override onDelegation(
    task: string,
    result: string,
    options: DelegationOptions,
  ): Promise<void> {
    return this.#cast("onDelegation", [task, result, options]);
  }

  /**
   * The setup schema.
   *
   * @returns The fields.
   */
  override getConfigSchema(): Promise<ConfigField[]> {
    return this.#call("getConfigSchema", []);
  }

  /**
   * Stores non-secret setup values.
   *
   * @param values The values.
   * @param hermesHome The profile home.
   */
  override saveConfig(
    values: Record<string, unknown>,
    hermesHome: string,
  ): Promise<void> {
    return this.#call("saveConfig", [values, hermesHome]);
  }

  /**
   * Mirrors a built-in memory write.
   * Posted one-way: resolves once posted; the worker runs it in order
   * before any later call, and a failure is logged on the host.
   *
   * @param action The action.
   * @param target The store.
   * @param content The text.
   * @param metadata Provenance.
   */
  override onMemoryWrite(
    action: MemoryWriteAction,
    target: MemoryTarget,
    content: string,
    metadata?: MemoryWriteMetadata,
  ): Promise<void> {
    return this.#cast("onMemoryWrite", [action, target, content, metadata]);
  }

  /**
   * Eviction hook.
   * Posted one-way: resolves once posted; the worker runs it in order
   * before any later call, and a failure is logged on the host.
   *
   * @param content The dropped text.
   * @param target The store.
   * @param options Metadata.
   */
  override onMemoryEvict(
    content: string,
    target: MemoryTarget,
    options: MemoryEvictOptions,
  ): Promise<void> {
    return this.#cast("onMemoryEvict", [content, target, options]);
  }

  /**
   * Paths outside `HERMES_HOME` to back up.
   *
   * @returns Absolute paths.
   */
  override backupPaths(): Promise<string[]> {
    return this.#call("backupPaths", []);
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
