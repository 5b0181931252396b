// Import throughput: 1,000 turns (2,000 messages) to durable on a Honcho test
// server with 50 ms of latency per request (a nearby self-hosted Honcho):
//
//   deno bench --no-prompt --allow-read --allow-write --allow-env --allow-net=127.0.0.1,localhost --allow-run --allow-sys bench/import_bench.ts
//
// - "hermes memory import": the real CLI process, run as the `hermes`
//   task's `deno run <flags> <entry>` (read from deno.json at run time) with
//   the server's host added to `--allow-net`, a home whose config.yaml
//   selects Honcho and grants it that host (`memory.permissions.honcho.net`),
//   and the transcript under `$HOME/.hermes`; timed from spawn to exit;
// - "MemoryManager + HonchoMemoryProvider, in-process": the same turns
//   (parsed by the CLI's own `parseTranscript`) through the same calls the
//   command makes (onTurnStart, prefetchAll, syncAll, queuePrefetchAll; then
//   flushPending and shutdownAll), timed from the first turn to the end of
//   shutdownAll;
// - floor: the same 2,000 messages as 20 bare `fetch` POSTs of 100 (the
//   API's largest batch), one after another, to a server with the same
//   latency (workspace, peers and session created beforehand, untimed).
//
// Each iteration has a fresh server. After it, the server's messages are
// counted: durable = on the server exactly once when the timed part ends
// (a message still in the provider's local outbox counts as missing); the
// missing and duplicated counts and turns/s (turns stored / seconds) are
// printed when the file ends. A run that leaves messages unstored is
// reported, not hidden.
import { join } from "node:path";
import { Honcho } from "npm:@honcho-ai/sdk@2.5.0";
import { MemoryManager } from "@hermes/memory";
import { parseTranscript } from "../src/cli/commands/memory_import.ts";
import { HonchoMemoryProvider } from "@hermes/memory/honcho";
import {
  type HonchoTestServer,
  startHonchoTestServer,
} from "../tests/honcho_server.ts";
import {
  addSample,
  benchmark,
  formatMs,
  type Iteration,
  keepLogs,
  median,
  mustSucceed,
  record,
  runProcess,
  setup,
} from "./_harness.ts";
import { honchoUserHome, viaDirect } from "./_hermes_cli.ts";
import { variedTurn } from "./_manager_workload.ts";

/** `hermes memory import <file>` in `home`, spawn to exit, timed. */
async function timedImport(
  it: Iteration,
  home: string,
  file: string,
  host: string,
): Promise<Awaited<ReturnType<typeof runProcess>>> {
  const cli = viaDirect(
    home,
    ["memory", "import", file, "--session", "import-bench"],
    { net: [host] },
  );
  if (typeof cli === "string") throw new Error(cli);
  const result = await it.time(() =>
    runProcess(cli.command, cli.args, {
      cwd: cli.cwd,
      env: cli.env,
      timeoutMs: CLI_DEADLINE_MS,
    })
  );
  mustSucceed(`hermes memory import (${cli.label})`, result);
  return result;
}

keepLogs("import_bench");

const TURNS = 1_000;
const LATENCY_MS = 50;
const BATCH = 100;
/** A CLI import still running after this is killed and reported. */
const CLI_DEADLINE_MS = 90_000;

/** The transcript: `turns` user/assistant pairs, every message different. */
function transcriptText(turns = TURNS): string {
  const lines: string[] = [
    JSON.stringify({ role: "system", content: "You are Hermes." }),
  ];
  for (let turn = 1; turn <= turns; turn++) {
    const { user, reply } = variedTurn(turn);
    lines.push(JSON.stringify({ role: "user", content: `${user} [${turn}]` }));
    lines.push(
      JSON.stringify({ role: "assistant", content: `${reply} [${turn}]` }),
    );
  }
  return lines.join("\n") + "\n";
}

const TRANSCRIPT = transcriptText();
const EXPECTED = parseTranscript(TRANSCRIPT).turns.flatMap((t) => [
  t.user,
  t.assistant,
]);

/** What the server holds after one iteration. */
interface Stored {
  ms: number;
  stored: number;
  missing: number;
  duplicated: number;
}

const results = new Map<string, Stored[]>();
const leftovers: string[] = [];

function count(id: string, server: HonchoTestServer, ms: number): Stored {
  const seen = new Map<string, number>();
  for (const message of server.state.messages) {
    seen.set(message.content, (seen.get(message.content) ?? 0) + 1);
  }
  let missing = 0;
  let duplicated = 0;
  for (const content of EXPECTED) {
    const n = seen.get(content) ?? 0;
    if (n === 0) missing++;
    if (n > 1) duplicated += n - 1;
  }
  const result = { ms, stored: EXPECTED.length - missing, missing, duplicated };
  let list = results.get(id);
  if (!list) results.set(id, list = []);
  list.push(result);
  record(id, { ...result, turns: TURNS });
  return result;
}

function server(): Promise<HonchoTestServer> {
  return startHonchoTestServer({ latencyMs: LATENCY_MS });
}

const GROUP =
  `import: ${TURNS} turns to durable on Honcho (${LATENCY_MS} ms latency)`;

// --- floor --------------------------------------------------------------------

benchmark({
  id: "import.floor",
  title: `floor: ${EXPECTED.length} messages as ${
    EXPECTED.length / BATCH
  } bare fetch POSTs of ${BATCH}`,
  group: GROUP,
  baseline: true,
  n: 1,
  warmup: 0,
  async fn(it) {
    await using honcho = await server();
    const sdk = new Honcho({
      baseURL: honcho.url,
      apiKey: "local",
      workspaceId: "bench",
    });
    const [alice, hermes, session] = await Promise.all([
      sdk.peer("alice"),
      sdk.peer("hermes"),
      sdk.session("floor"),
    ]);
    await session.addPeers([alice, hermes]);
    const url = `${honcho.url}/v3/workspaces/bench/sessions/floor/messages`;
    const messages = EXPECTED.map((content, i) => ({
      content,
      peer_id: i % 2 === 0 ? "alice" : "hermes",
    }));
    const started = performance.now();
    await it.time(async () => {
      for (let i = 0; i < messages.length; i += BATCH) {
        const response = await fetch(url, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ messages: messages.slice(i, i + BATCH) }),
        });
        const body = await response.text();
        if (!response.ok) {
          throw new Error(`POST messages answered ${response.status}: ${body}`);
        }
      }
    });
    count("import.floor", honcho, performance.now() - started);
  },
});

// --- in-process ---------------------------------------------------------------

benchmark({
  id: "import.manager",
  title: "MemoryManager + HonchoMemoryProvider, in-process",
  group: GROUP,
  n: 1,
  warmup: 0,
  async fn(it) {
    await using honcho = await server();
    const home = await Deno.makeTempDir({ prefix: "hermes_import_bench_" });
    try {
      await Deno.writeTextFile(
        join(home, "honcho.json"),
        JSON.stringify({
          baseUrl: honcho.url,
          workspace: "bench",
          peerName: "alice",
          aiPeer: "hermes",
        }),
      );
      const sessionId = "import-bench";
      const manager = new MemoryManager();
      if (!await manager.addProvider(new HonchoMemoryProvider())) {
        throw new Error("the manager refused the Honcho provider");
      }
      await manager.initializeAll(sessionId, {
        hermesHome: home,
        platform: "cli",
      });
      const { turns } = parseTranscript(TRANSCRIPT);
      const started = performance.now();
      await it.time(async () => {
        let turn = 0;
        for (const t of turns) {
          turn++;
          await manager.onTurnStart(turn, t.user, { platform: "cli" });
          await manager.prefetchAll(t.user, { sessionId });
          manager.syncAll(t.user, t.assistant, {
            sessionId,
            messages: t.messages,
          });
          manager.queuePrefetchAll(t.user, { sessionId });
        }
        await manager.flushPending();
        await manager.shutdownAll();
      });
      count("import.manager", honcho, performance.now() - started);
    } finally {
      // A provider whose shutdown timed out may still be writing its
      // outbox there: remove what can be removed now, the rest at the end.
      await Deno.remove(home, { recursive: true }).catch(() =>
        leftovers.push(home)
      );
    }
  },
});

// --- the CLI process ------------------------------------------------------------

const cliCheck = await setup("the hermes task line", async () => {
  await using probe = await honchoUserHome();
  return viaDirect(probe.home, ["memory", "import"]);
});
if (typeof cliCheck === "string") {
  console.error(`[import_bench] import.cli skipped: ${cliCheck}`);
  record("import.cli", { skipped: cliCheck });
} else {
  benchmark({
    id: "import.cli",
    title: `\`hermes memory import\` (${cliCheck.label})`,
    group: GROUP,
    n: 1,
    warmup: 0,
    async fn(it) {
      await using honcho = await server();
      const host = new URL(honcho.url).host;
      await using user = await honchoUserHome({
        baseUrl: honcho.url,
        net: [host],
        prefix: "hermes_import_cli_",
      });
      const file = join(user.hermes, "import.jsonl");
      await Deno.writeTextFile(file, TRANSCRIPT);
      const result = await timedImport(it, user.home, file, host);
      const stored = count("import.cli", honcho, result.ms);
      if (stored.missing > 0 || result.stderr.trim() !== "") {
        console.error(
          `[import_bench] hermes memory import: ${stored.missing} message(s) not on the server; stderr: ${result.stderr.trim()}`,
        );
      }
    },
  });
}

// --- 600 turns against one fdatasync per turn (issue 31) ----------------------

// `hermes memory import` of SMALL_TURNS turns into a local Honcho test server
// (no latency), spawn to exit, against its floor measured right before it in
// the same iteration: the same 2 × SMALL_TURNS outbox lines appended turn by
// turn to a file in the same home, each append with its own fdatasync (what a
// durable queue without group commit pays). The ratio is the median of the
// paired ratios; every run's messages are counted on the server.
const SMALL_TURNS = 600;
const SMALL = transcriptText(SMALL_TURNS);
const SMALL_EXPECTED = parseTranscript(SMALL).turns.flatMap((t) => [
  t.user,
  t.assistant,
]);

async function fsyncFloor(dir: string): Promise<number> {
  const lines = SMALL_EXPECTED.map((content, i) =>
    JSON.stringify({
      type: "message",
      id: crypto.randomUUID(),
      session: "import-bench",
      peer: i % 2 === 0 ? "alice" : "hermes",
      content,
    }) + "\n"
  );
  const encoder = new TextEncoder();
  const started = performance.now();
  const file = await Deno.open(join(dir, "floor.jsonl"), {
    append: true,
    create: true,
  });
  try {
    for (let i = 0; i < lines.length; i += 2) {
      await file.write(encoder.encode(lines[i]! + lines[i + 1]!));
      await file.syncData();
    }
  } finally {
    file.close();
  }
  return performance.now() - started;
}

if (typeof cliCheck !== "string") {
  const SMALL_GROUP =
    `import: ${SMALL_TURNS} turns, local server, vs one fdatasync per turn`;
  benchmark({
    id: "import.cli600",
    title:
      `\`hermes memory import\` of ${SMALL_TURNS} turns (${cliCheck.label})`,
    group: SMALL_GROUP,
    n: 5,
    warmup: 0,
    async fn(it) {
      await using honcho = await startHonchoTestServer();
      const host = new URL(honcho.url).host;
      await using user = await honchoUserHome({
        baseUrl: honcho.url,
        net: [host],
        prefix: "hermes_import600_",
      });
      const file = join(user.hermes, "import.jsonl");
      await Deno.writeTextFile(file, SMALL);
      const floor = await fsyncFloor(user.hermes);
      const result = await timedImport(it, user.home, file, host);
      const contents = new Map<string, number>();
      for (const message of honcho.state.messages) {
        contents.set(message.content, (contents.get(message.content) ?? 0) + 1);
      }
      const lost = SMALL_EXPECTED.filter((c) => !contents.has(c)).length;
      const doubled = [...contents.values()].filter((n) => n > 1).length;
      addSample("import.fsync600.floor", floor);
      addSample("import.fsync600.ratio", result.ms / floor);
      record("import.cli600.count", { lost, doubled });
      small.push({ ms: result.ms, floor, lost, doubled });
    },
  });
}
const small: { ms: number; floor: number; lost: number; doubled: number }[] =
  [];

globalThis.addEventListener("unload", () => {
  for (const dir of leftovers) {
    try {
      Deno.removeSync(dir, { recursive: true });
    } catch (error) {
      console.error(`[import_bench] could not remove ${dir}: ${error}`);
    }
  }
  const lines = [`\n== import: ${TURNS} turns (medians of this run) ==`];
  const floor = median((results.get("import.floor") ?? []).map((r) => r.ms));
  for (const [id, list] of results) {
    const ms = median(list.map((r) => r.ms));
    const stored = Math.min(...list.map((r) => r.stored));
    const missing = Math.max(...list.map((r) => r.missing));
    const dup = Math.max(...list.map((r) => r.duplicated));
    lines.push(
      `  ${id}: ${formatMs(ms)}, ${
        ((stored / 2) / (ms / 1000)).toFixed(0)
      } turns/s durable, ${
        (ms / floor).toFixed(2)
      }× the floor; worst run: ${stored}/${EXPECTED.length} on the server, ${missing} missing, ${dup} duplicated (${list.length} runs)`,
    );
  }
  if (small.length > 0) {
    lines.push(
      `  import.cli600: ${
        formatMs(median(small.map((r) => r.ms)))
      } vs ${SMALL_TURNS} fdatasyncs ${
        formatMs(median(small.map((r) => r.floor)))
      }: median paired ratio ${
        median(small.map((r) => r.ms / r.floor)).toFixed(2)
      }× (goal ≤ 5×); lost ${
        Math.max(...small.map((r) => r.lost))
      }, duplicated ${
        Math.max(...small.map((r) => r.doubled))
      } (worst of ${small.length} runs)`,
    );
  }
  console.log(lines.join("\n"));
});
