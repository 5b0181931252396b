// Delivery under transport faults, counted on the server: a proxy that
// commits a message POST and then closes the (reused) keep-alive connection
// without answering; a server that commits late (after the client gave up);
// a server that commits at once and answers late; and a SIGKILL campaign —
// child processes delivering the same outbox, killed at random points
// mid-flush, against a server mixing those faults. Each asserts 0 lost and
// 0 duplicated messages on the server.
import assert from "node:assert/strict";
import { join } from "node:path";
import { HonchoClient } from "../../plugins/memory/honcho/client/client.ts";
import {
  HonchoOutbox,
  OUTBOX_ID_METADATA_KEY,
} from "../../plugins/memory/honcho/outbox/outbox.ts";
import {
  type HonchoFault,
  type HonchoTestServer,
  startHonchoTestServer,
} from "../honcho_server.ts";
import { KeepAliveFront } from "../honcho_server/keepalive_front.ts";
import { spawnRepoScript } from "../helpers/deno_child.ts";
import {
  makeProfile,
  removeHome,
  ROUTES,
  serverSettled,
  startProvider,
  waitUntil,
} from "../fixtures/honcho_provider_harness.ts";
import { withHome } from "../helpers/test_home.ts";

const ROOT = new URL("../..", import.meta.url);

/** Lost and duplicated messages: `expected` contents against the server's. */
function lostAndDuplicated(
  server: HonchoTestServer,
  expected: readonly string[],
): { lost: string[]; duplicated: string[] } {
  const counts = new Map<string, number>();
  for (const m of server.state.messages) {
    counts.set(m.content, (counts.get(m.content) ?? 0) + 1);
  }
  return {
    lost: expected.filter((c) => !counts.has(c)),
    duplicated: [...counts].filter(([, n]) => n > 1).map(([c]) => c),
  };
}

function turns(session: string, count: number, tag: string) {
  return Array.from({ length: count }, (_, i) => ({
    session,
    peer: i % 2 === 0 ? "alice" : "hermes",
    content: `${tag} message ${i}`,
  }));
}

Deno.test("A proxy that commits a message POST and closes the keep-alive connection without answering: stored once", async () => {
  await using server = await startHonchoTestServer();
  let drops = 0;
  await using front = new KeepAliveFront({
    upstream: server.url,
    dropAfterCommit: (r) =>
      r.method === "POST" && r.target.endsWith("/messages") && drops++ === 0,
  });
  await withHome(async (home) => {
    const client = new HonchoClient({
      workspaceId: "ws",
      baseUrl: front.url,
      // The dropped answer fails the POST at once; the limit only has to
      // outlast a loaded machine's first requests.
      timeoutMs: 10_000,
      maxRetries: 0,
    });
    // Reads first: they leave an idle keep-alive connection in the pool,
    // which is what the message POST used to go over (and Deno's fetch then
    // re-sent it on a new connection after the drop: 4 rows for 2).
    await client.getOrCreateSession("s1");
    await client.listMessages("s1");
    const outbox = new HonchoOutbox({
      workspace: "ws",
      hermesHome: home,
      lateCommitGraceMs: 200,
    });
    const messages = turns("s1", 2, "keep-alive");
    await outbox.append(messages);
    const result = await outbox.deliver(client);
    await serverSettled(server);
    const { lost, duplicated } = lostAndDuplicated(
      server,
      messages.map((m) => m.content),
    );
    assert.deepEqual({ lost, duplicated }, { lost: [], duplicated: [] });
    assert.equal(server.state.messages.length, 2);
    assert.equal(result.pending, 0);
    assert.equal(result.duplicates, 2, JSON.stringify(result));
    // The write went over a connection of its own, never a reused one.
    const posts = front.requests.filter((r) =>
      r.method === "POST" && r.target.endsWith("/messages")
    );
    assert.equal(posts.length, 1);
    assert.equal(posts[0]!.onConnection, 1);
    assert.ok(
      front.requests.some((r) => r.onConnection > 1),
      "the reads did reuse a keep-alive connection",
    );
  });
  server.assertNoViolations();
});

Deno.test("HonchoMemoryProvider behind a proxy that drops the answer of a committed write on a keep-alive connection: 0 lost, 0 duplicated", async () => {
  await using server = await startHonchoTestServer();
  let drops = 0;
  await using front = new KeepAliveFront({
    upstream: server.url,
    dropAfterCommit: (r) =>
      r.method === "POST" && r.target.endsWith("/messages") && drops++ < 2,
  });
  const home = await makeProfile(front, {
    config: { recallMode: "tools", timeout: 1 },
  });
  const provider = await startProvider(home);
  try {
    const expected: string[] = [];
    for (let turn = 1; turn <= 6; turn++) {
      await provider.syncTurn(`Question ${turn}`, `Answer ${turn}`, {});
      expected.push(`Question ${turn}`, `Answer ${turn}`);
    }
    await provider.idle();
    await waitUntil(
      async () => (await provider.outbox!.stats()).pending === 0,
      15_000,
      "delivery",
    );
    await serverSettled(server);
    assert.deepEqual(lostAndDuplicated(server, expected), {
      lost: [],
      duplicated: [],
    });
    assert.equal(server.state.messages.length, 12);
    assert.ok(drops >= 1, "the front dropped an answer");
  } finally {
    await provider.shutdown();
    await removeHome(home);
  }
  server.assertNoViolations();
});

Deno.test("A server that commits after the client gave up (slow) or commits and answers late: every message stored once", async (t) => {
  const faults: [string, HonchoFault][] = [
    // Stored 700 ms after arrival; the client gives up at 400 ms.
    ["commits late", { latencyMs: 700 }],
    // Stored at once, answered after the client gave up.
    ["answers late", { answerAfterMs: 900 }],
  ];
  for (const [label, fault] of faults) {
    await t.step(label, async () => {
      await using server = await startHonchoTestServer();
      await withHome(async (home) => {
        const outbox = new HonchoOutbox({
          workspace: "ws",
          hermesHome: home,
          lateCommitGraceMs: 500,
          retryBaseDelayMs: 10,
        });
        const messages = turns("s1", 120, label);
        await outbox.append(messages);
        server.inject(ROUTES.messages, fault);
        const client = new HonchoClient({
          workspaceId: "ws",
          baseUrl: server.url,
          timeoutMs: 400,
          maxRetries: 0,
        });
        // A bound for the whole flush, not a speed limit: on a loaded
        // machine the late commits and the retries take longer.
        assert.equal(await outbox.flush(client, 60_000), true);
        await serverSettled(server);
        assert.deepEqual(
          lostAndDuplicated(server, messages.map((m) => m.content)),
          { lost: [], duplicated: [] },
        );
        assert.equal(server.state.messages.length, 120);
      });
    });
  }
});

// ---------------------------------------------------------------------------
// SIGKILL campaign
// ---------------------------------------------------------------------------

const CAMPAIGN_CHILD = `
import { HonchoOutbox } from ${
  JSON.stringify(new URL("plugins/memory/honcho/outbox/outbox.ts", ROOT).href)
};
import { HonchoClient } from ${
  JSON.stringify(new URL("plugins/memory/honcho/client/client.ts", ROOT).href)
};
const [home, url, tag, count] = Deno.args;
const outbox = new HonchoOutbox({
  workspace: "ws",
  hermesHome: home,
  lateCommitGraceMs: 400,
  retryBaseDelayMs: 20,
  retryMaxDelayMs: 200,
});
const session = "s" + (Number(tag.slice(1)) % 3);
await outbox.append(Array.from({ length: Number(count) }, (_, i) => ({
  session,
  peer: i % 2 === 0 ? "alice" : "hermes",
  content: tag + " message " + i,
})));
console.log("appended");
const client = new HonchoClient({ workspaceId: "ws", baseUrl: url, maxRetries: 0, timeoutMs: 500 });
await outbox.flush(client, 60_000);
console.log("flushed");
`;

/** A small seeded generator (mulberry32), so a failing campaign can be replayed. */
function seeded(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

Deno.test({
  name:
    "HonchoOutbox SIGKILL campaign: children killed at random points mid-flush, two at a time, against a slow, dropping and late-answering server: 0 lost, 0 duplicated",
  ignore: Deno.build.os === "windows",
  fn: async () => {
    const seed = Number(Deno.env.get("HONCHO_CAMPAIGN_SEED") ?? Date.now());
    const random = seeded(seed);
    await using server = await startHonchoTestServer();
    // Within the children's bound (500 ms timeout + 400 ms grace): a late
    // commit at 700 ms, a late answer at 800 ms, a drop after the commit.
    const menu: HonchoFault[] = [
      { latencyMs: 0 },
      { latencyMs: 700 },
      { answerAfterMs: 800 },
      { dropAfterHandling: true },
      { status: 503 },
    ];
    for (let i = 0; i < 200; i++) {
      server.inject(ROUTES.messages, menu[Math.floor(random() * menu.length)]!);
    }
    await withHome(async (home) => {
      const script = join(home, "campaign_child.ts");
      await Deno.writeTextFile(script, CAMPAIGN_CHILD);
      const durable = new Set<string>(); // tags whose append returned
      const started = new Set<string>();
      const kills = 8;
      let appendedKilled = 0;
      for (let round = 0; round < kills; round++) {
        const children = [0, 1].map((n) => {
          const tag = `r${round * 2 + n}`;
          started.add(tag);
          const child = spawnRepoScript(
            script,
            [home, server.url, tag, "150"],
            { stderr: "null" },
          );
          const said: string[] = [];
          const reading = (async () => {
            for await (
              const chunk of child.stdout.pipeThrough(new TextDecoderStream())
            ) said.push(chunk);
          })();
          return { tag, child, said, reading };
        });
        // Kill both at a random point after the first one has queued.
        await waitUntil(
          () => children.some((c) => c.said.join("").includes("appended")),
          60_000,
          `round ${round} to append`,
        );
        await new Promise((r) => setTimeout(r, Math.floor(random() * 1_200)));
        for (const { child } of children) {
          try {
            child.kill("SIGKILL");
          } catch {
            // Already exited.
          }
        }
        for (const { tag, child, said, reading } of children) {
          await child.status;
          await reading;
          const text = said.join("");
          if (text.includes("appended")) {
            durable.add(tag);
            if (!text.includes("flushed")) appendedKilled++;
          }
        }
      }
      assert.ok(appendedKilled >= kills / 2, "most kills landed mid-flush");
      // Restart once more, with the faults gone, and drain everything.
      server.clearFaults();
      await serverSettled(server);
      const outbox = new HonchoOutbox({
        workspace: "ws",
        hermesHome: home,
        lateCommitGraceMs: 400,
        retryBaseDelayMs: 20,
      });
      // The faults are gone: this drain only has to finish, so its limits
      // are wide (on a loaded machine 500 ms requests time out and 20 s is
      // not enough for the 2,400 messages); what is counted is the server.
      const client = new HonchoClient({
        workspaceId: "ws",
        baseUrl: server.url,
        timeoutMs: 10_000,
      });
      let empty = false;
      for (let i = 0; i < 6 && !empty; i++) {
        empty = await outbox.flush(client, 30_000);
      }
      await serverSettled(server);
      const expected = [...durable].flatMap((tag) =>
        Array.from({ length: 150 }, (_, i) => `${tag} message ${i}`)
      );
      const { lost, duplicated } = lostAndDuplicated(server, expected);
      assert.deepEqual(
        { lost: lost.length, duplicated: duplicated.length, seed },
        { lost: 0, duplicated: 0, seed },
      );
      // Nothing of a child killed before its append returned is stored twice
      // either, and every stored message carries its outbox id once.
      const ids = server.state.messages.map((m) =>
        String(m.metadata[OUTBOX_ID_METADATA_KEY])
      );
      assert.equal(new Set(ids).size, ids.length, `seed ${seed}`);
      assert.equal(empty, true);
      assert.deepEqual(await outbox.rejected(), []);
    });
    server.assertNoViolations();
  },
});
