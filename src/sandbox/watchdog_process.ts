/**
 * The host's watchdog: one `deno run` per host (started by `transport.ts`)
 * that watches every provider process from outside, so neither check
 * depends on the provider's event loop or costs the host's main thread:
 *
 * - a thread of a provider process (its main thread or any Worker it
 *   started) that stays runnable for the provider's limit of CPU time with
 *   no pause is reported on stdout as `<pid> <reason>`, and the host ends
 *   that process. Runnable time comes from `/proc/<pid>/task/<tid>/schedstat`
 *   (on the CPU plus waiting for it): a busy loop is runnable all the time
 *   on a loaded machine too, and only its CPU time counts toward the limit;
 * - when the host ends in any way, its end of this process's stdin closes
 *   (no other process holds it), and every provider process watched is
 *   killed at once.
 *
 * Input lines: `+<pid> <limitMs>` watches, `-<pid>` forgets.
 *
 * @module
 */

import { readLines } from "./worker_protocol.ts";

/** Nanoseconds from schedstat, and since the thread last paused: CPU, wall, and the part of it neither (slept). */
type Thread = Record<"run" | "wait" | "streak" | "wall" | "slack", number>;

interface Watched {
  limitMs: number;
  /** The process's start time (field 22 of stat): a reused pid is not it. */
  start?: string;
  /** utime + stime in clock ticks, and `performance.now()` of the last look at its threads. */
  cpu: number;
  scanned: number;
  threads: Map<string, Thread>;
}

const TICK_MS = 250;
/**
 * A thread paused when it slept more than this share of the wall time since
 * its streak began, plus `SLACK_NS`: the kernel adds a wait to schedstat
 * only when the thread runs again, so one look can show less than it was.
 */
const SLEPT_SHARE = 0.2;
const SLACK_NS = 250e6;
const watched = new Map<number, Watched>();

/** A file under /proc, or "" when it is gone. */
function read(path: string): string {
  try {
    return Deno.readTextFileSync(`/proc/${path}`);
  } catch {
    return "";
  }
}

/** One look at a process: `null` when it is gone, a reason when it is busy. */
function check(pid: number, watch: Watched, now: number): string | null | void {
  const stat = read(`${pid}/stat`);
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  if (stat === "" || (watch.start ??= fields[19]) !== fields[19]) return null;
  const cpu = Number(fields[11]) + Number(fields[12]);
  // The cheap path of an idle provider: no clock tick of CPU since the last
  // look (the next look counts the wall time since this one as slept).
  if (cpu === watch.cpu) return;
  const wallNs = (now - watch.scanned) * 1e6;
  Object.assign(watch, { cpu, scanned: now });
  const threads = new Map<string, Thread>();
  for (const { name: tid } of Deno.readDirSync(`/proc/${pid}/task`)) {
    const [run, wait] = read(`${pid}/task/${tid}/schedstat`).split(" ")
      .map(Number) as [number, number];
    if (!(run >= 0)) continue; // It ended meanwhile.
    const was = watch.threads.get(tid);
    const thread = { run, wait, streak: 0, wall: 0, slack: 0 };
    if (was !== undefined) {
      const wall = was.wall + wallNs;
      const slack = Math.max(
        -SLACK_NS,
        was.slack + wallNs - (run - was.run) - (wait - was.wait),
      );
      if (slack <= SLEPT_SHARE * wall + SLACK_NS) {
        Object.assign(thread, {
          wall,
          slack,
          streak: was.streak + run - was.run,
        });
      }
    }
    threads.set(tid, thread);
    if (thread.streak >= watch.limitMs * 1e6) {
      // The main thread's words are those of the ping it replaced.
      const what = tid === String(pid)
        ? "stopped responding"
        : `kept a thread of it (${
          JSON.stringify(read(`${pid}/task/${tid}/comm`).trim())
        }, a Worker or the runtime) busy`;
      return `its sandbox process ${what} for ${watch.limitMs} ms of CPU time (a busy loop?) and was killed`;
    }
  }
  watch.threads = threads;
}

const ticking = setInterval(() => {
  const now = performance.now();
  for (const [pid, watch] of watched) {
    const verdict = check(pid, watch, now);
    if (verdict !== undefined) watched.delete(pid);
    if (verdict) console.log(`${pid} ${verdict}`);
  }
}, TICK_MS);

const buffer = new Uint8Array(4096);
await readLines(async () => {
  const n = await Deno.stdin.read(buffer);
  return n === null ? null : buffer.subarray(0, n);
}, (line) => {
  const [pid, limitMs] = line.slice(1).split(" ").map(Number) as number[];
  if (line[0] === "-") watched.delete(pid!);
  else if (pid! > 0 && limitMs! > 0) {
    const threads = new Map();
    watched.set(pid!, { limitMs: limitMs!, cpu: -1, scanned: 0, threads });
  }
  return true;
}).catch(() => {});
// The host is gone: so are its providers (and then this process).
clearInterval(ticking);
for (const pid of watched.keys()) {
  try {
    Deno.kill(pid, "SIGKILL");
  } catch {
    // Already gone.
  }
}
