// The host side of the provider watchdog (`watchdog_process.ts`): one
// process per host, started at the first watch, which neither keeps the
// host alive nor is waited on.

import { readLines } from "./worker_protocol.ts";
import { denoCacheDir } from "../core/env.ts";
import { fileURLToPath } from "../_util/path.ts";

interface Watchdog {
  write(line: string): void;
  reports: Map<number, (reason: string) => void>;
}

/** `null`: none can run here (not Linux, or it could not start). */
let watchdog: Watchdog | null | undefined;

function startWatchdog(): Watchdog | null {
  if (Deno.build.os !== "linux") return null;
  const entry = new URL("./watchdog_process.ts", import.meta.url);
  const env: Record<string, string> = { NO_COLOR: "1" };
  const dir = denoCacheDir();
  if (dir !== undefined) env.DENO_DIR = dir;
  let child: Deno.ChildProcess;
  try {
    // All permissions: Deno reads /proc/<pid> only under --allow-all. It
    // runs framework code alone and reads nothing but the host's lines.
    child = new Deno.Command(Deno.execPath(), {
      args: [
        "run",
        "--quiet",
        "--no-prompt",
        "--allow-all",
        "--no-config",
        "--no-lock",
        entry.protocol === "file:" ? fileURLToPath(entry) : entry.href,
      ],
      stdin: "piped",
      stdout: "piped",
      stderr: "null",
      clearEnv: true,
      env,
    }).spawn();
  } catch {
    return null;
  }
  child.unref();
  const writer = child.stdin.getWriter();
  const started: Watchdog = {
    write: (line) =>
      void writer.write(new TextEncoder().encode(line)).catch(() => {}),
    reports: new Map(),
  };
  const reader = child.stdout.getReader();
  readLines(async () => (await reader.read()).value ?? null, (line) => {
    const space = line.indexOf(" ");
    started.reports.get(Number(line.slice(0, space)))?.(line.slice(space + 1));
    return true;
  }).catch(() => {}).finally(() => {
    // It ended (killed from outside?): the next watch starts another.
    if (watchdog === started) watchdog = undefined;
  });
  return started;
}

/**
 * Watches a provider process for a thread busy `limitMs` of CPU time with no
 * pause, and kills it when the host ends; `busy` gets the reason.
 *
 * @returns A function that stops watching, or `undefined` when no watchdog runs here.
 */
export function watchProcess(
  pid: number,
  limitMs: number,
  busy: (reason: string) => void,
): (() => void) | undefined {
  watchdog ??= startWatchdog();
  const current = watchdog;
  if (current === null) return undefined;
  current.reports.set(pid, busy);
  current.write(`+${pid} ${Math.max(1, Math.round(limitMs))}\n`);
  return () => {
    if (!current.reports.delete(pid)) return;
    current.write(`-${pid}\n`);
  };
}
