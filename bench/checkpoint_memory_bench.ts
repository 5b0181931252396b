// Peak memory of a checkpoint at 100,000 messages (and of the retry and spill
// paths), one fresh process per iteration (bench/_memory_child.ts):
//
//   deno bench --no-prompt --allow-read --allow-write --allow-env --allow-run bench/checkpoint_memory_bench.ts
//
// The child builds the transcript (tests/fixtures/archive_transcript.ts, ~1,000
// characters per message, flat strings), collects the garbage, then runs one
// operation and reports its time and memory (see bench/_memory_child.ts for
// how each figure is read). Figures, each divided by the transcript's JSON
// size (`JSON.stringify(transcript)` in UTF-8):
//
// - peak RSS: the process's peak while the operation ran (the transcript it
//   holds included), exact when the operation set the process's high-water
//   mark;
// - added: that peak minus the RSS the operation started from: what the
//   operation itself needed.
//
// Floors from the same run: `JSON.stringify` of the transcript written and
// fsynced (the write floor), and a process that only builds and holds the
// transcript (what the input costs before anything is written).
import {
  benchmark,
  childEnv,
  DENO_JSON,
  keepLogs,
  median,
  mustSucceed,
  type ProcessResult,
  record,
  ROOT,
  setup,
} from "./_harness.ts";

keepLogs("checkpoint_memory_bench");

const MESSAGES = 100_000;
const MB = 1024 * 1024;
const CHILD = new URL("./_memory_child.ts", import.meta.url).pathname;

/** What one child reported. */
interface MemoryReport {
  scenario: string;
  messages: number;
  jsonBytes: number;
  ms: number;
  rssBefore: number;
  hwmBefore: number;
  hwmAfter: number;
  rssSampled: number;
  heapBefore: number;
  heapPeak: number;
}

/** The report plus the figures derived from it. */
interface MemoryFigures extends MemoryReport {
  /** Peak RSS while the operation ran (see `exact`). */
  peak: number;
  /** Whether `peak` is the kernel's high-water mark set by the operation. */
  exact: boolean;
  /** `peak - rssBefore`. */
  added: number;
}

const reports = new Map<string, MemoryFigures[]>();

/**
 * Runs the child; calls `b.start()` / `b.end()` when it prints `#start` /
 * `#end` (around its operation), so deno bench times the operation only.
 */
async function runMarked(
  args: string[],
  env: Record<string, string>,
  b?: Deno.BenchContext,
): Promise<ProcessResult> {
  const started = performance.now();
  const process = new Deno.Command(Deno.execPath(), {
    args,
    cwd: ROOT,
    clearEnv: true,
    env,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const stderr = new Response(process.stderr).text();
  let stdout = "";
  let pending = "";
  for await (
    const chunk of process.stdout.pipeThrough(new TextDecoderStream())
  ) {
    stdout += chunk;
    pending += chunk;
    let newline;
    while ((newline = pending.indexOf("\n")) >= 0) {
      const line = pending.slice(0, newline);
      pending = pending.slice(newline + 1);
      if (line === "#start") b?.start();
      if (line === "#end") b?.end();
    }
  }
  const { code } = await process.status;
  return {
    code,
    stdout,
    stderr: await stderr,
    ms: performance.now() - started,
  };
}

async function child(
  id: string,
  scenario: string,
  messages: number,
  b?: Deno.BenchContext,
): Promise<MemoryFigures> {
  const dir = await Deno.makeTempDir({ prefix: "hermes_memory_bench_" });
  try {
    const result = mustSucceed(
      `bench/_memory_child.ts ${scenario} ${messages}`,
      await runMarked(
        [
          "run",
          "--v8-flags=--expose-gc",
          "--no-prompt",
          `--config=${DENO_JSON}`,
          `--allow-read=${dir}`,
          `--allow-write=${dir}`,
          "--allow-env",
          CHILD,
          scenario,
          String(messages),
          dir,
        ],
        childEnv(dir),
        b,
      ),
    );
    const report = JSON.parse(
      result.stdout.trim().split("\n").at(-1)!,
    ) as MemoryReport;
    const exact = report.hwmAfter > report.hwmBefore;
    const peak = exact ? report.hwmAfter : report.rssSampled;
    const figures = { ...report, peak, exact, added: peak - report.rssBefore };
    let list = reports.get(id);
    if (!list) reports.set(id, list = []);
    list.push(figures);
    record(id, {
      ...figures,
      peakOverJson: peak / report.jsonBytes,
      addedOverJson: figures.added / report.jsonBytes,
    });
    return figures;
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

// What holding the transcript costs, before anything is written: once.
await setup(
  "the input-only process",
  () => child(`checkpoint.input.${MESSAGES / 1000}k`, "input", MESSAGES),
);

const GROUP = `checkpoint ${
  MESSAGES.toLocaleString("en")
} messages (fresh process per run)`;

benchmark({
  id: "checkpoint.floor.100k",
  title: "floor: JSON.stringify(transcript) written + fsync",
  group: GROUP,
  baseline: true,
  n: 1,
  warmup: 0,
  async fn(it) {
    it.sample(
      (await child("checkpoint.floor.100k", "floor", MESSAGES, it.b)).ms,
    );
  },
});

benchmark({
  id: "checkpoint.archive.100k",
  title: "archive provider: first checkpoint (onPreCompress, required)",
  group: GROUP,
  n: 1,
  warmup: 0,
  async fn(it) {
    const figures = await child(
      "checkpoint.archive.100k",
      "checkpoint",
      MESSAGES,
      it.b,
    );
    it.sample(figures.ms);
  },
});

const SMALL = "checkpoint retry and spill (fresh process per run)";
benchmark({
  id: "checkpoint.retry.10k",
  title: "archive provider: retry of 10,000 messages, index rebuilt from disk",
  group: SMALL,
  n: 1,
  warmup: 0,
  async fn(it) {
    it.sample((await child("checkpoint.retry.10k", "retry", 10_000, it.b)).ms);
  },
});

benchmark({
  id: "spill.5mb",
  title: "spill: a 5 MB recall to a private file",
  group: SMALL,
  n: 1,
  warmup: 0,
  async fn(it) {
    it.sample((await child("spill.5mb", "spill", 0, it.b)).ms);
  },
});

function mb(bytes: number): string {
  return `${(bytes / MB).toFixed(1)} MB`;
}

globalThis.addEventListener("unload", () => {
  const lines = [
    "\n== peak memory, medians over fresh processes (× the transcript's JSON size) ==",
  ];
  for (const [id, list] of reports) {
    const pick = (f: (r: MemoryFigures) => number) => median(list.map(f));
    const json = list[0]!.jsonBytes;
    const over = (bytes: number) => ` (${(bytes / json).toFixed(2)}×)`;
    lines.push(
      `  ${id}: ${pick((r) => r.ms).toFixed(0)} ms; JSON ${
        mb(json)
      }; RSS before ${mb(pick((r) => r.rssBefore))}${
        over(pick((r) => r.rssBefore))
      }; peak ${mb(pick((r) => r.peak))}${over(pick((r) => r.peak))}${
        list.every((r) => r.exact) ? "" : " (sampled, a lower bound)"
      }; added ${mb(pick((r) => r.added))}${
        over(pick((r) => r.added))
      }; heapUsed ${mb(pick((r) => r.heapBefore))} → ${
        mb(pick((r) => r.heapPeak))
      } (sampled peak); ${list.length} run(s)`,
    );
  }
  console.log(lines.join("\n"));
});
