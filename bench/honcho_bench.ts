// Honcho provider vs inline `@honcho-ai/sdk` calls, against the Honcho test
// server with 200 ms of latency per request:
//
//   deno bench --no-prompt --allow-read --allow-write --allow-env --allow-net=127.0.0.1,localhost --allow-run --allow-sys bench/honcho_bench.ts
//
// (`deno task bench` runs it with the rest of bench/.) Takes about 1.5
// minutes. At module load four servers are started (three seeded with the
// same knowledge, one for the floor) and the same 20-turn conversation runs
// on the three sides (a simulated 1 s model call per turn):
//
// 1. through HonchoMemoryProvider at default settings (hybrid recall, async
//    writes, contextCadence 1, dialecticCadence 1): per turn onTurnStart,
//    prefetch, the model call, syncTurn, queuePrefetch;
// 2. "careful SDK": plain @honcho-ai/sdk calls as a careful integration
//    writes them: per turn the session context, the user and AI peer
//    contexts and a dialectic in parallel (Promise.all) before the model
//    call, then the turn's messages after it, sent in the background
//    (chained so they stay in order, errors caught and counted, never
//    awaited by the turn; the wall time includes waiting for the last one);
//    set-up calls in parallel where they do not depend on each other;
// 3. "naive SDK" (the old baseline, kept and labelled): the same calls made
//    one after another, and the messages awaited.
//
// The provider and the careful SDK run one after the other; the naive SDK
// runs at the same time as both (its figures are hundreds of ms of network
// wait, so sharing the event loop moves them by microseconds; it saves 40 s).
//
// Floor: one bare `fetch` round trip to a test server with the same latency
// (what any remote read costs), measured in the same run.
//
// Those warmed sessions then carry on turn after turn in the benchmarks
// (50 ms of simulated model time per turn, outside the timed section):
//
// - "prefetch return to the agent (turn ≥ 2, …)": provider.prefetch vs the
//   careful and naive SDK reads, and the floor; one turn per iteration;
// - "syncTurn return to the agent": provider.syncTurn (one full turn per
//   iteration) vs the careful SDK's background send and the naive awaited
//   `session.addMessages`;
// - turn 1: a fresh provider, session and server per iteration; prefetch
//   may wait up to `firstTurnBaseWait` + `firstTurnDialecticWait` (3 s +
//   2 s by default), the report checks the slowest one against that.
//
// `deno bench` has no column for request counts, so the 20-turn workload's
// report (requests at session start, budget 6; requests per later turn;
// total requests, wall time and agent-blocked time as ratios) is printed
// once, when the run ends. `deno run -R -W -E --allow-net=127.0.0.1
// bench/honcho_bench.ts` runs only the workload and prints that report.
import { Honcho, type Peer, type Session } from "npm:@honcho-ai/sdk@2.5.0";
import { HonchoMemoryProvider } from "@hermes/memory/honcho";
import { loadMemoryProvider } from "@hermes/memory/plugins";
import {
  addSample,
  benchmark,
  keepLogs,
  median,
  record,
  setup,
} from "./_harness.ts";
import {
  type HonchoRequestLogEntry,
  type HonchoTestServer,
  startHonchoTestServer,
} from "../tests/honcho_server.ts";

/** Turns of the workload whose requests are counted. */
const TURNS = 20;
/** Latency the test server adds to every request. */
const LATENCY_MS = 200;
/** Simulated model call per turn of the counted workload. */
const WORKLOAD_MODEL_MS = 1_000;
/** Simulated model call per benchmark iteration (outside the timed part). */
const BENCH_MODEL_MS = 50;
/** Requests the provider may send before turn 1's context is returned. */
const SESSION_START_BUDGET = 6;
const SESSION_ID = "bench-session";

const QUERIES = [
  "What should I pack for the Oslo hiking trip?",
  "Which tea did I say I liked?",
  "Can you remind me about the trip dates for Oslo?",
  "Do I prefer trains or planes for short trips?",
];

/** What one side of the 20-turn workload did. */
interface RunResult {
  label: string;
  initMs: number;
  /** Sandboxed: the provider's load (process start, module graph, describe), part of `initMs`. */
  loadMs?: number;
  wallMs: number;
  blockingMs: number;
  requests: HonchoRequestLogEntry[];
  sessionStartRequests: number;
  perTurnRequests: number[];
  prefetchMs: number[];
  syncMs: number[];
  violations: number;
  /** Background writes that failed (careful SDK). */
  writeFailures?: number;
}

keepLogs("honcho_bench");

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

function query(turn: number): string {
  return `${QUERIES[(turn - 1) % QUERIES.length]} (turn ${turn})`;
}

function reply(turn: number): string {
  return `Here is what I found for turn ${turn}.`;
}

/** Runs `fn`; times it, and marks it as the bench's timed section when `b` is given. */
async function timed(
  fn: () => unknown,
  b?: Deno.BenchContext,
): Promise<number> {
  b?.start();
  const started = performance.now();
  await fn();
  const elapsed = performance.now() - started;
  b?.end();
  return elapsed;
}

async function startSeededServer(): Promise<HonchoTestServer> {
  const server = await startHonchoTestServer({ latencyMs: LATENCY_MS });
  const now = new Date().toISOString();
  server.state.peerCards.push({
    workspace_id: "bench",
    observer_id: "hermes",
    observed_id: "alice",
    peer_card: ["Name: Alice", "Prefers oolong tea", "Likes trains"],
  });
  server.state.conclusions.push({
    id: "b".repeat(21),
    content: "Alice is planning a hiking trip to Oslo in June",
    observer_id: "hermes",
    observed_id: "alice",
    session_id: null,
    level: "explicit",
    created_at: now,
    workspace_id: "bench",
    deleted: false,
  });
  return server;
}

async function makeHome(server: HonchoTestServer): Promise<string> {
  const home = await Deno.makeTempDir({ prefix: "honcho_bench_" });
  await Deno.writeTextFile(
    `${home}/honcho.json`,
    JSON.stringify({
      baseUrl: server.url,
      workspace: "bench",
      peerName: "alice",
      aiPeer: "hermes",
      sessionStrategy: "per-session",
    }),
  );
  return home;
}

/** HonchoMemoryProvider with its own server and HERMES_HOME; one session. */
class ProviderSide {
  readonly server: HonchoTestServer;
  provider: HonchoMemoryProvider = new HonchoMemoryProvider();
  /** Through the sandbox: the bundled provider in its own process. */
  readonly sandboxed: boolean;
  readonly #home: string;
  /** Sandboxed: how long the last load took (the rest of `initialize`'s time is the call). */
  loadMs: number | undefined;
  #turn = 0;
  #closed = false;

  private constructor(
    server: HonchoTestServer,
    home: string,
    sandboxed: boolean,
  ) {
    this.server = server;
    this.#home = home;
    this.sandboxed = sandboxed;
  }

  static async start(sandboxed = false): Promise<ProviderSide> {
    const server = await startSeededServer();
    return new ProviderSide(server, await makeHome(server), sandboxed);
  }

  /** `initialize` (sandboxed: the load too); returns how long it took. */
  initialize(sessionId: string): Promise<number> {
    const started = performance.now();
    return timed(async () => {
      if (this.sandboxed) {
        const host = new URL(this.server.url).host;
        const loaded = await loadMemoryProvider("honcho", {
          hermesHome: this.#home,
          config: {
            memory: {
              provider: "honcho",
              permissions: { honcho: { net: [host] } },
            },
          },
        });
        if (loaded === null) {
          throw new Error("the sandboxed Honcho did not load");
        }
        this.loadMs = performance.now() - started;
        this.provider = loaded as HonchoMemoryProvider;
      }
      await this.provider.initialize(sessionId, {
        hermesHome: this.#home,
        platform: "cli",
      });
    });
  }

  /** Starts the next turn and prefetches; returns the prefetch time. */
  async beforeModel(b?: Deno.BenchContext): Promise<number> {
    const turn = ++this.#turn;
    const q = query(turn);
    await this.provider.onTurnStart(turn, q, {});
    return await timed(() => this.provider.prefetch(q, {}), b);
  }

  /** syncTurn (returns its time) then queuePrefetch for the current turn. */
  async afterModel(b?: Deno.BenchContext): Promise<number> {
    const q = query(this.#turn);
    const ms = await timed(
      () => this.provider.syncTurn(q, reply(this.#turn), {}),
      b,
    );
    await this.provider.queuePrefetch(q, {});
    return ms;
  }

  /** The 20-turn workload, from `initialize` on. */
  async workload(modelMs: number): Promise<RunResult> {
    const prefetchMs: number[] = [];
    const syncMs: number[] = [];
    const perTurnRequests: number[] = [];
    let sessionStartRequests = 0;
    const started = performance.now();
    const initMs = await this.initialize(SESSION_ID);
    let blockingMs = initMs;
    for (let turn = 1; turn <= TURNS; turn++) {
      const before = this.server.requests.length;
      const prefetch = await this.beforeModel();
      if (turn === 1) sessionStartRequests = this.server.requests.length;
      await sleep(modelMs);
      const sync = await this.afterModel();
      prefetchMs.push(prefetch);
      syncMs.push(sync);
      blockingMs += prefetch + sync;
      if (turn > 1) perTurnRequests.push(this.server.requests.length - before);
    }
    if (this.sandboxed) await this.provider.shutdown();
    else await this.provider.idle(60_000);
    return {
      label: this.sandboxed
        ? "HonchoMemoryProvider through the sandbox"
        : "HonchoMemoryProvider",
      initMs,
      loadMs: this.loadMs,
      wallMs: performance.now() - started,
      blockingMs,
      requests: [...this.server.requests],
      sessionStartRequests,
      perTurnRequests,
      prefetchMs,
      syncMs,
      violations: this.server.violations.length,
    };
  }

  /** Shuts the provider down, closes the server, removes the home. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await this.provider.shutdown();
    await this.server.close();
    await Deno.remove(this.#home, { recursive: true });
  }

  /** Best effort from a synchronous `unload` handler. */
  closeNow(): void {
    if (this.#closed) return;
    this.#closed = true;
    void this.provider.shutdown();
    void this.server.close();
    Deno.removeSync(this.#home, { recursive: true });
  }
}

/** How an SDK side calls Honcho. */
type SdkStyle = "careful" | "naive";

/** Inline `@honcho-ai/sdk` calls with their own server; one session. */
class SdkSide {
  readonly server: HonchoTestServer;
  readonly style: SdkStyle;
  readonly #honcho: Honcho;
  #alice?: Peer;
  #hermes?: Peer;
  #session?: Session;
  #turn = 0;
  #closed = false;
  /** The careful side's background writes, chained to keep their order. */
  #writes: Promise<void> = Promise.resolve();
  /** Background writes that failed (careful side). */
  writeFailures = 0;

  private constructor(server: HonchoTestServer, style: SdkStyle) {
    this.server = server;
    this.style = style;
    this.#honcho = new Honcho({
      baseURL: server.url,
      apiKey: "local",
      workspaceId: "bench",
      // The naive baseline as it was measured before; the careful user keeps
      // the SDK's default retries (no faults are injected: no difference).
      ...(style === "naive" ? { maxRetries: 0 } : {}),
    });
  }

  static async start(style: SdkStyle): Promise<SdkSide> {
    return new SdkSide(await startSeededServer(), style);
  }

  get label(): string {
    return this.style === "careful"
      ? "@honcho-ai/sdk, careful (parallel reads, background writes)"
      : "@honcho-ai/sdk, naive (sequential reads, awaited writes)";
  }

  /** Peers, session, membership and peer configs; returns the time. */
  setUp(sessionId: string): Promise<number> {
    return timed(async () => {
      if (this.style === "careful") {
        const [alice, hermes, session] = await Promise.all([
          this.#honcho.peer("alice"),
          this.#honcho.peer("hermes"),
          this.#honcho.session(sessionId),
        ]);
        this.#alice = alice;
        this.#hermes = hermes;
        this.#session = session;
        await session.addPeers([
          [alice, { observeMe: true, observeOthers: true }],
          [hermes, { observeMe: true, observeOthers: true }],
        ]);
        await Promise.all([
          session.getPeerConfiguration(alice),
          session.getPeerConfiguration(hermes),
        ]);
        return;
      }
      const alice = this.#alice = await this.#honcho.peer("alice");
      const hermes = this.#hermes = await this.#honcho.peer("hermes");
      const session = this.#session = await this.#honcho.session(sessionId);
      await session.addPeers([
        [alice, { observeMe: true, observeOthers: true }],
        [hermes, { observeMe: true, observeOthers: true }],
      ]);
      await session.getPeerConfiguration(alice);
      await session.getPeerConfiguration(hermes);
    });
  }

  #parts(): { alice: Peer; hermes: Peer; session: Session } {
    if (!this.#alice || !this.#hermes || !this.#session) {
      throw new Error("SdkSide.setUp() has not run");
    }
    return { alice: this.#alice, hermes: this.#hermes, session: this.#session };
  }

  /** Next turn's context + dialectic, inline; returns the time. */
  beforeModel(b?: Deno.BenchContext): Promise<number> {
    const { alice, hermes, session } = this.#parts();
    const q = query(++this.#turn);
    const reads = [
      () =>
        session.context({
          summary: true,
          peerTarget: alice,
          peerPerspective: hermes,
        }),
      () => hermes.context({ target: alice, searchQuery: q }),
      () => hermes.context({ target: hermes }),
      () => hermes.chat(q, { target: alice }),
    ];
    return timed(async () => {
      if (this.style === "careful") {
        await Promise.all(reads.map((read) => read()));
      } else {
        for (const read of reads) await read();
      }
    }, b);
  }

  /**
   * The current turn's messages: awaited (naive), or chained onto the
   * background writes with errors caught (careful); returns the time the
   * turn waited.
   */
  afterModel(b?: Deno.BenchContext): Promise<number> {
    const { alice, hermes, session } = this.#parts();
    const turn = this.#turn;
    const send = () =>
      session.addMessages([
        alice.message(query(turn)),
        hermes.message(reply(turn)),
      ]);
    if (this.style === "naive") return timed(send, b);
    return timed(() => {
      this.#writes = this.#writes.then(send).then(
        () => {},
        (error: unknown) => {
          this.writeFailures++;
          console.error(`careful SDK: turn ${turn} not stored: ${error}`);
        },
      );
    }, b);
  }

  /** Waits for the careful side's background writes. */
  settle(): Promise<void> {
    return this.#writes;
  }

  /** A write-only turn (no context calls), for the syncTurn group. */
  nextTurn(): void {
    this.#turn++;
  }

  /** The 20-turn workload, from the set-up on. */
  async workload(modelMs: number): Promise<RunResult> {
    const prefetchMs: number[] = [];
    const syncMs: number[] = [];
    const perTurnRequests: number[] = [];
    let sessionStartRequests = 0;
    const started = performance.now();
    const initMs = await this.setUp(SESSION_ID);
    let blockingMs = initMs;
    for (let turn = 1; turn <= TURNS; turn++) {
      const before = this.server.requests.length;
      const prefetch = await this.beforeModel();
      if (turn === 1) sessionStartRequests = this.server.requests.length;
      await sleep(modelMs);
      const sync = await this.afterModel();
      prefetchMs.push(prefetch);
      syncMs.push(sync);
      blockingMs += prefetch + sync;
      if (turn > 1) perTurnRequests.push(this.server.requests.length - before);
    }
    await this.settle();
    return {
      label: this.label,
      writeFailures: this.style === "careful" ? this.writeFailures : undefined,
      initMs,
      wallMs: performance.now() - started,
      blockingMs,
      requests: [...this.server.requests],
      sessionStartRequests,
      perTurnRequests,
      prefetchMs,
      syncMs,
      violations: this.server.violations.length,
    };
  }

  /** Waits for background writes, then closes the server. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await this.settle();
    await this.server.close();
  }

  /** Best effort from a synchronous `unload` handler. */
  closeNow(): void {
    if (this.#closed) return;
    this.#closed = true;
    void this.server.close();
  }
}

/** The floor: one bare fetch round trip to a server with the same latency. */
class FloorSide {
  readonly server: HonchoTestServer;

  private constructor(server: HonchoTestServer) {
    this.server = server;
  }

  static async start(): Promise<FloorSide> {
    return new FloorSide(
      await startHonchoTestServer({ latencyMs: LATENCY_MS }),
    );
  }

  /** One `GET /health` round trip; returns the time. */
  roundTrip(b?: Deno.BenchContext): Promise<number> {
    return timed(async () => {
      const response = await fetch(`${this.server.url}/health`);
      await response.text();
      if (!response.ok) throw new Error(`/health answered ${response.status}`);
    }, b);
  }

  close(): Promise<void> {
    return this.server.close();
  }
}

// ---------------------------------------------------------------------------
// Report
// ---------------------------------------------------------------------------

function quantile(values: readonly number[], q: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
}

function ms(value: number): string {
  return value < 10 ? value.toFixed(3) : value.toFixed(0);
}

function byRoute(requests: readonly HonchoRequestLogEntry[]): string[] {
  const counts = new Map<string, number>();
  for (const r of requests) {
    const key = (r.route ?? `${r.method} ${r.path}`).replace(
      "/v3/workspaces/{workspace_id}",
      "",
    );
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  return [...counts].sort((a, b) => b[1] - a[1]).map(([route, n]) =>
    `    ${String(n).padStart(4)}  ${route}`
  );
}

function hookLine(name: string, values: readonly number[]): string {
  const later = values.slice(1);
  return `  ${name} return, turn 1: ${
    ms(values[0]!)
  } ms; turns 2..${TURNS}: median ${ms(quantile(later, 0.5))} ms, p90 ${
    ms(quantile(later, 0.9))
  } ms, max ${ms(Math.max(...later))} ms`;
}

function runReport(run: RunResult, budget?: number): string[] {
  const perTurn = run.perTurnRequests;
  const start = budget === undefined
    ? ""
    : run.sessionStartRequests <= budget
    ? ` (budget ≤ ${budget}: ok)`
    : ` (budget ≤ ${budget}: EXCEEDED)`;
  return [
    `== ${run.label} ==`,
    `  session set-up return: ${ms(run.initMs)} ms${
      run.loadMs === undefined
        ? ""
        : ` (load ${ms(run.loadMs)} ms, then initialize ${
          ms(run.initMs - run.loadMs)
        } ms)`
    }`,
    hookLine("prefetch", run.prefetchMs),
    hookLine("syncTurn", run.syncMs),
    `  session start (set-up + turn-1 prefetch): ${run.sessionStartRequests} requests${start}`,
    `  requests per turn (turns 2..${TURNS}): mean ${
      (perTurn.reduce((a, b) => a + b, 0) / perTurn.length).toFixed(2)
    }, min ${Math.min(...perTurn)}, max ${Math.max(...perTurn)}`,
    ...(run.writeFailures === undefined
      ? []
      : [`  background writes that failed: ${run.writeFailures}`]),
    `  total requests ${run.requests.length}; wall ${
      ms(run.wallMs)
    } ms (model time ${TURNS * WORKLOAD_MODEL_MS} ms); agent blocked ${
      ms(run.blockingMs)
    } ms; OpenAPI violations ${run.violations}`,
    "  by route:",
    ...byRoute(run.requests),
  ];
}

function firstTurnReport(samples: readonly number[], waitMs: number): string[] {
  if (samples.length === 0) return [];
  const max = Math.max(...samples);
  return [
    `== turn-1 prefetch, fresh provider (${samples.length} runs incl. warm-up) ==`,
    `  median ${ms(quantile(samples, 0.5))} ms, max ${
      ms(max)
    } ms; documented wait ≤ ${
      ms(waitMs)
    } ms (firstTurnBaseWait + firstTurnDialecticWait): ${
      max <= waitMs ? "ok" : "EXCEEDED"
    }`,
  ];
}

/** Per-turn agent-blocked time of a run (set-up excluded), ms. */
function blockedPerTurn(run: RunResult): number {
  return (run.blockingMs - run.initMs) / TURNS;
}

/** The same over turns 2..20 (after the session started), ms. */
function blockedPerLaterTurn(run: RunResult): number {
  let sum = 0;
  for (let i = 1; i < TURNS; i++) sum += run.prefetchMs[i]! + run.syncMs[i]!;
  return sum / (TURNS - 1);
}

function report(
  runs: { ours: RunResult; careful: RunResult; naive: RunResult },
  floorMs: readonly number[],
  firstTurn: readonly number[],
  firstTurnWaitMs: number,
): string {
  const { ours, careful, naive } = runs;
  const floor = median(floorMs);
  const ratios = (a: RunResult, b: RunResult) =>
    `  requests ${
      (a.requests.length / b.requests.length).toFixed(2)
    }; wall time ${(a.wallMs / b.wallMs).toFixed(2)}; agent-blocking time ${
      (a.blockingMs / b.blockingMs).toFixed(4)
    }`;
  return [
    "",
    `Honcho bench: ${TURNS} turns, ${LATENCY_MS} ms server latency per request, ${WORKLOAD_MODEL_MS} ms simulated model call per turn`,
    "",
    ...runReport(ours, SESSION_START_BUDGET),
    "",
    ...runReport(careful),
    "",
    ...runReport(naive),
    "",
    `== floor: one bare fetch round trip (${LATENCY_MS} ms latency) ==`,
    `  median ${ms(floor)} ms over ${floorMs.length} samples`,
    "",
    `== agent blocked per turn (set-up excluded; × the floor) ==`,
    ...[ours, careful, naive].map((run) =>
      `  ${run.label}: turns 1..${TURNS} ${ms(blockedPerTurn(run))} ms (${
        (blockedPerTurn(run) / floor).toFixed(4)
      }×); turns 2..${TURNS} ${ms(blockedPerLaterTurn(run))} ms (${
        (blockedPerLaterTurn(run) / floor).toFixed(4)
      }×)`
    ),
    "",
    "== ratios (provider / careful sdk) ==",
    ratios(ours, careful),
    "== ratios (provider / naive sdk) ==",
    ratios(ours, naive),
    ...(firstTurn.length > 0 ? [""] : []),
    ...firstTurnReport(firstTurn, firstTurnWaitMs),
  ].join("\n");
}

/** Sends the workload's figures to bench/_report.ts. */
function recordRun(id: string, run: RunResult): void {
  record(`honcho.workload.${id}`, {
    label: run.label,
    initMs: run.initMs,
    wallMs: run.wallMs,
    blockingMs: run.blockingMs,
    blockedPerTurnMs: blockedPerTurn(run),
    blockedPerLaterTurnMs: blockedPerLaterTurn(run),
    requests: run.requests.length,
    sessionStartRequests: run.sessionStartRequests,
    perTurnRequestsMean: run.perTurnRequests.reduce((a, b) => a + b, 0) /
      run.perTurnRequests.length,
    prefetchTurn1Ms: run.prefetchMs[0],
    prefetchLaterMedianMs: median(run.prefetchMs.slice(1)),
    syncLaterMedianMs: median(run.syncMs.slice(1)),
    violations: run.violations,
  });
}

// ---------------------------------------------------------------------------
// Module top level: servers, the counted workload, the warmed sessions
// ---------------------------------------------------------------------------

const [ours, careful, naive, floorSide, boxed] = await setup(
  "start the test servers",
  () =>
    Promise.all([
      ProviderSide.start(),
      SdkSide.start("careful"),
      SdkSide.start("naive"),
      FloorSide.start(),
      ProviderSide.start(true),
    ]),
);
const [ourRun, carefulRun, naiveRun, boxedRun] = await setup(
  "the 20-turn workload",
  async () => {
    const naiveRunning = naive.workload(WORKLOAD_MODEL_MS);
    const ourRun = await ours.workload(WORKLOAD_MODEL_MS);
    const carefulRun = await careful.workload(WORKLOAD_MODEL_MS);
    // The sandboxed provider's load (its process start) counts as set-up.
    const boxedRun = await boxed.workload(WORKLOAD_MODEL_MS);
    return [ourRun, carefulRun, await naiveRunning, boxedRun] as const;
  },
);
recordRun("provider", ourRun);
recordRun("sandboxed", boxedRun);
const boxedLine = `== through the sandbox ==\n${
  runReport(boxedRun).join("\n")
}\n  agent blocked, sandboxed provider / careful SDK: ${
  (boxedRun.blockingMs / carefulRun.blockingMs).toFixed(4)
} (goal ≤ 0.1); in-process: ${
  (ourRun.blockingMs / carefulRun.blockingMs).toFixed(4)
}`;
await boxed.close();
recordRun("sdk_careful", carefulRun);
recordRun("sdk_naive", naiveRun);
const floorMs: number[] = [];
for (let i = 0; i < 5; i++) {
  const sample = await floorSide.roundTrip();
  floorMs.push(sample);
  addSample("honcho.floor.fetch", sample);
}
const config = ours.provider.config;
const firstTurnWaitMs = config
  ? (config.firstTurnBaseWait + config.firstTurnDialecticWait) * 1000
  : 5_000;

const runs = { ours: ourRun, careful: carefulRun, naive: naiveRun };
if (import.meta.main) {
  // `deno run`: the report only.
  console.log(report(runs, floorMs, [], firstTurnWaitMs));
  console.log(boxedLine);
  await ours.close();
  await careful.close();
  await naive.close();
  await floorSide.close();
} else {
  const PREFETCH =
    "prefetch return to the agent (turn ≥ 2, 200 ms Honcho latency)";
  const SYNC = "syncTurn return to the agent";
  const FIRST = "prefetch return to the agent, turn 1 (fresh provider)";
  const firstTurnMs: number[] = [];
  let firstTurnRuns = 0;

  benchmark({
    id: "honcho.prefetch.provider",
    title: "HonchoMemoryProvider.prefetch",
    group: PREFETCH,
    baseline: true,
    n: 40,
    warmup: 2,
    async fn(it) {
      it.sample(await ours.beforeModel(it.b));
      await sleep(BENCH_MODEL_MS);
      await ours.afterModel();
    },
  });

  benchmark({
    id: "honcho.prefetch.sdk_careful",
    title: "careful @honcho-ai/sdk: the four reads in parallel",
    group: PREFETCH,
    n: 15,
    warmup: 1,
    async fn(it) {
      await careful.settle();
      it.sample(await careful.beforeModel(it.b));
      await sleep(BENCH_MODEL_MS);
      await careful.afterModel();
    },
  });

  benchmark({
    id: "honcho.prefetch.sdk_naive",
    title: "naive @honcho-ai/sdk: the four reads one after another",
    group: PREFETCH,
    n: 5,
    warmup: 1,
    async fn(it) {
      it.sample(await naive.beforeModel(it.b));
      await sleep(BENCH_MODEL_MS);
      await naive.afterModel();
    },
  });

  benchmark({
    id: "honcho.floor.fetch",
    title: `floor: one bare fetch round trip (${LATENCY_MS} ms latency)`,
    group: PREFETCH,
    n: 10,
    warmup: 1,
    async fn(it) {
      it.sample(await floorSide.roundTrip(it.b));
    },
  });

  benchmark({
    id: "honcho.sync.provider",
    title: "HonchoMemoryProvider.syncTurn",
    group: SYNC,
    baseline: true,
    n: 40,
    warmup: 2,
    async fn(it) {
      await ours.beforeModel();
      await sleep(BENCH_MODEL_MS);
      it.sample(await ours.afterModel(it.b));
    },
  });

  benchmark({
    id: "honcho.sync.sdk_careful",
    title: "careful @honcho-ai/sdk: session.addMessages in the background",
    group: SYNC,
    n: 15,
    warmup: 1,
    async fn(it) {
      await careful.settle();
      careful.nextTurn();
      await sleep(BENCH_MODEL_MS);
      it.sample(await careful.afterModel(it.b));
    },
  });

  benchmark({
    id: "honcho.sync.sdk_naive",
    title: "naive @honcho-ai/sdk: session.addMessages awaited",
    group: SYNC,
    n: 8,
    warmup: 1,
    async fn(it) {
      naive.nextTurn();
      await sleep(BENCH_MODEL_MS);
      it.sample(await naive.afterModel(it.b));
    },
  });

  // The last bench: the warmed sides are no longer needed, so they are shut
  // down (awaited) on its first call; each iteration owns its server.
  benchmark({
    id: "honcho.turn1.provider",
    title: `HonchoMemoryProvider.prefetch, turn 1 (documented wait ≤ ${
      firstTurnWaitMs / 1000
    } s)`,
    group: FIRST,
    n: 5,
    warmup: 1,
    async fn(it) {
      await ours.close();
      await careful.close();
      await naive.close();
      await floorSide.close();
      const side = await ProviderSide.start();
      try {
        await side.initialize(`first-turn-${++firstTurnRuns}`);
        const sample = await side.beforeModel(it.b);
        firstTurnMs.push(sample);
        it.sample(sample);
      } finally {
        await side.close();
      }
    },
  });

  globalThis.addEventListener("unload", (): void => {
    ours.closeNow();
    careful.closeNow();
    naive.closeNow();
    void floorSide.close();
    console.log(report(runs, floorMs, firstTurnMs, firstTurnWaitMs));
    console.log(boxedLine);
  });
}
