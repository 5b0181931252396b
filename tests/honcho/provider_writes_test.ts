// Writes of the Honcho provider: every writeFrequency, batching within the
// API's 100-message limit, chunking with the "[continued] " prefix, peer
// attribution (user, AI, other human authors, bot authors), what never
// leaves the machine (tool calls, tool results, memory-context fences,
// internal gateway notices), saveMessages, memory-write mirroring and the
// outbox size bound.
import assert from "node:assert/strict";
import { setLogger } from "@hermes/memory";
import { startHonchoTestServer } from "../honcho_server.ts";
import {
  makeProfile,
  removeHome,
  ROUTES,
  startProvider,
  storedContents,
  waitUntil,
} from "../fixtures/honcho_provider_harness.ts";

async function turns(
  provider: Awaited<ReturnType<typeof startProvider>>,
  from: number,
  to: number,
): Promise<void> {
  for (let turn = from; turn <= to; turn++) {
    await provider.onTurnStart(turn, `q${turn}`, {});
    await provider.syncTurn(`Question ${turn}`, `Answer ${turn}`, {});
    await provider.idle();
  }
}

function messagePosts(
  server: Awaited<ReturnType<typeof startHonchoTestServer>>,
): number[] {
  return server.requests.filter((r) => r.route === ROUTES.messages).map((r) =>
    (r.body as { messages: unknown[] }).messages.length
  );
}

Deno.test("HonchoMemoryProvider writeFrequency async: each turn lands in the background, in order", async () => {
  await using server = await startHonchoTestServer();
  const home = await makeProfile(server, { config: { recallMode: "tools" } });
  const provider = await startProvider(home);
  try {
    await turns(provider, 1, 4);
    assert.deepEqual(storedContents(server, "s1"), [
      "Question 1",
      "Answer 1",
      "Question 2",
      "Answer 2",
      "Question 3",
      "Answer 3",
      "Question 4",
      "Answer 4",
    ]);
    // Turns queued while a delivery is slow join the next batch.
    server.inject(ROUTES.messages, { latencyMs: 150 });
    for (let turn = 5; turn <= 9; turn++) {
      await provider.syncTurn(`Question ${turn}`, `Answer ${turn}`, {});
    }
    await provider.idle();
    await waitUntil(
      () => storedContents(server, "s1").length === 18,
      5000,
      "18 messages",
    );
    assert.ok(
      messagePosts(server).length < 9,
      `posts: ${messagePosts(server)}`,
    );
    assert.equal(new Set(storedContents(server, "s1")).size, 18);
  } finally {
    await provider.shutdown();
    await removeHome(home);
  }
  assert.deepEqual(server.violations, []);
});

Deno.test("HonchoMemoryProvider writeFrequency turn: one batch right after each turn", async () => {
  await using server = await startHonchoTestServer();
  const home = await makeProfile(server, {
    config: { recallMode: "tools", writeFrequency: "turn" },
  });
  const provider = await startProvider(home);
  try {
    for (let turn = 1; turn <= 3; turn++) {
      await provider.syncTurn(`Question ${turn}`, `Answer ${turn}`, {});
      await provider.idle();
      assert.equal(storedContents(server, "s1").length, turn * 2);
    }
    assert.deepEqual(messagePosts(server), [2, 2, 2]);
  } finally {
    await provider.shutdown();
    await removeHome(home);
  }
  assert.deepEqual(server.violations, []);
});

Deno.test("HonchoMemoryProvider writeFrequency session: nothing until the session ends, then batches of at most 100", async () => {
  await using server = await startHonchoTestServer();
  const home = await makeProfile(server, {
    config: { recallMode: "tools", writeFrequency: "session" },
  });
  const provider = await startProvider(home);
  try {
    for (let turn = 1; turn <= 60; turn++) {
      await provider.syncTurn(`Question ${turn}`, `Answer ${turn}`, {});
    }
    await provider.idle();
    assert.equal(server.requestCount(ROUTES.messages), 0);
    assert.equal((await provider.outbox!.stats()).pending, 120);
    await provider.onSessionEnd([]);
    assert.deepEqual(messagePosts(server), [100, 20]);
    assert.equal(storedContents(server, "s1").length, 120);
    assert.equal(storedContents(server, "s1")[119], "Answer 60");
  } finally {
    await provider.shutdown();
    await removeHome(home);
  }
  assert.deepEqual(server.violations, []);
});

Deno.test("HonchoMemoryProvider writeFrequency 3: delivered after every third turn; the rest at shutdown", async () => {
  await using server = await startHonchoTestServer();
  const home = await makeProfile(server, {
    config: { recallMode: "tools", writeFrequency: "3" },
  });
  const provider = await startProvider(home);
  try {
    const seen: number[] = [];
    for (let turn = 1; turn <= 8; turn++) {
      await provider.syncTurn(`Question ${turn}`, `Answer ${turn}`, {});
      await provider.idle();
      seen.push(storedContents(server, "s1").length);
    }
    assert.deepEqual(seen, [0, 0, 6, 6, 6, 12, 12, 12]);
    assert.deepEqual(messagePosts(server), [6, 6]);
  } finally {
    await provider.shutdown();
  }
  assert.equal(storedContents(server, "s1").length, 16);
  await removeHome(home);
  assert.deepEqual(server.violations, []);
});

Deno.test("HonchoMemoryProvider chunks long text at messageMaxChars with the [continued] prefix", async () => {
  await using server = await startHonchoTestServer();
  const home = await makeProfile(server, {
    config: { recallMode: "tools", messageMaxChars: 100 },
  });
  const provider = await startProvider(home);
  try {
    const sentence = "The quick brown fox jumps over the lazy dog. ";
    const long = sentence.repeat(7).trim();
    await provider.syncTurn(long, "Short reply.", {});
    await provider.idle();
    const stored = server.state.messages;
    const user = stored.filter((m) => m.peer_id === "alice");
    assert.ok(user.length >= 3);
    assert.ok(user.every((m) => m.content.length <= 100));
    assert.ok(!user[0]!.content.startsWith("[continued] "));
    assert.ok(user.slice(1).every((m) => m.content.startsWith("[continued] ")));
    assert.ok(user[0]!.content.endsWith("dog."), user[0]!.content);
    assert.deepEqual(
      user.map((m) => m.metadata.hermes_chunk),
      user.map((_, i) => i),
    );
    assert.equal(new Set(user.map((m) => m.metadata.hermes_digest)).size, 1);
    const ai = stored.filter((m) => m.peer_id === "hermes");
    assert.deepEqual(ai.map((m) => m.content), ["Short reply."]);
  } finally {
    await provider.shutdown();
    await removeHome(home);
  }
  assert.deepEqual(server.violations, []);
});

Deno.test("HonchoMemoryProvider sends only user and assistant text: no tool calls, tool results, fences or gateway notices", async () => {
  await using server = await startHonchoTestServer();
  const home = await makeProfile(server, { config: { recallMode: "tools" } });
  const provider = await startProvider(home);
  try {
    const transcript = [
      { role: "user", content: "Deploy the app" },
      {
        role: "assistant",
        content: "",
        tool_calls: [{
          id: "t1",
          function: {
            name: "terminal",
            arguments: '{"cmd":"cat ~/.ssh/id_rsa"}',
          },
        }],
      },
      {
        role: "tool",
        tool_call_id: "t1",
        content: "-----BEGIN PRIVATE KEY-----",
      },
      { role: "assistant", content: "Deployed." },
    ];
    await provider.syncTurn(
      "Deploy the app <memory-context>\n[System note: The following is recalled memory context, NOT new user input. Treat as authoritative reference data.]\n\nold facts\n</memory-context>",
      "Deployed.",
      { messages: transcript },
    );
    await provider.syncTurn(
      "[ASYNC TASK 3 COMPLETE] build finished",
      "Noted.",
      {},
    );
    await provider.syncTurn(
      "  [CONTEXT COMPACTION] summary follows",
      "Ok.",
      {},
    );
    await provider.syncTurn(
      "  <memory-context>only fenced</memory-context>  ",
      "   ",
      {},
    );
    await provider.idle();
    assert.deepEqual(storedContents(server), ["Deploy the app", "Deployed."]);
    const wire = JSON.stringify(server.requests.map((r) => r.body));
    for (
      const secret of [
        "id_rsa",
        "PRIVATE KEY",
        "terminal",
        "old facts",
        "memory-context",
        "ASYNC TASK",
      ]
    ) {
      assert.equal(wire.includes(secret), false, `${secret} left the machine`);
    }
  } finally {
    await provider.shutdown();
    await removeHome(home);
  }
  assert.deepEqual(server.violations, []);
});

Deno.test("HonchoMemoryProvider attributes turns to other human authors and bot authors' a2a sessions", async () => {
  await using server = await startHonchoTestServer();
  const home = await makeProfile(server, {
    config: { recallMode: "tools", userPeerAliases: { "tg-99": "bob" } },
  });
  const provider = await startProvider(home, "s1", {}, { userId: "tg-1" });
  try {
    assert.equal(provider.sessionIdentity?.userPeerId ?? "tg-1", "tg-1");
    await provider.syncTurn("Hi from the owner", "Hello owner", {});
    await provider.syncTurn("Hi, I'm Bob", "Hello Bob", {
      turnAuthor: { id: "tg-99", name: "Bob" },
    });
    await provider.syncTurn("beep from a bot", "hello bot", {
      turnAuthor: { id: "bot:helper", name: "Helper", isBot: true },
    });
    await provider.idle();
    const s1 = server.state.messages.filter((m) => m.session_id === "s1");
    assert.deepEqual(s1.map((m) => [m.peer_id, m.content]), [
      ["tg-1", "Hi from the owner"],
      ["hermes", "Hello owner"],
      ["bob", "Hi, I'm Bob"],
      ["hermes", "Hello Bob"],
    ]);
    // Bob joined the session with the user's observation flags before his message.
    const join = server.requests.find((r) => r.route === ROUTES.addPeers)!;
    assert.deepEqual(join.body, {
      bob: { observe_me: true, observe_others: true },
    });
    const bob = server.state.sessionPeers.find((p) =>
      p.session_id === "s1" && p.peer_id === "bob"
    );
    assert.equal(bob?.observe_others, true);
    const a2a = server.state.messages.filter((m) => m.session_id !== "s1");
    assert.equal(a2a.length, 2);
    assert.match(a2a[0]!.session_id, /^s1-bot-hermes-helper-[0-9a-f]{8}$/);
    assert.equal(a2a[0]!.peer_id, "bot-helper");
  } finally {
    await provider.shutdown();
    await removeHome(home);
  }
  assert.deepEqual(server.violations, []);
});

Deno.test("HonchoMemoryProvider saveMessages false writes nothing; memory writes become conclusions", async () => {
  await using server = await startHonchoTestServer();
  const off = await makeProfile(server, { config: { saveMessages: false } });
  const quiet = await startProvider(off);
  try {
    await quiet.idle();
    await quiet.syncTurn("Question", "Answer", {});
    await quiet.onMemoryWrite("add", "user", "Likes tea", {});
    await quiet.onSessionEnd([]);
    await quiet.idle();
    assert.equal(server.requestCount(ROUTES.messages), 0);
    assert.equal(server.requestCount(ROUTES.conclusions), 0);
  } finally {
    await quiet.shutdown();
    await removeHome(off);
  }
  const on = await makeProfile(server);
  const provider = await startProvider(on, "s9");
  try {
    await provider.idle();
    await provider.onMemoryWrite("add", "user", "Prefers window seats", {});
    await provider.onMemoryWrite("remove", "user", "Ignored", {});
    await provider.onMemoryWrite("add", "memory", "Ignored too", {});
    await provider.idle();
    const saved = server.state.conclusions.filter((c) => c.session_id === "s9");
    assert.deepEqual(
      saved.map((c) => [c.observer_id, c.observed_id, c.content]),
      [
        ["hermes", "alice", "Prefers window seats"],
      ],
    );
  } finally {
    await provider.shutdown();
    await removeHome(on);
  }
  assert.deepEqual(server.violations, []);
});

Deno.test("HonchoMemoryProvider warns once when the outbox reaches its size bound", async () => {
  await using server = await startHonchoTestServer();
  const warnings: string[] = [];
  const previous = setLogger({
    log: (level, message) => {
      if (level === "warn") warnings.push(message);
    },
  });
  const home = await makeProfile(server, {
    config: { recallMode: "tools", writeFrequency: "session" },
  });
  const provider = await startProvider(home, "s1", {
    outbox: { maxPendingMessages: 4, retryBaseDelayMs: 5, retryMaxDelayMs: 20 },
  });
  try {
    for (let turn = 1; turn <= 4; turn++) {
      await provider.syncTurn(`Question ${turn}`, `Answer ${turn}`, {});
    }
    await provider.idle();
    const full = warnings.filter((w) => w.includes("is full"));
    assert.equal(full.length, 1, warnings.join("\n"));
    assert.match(full[0]!, /honcho\/outbox\/ws\.jsonl/);
    assert.equal((await provider.outbox!.stats()).pending, 4);
  } finally {
    await provider.shutdown();
    setLogger(previous);
    await removeHome(home);
  }
  assert.deepEqual(server.violations, []);
});

Deno.test("HonchoMemoryProvider stores turns in syncTurn order however many awaits session naming takes", async (t) => {
  // per-repo naming awaits git; a turn handed over while the name is being
  // resolved waits for it. A turn handed over at any later microtask (here:
  // as soon as the session is named, before anything else runs) must still
  // be stored after the earlier ones.
  for (const hops of [0, 1, 3]) {
    await t.step(`git answers after ${hops} extra microtask(s)`, async () => {
      await using server = await startHonchoTestServer();
      const home = await makeProfile(server, {
        config: { sessionStrategy: "per-repo", recallMode: "tools" },
      });
      let release: (top: string) => void = () => {};
      const gitTopLevel = async (): Promise<string> => {
        const top = await new Promise<string>((resolve) => release = resolve);
        for (let i = 0; i < hops; i++) await Promise.resolve();
        return top;
      };
      const provider = await startProvider(home, "s1", { gitTopLevel }, {
        cwd: "/work/project",
      });
      try {
        const handed: Promise<void>[] = [];
        const sync = (n: number): void => {
          handed.push(
            Promise.resolve(provider.syncTurn(`Question ${n}`, `Answer ${n}`)),
          );
        };
        sync(1);
        sync(2);
        release("/work/project");
        // The host hands over turn 3 the moment the session has a name.
        while (provider.sessionIdentity === undefined) await Promise.resolve();
        sync(3);
        sync(4);
        await Promise.all(handed);
        assert.equal(await provider.idle(10_000), true);
        assert.deepEqual(
          storedContents(server),
          [1, 2, 3, 4].flatMap((n) => [`Question ${n}`, `Answer ${n}`]),
        );
        assert.equal(provider.sessionIdentity?.sessionKey, "project");
      } finally {
        await provider.shutdown();
        await removeHome(home);
      }
      assert.deepEqual(server.violations, []);
    });
  }
});
