/**
 * The entry module of a memory provider's sandbox worker. Not public API:
 * the loader starts it with `new Worker(new URL("./worker_bootstrap.ts",
 * import.meta.url), {deno: {permissions}})`.
 *
 * It imports the framework (`mod.ts`) statically. A worker's entry graph is
 * loaded under the *parent's* permissions, and a module already loaded is
 * served again without a permission check, so provider code can
 * `import { MemoryProvider } from "@hermes/memory"` (resolved through the
 * host's import map to this same `mod.ts`) without read access to the
 * framework's files. The framework is also exposed as
 * `globalThis.HermesMemory`, for provider code that cannot use the
 * host's import map (npm or jsr packages).
 *
 * Provider code is never imported statically: the loader sends the
 * provider's module URL in a message and it is loaded with `import()` of
 * that runtime value, so the provider's whole graph is checked against the
 * worker's permissions.
 *
 * Inside the worker, every call and cast runs under `withHermesHome` (the
 * profile home passed by the host) and `withSecretScope` (the caller's
 * secrets, limited by the host to the names the provider declared), both
 * captured on the host when the message was posted. Console output and
 * framework log lines go to the host's logger, never to stdout.
 *
 * Ordering: casts (one-way hooks such as `syncTurn`) run one at a time in
 * arrival order. While a cast is running (its promise has not settled),
 * every later message waits in a FIFO and starts, in arrival order, once
 * it settles or is abandoned after the cast timeout; a call that starts
 * runs concurrently with later calls and is answered when it completes.
 * Pings are answered at once. A cast's failure is posted as a `castFailed`
 * event; nothing is left as an unhandled rejection.
 *
 * @module
 */

import * as framework from "../../mod.ts";
import { withHermesHome } from "../profile/hermes_home.ts";
import { type LogLevel, setLogger } from "../core/log.ts";
import type { MemoryProvider } from "../core/memory_provider.ts";
import { extractMemoryProvider } from "../core/plugin_context.ts";
import {
  setMultiplexActive,
  withSecretScope,
} from "../profile/secret_scope.ts";
import {
  type CallbackMarker,
  type CallContext,
  type CastRequest,
  type HostRequest,
  ProviderCallTimeoutError,
  type ProviderDescription,
  serializeError,
  type WorkerMessage,
} from "./worker_rpc.ts";
import { errorText } from "../_util/error_text.ts";

type Incoming = HostRequest & { id: number };
type LoadRequest = Extract<Incoming, { t: "load" }>;
type CallRequest = Extract<Incoming, { t: "call" }>;

interface WorkerScope {
  postMessage(message: WorkerMessage): void;
  onmessage:
    | ((event: MessageEvent<Incoming>) => void)
    | null;
  addEventListener(
    type: "unhandledrejection" | "error",
    listener: (event: Event) => void,
  ): void;
}

/** Methods of `MemoryProvider` the host may call. */
const CALLABLE = new Set([
  "isAvailable",
  "initialize",
  "initializeForInspection",
  "getToolSchemas",
  "unavailableReason",
  "systemPromptBlock",
  "prefetch",
  "queuePrefetch",
  "recallStatus",
  "syncTurn",
  "handleToolCall",
  "shutdown",
  "onTurnStart",
  "identitySignature",
  "onSessionEnd",
  "onSessionSwitch",
  "onPreCompress",
  "onDelegation",
  "getConfigSchema",
  "saveConfig",
  "onMemoryWrite",
  "onMemoryEvict",
  "backupPaths",
  "postSetup",
  "getStatusConfig",
  "drain",
  "__describe",
]);

/**
 * The void hooks the host may post as casts. Keep in step with the casts of
 * `SandboxedMemoryProvider`.
 */
const CASTABLE = new Set([
  "syncTurn",
  "queuePrefetch",
  "onTurnStart",
  "onMemoryWrite",
  "onMemoryEvict",
  "onDelegation",
  "onSessionEnd",
]);

const scope = globalThis as unknown as WorkerScope;
let provider: MemoryProvider | null = null;
let providerName = "(loading)";

(globalThis as Record<string, unknown>).HermesMemory = framework;

function post(message: WorkerMessage): void {
  try {
    scope.postMessage(message);
  } catch (error) {
    if (message.t === "result") {
      scope.postMessage({
        t: "result",
        id: message.id,
        ok: false,
        error: {
          name: "DataCloneError",
          message:
            `Memory provider '${providerName}' returned a value that cannot leave its sandbox: ${
              errorText(error)
            }; return plain data (strings, numbers, arrays, objects)`,
        },
      });
    }
  }
}

function format(args: unknown[]): string {
  return args.map((a) =>
    typeof a === "string" ? a : Deno.inspect(a, { depth: 4, colors: false })
  ).join(" ");
}

function forwardConsole(): void {
  const levels: [keyof Console, LogLevel][] = [
    ["log", "info"],
    ["info", "info"],
    ["debug", "debug"],
    ["warn", "warn"],
    ["error", "error"],
    ["trace", "debug"],
  ];
  for (const [method, level] of levels) {
    (console as unknown as Record<string, unknown>)[method] = (
      ...args: unknown[]
    ): void => {
      post({
        t: "log",
        level,
        message: `Memory provider '${providerName}': ${format(args)}`,
      });
    };
  }
}

setLogger({
  log(level: LogLevel, message: string): void {
    post({ t: "log", level, message });
  },
});
forwardConsole();

scope.addEventListener("unhandledrejection", (event: Event) => {
  event.preventDefault();
  const reason = (event as PromiseRejectionEvent).reason;
  post({
    t: "log",
    level: "warn",
    message:
      `Memory provider '${providerName}' left a rejected promise unhandled: ${
        errorText(reason)
      }`,
  });
});
scope.addEventListener("error", (event: Event) => {
  event.preventDefault();
  post({
    t: "log",
    level: "warn",
    message: `Memory provider '${providerName}' threw outside a call: ${
      (event as ErrorEvent).message
    }`,
  });
});

function reviveCallbacks(value: unknown): unknown {
  if (value === null || typeof value !== "object" || Array.isArray(value)) {
    return value;
  }
  const out: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value)) {
    const marker = item as CallbackMarker | null;
    if (
      marker !== null && typeof marker === "object" &&
      typeof marker.__hermesCallback === "string"
    ) {
      const name = marker.__hermesCallback;
      out[key] = (...args: unknown[]): void => {
        post({ t: "callback", name, args: JSON.parse(JSON.stringify(args)) });
      };
    } else {
      out[key] = item;
    }
  }
  return out;
}

function inContext<T>(context: CallContext, fn: () => T): T {
  setMultiplexActive(context.multiplex);
  return withHermesHome(
    context.hermesHome,
    () =>
      context.scope !== undefined ? withSecretScope(context.scope, fn) : fn(),
  );
}

async function describe(p: MemoryProvider): Promise<ProviderDescription> {
  let toolSchemas: unknown[] | null = null;
  try {
    toolSchemas = await p.getToolSchemas();
  } catch {
    toolSchemas = null;
  }
  const optional = ["postSetup", "getStatusConfig", "drain"].filter((m) =>
    typeof (p as unknown as Record<string, unknown>)[m] === "function"
  );
  return {
    name: String(p.name),
    toolSchemas,
    apiVersion: Number(p.preCompressCheckpointApiVersion ?? 1),
    optional,
  };
}

async function load(request: LoadRequest): Promise<ProviderDescription | null> {
  providerName = request.providerName;
  if (
    typeof request.castTimeoutMs === "number" && request.castTimeoutMs > 0
  ) {
    castTimeoutMs = request.castTimeoutMs;
  }
  const specifier = String(request.specifier);
  const loaded = await inContext(request.context, async () => {
    const module = await import(specifier);
    return await extractMemoryProvider(module as Record<string, unknown>, {
      providerName,
      acceptInstances: request.acceptInstances,
      onSkill: (skill) => post({ t: "skill", skill }),
    });
  });
  if (loaded === null) return null;
  provider = loaded;
  return await inContext(request.context, () => describe(loaded));
}

/** Starts `method` on the provider; returns its (possibly pending) result. */
function invoke(
  method: string,
  args: unknown[],
  context: CallContext,
): unknown {
  const current = provider;
  if (current === null) {
    throw new Error(`Memory provider '${providerName}' is not loaded`);
  }
  if (!CALLABLE.has(method)) {
    throw new TypeError(
      `Memory provider method ${method}() cannot be called through the sandbox`,
    );
  }
  if (method === "__describe") {
    return inContext(context, () => describe(current));
  }
  const fn = (current as unknown as Record<string, unknown>)[method];
  if (typeof fn !== "function") {
    throw new TypeError(
      `Memory provider '${providerName}' has no ${method}() method`,
    );
  }
  const revived = args.map(reviveCallbacks);
  return inContext(
    context,
    () => (fn as (...a: unknown[]) => unknown).apply(current, revived),
  );
}

function isThenable(value: unknown): value is PromiseLike<unknown> {
  return value !== null &&
    (typeof value === "object" || typeof value === "function") &&
    typeof (value as { then?: unknown }).then === "function";
}

function replyOk(id: number, value: unknown): void {
  post({ t: "result", id, ok: true, value });
}

function replyError(id: number, error: unknown): void {
  post({ t: "result", id, ok: false, error: serializeError(error) });
}

/** Starts a call (or load); the reply is posted when it completes. */
function startCall(request: CallRequest | LoadRequest): void {
  const id = request.id;
  let result: unknown;
  try {
    result = request.t === "load"
      ? load(request)
      : invoke(request.method, request.args, request.context);
  } catch (error) {
    replyError(id, error);
    return;
  }
  if (isThenable(result)) {
    Promise.resolve(result).then(
      (value) => replyOk(id, value),
      (error: unknown) => replyError(id, error),
    );
  } else {
    replyOk(id, result);
  }
}

// -- Casts and ordering ---------------------------------------------------

let castTimeoutMs = 30_000;
/** Sequence number of the cast whose promise is pending; 0 when none. */
let runningCast = 0;
let castCount = 0;
let castTimer: ReturnType<typeof setTimeout> | undefined;
let runningMethod = "";
/** Messages that arrived while a cast was running, in arrival order. */
let waiting: Incoming[] = [];

function castFailed(method: string, error: unknown): void {
  post({ t: "castFailed", method, error: serializeError(error) });
}

/**
 * Runs a cast. A cast that returns synchronously is done at once; one that
 * returns a promise holds every later message until it settles, or until
 * `castTimeoutMs` passes (it is then abandoned and reported as timed out;
 * whatever it does later is ignored).
 */
function startCast(request: CastRequest): void {
  let result: unknown;
  try {
    if (!CASTABLE.has(request.method)) {
      throw new TypeError(
        `Memory provider method ${request.method}() cannot be posted one-way through the sandbox`,
      );
    }
    result = invoke(request.method, request.args, request.context);
  } catch (error) {
    castFailed(request.method, error);
    return;
  }
  if (!isThenable(result)) return;
  const seq = ++castCount;
  runningCast = seq;
  runningMethod = request.method;
  castTimer = setTimeout(abandonCast, castTimeoutMs, seq);
  Promise.resolve(result).then(
    () => finishCast(seq),
    (error: unknown) => {
      if (runningCast === seq) castFailed(request.method, error);
      finishCast(seq);
    },
  );
}

function finishCast(seq: number): void {
  if (runningCast !== seq) return;
  clearTimeout(castTimer);
  castTimer = undefined;
  runningCast = 0;
  pump();
}

function abandonCast(seq: number): void {
  if (runningCast !== seq) return;
  castTimer = undefined;
  runningCast = 0;
  castFailed(
    runningMethod,
    new ProviderCallTimeoutError(providerName, runningMethod, castTimeoutMs),
  );
  pump();
}

function dispatch(request: Incoming): void {
  switch (request.t) {
    case "cast":
      startCast(request);
      return;
    case "drain":
      // Every earlier cast has finished: that is all a drain waits for.
      replyOk(request.id, true);
      return;
    case "ping":
      post({ t: "pong", id: request.id });
      return;
    default:
      startCall(request);
  }
}

/**
 * Starts waiting messages in order until one of them is a pending cast.
 * (No message can arrive while this runs: `onmessage` is a later task.)
 */
function pump(): void {
  let i = 0;
  while (runningCast === 0 && i < waiting.length) {
    dispatch(waiting[i++] as Incoming);
  }
  waiting = i === waiting.length ? [] : waiting.slice(i);
}

scope.onmessage = (event) => {
  const request = event.data;
  if (request.t === "ping") {
    post({ t: "pong", id: request.id });
  } else if (runningCast !== 0) {
    waiting.push(request);
  } else {
    dispatch(request);
  }
};

post({ t: "ready" });
