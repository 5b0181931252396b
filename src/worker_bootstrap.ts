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
 * Inside the worker, every call runs under `withHermesHome` (the profile
 * home passed by the host) and `withSecretScope` (the caller's secrets,
 * limited by the host to the names the provider declared). Console output
 * and framework log lines go to the host's logger, never to stdout.
 *
 * @module
 */

import * as framework from "../mod.ts";
import { withHermesHome } from "./hermes_home.ts";
import { type LogLevel, setLogger } from "./log.ts";
import type { MemoryProvider } from "./memory_provider.ts";
import { extractMemoryProvider } from "./plugin_context.ts";
import { setMultiplexActive, withSecretScope } from "./secret_scope.ts";
import {
  type CallbackMarker,
  type CallContext,
  type HostRequest,
  type ProviderDescription,
  serializeError,
  type WorkerMessage,
} from "./worker_rpc.ts";

interface WorkerScope {
  postMessage(message: WorkerMessage): void;
  onmessage:
    | ((event: MessageEvent<HostRequest & { id: number }>) => void)
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
  "__describe",
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
              error instanceof Error ? error.message : String(error)
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
        reason instanceof Error ? reason.message : String(reason)
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
  const optional = ["postSetup", "getStatusConfig"].filter((m) =>
    typeof (p as unknown as Record<string, unknown>)[m] === "function"
  );
  return {
    name: String(p.name),
    toolSchemas,
    apiVersion: Number(p.preCompressCheckpointApiVersion ?? 1),
    optional,
  };
}

async function handle(request: HostRequest & { id: number }): Promise<unknown> {
  switch (request.t) {
    case "load": {
      providerName = request.providerName;
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
    case "call": {
      const current = provider;
      if (current === null) {
        throw new Error(`Memory provider '${providerName}' is not loaded`);
      }
      if (!CALLABLE.has(request.method)) {
        throw new TypeError(
          `Memory provider method ${request.method}() cannot be called through the sandbox`,
        );
      }
      if (request.method === "__describe") {
        return await inContext(request.context, () => describe(current));
      }
      const fn =
        (current as unknown as Record<string, unknown>)[request.method];
      if (typeof fn !== "function") {
        throw new TypeError(
          `Memory provider '${providerName}' has no ${request.method}() method`,
        );
      }
      const args = request.args.map(reviveCallbacks);
      return await inContext(
        request.context,
        () => (fn as (...a: unknown[]) => unknown).apply(current, args),
      );
    }
    case "ping":
      return undefined;
  }
}

scope.onmessage = (event) => {
  const request = event.data;
  if (request.t === "ping") {
    post({ t: "pong", id: request.id });
    return;
  }
  handle(request).then(
    (value) => post({ t: "result", id: request.id, ok: true, value }),
    (error) =>
      post({
        t: "result",
        id: request.id,
        ok: false,
        error: serializeError(error),
      }),
  );
};

post({ t: "ready" });
