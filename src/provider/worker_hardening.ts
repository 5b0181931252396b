// What a sandbox takes from provider code before it runs: process-wide APIs
// worker permissions do not cover become stubs throwing `NotCapable`.

import { lockProcessEnvironment } from "../core/env.ts";
import type { LogLevel } from "../core/log.ts";
import {
  isPermissionDenial,
  markDenialsReportedByHost,
} from "./permission_denial.ts";
import { words } from "../_util/python_text.ts";

/** What the hardening reports to the worker's protocol side. */
export interface HardeningHooks {
  /** Close the stdio resources (in a worker they are the host's) (default `true`). */
  closeStdio?: boolean;
  providerName(): string;
  /** Receives text provider code wrote to stdout or stderr. */
  output(level: LogLevel, text: string): void;
  /** Takes provider output before {@linkcode HardeningHooks.output} (a sandboxed `cli.ts`); `true` when taken. */
  write?(stream: "stdout" | "stderr", text: string): boolean;
  /** Receives a permission denial (the first of each message). */
  denied(error: Error): void;
}

type AnyFunction = (...args: unknown[]) => unknown;

/** The Deno functions whose denials are reported (files and network). */
const REPORTED_FUNCTIONS: readonly string[] = words`
  readFile readFileSync readTextFile readTextFileSync writeFile writeFileSync
  writeTextFile writeTextFileSync open openSync create createSync mkdir
  mkdirSync makeTempDir makeTempDirSync makeTempFile makeTempFileSync remove
  removeSync rename renameSync copyFile copyFileSync stat statSync lstat
  lstatSync readDir readDirSync realPath realPathSync readLink readLinkSync
  truncate truncateSync chmod chmodSync utime utimeSync link linkSync symlink
  symlinkSync connect connectTls listen listenTls serve resolveDns
`;

function lock(target: object, key: PropertyKey, value: unknown): void {
  try {
    Object.defineProperty(target, key, {
      value,
      writable: false,
      configurable: false,
      enumerable: true,
    });
  } catch {
    // Already locked (a second worker module in the same realm).
  }
}

function lockAll(target: object, values: Record<string, unknown>): void {
  for (const [key, value] of Object.entries(values)) lock(target, key, value);
}

function lockGetter(
  target: object,
  key: PropertyKey,
  get: () => unknown,
): void {
  try {
    Object.defineProperty(target, key, {
      get,
      set(): void {
        throw new TypeError(
          `Cannot replace ${String(key)} in a memory provider's sandbox`,
        );
      },
      configurable: false,
      enumerable: true,
    });
  } catch {
    // Already locked.
  }
}

/** Applies the hardening. Call once, before any provider code is imported. */
export function hardenWorker(hooks: HardeningHooks): void {
  const refuse = (what: string, why: string) => (): never => {
    throw new Deno.errors.NotCapable(
      `Memory provider '${hooks.providerName()}' may not ${what}: ${why}`,
    );
  };
  const decoder = new TextDecoder();
  const forward = (level: LogLevel, chunk: unknown): number => {
    const text = typeof chunk === "string"
      ? chunk
      : chunk instanceof Uint8Array
      ? decoder.decode(chunk)
      : String(chunk);
    const size = chunk instanceof Uint8Array ? chunk.byteLength : text.length;
    if (hooks.write?.(level === "info" ? "stdout" : "stderr", text)) {
      return size;
    }
    const trimmed = text.replace(/\r?\n$/, "");
    if (trimmed !== "") {
      hooks.output(
        level,
        `Memory provider '${hooks.providerName()}': ${trimmed}`,
      );
    }
    return size;
  };

  // Raw resources first: close the worker's stdio, then drop the door to
  // Deno's internals (their `core` reads and writes resources by id).
  const internalKey = (Deno as unknown as { internal: symbol }).internal;
  const internals = (Deno as unknown as Record<symbol, unknown>)[
    internalKey
  ] as { core?: { close?: (rid: number) => void } } | undefined;
  for (const rid of hooks.closeStdio === false ? [] : [0, 1, 2]) {
    try {
      internals?.core?.close?.(rid);
    } catch {
      // Not open in this worker.
    }
  }
  lock(Deno, internalKey, undefined);

  // Storage that outlives the sandbox and is keyed by the main module, not
  // by provider or profile (the Cache API, localStorage): gone, so nothing
  // one provider stores is read by another provider or profile.
  for (const name of ["caches", "localStorage", "sessionStorage"]) {
    lockGetter(globalThis, name, () => undefined);
  }

  const terminal = refuse(
    "use the terminal",
    "prompts and input belong to the host; write to the log with console or log()",
  );
  const stdin = Object.freeze({
    read: terminal,
    readSync: terminal,
    setRaw: terminal,
    close: terminal,
    isTerminal: (): boolean => false,
    get readable(): never {
      return terminal();
    },
  });
  const writer = (level: LogLevel) =>
    Object.freeze({
      write: (p: Uint8Array): Promise<number> =>
        Promise.resolve(forward(level, p)),
      writeSync: (p: Uint8Array): number => forward(level, p),
      isTerminal: (): boolean => false,
      close: (): void => {},
      get writable(): WritableStream<Uint8Array> {
        return new WritableStream<Uint8Array>({
          write(chunk): void {
            forward(level, chunk);
          },
        });
      },
    });
  for (const name of ["prompt", "confirm", "alert"]) {
    lock(
      globalThis,
      name,
      refuse(`call ${name}()`, "prompts belong to the host"),
    );
  }

  const signals = refuse(
    "send or handle signals",
    "signals belong to the host process, which may serve other providers and profiles",
  );
  const exit = refuse(
    "end the process",
    "its host decides when it stops; throw an error to fail a call",
  );
  lockAll(Deno, {
    stdin,
    stdout: writer("info"),
    stderr: writer("warn"),
    kill: signals,
    addSignalListener: signals,
    removeSignalListener: signals,
    exit,
    chdir: refuse(
      "change the working directory",
      "it belongs to the host process",
    ),
  });

  const envChange = refuse(
    "change environment variables",
    "the environment belongs to the host process; read variables with getSecret()",
  );
  try {
    lockProcessEnvironment(envChange);
  } catch {
    // Already locked.
  }
  const permissions = Deno.permissions;
  lockAll(permissions, {
    request: (desc: Deno.PermissionDescriptor) => permissions.query(desc),
    requestSync: (d: Deno.PermissionDescriptor) => permissions.querySync(d),
  });

  // node:process: the same process-wide powers by another route, taken away
  // when Deno's Node layer evaluates it (by any route: the global, an import,
  // require), not before: loading it costs each start ~14 ms CPU and ~2 MB.
  // Its evaluation ends by reading `__nodeBootstrapArgs` (Deno 2.9); the
  // object is complete a microtask later, before an `import()` of it resolves;
  // the global is taken away before it is returned. Code at the top level of
  // a module importing it statically runs before. Without the hook: now.
  const lazyProcess = Object.getOwnPropertyDescriptor(globalThis, "process");
  const hook = Object.getOwnPropertyDescriptor(
    internals ?? {},
    "__nodeBootstrapArgs",
  );
  let hardened: Record<string, unknown> | undefined;
  const hardenProcess = (): Record<string, unknown> => {
    if (hardened !== undefined) return hardened;
    const proc = hardened = (lazyProcess?.get?.call(globalThis) ??
      lazyProcess?.value) as Record<string, unknown>;
    lockAll(proc, { kill: signals, exit, reallyExit: exit });
    const guardedEnv = new Proxy(proc.env as object, {
      set: envChange,
      defineProperty: envChange,
      deleteProperty: envChange,
    });
    lockGetter(proc, "env", () => guardedEnv);
    const stdinStub = new Proxy({}, {
      get: (_target, key): unknown => key === "isTTY" ? false : terminal,
    });
    function chain(this: unknown): unknown {
      return this;
    }
    const streamStub = (level: LogLevel) =>
      Object.freeze({
        isTTY: false,
        columns: 80,
        write(chunk: unknown, ...rest: unknown[]): boolean {
          forward(level, chunk);
          const callback = rest.find((r) => typeof r === "function");
          if (callback) queueMicrotask(callback as () => void);
          return true;
        },
        on: chain,
        once: chain,
        off: chain,
        end(): void {},
      });
    const stubs = [stdinStub, streamStub("info"), streamStub("warn")];
    for (const [i, name] of ["stdin", "stdout", "stderr"].entries()) {
      lockGetter(proc, name, () => stubs[i]);
    }
    return proc;
  };
  if (hook?.configurable !== true || !("value" in hook)) hardenProcess();
  else {
    Object.defineProperty(internals, "__nodeBootstrapArgs", {
      get: (): unknown => (queueMicrotask(hardenProcess), hook.value),
    });
    if (lazyProcess?.configurable === true && lazyProcess.get !== undefined) {
      Object.defineProperty(globalThis, "process", { get: hardenProcess });
    }
  }

  // Denials: report the first of each, rethrow unchanged.
  markDenialsReportedByHost();
  const reported = new Set<string>();
  const report = (error: unknown): void => {
    if (!isPermissionDenial(error) || !(error instanceof Error)) return;
    if (reported.has(error.message) || reported.size >= 256) return;
    reported.add(error.message);
    try {
      hooks.denied(error);
    } catch {
      // Reporting never changes what the provider sees.
    }
  };
  const wrap = (fn: AnyFunction): AnyFunction =>
    function (this: unknown, ...args: unknown[]): unknown {
      try {
        const result = fn.apply(this, args);
        if (result instanceof Promise) {
          return result.catch((error: unknown) => {
            report(error);
            throw error;
          });
        }
        return result;
      } catch (error) {
        report(error);
        throw error;
      }
    };
  const fetch = globalThis.fetch;
  lock(globalThis, "fetch", wrap(fetch as unknown as AnyFunction));
  // Only data properties: reading a lazily loaded member of the Deno
  // namespace would load its module in every worker.
  const namespace = Deno as unknown as Record<string, unknown>;
  for (const key of REPORTED_FUNCTIONS) {
    const descriptor = Object.getOwnPropertyDescriptor(namespace, key);
    if (
      descriptor === undefined || !descriptor.configurable ||
      typeof descriptor.value !== "function"
    ) continue;
    Object.defineProperty(namespace, key, {
      ...descriptor,
      value: wrap(descriptor.value as AnyFunction),
    });
  }
}
