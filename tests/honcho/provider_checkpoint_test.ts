// Pre-compress checkpoint API v2 of the Honcho provider: a required
// checkpoint returns only when every evidence message is stored in Honcho,
// never duplicates on a retry or a grown transcript (content digests in
// message metadata), and throws when Honcho cannot confirm it.
import assert from "node:assert/strict";
import type { ChatMessage } from "@hermes/memory";
import { startHonchoTestServer } from "../honcho_server.ts";
import {
  makeProfile,
  removeHome,
  ROUTES,
  startProvider,
  storedContents,
} from "../fixtures/honcho_provider_harness.ts";

function transcript(turns: number): ChatMessage[] {
  const out: ChatMessage[] = [{ role: "system", content: "You are Hermes." }];
  for (let turn = 1; turn <= turns; turn++) {
    out.push({ role: "user", content: `Question ${turn}` });
    out.push({
      role: "assistant",
      content: "",
      tool_calls: [{
        id: `t${turn}`,
        function: { name: "terminal", arguments: "{}" },
      }],
    });
    out.push({
      role: "tool",
      tool_call_id: `t${turn}`,
      content: `TOOL OUTPUT ${turn}`,
    });
    out.push({ role: "assistant", content: `Answer ${turn}` });
  }
  return out;
}

Deno.test("HonchoMemoryProvider advertises checkpoint API v2", () => {
  return import("../../plugins/memory/honcho/mod.ts").then(
    ({ HonchoMemoryProvider }) => {
      assert.equal(
        new HonchoMemoryProvider().preCompressCheckpointApiVersion,
        2,
      );
    },
  );
});

Deno.test("HonchoMemoryProvider checkpoint stores every evidence message exactly once, also on retries and grown transcripts", async () => {
  await using server = await startHonchoTestServer();
  const home = await makeProfile(server, {
    config: { recallMode: "tools", writeFrequency: "session" },
  });
  const provider = await startProvider(home, "s1", {
    checkpointTimeoutMs: 5000,
  });
  try {
    // Turns 1-3 were synced the normal way (still queued: session frequency).
    for (let turn = 1; turn <= 3; turn++) {
      await provider.syncTurn(`Question ${turn}`, `Answer ${turn}`, {});
    }
    await provider.idle();
    assert.equal(server.state.messages.length, 0);
    // Turns 4-5 never went through syncTurn (e.g. the sync was dropped).
    const first = transcript(5);
    assert.equal(
      await provider.onPreCompress(first, { requireCheckpoint: true }),
      "",
    );
    assert.deepEqual(storedContents(server, "s1"), [
      "Question 1",
      "Answer 1",
      "Question 2",
      "Answer 2",
      "Question 3",
      "Answer 3",
      "Question 4",
      "Answer 4",
      "Question 5",
      "Answer 5",
    ]);
    const checkpointed = server.state.messages.filter((m) =>
      m.metadata.hermes_source === "checkpoint"
    );
    assert.equal(checkpointed.length, 4);
    assert.deepEqual(
      server.state.messages.map((m) => m.peer_id),
      Array.from({ length: 10 }, (_, i) => (i % 2 === 0 ? "alice" : "hermes")),
    );
    // Tool calls, tool results and the system prompt never leave the machine.
    const wire = JSON.stringify(server.requests.map((r) => r.body));
    assert.equal(wire.includes("TOOL OUTPUT"), false);
    assert.equal(wire.includes("terminal"), false);
    assert.equal(wire.includes("You are Hermes"), false);
    // The same transcript again: nothing new is written.
    const posts = server.requestCount(ROUTES.messages);
    await provider.onPreCompress(first, { requireCheckpoint: true });
    assert.equal(server.requestCount(ROUTES.messages), posts);
    assert.equal(server.state.messages.length, 10);
    // A grown transcript with a repeated short message: only the new occurrences.
    const grown = [
      ...transcript(6),
      { role: "user", content: "ok" },
      { role: "assistant", content: "Done." },
      { role: "user", content: "ok" },
      { role: "assistant", content: "Done again." },
      { role: "user", content: "summary", _compressed_summary: true },
    ];
    await provider.onPreCompress(grown, { requireCheckpoint: true });
    assert.deepEqual(storedContents(server, "s1").slice(10), [
      "Question 6",
      "Answer 6",
      "ok",
      "Done.",
      "ok",
      "Done again.",
    ]);
    await provider.onPreCompress(grown, { requireCheckpoint: true });
    assert.equal(server.state.messages.length, 16);
    // Fenced context in the transcript is stripped before it is stored.
    await provider.onPreCompress([
      ...grown,
      {
        role: "user",
        content: "Plan <memory-context>old facts</memory-context>the trip",
      },
    ], { requireCheckpoint: true });
    assert.equal(storedContents(server, "s1").at(-1), "Plan the trip");
  } finally {
    await provider.shutdown();
    await removeHome(home);
  }
  assert.deepEqual(server.violations, []);
});

Deno.test("HonchoMemoryProvider checkpoint throws when Honcho cannot confirm it, and a retry later stores nothing twice", async () => {
  await using server = await startHonchoTestServer();
  const home = await makeProfile(server, { config: { recallMode: "tools" } });
  const provider = await startProvider(home, "s1", {
    checkpointTimeoutMs: 400,
  });
  try {
    await provider.syncTurn("Question 1", "Answer 1", {});
    await provider.idle();
    assert.equal(server.state.messages.length, 2);
    server.inject("*", { status: 503, times: Infinity });
    const started = performance.now();
    await assert.rejects(
      provider.onPreCompress(transcript(3), { requireCheckpoint: true }),
      (error: Error) => {
        assert.match(
          error.message,
          /^Honcho could not confirm the pre-compress checkpoint: /,
        );
        return true;
      },
    );
    assert.ok(performance.now() - started < 3000);
    // Best effort (not required): the failure is logged, not thrown.
    assert.equal(await provider.onPreCompress(transcript(3), {}), "");
    server.clearFaults();
    await provider.onPreCompress(transcript(3), { requireCheckpoint: true });
    assert.deepEqual(storedContents(server, "s1"), [
      "Question 1",
      "Answer 1",
      "Question 2",
      "Answer 2",
      "Question 3",
      "Answer 3",
    ]);
  } finally {
    await provider.shutdown();
    await removeHome(home);
  }
  assert.deepEqual(server.violations, []);
});

Deno.test("HonchoMemoryProvider checkpoint refuses when messages are not saved or the provider is inert", async () => {
  await using server = await startHonchoTestServer();
  const home = await makeProfile(server, { config: { saveMessages: false } });
  const provider = await startProvider(home);
  const cron = await startProvider(home, "c", {}, { agentContext: "cron" });
  try {
    await assert.rejects(
      provider.onPreCompress(transcript(1), { requireCheckpoint: true }),
      /Honcho could not confirm the pre-compress checkpoint: saveMessages is off/,
    );
    await assert.rejects(
      cron.onPreCompress(transcript(1), { requireCheckpoint: true }),
      /cron context/,
    );
    assert.equal(await cron.onPreCompress(transcript(1), {}), "");
  } finally {
    await provider.shutdown();
    await cron.shutdown();
    await removeHome(home);
  }
});
