// Import throughput: turns per second until durable, for 1,000 turns, side
// by side with a floor and a baseline measured in the same run:
//
//   deno bench --no-prompt --allow-read --allow-write --allow-env --allow-net=127.0.0.1,localhost --allow-run --allow-sys bench/import_durable_bench.ts
//
// (`deno task bench` runs it with the rest of bench/.)
//
// - "memory import path": what `hermes memory import` does per turn
//   (onTurnStart, prefetchAll, syncAll with a stable turnId,
//   queuePrefetchAll) through a MemoryManager with the Honcho provider
//   (tools recall mode, async writes, a local Honcho test server), timed
//   until `flushPending()` reports every turn durable in the fsynced outbox
//   (delivery goes on in the background and is not waited for);
// - "floor": `JSON.stringify` of the same 2,000 outbox records and one
//   write + `fdatasync` of them — what any durable import must at least do;
// - "baseline: one fsync per turn": the same records appended turn by turn,
//   each with its own `fdatasync` — a queue without group commit (what the
//   outbox did before).
//
// Read the report as ms per 1,000 turns; turns/s = 1,000 / (ms / 1,000).
// Stable ids (`durable.*`, the part of each name before the colon) for
// bench/_report.ts.
// Each iteration uses a fresh profile home.
import { MemoryManager } from "@hermes/memory";
import { HonchoMemoryProvider } from "../plugins/memory/honcho/mod.ts";
import { server, turnText } from "./_honcho_turns.ts";
import { makeProfile } from "../tests/fixtures/honcho_provider_harness.ts";

const TURNS = 1_000;

function freshHome(): Promise<string> {
  return makeProfile(server, { config: { recallMode: "tools" } });
}

function records(): string[] {
  const out: string[] = [];
  for (let turn = 1; turn <= TURNS; turn++) {
    for (const [role, content] of turnText(turn).entries()) {
      const id = crypto.randomUUID();
      out.push(JSON.stringify({
        type: "message",
        id,
        workspace: "ws",
        session: "import-bench",
        peer: role === 0 ? "alice" : "hermes",
        content,
        metadata: {
          hermes_outbox_id: id,
          hermes_role: role ? "assistant" : "user",
        },
        createdAt: new Date().toISOString(),
      }));
    }
  }
  return out;
}

Deno.bench({
  name:
    "durable.manager: memory import path, 1,000 turns until durable (Honcho outbox)",
  group: "import 1,000 turns",
  baseline: true,
  n: 10,
  warmup: 2,
  async fn(b) {
    const home = await freshHome();
    const manager = new MemoryManager();
    await manager.addProvider(new HonchoMemoryProvider());
    await manager.initializeAll("import-bench", {
      hermesHome: home,
      platform: "cli",
    });
    b.start();
    for (let turn = 1; turn <= TURNS; turn++) {
      const [user, assistant] = turnText(turn);
      await manager.onTurnStart(turn, user, { platform: "cli" });
      await manager.prefetchAll(user, { sessionId: "import-bench" });
      manager.syncAll(user, assistant, {
        sessionId: "import-bench",
        turnId: `bench-${turn}`,
      });
      manager.queuePrefetchAll(user, { sessionId: "import-bench" });
    }
    if (!await manager.flushPending()) throw new Error("not durable");
    b.end();
    await manager.shutdownAll();
    await Deno.remove(home, { recursive: true });
  },
});

Deno.bench({
  name:
    "durable.floor: floor: JSON.stringify + one write + fdatasync of the 2,000 records",
  group: "import 1,000 turns",
  n: 10,
  warmup: 2,
  async fn(b) {
    const dir = await Deno.makeTempDir({ prefix: "import_floor_" });
    b.start();
    const file = await Deno.open(`${dir}/outbox.jsonl`, {
      create: true,
      append: true,
    });
    await file.write(new TextEncoder().encode(`${records().join("\n")}\n`));
    await file.syncData();
    file.close();
    b.end();
    await Deno.remove(dir, { recursive: true });
  },
});

Deno.bench({
  name:
    "durable.per_fsync: baseline: the same records, one write + fdatasync per turn",
  group: "import 1,000 turns",
  n: 3,
  warmup: 1,
  async fn(b) {
    const dir = await Deno.makeTempDir({ prefix: "import_perturn_" });
    const lines = records();
    b.start();
    const file = await Deno.open(`${dir}/outbox.jsonl`, {
      create: true,
      append: true,
    });
    const encoder = new TextEncoder();
    for (let i = 0; i < lines.length; i += 2) {
      await file.write(encoder.encode(`${lines[i]}\n${lines[i + 1]}\n`));
      await file.syncData();
    }
    file.close();
    b.end();
    await Deno.remove(dir, { recursive: true });
  },
});
