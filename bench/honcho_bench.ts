// Honcho provider benchmark against the Honcho test server with a fixed
// latency per request (default 200 ms):
//
//   deno run --allow-read --allow-write --allow-env --allow-net=127.0.0.1 \
//     bench/honcho_bench.ts [--turns=20] [--latency=200] [--model=1000]
//
// It runs the same N-turn conversation twice, each against its own server
// seeded with the same knowledge:
//
// 1. through HonchoMemoryProvider at default settings (hybrid recall, async
//    writes, contextCadence 1, dialecticCadence 1): per turn onTurnStart,
//    prefetch (timed), a simulated model call of --model ms, syncTurn
//    (timed), queuePrefetch;
// 2. with plain @honcho-ai/sdk calls made inline, as a straightforward
//    integration would: per turn the session context, the user and AI peer
//    contexts and a dialectic before the model call, then the turn's
//    messages after it.
//
// It prints the time each hook takes to return to the agent (turn 1 and
// turns 2..N), the requests per turn by route, the session-start requests,
// and wall time and request ratios. Under `deno bench` the file registers
// nothing (the workload needs a server and seconds per turn).
import { Honcho } from "@honcho-ai/sdk";
import { setLogger } from "@hermes/memory";
import { HonchoMemoryProvider } from "../plugins/memory/honcho/mod.ts";
import {
  type HonchoRequestLogEntry,
  type HonchoTestServer,
  startHonchoTestServer,
} from "../tests/honcho_server.ts";

interface BenchOptions {
  turns: number;
  latencyMs: number;
  modelMs: number;
}

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
}

const QUERIES = [
  "What should I pack for the Oslo hiking trip?",
  "Which tea did I say I liked?",
  "Can you remind me about the trip dates for Oslo?",
  "Do I prefer trains or planes for short trips?",
];

function parseArgs(args: string[]): BenchOptions {
  const get = (name: string, fallback: number): number => {
    const hit = args.find((a) => a.startsWith(`--${name}=`));
    const value = hit ? Number(hit.split("=")[1]) : fallback;
    return Number.isFinite(value) && value >= 0 ? value : fallback;
  };
  return {
    turns: get("turns", 20),
    latencyMs: get("latency", 200),
    modelMs: get("model", 1000),
  };
}

function seed(server: HonchoTestServer): void {
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
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

function query(turn: number): string {
  return `${QUERIES[(turn - 1) % QUERIES.length]} (turn ${turn})`;
}

async function runProvider(options: BenchOptions): Promise<RunResult> {
  await using server = await startHonchoTestServer({
    latencyMs: options.latencyMs,
  });
  seed(server);
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
  const provider = new HonchoMemoryProvider();
  const prefetchMs: number[] = [];
  const syncMs: number[] = [];
  const perTurnRequests: number[] = [];
  let blockingMs = 0;
  let sessionStartRequests = 0;
  const started = performance.now();
  let t = performance.now();
  await provider.initialize("bench-session", {
    hermesHome: home,
    platform: "cli",
  });
  const initMs = performance.now() - t;
  blockingMs += initMs;
  for (let turn = 1; turn <= options.turns; turn++) {
    const before = server.requests.length;
    const q = query(turn);
    await provider.onTurnStart(turn, q, {});
    t = performance.now();
    await provider.prefetch(q, {});
    const prefetch = performance.now() - t;
    prefetchMs.push(prefetch);
    if (turn === 1) sessionStartRequests = server.requests.length;
    await sleep(options.modelMs); // the model call
    t = performance.now();
    await provider.syncTurn(q, `Here is what I found for turn ${turn}.`, {});
    const sync = performance.now() - t;
    syncMs.push(sync);
    await provider.queuePrefetch(q, {});
    blockingMs += prefetch + sync;
    if (turn > 1) perTurnRequests.push(server.requests.length - before);
  }
  await provider.idle(60_000);
  const wallMs = performance.now() - started;
  await provider.shutdown();
  await Deno.remove(home, { recursive: true });
  return {
    label: "HonchoMemoryProvider",
    initMs,
    wallMs,
    blockingMs,
    requests: [...server.requests],
    sessionStartRequests,
    perTurnRequests,
    prefetchMs,
    syncMs,
  };
}

async function runSdk(options: BenchOptions): Promise<RunResult> {
  await using server = await startHonchoTestServer({
    latencyMs: options.latencyMs,
  });
  seed(server);
  const honcho = new Honcho({
    baseURL: server.url,
    apiKey: "local",
    workspaceId: "bench",
    maxRetries: 0,
  });
  const prefetchMs: number[] = [];
  const syncMs: number[] = [];
  const perTurnRequests: number[] = [];
  const started = performance.now();
  let t = performance.now();
  const alice = await honcho.peer("alice");
  const hermes = await honcho.peer("hermes");
  const session = await honcho.session("bench-session");
  await session.addPeers([
    [alice, { observeMe: true, observeOthers: true }],
    [hermes, { observeMe: true, observeOthers: true }],
  ]);
  await session.getPeerConfiguration(alice);
  await session.getPeerConfiguration(hermes);
  const initMs = performance.now() - t;
  let blockingMs = initMs;
  let sessionStartRequests = 0;
  for (let turn = 1; turn <= options.turns; turn++) {
    const before = server.requests.length;
    const q = query(turn);
    t = performance.now();
    await session.context({
      summary: true,
      peerTarget: alice,
      peerPerspective: hermes,
    });
    await hermes.context({ target: alice, searchQuery: q });
    await hermes.context({ target: hermes });
    await hermes.chat(q, { target: alice });
    const prefetch = performance.now() - t;
    prefetchMs.push(prefetch);
    if (turn === 1) sessionStartRequests = server.requests.length;
    await sleep(options.modelMs);
    t = performance.now();
    await session.addMessages([
      alice.message(q),
      hermes.message(`Here is what I found for turn ${turn}.`),
    ]);
    const sync = performance.now() - t;
    syncMs.push(sync);
    blockingMs += prefetch + sync;
    if (turn > 1) perTurnRequests.push(server.requests.length - before);
  }
  const wallMs = performance.now() - started;
  return {
    label: "@honcho-ai/sdk inline",
    initMs,
    wallMs,
    blockingMs,
    requests: [...server.requests],
    sessionStartRequests,
    perTurnRequests,
    prefetchMs,
    syncMs,
  };
}

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

function report(run: RunResult, options: BenchOptions): void {
  const later = (values: number[]): number[] => values.slice(1);
  console.log(`\n== ${run.label} ==`);
  console.log(`  session set-up return: ${ms(run.initMs)} ms`);
  console.log(
    `  prefetch return, turn 1: ${
      ms(run.prefetchMs[0]!)
    } ms; turns 2..${options.turns}: median ${
      ms(quantile(later(run.prefetchMs), 0.5))
    } ms, p90 ${ms(quantile(later(run.prefetchMs), 0.9))} ms, max ${
      ms(Math.max(...later(run.prefetchMs)))
    } ms`,
  );
  console.log(
    `  syncTurn return, turn 1: ${
      ms(run.syncMs[0]!)
    } ms; turns 2..${options.turns}: median ${
      ms(quantile(later(run.syncMs), 0.5))
    } ms, p90 ${ms(quantile(later(run.syncMs), 0.9))} ms, max ${
      ms(Math.max(...later(run.syncMs)))
    } ms`,
  );
  console.log(
    `  session start (init + turn-1 prefetch): ${run.sessionStartRequests} requests`,
  );
  const perTurn = run.perTurnRequests;
  console.log(
    `  requests per turn (turns 2..${options.turns}): mean ${
      (perTurn.reduce((a, b) => a + b, 0) / perTurn.length).toFixed(2)
    }, min ${Math.min(...perTurn)}, max ${Math.max(...perTurn)}`,
  );
  console.log(
    `  total requests ${run.requests.length}; wall ${
      ms(run.wallMs)
    } ms (model time ${options.turns * options.modelMs} ms); agent blocked ${
      ms(run.blockingMs)
    } ms`,
  );
  console.log("  by route:");
  for (const line of byRoute(run.requests)) console.log(line);
}

if (import.meta.main) {
  setLogger({ log: () => {} });
  const options = parseArgs(Deno.args);
  console.log(
    `Honcho bench: ${options.turns} turns, ${options.latencyMs} ms server latency per request, ${options.modelMs} ms simulated model call per turn`,
  );
  const ours = await runProvider(options);
  report(ours, options);
  const sdk = await runSdk(options);
  report(sdk, options);
  console.log("\n== ratios (provider / sdk inline) ==");
  console.log(
    `  requests ${
      (ours.requests.length / sdk.requests.length).toFixed(2)
    }; wall time ${
      (ours.wallMs / sdk.wallMs).toFixed(2)
    }; agent-blocking time ${(ours.blockingMs / sdk.blockingMs).toFixed(4)}`,
  );
}
