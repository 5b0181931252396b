// Sessions Honcho never saw set up, against the Honcho test server, which
// (like Honcho 3.0.12) creates a session and its peers implicitly, with no
// observation settings, when messages are posted to it, keeps those empty
// settings on a later get-or-create, and refuses an 11th observer with the
// real server's wording. Counted on the server: the session peers' settings.
import assert from "node:assert/strict";
import {
  type HonchoTestServer,
  startHonchoTestServer,
} from "../honcho_server.ts";
import {
  makeProfile,
  removeHome,
  runTurn,
  startProvider,
  waitUntil,
} from "../fixtures/honcho_provider_harness.ts";

function settings(server: HonchoTestServer, session: string) {
  const rows = server.state.sessionPeers.filter((m) =>
    m.session_id === session && m.left_at === null
  );
  return Object.fromEntries(
    rows.map((m) => [m.peer_id, [m.observe_me, m.observe_others]]),
  );
}

function sessionOf(server: HonchoTestServer, content: string): string {
  const message = server.state.messages.find((m) => m.content === content);
  assert.ok(message, `no stored message ${JSON.stringify(content)}`);
  return message.session_id;
}

Deno.test("a session queued entirely during an outage and delivered by a later process gets the peer settings of a live one", async () => {
  await using server = await startHonchoTestServer();
  const home = await makeProfile(server);
  try {
    // Honcho is down for the whole of the first conversation.
    server.inject("*", { status: 503, times: Infinity });
    const first = await startProvider(home, "outage-chat");
    for (let turn = 1; turn <= 3; turn++) {
      await first.syncTurn(`Outage turn ${turn}`, `Outage reply ${turn}`, {});
    }
    await first.shutdown();
    assert.equal(server.state.messages.length, 0);
    server.clearFaults();

    // The next process runs another conversation and delivers the backlog.
    const second = await startProvider(home, "live-chat");
    try {
      await runTurn(second, server, 1, "Live turn 1");
      await waitUntil(
        () => server.state.messages.length === 8,
        15_000,
        "the queued conversation is delivered",
      );
    } finally {
      await second.shutdown();
    }
    const live = settings(server, sessionOf(server, "Live turn 1"));
    const outage = settings(server, sessionOf(server, "Outage turn 1"));
    assert.deepEqual(Object.keys(live).sort(), ["alice", "hermes"]);
    for (const peer of Object.values(live)) {
      assert.ok(peer.every((flag) => typeof flag === "boolean"));
    }
    assert.deepEqual(outage, live);
  } finally {
    await removeHome(home);
  }
  assert.deepEqual(server.violations, []);
});

Deno.test("a session Honcho created implicitly (peers without settings) is repaired when it is set up", async () => {
  await using server = await startHonchoTestServer();
  const home = await makeProfile(server);
  try {
    // Learn the session id, then start over with the session created by a
    // bare message post (what an earlier, unprepared delivery did).
    const probe = await startProvider(home, "chat");
    await runTurn(probe, server, 1, "First");
    await probe.shutdown();
    const session = sessionOf(server, "First");
    const live = settings(server, session);
    server.state.sessionPeers = [];
    server.state.sessions = [];
    const posted = await fetch(
      `${server.url}/v3/workspaces/ws/sessions/${session}/messages`,
      {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({
          messages: [
            { peer_id: "alice", content: "posted" },
            { peer_id: "hermes", content: "posted back" },
          ],
        }),
      },
    );
    assert.equal(posted.status, 201, await posted.text());
    assert.deepEqual(settings(server, session), {
      alice: [null, null],
      hermes: [null, null],
    });
    const provider = await startProvider(home, "chat");
    try {
      await runTurn(provider, server, 2, "Second");
    } finally {
      await provider.shutdown();
    }
    assert.deepEqual(settings(server, session), live);
  } finally {
    await removeHome(home);
  }
});

Deno.test("Honcho's observer-limit refusal (its real wording) gives the notice that names the fix", async () => {
  await using server = await startHonchoTestServer();
  const home = await makeProfile(server);
  try {
    const probe = await startProvider(home, "crowded");
    await runTurn(probe, server, 1, "First");
    await probe.shutdown();
    const session = sessionOf(server, "First");
    // Ten other profiles' AI peers already observe the others there.
    server.state.sessionPeers = server.state.sessionPeers.filter((m) =>
      m.session_id !== session
    );
    const peers = Object.fromEntries(
      Array.from({ length: 10 }, (_, i) => [`bot${i}`, {
        observe_me: true,
        observe_others: true,
      }]),
    );
    const seeded = await fetch(
      `${server.url}/v3/workspaces/ws/sessions/${session}/peers`,
      {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(peers),
      },
    );
    assert.equal(seeded.status, 200, await seeded.text());
    const provider = await startProvider(home, "crowded");
    try {
      await provider.idle(10_000);
      const { injected } = await runTurn(provider, server, 2, "Second");
      assert.ok(
        server.requests.some((r) => r.status === 400),
        "Honcho refused the session",
      );
      assert.match(injected, /too many peers in it observe the others/);
      assert.match(injected, /sessionStrategy to per-session/);
    } finally {
      await provider.shutdown();
    }
  } finally {
    await removeHome(home);
  }
});
