// The Honcho write path's promises: a turn handed to syncTurn is durable
// within one group commit whatever delivery is doing; drain() counts what is
// not durable; a disk that refuses writes is reported, never silently
// dropped, and the writer pushes back; systemic failures (a denied network
// permission, a refused session) keep the queue and raise one notice naming
// the cause and the fix; a workspace id Honcho would refuse is sanitised.
import assert from "node:assert/strict";
import { join } from "node:path";
import { MemoryManager } from "@hermes/memory";
import { HonchoClient } from "../../plugins/memory/honcho/client/client.ts";
import { HonchoMemoryProvider } from "../../plugins/memory/honcho/mod.ts";
import { HonchoOutbox } from "../../plugins/memory/honcho/outbox/outbox.ts";
import { startHonchoTestServer } from "../honcho_server.ts";
import {
  captureLogs,
  makeProfile,
  removeHome,
  ROUTES,
  startProvider,
  waitUntil,
} from "../fixtures/honcho_provider_harness.ts";

Deno.test("syncTurn: each turn is in the fsynced outbox at once, also while a slow delivery of writeFrequency turn is in flight", async () => {
  await using server = await startHonchoTestServer();
  // Honcho takes 8 s per write.
  server.inject(ROUTES.messages, { latencyMs: 8_000, times: Infinity });
  const home = await makeProfile(server, {
    config: { recallMode: "tools", writeFrequency: "turn", timeout: 20 },
  });
  const provider = await startProvider(home);
  try {
    for (let turn = 1; turn <= 6; turn++) {
      await provider.syncTurn(`Question ${turn}`, `Answer ${turn}`, {});
    }
    // Before this fix, turn N+1 waited behind turn N's 8 s delivery: 10 of
    // 12 messages were only in memory.
    await waitUntil(
      async () => (await provider.outbox!.stats()).pending === 12,
      2_000,
      "all 12 messages in the outbox file",
    );
    const onDisk = (await Deno.readTextFile(provider.outbox!.path)).split("\n")
      .filter((line) => line.includes('"type":"message"')).length;
    assert.equal(onDisk, 12);
    assert.deepEqual(await provider.drain(1_000), {
      drained: true,
      pending: 0,
    });
  } finally {
    server.clearFaults();
    await provider.shutdown();
    await removeHome(home);
  }
});

Deno.test("A disk that refuses the outbox: drain() counts the staged messages, one warning names the file, nothing is dropped, and the writer pushes back", async () => {
  const home = await Deno.makeTempDir({ prefix: "honcho_disk_" });
  const logs = captureLogs();
  try {
    const outbox = new HonchoOutbox({
      workspace: "ws",
      hermesHome: home,
      delivery: {
        client: new HonchoClient({
          workspaceId: "ws",
          baseUrl: "http://127.0.0.1:9",
        }),
        writeFrequency: "session",
      },
      maxStagedMessages: 4,
      stageWaitMs: 200,
    });
    const writer = outbox;
    // The outbox file cannot be opened for appending: a directory is there.
    await Deno.mkdir(outbox.path, { recursive: true });
    const pushedBack: (Promise<void> | undefined)[] = [];
    for (let turn = 1; turn <= 3; turn++) {
      pushedBack.push(writer.stage([
        { session: "s1", peer: "alice", content: `Question ${turn}` },
        { session: "s1", peer: "hermes", content: `Answer ${turn}` },
      ]));
    }
    // 4 staged is within the bound; the 6th message is past it.
    assert.equal(pushedBack[0], undefined);
    assert.ok(pushedBack[2] instanceof Promise, "the caller is told to wait");
    await pushedBack[2];
    assert.deepEqual(await writer.drain(300), { drained: false, pending: 6 });
    const warnings = logs.lines.filter((l) => l.level === "warn");
    assert.equal(
      warnings.filter((w) => w.message.includes("cannot write its outbox"))
        .length,
      1,
      warnings.map((w) => w.message).join("\n"),
    );
    assert.ok(warnings.some((w) => w.message.includes(outbox.path)));
    assert.ok(warnings.some((w) => /not keeping up/.test(w.message)));
    // The disk heals: everything staged reaches the outbox, in order.
    await Deno.remove(outbox.path, { recursive: true });
    // Without a bound, drain() waits as long as it takes.
    assert.deepEqual(await writer.drain(), { drained: true, pending: 0 });
    assert.deepEqual(
      (await outbox.pending()).map((r) => r.content),
      [1, 2, 3].flatMap((n) => [`Question ${n}`, `Answer ${n}`]),
    );
    await writer.close(1_000);
  } finally {
    logs.restore();
    await Deno.remove(home, { recursive: true });
  }
});

Deno.test("A denied network permission keeps every turn queued and raises one notice and one warning naming memory.permissions.honcho.net in config.yaml", async () => {
  await using server = await startHonchoTestServer();
  const home = await makeProfile(server, { config: { timeout: 1 } });
  const host = new URL(server.url).host;
  let fetches = 0;
  const logs = captureLogs();
  const provider = await startProvider(home, "s1", {
    transport: {
      maxRetries: 0,
      fetch: () => {
        fetches++;
        return Promise.reject(
          new Deno.errors.NotCapable(
            `Requires net access to "${host}", run again with the --allow-net flag`,
          ),
        );
      },
    },
  });
  try {
    for (let turn = 1; turn <= 3; turn++) {
      await provider.onTurnStart(turn, `Question ${turn}`, {});
      const injected = await provider.prefetch(`Question ${turn}`, {});
      if (turn === 1) {
        assert.match(injected, /Honcho memory is blocked/);
        assert.ok(injected.includes(join(home, "config.yaml")), injected);
        assert.ok(injected.includes(`"${host}"`), injected);
      } else {
        assert.doesNotMatch(injected, /blocked/);
      }
      await provider.syncTurn(`Question ${turn}`, `Answer ${turn}`, {});
      await provider.idle(2_000);
    }
    await new Promise((r) => setTimeout(r, 300));
    const warnings = logs.lines.filter((l) =>
      l.level === "warn" && l.message.includes("memory.permissions.honcho.net")
    );
    assert.equal(
      warnings.length,
      1,
      logs.lines.map((l) => l.message).join("\n"),
    );
    assert.ok(warnings[0]!.message.includes(join(home, "config.yaml")));
    assert.equal((await provider.outbox!.stats()).pending, 6);
    // No retry loop: a denial cannot heal in this process.
    const before = fetches;
    await new Promise((r) => setTimeout(r, 300));
    assert.equal(fetches, before);
    assert.deepEqual(await provider.outbox!.rejected(), []);
  } finally {
    logs.restore();
    await provider.shutdown();
    await removeHome(home);
  }
});

Deno.test("A session Honcho refuses (422 on create) keeps the queue and raises one notice and one warning naming the cause and honcho.json", async () => {
  await using server = await startHonchoTestServer();
  server.inject(ROUTES.session, {
    status: 422,
    detail: "Peer name(s) ['al ice'] must match pattern",
    times: Infinity,
  });
  const home = await makeProfile(server);
  const logs = captureLogs();
  const provider = await startProvider(home);
  try {
    const notices: string[] = [];
    for (let turn = 1; turn <= 3; turn++) {
      await provider.onTurnStart(turn, `Question ${turn}`, {});
      notices.push(await provider.prefetch(`Question ${turn}`, {}));
      await provider.syncTurn(`Question ${turn}`, `Answer ${turn}`, {});
      await provider.idle(2_000);
    }
    await waitUntil(
      () =>
        logs.lines.some((l) => l.level === "warn" && /refused/.test(l.message)),
      3_000,
      "the refusal warning",
    );
    const refused = logs.lines.filter((l) =>
      l.level === "warn" && /Honcho refused the memory writes/.test(l.message)
    );
    assert.equal(
      refused.length,
      1,
      logs.lines.map((l) => l.message).join("\n"),
    );
    assert.match(refused[0]!.message, /must match pattern/);
    assert.ok(refused[0]!.message.includes(join(home, "honcho.json")));
    assert.equal(
      notices.filter((n) => /Honcho refused the memory writes/.test(n)).length,
      1,
      notices.join("\n---\n"),
    );
    assert.equal((await provider.outbox!.stats()).pending, 6);
    assert.deepEqual(await provider.outbox!.rejected(), []);
    // Fixed on the server: the queue goes out, once.
    server.clearFaults();
    await provider.onSessionEnd([]);
    assert.equal(server.state.messages.length, 6);
  } finally {
    logs.restore();
    await provider.shutdown();
    await removeHome(home);
  }
});

Deno.test("A workspace id Honcho would refuse ('my ws') is sanitised to 'my-ws' with one warning; the turns are stored there", async () => {
  await using server = await startHonchoTestServer();
  const home = await makeProfile(server, {
    config: { workspace: "my ws", recallMode: "tools" },
  });
  const logs = captureLogs();
  const provider = await startProvider(home);
  try {
    await provider.syncTurn("Question 1", "Answer 1", {});
    await provider.onSessionEnd([]);
    assert.deepEqual(
      server.state.messages.map((m) => [m.workspace_id, m.content]),
      [["my-ws", "Question 1"], ["my-ws", "Answer 1"]],
    );
    const warnings = logs.lines.filter((l) =>
      l.level === "warn" && l.message.includes("'my ws'")
    );
    assert.equal(warnings.length, 1);
    assert.match(warnings[0]!.message, /using 'my-ws'/);
  } finally {
    logs.restore();
    await provider.shutdown();
    await removeHome(home);
  }
  server.assertNoViolations();
});

Deno.test("shutdownDrainState counts turns that never reached the outbox (a refusing disk) instead of saying drained", async () => {
  await using server = await startHonchoTestServer();
  const home = await makeProfile(server, { config: { recallMode: "tools" } });
  const logs = captureLogs();
  try {
    const outbox = new HonchoOutbox({ workspace: "ws", hermesHome: home });
    await Deno.mkdir(outbox.path, { recursive: true });
    const manager = new MemoryManager({ shutdownDrainTimeoutMs: 600 });
    await manager.addProvider(
      new HonchoMemoryProvider({ shutdownTimeoutMs: 300 }),
    );
    await manager.initializeAll("s1", { hermesHome: home, platform: "cli" });
    for (let turn = 1; turn <= 3; turn++) {
      manager.syncAll(`Question ${turn}`, `Answer ${turn}`, {
        sessionId: "s1",
      });
    }
    assert.equal(await manager.flushPending(300), false);
    await manager.shutdownAll();
    const state = manager.shutdownDrainState;
    assert.equal(state.status, "timed_out");
    assert.equal(state.notDurable, 6);
    assert.deepEqual(state.undrainedProviders, ["honcho"]);
    // The drain used the whole shutdown budget, so the manager, not Honcho's
    // own shutdown (not waited for past the budget), says what is lost.
    assert.ok(
      logs.lines.some((l) =>
        l.level === "warn" &&
        l.message.includes("'honcho' did not report every accepted write") &&
        l.message.includes("(6 item(s) not durable)")
      ),
      logs.lines.map((l) => l.message).join("\n"),
    );
  } finally {
    logs.restore();
    await removeHome(home);
  }
});
