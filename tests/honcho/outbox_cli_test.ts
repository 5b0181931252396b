// `hermes honcho outbox`: what is queued (per session), what Honcho refused
// and why (text and --json), `retry` to queue refused messages again and
// `flush` to deliver now — in-process against the Honcho test server.
import assert from "node:assert/strict";
import { join } from "node:path";
import { HonchoClient } from "../../plugins/memory/honcho/client/client.ts";
import { HonchoOutbox } from "../../plugins/memory/honcho/outbox/outbox.ts";
import { startHonchoTestServer } from "../honcho_server.ts";
import { honchoInProcess, writeJson } from "../helpers/honcho_cli.ts";
import { ROUTES } from "../fixtures/honcho_provider_harness.ts";

Deno.test("hermes honcho outbox shows queued and refused messages with the reason, retries and flushes them", async () => {
  await using server = await startHonchoTestServer();
  const home = await Deno.realPath(
    await Deno.makeTempDir({ prefix: "honcho-outbox-cli-" }),
  );
  try {
    await writeJson(join(home, "honcho.json"), {
      baseUrl: server.url,
      workspace: "ws",
      peerName: "alice",
      aiPeer: "hermes",
    });
    const empty = await honchoInProcess(home, ["outbox"]);
    assert.equal(empty.code, 0, empty.io.err);
    assert.match(empty.io.out, /Queued: nothing/);
    assert.match(empty.io.out, /Refused by Honcho: none/);

    const outbox = new HonchoOutbox({ workspace: "ws", hermesHome: home });
    const { accepted } = await outbox.append([
      { session: "s1", peer: "alice", content: "too long for Honcho, say" },
      { session: "s1", peer: "hermes", content: "fine" },
      { session: "s2", peer: "alice", content: "later" },
    ]);
    server.inject(ROUTES.messages, {
      status: 422,
      detail: [{
        type: "value_error",
        loc: ["body", "messages", 0, "content"],
        msg: "Value error, message too long",
        input: "x",
      }],
    });
    const client = new HonchoClient({ workspaceId: "ws", baseUrl: server.url });
    // Deliver s1 only: s2 waits behind a slow answer we never wait for.
    server.inject(ROUTES.messages, { status: 503, times: Infinity });
    await outbox.deliver(client, { maxRetries: 0 });
    server.clearFaults();

    const shown = await honchoInProcess(home, ["outbox"]);
    assert.equal(shown.code, 0, shown.io.err);
    assert.match(shown.io.out, /Queued: 2 message\(s\)/);
    assert.match(shown.io.out, /s1: 1 \(oldest /);
    assert.match(shown.io.out, /s2: 1 \(oldest /);
    assert.match(shown.io.out, /Refused by Honcho: 1 message\(s\)/);
    assert.ok(shown.io.out.includes(accepted[0]!), shown.io.out);
    assert.match(shown.io.out, /422 .*message too long/);
    assert.match(shown.io.out, /"too long for Honcho, say"/);
    assert.match(shown.io.out, /hermes honcho outbox retry/);

    const json = await honchoInProcess(home, ["outbox", "--json"]);
    assert.equal(json.code, 0);
    const [report] = JSON.parse(json.io.out).outboxes;
    assert.equal(report.workspace, "ws");
    assert.equal(report.pending, 2);
    assert.equal(report.configured, true);
    assert.deepEqual(
      report.sessions.map((s: { session: string }) => s.session),
      ["s1", "s2"],
    );
    assert.equal(report.rejected.length, 1);
    assert.equal(report.rejected[0].id, accepted[0]);
    assert.equal(report.rejected[0].status, 422);
    assert.match(report.rejected[0].reason, /message too long/);

    const unknown = await honchoInProcess(home, ["outbox", "retry", "nope"]);
    assert.equal(unknown.code, 1);
    assert.match(unknown.io.err, /No refused message has id nope/);

    const retried = await honchoInProcess(home, ["outbox", "retry"]);
    assert.equal(retried.code, 0, retried.io.err);
    assert.match(retried.io.out, /Queued 1 refused message\(s\) again/);
    assert.equal((await outbox.stats()).pending, 3);
    assert.deepEqual(await outbox.rejected(), []);

    const flushed = await honchoInProcess(home, ["outbox", "flush"]);
    assert.equal(flushed.code, 0, flushed.io.err + flushed.io.out);
    assert.match(flushed.io.out, /delivered 3.*0 still queued/);
    assert.deepEqual(
      server.state.messages.map((m) => m.content).sort(),
      ["fine", "later", "too long for Honcho, say"],
    );
    // Sessions only ever queued (s2), or first reached by a delivery that
    // set nothing up (s1), get their peers' observation settings.
    const peers = server.state.sessionPeers.map((m) => [
      m.session_id,
      m.peer_id,
      m.observe_me,
      m.observe_others,
    ]).sort((a, b) => String(a).localeCompare(String(b)));
    assert.deepEqual(peers, [
      ["s1", "alice", true, true],
      ["s1", "hermes", true, true],
      ["s2", "alice", true, true],
      ["s2", "hermes", true, true],
    ]);
  } finally {
    await Deno.remove(home, { recursive: true });
  }
});

Deno.test("hermes honcho outbox leaves an outbox with a torn last line as it is (read-only)", async () => {
  const home = await Deno.realPath(
    await Deno.makeTempDir({ prefix: "honcho-outbox-torn-" }),
  );
  try {
    await writeJson(join(home, "honcho.json"), {
      baseUrl: "http://127.0.0.1:1",
      workspace: "ws",
      peerName: "alice",
    });
    const outbox = new HonchoOutbox({ workspace: "ws", hermesHome: home });
    await outbox.append([{ session: "s1", peer: "alice", content: "kept" }]);
    await Deno.writeTextFile(outbox.path, '{"type":"message","id":"to', {
      append: true,
    });
    const before = await Deno.readFile(outbox.path);
    const shown = await honchoInProcess(home, ["outbox"]);
    assert.equal(shown.code, 0, shown.io.err);
    assert.match(shown.io.out, /Queued: 1 message\(s\)/);
    assert.deepEqual(await Deno.readFile(outbox.path), before);
  } finally {
    await Deno.remove(home, { recursive: true });
  }
});
