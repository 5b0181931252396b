/**
 * The host's watchdog: one `deno run` per host (started by `watchdog.ts`)
 * that watches every provider process from outside, so neither check
 * depends on the provider's event loop or costs the host's main thread:
 *
 * - a thread of a provider process (its main thread or any Worker it
 *   started) that stays runnable for the provider's limit of CPU time with
 *   no pause is reported on stdout as `<pid> <reason>`, and the host ends
 *   that process. Runnable time comes from `/proc/<pid>/task/<tid>/schedstat`
 *   (on the CPU plus waiting for it): a busy loop is runnable all the time
 *   on a loaded machine too, and only its CPU time counts toward the limit;
 * - when the host ends in any way (its stdin here reaches its end, or this
 *   process is given a new parent), every provider process it watches is
 *   killed at once.
 *
 * Input lines: `+<pid> <limitMs>` watches, `-<pid>` forgets.
 *
 * @module
 */

import { readLines } from "./worker_protocol.ts";

interface Thread {
  /** Nanoseconds on the CPU and waiting for it, from schedstat. */
  run: number;
  wait: number;
  /** CPU nanoseconds since the thread last paused. */
  streak: number;
  /** Wall nanoseconds since then, and how much of it was neither (slept). */
  wall: number;
  slack: number;
}

interface Watched {
  limitMs: number;
  /** The process's start time (field 22 of stat): a reused pid is not it. */
  start?: string;
  /** utime + stime, in clock ticks. */
  cpu: number;
  /** `performance.now()` of the last look at its threads. */
  scanned: number;
  threads: Map<string, Thread>;
}

const TICK_MS = 250;
/**
 * A thread paused when it slept more than this share of the wall time since
 * its streak began, plus `SLACK_NS`: the kernel adds a wait to schedstat
 * only when the thread runs again, so one tick can show less than it was.
 */
const SLEPT_SHARE = 0.2;
const SLACK_NS = 250e6;
const watched = new Map<number, Watched>();
const parent = Deno.ppid;

function killAll(): never {
  for (const pid of watched.keys()) {
    try {
      Deno.kill(pid, "SIGKILL");
    } catch {
      // Already gone.
    }
  }
  Deno.exit(0);
}

function check(pid: number, watch: Watched, now: number): void {
  let fields: string[];
  try {
    const stat = Deno.readTextFileSync(`/proc/${pid}/stat`);
    fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  } catch {
    watched.delete(pid);
    return;
  }
  watch.start ??= fields[19];
  if (fields[19] !== watch.start) {
    watched.delete(pid);
    return;
  }
  const cpu = Number(fields[11]) + Number(fields[12]);
  // The cheap path of an idle provider: no clock tick of CPU since the last
  // look (the next look counts the wall time since this one as slept).
  if (cpu === watch.cpu) return;
  watch.cpu = cpu;
  const wallNs = (now - watch.scanned) * 1e6;
  watch.scanned = now;
  const threads = new Map<string, Thread>();
  for (const task of Deno.readDirSync(`/proc/${pid}/task`)) {
    let run: number, wait: number;
    try {
      [run, wait] = Deno.readTextFileSync(
        `/proc/${pid}/task/${task.name}/schedstat`,
      ).split(" ").map(Number) as [number, number];
    } catch {
      continue;
    }
    const before = watch.threads.get(task.name);
    const thread = { run, wait, streak: 0, wall: 0, slack: 0 };
    if (before !== undefined) {
      const wall = before.wall + wallNs;
      const slack = Math.max(
        -SLACK_NS,
        before.slack + wallNs - (run - before.run) - (wait - before.wait),
      );
      if (slack <= SLEPT_SHARE * wall + SLACK_NS) {
        Object.assign(thread, { wall, slack });
        thread.streak = before.streak + run - before.run;
      }
    }
    threads.set(task.name, thread);
    if (thread.streak >= watch.limitMs * 1e6) {
      let name = "";
      try {
        name = Deno.readTextFileSync(`/proc/${pid}/task/${task.name}/comm`)
          .trim();
      } catch {
        // Ended meanwhile.
      }
      // The main thread's words are those of the ping it replaced.
      const what = task.name === String(pid)
        ? "stopped responding"
        : `kept a thread of it (${
          JSON.stringify(name)
        }, a Worker or the runtime) busy`;
      console.log(
        `${pid} its sandbox process ${what} for ${watch.limitMs} ms of CPU time (a busy loop?) and was killed`,
      );
      watched.delete(pid);
      return;
    }
  }
  watch.threads = threads;
}

setInterval(() => {
  if (Deno.ppid !== parent) killAll();
  const now = performance.now();
  for (const [pid, watch] of watched) check(pid, watch, now);
}, TICK_MS);

const stdin = Deno.stdin;
const buffer = new Uint8Array(4096);
await readLines(async () => {
  const n = await stdin.read(buffer);
  return n === null ? null : buffer.subarray(0, n);
}, (line) => {
  const [pid, limitMs] = line.slice(1).split(" ").map(Number);
  if (line[0] === "+" && pid! > 0 && limitMs! > 0) {
    watched.set(pid!, {
      limitMs: limitMs!,
      cpu: -1,
      scanned: performance.now(),
      threads: new Map(),
    });
  } else if (line[0] === "-") watched.delete(pid!);
  return true;
}).catch(() => {});
// The host is gone: so are its providers.
killAll();
