// Honcho's first turn (issue 31 item 4): the agent's first prefetch waits
// for the session's set-up, so the first reads must not wait for the part
// of the set-up they do not need. Once the session exists, the context and
// dialectic reads go out while the peer configs are still being read back
// (a careful @honcho-ai/sdk user reads in parallel too).
import assert from "node:assert/strict";
import { startHonchoTestServer } from "../honcho_server.ts";
import {
  makeProfile,
  removeHome,
  ROUTES,
  startProvider,
  waitUntil,
} from "../fixtures/honcho_provider_harness.ts";

Deno.test("turn 1's reads start once the session exists, while its peer configs are read back", async () => {
  await using server = await startHonchoTestServer();
  // The read-back answers late; everything else at once.
  server.inject(ROUTES.peerConfig, { latencyMs: 2_000, times: Infinity });
  const home = await makeProfile(server);
  const provider = await startProvider(home);
  try {
    provider.onTurnStart(1, "What did I plan for Oslo?", {});
    const first = provider.prefetch("What did I plan for Oslo?", {});
    // Both first reads (context and dialectic) go out; a loaded machine may
    // send them a moment apart.
    await waitUntil(
      () =>
        server.requestCount(ROUTES.sessionContext) > 0 &&
        server.requestCount(ROUTES.chat) > 0,
      10_000,
      "the first session context and dialectic reads",
    );
    const configs = server.requests.filter((r) =>
      r.route === ROUTES.peerConfig
    );
    // Before: the reads waited for both read-backs (a round trip more).
    assert.ok(configs.length > 0, "the peer configs were read back");
    assert.ok(
      configs.every((r) => r.status === 0),
      "the first context read went out while the read-backs were pending",
    );
    assert.equal(server.requestCount(ROUTES.chat), 1);
    const injected = await first;
    assert.match(injected, /\S/);
  } finally {
    await provider.shutdown();
    await removeHome(home);
  }
});
