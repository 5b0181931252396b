// The cost of the durable mode per turn: `await manager.flushPending()`
// after each `syncAll` (the turn is fsynced in the Honcho outbox before the
// host goes on; docs/durability.md) side by side with the default (syncAll
// returns at once; one group commit later the turn is on disk) and with a
// floor measured in the same run:
//
//   deno bench --no-prompt --allow-read --allow-write --allow-env --allow-net=127.0.0.1,localhost --allow-run --allow-sys bench/durable_turn_bench.ts
//
// - "turn.default": 100 turns through a MemoryManager with the Honcho
//   provider (tools recall mode, writes kept for the session end, so no
//   delivery runs), then one flushPending() for all of them;
// - "turn.durable": the same, with `await manager.flushPending()` after
//   every syncAll;
// - "turn.floor": the same 200 outbox records, one write + fdatasync per
//   turn — what any per-turn durable write must at least do.
//
// Read the report as ms per 100 turns; per turn = ms / 100. Stable ids
// (`turn.*`, the part of each name before the colon).
import { MemoryManager } from "@hermes/memory";
import { HonchoMemoryProvider } from "../plugins/memory/honcho/mod.ts";
import { server, turnText } from "./_honcho_turns.ts";
import { makeProfile } from "../tests/fixtures/honcho_provider_harness.ts";

const TURNS = 100;

async function run(durable: boolean, b: Deno.BenchContext): Promise<void> {
  const home = await makeProfile(server, {
    config: { recallMode: "tools", writeFrequency: "session" },
  });
  const manager = new MemoryManager();
  await manager.addProvider(new HonchoMemoryProvider());
  await manager.initializeAll("turn-bench", {
    hermesHome: home,
    platform: "cli",
  });
  b.start();
  for (let turn = 1; turn <= TURNS; turn++) {
    const [user, assistant] = turnText(turn);
    manager.syncAll(user, assistant, { sessionId: "turn-bench" });
    if (durable && !await manager.flushPending()) {
      throw new Error("not durable");
    }
  }
  if (!await manager.flushPending()) throw new Error("not durable");
  b.end();
  await manager.shutdownAll();
  await Deno.remove(home, { recursive: true });
}

Deno.bench({
  name:
    "turn.default: 100 turns, syncAll returns at once (one flush at the end)",
  group: "100 turns until durable",
  baseline: true,
  n: 10,
  warmup: 2,
  async fn(b) {
    await run(false, b);
  },
});

Deno.bench({
  name:
    "turn.durable: 100 turns, await manager.flushPending() after each syncAll",
  group: "100 turns until durable",
  n: 10,
  warmup: 2,
  async fn(b) {
    await run(true, b);
  },
});

Deno.bench({
  name: "turn.floor: floor: the 200 records, one write + fdatasync per turn",
  group: "100 turns until durable",
  n: 10,
  warmup: 2,
  async fn(b) {
    const dir = await Deno.makeTempDir({ prefix: "turn_floor_" });
    const encoder = new TextEncoder();
    b.start();
    const file = await Deno.open(`${dir}/outbox.jsonl`, {
      create: true,
      append: true,
    });
    for (let turn = 1; turn <= TURNS; turn++) {
      const lines = turnText(turn).map((content, role) => {
        const id = crypto.randomUUID();
        return JSON.stringify({
          type: "message",
          id,
          workspace: "ws",
          session: "turn-bench",
          peer: role === 0 ? "alice" : "hermes",
          content,
          metadata: { hermes_outbox_id: id },
          createdAt: new Date().toISOString(),
        });
      });
      await file.write(encoder.encode(`${lines.join("\n")}\n`));
      await file.syncData();
    }
    file.close();
    b.end();
    await Deno.remove(dir, { recursive: true });
  },
});
