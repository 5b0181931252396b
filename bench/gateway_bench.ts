// A gateway serving many profiles under a live cap of 8, each figure against
// a bare `deno run` measured in the same run:
//
//   deno bench --no-prompt --allow-read --allow-write --allow-env --allow-run --allow-sys bench/gateway_bench.ts
//
// - load (printed and recorded when the file loads): `loadMemoryProvider()`
//   of 200 profiles sharing one provider package, vs the median of bare
//   `deno run`s of an empty file (goal: within 25 of them);
// - paused turn (bench): 16 profiles take turns (prefetch awaited, syncTurn
//   and queuePrefetch posted), so each turn finds its profile paused under
//   the cap (goal: median within 2.5 bare runs);
// - memory (printed and recorded): PSS of each live provider process vs an
//   idle bare `deno run` waiting on stdin (goal: within 1.1×), and the
//   host's own PSS with 1, 50 and 200 profiles loaded (goal: flat). PSS is
//   read from /proc/<pid>/smaps_rollup by bench/_pss.ts under -A.
//   HERMES_BENCH_PROFILES=50 loads fewer profiles.
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import {
  loadMemoryProvider,
  type SandboxedMemoryProvider,
  setMaxLiveProviders,
} from "@hermes/memory/plugins";
import {
  benchmark,
  formatMs,
  keepLogs,
  median,
  printRatiosAtEnd,
  providerImport,
  pss,
  ratio,
  record,
  runProcess,
  setup,
} from "./_harness.ts";

keepLogs("gateway_bench");

const PROFILES = Number(Deno.env.get("HERMES_BENCH_PROFILES") ?? "200");
const CAP = 8;
const root = await Deno.realPath(
  await Deno.makeTempDir({ prefix: "hermes_gateway_bench_" }),
);
const noBundled = join(root, "no-bundled");
await Deno.mkdir(noBundled);
const emptyFile = join(root, "empty.ts");
await Deno.writeTextFile(emptyFile, "");
const idleFile = join(root, "idle.ts");
await Deno.writeTextFile(
  idleFile,
  "for await (const _ of Deno.stdin.readable);\n",
);
const packageDir = join(root, "package");
await Deno.mkdir(packageDir);
await Deno.writeTextFile(
  join(packageDir, "mod.ts"),
  `import { MemoryProvider } from "${providerImport()}";
class Minimal extends MemoryProvider {
  get name() { return "minimal"; }
  isAvailable() { return true; }
  initialize() {}
  getToolSchemas() { return []; }
  prefetch(query) { return "recalled: " + query; }
  syncTurn() {}
  queuePrefetch() {}
}
export default new Minimal();
`,
);
// One package every profile uses, as a gateway's profiles share Honcho.
const config = {
  memory: {
    packages: { minimal: pathToFileURL(join(packageDir, "mod.ts")).href },
  },
};

async function load(home: string): Promise<SandboxedMemoryProvider> {
  await Deno.mkdir(home, { recursive: true });
  const provider = await loadMemoryProvider("minimal", {
    hermesHome: home,
    bundledDir: noBundled,
    config,
    hostCheck: false,
    maxLiveProviders: CAP,
  });
  if (provider === null) {
    throw new Error(
      'loadMemoryProvider("minimal") returned null (the log lines below say why)',
    );
  }
  return provider as SandboxedMemoryProvider;
}

const bare = async () =>
  (await runProcess(Deno.execPath(), ["run", "--quiet", emptyFile])).ms;

// ---------------------------------------------------------------------------
// Load and memory (figures)
// ---------------------------------------------------------------------------

const figures = await setup("load 200 profiles, memory", async () => {
  const bareRuns: number[] = [];
  for (let i = 0; i < 10; i++) bareRuns.push(await bare());
  const bareMs = median(bareRuns);
  const idle = new Deno.Command(Deno.execPath(), {
    args: ["run", "--quiet", idleFile],
    stdin: "piped",
    stdout: "null",
    stderr: "null",
  }).spawn();
  await new Promise((resolve) => setTimeout(resolve, 500));
  const [idleKb] = await pss([idle.pid]);
  const hostKb: Record<number, number> = {};
  const providers: SandboxedMemoryProvider[] = [];
  // First loads create each profile's data folder (a directory fsync
  // each); the timed pass is a gateway (re)starting on existing profiles.
  let firstLoadMs = performance.now();
  for (let i = 0; i < PROFILES; i++) {
    await load(join(root, "profiles", `p${i}`));
  }
  firstLoadMs = performance.now() - firstLoadMs;
  let loadMs = 0;
  for (let i = 0; i < PROFILES; i++) {
    const started = performance.now();
    providers.push(await load(join(root, "profiles", `p${i}`)));
    loadMs += performance.now() - started;
    if ([1, 50, 200].includes(i + 1)) {
      hostKb[i + 1] = (await pss([Deno.pid]))[0]!;
    }
  }
  // Wake CAP of them: what a live provider process holds.
  for (const p of providers.slice(0, CAP)) await p.prefetch("q", {});
  const live = providers.filter((p) => p.pid !== undefined);
  const each = await pss(live.map((p) => p.pid!));
  const providerKb = median(each);
  idle.kill("SIGKILL");
  await idle.status;
  for (const p of providers) await p.shutdown();
  return {
    bareMs,
    loadMs,
    firstLoadMs,
    idleKb: idleKb!,
    providerKb,
    hostKb,
    live: live.length,
  };
});
record("gateway.load", {
  profiles: PROFILES,
  loadMs: figures.loadMs,
  firstLoadMs: figures.firstLoadMs,
  bareMs: figures.bareMs,
  bareRuns: figures.loadMs / figures.bareMs,
});
record("gateway.memory", {
  providerPssKb: figures.providerKb,
  idleBarePssKb: figures.idleKb,
  ratio: figures.providerKb / figures.idleKb,
  hostPssKb: figures.hostKb,
  live: figures.live,
});
console.log(
  [
    `== gateway (this run) ==`,
    `  load ${PROFILES} profiles, cap ${CAP}: ${formatMs(figures.loadMs)} = ${
      (figures.loadMs / figures.bareMs).toFixed(1)
    } bare runs (${
      formatMs(figures.bareMs)
    } each; goal ≤ 25); first loads, creating their data folders: ${
      formatMs(figures.firstLoadMs)
    }`,
    `  PSS per live provider process: ${
      (figures.providerKb / 1024).toFixed(1)
    } MB = ${
      ratio(figures.providerKb, figures.idleKb)
    } an idle bare deno run (${
      (figures.idleKb / 1024).toFixed(1)
    } MB; goal ≤ 1.1×); ${figures.live} live`,
    `  host PSS by profiles loaded: ${
      Object.entries(figures.hostKb).map(([n, kb]) =>
        `${n}: ${(kb / 1024).toFixed(1)} MB`
      ).join(", ")
    }`,
  ].join("\n"),
);

// ---------------------------------------------------------------------------
// A turn on a paused profile
// ---------------------------------------------------------------------------

const GROUP = "gateway: turn on a paused profile (cap 8)";
benchmark({
  id: "gateway.turn.floor",
  title: "floor: bare deno run of an empty module, spawn to exit",
  group: GROUP,
  baseline: true,
  n: 20,
  warmup: 2,
  fn: (it) => it.time(bare),
});
const turning = await setup("16 profiles taking turns", async () => {
  const list: SandboxedMemoryProvider[] = [];
  for (let i = 0; i < 2 * CAP; i++) {
    const p = await load(join(root, "turning", `t${i}`));
    await p.initialize("bench", { platform: "cli" });
    list.push(p);
  }
  return list;
});
let next = 0;
benchmark({
  id: "gateway.turn.paused",
  title: "one turn on a profile paused under the cap (16 profiles, cap 8)",
  group: GROUP,
  n: 64,
  warmup: 16,
  async fn(it) {
    const i = next++;
    const p = turning[i % turning.length]!;
    await it.time(async () => {
      const query = `what about item ${i}?`;
      await p.prefetch(query, { sessionId: "bench" });
      await p.syncTurn(query, "fine", { sessionId: "bench" });
      await p.queuePrefetch(query, { sessionId: "bench" });
    });
  },
});
printRatiosAtEnd("gateway (goal: paused turn ≤ 2.5× a bare run)", [
  {
    label: "paused turn",
    id: "gateway.turn.paused",
    floor: "gateway.turn.floor",
  },
]);
globalThis.addEventListener("unload", () => {
  for (const p of turning) p.terminate();
  setMaxLiveProviders(Infinity);
});
