// Failure policy of the Honcho provider: Honcho down for 100 turns (503s,
// then dropped connections) while prefetch stays fast and fails open with a
// one-time notice, and every turn arrives exactly once after recovery; an
// answer lost after Honcho stored the batch never duplicates it; and a
// process killed with SIGKILL in the middle of a flush loses and duplicates
// nothing after a restart.
import assert from "node:assert/strict";
import { fileURLToPath as fromFileUrl } from "node:url";
import {
  type HonchoFault,
  type HonchoTestServer,
  startHonchoTestServer,
} from "../honcho_server.ts";
import {
  makeProfile,
  removeHome,
  ROUTES,
  runTurn,
  seedKnowledge,
  startProvider,
  waitUntil,
} from "../fixtures/honcho_provider_harness.ts";

function countsByContent(server: HonchoTestServer): Map<string, number> {
  const counts = new Map<string, number>();
  for (const m of server.state.messages) {
    counts.set(m.content, (counts.get(m.content) ?? 0) + 1);
  }
  return counts;
}

async function outage(fault: HonchoFault, label: RegExp): Promise<void> {
  await using server = await startHonchoTestServer();
  seedKnowledge(server, { session: "s1" });
  server.setDialecticAnswer("Alice likes tea.");
  // A dropped connection leaves a write in doubt for the request timeout
  // plus the grace: keep both short.
  const home = await makeProfile(server, { config: { timeout: 2 } });
  const provider = await startProvider(home);
  try {
    await provider.idle();
    for (let turn = 1; turn <= 2; turn++) {
      await runTurn(provider, server, turn, `Turn ${turn}: Oslo hiking plans?`);
    }
    server.inject("*", { ...fault, times: Infinity });
    const durations: number[] = [];
    const notices: number[] = [];
    for (let turn = 3; turn <= 102; turn++) {
      const query = `Turn ${turn}: Oslo hiking plans?`;
      await provider.onTurnStart(turn, query, {});
      const started = performance.now();
      const injected = await provider.prefetch(query, {});
      durations.push(performance.now() - started);
      // Fail open: the cached base layer is still injected.
      assert.match(injected, /## User Peer Card\nName: Alice/, `turn ${turn}`);
      if (injected.includes("[Honcho memory status]")) {
        notices.push(turn);
        assert.match(injected, label);
      }
      await provider.syncTurn(query, `Reply ${turn}`, {});
      await provider.queuePrefetch(query, {});
      await provider.idle(5000);
    }
    durations.sort((a, b) => a - b);
    assert.ok(durations[50]! < 5, `median prefetch ${durations[50]} ms`);
    assert.ok(durations[99]! < 100, `slowest prefetch ${durations[99]} ms`);
    assert.equal(notices.length, 1, `notices on turns ${notices}`);
    assert.ok((await provider.outbox!.stats()).pending >= 200);
    server.clearFaults();
    await waitUntil(
      () => server.state.messages.length === 204,
      15_000,
      "every turn after recovery",
    );
    const counts = countsByContent(server);
    for (let turn = 1; turn <= 102; turn++) {
      assert.equal(
        counts.get(`Turn ${turn}: Oslo hiking plans?`),
        1,
        `turn ${turn}`,
      );
      assert.equal(
        counts.get(turn <= 2 ? `Reply to turn ${turn}.` : `Reply ${turn}`),
        1,
      );
    }
    // Back to normal: no notice, and fresh context within a few turns (a
    // dialectic answer may miss one turn's 2 s request timeout when the
    // machine is loaded; it is retried on the next).
    await runTurn(provider, server, 103, "Turn 103: Oslo hiking plans?");
    let injected = "";
    for (let turn = 104; turn <= 108; turn++) {
      ({ injected } = await runTurn(
        provider,
        server,
        turn,
        `Turn ${turn}: Oslo?`,
      ));
      assert.doesNotMatch(injected, /Honcho memory status/);
      if (/Alice likes tea\.$/.test(injected)) break;
    }
    assert.match(injected, /Alice likes tea\.$/);
  } finally {
    await provider.shutdown();
    await removeHome(home);
  }
  assert.deepEqual(server.violations, []);
}

Deno.test("HonchoMemoryProvider survives 100 turns of 503s: fast fail-open prefetch, one notice, no lost turn", async () => {
  await outage({ status: 503 }, /Honcho is unreachable \(HTTP 503/);
});

Deno.test("HonchoMemoryProvider survives 100 turns of dropped connections", async () => {
  await outage({ drop: true }, /Honcho is unreachable \(connection failed\)/);
});

Deno.test("HonchoMemoryProvider reports rate limiting and auth failures by cause", async (t) => {
  await using server = await startHonchoTestServer();
  seedKnowledge(server, { session: "s1" });
  const home = await makeProfile(server);
  const provider = await startProvider(home);
  try {
    await provider.idle();
    await runTurn(provider, server, 1, "Oslo hiking plans?");
    await t.step("429", async () => {
      server.inject("*", { status: 429, times: 3 });
      await runTurn(provider, server, 2, "Oslo hiking plans?");
      const { injected } = await runTurn(
        provider,
        server,
        3,
        "Oslo hiking plans?",
      );
      assert.match(
        injected,
        /^\[Honcho memory status\] Honcho is rate-limiting requests \(HTTP 429/,
      );
      server.clearFaults();
    });
    await t.step("401", async () => {
      await runTurn(provider, server, 4, "Oslo hiking plans?");
      server.inject("*", { status: 401, times: 3 });
      await runTurn(provider, server, 5, "Oslo hiking plans?");
      const { injected } = await runTurn(
        provider,
        server,
        6,
        "Oslo hiking plans?",
      );
      assert.match(
        injected,
        /Honcho authentication failed \(HTTP 401: Invalid JWT\).*hermes honcho setup/s,
      );
      server.clearFaults();
    });
  } finally {
    await provider.shutdown();
    await removeHome(home);
  }
  assert.deepEqual(server.violations, []);
});

Deno.test("HonchoMemoryProvider never stores a batch twice when the answer is lost after Honcho stored it", async () => {
  await using server = await startHonchoTestServer();
  // A 1 s request timeout: the lookup comes 1 s + grace after the attempt.
  const home = await makeProfile(server, {
    config: { recallMode: "tools", timeout: 1 },
  });
  const provider = await startProvider(home);
  try {
    server.inject(ROUTES.messages, { dropAfterHandling: true });
    await provider.syncTurn("Question 1", "Answer 1", {});
    await provider.idle();
    await waitUntil(
      async () => (await provider.outbox!.stats()).pending === 0,
      5000,
      "dedup",
    );
    await provider.syncTurn("Question 2", "Answer 2", {});
    await provider.idle();
    assert.deepEqual(server.state.messages.map((m) => m.content), [
      "Question 1",
      "Answer 1",
      "Question 2",
      "Answer 2",
    ]);
  } finally {
    await provider.shutdown();
    await removeHome(home);
  }
  assert.deepEqual(server.violations, []);
});

Deno.test("HonchoMemoryProvider outbox survives SIGKILL mid-flush: no loss, no duplicate after restart", async () => {
  await using server = await startHonchoTestServer();
  const home = await makeProfile(server, {
    config: { recallMode: "tools", writeFrequency: "session", timeout: 1 },
  });
  const turns = 150;
  server.inject(ROUTES.messages, { latencyMs: 400, times: Infinity });
  const child = new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "--quiet",
      "--no-prompt",
      "--frozen",
      `--config=${fromFileUrl(new URL("../../deno.json", import.meta.url))}`,
      "--allow-read",
      "--allow-write",
      "--allow-env",
      "--allow-net=127.0.0.1",
      fromFileUrl(
        new URL("../fixtures/honcho_outbox_child.ts", import.meta.url),
      ),
      home,
      String(turns),
    ],
    env: { NO_COLOR: "1" },
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const output: string[] = [];
  const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  const pump = (async () => {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      output.push(value);
    }
  })();
  try {
    // Kill once the second batch is on the wire (the first may or may not
    // have been acknowledged; the second will be stored without an answer).
    await waitUntil(
      () => server.requestCount(ROUTES.messages) >= 2,
      30_000,
      `two batches in flight (child said: ${output.join("")})`,
    );
    child.kill("SIGKILL");
  } finally {
    const status = await child.status;
    await pump;
    await child.stderr.cancel();
    assert.equal(status.success, false);
  }
  assert.match(output.join(""), /FLUSHING/);
  assert.doesNotMatch(output.join(""), /FLUSHED/);
  server.clearFaults();
  // Let the server finish what it received before the kill.
  await waitUntil(
    () => server.requests.every((r) => r.status !== 0 || r.dropped),
    5000,
    "in-flight requests",
  );
  const before = server.state.messages.length;
  // Both batches reached Honcho; the second was stored after the kill, so
  // its acknowledgement never made it into the outbox.
  assert.equal(before, 200, `stored before restart: ${before}`);
  const listsBefore = server.requestCount(ROUTES.listMessages);
  // Restart: the backlog is delivered with the dedup check.
  const provider = await startProvider(home);
  try {
    await provider.onSessionEnd([]);
    assert.equal((await provider.outbox!.stats()).pending, 0);
    assert.ok(
      server.requestCount(ROUTES.listMessages) > listsBefore,
      "the restart checked what Honcho already stored",
    );
  } finally {
    await provider.shutdown();
    await removeHome(home);
  }
  const counts = countsByContent(server);
  assert.equal(server.state.messages.length, turns * 2);
  for (let turn = 1; turn <= turns; turn++) {
    assert.equal(counts.get(`Question ${turn}`), 1, `Question ${turn}`);
    assert.equal(counts.get(`Answer ${turn}`), 1, `Answer ${turn}`);
  }
  assert.deepEqual(server.violations, []);
});

Deno.test("HonchoMemoryProvider started while Honcho is down keeps every turn and recovers", async () => {
  await using server = await startHonchoTestServer();
  seedKnowledge(server, { session: "s1" });
  server.inject("*", { status: 503, times: Infinity });
  const home = await makeProfile(server, {
    config: { firstTurnBaseWait: 0.3 },
  });
  const provider = await startProvider(home);
  try {
    const injected: string[] = [];
    for (let turn = 1; turn <= 5; turn++) {
      const query = `Turn ${turn}: Oslo hiking plans?`;
      await provider.onTurnStart(turn, query, {});
      injected.push(await provider.prefetch(query, {}));
      await provider.syncTurn(query, `Reply ${turn}`, {});
      await provider.queuePrefetch(query, {});
      await provider.idle(5000);
    }
    assert.equal(provider.ready, false);
    assert.match(
      injected[0]!,
      /^\[Honcho memory status\] Honcho is unreachable/,
    );
    assert.deepEqual(injected.slice(1), ["", "", "", ""]);
    assert.equal(server.state.messages.length, 0);
    server.clearFaults();
    await waitUntil(
      () => server.state.messages.length === 10,
      10_000,
      "backlog",
    );
    assert.equal(provider.ready, true);
    // The session start fetches the context in the background; once it has
    // landed, the next turn injects it.
    assert.equal(await provider.idle(10_000), true);
    const { injected: after } = await runTurn(
      provider,
      server,
      6,
      "Turn 6: Oslo hiking plans?",
    );
    assert.match(after, /## User Peer Card\nName: Alice/);
    assert.equal(new Set(server.state.messages.map((m) => m.content)).size, 12);
  } finally {
    await provider.shutdown();
    await removeHome(home);
  }
  assert.deepEqual(server.violations, []);
});
