// The provider sandbox's two transports side by side, each against its
// floor measured in the same run:
//
//   deno bench --lock=tests/deno.lock --no-prompt --allow-read --allow-write --allow-env --allow-net=127.0.0.1,localhost --allow-run --allow-sys bench/sandbox_transport_bench.ts
//
// - start: `loadMemoryProvider()` of a minimal user provider, its first
//   prefetch and its shutdown, on the process transport (its own `deno run`)
//   and on the worker transport, vs the floor: a bare `deno run` of an empty
//   module, from spawn to exit (goal for the process: at most 2x).
// - turn: one agent turn (prefetch awaited, syncTurn and queuePrefetch
//   posted) on each transport, vs the floor: one JSON line round trip
//   through a `deno run` child that echoes its stdin (bench/_echo_pipe.ts)
//   (goal for the process: at most 1.5x). Each transport first runs 520
//   untimed pairs (floor, then turn), printed as the cold start.
// - scale (printed and recorded when the file loads, before the benches):
//   private memory per provider (PSS from /proc/<pid>/smaps_rollup, read by
//   bench/_pss.ts under -A) with 1, 50 and 200 profiles loaded, process vs
//   worker transport; and the time to start 200 profiles' providers without
//   and with a live cap of 8. HERMES_BENCH_PROFILES=1,50 picks the counts;
//   HERMES_BENCH_PROFILES=0 skips this part.
//
// The ratios of the medians, and the medians of paired ratios (each
// iteration runs its floor just before it), are printed when the file ends.
import { join } from "node:path";
import type { MemoryProvider } from "@hermes/memory";
import {
  loadMemoryProvider,
  type SandboxedMemoryProvider,
  type SandboxTransport,
  setMaxLiveProviders,
} from "@hermes/memory/plugins";
import {
  benchmark,
  keepLogs,
  median,
  printRatiosAtEnd,
  providerImport,
  pss,
  record,
  runProcess,
  setup,
} from "./_harness.ts";

keepLogs("sandbox_transport_bench");

const root = await Deno.realPath(
  await Deno.makeTempDir({ prefix: "hermes_transport_bench_" }),
);
const noBundled = join(root, "no-bundled");
await Deno.mkdir(noBundled);
const emptyFile = join(root, "empty.ts");
await Deno.writeTextFile(emptyFile, "");

const MINIMAL = `import { MemoryProvider } from "${providerImport()}";
export class Minimal extends MemoryProvider {
  get name() { return "minimal"; }
  isAvailable() { return true; }
  initialize() {}
  getToolSchemas() { return []; }
  prefetch(query) { return "recalled: " + query; }
  syncTurn() {}
  queuePrefetch() {}
}
`;

/** A profile home with the minimal provider installed. */
async function profile(i: number): Promise<string> {
  const home = join(root, "profiles", `p${i}`);
  await Deno.mkdir(join(home, "plugins", "minimal"), { recursive: true });
  await Deno.writeTextFile(join(home, "plugins", "minimal", "mod.ts"), MINIMAL);
  return home;
}

async function load(
  home: string,
  transport: SandboxTransport,
): Promise<SandboxedMemoryProvider> {
  const provider = await loadMemoryProvider("minimal", {
    hermesHome: home,
    bundledDir: noBundled,
    config: {},
    hostCheck: false,
    transport,
  });
  if (provider === null) {
    throw new Error(
      'loadMemoryProvider("minimal") returned null (the log lines below say why)',
    );
  }
  return provider as SandboxedMemoryProvider;
}

const home0 = await profile(0);

// Each start and turn iteration also runs its floor just before it: the
// median of these paired ratios holds under a load that changes between
// the bench groups (the ratio of the groups' medians does not).
const pairs = new Map<string, number[]>();
function paired(label: string, ms: number, floorMs: number): void {
  const list = pairs.get(label) ?? [];
  pairs.set(label, list);
  list.push(ms / floorMs);
}
globalThis.addEventListener("unload", () => {
  const lines = [
    "\n== paired ratios (median of subject / floor, back to back) ==",
  ];
  for (const [label, list] of pairs) {
    lines.push(
      `  ${label}: ${median(list).toFixed(2)}× (${list.length} pairs)`,
    );
  }
  console.log(lines.join("\n"));
});

// ---------------------------------------------------------------------------
// Start
// ---------------------------------------------------------------------------

const START = "sandbox: start";
const START_FLOOR = "sandbox.start.floor";
const TURN_FLOOR = "sandbox.turn.floor";
benchmark({
  id: START_FLOOR,
  title: "floor: bare deno run of an empty module, spawn to exit",
  group: START,
  baseline: true,
  n: 20,
  warmup: 2,
  async fn(it) {
    await it.time(() =>
      runProcess(Deno.execPath(), ["run", "--quiet", emptyFile])
    );
  },
});
for (const transport of ["process", "worker"] as const) {
  benchmark({
    id: `sandbox.start.${transport}`,
    title:
      `loadMemoryProvider(minimal) + first prefetch + shutdown, ${transport} transport`,
    group: START,
    n: 20,
    warmup: 2,
    async fn(it) {
      const floor = await runProcess(Deno.execPath(), [
        "run",
        "--quiet",
        emptyFile,
      ]);
      const started = performance.now();
      await it.time(async () => {
        const provider = await load(home0, transport);
        await provider.prefetch("first", { sessionId: "bench" });
        await provider.shutdown();
      });
      paired(`start, ${transport}`, performance.now() - started, floor.ms);
    },
  });
}

// ---------------------------------------------------------------------------
// Turn
// ---------------------------------------------------------------------------

const echo = new Deno.Command(Deno.execPath(), {
  args: ["run", "--quiet", new URL("./_echo_pipe.ts", import.meta.url).href],
  stdin: "piped",
  stdout: "piped",
  stderr: "null",
}).spawn();
const echoWriter = echo.stdin.getWriter();
const echoReader = echo.stdout.getReader();
const encoder = new TextEncoder();
async function pipeRoundTrip(line: string): Promise<void> {
  await echoWriter.write(encoder.encode(`${line}\n`));
  let seen = 0;
  while (seen < line.length + 1) {
    const { value, done } = await echoReader.read();
    if (done) throw new Error("the echo child ended");
    seen += value.byteLength;
  }
}

async function turn(provider: MemoryProvider, i: number): Promise<void> {
  const query = `what did we say about item ${i}?`;
  await provider.prefetch(query, { sessionId: "bench" });
  await provider.syncTurn(query, "We said it was fine.", {
    sessionId: "bench",
  });
  await provider.queuePrefetch(query, { sessionId: "bench" });
}

const TURN = "sandbox: turn";
const TURN_N = 500;
const TURN_WARMUP = 20;
const request = JSON.stringify({
  t: "call",
  id: 1,
  method: "prefetch",
  args: ["what did we say about item 1?", { sessionId: "bench" }],
  context: { hermesHome: home0, multiplex: false },
});
benchmark({
  id: TURN_FLOOR,
  title: "floor: one JSON line round trip through a deno run pipe",
  group: TURN,
  baseline: true,
  n: TURN_N,
  warmup: TURN_WARMUP,
  fn: () => pipeRoundTrip(request),
});
const turnProviders = await setup(
  "load one provider per transport",
  async () => ({
    process: await load(home0, "process"),
    worker: await load(home0, "worker"),
  }),
);
let turnNumber = 0;
/** One floor round trip, timed (ms), once the previous turn's posted hooks have left. */
async function floorOnce(): Promise<number> {
  // They leave at the end of the turn's task: their write is not the floor's.
  await new Promise((resolve) => setImmediate(resolve));
  const started = performance.now();
  await pipeRoundTrip(request);
  return performance.now() - started;
}
/** One turn, timed (ms) as tightly as the floor. */
async function turnOnce(provider: MemoryProvider): Promise<number> {
  const started = performance.now();
  await turn(provider, turnNumber++);
  return performance.now() - started;
}
// The floor's group runs its round trips before the turns' groups: each
// transport first runs as many pairs (floor, then turn) untimed by the bench
// runner, so the turn's code is not timed colder than the floor's (V8
// optimizes a function once it has run often). Their paired ratios are
// printed too: the same pairs outside Deno.bench's runner.
await setup("warm each transport's turn as often as the floor", async () => {
  for (const transport of ["process", "worker"] as const) {
    for (let i = 0; i < TURN_N + TURN_WARMUP; i++) {
      const floorMs = await floorOnce();
      const turnMs = await turnOnce(turnProviders[transport]);
      paired(
        `turn, ${transport}, first ${TURN_N + TURN_WARMUP} (cold)`,
        turnMs,
        floorMs,
      );
    }
  }
});
for (const transport of ["process", "worker"] as const) {
  benchmark({
    id: `sandbox.turn.${transport}`,
    title:
      `one turn (prefetch + syncTurn + queuePrefetch), ${transport} transport`,
    group: TURN,
    n: TURN_N,
    warmup: TURN_WARMUP,
    async fn(it) {
      const floorMs = await floorOnce();
      let turnMs = 0;
      await it.time(async () => {
        turnMs = await turnOnce(turnProviders[transport]);
      });
      paired(`turn, ${transport}`, turnMs, floorMs);
    },
  });
}
globalThis.addEventListener("unload", () => {
  turnProviders.process.terminate();
  turnProviders.worker.terminate();
  echo.kill("SIGKILL");
});

// ---------------------------------------------------------------------------
// Scale: private memory per provider, and starting 200 profiles
// ---------------------------------------------------------------------------

printRatiosAtEnd("sandbox transport", [
  { label: "start, process", id: "sandbox.start.process", floor: START_FLOOR },
  { label: "start, worker", id: "sandbox.start.worker", floor: START_FLOOR },
  { label: "turn, process", id: "sandbox.turn.process", floor: TURN_FLOOR },
  { label: "turn, worker", id: "sandbox.turn.worker", floor: TURN_FLOOR },
]);

const counts = (Deno.env.get("HERMES_BENCH_PROFILES") ?? "1,50,200").split(
  ",",
).map(Number).filter((n) => n > 0);
if (counts.length > 0) await scale();

async function scale(): Promise<void> {
  const homes: string[] = [];
  for (let i = 0; i < Math.max(...counts); i++) homes.push(await profile(i));

  const rows: string[] = [];
  for (const count of counts) {
    for (const transport of ["process", "worker"] as const) {
      const [before] = await pss([Deno.pid]);
      const started = performance.now();
      const providers: SandboxedMemoryProvider[] = [];
      for (const home of homes.slice(0, count)) {
        const provider = await load(home, transport);
        // A later load of the same code starts nothing until its first call.
        await provider.prefetch("start", { sessionId: "bench" });
        providers.push(provider);
      }
      const startMs = performance.now() - started;
      let perProviderMb: number;
      if (transport === "process") {
        const each = await pss(providers.map((p) => p.pid!));
        perProviderMb = each.reduce((a, b) => a + b, 0) / count / 1024;
      } else {
        const [after] = await pss([Deno.pid]);
        perProviderMb = (after! - before!) / count / 1024;
      }
      for (const p of providers) await p.shutdown();
      record(`sandbox.scale.${transport}.${count}`, { perProviderMb, startMs });
      rows.push(
        `| ${count} | ${transport} | ${perProviderMb.toFixed(1)} MB | ${
          (startMs / 1000).toFixed(1)
        } s |`,
      );
    }
  }
  const capped = Math.max(...counts);
  {
    setMaxLiveProviders(8);
    const started = performance.now();
    const providers: SandboxedMemoryProvider[] = [];
    for (const home of homes.slice(0, capped)) {
      providers.push(await load(home, "process"));
    }
    const startMs = performance.now() - started;
    const live = providers.filter((p) => p.pid !== undefined);
    const total = (await pss(live.map((p) => p.pid!))).reduce(
      (a, b) => a + b,
      0,
    );
    for (const p of providers) await p.shutdown();
    setMaxLiveProviders(Infinity);
    record(`sandbox.scale.capped.${capped}`, {
      startMs,
      live: live.length,
      totalMb: total / 1024,
    });
    rows.push(
      `| ${capped}, live cap 8 | process | ${live.length} running, ${
        (total / 1024).toFixed(0)
      } MB in all | ${(startMs / 1000).toFixed(1)} s |`,
    );
  }
  console.log(
    [
      "| profiles | transport | private memory (PSS) per provider | start of all |",
      "| --- | --- | --- | --- |",
      ...rows,
    ].join("\n"),
  );
}
