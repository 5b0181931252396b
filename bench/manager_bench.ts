// One agent turn through the MemoryManager (onTurnStart, prefetchAll,
// syncAll, queuePrefetchAll) against calling the same in-process provider
// directly, the floor: the difference is what the manager adds per turn
// (skill-scaffold stripping, egress redaction, failure isolation, the FIFO
// background queue, the spill check).
//
//   deno bench --no-prompt --allow-read --allow-write --allow-env --allow-run bench/manager_bench.ts
//
// Groups:
// - "vs Hermes 0.19.0": the turn of issue 31 (onTurnStart, prefetchAll,
//   buildSystemPrompt, syncAll, queuePrefetchAll; the built-in store + one
//   trivial provider; 64 turns then flushPending, timed) against the shipped
//   0.19.0 MemoryManager doing the same in its own Python process
//   (bench/_hermes_peer.py; its flush_pending is not timed, the conservative
//   side: its worker thread runs during the timed turns), batches
//   interleaved; the ratio is the median of the paired batch ratios. The peer is the venv tools/hermes_venv.sh sets
//   up ($HERMES_VENV or its default); without it the bench says so and
//   divides by the recorded peer figure (RECORDED_PEER_US);
// - "same text": the old figure, kept for comparison and labelled: one user
//   string and one reply on every turn, which hits the one-entry cache in
//   `redactText`; flushPending() every 64 turns;
// - "varied text": text that differs on every turn (8 templates carrying the
//   turn number, 60–260 characters, one with a code block, one with a URL);
//   flushPending() every 64 turns; with and without a second (`builtin`)
//   provider;
// - "varied text, flushPending() every turn": the agent also waits for the
//   background queue on every turn;
// - "paused turns": a 5 ms idle gap before each turn (outside the timed
//   part), so the background work of one turn cannot be spread over the
//   next ones; timed once for what the agent awaits and once up to
//   flushPending() (all background work of the turn done);
// - "fresh process": a new `deno run` of bench/_manager_child.ts per
//   iteration, timing each of its first 20 turns (module import and set-up
//   apart); the deno bench row is the child's wall time, the per-turn
//   figures are printed when the file ends.
import {
  addSample,
  benchmark,
  childEnv,
  DENO_JSON,
  formatMs,
  keepLogs,
  median,
  mustSucceed,
  ratio,
  record,
  ROOT,
  runProcess,
  samples,
  setup,
} from "./_harness.ts";
import type { MemoryManager } from "@hermes/memory";
import {
  benchManager,
  directTurn,
  InProcessProvider,
  managerTurn,
  REPLIES,
  sameTurn,
  STORE_FILES,
  USERS,
  variedTurn,
} from "./_manager_workload.ts";

keepLogs("manager_bench");

const FLUSH_EVERY = 64;
const PAUSE_MS = 5;
const FRESH_TURNS = 20;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const direct = new InProcessProvider("inproc");
const [sameManager, variedManager, variedBoth, everyTurn, paused, pausedFlush] =
  await setup("managers", () =>
    Promise.all([
      benchManager(),
      benchManager(),
      benchManager({ builtin: true }),
      benchManager(),
      benchManager(),
      benchManager(),
    ]));

let turn = 0;

type Text = typeof variedTurn;

/** The direct-calls floor of a group (its baseline). */
function directBench(id: string, group: string, text: Text): void {
  Deno.bench({
    name: `${id}: direct provider calls`,
    group,
    baseline: true,
    fn: () => directTurn(direct, ++turn, text),
  });
}

/** A manager turn; flushPending() every `flushEvery` turns. */
function managerBench(
  id: string,
  title: string,
  group: string,
  options: { manager: MemoryManager; text: Text; flushEvery: number },
): void {
  Deno.bench({
    name: `${id}: ${title}`,
    group,
    async fn() {
      const t = ++turn;
      await managerTurn(options.manager, t, options.text);
      if (t % options.flushEvery === 0) await options.manager.flushPending();
    },
  });
}

// --- vs the shipped Hermes 0.19.0 MemoryManager ---------------------------

// The 0.19.0 manager's turn measured on this machine (issue 31: 94 µs), the
// divisor when the peer is not installed.
const RECORDED_PEER_US = 94;
const PEER_BATCH = 64;
const VENV = Deno.env.get("HERMES_VENV") ??
  `${
    Deno.env.get("XDG_CACHE_HOME") ?? `${Deno.env.get("HOME")}/.cache`
  }/hermes-memory/hermes-venv-0.19.0`;

const peerHome = await Deno.makeTempDir({ prefix: "hermes-peer-" });
await Deno.mkdir(`${peerHome}/memories`);
for (const [file, text] of Object.entries(STORE_FILES)) {
  await Deno.writeTextFile(`${peerHome}/memories/${file}`, text);
}
const storeManager = await setup(
  "manager with the built-in store",
  () => benchManager({ store: peerHome }),
);

/** The 0.19.0 peer process, or why there is none. */
async function startPeer(): Promise<
  { turns(first: number, n: number): Promise<number> } | string
> {
  const python = `${VENV}/bin/python`;
  try {
    await Deno.stat(python);
  } catch {
    return `Hermes 0.19.0 is not installed at ${VENV} (set it up with tools/hermes_venv.sh or point HERMES_VENV at one)`;
  }
  const templates = `${peerHome}/templates.json`;
  await Deno.writeTextFile(
    templates,
    JSON.stringify({ users: USERS, replies: REPLIES }),
  );
  const child = new Deno.Command(python, {
    args: [new URL("./_hermes_peer.py", import.meta.url).pathname, templates],
    env: { HERMES_HOME: peerHome, PYTHONDONTWRITEBYTECODE: "1" },
    stdin: "piped",
    stdout: "piped",
    stderr: "inherit",
  }).spawn();
  const writer = child.stdin.getWriter();
  const lines = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let buffered = "";
  const line = async (): Promise<string> => {
    while (!buffered.includes("\n")) {
      const { value, done } = await lines.read();
      if (done) throw new Error("the Hermes 0.19.0 peer exited");
      buffered += value;
    }
    const at = buffered.indexOf("\n");
    const first = buffered.slice(0, at);
    buffered = buffered.slice(at + 1);
    return first;
  };
  if (await line() !== "ready") throw new Error("the peer did not start");
  globalThis.addEventListener("unload", () => child.kill());
  return {
    async turns(first, n) {
      await writer.write(new TextEncoder().encode(`${first} ${n}\nflush\n`));
      const ns = Number(await line());
      await line();
      return ns / 1e6;
    },
  };
}

const peer = await setup("Hermes 0.19.0 peer", startPeer);
if (typeof peer === "string") {
  console.log(
    `manager.peer: ${peer}; dividing by the recorded ${RECORDED_PEER_US} µs per turn`,
  );
}

const PEER = "manager turn vs the shipped Hermes 0.19.0 MemoryManager";
benchmark({
  id: "manager.peer.manager",
  title:
    `MemoryManager, built-in store + 1 external, ${PEER_BATCH} turns + flush`,
  group: PEER,
  n: 60,
  warmup: 5,
  async fn(it) {
    const first = turn + 1;
    turn += PEER_BATCH;
    const hermes = typeof peer === "string"
      ? RECORDED_PEER_US * PEER_BATCH / 1000
      : await peer.turns(first, PEER_BATCH);
    const ours = await it.time(async () => {
      const started = performance.now();
      for (let t = first; t < first + PEER_BATCH; t++) {
        await managerTurn(storeManager, t, variedTurn, { systemPrompt: true });
      }
      await storeManager.flushPending();
      return performance.now() - started;
    });
    addSample("manager.peer.hermes", hermes / PEER_BATCH);
    addSample("manager.peer.ours", ours / PEER_BATCH);
    addSample("manager.peer.ratio", ours / hermes);
  },
});

// --- same text (the old, flattering figure) --------------------------------

const SAME = "manager turn, same text every turn (hits redactText's cache)";
directBench("manager.same.direct", SAME, sameTurn);
managerBench("manager.same.manager", "MemoryManager (1 external)", SAME, {
  manager: sameManager,
  text: sameTurn,
  flushEvery: FLUSH_EVERY,
});

// --- varied text ------------------------------------------------------------

const VARIED = "manager turn, varied text (flush every 64)";
directBench("manager.varied.direct", VARIED, variedTurn);
managerBench("manager.varied.manager", "MemoryManager (1 external)", VARIED, {
  manager: variedManager,
  text: variedTurn,
  flushEvery: FLUSH_EVERY,
});
managerBench(
  "manager.varied.builtin",
  "MemoryManager (builtin + 1 external)",
  VARIED,
  { manager: variedBoth, text: variedTurn, flushEvery: FLUSH_EVERY },
);

const EVERY = "manager turn, varied text, flushPending() every turn";
directBench("manager.flush.direct", EVERY, variedTurn);
managerBench(
  "manager.flush.manager",
  "MemoryManager (1 external), flushPending()",
  EVERY,
  { manager: everyTurn, text: variedTurn, flushEvery: 1 },
);

// --- paused turns -----------------------------------------------------------

const PAUSED = `manager turn after a ${PAUSE_MS} ms idle gap, varied text`;
benchmark({
  id: "manager.paused.direct",
  title: "direct provider calls",
  group: PAUSED,
  baseline: true,
  n: 200,
  warmup: 10,
  async fn(it) {
    await sleep(PAUSE_MS);
    const t = ++turn;
    await it.time(() => directTurn(direct, t, variedTurn));
  },
});
benchmark({
  id: "manager.paused.manager",
  title: "MemoryManager (1 external), what the agent awaits",
  group: PAUSED,
  n: 200,
  warmup: 10,
  async fn(it) {
    await sleep(PAUSE_MS);
    const t = ++turn;
    await it.time(() => managerTurn(paused, t, variedTurn));
    if (t % FLUSH_EVERY === 0) await paused.flushPending();
  },
});
benchmark({
  id: "manager.paused.manager_flushed",
  title: "MemoryManager (1 external), turn + flushPending()",
  group: PAUSED,
  n: 200,
  warmup: 10,
  async fn(it) {
    await sleep(PAUSE_MS);
    const t = ++turn;
    await it.time(async () => {
      await managerTurn(pausedFlush, t, variedTurn);
      await pausedFlush.flushPending();
    });
  },
});

// --- fresh process ----------------------------------------------------------

interface ChildReport {
  mode: "direct" | "manager";
  importMs: number;
  setupMs: number;
  turnMs: number[];
  flushMs: number;
}

const CHILD = new URL("./_manager_child.ts", import.meta.url).pathname;

async function freshProcess(mode: "direct" | "manager"): Promise<ChildReport> {
  const result = mustSucceed(
    `deno run bench/_manager_child.ts ${mode}`,
    await runProcess(Deno.execPath(), [
      "run",
      "--no-prompt",
      `--config=${DENO_JSON}`,
      "--allow-read",
      "--allow-env",
      CHILD,
      mode,
      String(FRESH_TURNS),
    ], { cwd: ROOT, env: childEnv(ROOT) }),
  );
  const report = JSON.parse(
    result.stdout.trim().split("\n").at(-1)!,
  ) as ChildReport;
  const first = report.turnMs[0]!;
  const mean = report.turnMs.reduce((a, b) => a + b, 0) / report.turnMs.length;
  addSample(`manager.fresh.${mode}.turn1`, first);
  addSample(`manager.fresh.${mode}.mean`, mean);
  addSample(
    `manager.fresh.${mode}.rest_median`,
    median(report.turnMs.slice(1)),
  );
  addSample(`manager.fresh.${mode}.import`, report.importMs);
  addSample(`manager.fresh.${mode}.setup`, report.setupMs);
  addSample(`manager.fresh.${mode}.flush`, report.flushMs);
  return report;
}

const FRESH = `fresh process: first ${FRESH_TURNS} turns in a new deno run`;
benchmark({
  id: "manager.fresh.direct.process",
  title: "child wall time, direct provider calls",
  group: FRESH,
  baseline: true,
  n: 6,
  warmup: 1,
  fn: () => freshProcess("direct"),
});
benchmark({
  id: "manager.fresh.manager.process",
  title: "child wall time, MemoryManager (1 external)",
  group: FRESH,
  n: 6,
  warmup: 1,
  fn: () => freshProcess("manager"),
});

globalThis.addEventListener("unload", () => {
  const m = (id: string) => median(samples.get(id) ?? []);
  const lines = [
    `\n== manager, medians of this run ==`,
    `  vs Hermes 0.19.0 (${
      typeof peer === "string" ? "recorded peer figure" : "same run"
    }): ours ${formatMs(m("manager.peer.ours"))}, 0.19.0 ${
      formatMs(m("manager.peer.hermes"))
    } per turn; median paired ratio ${
      m("manager.peer.ratio").toFixed(3)
    }× (goal ≤ 0.05×)`,
    `  paused turn: manager ${formatMs(m("manager.paused.manager"))} (${
      formatMs(m("manager.paused.manager_flushed"))
    } with flushPending), direct ${formatMs(m("manager.paused.direct"))}`,
    `  fresh process, first ${FRESH_TURNS} turns (per turn, median over ${
      samples.get("manager.fresh.manager.mean")?.length ?? 0
    } processes):`,
  ];
  for (const mode of ["direct", "manager"]) {
    lines.push(
      `    ${mode}: turn 1 ${
        formatMs(m(`manager.fresh.${mode}.turn1`))
      }, mean ${
        formatMs(m(`manager.fresh.${mode}.mean`))
      }, turns 2..${FRESH_TURNS} median ${
        formatMs(m(`manager.fresh.${mode}.rest_median`))
      }; import ${formatMs(m(`manager.fresh.${mode}.import`))}, set-up ${
        formatMs(m(`manager.fresh.${mode}.setup`))
      }, final flush ${formatMs(m(`manager.fresh.${mode}.flush`))}`,
    );
  }
  lines.push(
    `    manager / direct, mean per turn: ${
      ratio(m("manager.fresh.manager.mean"), m("manager.fresh.direct.mean"))
    }`,
  );
  console.log(lines.join("\n"));
  record("manager.fresh.turns", { value: FRESH_TURNS });
});
