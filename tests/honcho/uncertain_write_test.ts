// After an uncertain write (Honcho stored the messages, the acknowledgement
// was lost: the test server's dropAfterHandling fault), later turns wait
// only for the lookup that settles it, a required checkpoint succeeds once
// it is settled, and nothing is stored twice. Counted on the server. Before
// the fix every later turn of the session waited for the whole window in
// which the lost attempt could still land (the request timeout, 30 s here),
// and a checkpoint in that window failed saying the messages "could not be
// delivered". And reads pause while Honcho fails them (before: a read per
// turn to a server that is down).
import assert from "node:assert/strict";
import { startHonchoTestServer } from "../honcho_server.ts";
import {
  makeProfile,
  removeHome,
  ROUTES,
  runTurn,
  startProvider,
  waitUntil,
} from "../fixtures/honcho_provider_harness.ts";
import { OUTBOX_ID_METADATA_KEY } from "../../plugins/memory/honcho/outbox/outbox.ts";

function assertStoredOnce(
  messages: { metadata: Record<string, unknown> }[],
): void {
  const ids = messages.map((m) => String(m.metadata[OUTBOX_ID_METADATA_KEY]));
  assert.equal(new Set(ids).size, ids.length, "a message was stored twice");
}

Deno.test("a lost acknowledgement holds later turns back only for the lookup that settles it", async () => {
  await using server = await startHonchoTestServer();
  const home = await makeProfile(server, {
    config: { writeFrequency: "turn" },
  });
  const provider = await startProvider(home);
  try {
    server.inject(ROUTES.messages, { dropAfterHandling: true });
    const started = Date.now();
    await provider.syncTurn("turn 1", "reply 1", {});
    await waitUntil(() => server.state.messages.length === 2, 10_000, "turn 1");
    await provider.syncTurn("turn 2", "reply 2", {});
    await provider.syncTurn("turn 3", "reply 3", {});
    // The request timeout is 30 s: waiting out the window would take that.
    await waitUntil(
      () => server.state.messages.length === 6,
      15_000,
      "turns 2 and 3 after the lost acknowledgement",
    );
    const heldBack = Date.now() - started;
    assert.deepEqual(server.state.messages.map((m) => m.content), [
      "turn 1",
      "reply 1",
      "turn 2",
      "reply 2",
      "turn 3",
      "reply 3",
    ]);
    assertStoredOnce(server.state.messages);
    assert.ok(
      server.requests.some((r) => r.route === ROUTES.listMessages),
      "settled by a lookup",
    );
    console.log(`held back ${heldBack} ms after a lost acknowledgement`);
  } finally {
    await provider.shutdown();
    await removeHome(home);
  }
});

Deno.test("a required checkpoint right after a lost acknowledgement succeeds once the lookup settles it", async () => {
  await using server = await startHonchoTestServer();
  const home = await makeProfile(server, {
    config: { writeFrequency: "turn" },
  });
  const provider = await startProvider(home);
  try {
    server.inject(ROUTES.messages, { dropAfterHandling: true });
    await provider.syncTurn("turn 1", "reply 1", {});
    await waitUntil(() => server.state.messages.length === 2, 10_000, "turn 1");
    await provider.onPreCompress([
      { role: "user", content: "turn 1" },
      { role: "assistant", content: "reply 1" },
      { role: "user", content: "a detail only the checkpoint has" },
    ], { requireCheckpoint: true });
    const contents = server.state.messages.map((m) => m.content);
    assert.ok(contents.includes("a detail only the checkpoint has"));
    assert.equal(contents.filter((c) => c === "turn 1").length, 1);
    assertStoredOnce(server.state.messages);
    assert.equal((await provider.outbox!.stats()).pending, 0);
  } finally {
    await provider.shutdown();
    await removeHome(home);
  }
});

Deno.test("reads back off while Honcho's read routes fail (the writes' policy), with one notice", async () => {
  await using server = await startHonchoTestServer();
  const home = await makeProfile(server, {
    config: { writeFrequency: "turn", dialecticCadence: 1 },
  });
  const provider = await startProvider(home, "s1", {
    writerRetryBaseDelayMs: 1_000,
    writerRetryMaxDelayMs: 30_000,
  });
  try {
    await waitUntil(
      () => server.state.sessions.length === 1,
      10_000,
      "the session set-up",
    );
    const reads = [ROUTES.sessionContext, ROUTES.peerContext, ROUTES.chat];
    for (const route of reads) {
      server.inject(route, { status: 503, times: Infinity });
    }
    const notices: string[] = [];
    const TURNS = 20;
    for (let turn = 1; turn <= TURNS; turn++) {
      const { injected } = await runTurn(
        provider,
        server,
        turn,
        `question ${turn}?`,
      );
      if (injected.includes("[Honcho memory status]")) notices.push(injected);
    }
    const readRequests = server.requests.filter((r) =>
      reads.includes(r.route as typeof reads[number])
    ).length;
    // Before: every turn read again (40+ requests for 20 turns).
    assert.ok(readRequests <= 10, `${readRequests} reads in ${TURNS} turns`);
    assert.equal(notices.length, 1, notices.join("\n---\n"));
    assert.match(notices[0]!, /unreachable/);
    // The writes were not held back by the failing reads.
    assert.equal(server.state.messages.length, TURNS * 2);
  } finally {
    await provider.shutdown();
    await removeHome(home);
  }
});

Deno.test("a checkpoint that cannot settle a lost acknowledgement says what is unconfirmed, not that it could not be delivered", async () => {
  await using server = await startHonchoTestServer();
  const home = await makeProfile(server, {
    config: { writeFrequency: "turn" },
  });
  const provider = await startProvider(home, "s1", {
    checkpointTimeoutMs: 1_500,
  });
  try {
    server.inject(ROUTES.messages, { dropAfterHandling: true });
    // The lookup that would settle it fails while the checkpoint runs.
    server.inject(ROUTES.listMessages, { status: 503, times: Infinity });
    await provider.syncTurn("turn 1", "reply 1", {});
    await waitUntil(() => server.state.messages.length === 2, 10_000, "turn 1");
    await assert.rejects(
      () =>
        provider.onPreCompress([{ role: "user", content: "turn 1" }], {
          requireCheckpoint: true,
        }),
      (error: Error) => {
        assert.match(
          error.message,
          /2 message\(s\) whose acknowledgement was lost/,
        );
        assert.doesNotMatch(error.message, /could not be delivered/);
        return true;
      },
    );
    assertStoredOnce(server.state.messages);
  } finally {
    server.clearFaults();
    await provider.shutdown();
    await removeHome(home);
  }
});

Deno.test("a lost acknowledgement while Honcho answers everything else raises no 'unreachable' notice", async () => {
  await using server = await startHonchoTestServer();
  const home = await makeProfile(server, {
    config: { writeFrequency: "turn" },
  });
  const provider = await startProvider(home);
  try {
    const shown: string[] = [];
    for (let turn = 1; turn <= 4; turn++) {
      if (turn === 2) {
        server.inject(ROUTES.messages, { dropAfterHandling: true });
      }
      const { injected } = await runTurn(
        provider,
        server,
        turn,
        `Turn ${turn}: tea?`,
      );
      shown.push(injected, JSON.stringify(await provider.recallStatus()));
    }
    await waitUntil(() => server.state.messages.length === 8, 10_000, "all");
    assertStoredOnce(server.state.messages);
    assert.doesNotMatch(shown.join("\n"), /unreachable/);
  } finally {
    await provider.shutdown();
    await removeHome(home);
  }
});
