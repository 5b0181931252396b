// Honcho provider vs inline `@honcho-ai/sdk` calls, against the Honcho test
// server with 200 ms of latency per request:
//
//   deno bench --no-prompt --allow-read --allow-write --allow-env --allow-net=127.0.0.1,localhost --allow-run --allow-sys bench/honcho_bench.ts
//
// (`deno task bench` runs it with the rest of bench/.) Takes about 1.5
// minutes. At module load two servers are started, seeded with the same
// knowledge, and the same 20-turn conversation runs on each (a simulated
// 1 s model call per turn):
//
// 1. through HonchoMemoryProvider at default settings (hybrid recall, async
//    writes, contextCadence 1, dialecticCadence 1): per turn onTurnStart,
//    prefetch, the model call, syncTurn, queuePrefetch;
// 2. with plain @honcho-ai/sdk calls made inline, as a straightforward
//    integration would: per turn the session context, the user and AI peer
//    contexts and a dialectic before the model call, then the turn's
//    messages after it.
//
// Those warmed sessions then carry on turn after turn in the benchmarks
// (50 ms of simulated model time per turn, outside the timed section):
//
// - "prefetch return to the agent (turn ≥ 2, …)": provider.prefetch vs the
//   inline session context + peer contexts + dialectic; one turn per
//   iteration;
// - "syncTurn return to the agent": provider.syncTurn (one full turn per
//   iteration) vs an inline `session.addMessages`;
// - turn 1: a fresh provider, session and server per iteration; prefetch
//   may wait up to `firstTurnBaseWait` + `firstTurnDialecticWait` (3 s +
//   2 s by default), the report checks the slowest one against that.
//
// `deno bench` has no column for request counts, so the 20-turn workload's
// report (requests at session start, budget 6; requests per later turn;
// total requests and wall time as provider / SDK ratios) is printed once,
// when the run ends. `deno run -R -W -E --allow-net=127.0.0.1
// bench/honcho_bench.ts` runs only the workload and prints that report.
import { Honcho, type Peer, type Session } from "@honcho-ai/sdk";
import { setLogger } from "@hermes/memory";
import { HonchoMemoryProvider } from "../plugins/memory/honcho/mod.ts";
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
  wallMs: number;
  blockingMs: number;
  requests: HonchoRequestLogEntry[];
  sessionStartRequests: number;
  perTurnRequests: number[];
  prefetchMs: number[];
  syncMs: number[];
  violations: number;
}

setLogger({ log: () => {} });

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
  readonly provider: HonchoMemoryProvider = new HonchoMemoryProvider();
  readonly #home: string;
  #turn = 0;
  #closed = false;

  private constructor(server: HonchoTestServer, home: string) {
    this.server = server;
    this.#home = home;
  }

  static async start(): Promise<ProviderSide> {
    const server = await startSeededServer();
    return new ProviderSide(server, await makeHome(server));
  }

  /** `initialize`; returns how long it took. */
  initialize(sessionId: string): Promise<number> {
    return timed(() =>
      this.provider.initialize(sessionId, {
        hermesHome: this.#home,
        platform: "cli",
      })
    );
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
    await this.provider.idle(60_000);
    return {
      label: "HonchoMemoryProvider",
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

/** Inline `@honcho-ai/sdk` calls with their own server; one session. */
class SdkSide {
  readonly server: HonchoTestServer;
  readonly #honcho: Honcho;
  #alice?: Peer;
  #hermes?: Peer;
  #session?: Session;
  #turn = 0;
  #closed = false;

  private constructor(server: HonchoTestServer) {
    this.server = server;
    this.#honcho = new Honcho({
      baseURL: server.url,
      apiKey: "local",
      workspaceId: "bench",
      maxRetries: 0,
    });
  }

  static async start(): Promise<SdkSide> {
    return new SdkSide(await startSeededServer());
  }

  /** Peers, session, membership and peer configs; returns the time. */
  setUp(sessionId: string): Promise<number> {
    return timed(async () => {
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
    return timed(async () => {
      await session.context({
        summary: true,
        peerTarget: alice,
        peerPerspective: hermes,
      });
      await hermes.context({ target: alice, searchQuery: q });
      await hermes.context({ target: hermes });
      await hermes.chat(q, { target: alice });
    }, b);
  }

  /** The current turn's messages, inline; returns the time. */
  afterModel(b?: Deno.BenchContext): Promise<number> {
    const { alice, hermes, session } = this.#parts();
    const turn = this.#turn;
    return timed(
      () =>
        session.addMessages([
          alice.message(query(turn)),
          hermes.message(reply(turn)),
        ]),
      b,
    );
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
    return {
      label: "@honcho-ai/sdk inline",
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

  /** Closes the server. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await this.server.close();
  }

  /** Best effort from a synchronous `unload` handler. */
  closeNow(): void {
    if (this.#closed) return;
    this.#closed = true;
    void this.server.close();
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
    `  session set-up return: ${ms(run.initMs)} ms`,
    hookLine("prefetch", run.prefetchMs),
    hookLine("syncTurn", run.syncMs),
    `  session start (set-up + turn-1 prefetch): ${run.sessionStartRequests} requests${start}`,
    `  requests per turn (turns 2..${TURNS}): mean ${
      (perTurn.reduce((a, b) => a + b, 0) / perTurn.length).toFixed(2)
    }, min ${Math.min(...perTurn)}, max ${Math.max(...perTurn)}`,
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

function report(
  ours: RunResult,
  sdk: RunResult,
  firstTurn: readonly number[],
  firstTurnWaitMs: number,
): string {
  return [
    "",
    `Honcho bench: ${TURNS} turns, ${LATENCY_MS} ms server latency per request, ${WORKLOAD_MODEL_MS} ms simulated model call per turn`,
    "",
    ...runReport(ours, SESSION_START_BUDGET),
    "",
    ...runReport(sdk),
    "",
    "== ratios (provider / sdk inline) ==",
    `  requests ${
      (ours.requests.length / sdk.requests.length).toFixed(2)
    }; wall time ${
      (ours.wallMs / sdk.wallMs).toFixed(2)
    }; agent-blocking time ${(ours.blockingMs / sdk.blockingMs).toFixed(4)}`,
    ...(firstTurn.length > 0 ? [""] : []),
    ...firstTurnReport(firstTurn, firstTurnWaitMs),
  ].join("\n");
}

// ---------------------------------------------------------------------------
// Module top level: servers, the counted workload, the warmed sessions
// ---------------------------------------------------------------------------

const ours = await ProviderSide.start();
const sdk = await SdkSide.start();
const ourRun = await ours.workload(WORKLOAD_MODEL_MS);
const sdkRun = await sdk.workload(WORKLOAD_MODEL_MS);
const config = ours.provider.config;
const firstTurnWaitMs = config
  ? (config.firstTurnBaseWait + config.firstTurnDialecticWait) * 1000
  : 5_000;

if (import.meta.main) {
  // `deno run`: the report only.
  console.log(report(ourRun, sdkRun, [], firstTurnWaitMs));
  await ours.close();
  await sdk.close();
} else {
  const PREFETCH =
    "prefetch return to the agent (turn ≥ 2, 200 ms Honcho latency)";
  const SYNC = "syncTurn return to the agent";
  const FIRST = "prefetch return to the agent, turn 1 (fresh provider)";
  const firstTurnMs: number[] = [];
  let firstTurnRuns = 0;

  Deno.bench({
    name: "HonchoMemoryProvider.prefetch",
    group: PREFETCH,
    baseline: true,
    n: 40,
    warmup: 2,
    async fn(b: Deno.BenchContext): Promise<void> {
      await ours.beforeModel(b);
      await sleep(BENCH_MODEL_MS);
      await ours.afterModel();
    },
  });

  Deno.bench({
    name: "@honcho-ai/sdk: session + peer contexts + dialectic",
    group: PREFETCH,
    n: 10,
    warmup: 1,
    async fn(b: Deno.BenchContext): Promise<void> {
      await sdk.beforeModel(b);
      await sleep(BENCH_MODEL_MS);
      await sdk.afterModel();
    },
  });

  Deno.bench({
    name: "HonchoMemoryProvider.syncTurn",
    group: SYNC,
    baseline: true,
    n: 40,
    warmup: 2,
    async fn(b: Deno.BenchContext): Promise<void> {
      await ours.beforeModel();
      await sleep(BENCH_MODEL_MS);
      await ours.afterModel(b);
    },
  });

  Deno.bench({
    name: "@honcho-ai/sdk: session.addMessages",
    group: SYNC,
    n: 15,
    warmup: 1,
    async fn(b: Deno.BenchContext): Promise<void> {
      sdk.nextTurn();
      await sleep(BENCH_MODEL_MS);
      await sdk.afterModel(b);
    },
  });

  // The last bench: the warmed sides are no longer needed, so they are shut
  // down (awaited) on its first call; each iteration owns its server.
  Deno.bench({
    name: `HonchoMemoryProvider.prefetch, turn 1 (documented wait ≤ ${
      firstTurnWaitMs / 1000
    } s)`,
    group: FIRST,
    n: 5,
    warmup: 1,
    async fn(b: Deno.BenchContext): Promise<void> {
      await ours.close();
      await sdk.close();
      const side = await ProviderSide.start();
      try {
        await side.initialize(`first-turn-${++firstTurnRuns}`);
        firstTurnMs.push(await side.beforeModel(b));
      } finally {
        await side.close();
      }
    },
  });

  globalThis.addEventListener("unload", (): void => {
    ours.closeNow();
    sdk.closeNow();
    console.log(report(ourRun, sdkRun, firstTurnMs, firstTurnWaitMs));
  });
}
