// Shared by the bench files (the leading `_` keeps `deno bench` from running
// it as a bench):
//
// - a logger that keeps what the framework says instead of dropping it, and
//   prints the recent lines when a bench or its set-up fails, plus a one-line
//   count when the file ends (so a quiet table never hides a failure's cause);
// - `setup()` and `benchmark()`, which print the label, the error with its
//   stack and cause chain, and the log lines before rethrowing;
// - `record()`: one JSON line per sample or figure, appended to the file named
//   by HERMES_BENCH_OUT (set by bench/_report.ts; nothing is written without
//   it);
// - child-process helpers: where the repository, deno.json and the npm cache
//   are, and running a process with its wall time.
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { type Logger, type LogLevel, setLogger } from "../src/core/log.ts";

/** The repository root (no trailing slash). */
export const ROOT: string = fileURLToPath(new URL("..", import.meta.url))
  .replace(/\/$/, "");

/** The repository's deno.json. */
export const DENO_JSON: string = join(ROOT, "deno.json");

function env(name: string): string | undefined {
  try {
    return Deno.env.get(name);
  } catch {
    return undefined; // run without --allow-env
  }
}

/** Deno's cache; children with a scratch HOME must still find it. */
export const DENO_DIR: string = env("DENO_DIR") ??
  join(env("XDG_CACHE_HOME") ?? join(env("HOME") ?? "/root", ".cache"), "deno");

/**
 * The module a provider author imports the contract from: the slim
 * `@hermes/memory/provider` entry when deno.json exports one, else the
 * package root.
 */
export function providerImport(): string {
  const config = JSON.parse(Deno.readTextFileSync(DENO_JSON)) as {
    exports?: Record<string, string>;
  };
  return config.exports?.["./provider"]
    ? "@hermes/memory/provider"
    : "@hermes/memory";
}

// ---------------------------------------------------------------------------
// Logging
// ---------------------------------------------------------------------------

const KEEP_LINES = 50;

/** A logger that keeps the last lines and counts them by level. */
class KeepingLogger implements Logger {
  readonly lines: string[] = [];
  readonly counts: Record<LogLevel, number> = {
    debug: 0,
    info: 0,
    warn: 0,
    error: 0,
  };
  first: string | undefined;

  log(level: LogLevel, message: string): void {
    this.counts[level]++;
    const line = `${level}: ${message}`;
    if (level === "warn" || level === "error") this.first ??= line;
    this.lines.push(line);
    if (this.lines.length > KEEP_LINES) this.lines.shift();
  }
}

const logger = new KeepingLogger();
let installed = false;
let fileLabel = "bench";

/**
 * Installs the keeping logger for this bench file (instead of silencing the
 * framework) and, when the file ends, prints how many warnings and errors
 * it logged, with the first one.
 */
export function keepLogs(label: string): void {
  fileLabel = label;
  if (installed) return;
  installed = true;
  setLogger(logger);
  globalThis.addEventListener("unload", () => {
    const { warn, error } = logger.counts;
    if (warn + error > 0) {
      console.error(
        `[${fileLabel}] the framework logged ${warn} warning(s) and ${error} error(s) during the run; first: ${logger.first}`,
      );
    }
  });
}

/** The error, its stack and every `cause`, as text. */
export function describeError(error: unknown): string {
  const parts: string[] = [];
  let current: unknown = error;
  for (let depth = 0; current !== undefined && depth < 8; depth++) {
    if (current instanceof Error) {
      parts.push(current.stack ?? `${current.name}: ${current.message}`);
      current = (current as { cause?: unknown }).cause;
    } else {
      parts.push(String(current));
      current = undefined;
    }
    if (current !== undefined) parts.push("caused by:");
  }
  return parts.join("\n");
}

/** Prints why `label` failed: the error chain and the recent log lines. */
export function reportFailure(label: string, error: unknown): void {
  const lines = logger.lines.length > 0
    ? [
      `  last ${logger.lines.length} log line(s):`,
      ...logger.lines.map((l) => `    ${l}`),
    ]
    : ["  (the framework logged nothing)"];
  console.error(
    [`[${fileLabel}] ${label} failed:`, describeError(error), ...lines].join(
      "\n",
    ),
  );
}

/**
 * Runs a set-up step; when it fails, prints why before rethrowing.
 *
 * @param label What the step does, for the message.
 * @param fn The step.
 * @returns What the step returned.
 */
export async function setup<T>(
  label: string,
  fn: () => T | Promise<T>,
): Promise<T> {
  try {
    return await fn();
  } catch (error) {
    reportFailure(`set-up "${label}"`, error);
    throw error;
  }
}

// ---------------------------------------------------------------------------
// Records for bench/_report.ts
// ---------------------------------------------------------------------------

const OUT = env("HERMES_BENCH_OUT");

/**
 * Appends one JSON line `{id, ...fields}` to HERMES_BENCH_OUT (no-op when it
 * is unset).
 */
export function record(id: string, fields: Record<string, unknown>): void {
  if (!OUT) return;
  Deno.writeTextFileSync(OUT, JSON.stringify({ id, ...fields }) + "\n", {
    append: true,
  });
}

// ---------------------------------------------------------------------------
// Benchmarks
// ---------------------------------------------------------------------------

/** What a {@linkcode benchmark} iteration may use. */
export interface Iteration {
  /** The bench's id. */
  readonly id: string;
  /** The bench context. */
  readonly b: Deno.BenchContext;
  /**
   * Times `fn` as this iteration's measured part (the rest of the
   * iteration is set-up or clean-up) and records the sample.
   */
  time<T>(fn: () => T | Promise<T>): Promise<T>;
  /**
   * Records `ms` as this iteration's sample, for an iteration that marks
   * its timed part with `b.start()` / `b.end()` itself.
   */
  sample(ms: number): void;
}

/** Options of {@linkcode benchmark}. */
export interface BenchmarkOptions {
  /** Stable id, used by bench/_report.ts and BENCHMARKS.md. */
  id: string;
  /** What is measured, for the table. */
  title: string;
  group: string;
  baseline?: boolean;
  n?: number;
  warmup?: number;
  /** One iteration; without `it.time`, the whole function is timed. */
  fn(it: Iteration): unknown;
}

/** Samples per id, for the summaries the files print when they end. */
export const samples: Map<string, number[]> = new Map();

/** Adds one sample (ms) under `id`: kept for the end-of-file summary and recorded. */
export function addSample(id: string, ms: number): void {
  let list = samples.get(id);
  if (!list) samples.set(id, list = []);
  list.push(ms);
  record(id, { ms });
}

/**
 * `Deno.bench` named `<id>: <title>`, recording every sample (ms) and
 * printing why an iteration failed before deno bench reports it.
 */
export function benchmark(options: BenchmarkOptions): void {
  const name = `${options.id}: ${options.title}`;
  Deno.bench({
    name,
    group: options.group,
    baseline: options.baseline,
    n: options.n,
    warmup: options.warmup,
    async fn(b: Deno.BenchContext): Promise<void> {
      let timed = false;
      const it: Iteration = {
        id: options.id,
        b,
        async time<T>(fn: () => T | Promise<T>): Promise<T> {
          timed = true;
          b.start();
          const started = performance.now();
          try {
            return await fn();
          } finally {
            const ms = performance.now() - started;
            b.end();
            addSample(options.id, ms);
          }
        },
        sample(ms: number): void {
          timed = true;
          addSample(options.id, ms);
        },
      };
      const started = performance.now();
      try {
        await options.fn(it);
      } catch (error) {
        reportFailure(`bench "${name}"`, error);
        throw error;
      }
      if (!timed) addSample(options.id, performance.now() - started);
    },
  });
}

/** The median of `values` (NaN when empty). */
export function median(values: readonly number[]): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1
    ? sorted[mid]!
    : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/** Milliseconds for a table: µs below 1 ms. */
export function formatMs(ms: number): string {
  if (!Number.isFinite(ms)) return "n/a";
  if (ms < 0.001) return `${(ms * 1e6).toFixed(0)} ns`;
  if (ms < 1) return `${(ms * 1000).toFixed(1)} µs`;
  if (ms < 100) return `${ms.toFixed(1)} ms`;
  return `${ms.toFixed(0)} ms`;
}

/** `a / b` as `1.23×`. */
export function ratio(a: number, b: number): string {
  return Number.isFinite(a) && Number.isFinite(b) && b > 0
    ? `${(a / b).toFixed(2)}×`
    : "n/a";
}

/**
 * Prints, when the file ends, each line `label: median(id) (n) = ratio× the
 * floor's median` for the given pairs; what `deno bench bench/<file>` shows
 * without bench/_report.ts.
 */
export function printRatiosAtEnd(
  title: string,
  rows: readonly { label: string; id: string; floor: string }[],
): void {
  globalThis.addEventListener("unload", () => {
    const lines = [`\n== ${title} (medians of this run) ==`];
    for (const row of rows) {
      const value = median(samples.get(row.id) ?? []);
      const floor = median(samples.get(row.floor) ?? []);
      lines.push(
        `  ${row.label}: ${formatMs(value)} = ${
          ratio(value, floor)
        } the floor (${row.floor}: ${formatMs(floor)})`,
      );
    }
    console.log(lines.join("\n"));
  });
}

// ---------------------------------------------------------------------------
// Processes
// ---------------------------------------------------------------------------

/** A finished child process. */
export interface ProcessResult {
  code: number;
  stdout: string;
  stderr: string;
  /** Wall time from spawn to exit, ms. */
  ms: number;
  /** Set when the process was killed for running past `timeoutMs`. */
  timedOut?: boolean;
}

/** Options of {@linkcode runProcess}. */
export interface ProcessOptions {
  cwd?: string;
  /** The whole environment (the parent's is not inherited). */
  env?: Record<string, string>;
  stdin?: string;
  /** Kill the process (SIGKILL) after this long; see `timedOut`. */
  timeoutMs?: number;
}

/** Runs a process to its end (stdout, stderr piped) and times it. */
export async function runProcess(
  command: string,
  args: readonly string[],
  options: ProcessOptions = {},
): Promise<ProcessResult> {
  const started = performance.now();
  const child = new Deno.Command(command, {
    args: [...args],
    cwd: options.cwd,
    clearEnv: options.env !== undefined,
    env: options.env,
    stdin: options.stdin === undefined ? "null" : "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  let timedOut = false;
  const timer = options.timeoutMs === undefined ? undefined : setTimeout(() => {
    timedOut = true;
    child.kill("SIGKILL");
  }, options.timeoutMs);
  try {
    if (options.stdin !== undefined) {
      const writer = child.stdin.getWriter();
      await writer.write(new TextEncoder().encode(options.stdin));
      await writer.close();
    }
    const output = await child.output();
    const ms = performance.now() - started;
    const decoder = new TextDecoder();
    return {
      code: output.code,
      stdout: decoder.decode(output.stdout),
      stderr: decoder.decode(output.stderr),
      ms,
      ...(timedOut ? { timedOut } : {}),
    };
  } finally {
    clearTimeout(timer);
  }
}

/** Throws (with the command, exit code and output tail) unless it exited 0. */
export function mustSucceed(
  label: string,
  result: ProcessResult,
): ProcessResult {
  if (result.code === 0 && !result.timedOut) return result;
  const tail = (text: string) => text.trim().split("\n").slice(-30).join("\n");
  const how = result.timedOut
    ? `was killed after running ${(result.ms / 1000).toFixed(0)} s`
    : `exited with code ${result.code}`;
  throw new Error(
    `${label} ${how}\n--- stderr ---\n${tail(result.stderr)}\n--- stdout ---\n${
      tail(result.stdout)
    }`,
  );
}

/** A minimal environment for a child with `home` as HOME. */
export function childEnv(
  home: string,
  extra: Record<string, string> = {},
): Record<string, string> {
  return {
    HOME: home,
    PATH: "/usr/bin:/bin",
    DENO_DIR,
    NO_COLOR: "1",
    ...extra,
  };
}

/** Private memory (PSS, KiB) of each process, read by bench/_pss.ts under -A; NaN when gone. */
export async function pss(pids: number[]): Promise<number[]> {
  const result = await runProcess(Deno.execPath(), [
    "run",
    "-A",
    "--quiet",
    new URL("./_pss.ts", import.meta.url).href,
    ...pids.map(String),
  ]);
  if (result.code !== 0) throw new Error(`_pss.ts failed: ${result.stderr}`);
  const kb = JSON.parse(result.stdout) as Record<string, number>;
  return pids.map((pid) => kb[String(pid)] ?? NaN);
}
