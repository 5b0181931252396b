// The sandbox protocol's carriers: a `deno run` child whose flags are its grant
// (stdout lines carry a token given before provider code ran), or a confined
// `Worker` in `deno compile` binaries.

import { fileURLToPath, join } from "../_util/path.ts";
import {
  denoRunFlags,
  type ProviderGrant,
  workerPermissions,
} from "./grant.ts";
import { errorText } from "../_util/error_text.ts";
import {
  checkLineBytes,
  encodeMessage,
  MAX_LINE_BYTES,
  readLines,
} from "./worker_protocol.ts";
import { getDefaultHermesRoot } from "../profile/hermes_home.ts";
import { denoCacheDir, readProcessEnv } from "../core/env.ts";

/**
 * How a provider's sandbox is carried.
 *
 * @category Plugins: discovery, loading, permissions
 */
export type SandboxTransport = "process" | "worker";

/**
 * One carrier of the sandbox protocol: sends host messages, delivers the
 * provider's, and says when the sandbox is gone.
 */
export interface ProviderChannel {
  readonly kind: SandboxTransport;
  /** Sends one message; throws a `TypeError` when it cannot cross. */
  send(message: unknown): void;
  /** Wires the receivers; called once by the protocol side. */
  listen(handlers: ChannelHandlers): void;
  /** Ends the sandbox at once (terminate the worker, kill the process). */
  close(): void;
  /** The sandbox process's id (`undefined` for a worker). */
  readonly pid?: number;
  /** Settles once the sandbox process has exited (a worker: at once). */
  readonly exited?: Promise<unknown>;
  /**
   * Has the host's watchdog (`watchdog_process.ts`) watch the whole sandbox process
   * for a busy thread; `busy` gets the reason before the host ends it.
   * Returns `false` when no watchdog can (not Linux, or none could start).
   */
  watch?(limitMs: number, busy: (reason: string) => void): boolean;
}

/** What a channel reports. */
export interface ChannelHandlers {
  message(data: unknown): void;
  violation(what: string): void;
  ended(reason: string): void;
  /** Whether no request waits for a reply (then the provider's output is bounded by {@linkcode IDLE_OUTPUT_PER_SECOND}). */
  idle?(): boolean;
}

/**
 * The most a provider process may send within one second while no request
 * waits (in characters of its lines): more ends it, so a flood of well-formed
 * lines costs the host no more than this.
 */
export const IDLE_OUTPUT_PER_SECOND = 8 * 1048576;

/** Whether this is a `deno compile` binary (which cannot start a `deno run` child with its own flags). */
export function isCompiledBinary(): boolean {
  const build = Deno.build as { standalone?: boolean };
  return build.standalone === true;
}

/** The transport a provider gets: `worker` in a `deno compile` binary, else `process`. */
export function chooseTransport(wanted?: SandboxTransport): SandboxTransport {
  if (wanted !== undefined) return wanted;
  return isCompiledBinary() ? "worker" : "process";
}

/**
 * Carries the protocol over a `Worker` running the bootstrap: the host
 * creates a `MessageChannel` and posts one port in a `connect` message;
 * anything posted on the worker's global scope comes from provider code.
 */
export function workerChannel(worker: Worker): ProviderChannel {
  const channel = new MessageChannel();
  const port = channel.port1;
  let connected = false;
  return {
    kind: "worker",
    send(message: unknown): void {
      port.postMessage(message);
    },
    listen(handlers: ChannelHandlers): void {
      port.onmessage = (event: MessageEvent<unknown>) =>
        handlers.message(event.data);
      port.onmessageerror = () =>
        handlers.violation("a message that cannot be read");
      worker.onmessage = () =>
        handlers.violation(
          "a message on its global scope (provider code calling postMessage)",
        );
      worker.onerror = (event: ErrorEvent) => {
        event.preventDefault();
        handlers.ended(`its sandbox worker failed: ${event.message}`);
      };
      worker.onmessageerror = () =>
        handlers.violation("a message that cannot be read");
      if (!connected) {
        connected = true;
        worker.postMessage({ t: "connect" }, [channel.port2]);
      }
    },
    close(): void {
      try {
        worker.terminate();
      } catch {
        // Already gone.
      }
      port.onmessage = null;
      port.close();
    },
  };
}

/** The default heap cap of a provider's process, in MiB. */
export const DEFAULT_HEAP_LIMIT_MB = 512;

function heapLimitMb(options: ProcessChannelOptions): number {
  return Math.max(16, Math.floor(options.heapLimitMb ?? DEFAULT_HEAP_LIMIT_MB));
}

/** Options of {@linkcode processChannel}. */
export interface ProcessChannelOptions {
  entry: URL;
  /** The provider's grant: exactly its permission flags. */
  grant: ProviderGrant;
  /** Whether the bootstrap graph itself needs npm (the full framework). */
  frameworkNpm: boolean;
  /** The V8 old-space cap of the child, in MiB (default `DEFAULT_HEAP_LIMIT_MB`). */
  heapLimitMb?: number;
}

/**
 * The flags that make the bootstrap resolve: locally the framework's
 * `deno.json` (lockfile untouched) and `--cached-only`; from a URL no config
 * (the working directory's is the host's), its import map unless on JSR,
 * and imports from its host.
 */
function frameworkFlags(entry: URL): string[] {
  const base = new URL("../../", entry);
  if (base.protocol === "file:") {
    return [
      "--cached-only",
      `--config=${fileURLToPath(new URL("deno.json", base))}`,
      "--no-lock",
    ];
  }
  const flags = ["--no-config", "--no-lock"];
  if (base.host !== "jsr.io") {
    flags.push(`--import-map=${new URL("deno.json", base).href}`);
  }
  return flags;
}

/** The grant plus imports from the framework's host when it is remote. */
function withFrameworkImport(grant: ProviderGrant, entry: URL): ProviderGrant {
  if (entry.protocol === "file:") return grant;
  if (grant.import.some((e) => e.value === entry.host)) return grant;
  return {
    ...grant,
    import: [...grant.import, { value: entry.host, from: "framework" }],
  };
}

/** Paths denied even if a grant covered them: secrets, settings, other profiles. */
function denyFlags(grant: ProviderGrant): string[] {
  const home = grant.hermesHome;
  let root: string;
  try {
    root = getDefaultHermesRoot();
  } catch {
    root = home;
  }
  const files = new Set<string>();
  for (const base of new Set([home, root])) {
    files.add(join(base, ".env"));
    files.add(join(base, "config.yaml"));
  }
  if (home === root) files.add(join(root, "profiles"));
  const list = [...files].filter((p) => !p.includes(","));
  if (list.length === 0) return [];
  return [`--deny-read=${list.join(",")}`, `--deny-write=${list.join(",")}`];
}

/**
 * The `deno run` arguments of a provider's sandbox process.
 *
 * @throws {TypeError} When a grant value holds a comma or a control character.
 */
export function processArgs(options: ProcessChannelOptions): string[] {
  const grant = options.grant;
  const npm = grant.npm || options.frameworkNpm;
  return [
    "run",
    "--quiet",
    "--no-prompt",
    ...(npm ? [] : ["--no-npm"]),
    `--v8-flags=--max-old-space-size=${heapLimitMb(options)}`,
    ...denoRunFlags(withFrameworkImport(grant, options.entry)),
    ...denyFlags(grant),
    ...frameworkFlags(options.entry),
    scriptArg(options.entry),
  ];
}

function scriptArg(url: URL): string {
  return url.protocol === "file:" ? fileURLToPath(url) : url.href;
}

/** The cleared environment of a child: the given (granted) names only. */
function processEnv(names: ProviderGrant["env"]): Record<string, string> {
  const env: Record<string, string> = {
    NO_COLOR: "1",
    DENO_NO_UPDATE_CHECK: "1",
  };
  // So the child finds the same module cache (its provider cannot read the
  // variable: it is not in its grant).
  const dir = denoCacheDir();
  if (dir !== undefined) env.DENO_DIR = dir;
  // Not readable by the provider (not granted); without it Deno reports a
  // program it may not run as "not found" instead of denying it.
  const path = readProcessEnv("PATH");
  if (path !== undefined) env.PATH = path;
  for (const entry of names) {
    const value = readProcessEnv(entry.value);
    if (value !== undefined) env[entry.value] = value;
  }
  return env;
}

/** The most of a child's stderr kept to explain its end. */
const STDERR_TAIL = 4096;

const encoder = new TextEncoder();

/** The host's one watchdog process (`watchdog_process.ts`); `null` where none runs (not Linux, or it cannot start). */
let watchdog:
  | { write(line: string): void; busy: Map<number, (why: string) => void> }
  | null
  | undefined;

/** Starts the watchdog for the first provider process; the host neither waits on it nor is kept alive by it. */
function startWatchdog(): typeof watchdog {
  if (Deno.build.os !== "linux") return null;
  let child: Deno.ChildProcess;
  try {
    // All permissions: Deno reads /proc/<pid> only under --allow-all. It
    // runs framework code alone (from the cache only: an --allow-all process
    // downloads nothing; _loaded_by_url.ts has it cached) and reads nothing
    // but the host's lines.
    child = new Deno.Command(Deno.execPath(), {
      args: [
        "run",
        "--quiet",
        "--no-prompt",
        "--cached-only",
        "--allow-all",
        "--no-config",
      ]
        .concat(scriptArg(new URL("./watchdog_process.ts", import.meta.url))),
      stdin: "piped",
      stdout: "piped",
      stderr: "null",
      clearEnv: true,
      env: processEnv([]),
    }).spawn();
  } catch {
    return null;
  }
  child.unref();
  const writer = child.stdin.getWriter();
  const reader = child.stdout.getReader();
  const started = {
    write: (line: string) => writer.write(encoder.encode(line)).catch(() => {}),
    busy: new Map<number, (why: string) => void>(),
  };
  readLines(async () => (await reader.read()).value ?? null, (line) => {
    const space = line.indexOf(" ");
    started.busy.get(Number(line.slice(0, space)))?.(line.slice(space + 1));
    return true;
  }).catch(() => {}).finally(() => {
    if (watchdog === started) watchdog = undefined; // The next start starts another.
  });
  return started;
}

function randomToken(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}

/**
 * Starts a provider's sandbox process; the protocol runs over its stdio.
 *
 * @throws {Error} When the process cannot be started (no `--allow-run`).
 */
export function processChannel(
  options: ProcessChannelOptions,
): ProviderChannel {
  const args = processArgs(options);
  const command = new Deno.Command(Deno.execPath(), {
    args,
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
    clearEnv: true,
    env: processEnv(options.grant.env),
  });
  let child: Deno.ChildProcess;
  try {
    child = command.spawn();
  } catch (error) {
    if (error instanceof Deno.errors.NotCapable) {
      throw new Deno.errors.NotCapable(
        `its sandbox process cannot be started: this process may not run ${Deno.execPath()} (${
          errorText(error)
        }); add --allow-run to the deno command of the host`,
      );
    }
    throw error;
  }
  const token = randomToken();
  const writer = child.stdin.getWriter();
  let closed = false;
  let handlers: ChannelHandlers | undefined;
  let stderrTail = "";
  let unwatch: (() => void) | undefined;
  const write = (text: string): void => {
    writer.write(encoder.encode(text)).catch(() => {
      // The child is gone; its exit is reported by `status`.
    });
  };
  // The token goes first: the bootstrap reads it before any provider code.
  write(`${token}\n`);
  // Few pipe writes: a one-way message (a cast, an answer) waits in `queued`
  // for the next request or the end of this macrotask, whichever comes first
  // (`setImmediate`: a 0 ms timer fires at the next millisecond, so the casts
  // of a turn would ride with the next call and delay its answer); a request
  // takes everything queued before it. One queue keeps the order the protocol
  // relies on (a drain or call runs after earlier casts).
  let queued = "";
  let flushTimer: ReturnType<typeof setImmediate> | undefined;
  const flush = (): void => {
    clearImmediate(flushTimer);
    flushTimer = undefined;
    if (queued !== "") write(queued);
    queued = "";
  };

  const readStdout = async (): Promise<void> => {
    const reader = child.stdout.getReader();
    const prefix = `${token} `;
    let [idleSince, idleOutput] = [0, 0];
    const end = await readLines(
      async () => (await reader.read()).value ?? null,
      (line) => {
        if (closed) return false;
        if (handlers?.idle?.()) {
          const now = performance.now();
          if (now - idleSince > 1000) [idleSince, idleOutput] = [now, 0];
          if ((idleOutput += line.length) > IDLE_OUTPUT_PER_SECOND) {
            handlers.violation(
              `more than ${
                IDLE_OUTPUT_PER_SECOND / 1048576
              } MiB of output within a second while no call was pending (IDLE_OUTPUT_PER_SECOND)`,
            );
            return false;
          }
        }
        if (!line.startsWith(prefix)) {
          handlers?.violation(
            "a line on its output without the protocol's token (provider code writing to its stdout)",
          );
          return false;
        }
        let data: unknown;
        try {
          data = JSON.parse(line.slice(prefix.length));
        } catch {
          handlers?.violation("a message that cannot be read");
          return false;
        }
        handlers?.message(data);
        return true;
      },
    ).catch(() => "end" as const); // The pipe broke: the exit explains it.
    if (end === "overlong" && !closed) {
      handlers?.violation(
        `a line longer than ${
          MAX_LINE_BYTES / 1048576
        } MiB, the longest the sandbox protocol reads (MAX_LINE_BYTES)`,
      );
    }
    // Whatever it writes after that costs the host nothing: it is not read.
  };
  const readStderr = async (): Promise<void> => {
    const decoder = new TextDecoder();
    try {
      for await (const chunk of child.stderr) {
        stderrTail = (stderrTail + decoder.decode(chunk, { stream: true }))
          .slice(-STDERR_TAIL);
      }
    } catch {
      // Gone.
    }
  };
  const reading = Promise.all([readStdout(), readStderr()]);
  child.status.then(async (status) => {
    unwatch?.();
    await reading;
    if (closed) return;
    closed = true;
    let reason: string;
    if (/out of memory|heap limit/i.test(stderrTail)) {
      reason = `its sandbox process ran out of memory (its heap is capped at ${
        heapLimitMb(options)
      } MB) and ended`;
    } else if (status.signal !== null) {
      reason = `its sandbox process was ended by ${status.signal}`;
    } else {
      const last = stderrTail.trim().split("\n").at(-1)?.trim() ?? "";
      reason = `its sandbox process exited with code ${status.code}${
        last ? ` (${JSON.stringify(last).slice(1, -1)})` : ""
      }`;
    }
    handlers?.ended(reason);
  });
  return {
    kind: "process",
    pid: child.pid,
    exited: child.status,
    send(message: unknown): void {
      if (closed) return;
      const line = encodeMessage(message);
      // Only a line that might be too long is measured.
      if (line.length > MAX_LINE_BYTES / 3) {
        checkLineBytes(encoder.encode(line).length);
      }
      queued += `${line}\n`;
      if (typeof (message as { id?: unknown }).id === "number") flush();
      else flushTimer ??= setImmediate(flush);
    },
    listen(given: ChannelHandlers): void {
      handlers = given;
    },
    watch(limitMs: number, busy: (reason: string) => void): boolean {
      const dog = watchdog ??= startWatchdog();
      if (!dog || closed) return false;
      dog.busy.set(child.pid, busy);
      dog.write(`+${child.pid} ${Math.max(1, Math.round(limitMs))}\n`);
      unwatch = () =>
        dog.busy.delete(child.pid) && dog.write(`-${child.pid}\n`);
      return true;
    },
    close(): void {
      if (closed) return;
      closed = true;
      unwatch?.();
      clearImmediate(flushTimer);
      try {
        child.kill("SIGKILL");
      } catch {
        // Already gone.
      }
      writer.close().catch(() => {});
    },
  };
}

/** Starts the sandbox of a provider on the given transport. */
export function openChannel(
  transport: SandboxTransport,
  options: ProcessChannelOptions,
  name: string,
): ProviderChannel {
  if (transport === "process") return processChannel(options);
  const worker = new Worker(options.entry, {
    type: "module",
    name,
    deno: { permissions: workerPermissions(options.grant) },
  });
  return workerChannel(worker);
}
