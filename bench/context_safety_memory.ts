// Peak memory of the context-safety paths, one fresh process per scenario.
//
//   deno run --allow-read --allow-write --allow-env --allow-run bench/context_safety_memory.ts
//
// Method: the parent spawns `deno run` on this file once per scenario. The
// child builds its input, records Deno.memoryUsage() (rss, heapUsed) and the
// kernel's peak-RSS high-water mark (getrusage maxrss, read with
// node:process resourceUsage(); the same value as VmHWM in /proc/self/status) *before*
// the operation, runs it once while a 1 ms timer samples heapUsed, and then
// records the same values *after*. maxrss is monotone, so "peak RSS during the
// operation" = maxrss after (it is an upper bound that includes the input's
// own allocation); "added by the operation" = maxrss after - maxrss before
// (0 when the peak was set while building the input). heapUsed is sampled
// only when the event loop turns (between awaits), so its peak is a lower
// bound.
import process from "node:process";
import { ArchiveMemoryProvider } from "../plugins/memory/archive/mod.ts";
import {
  applyRecallSpill,
  recallSpillPolicyFromConfig,
} from "../src/context/prefetch_spill.ts";
import { syntheticTranscript } from "../tests/fixtures/archive_transcript.ts";

const MB = 1024 * 1024;
type Scenario = (
  home: string,
) => (() => Promise<void>) | Promise<() => Promise<void>>;

const scenarios: Record<string, Scenario> = {
  "checkpoint 10,000 messages (first)"(home) {
    const transcript = syntheticTranscript(10_000);
    const provider = new ArchiveMemoryProvider({
      hermesHome: home,
      sessionId: "m",
    });
    return async () => {
      await provider.onPreCompress(transcript, { requireCheckpoint: true });
    };
  },
  async "checkpoint 10,000 messages (retry, index rebuilt from disk)"(home) {
    const transcript = syntheticTranscript(10_000);
    await new ArchiveMemoryProvider({ hermesHome: home, sessionId: "m" })
      .onPreCompress(transcript, {});
    const provider = new ArchiveMemoryProvider({
      hermesHome: home,
      sessionId: "m",
    });
    return async () => {
      await provider.onPreCompress(transcript, { requireCheckpoint: true });
    };
  },
  "spill 5 MB recall"(home) {
    const recall = "memory entry: the user prefers tea over coffee.\n".repeat(
      Math.ceil(5_000_000 / 48),
    );
    const policy = recallSpillPolicyFromConfig({
      memory: { prefetch_spill_enabled: true },
    }, { hermesHome: home });
    return async () => {
      await applyRecallSpill(policy, recall, {
        source: "bench memory prefetch",
      });
    };
  },
};

/** The process's peak resident set size so far (getrusage maxrss), bytes. */
function vmHwm(): number {
  return process.resourceUsage().maxRSS * 1024;
}

async function child(name: string): Promise<void> {
  const home = await Deno.makeTempDir({ prefix: "hermes_mem_" });
  try {
    const run = await scenarios[name]!(home);
    const before = Deno.memoryUsage();
    const hwmBefore = vmHwm();
    let heapPeak = before.heapUsed;
    const timer = setInterval(() => {
      heapPeak = Math.max(heapPeak, Deno.memoryUsage().heapUsed);
    }, 1);
    const started = performance.now();
    await run();
    const ms = performance.now() - started;
    clearInterval(timer);
    const after = Deno.memoryUsage();
    heapPeak = Math.max(heapPeak, after.heapUsed);
    const hwmAfter = vmHwm();
    console.log(JSON.stringify({
      scenario: name,
      ms: Math.round(ms),
      rssBeforeMB: +(before.rss / MB).toFixed(1),
      rssAfterMB: +(after.rss / MB).toFixed(1),
      peakRssMB: +(hwmAfter / MB).toFixed(1),
      peakRssAddedMB: +((hwmAfter - hwmBefore) / MB).toFixed(1),
      heapUsedBeforeMB: +(before.heapUsed / MB).toFixed(1),
      heapUsedAfterMB: +(after.heapUsed / MB).toFixed(1),
      heapUsedPeakSampledMB: +(heapPeak / MB).toFixed(1),
    }));
  } finally {
    await Deno.remove(home, { recursive: true });
  }
}

if (import.meta.main) {
  const [name] = Deno.args;
  if (name) {
    await child(name);
  } else {
    for (const scenario of Object.keys(scenarios)) {
      const { stdout, success } = await new Deno.Command(Deno.execPath(), {
        args: [
          "run",
          "--allow-read",
          "--allow-write",
          "--allow-env",
          new URL(import.meta.url).pathname,
          scenario,
        ],
        stderr: "inherit",
      }).output();
      if (!success) throw new Error(`scenario failed: ${scenario}`);
      console.log(new TextDecoder().decode(stdout).trim());
    }
  }
}
