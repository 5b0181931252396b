/**
 * The entry module of a memory provider's sandbox: the main module of its
 * `deno run` process, or a confined `Worker` in a `deno compile` binary.
 *
 * @module
 */

import * as providerApi from "./mod.ts";
// Preloaded under the host's permissions, like the contract: the bundled
// providers import it, and their sandbox may not read the framework's code.
import "./_bundled.ts";
import { type LogLevel, setLogger } from "../core/log.ts";
import type { MemoryProvider } from "../core/memory_provider.ts";
import { extractMemoryProvider } from "../core/plugin_context.ts";
import {
  isProviderHook,
  PROVIDER_HOOK_NAMES,
  PROVIDER_HOOKS,
} from "../core/provider_hooks.ts";
import { setMultiplexActive } from "../profile/secret_scope.ts";
import { scopeStores } from "../profile/hermes_home.ts";
import { resolve } from "../_util/path.ts";
import {
  type AnswerMessage,
  type CallbackMarker,
  type CallContext,
  type CastRequest,
  checkLineBytes,
  encodeMessage,
  exceedsSize,
  type HostRequest,
  type LoadRequest,
  MAX_RESULT_BYTES,
  ProviderCallTimeoutError,
  type ProviderDescription,
  readLines,
  serializeError,
  type WorkerMessage,
} from "../sandbox/worker_protocol.ts";
import { hardenWorker } from "./worker_hardening.ts";
import { errorText } from "../_util/error_text.ts";

type Incoming = HostRequest & { id: number };
type CallRequest = Exclude<Incoming, { t: "cast" | "drain" | "ping" }>;
type LoadMessage = LoadRequest & { id: number };

interface WorkerScope {
  onmessage: ((event: MessageEvent<unknown>) => void) | null;
  addEventListener(
    type: "unhandledrejection" | "error",
    listener: (event: Event) => void,
  ): void;
}

/** The optional hooks a provider may or may not define. */
const OPTIONAL_HOOKS = PROVIDER_HOOK_NAMES.filter((name) =>
  PROVIDER_HOOKS[name].optional
);

const scope = globalThis as unknown as WorkerScope;
/** Whether this runs in a worker (else as the main module of its process). */
const IN_WORKER = "WorkerGlobalScope" in globalThis;
/**
 * The process's real stdio and exit, kept before the hardening, and bound
 * before provider code runs: patching a prototype later does not show it
 * the token (no secret from in-process code: docs/sandbox.md, "The per-run
 * token").
 */
const processLink = IN_WORKER ? undefined : {
  write: Deno.stdout.writeSync.bind(Deno.stdout),
  encode: TextEncoder.prototype.encode.bind(new TextEncoder()),
  read: Deno.stdin.read.bind(Deno.stdin),
  exit: Deno.exit,
  token: null as string | null,
};
let provider: MemoryProvider | null = null;
let providerName = "(loading)";
let port: MessagePort | null = null;
/** Messages posted before the host's port arrived (none in practice). */
const early: WorkerMessage[] = [];
let loadStarted = false;

(globalThis as Record<string, unknown>).HermesMemory = providerApi;

function writeLine(message: WorkerMessage): void {
  const link = processLink!;
  const bytes = link.encode(`${link.token} ${encodeMessage(message)}\n`);
  // The host ends a provider whose line is longer: refuse it here instead.
  checkLineBytes(bytes.length - link.token!.length - 1);
  let written = link.write(bytes);
  while (written < bytes.length) {
    written += link.write(bytes.subarray(written));
  }
}

function send(message: WorkerMessage): void {
  if (processLink !== undefined) {
    if (processLink.token === null) early.push(message);
    else writeLine(message);
  } else if (port === null) early.push(message);
  else port.postMessage(message);
}

/** Sends one message to the host (over the pipe or the private port). */
export function postToHost(message: WorkerMessage): void {
  try {
    if (
      message.t === "result" && message.ok &&
      exceedsSize(message.value, MAX_RESULT_BYTES)
    ) {
      throw new RangeError(
        `the value is larger than the ${
          MAX_RESULT_BYTES / 1048576
        } MiB a call may return`,
      );
    }
    send(message);
  } catch (error) {
    if (message.t === "result") {
      send({
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

/**
 * The `cli.ts` side of a sandbox (installed by `src/cli/sandbox_bootstrap.ts`), which
 * answers the `cli*` requests and the host's prompt answers.
 */
export interface CliMode {
  request(request: HostRequest): unknown;
  answer(message: AnswerMessage): void;
  /** Takes what provider code writes to stdout or stderr (the user's terminal, via the host). */
  write(stream: "stdout" | "stderr", text: string): boolean;
}

let cliMode: CliMode | undefined;

/**
 * Turns this sandbox into one that runs a provider's `cli.ts` (called by
 * `src/cli/sandbox_bootstrap.ts` before any message is read).
 */
export function installCliMode(mode: CliMode): void {
  cliMode = mode;
}

/** Sets the provider's name for messages (the CLI bootstrap's load). */
export function setSandboxProviderName(name: string): void {
  providerName = name;
}

hardenWorker({
  closeStdio: IN_WORKER,
  providerName: () => providerName,
  write: (stream, text) => cliMode?.write(stream, text) ?? false,
  output: (level, text) => postToHost({ t: "log", level, message: text }),
  denied: (error) => postToHost({ t: "denied", error: serializeError(error) }),
});

/** The text of a `console` call's arguments, as Deno prints them without colours. */
export function formatConsoleArgs(args: unknown[]): string {
  return args.map((a) =>
    typeof a === "string" ? a : Deno.inspect(a, { depth: 4, colors: false })
  ).join(" ");
}

/** A log line of the provider's, marked as its own. */
function logAsProvider(level: LogLevel, text: string): void {
  postToHost({
    t: "log",
    level,
    message: `Memory provider '${providerName}'${text}`,
  });
}

setLogger({
  log(level: LogLevel, message: string): void {
    postToHost({ t: "log", level, message });
  },
});
const CONSOLE_LEVELS = {
  log: "info",
  info: "info",
  debug: "debug",
  warn: "warn",
  error: "error",
  trace: "debug",
} as const;
for (const [method, level] of Object.entries(CONSOLE_LEVELS)) {
  (console as unknown as Record<string, unknown>)[method] = (
    ...args: unknown[]
  ): void => logAsProvider(level, `: ${formatConsoleArgs(args)}`);
}

scope.addEventListener("unhandledrejection", (event: Event) => {
  event.preventDefault();
  const reason = (event as PromiseRejectionEvent).reason;
  logAsProvider(
    "warn",
    ` left a rejected promise unhandled: ${errorText(reason)}`,
  );
});
scope.addEventListener("error", (event: Event) => {
  event.preventDefault();
  logAsProvider(
    "warn",
    ` threw outside a call: ${(event as ErrorEvent).message}`,
  );
});

/** `value` with each callback marker in it replaced by a function that calls back (`value` itself when it holds none). */
function reviveCallbacks(value: unknown): unknown {
  if (value === null || typeof value !== "object" || Array.isArray(value)) {
    return value;
  }
  // Values arrive as plain data (JSON or a structured clone): own keys only.
  const record = value as Record<string, unknown>;
  let out: Record<string, unknown> | undefined;
  for (const key in record) {
    const name = (record[key] as CallbackMarker | null)?.__hermesCallback;
    if (typeof name !== "string") continue;
    out ??= { ...record };
    out[key] = (...args: unknown[]): void => {
      postToHost({
        t: "callback",
        name,
        args: JSON.parse(JSON.stringify(args)),
      });
    };
  }
  return out ?? value;
}

/**
 * The scopes, loaded by the first call that needs one (`node:async_hooks`
 * costs a start about a third of a bare `deno run`): until then every call
 * came from the profile this sandbox serves, with no secret scope.
 */
let scopes: typeof import("../profile/context_scope.ts") | undefined;
let scopesLoading: Promise<void> | undefined;

/**
 * Whether a call must run in scopes: it brings a secret scope, or a home
 * other than the process's (the first call's, normally the grant's).
 */
function needsScope(context: CallContext): boolean {
  const home = context.hermesHome;
  const own = scopeStores.processHome ??= resolve(home);
  return context.scope !== undefined || (home !== own && resolve(home) !== own);
}

/**
 * Runs `fn` under the call's home, multiplex flag and secret scope (the
 * scopes are loaded by then: {@linkcode receive} holds a call that needs
 * them until they are).
 */
export function inContext<T>(context: CallContext, fn: () => T): T {
  setMultiplexActive(context.multiplex);
  if (!needsScope(context)) return fn();
  const { withHermesHome, withSecretScope } = scopes!;
  return withHermesHome(
    context.hermesHome,
    () =>
      context.scope !== undefined ? withSecretScope(context.scope, fn) : fn(),
  );
}

async function describe(p: MemoryProvider): Promise<ProviderDescription> {
  const schemas = async (): Promise<unknown[]> => await p.getToolSchemas();
  const toolSchemas = await schemas().catch(() => null);
  const optional = OPTIONAL_HOOKS.filter((m) =>
    typeof (p as unknown as Record<string, unknown>)[m] === "function"
  );
  return {
    name: String(p.name),
    toolSchemas,
    apiVersion: Number(p.preCompressCheckpointApiVersion ?? 1),
    messages: p.syncTurnTakesMessages !== false,
    optional,
  };
}

async function load(request: LoadMessage): Promise<ProviderDescription | null> {
  if (loadStarted) {
    throw new Error(`Memory provider '${providerName}' is already loaded`);
  }
  loadStarted = true;
  providerName = String(request.providerName);
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
      acceptInstances: request.acceptInstances === true,
      hermesConfig: request.config,
      onSkill: (skill) => postToHost({ t: "skill", skill }),
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
  if (method === "__describe") {
    return inContext(context, () => describe(current));
  }
  if (!isProviderHook(method)) {
    throw new TypeError(
      `Memory provider method ${method}() cannot be called through the sandbox`,
    );
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
  postToHost({ t: "result", id, ok: true, value });
}

function replyError(id: number, error: unknown): void {
  postToHost({ t: "result", id, ok: false, error: serializeError(error) });
}

/** Starts a call (or load); the reply is posted when it completes. */
function startCall(request: CallRequest | LoadMessage): void {
  const id = request.id;
  let result: unknown;
  try {
    if (request.t === "load") result = load(request);
    else if (request.t === "call") {
      result = invoke(request.method, request.args, request.context);
    } else if (cliMode !== undefined) result = cliMode.request(request);
    else {
      throw new TypeError(
        `Memory provider '${providerName}': this sandbox runs no cli.ts`,
      );
    }
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

let castTimeoutMs = 30_000;
/** Sequence number of the cast whose promise is pending; 0 when none. */
let runningCast = 0;
let castCount = 0;
let castTimer: ReturnType<typeof setTimeout> | undefined;
let runningMethod = "";
/** Messages that arrived while a cast was running, in arrival order. */
let waiting: Incoming[] = [];

function castFailed(method: string, error: unknown): void {
  postToHost({ t: "castFailed", method, error: serializeError(error) });
}

/**
 * Runs a cast; a pending one holds every later message until it settles or
 * `castTimeoutMs` passes (then it is abandoned and reported as timed out).
 */
function startCast(request: CastRequest): void {
  let result: unknown;
  try {
    if (
      !isProviderHook(request.method) ||
      PROVIDER_HOOKS[request.method].transport !== "cast"
    ) {
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
      postToHost({ t: "pong", id: request.id });
      return;
    default:
      startCall(request);
  }
}

/**
 * Whether `request` must wait: a cast is pending, or the scopes it needs are
 * loading (started here; the waiting messages go on, in order, once loaded).
 */
function mustWait(request: Incoming): boolean {
  if (runningCast !== 0 || scopesLoading !== undefined) return true;
  const context = (request as { context?: CallContext }).context;
  if (scopes !== undefined || !context || !needsScope(context)) return false;
  scopesLoading = import("../profile/context_scope.ts").then((module) => {
    scopes = module;
    scopesLoading = undefined;
    pump();
  });
  return true;
}

/**
 * Starts waiting messages in order until one of them must wait.
 * (No message can arrive while this runs: `onmessage` is a later task.)
 */
function pump(): void {
  let i = 0;
  while (i < waiting.length && !mustWait(waiting[i]!)) {
    dispatch(waiting[i++]!);
  }
  waiting = i === waiting.length ? [] : waiting.slice(i);
}

function receive(data: unknown): void {
  const request = data as Incoming | null;
  if (request === null || typeof request !== "object") return;
  if (request.t === "ping") {
    postToHost({ t: "pong", id: request.id });
  } else if ((request as { t: string }).t === "answer") {
    cliMode?.answer(request as unknown as AnswerMessage);
  } else if (waiting.length > 0 || mustWait(request)) {
    waiting.push(request);
  } else {
    dispatch(request);
  }
}

/** The process transport: JSON lines on stdin, the token first. */
async function readHost(
  link: NonNullable<typeof processLink>,
): Promise<void> {
  const buffer = new Uint8Array(65536);
  await readLines(async () => {
    const n = await link.read(buffer);
    return n === null ? null : buffer.subarray(0, n);
  }, (line) => {
    if (link.token === null) {
      link.token = line;
      for (const message of early.splice(0)) writeLine(message);
      writeLine({ t: "ready" });
    } else {
      let data: unknown;
      try {
        data = JSON.parse(line);
      } catch {
        return true;
      }
      receive(data);
    }
    return true;
  }).catch(() => {
    // The host is gone.
  });
  // The end of input (or a line the host never sends): the host is gone or
  // let go. When this thread is busy, the host's watchdog ends the process.
  link.exit(0);
}

if (processLink !== undefined) {
  readHost(processLink);
} else {
  // The first message on the global scope brings the private port; nothing
  // else is ever read from the global scope.
  scope.onmessage = (event) => {
    const data = event.data as { t?: unknown } | null;
    const given = event.ports?.[0];
    if (port !== null || data?.t !== "connect" || given === undefined) return;
    port = given;
    scope.onmessage = null;
    port.onmessage = (event) => receive(event.data);
    for (const message of early.splice(0)) port.postMessage(message);
    port.postMessage({ t: "ready" } satisfies WorkerMessage);
  };
}
