// Runs every bench once and renders the tables of BENCHMARKS.md from that
// one run:
//
//   ./tools/deno run --allow-read --allow-write --allow-env --allow-run --allow-sys bench/_report.ts [--write] [--save <dir>] [--from <dir>]
//
// - runs `deno task bench --json` with HERMES_BENCH_OUT set, so the benches
//   also append their samples and figures (bench/_harness.ts `record()`);
//   the benches' own output goes to stderr as it comes;
// - `--save <dir>`: keeps the raw outputs (bench.json, records.jsonl) there;
//   `--from <dir>`: renders saved outputs instead of running; `--only
//   a_bench.ts,b_bench.ts`: runs those files only (with the task's flags);
//   with `--write`, only their blocks and summary rows are replaced, and
//   the `partial` block says which run they come from;
// - prints the markdown blocks, or with `--write` replaces each block of
//   BENCHMARKS.md between `<!-- bench:NAME -->` and `<!-- /bench:NAME -->`
//   (the prose around them is left alone).
//
// Figures: a bench that records its samples (the `benchmark()` wrapper) is
// summarised by the median of its samples; the others (nanosecond-scale
// `Deno.bench` loops) by deno bench's average. A ratio divides two figures
// of the same run.
import { join } from "node:path";
import { DENO_JSON, median, ROOT } from "./_harness.ts";

// ---------------------------------------------------------------------------
// Inputs
// ---------------------------------------------------------------------------

interface BenchStats {
  n: number;
  min: number;
  max: number;
  avg: number;
  p75: number;
  p99: number;
}

interface BenchEntry {
  origin: string;
  group: string | null;
  name: string;
  baseline: boolean;
  results: ({ ok: BenchStats } | { failed: unknown })[];
}

interface BenchJson {
  runtime: string;
  cpu: string;
  benches: BenchEntry[];
}

type RecordLine = { id: string } & Record<string, unknown>;

const args = [...Deno.args];
function flag(name: string): boolean {
  const i = args.indexOf(name);
  if (i < 0) return false;
  args.splice(i, 1);
  return true;
}
function option(name: string): string | undefined {
  const i = args.indexOf(name);
  if (i < 0) return undefined;
  const value = args[i + 1];
  if (!value) throw new Error(`${name} needs a directory`);
  args.splice(i, 2);
  return value;
}
const write = flag("--write");
const saveDir = option("--save");
const fromDir = option("--from");
/** `--only a_bench.ts,b_bench.ts`: those files only (to try the report). */
const only = option("--only")?.split(",");
if (args.length > 0) throw new Error(`unknown arguments: ${args.join(" ")}`);

/** The `bench` task's command line, from deno.json. */
function benchTask(): string {
  const config = JSON.parse(Deno.readTextFileSync(DENO_JSON)) as {
    tasks?: Record<string, string>;
  };
  const line = config.tasks?.bench;
  if (!line) throw new Error(`${DENO_JSON} has no "bench" task`);
  return line;
}

function words(line: string): string[] {
  return line.trim().split(/\s+/);
}

/** The JSON document deno bench printed after the benches' own lines. */
function parseBenchJson(stdout: string): BenchJson {
  const at = stdout.search(/^\{\s*\n\s*"version"/m);
  if (at < 0) {
    throw new Error(
      "no deno bench JSON in the output (did the run stop early?)",
    );
  }
  return JSON.parse(stdout.slice(at)) as BenchJson;
}

async function run(): Promise<
  { json: BenchJson; records: RecordLine[]; meta: Machine }
> {
  const dir = saveDir ?? await Deno.makeTempDir({ prefix: "hermes_report_" });
  await Deno.mkdir(dir, { recursive: true });
  const recordsPath = join(dir, "records.jsonl");
  await Deno.writeTextFile(recordsPath, "");
  const started = performance.now();
  const benchArgs = only
    ? [
      // The task's last command (`deno task deps:test && deno bench …`).
      ...words(benchTask().split("&&").at(-1)!).slice(1, -1),
      "--json",
      ...only.map((f) => `bench/${f}`),
    ]
    : ["task", "bench", "--json"];
  console.error(`bench/_report.ts: running deno ${benchArgs.join(" ")} …`);
  const child = new Deno.Command(Deno.execPath(), {
    args: benchArgs,
    cwd: ROOT,
    env: { HERMES_BENCH_OUT: recordsPath, NO_COLOR: "1" },
    stdout: "piped",
    stderr: "inherit",
  }).spawn();
  const output = await child.output();
  const stdout = new TextDecoder().decode(output.stdout);
  await Deno.writeTextFile(join(dir, "bench.out"), stdout);
  console.error(
    `bench/_report.ts: deno task bench exited with ${output.code} after ${
      ((performance.now() - started) / 1000).toFixed(0)
    } s; raw output in ${dir}`,
  );
  const json = parseBenchJson(stdout);
  await Deno.writeTextFile(
    join(dir, "bench.json"),
    JSON.stringify(json, null, 2),
  );
  const meta = machine(json, (performance.now() - started) / 1000);
  await Deno.writeTextFile(join(dir, "meta.json"), JSON.stringify(meta));
  return {
    json,
    records: readRecords(await Deno.readTextFile(recordsPath)),
    meta,
  };
}

function readRecords(text: string): RecordLine[] {
  return text.split("\n").filter((l) => l.trim() !== "").map((l) =>
    JSON.parse(l) as RecordLine
  );
}

interface Machine {
  date: string;
  runtime: string;
  cpu: string;
  cores: number;
  memoryGiB: number;
  seconds: number;
}

function machine(json: BenchJson, seconds: number): Machine {
  let memoryGiB = Number.NaN;
  try {
    memoryGiB = Deno.systemMemoryInfo().total / 1024 ** 3;
  } catch {
    // --allow-sys missing
  }
  return {
    date: new Date().toISOString().slice(0, 10),
    runtime: json.runtime,
    cpu: json.cpu,
    cores: navigator.hardwareConcurrency,
    memoryGiB,
    seconds,
  };
}

const input = fromDir
  ? {
    json: JSON.parse(
      await Deno.readTextFile(join(fromDir, "bench.json")),
    ) as BenchJson,
    records: readRecords(
      await Deno.readTextFile(join(fromDir, "records.jsonl")),
    ),
    meta: JSON.parse(
      await Deno.readTextFile(join(fromDir, "meta.json")),
    ) as Machine,
  }
  : await run();

// ---------------------------------------------------------------------------
// Lookups
// ---------------------------------------------------------------------------

const byId = new Map<string, BenchEntry>();
for (const bench of input.json.benches) {
  const id = bench.name.split(": ")[0]!;
  byId.set(id, bench);
}

const samples = new Map<string, number[]>();
const figures = new Map<string, RecordLine[]>();
for (const line of input.records) {
  if (typeof line.ms === "number" && Object.keys(line).length === 2) {
    let list = samples.get(line.id);
    if (!list) samples.set(line.id, list = []);
    list.push(line.ms);
  } else {
    let list = figures.get(line.id);
    if (!list) figures.set(line.id, list = []);
    list.push(line);
  }
}

function stats(id: string): BenchStats | undefined {
  const result = byId.get(id)?.results[0];
  return result && "ok" in result ? result.ok : undefined;
}

function failed(id: string): boolean {
  const result = byId.get(id)?.results[0];
  return result !== undefined && "failed" in result;
}

/** The figure of a bench, ms: median of its samples, else deno's average. */
function figure(id: string): number {
  if (failed(id)) return Number.NaN;
  const list = samples.get(id);
  if (list && list.length > 0) return median(list);
  const s = stats(id);
  return s ? s.avg / 1e6 : Number.NaN;
}

/** The median of a numeric field over an id's figure records. */
function field(id: string, name: string): number {
  const values = (figures.get(id) ?? []).map((r) => r[name]).filter((
    v,
  ): v is number => typeof v === "number");
  return median(values);
}

function first(id: string, name: string): unknown {
  return (figures.get(id) ?? []).find((r) => name in r)?.[name];
}

// ---------------------------------------------------------------------------
// Formatting
// ---------------------------------------------------------------------------

function ms(value: number): string {
  if (!Number.isFinite(value)) return "n/a";
  if (value < 0.001) return `${(value * 1e6).toFixed(0)} ns`;
  if (value < 1) return `${(value * 1000).toFixed(1)} µs`;
  if (value < 10) return `${value.toFixed(2)} ms`;
  if (value < 1000) return `${value.toFixed(0)} ms`;
  return `${(value / 1000).toFixed(2)} s`;
}

function times(value: number, digits = 2): string {
  return Number.isFinite(value) ? `${value.toFixed(digits)}×` : "n/a";
}

function mb(bytes: number): string {
  return Number.isFinite(bytes)
    ? `${(bytes / 1024 ** 2).toFixed(0)} MB`
    : "n/a";
}

function table(head: string[], rows: string[][]): string {
  const widths = head.map((h, i) =>
    Math.max(h.length, ...rows.map((r) => (r[i] ?? "").length))
  );
  const line = (cells: string[]) =>
    `| ${cells.map((c, i) => c.padEnd(widths[i]!)).join(" | ")} |`;
  return [
    line(head),
    `| ${widths.map((w) => "-".repeat(w)).join(" | ")} |`,
    ...rows.map(line),
  ].join("\n");
}

function verdict(value: number, target: number | undefined): string {
  if (target === undefined || !Number.isFinite(value)) return "";
  return value <= target ? "met" : "not met";
}

const FILE_OF: Record<string, string> = {
  startup: "startup_bench.ts",
  checkpoint: "checkpoint_memory_bench.ts",
  spill: "checkpoint_memory_bench.ts",
  honcho: "honcho_bench.ts",
  manager: "manager_bench.ts",
  sandbox: "plugins_bench.ts",
  plugins: "plugins_bench.ts",
  import: "import_bench.ts",
  durable: "import_durable_bench.ts",
  turn: "durable_turn_bench.ts",
  archive: "context_safety_bench.ts",
  surfaces: "surfaces_bench.ts",
};

/** The bench file each generated block of BENCHMARKS.md comes from. */
const BLOCK_FILES: Record<string, string> = {
  startup: "startup_bench.ts",
  checkpoint: "checkpoint_memory_bench.ts",
  honcho: "honcho_bench.ts",
  manager: "manager_bench.ts",
  sandbox: "plugins_bench.ts",
  import: "import_bench.ts",
  durable: "import_durable_bench.ts",
  turn: "durable_turn_bench.ts",
  context: "context_safety_bench.ts",
  surfaces: "surfaces_bench.ts",
};

function fileOf(id: string): string {
  return FILE_OF[id.split(".")[0]!] ?? "?";
}

// ---------------------------------------------------------------------------
// Blocks
// ---------------------------------------------------------------------------

const blocks: Record<string, string> = {};

const task = benchTask();
const benchFlags = task.replace(/^deno bench\s+/, "").replace(
  /\s+bench\/$/,
  "",
);

blocks.machine = [
  `Run on ${input.meta.date}: ${input.meta.runtime}, ${input.meta.cpu}, ${input.meta.cores} vCPU${
    Number.isFinite(input.meta.memoryGiB)
      ? `, ${input.meta.memoryGiB.toFixed(0)} GiB`
      : ""
  }, shared with other work. Every figure below comes from **one run** of \`./tools/deno run --allow-read --allow-write --allow-env --allow-run --allow-sys bench/_report.ts --write\`, which runs \`./tools/deno task bench --json\` (\`${task}\`)${
    Number.isFinite(input.meta.seconds)
      ? ` and took ${(input.meta.seconds / 60).toFixed(1)} minutes`
      : ""
  }. One bench file alone: \`./tools/deno bench ${benchFlags} bench/<file>\`.`,
].join("\n");

// --- summary ------------------------------------------------------------------

interface Headline {
  what: string;
  value: string;
  floor: string;
  ratio: number;
  target?: number;
  id: string;
}

const headlines: Headline[] = [];

/**
 * The median of per-sample ratios, each sample divided by the floor sample
 * taken just before it (`<id>.pair` records), or NaN when there are none.
 */
function pairedRatio(id: string): number {
  const pairs = (figures.get(`${id}.pair`) ?? []).filter((r) =>
    typeof r.ms === "number" && typeof r.floorMs === "number"
  );
  return median(pairs.map((r) => (r.ms as number) / (r.floorMs as number)));
}

function vsFloor(
  what: string,
  id: string,
  floorId: string,
  floorLabel: string,
  target?: number,
): void {
  const value = figure(id);
  const floor = figure(floorId);
  const paired = pairedRatio(id);
  headlines.push({
    what,
    value: ms(value),
    floor: `${floorLabel}: ${ms(floor)}`,
    ratio: Number.isFinite(paired) && !failed(id) ? paired : value / floor,
    target,
    id,
  });
}

vsFloor(
  "Worker load, minimal user provider, until ready (#9)",
  "startup.worker.load",
  "startup.worker.floor",
  "empty worker + 1 round trip",
  2,
);
vsFloor(
  "Worker load, bundled Honcho provider, until ready",
  "startup.worker.load_honcho",
  "startup.worker.floor",
  "empty worker + 1 round trip",
);
for (
  const [id, label, target] of [
    // Issue 22: 6× on a Honcho user's home, 4× with the built-in store only.
    [
      "startup.status.task",
      "`hermes memory status`, Honcho home, via `deno task hermes` (#22)",
      6,
    ],
    [
      "startup.status.direct",
      "`hermes memory status`, Honcho home, via the task's `deno run` (#22)",
      6,
    ],
    [
      "startup.status_builtin.task",
      "`hermes memory status`, built-in only, via `deno task hermes` (#22)",
      4,
    ],
    [
      "startup.status_builtin.direct",
      "`hermes memory status`, built-in only, via the task's `deno run` (#22)",
      4,
    ],
    ["startup.help.task", "`hermes --help` via `deno task hermes` (#9)", 3],
    [
      "startup.help.direct",
      "`hermes --help` via the task's `deno run` (#9)",
      3,
    ],
  ] as const
) {
  vsFloor(
    label,
    id,
    "startup.floor.deno_run",
    "bare `deno run` of an empty file",
    target,
  );
}

for (
  const [id, label] of [
    [
      "surfaces.dashboard",
      "`hermes memory dashboard` until its URL is printed",
    ],
    ["surfaces.mcp", "`hermes memory mcp` until the initialize response"],
    ["surfaces.mcp_tools", "`hermes memory mcp` until the first `tools/list`"],
  ] as const
) {
  vsFloor(label, id, "surfaces.status", "`hermes memory status`", 1.5);
}

{
  const id = "checkpoint.archive.100k";
  const floorId = "checkpoint.floor.100k";
  const json = field(id, "jsonBytes");
  const exact = (figures.get(id) ?? []).every((r) => r.exact === true);
  headlines.push({
    what: `Checkpoint peak RSS, 100,000 messages, whole process (× JSON size ${
      mb(json)
    }) (#9)`,
    value: `${mb(field(id, "peak"))}${exact ? "" : " (sampled)"}`,
    floor: `JSON.stringify + fsync: ${
      times(field(floorId, "peakOverJson"))
    }; holding the transcript: ${
      times(field("checkpoint.input.100k", "peakOverJson"))
    }`,
    ratio: field(id, "peakOverJson"),
    target: 1.5,
    id,
  });
  headlines.push({
    what:
      "Checkpoint peak RSS added to what the process held, 100,000 messages (× JSON size)",
    value: mb(field(id, "added")),
    floor: `JSON.stringify + fsync: ${times(field(floorId, "addedOverJson"))}`,
    ratio: field(id, "addedOverJson"),
    target: 1.5,
    id,
  });
  vsFloor(
    "Checkpoint time, 100,000 messages",
    id,
    floorId,
    "JSON.stringify + fsync",
  );
}

{
  const floor = figure("honcho.floor.fetch");
  for (
    const [side, label] of [
      ["provider", "Honcho: agent blocked per turn, HonchoMemoryProvider"],
      [
        "sdk_careful",
        "Honcho: agent blocked per turn, careful `@honcho-ai/sdk`",
      ],
      [
        "sdk_naive",
        "Honcho: agent blocked per turn, naive `@honcho-ai/sdk` (old baseline)",
      ],
    ] as const
  ) {
    const id = `honcho.workload.${side}`;
    const v = field(id, "blockedPerTurnMs");
    headlines.push({
      what: `${label} (20 turns, 200 ms latency)`,
      value: `${ms(v)} (turns 2–20: ${ms(field(id, "blockedPerLaterTurnMs"))})`,
      floor: `1 bare fetch round trip: ${ms(floor)}`,
      ratio: v / floor,
      id,
    });
  }
  const ours = field("honcho.workload.provider", "blockingMs");
  const careful = field("honcho.workload.sdk_careful", "blockingMs");
  const naive = field("honcho.workload.sdk_naive", "blockingMs");
  headlines.push({
    what:
      "Honcho: agent blocked, provider / careful SDK (20 turns incl. set-up)",
    value: `${ms(ours)} / ${ms(careful)}`,
    floor: `provider / naive SDK: ${times(ours / naive, 3)}`,
    ratio: ours / careful,
    id: "honcho.workload.provider",
  });
}

vsFloor(
  "Manager turn, varied text, 1 external provider",
  "manager.varied.manager",
  "manager.varied.direct",
  "direct provider calls",
);
vsFloor(
  "Manager turn after a 5 ms idle gap (paused turns)",
  "manager.paused.manager",
  "manager.paused.direct",
  "direct calls after the same gap",
);
vsFloor(
  "Manager, first 20 turns of a fresh process, mean per turn",
  "manager.fresh.manager.mean",
  "manager.fresh.direct.mean",
  "direct calls in a fresh process",
);
vsFloor(
  "Sandboxed turn (prefetch + syncTurn + queuePrefetch)",
  "sandbox.turn.sandboxed",
  "sandbox.turn.floor",
  "1 postMessage round trip + 2 posts",
);
for (
  const [id, label] of [
    ["import.cli", "Import 1,000 turns to durable, `hermes memory import`"],
    [
      "import.manager",
      "Import 1,000 turns to durable, manager + Honcho in-process",
    ],
  ] as const
) {
  const value = figure(id);
  const stored = field(id, "stored");
  const missing = Math.max(
    ...(figures.get(id) ?? []).map((r) => Number(r.missing)),
  );
  headlines.push({
    what: `${label} (50 ms latency)`,
    value: `${ms(value)}, ${
      ((stored / 2) / (value / 1000)).toFixed(0)
    } turns/s${
      missing > 0 ? `; up to ${missing} of 2,000 messages missing` : ""
    }`,
    floor: `20 bare fetch POSTs of 100: ${ms(figure("import.floor"))}`,
    ratio: value / figure("import.floor"),
    id,
  });
}

{
  const id = "durable.manager";
  const value = figure(id);
  headlines.push({
    what:
      "Import 1,000 turns until durable in the outbox, manager + Honcho (local server)",
    value: `${ms(value)}, ${(1000 / (value / 1000)).toFixed(0)} turns/s`,
    floor: `JSON.stringify + 1 write + fdatasync: ${
      ms(figure("durable.floor"))
    }`,
    ratio: value / figure("durable.floor"),
    id,
  });
}

blocks.summary = table(
  [
    "Figure",
    "Measured",
    "Floor (same run)",
    "Ratio",
    "Target",
    "Met?",
    "Bench id (file)",
  ],
  headlines.map((h) => [
    h.what,
    h.value,
    h.floor,
    times(h.ratio, h.ratio < 0.1 ? 4 : 2),
    h.target === undefined ? "—" : `≤ ${h.target}×`,
    verdict(h.ratio, h.target),
    `\`${h.id}\` (${fileOf(h.id)})`,
  ]),
);

// --- every bench ------------------------------------------------------------------

function benchRows(filter: (id: string) => boolean): string {
  const rows: string[][] = [];
  for (const bench of input.json.benches) {
    const id = bench.name.split(": ")[0]!;
    if (!filter(id)) continue;
    const s = stats(id);
    const list = samples.get(id);
    rows.push([
      `\`${id}\``,
      bench.name.slice(id.length + 2) || bench.name,
      failed(id) ? "FAILED" : list && list.length > 0 ? ms(median(list)) : "",
      s ? ms(s.avg / 1e6) : "",
      s ? ms(s.p75 / 1e6) : "",
      s ? `${ms(s.min / 1e6)} … ${ms(s.max / 1e6)}` : "",
      list ? String(list.length) : s ? `(${s.n})` : "",
    ]);
  }
  return table(
    [
      "id",
      "what",
      "median (samples)",
      "avg (deno)",
      "p75 (deno)",
      "min … max (deno)",
      "samples (deno's n)",
    ],
    rows,
  );
}

blocks.startup = benchRows((id) => id.startsWith("startup."));
blocks.sandbox = benchRows((id) =>
  id.startsWith("sandbox.") || id.startsWith("plugins.")
);
blocks.manager = benchRows((id) => id.startsWith("manager.")) + "\n\n" +
  table(
    [
      "fresh process, first 20 turns",
      "turn 1",
      "mean per turn",
      "median of turns 2–20",
      "framework import",
      "set-up",
      "final flush",
    ],
    (["direct", "manager"] as const).map((mode) => [
      mode === "direct"
        ? "direct provider calls"
        : "MemoryManager (1 external)",
      ms(figure(`manager.fresh.${mode}.turn1`)),
      ms(figure(`manager.fresh.${mode}.mean`)),
      ms(figure(`manager.fresh.${mode}.rest_median`)),
      ms(figure(`manager.fresh.${mode}.import`)),
      ms(figure(`manager.fresh.${mode}.setup`)),
      ms(figure(`manager.fresh.${mode}.flush`)),
    ]),
  );
blocks.durable = benchRows((id) => id.startsWith("durable."));
blocks.surfaces = benchRows((id) => id.startsWith("surfaces."));
blocks.turn = benchRows((id) => id.startsWith("turn."));
blocks.context = benchRows((id) =>
  id.startsWith("archive.") || id.startsWith("spill.5mb_")
);

{
  const rows: string[][] = [];
  for (
    const id of [
      "checkpoint.input.100k",
      "checkpoint.floor.100k",
      "checkpoint.archive.100k",
      "checkpoint.retry.10k",
      "spill.5mb",
    ]
  ) {
    if (!figures.has(id)) continue;
    const exact = (figures.get(id) ?? []).every((r) => r.exact === true);
    rows.push([
      `\`${id}\``,
      id.startsWith("checkpoint.input") ? "—" : ms(field(id, "ms")),
      mb(field(id, "jsonBytes")),
      `${mb(field(id, "rssBefore"))} (${
        times(field(id, "rssBefore") / field(id, "jsonBytes"))
      })`,
      `${mb(field(id, "peak"))} (${times(field(id, "peakOverJson"))})${
        exact ? "" : " sampled"
      }`,
      `${mb(field(id, "added"))} (${times(field(id, "addedOverJson"))})`,
      `${mb(field(id, "heapBefore"))} → ${mb(field(id, "heapPeak"))}`,
      String((figures.get(id) ?? []).length),
    ]);
  }
  blocks.checkpoint =
    benchRows((id) => id.startsWith("checkpoint.") || id === "spill.5mb") +
    "\n\n" + table(
      [
        "scenario",
        "time",
        "JSON size",
        "RSS before",
        "peak RSS",
        "added",
        "heapUsed before → sampled peak",
        "runs",
      ],
      rows,
    );
}

{
  const sides = [
    ["provider", "HonchoMemoryProvider"],
    ["sdk_careful", "careful `@honcho-ai/sdk`"],
    ["sdk_naive", "naive `@honcho-ai/sdk`"],
  ] as const;
  const row = (label: string, get: (id: string) => string) => [
    label,
    ...sides.map(([side]) => get(`honcho.workload.${side}`)),
  ];
  blocks.honcho =
    benchRows((id) =>
      id.startsWith("honcho.") && !id.startsWith("honcho.workload")
    ) + "\n\n" + table(
      ["20-turn workload, 1 s model call per turn", ...sides.map(([, l]) => l)],
      [
        row("session set-up return", (id) => ms(field(id, "initMs"))),
        row(
          "`prefetch` return, turn 1",
          (id) => ms(field(id, "prefetchTurn1Ms")),
        ),
        row(
          "`prefetch` return, turns 2–20 (median)",
          (id) => ms(field(id, "prefetchLaterMedianMs")),
        ),
        row(
          "`syncTurn` / write return, turns 2–20 (median)",
          (id) => ms(field(id, "syncLaterMedianMs")),
        ),
        row(
          "agent blocked per turn, turns 1–20",
          (id) => ms(field(id, "blockedPerTurnMs")),
        ),
        row(
          "agent blocked per turn, turns 2–20",
          (id) => ms(field(id, "blockedPerLaterTurnMs")),
        ),
        row("agent blocked, whole run", (id) => ms(field(id, "blockingMs"))),
        row(
          "requests at session start (set-up + turn-1 prefetch)",
          (id) => String(field(id, "sessionStartRequests")),
        ),
        row(
          "requests per later turn (mean)",
          (id) => field(id, "perTurnRequestsMean").toFixed(2),
        ),
        row("total requests", (id) => String(field(id, "requests"))),
        row(
          "wall time (until every write is stored)",
          (id) => ms(field(id, "wallMs")),
        ),
        row("OpenAPI violations", (id) => String(field(id, "violations"))),
      ],
    );
}

{
  const rows = (["import.floor", "import.manager", "import.cli"] as const).map(
    (id) => {
      const list = figures.get(id) ?? [];
      const value = figure(id);
      const stored = field(id, "stored");
      return [
        `\`${id}\``,
        failed(id) ? "FAILED" : ms(value),
        `${((stored / 2) / (value / 1000)).toFixed(0)}`,
        times(value / figure("import.floor")),
        list.map((r) => `${r.stored}/${Number(r.stored) + Number(r.missing)}`)
          .join(", "),
        String(Math.max(...list.map((r) => Number(r.duplicated)))),
        String(list.length),
      ];
    },
  );
  const command = first("import.cli", "skipped");
  blocks.import = table(
    [
      "id",
      "time to durable (median)",
      "turns/s",
      "× floor",
      "messages on the server, per run",
      "duplicated (max)",
      "runs",
    ],
    rows,
  ) + (typeof command === "string"
    ? `\n\n\`import.cli\` skipped: ${command}`
    : "");
}

// ---------------------------------------------------------------------------
// Output
// ---------------------------------------------------------------------------

/**
 * For a run of some files only (`--only`): the summary rows of the benches
 * that ran are new, every other row is kept as BENCHMARKS.md has it (rows
 * are matched by their bench id).
 */
function mergeSummary(old: string | undefined, fresh: string): string {
  if (old === undefined) return fresh;
  const idOf = (line: string) =>
    /\| `([^`]+)` \([^)]*\) *\|\s*$/.exec(line)?.[1];
  const ran = new Set(only ?? []);
  const kept = new Map<string, string[]>();
  for (const line of old.split("\n")) {
    const id = idOf(line);
    if (id !== undefined && !ran.has(fileOf(id))) {
      kept.set(id, [...(kept.get(id) ?? []), line]);
    }
  }
  const out: string[] = [];
  const used = new Set<string>();
  for (const line of fresh.split("\n")) {
    const id = idOf(line);
    if (id === undefined || ran.has(fileOf(id))) {
      out.push(line);
    } else if (!used.has(id)) {
      used.add(id);
      out.push(...(kept.get(id) ?? []));
    }
  }
  return out.join("\n");
}

if (write) {
  const path = join(ROOT, "BENCHMARKS.md");
  let text = await Deno.readTextFile(path);
  if (only) {
    // A partial run rewrites the blocks of the files it ran, their summary
    // rows and the note that says so; the rest stays from the full run.
    for (const name of Object.keys(blocks)) {
      const file = BLOCK_FILES[name];
      if (name !== "summary" && (file === undefined || !only.includes(file))) {
        delete blocks[name];
      }
    }
    const old = new RegExp(
      "<!-- bench:summary -->([\\s\\S]*?)<!-- /bench:summary -->",
    ).exec(text)?.[1]?.trim();
    blocks.summary = mergeSummary(old, blocks.summary!);
    blocks.partial = `The rows of ${
      only.map((f) => `\`${f}\``).join(", ")
    } and ${
      only.length === 1 ? "its table" : "their tables"
    } come from a later run of ${
      only.length === 1 ? "that file" : "those files"
    } alone on ${input.meta.date} (${input.meta.runtime}, ${input.meta.cores} vCPU${
      Number.isFinite(input.meta.seconds)
        ? `, ${(input.meta.seconds / 60).toFixed(1)} minutes`
        : ""
    }): \`./tools/deno run --allow-read --allow-write --allow-env --allow-run --allow-sys bench/_report.ts --only ${
      only.join(",")
    } --write\`; their ratios divide figures of that run.`;
  } else {
    blocks.partial = "";
  }
  for (const [name, body] of Object.entries(blocks)) {
    const re = new RegExp(
      `(<!-- bench:${name} -->)[\\s\\S]*?(<!-- /bench:${name} -->)`,
    );
    if (!re.test(text)) {
      console.error(`BENCHMARKS.md has no <!-- bench:${name} --> block`);
      continue;
    }
    text = text.replace(
      re,
      (_all, open: string, close: string) => `${open}\n\n${body}\n\n${close}`,
    );
  }
  await Deno.writeTextFile(path, text);
  // Keep `deno fmt --check` clean (the tables are re-aligned the same way).
  await new Deno.Command(Deno.execPath(), {
    args: ["fmt", "--quiet", path],
    cwd: ROOT,
  }).output();
  console.error(`bench/_report.ts: updated ${path}`);
} else {
  for (const [name, body] of Object.entries(blocks)) {
    console.log(`<!-- bench:${name} -->\n${body}\n<!-- /bench:${name} -->\n`);
  }
}
