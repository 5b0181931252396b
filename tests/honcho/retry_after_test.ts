// Retry-After on message writes (the background delivery of turns, not only
// idempotent requests), and one warning per refusal cause, against the
// Honcho test server. Before the fix the writer retried a 429 on the
// messages route after its own jitter (milliseconds here, 0.8–7.2 s by
// default) whatever the server asked, and a 413 for ten messages gave ten
// identical warnings.
import assert from "node:assert/strict";
import { HonchoClient } from "../../plugins/memory/honcho/client/client.ts";
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

Deno.test("a 429 with Retry-After on a message write: the turn is re-sent only after the server's wait, once", async () => {
  await using server = await startHonchoTestServer();
  const home = await makeProfile(server, {
    config: { writeFrequency: "turn" },
  });
  const provider = await startProvider(home);
  try {
    server.inject(ROUTES.messages, { status: 429, retryAfter: "2" });
    const writes = () =>
      server.requests.filter((r) => r.route === ROUTES.messages);
    await provider.syncTurn("remember the tea", "noted", {});
    await waitUntil(() => writes().length >= 1, 10_000, "the first write");
    const refusedAt = Date.now();
    await waitUntil(
      () => server.state.messages.length === 2,
      20_000,
      "the retried write",
    );
    const waited = Date.now() - refusedAt;
    assert.ok(waited >= 1_800, `re-sent after ${waited} ms, asked 2000 ms`);
    assert.equal(writes().filter((r) => r.status === 429).length, 1);
    assert.deepEqual(server.state.messages.map((m) => m.content), [
      "remember the tea",
      "noted",
    ]);
  } finally {
    await provider.shutdown();
    await removeHome(home);
  }
});

Deno.test("a 413 for ten messages gives one warning, and every message is kept in the rejected file", async () => {
  await using server = await startHonchoTestServer();
  const home = await Deno.makeTempDir({ prefix: "retry_after_" });
  const logs = captureLogs();
  try {
    const outbox = new HonchoOutbox({ workspace: "ws", hermesHome: home });
    await outbox.append(
      Array.from({ length: 10 }, (_, i) => ({
        session: "s1",
        peer: "alice",
        content: `message ${i}`,
      })),
    );
    server.inject(ROUTES.messages, {
      status: 413,
      detail: "Request entity too large",
      times: Infinity,
    });
    const client = new HonchoClient({
      workspaceId: "ws",
      baseUrl: server.url,
      sleep: () => Promise.resolve(),
    });
    const result = await outbox.deliver(client);
    assert.equal(result.rejected, 10);
    assert.equal(result.pending, 0);
    assert.equal((await outbox.rejected()).length, 10);
    assert.equal(server.state.messages.length, 0);
    const warnings = logs.lines.filter((l) =>
      l.level === "warn" && l.message.includes("413")
    );
    assert.equal(
      warnings.length,
      1,
      warnings.map((w) => w.message).join("\n"),
    );
    assert.match(warnings[0]!.message, /10 outbox messages/);
    assert.ok(warnings[0]!.message.includes(outbox.rejectedPath));
  } finally {
    logs.restore();
    await Deno.remove(home, { recursive: true });
  }
});
