// A 600-turn backlog, counted on the server: 600 turns handed over without
// a pause, then shutdownAll() and exit, then restarts; and `hermes memory
// import` of a 600-turn transcript, run twice (the second run stores
// nothing new). Nothing may be neither on Honcho nor in the outbox, nothing
// may be stored twice, and the drain state must count what is not durable.
import assert from "node:assert/strict";
import { join } from "node:path";
import { hermesWithWorker, testUser } from "../helpers/honcho_cli.ts";
import { spawnRepoScript } from "../helpers/deno_child.ts";
import { HonchoClient } from "../../plugins/memory/honcho/client/client.ts";
import { HonchoOutbox } from "../../plugins/memory/honcho/outbox/outbox.ts";
import {
  type HonchoTestServer,
  startHonchoTestServer,
} from "../honcho_server.ts";
import {
  makeProfile,
  removeHome,
  ROUTES,
  serverSettled,
} from "../fixtures/honcho_provider_harness.ts";

const ROOT = new URL("../..", import.meta.url);
const TURNS = 600;

function expectedContents(turns: number): string[] {
  return Array.from(
    { length: turns },
    (_, i) => [`Question ${i + 1}`, `Answer ${i + 1}`],
  ).flat();
}

/** Contents on the server, and in the outbox file, counted. */
async function account(
  server: HonchoTestServer,
  home: string,
  expected: readonly string[],
): Promise<
  { lost: number; duplicated: number; onServer: number; queued: number }
> {
  const stored = new Map<string, number>();
  for (const m of server.state.messages) {
    stored.set(m.content, (stored.get(m.content) ?? 0) + 1);
  }
  const queued = new Set(
    (await new HonchoOutbox({ workspace: "ws", hermesHome: home }).pending())
      .map((r) => r.content),
  );
  return {
    lost: expected.filter((c) => !stored.has(c) && !queued.has(c)).length,
    duplicated: [...stored.values()].filter((n) => n > 1).length,
    onServer: server.state.messages.length,
    queued: queued.size,
  };
}

const MANAGER_CHILD = `
import { MemoryManager } from ${JSON.stringify(new URL("mod.ts", ROOT).href)};
import { HonchoMemoryProvider } from ${
  JSON.stringify(new URL("plugins/memory/honcho/mod.ts", ROOT).href)
};
const [home, turns] = Deno.args;
const manager = new MemoryManager();
await manager.addProvider(new HonchoMemoryProvider({
  outbox: { lateCommitGraceMs: 300 },
}));
await manager.initializeAll("s1", { hermesHome: home, platform: "cli" });
for (let turn = 1; turn <= Number(turns); turn++) {
  manager.syncAll("Question " + turn, "Answer " + turn, { sessionId: "s1" });
}
await manager.shutdownAll();
console.log(JSON.stringify(manager.shutdownDrainState));
Deno.exit(0);
`;

async function runManagerChild(
  dir: string,
  home: string,
  turns: number,
): Promise<Record<string, unknown>> {
  const script = join(dir, `child_${crypto.randomUUID().slice(0, 8)}.ts`);
  await Deno.writeTextFile(script, MANAGER_CHILD);
  const output = await spawnRepoScript(script, [home, String(turns)]).output();
  const stdout = new TextDecoder().decode(output.stdout);
  assert.equal(output.code, 0, new TextDecoder().decode(output.stderr));
  return JSON.parse(stdout.trim().split("\n").at(-1)!);
}

Deno.test("600 turns without a pause, then shutdownAll() and exit, then two restarts: nothing lost, nothing stored twice, the drain state is honest", async (t) => {
  // "turn" used to make each append wait behind the previous turn's
  // delivery; "async" is the default.
  for (const writeFrequency of ["async", "turn"]) {
    await t.step(`writeFrequency ${writeFrequency}`, async () => {
      await using server = await startHonchoTestServer();
      // Slow writes: the shutdown budget cannot deliver all 12 batches.
      server.inject(ROUTES.messages, { latencyMs: 400, times: Infinity });
      const home = await makeProfile(server, {
        config: { recallMode: "tools", timeout: 2, writeFrequency },
      });
      try {
        const expected = expectedContents(TURNS);
        const first = await runManagerChild(home, home, TURNS);
        await serverSettled(server);
        const afterExit = await account(server, home, expected);
        // Before this fix: up to 1,188 of 1,200 were gone, and the state
        // said drained.
        assert.equal(afterExit.lost, 0, JSON.stringify(afterExit));
        assert.equal(afterExit.duplicated, 0);
        assert.equal(first.notDurable, 0, JSON.stringify(first));
        assert.deepEqual(first.undrainedProviders, []);
        assert.equal(first.status, "drained");
        assert.ok(
          afterExit.queued > 0,
          `the budget ran out with messages queued: ${
            JSON.stringify(afterExit)
          }`,
        );
        for (let restart = 0; restart < 2; restart++) {
          await runManagerChild(home, home, 0);
          await serverSettled(server);
          const now = await account(server, home, expected);
          assert.equal(
            now.lost,
            0,
            `restart ${restart}: ${JSON.stringify(now)}`,
          );
          assert.equal(now.duplicated, 0, `restart ${restart}`);
        }
        server.clearFaults();
        const outbox = new HonchoOutbox({ workspace: "ws", hermesHome: home });
        const client = new HonchoClient({
          workspaceId: "ws",
          baseUrl: server.url,
        });
        assert.equal(await outbox.flush(client, 10_000), true);
        const end = await account(server, home, expected);
        assert.deepEqual(end, {
          lost: 0,
          duplicated: 0,
          onServer: 2 * TURNS,
          queued: 0,
        });
      } finally {
        await removeHome(home);
      }
      server.assertNoViolations();
    });
  }
});

Deno.test("hermes memory import of a 600-turn transcript: every message durable and on Honcho once; a second run stores nothing new", async () => {
  await using server = await startHonchoTestServer();
  server.inject(ROUTES.messages, { latencyMs: 50, times: Infinity });
  await using user = await testUser();
  const home = user.root;
  await makeProfile(server, {
    home,
    config: { recallMode: "tools", timeout: 2 },
  });
  const host = new URL(server.url).host;
  await Deno.writeTextFile(
    join(home, "config.yaml"),
    `memory:\n  provider: honcho\n  permissions:\n    honcho:\n      net: ["${host}"]\n`,
  );
  const file = join(home, "chat.jsonl");
  await Deno.writeTextFile(
    file,
    Array.from({ length: TURNS }, (_, i) =>
      [
        JSON.stringify({ role: "user", content: `Question ${i + 1}` }),
        JSON.stringify({ role: "assistant", content: `Answer ${i + 1}` }),
      ].join("\n")).join("\n") + "\n",
  );
  const expected = expectedContents(TURNS);
  // The real entry point, with the Honcho worker's grant.
  const run = () => hermesWithWorker(user, ["memory", "import", file]);
  const first = await run();
  assert.equal(first.code, 0, first.err);
  assert.match(first.out, /Imported 600 turns/);
  await serverSettled(server);
  const once = await account(server, home, expected);
  // Before this fix: "Imported 600 turns", exit 0, and 508 of 1,200 gone.
  assert.equal(once.lost, 0, JSON.stringify(once));
  assert.equal(once.duplicated, 0);
  const posts = server.requestCount(ROUTES.messages);

  const second = await run();
  assert.equal(second.code, 0, second.err);
  await serverSettled(server);
  const twice = await account(server, home, expected);
  // Before this fix the second run stored all 1,200 again.
  assert.deepEqual(twice, {
    lost: 0,
    duplicated: 0,
    onServer: 2 * TURNS,
    queued: 0,
  });
  // What the first run had delivered was looked up, not sent again.
  assert.equal(
    server.requestCount(ROUTES.messages) - posts,
    Math.ceil(once.queued / 100),
  );
  server.assertNoViolations();
});
