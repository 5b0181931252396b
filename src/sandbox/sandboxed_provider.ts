// `SandboxedMemoryProvider`, a provider run in its own sandbox under exactly
// its grant and supervised by the host (restarted when its process ends, and
// handed what it had not made durable), and the process-wide cap on running
// sandboxes.

import { join } from "../_util/path.ts";
import { getHermesHomeOverride } from "../profile/hermes_home.ts";
import { log } from "../core/log.ts";
import {
  type DrainResult,
  type InitializeOptions,
  MemoryProvider,
  type ToolSchema,
} from "../core/memory_provider.ts";
import {
  logProviderHookFailure,
  PROVIDER_HOOK_NAMES,
  PROVIDER_HOOKS,
  type ProviderHookName,
  toDrainResult,
} from "../core/provider_hooks.ts";
import type { ProviderGrant, SandboxTarget } from "./grant.ts";
import type { SkillRegistration } from "../core/plugin_context.ts";
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
import { ProviderWorkerStoppedError, type WorkerRpc } from "./worker_rpc.ts";
import { KeptWrites } from "./kept_writes.ts";
import { type Held, HeldCasts } from "./held_casts.ts";
import { errorText } from "../_util/error_text.ts";
import { raceTimeout } from "../_util/race_timeout.ts";
import {
  markUsed,
  releaseSlot,
  slotChanged,
  type SlotHolder,
  takeSlot,
} from "./live_cap.ts";

export { liveProviderCount, setMaxLiveProviders } from "./live_cap.ts";

interface SandboxState {
  /** Its slot under the live cap (held while its process runs or starts). */
  slot: SlotHolder;
  /** Starts the sandbox and loads the provider (at the first call, after a pause or an end). */
  launch: () => Promise<Launched>;
  description: ProviderDescription;
  candidate: SandboxTarget;
  grant: ProviderGrant;
  denials: DenialReporter;
  callbacks: Map<string, (...args: unknown[]) => unknown>;
  callTimeoutMs: number;
  shutdownTimeoutMs: number;
}

/**
 * Failed starts in a row before the writes go to disk: with the backoff
 * about 3 s, so a start ended from outside (an OOM kill, a loaded machine's
 * slow start cut short) is retried, and one that can never start gives up.
 */
const MAX_RESTARTS = 5;
/** Ends of a running process in a row with no write confirmed in between (a write that kills it) before the same. */
const MAX_ENDS = 5;

/** After giving up, a call starts the provider again once this long has passed. */
const RETRY_AFTER_MS = 30_000;
/** The longest a paused process's slot waits for the process to exit after its kill. */
const EXIT_WAIT_MS = 2_000;
/** How soon after a write the host asks whether it is durable. */
const CONFIRM_DELAY_MS = 100;

const POSTED: Promise<void> = Promise.resolve();

/** What a provider's code offered at its first load, by code and settings: later loads start nothing. */
const DESCRIPTIONS = new Map<
  string,
  { description: ProviderDescription | null; skills: SkillRegistration[] }
>();

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
 * A memory provider running in a permission-confined sandbox process that
 * the host supervises; the host sees an ordinary {@linkcode MemoryProvider}.
 * The process starts at the first call; when it ends for any reason it is
 * started again and handed every accepted write it had not reported durable.
 *
 * @category Plugins: discovery, loading, permissions
 */
export class SandboxedMemoryProvider extends MemoryProvider {
  #state: SandboxState;
  #schemas: ToolSchema[] | null;
  /** The running sandbox, set once started and handed what was held. */
  #rpc: WorkerRpc | undefined;
  #starting: Promise<WorkerRpc> | undefined;
  #pausing: Promise<void> | undefined;
  #shutdown: Promise<void> | undefined;
  /** Why it stopped for good (shut down or terminated). */
  #closed: string | undefined;
  /** Why restarts were given up (writes then wait on disk), until `#retryAt`. */
  #gaveUp: string | undefined;
  #retryAt = 0;
  /** Failed starts in a row; ends since the last confirmed write. */
  #failures = 0;
  #ends = 0;
  /** Held casts by sequence number, in order. */
  #held = new HeldCasts();
  #confirmTimer: ReturnType<typeof setTimeout> | undefined;
  /** Write ids also in the file of kept writes; disk updates run in order. */
  #kept: KeptWrites;
  /** The arguments of the last `initialize`, replayed at each start. */
  #initialized: [string, string, InitializeOptions] | undefined;

  /** The provider's checkpoint API version, read at load. */
  override readonly preCompressCheckpointApiVersion: number;
  /** Whether the provider's `syncTurn` takes `messages`, read at load. */
  override readonly syncTurnTakesMessages: boolean;

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
  private constructor(state: SandboxState, rpc: WorkerRpc | undefined) {
    super();
    this.#state = state;
    this.#rpc = rpc;
    this.#kept = new KeptWrites(state.grant.hermesHome, this.name);
    this.#schemas = rpc ? state.description.toolSchemas as ToolSchema[] : null;
    this.preCompressCheckpointApiVersion = state.description.apiVersion;
    // Sent by the sandbox: anything but `false` keeps the contract's default.
    this.syncTurnTakesMessages = state.description.messages !== false;
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
   * Checks and prepares a provider (its data directory created first); the
   * first load of its code and settings in this process starts its sandbox to
   * learn what it offers, later loads start nothing until their first call.
   * Writes kept on disk by an earlier host are handed over at once.
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
    const slot: SlotHolder = {
      idle: () => loaded.proxy !== undefined && loaded.proxy.#idle(),
      pause: () => loaded.proxy ? loaded.proxy.#pause() : POSTED,
    };
    const early: WorkerMessage[] = [];
    const callTimeoutMs = options.callTimeoutMs ?? 30_000;
    // Skills are registered by the first load of the code; later loads replay them.
    const skills: SkillRegistration[] = [];
    const onSkill = (skill: SkillRegistration) => {
      skills.push(skill);
      options.onSkill?.(skill);
    };
    const launch = sandboxLauncher(
      candidate,
      { ...options, onSkill },
      framework,
      {
        denials,
        event: (message) => {
          if (loaded.proxy) loaded.proxy.#onEvent(message);
          else early.push(message);
        },
        stopped: () => {
          if (loaded.proxy) loaded.proxy.#onStopped();
        },
      },
    );
    const code = `${candidate.specifier} ${candidate.name} ${framework}`;
    const key = `${code} ${JSON.stringify(options.config ?? {})}`;
    const known = DESCRIPTIONS.get(key);
    let description = known?.description;
    let rpc: WorkerRpc | undefined;
    if (known === undefined) {
      await takeSlot(slot, callTimeoutMs, candidate.name);
      try {
        ({ rpc, description } = await launch());
      } finally {
        if (!rpc || description === null) releaseSlot(slot);
      }
      DESCRIPTIONS.set(key, { description: description!, skills: [...skills] });
    } else {
      for (const skill of known.skills) options.onSkill?.(skill);
    }
    if (description == null) return null;
    const proxy = new SandboxedMemoryProvider({
      slot,
      description,
      candidate,
      grant,
      denials,
      callbacks,
      callTimeoutMs,
      shutdownTimeoutMs: options.shutdownTimeoutMs ?? 5_000,
      launch,
    }, rpc);
    loaded.proxy = proxy;
    for (const message of early.splice(0)) proxy.#onEvent(message);
    if (options.createDataDir !== false) await proxy.#adoptKept();
    return proxy;
  }

  /** The provider's name, as it reported it at load. */
  get name(): string {
    return this.#state.description.name;
  }

  /** The sandbox process's id while it runs (`undefined` for a worker, or while not running). */
  get pid(): number | undefined {
    return this.#running()?.pid;
  }

  /** The grant the worker runs with. */
  get grant(): ProviderGrant {
    return this.#state.grant;
  }

  /** Where the provider was found. */
  get candidate(): SandboxTarget {
    return this.#state.candidate;
  }

  /** Why the sandbox stopped for good, or why restarts were given up; `undefined` otherwise. */
  get stopped(): string | undefined {
    return this.#closed ?? this.#gaveUp;
  }

  /** Accepted writes the provider has not reported durable yet (held in memory, or on disk). */
  get pendingWrites(): number {
    return this.#held.writes.length;
  }

  #idle(): boolean {
    const busy = this.#running()?.busy ?? true;
    return !busy && this.#starting === undefined && !this.#shutdown;
  }

  /** The running sandbox, or `undefined` while none runs or it is being paused. */
  #running(): WorkerRpc | undefined {
    return this.#pausing || this.#rpc?.stopped ? undefined : this.#rpc;
  }

  /** Makes what was sent durable, shuts the provider down and ends its process, to start again later. */
  #pause(): Promise<void> {
    this.#pausing ??= (async () => {
      const rpc = this.#rpc!;
      const timeoutMs = this.#state.shutdownTimeoutMs;
      try {
        // Whatever is not confirmed stays held and goes to the next process.
        // shutdown only after a drain that finished: it would queue behind the unfinished casts.
        if ((await this.#confirm(rpc, timeoutMs)).drained) {
          await this.#request(rpc, "shutdown", [], timeoutMs);
        }
      } catch (error) {
        this.#debug(error);
      } finally {
        // The slot is freed only once the process has exited (a killed one takes a few ms to
        // go): the cap counts processes.
        rpc.terminate("it was paused under the live provider cap");
        await raceTimeout(rpc.exited, EXIT_WAIT_MS);
        this.#release();
      }
    })().finally(() => this.#pausing = undefined);
    return this.#pausing;
  }

  /** The running sandbox: started first (under the cap) when none runs. */
  async #live(): Promise<WorkerRpc> {
    // Never start beside a process still pausing: it holds the slot and is still making the
    // writes it was sent durable.
    while (this.#pausing !== undefined) await this.#pausing;
    const rpc = this.#running();
    if (rpc !== undefined) {
      markUsed(this.#state.slot);
      return rpc;
    }
    if (this.#closed !== undefined) throw this.#stoppedError(this.#closed);
    this.#starting ??= this.#start().finally(() => this.#starting = undefined);
    return await this.#starting;
  }

  /** Starts the sandbox (with backoff), initializes it as before and hands it every held cast, in order. */
  async #start(): Promise<WorkerRpc> {
    const state = this.#state;
    for (;;) {
      const gaveUp = this.#gaveUp;
      if (gaveUp && performance.now() < this.#retryAt) {
        throw this.#stoppedError(gaveUp);
      } else if (gaveUp) this.#failures = MAX_RESTARTS - 1;
      // Backoff: 0, 200, 800, then 1000 ms.
      const wait = Math.min(1000, 200 * (this.#failures + this.#ends) ** 2);
      if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
      const timeoutMs = state.callTimeoutMs;
      // The slot before the spawn: the cap counts starting processes too.
      await takeSlot(state.slot, timeoutMs, this.name);
      let rpc: WorkerRpc | undefined;
      try {
        const launched = await state.launch();
        rpc = launched.rpc;
        if (launched.description === null) {
          throw new Error("it offered no provider when started again");
        }
        // Initialized as before, ahead of any held cast: the turns need their session.
        if (this.#initialized !== undefined) {
          const [method, ...args] = this.#initialized;
          await this.#request(rpc, method, args, timeoutMs, this.#context());
        }
        if (this.#closed !== undefined) throw this.#stoppedError(this.#closed);
        // Synchronous from here: a cast posted meanwhile is held, so it
        // follows everything held before it.
        for (const held of this.#held.values()) this.#post(rpc, held);
        this.#held.unsent = this.#failures = 0;
        this.#rpc = rpc;
        this.#gaveUp = undefined;
        // Held writes are forgotten only when a drain of this process reports them durable.
        if (this.#held.size > 0) this.#confirmSoon();
        return rpc;
      } catch (error) {
        rpc?.terminate("its start failed");
        this.#release();
        if (this.#closed !== undefined) throw error;
        const why = errorText(error);
        if (++this.#failures >= MAX_RESTARTS) {
          this.#giveUp(
            `it could not be started again (${MAX_RESTARTS} attempts in a row; last: ${why})`,
          );
          throw this.#stoppedError(this.#gaveUp!);
        }
        log("debug", `Memory provider '${this.name}' did not start: ${why}`);
      }
    }
  }

  /** The process ended on its own (killed, crashed, out of memory, stuck): start again when something waits. */
  #onStopped(): void {
    const rpc = this.#rpc;
    if (rpc === undefined || rpc.stopped === undefined) return;
    this.#release();
    if (this.#closed !== undefined || this.#pausing !== undefined) return;
    // Ends with no write confirmed between them mean a write that kills each process: give
    // up after MAX_ENDS. Otherwise a held write restarts it at once, else the next call does.
    if (++this.#ends >= MAX_ENDS) {
      this.#giveUp(
        `it ended ${MAX_ENDS} times in a row before it reported a write durable (last: ${rpc.stopped})`,
      );
    } else if (this.#held.size > 0) this.#wake();
  }

  /** Starts the sandbox in the background to hand over what is held. */
  #wake(): void {
    if (this.#gaveUp !== undefined && performance.now() < this.#retryAt) return;
    this.#live().catch(this.#debug);
  }

  #debug = (error: unknown): void => {
    log("debug", `Memory provider '${this.name}': ${errorText(error)}`);
  };

  /** Stops restarting for a while; the held writes go to disk, to the next start of the provider in any host. */
  #giveUp(reason: string): void {
    this.#gaveUp = reason;
    this.#failures = this.#ends = 0;
    this.#retryAt = performance.now() + RETRY_AFTER_MS;
    this.#held.dropCasts();
    // On disk, so the next start of the provider (this host or a later one) hands them over.
    this.#kept.keep(this.#held.writes, this.#gaveUp);
  }

  /** Takes over writes an earlier host kept on disk for this provider and hands them over. */
  async #adoptKept(): Promise<void> {
    const writes = await this.#kept.adopt();
    this.#held.adopt(writes, this.#context());
    const rpc = this.#running();
    if (writes.length === 0) return;
    if (rpc === undefined) return this.#wake();
    for (const held of this.#held.values()) this.#post(rpc, held);
    this.#confirmSoon();
  }

  /** Posts a held cast; a write sent before goes again with `turnId` (its id), so it is stored once. */
  #post(rpc: WorkerRpc, held: Held): void {
    const { method, context } = held;
    try {
      rpc.cast({ t: "cast", method, args: this.#held.argsOf(held), context });
      this.#held.posted(held, true);
    } catch (error) {
      // Held for the next process; a write that cannot be posted is dropped.
      if (error instanceof ProviderWorkerStoppedError) return;
      this.#held.posted(held, false);
      const explained = this.#state.denials.explain(error);
      this.#logCastFailure(method, serializeError(explained));
    }
  }

  /**
   * Asks the provider whether everything sent to `rpc` is durable (every cast
   * run, then its own `drain()`); forgets the writes it confirms.
   */
  async #confirm(rpc: WorkerRpc, timeoutMs?: number): Promise<DrainResult> {
    // Taken before asking: casts made while the drain runs are not covered by its answer.
    const upTo = this.#held.last;
    const started = performance.now();
    const bound = { timeoutMs: timeoutMs ?? Infinity, label: "drain" };
    // The worker answers only after every cast posted before it has run (its queue is in
    // order); the provider's own drain() then says whether they are durable.
    await rpc.request({ t: "drain" }, bound);
    let result: DrainResult = { drained: true };
    if (this.#state.description.optional.includes("drain")) {
      const left = timeoutMs === undefined
        ? this.#state.callTimeoutMs
        : Math.max(1, timeoutMs - (performance.now() - started));
      result = toDrainResult(await this.#request(rpc, "drain", [left], left));
    }
    // Answered by a process since replaced: held casts re-posted to the new one are not
    // covered, so nothing is forgotten.
    if (!result.drained || rpc !== this.#rpc) return result;
    this.#ends = 0;
    this.#kept.forget(this.#held.confirm(upTo));
    return result;
  }

  /** Confirms the writes just sent, shortly (one drain for a burst). */
  #confirmSoon(): void {
    if (this.#confirmTimer !== undefined) return;
    this.#confirmTimer = setTimeout(() => {
      this.#confirmTimer = undefined;
      const rpc = this.#running();
      const ms = this.#state.callTimeoutMs;
      if (rpc && this.#held.size) this.#confirm(rpc, ms).catch(this.#debug);
    }, CONFIRM_DELAY_MS);
    Deno.unrefTimer(this.#confirmTimer);
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

  /** Calls a hook on `rpc` directly; by default in the provider's own home with nobody's secrets (what the host does on its own). */
  #request(
    rpc: WorkerRpc,
    method: string,
    args: unknown[],
    timeoutMs: number,
    context?: CallContext,
  ): Promise<never> {
    context ??= {
      hermesHome: this.#state.grant.hermesHome,
      multiplex: isMultiplexActive(),
    };
    const request = { t: "call" as const, method, args, context };
    return rpc.request(request, { timeoutMs, label: method }) as Promise<never>;
  }

  async #call(
    method: string,
    args: unknown[],
    timeoutMs: number = this.#state.callTimeoutMs,
  ): Promise<never> {
    const context = this.#context();
    try {
      for (let attempt = 0;; attempt++) {
        const rpc = this.#running() ?? await this.#live();
        markUsed(this.#state.slot);
        try {
          const answer = this.#request(rpc, method, args, timeoutMs, context);
          const value = await answer;
          this.#ends = 0; // It answers: not a write that kills it.
          return value;
        } catch (error) {
          // The process ended under the call: once more on the next one,
          // unless a tool call (it may have acted already).
          if (
            !(error instanceof ProviderWorkerStoppedError) || attempt > 0 ||
            method === "handleToolCall" || rpc.stopped === undefined ||
            this.#closed !== undefined
          ) throw error;
        }
      }
    } catch (error) {
      throw this.#state.denials.explain(error);
    } finally {
      slotChanged();
    }
  }

  /**
   * Posts a hook one-way; a write is held until the provider reports it
   * durable. Rejects only when it cannot be posted.
   */
  #cast(method: string, args: unknown[]): Promise<void> {
    if (this.#closed) return Promise.reject(this.#stoppedError(this.#closed));
    const held = this.#held.next(method, args, this.#context());
    // Posted directly only when nothing held waits to be posted: it would overtake it.
    const rpc = this.#held.unsent === 0 ? this.#running() : undefined;
    try {
      rpc?.cast({ t: "cast", method, args: held.args, context: held.context });
      held.sent = rpc !== undefined;
      if (rpc !== undefined) markUsed(this.#state.slot);
    } catch (error) {
      if (!(error instanceof ProviderWorkerStoppedError)) {
        return Promise.reject(this.#state.denials.explain(error));
      }
    }
    // A non-write is held only until posted; while restarts are given up it is dropped.
    if (held.wid === undefined && (held.sent || this.#gaveUp)) return POSTED;
    this.#held.hold(held);
    // No process will confirm it while restarts are given up: to disk at once.
    if (this.#gaveUp) this.#kept.keep(this.#held.writes, this.#gaveUp);
    held.sent ? this.#confirmSoon() : this.#wake();
    return POSTED;
  }

  #stoppedError(reason: string): ProviderWorkerStoppedError {
    return new ProviderWorkerStoppedError(this.name, reason);
  }

  /** Logs a failed cast exactly as the memory manager logs that hook. */
  #logCastFailure(method: string, serialized: SerializedError): void {
    const error = reviveError(serialized);
    const explained = this.#state.denials.explain(error);
    logProviderHookFailure(this.name, method, explained, error);
  }

  /**
   * Waits until every write accepted before this call is durable: the
   * sandbox started again when it ended, each cast run, then the provider's
   * own `drain()`, if any, with the time left.
   *
   * @param timeoutMs How long to wait at most; without limit when omitted.
   * @returns `drained: false` on timeout, or when writes wait for a start
   * (`pending` counts them: on disk when the provider cannot start).
   */
  override async drain(timeoutMs?: number): Promise<DrainResult> {
    const deadline = performance.now() + (timeoutMs ?? Infinity);
    const left = () => Math.max(1, deadline - performance.now());
    let result: DrainResult = { drained: false };
    // A process that ends under the drain is started again: `drained` means durable in the
    // provider, after a restart if need be.
    for (let n = 0; n <= MAX_RESTARTS && !this.stopped; n++) {
      if (this.#held.size === 0 && !this.#running()) return { drained: true };
      try {
        const rpc = await raceTimeout(this.#live(), left());
        const ms = timeoutMs === undefined ? undefined : left();
        if (rpc !== undefined) result = await this.#confirm(rpc, ms);
        break;
      } catch (error) {
        if (error instanceof ProviderWorkerStoppedError) continue;
        this.#debug(error);
        break;
      }
    }
    if (result.drained) return result;
    const pending = result.pending ?? this.pendingWrites;
    // Ended with nothing it may have lost: nothing is pending.
    return this.stopped !== undefined && pending === 0 &&
        !this.#state.description.optional.includes("drain")
      ? { drained: true, pending: 0 }
      : { drained: false, ...(pending > 0 ? { pending } : {}) };
  }

  /** Whether the provider can run (no network by contract). */
  isAvailable(): Promise<boolean> {
    return this.#call("isAvailable", []);
  }

  /** Initializes the provider (callbacks run on the host), then refetches the tool schemas. */
  initialize(sessionId: string, options: InitializeOptions): Promise<void> {
    return this.#init("initialize", sessionId, options);
  }

  /** Side-effect-free initialization for inspection. */
  override initializeForInspection(
    sessionId: string,
    options: InitializeOptions,
  ): Promise<void> {
    return this.#init("initializeForInspection", sessionId, options);
  }

  /** The tool schemas (cached from load and `initialize`). */
  getToolSchemas(): ToolSchema[] | Promise<ToolSchema[]> {
    if (this.#schemas !== null) return structuredClone(this.#schemas);
    return this.#call("getToolSchemas", []);
  }

  /** Runs `method` (replayed at each start), then refetches the tool schemas. */
  async #init(
    method: string,
    sessionId: string,
    options: InitializeOptions,
  ): Promise<void> {
    const marshaled = this.#marshal(options);
    await this.#call(method, [sessionId, marshaled]);
    this.#initialized = [method, sessionId, marshaled];
    const d = await this.#call("__describe", []).catch(() => null);
    this.#schemas = (d as ProviderDescription | null)?.toolSchemas as
      | ToolSchema[]
      | null ?? null;
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
   * Makes the accepted writes durable, calls the provider's `shutdown`
   * (skipped with a warning when they overrun: it would wait behind them),
   * then ends the sandbox, within `shutdownTimeoutMs`; writes still not
   * durable are kept on disk for the provider's next start. Concurrent
   * calls share one shutdown.
   */
  override shutdown(): Promise<void> {
    this.#shutdown ??= this.#shutdownOnce();
    return this.#shutdown;
  }

  async #shutdownOnce(): Promise<void> {
    const state = this.#state;
    if (this.#starting !== undefined) await this.#starting.catch(() => {});
    if (this.#pausing !== undefined) await this.#pausing;
    const budget = state.shutdownTimeoutMs;
    const deadline = performance.now() + budget;
    let why = "was shut down";
    try {
      if (this.stopped !== undefined) return;
      const drained = (await this.drain(budget)).drained;
      const rpc = this.#running();
      // Not drained: the provider's shutdown would wait behind the unfinished casts; skipped.
      if (rpc !== undefined && !drained) {
        why =
          `did not finish its queued hooks within ${budget} ms and was stopped`;
        if (this.pendingWrites === 0) {
          log("warn", `Memory provider '${this.name}' ${why}`);
        }
      } else if (rpc !== undefined) {
        const left = Math.max(1, deadline - performance.now());
        await this.#request(rpc, "shutdown", [], left, this.#context());
      }
    } catch (error) {
      log("debug", `Memory provider '${this.name}': ${errorText(error)}`);
    } finally {
      this.#stop("it was shut down");
      // What no drain confirmed goes to disk, for the provider's next start in any host.
      await this.#kept.keep(this.#held.writes, why);
    }
  }

  #stop(reason: string): void {
    this.#closed ??= reason;
    clearTimeout(this.#confirmTimer);
    this.#rpc?.terminate(reason);
    this.#release();
  }

  /** Frees the slot of a sandbox that ended. */
  #release(): void {
    this.#rpc = undefined;
    releaseSlot(this.#state.slot);
  }

  /** Ends the sandbox at once, without calling the provider. */
  terminate(): void {
    this.#stop("it was terminated");
  }

  /** Shuts the provider down (for `await using`). */
  async [Symbol.asyncDispose](): Promise<void> {
    await this.shutdown();
  }
}
