// Honcho's first turn (issue 31 item 4): the agent's first prefetch waits
// for the session's set-up, so the first reads must not wait for the part
// of the set-up they do not need. The reads need no session (Honcho answers
// an unknown session's context with 200), so the context and dialectic reads
// go out beside the request creating the session, and turn 1 waits for that
// request and the reads, not for the peer configs read back after it: one
// round trip, as a careful @honcho-ai/sdk user's turn.
import assert from "node:assert/strict";
import { startHonchoTestServer } from "../honcho_server.ts";
import {
  makeProfile,
  removeHome,
  ROUTES,
  seedKnowledge,
  startProvider,
  waitUntil,
} from "../fixtures/honcho_provider_harness.ts";

const QUERY = "What did I plan for Oslo?";

Deno.test("turn 1's reads go out beside the session's creation; its prefetch waits for the creation", async () => {
  await using server = await startHonchoTestServer();
  seedKnowledge(server);
  // The creation answers late (within turn 1's wait); everything else at once.
  server.inject(ROUTES.session, { latencyMs: 3_000, times: Infinity });
  const home = await makeProfile(server, { config: { firstTurnBaseWait: 10 } });
  const provider = await startProvider(home);
  try {
    provider.onTurnStart(1, QUERY, {});
    let returned = false;
    const first = provider.prefetch(QUERY, {}).finally(() => returned = true);
    // A loaded machine may send the three reads a moment apart.
    await waitUntil(
      () =>
        [ROUTES.sessionContext, ROUTES.peerContext, ROUTES.chat].every((r) =>
          server.requestCount(r) > 0
        ),
      10_000,
      "the first session context, AI peer context and dialectic reads",
    );
    // Before: they waited for the creation (a round trip more).
    const creations = server.requests.filter((r) => r.route === ROUTES.session);
    assert.equal(creations.length, 1);
    assert.equal(creations[0]!.status, 0, "the creation was still pending");
    assert.equal(returned, false, "turn 1 waits for the session to exist");
    const injected = await first;
    assert.notEqual(creations[0]!.status, 0);
    // What the reads sent before the session existed is what turn 1 shows.
    assert.match(injected, /Prefers tea/);
    assert.match(injected, /I am Hermes/);
    assert.equal(server.requestCount(ROUTES.chat), 1);
  } finally {
    await provider.shutdown();
    await removeHome(home);
  }
});

Deno.test("turn 1's prefetch returns while the session's peer configs are read back", async () => {
  await using server = await startHonchoTestServer();
  // The read-back answers late; everything else at once.
  server.inject(ROUTES.peerConfig, { latencyMs: 4_000, times: Infinity });
  const home = await makeProfile(server);
  const provider = await startProvider(home);
  try {
    provider.onTurnStart(1, QUERY, {});
    const injected = await provider.prefetch(QUERY, {});
    assert.match(injected, /\S/);
    const configs = server.requests.filter((r) =>
      r.route === ROUTES.peerConfig
    );
    // Before: turn 1 waited for both read-backs (a round trip more).
    assert.ok(
      configs.every((r) => r.status === 0),
      "turn 1 returned while the read-backs were pending",
    );
    assert.equal(server.requestCount(ROUTES.chat), 1);
  } finally {
    await provider.shutdown();
    await removeHome(home);
  }
});
