// The Honcho provider's turn pipeline against the real test server: an
// 8-turn lifecycle per recall mode (what is injected each turn, which
// requests are made), cadences, first-turn bounded waits, trivial prompts,
// stale and superseded dialectic results, empty-result widening, recallSync,
// the token budget and the session-start section filter.
import assert from "node:assert/strict";
import { setLogger } from "@hermes/memory";
import {
  type HonchoTestServer,
  startHonchoTestServer,
} from "../honcho_server.ts";
import {
  countRoutes,
  makeProfile,
  removeHome,
  ROUTES,
  runTurn,
  seedKnowledge,
  startProvider,
} from "../fixtures/honcho_provider_harness.ts";

const USER_SECTION = "## User Representation\n## Explicit Observations\n";

/** Dialectic answers numbered in arrival order: "Insight #n (level)". */
function numberedAnswers(server: HonchoTestServer): { count: () => number } {
  let n = 0;
  server.setDialecticAnswer((req) => `Insight #${++n} (${req.reasoningLevel})`);
  return { count: () => n };
}

function chatBodies(server: HonchoTestServer): Record<string, unknown>[] {
  return server.requests.filter((r) => r.route === ROUTES.chat).map((r) =>
    r.body as Record<string, unknown>
  );
}

Deno.test("HonchoMemoryProvider hybrid mode: 8-turn lifecycle injects base + dialectic and makes the designed requests", async () => {
  await using server = await startHonchoTestServer();
  seedKnowledge(server, { session: "s1" });
  numberedAnswers(server);
  const home = await makeProfile(server);
  const provider = await startProvider(home);
  try {
    assert.match(
      provider.systemPromptBlock(),
      /^# Honcho Memory\nActive \(hybrid mode\)\./,
    );
    assert.equal((await provider.getToolSchemas()).length, 5);
    assert.equal(await provider.idle(), true);
    // Session start: get-or-create with peers, sync back both configs, prewarm.
    assert.deepEqual(countRoutes(server.requests), {
      [ROUTES.session]: 1,
      [ROUTES.peerConfig]: 2,
      [ROUTES.chat]: 1,
    });
    const created = server.requests[0]!.body as Record<string, unknown>;
    assert.deepEqual(created.peers, {
      alice: { observe_me: true, observe_others: true },
      hermes: { observe_me: true, observe_others: true },
    });
    for (let turn = 1; turn <= 8; turn++) {
      const { injected, requests } = await runTurn(
        provider,
        server,
        turn,
        `Turn ${turn}: what should I pack for the Oslo hiking trip?`,
      );
      // Base layer in fixed order with exact headers.
      assert.ok(
        injected.startsWith(
          "## Session Summary\nAlice and Hermes discussed tea.\n\n" +
            USER_SECTION,
        ),
        `turn ${turn}: ${injected}`,
      );
      assert.match(
        injected,
        /Alice is planning a hiking trip to Oslo\n\n## User Peer Card\nName: Alice\nPrefers tea\n\n## AI Identity Card\nI am Hermes\n\n/,
      );
      // The dialectic supplement: the prewarm on turn 1, then the one fired after the previous turn.
      assert.ok(
        injected.endsWith(`\n\nInsight #${turn} (low)`),
        `turn ${turn}: ${injected}`,
      );
      const counts = countRoutes(requests);
      if (turn === 1) {
        // First base fetch (waited for) + the refresh queued for turn 2.
        assert.deepEqual(counts, {
          [ROUTES.sessionContext]: 2,
          [ROUTES.peerContext]: 2,
          [ROUTES.messages]: 1,
          [ROUTES.chat]: 1,
        });
      } else {
        assert.deepEqual(counts, {
          [ROUTES.sessionContext]: 1,
          [ROUTES.peerContext]: 1,
          [ROUTES.messages]: 1,
          [ROUTES.chat]: 1,
        });
      }
    }
    // Every turn stored once, user then assistant, with peer attribution.
    const stored = server.state.messages.filter((m) => m.session_id === "s1");
    assert.equal(stored.length, 16);
    assert.deepEqual(stored.slice(0, 2).map((m) => [m.peer_id, m.content]), [
      ["alice", "Turn 1: what should I pack for the Oslo hiking trip?"],
      ["hermes", "Reply to turn 1."],
    ]);
    // The base fetch asks from the AI's perspective with the user's words.
    const ctx = server.requests.find((r) => r.route === ROUTES.sessionContext)!;
    assert.equal(ctx.query.peer_target, "alice");
    assert.equal(ctx.query.peer_perspective, "hermes");
    assert.equal(ctx.query.summary, "true");
    // The warm prompt is used once base context is cached.
    const prompts = chatBodies(server).map((b) => String(b.query));
    assert.match(prompts[0]!, /^Who is this person\?/);
    assert.match(prompts[1]!, /session/);
  } finally {
    await provider.shutdown();
    await removeHome(home);
  }
  assert.deepEqual(server.violations, []);
});

Deno.test("HonchoMemoryProvider context mode: no tools; base every contextCadence, dialectic every dialecticCadence turns", async () => {
  await using server = await startHonchoTestServer();
  seedKnowledge(server, { session: "s1" });
  numberedAnswers(server);
  const home = await makeProfile(server, {
    config: { recallMode: "context", contextCadence: 2, dialecticCadence: 3 },
  });
  const provider = await startProvider(home);
  try {
    assert.deepEqual(await provider.getToolSchemas(), []);
    assert.match(
      provider.systemPromptBlock(),
      /Active \(context-injection mode\)\./,
    );
    assert.doesNotMatch(provider.systemPromptBlock(), /honcho_search/);
    await provider.idle();
    const expected: {
      dialectic: string | null;
      contextRefresh: boolean;
      chat: boolean;
    }[] = [
      { dialectic: "Insight #1", contextRefresh: false, chat: false }, // turn 1: prewarm
      { dialectic: null, contextRefresh: false, chat: false }, // 2
      { dialectic: null, contextRefresh: true, chat: true }, // 3
      { dialectic: "Insight #2", contextRefresh: false, chat: false }, // 4
      { dialectic: null, contextRefresh: true, chat: false }, // 5
      { dialectic: null, contextRefresh: false, chat: true }, // 6
      { dialectic: "Insight #3", contextRefresh: true, chat: false }, // 7
      { dialectic: null, contextRefresh: false, chat: false }, // 8
    ];
    for (let turn = 1; turn <= 8; turn++) {
      const { injected, requests } = await runTurn(
        provider,
        server,
        turn,
        `Turn ${turn}: any tea recommendations?`,
      );
      const want = expected[turn - 1]!;
      assert.ok(injected.startsWith("## Session Summary\n"), `turn ${turn}`);
      if (want.dialectic) {
        assert.ok(
          injected.endsWith(`\n\n${want.dialectic} (low)`),
          `turn ${turn}: ${injected}`,
        );
      } else {
        assert.doesNotMatch(injected, /Insight/, `turn ${turn}`);
      }
      const counts = countRoutes(requests);
      const firstFetch = turn === 1 ? 1 : 0;
      assert.equal(
        counts[ROUTES.sessionContext] ?? 0,
        firstFetch + (want.contextRefresh ? 1 : 0),
        `turn ${turn} context requests`,
      );
      assert.equal(
        counts[ROUTES.chat] ?? 0,
        want.chat ? 1 : 0,
        `turn ${turn} chat`,
      );
      assert.equal(counts[ROUTES.messages], 1, `turn ${turn} messages`);
    }
  } finally {
    await provider.shutdown();
    await removeHome(home);
  }
  assert.deepEqual(server.violations, []);
});

Deno.test("HonchoMemoryProvider tools mode: injects nothing, lazy session init, tools work", async () => {
  await using server = await startHonchoTestServer();
  seedKnowledge(server);
  const home = await makeProfile(server, { config: { recallMode: "tools" } });
  const provider = await startProvider(home);
  try {
    assert.match(provider.systemPromptBlock(), /Active \(tools-only mode\)\./);
    assert.match(provider.systemPromptBlock(), /honcho_reasoning/);
    assert.equal((await provider.getToolSchemas()).length, 5);
    await provider.idle();
    assert.equal(
      server.requests.length,
      0,
      "no network before the first write or tool call",
    );
    for (let turn = 1; turn <= 8; turn++) {
      const { injected, requests } = await runTurn(
        provider,
        server,
        turn,
        `Turn ${turn}: remind me about Oslo`,
      );
      assert.equal(injected, "");
      const counts = countRoutes(requests);
      assert.equal(counts[ROUTES.chat], undefined);
      assert.equal(counts[ROUTES.sessionContext], undefined);
      assert.equal(counts[ROUTES.messages], 1);
      if (turn === 1) {
        // The first delivery sets the session up first.
        assert.equal(counts[ROUTES.session], 1);
        assert.equal(counts[ROUTES.peerConfig], 2);
      }
      if (turn === 4) {
        const result = JSON.parse(
          await provider.handleToolCall("honcho_profile", {}, {}),
        );
        assert.deepEqual(result, { result: ["Name: Alice", "Prefers tea"] });
      }
    }
    assert.equal(server.requestCount(ROUTES.card), 1);
  } finally {
    await provider.shutdown();
    await removeHome(home);
  }
  assert.deepEqual(server.violations, []);
});

Deno.test("HonchoMemoryProvider first turn waits at most firstTurnBaseWait, later turns never wait", async () => {
  await using server = await startHonchoTestServer();
  seedKnowledge(server, { session: "s1" });
  server.setDialecticAnswer("Slow insight");
  const home = await makeProfile(server, {
    config: { firstTurnBaseWait: 0.2, firstTurnDialecticWait: 0.1 },
  });
  server.inject(ROUTES.sessionContext, { latencyMs: 700 });
  server.inject(ROUTES.chat, { latencyMs: 700, times: 1 });
  const provider = await startProvider(home);
  try {
    await provider.onTurnStart(1, "Oslo trip?", {});
    let started = performance.now();
    const first = await provider.prefetch("Oslo trip?", {});
    const firstMs = performance.now() - started;
    assert.ok(firstMs < 650, `first turn took ${firstMs} ms`);
    assert.ok(firstMs >= 150, `first turn did not wait: ${firstMs} ms`);
    assert.doesNotMatch(first, /## Session Summary/);
    await provider.syncTurn("Oslo trip?", "Sure.", {});
    await provider.queuePrefetch("Oslo trip?", {});
    await provider.idle();
    await provider.onTurnStart(2, "More on Oslo?", {});
    started = performance.now();
    const second = await provider.prefetch("More on Oslo?", {});
    assert.ok(performance.now() - started < 50);
    // What missed turn 1 arrives on turn 2.
    assert.match(second, /^## Session Summary\n/);
    assert.match(second, /Slow insight$/);
  } finally {
    await provider.shutdown();
    await removeHome(home);
  }
  assert.deepEqual(server.violations, []);
});

Deno.test("HonchoMemoryProvider skips trivial prompts and discards stale or superseded dialectic results", async (t) => {
  await using server = await startHonchoTestServer();
  numberedAnswers(server);
  const home = await makeProfile(server);
  const provider = await startProvider(home);
  try {
    await provider.idle();
    await runTurn(provider, server, 1, "Tell me about tea");
    await t.step(
      "a trivial prompt starts no work and returns only a pending result",
      async () => {
        const before = server.requests.length;
        await provider.onTurnStart(2, "ok", {});
        assert.equal(await provider.prefetch("ok", {}), "Insight #2 (low)");
        await provider.queuePrefetch("ok", {});
        await provider.idle();
        assert.equal(server.requests.length, before);
        assert.equal(await provider.prefetch("thanks!", {}), "");
      },
    );
    await t.step(
      "a result older than 2 x dialecticCadence turns is dropped",
      async () => {
        await provider.onTurnStart(3, "Tell me about green tea", {});
        await provider.queuePrefetch("Tell me about green tea", {});
        await provider.idle();
        assert.equal(provider.livenessSnapshot().pendingResultFiredAt, 3);
        await provider.onTurnStart(6, "And oolong?", {});
        const injected = await provider.prefetch("And oolong?", {});
        assert.doesNotMatch(injected, /Insight #3/);
        assert.equal(provider.livenessSnapshot().pendingResultFiredAt, null);
      },
    );
    await t.step(
      "a session switch discards a dialectic still in flight",
      async () => {
        server.inject(ROUTES.chat, { latencyMs: 200 });
        await provider.onTurnStart(7, "What about matcha?", {});
        await provider.queuePrefetch("What about matcha?", {});
        assert.equal(provider.livenessSnapshot().threadAlive, true);
        await provider.onSessionSwitch("s2", { reason: "new_session" });
        await provider.idle();
        assert.notEqual(provider.livenessSnapshot().pendingResultFiredAt, 7);
        assert.equal(provider.sessionIdentity?.sessionId, "s2");
        await provider.onTurnStart(8, "Matcha again?", {});
        assert.doesNotMatch(
          await provider.prefetch("Matcha again?", {}),
          /Insight #4\b/,
        );
      },
    );
  } finally {
    await provider.shutdown();
    await removeHome(home);
  }
  assert.deepEqual(server.violations, []);
});

Deno.test("HonchoMemoryProvider widens the dialectic cadence while answers are empty and resets on success", async () => {
  await using server = await startHonchoTestServer();
  let answer: string | null = "Useful insight";
  server.setDialecticAnswer(() => answer);
  const home = await makeProfile(server, { config: { dialecticCadence: 2 } });
  const provider = await startProvider(home);
  try {
    await provider.idle(); // prewarm succeeded: fired at 0
    await runTurn(provider, server, 1, "Tell me about tea");
    await runTurn(provider, server, 2, "Tell me about coffee"); // fires (2 - 0 >= 2)
    assert.equal(provider.livenessSnapshot().lastDialecticTurn, 2);
    answer = null;
    const fired: number[] = [];
    for (let turn = 3; turn <= 9; turn++) {
      const before = server.requestCount(ROUTES.chat);
      await runTurn(provider, server, turn, `Question ${turn} about brewing`);
      if (server.requestCount(ROUTES.chat) > before) fired.push(turn);
    }
    const snapshot = provider.livenessSnapshot();
    assert.equal(snapshot.emptyStreak, fired.length);
    assert.equal(snapshot.effectiveCadence, Math.min(2 + fired.length, 16));
    assert.equal(
      snapshot.lastDialecticTurn,
      2,
      "empty answers do not advance the cadence",
    );
    assert.deepEqual(fired.slice(0, 2), [4, 5]);
    answer = "Back again";
    await runTurn(provider, server, 10, "Question 10 about brewing");
    assert.equal(provider.livenessSnapshot().emptyStreak, 0);
    assert.equal(provider.livenessSnapshot().effectiveCadence, 2);
  } finally {
    await provider.shutdown();
    await removeHome(home);
  }
  assert.deepEqual(server.violations, []);
});

Deno.test("HonchoMemoryProvider dialectic depth, per-pass levels, heuristic and input cap", async (t) => {
  await using server = await startHonchoTestServer();
  await t.step(
    "depth 3 uses the proportional levels and the heuristic on the base slot",
    async () => {
      server.setDialecticAnswer("short");
      const home = await makeProfile(server, {
        config: { dialecticDepth: 3, recallMode: "hybrid" },
      });
      const provider = await startProvider(home, "depth");
      try {
        await provider.idle();
        const before = chatBodies(server).length;
        await provider.onTurnStart(1, "x", {});
        const long = `Please plan ${"a very detailed itinerary ".repeat(20)}`;
        await provider.queuePrefetch(long, {}); // not ready turn-1 semantics aside
        await provider.idle();
        const levels = chatBodies(server).slice(before).map((b) =>
          b.reasoning_level
        );
        // prewarm already ran: minimal, low, low (101-char query, no bump).
        const prewarm = chatBodies(server).slice(0, 3).map((b) =>
          b.reasoning_level
        );
        assert.deepEqual(prewarm, ["minimal", "low", "low"]);
        assert.deepEqual(levels, ["minimal", "high", "low"]); // 500+ chars: +2
      } finally {
        await provider.shutdown();
        await removeHome(home);
      }
    },
  );
  await t.step(
    "explicit dialecticDepthLevels win; a strong first answer stops early",
    async () => {
      const strong = `Summary:\n- ${"prefers tea and long hikes ".repeat(6)}`;
      server.setDialecticAnswer(strong);
      const home = await makeProfile(server, {
        config: { dialecticDepth: 2, dialecticDepthLevels: ["medium", "max"] },
      });
      const before = chatBodies(server).length;
      const provider = await startProvider(home, "levels");
      try {
        await provider.idle();
        const prewarm = chatBodies(server).filter((b) =>
          String(b.query).startsWith("Who is this person?")
        ).at(-1)!;
        assert.equal(prewarm.reasoning_level, "medium");
        assert.equal(
          chatBodies(server).length - before,
          1,
          "stopped after pass 0",
        );
      } finally {
        await provider.shutdown();
        await removeHome(home);
      }
    },
  );
  await t.step(
    "dialecticDynamic false pins every pass to the base level; input is capped",
    async () => {
      server.setDialecticAnswer("");
      const home = await makeProfile(server, {
        config: {
          dialecticDepth: 2,
          dialecticDynamic: false,
          dialecticReasoningLevel: "medium",
          dialecticMaxInputChars: 40,
        },
      });
      const before = chatBodies(server).length;
      const provider = await startProvider(home, "pinned");
      try {
        await provider.idle();
        const bodies = chatBodies(server).slice(before);
        assert.ok(bodies.length >= 1);
        for (const body of bodies) {
          assert.equal(body.reasoning_level, "medium");
          assert.ok(String(body.query).length <= 40, String(body.query));
        }
      } finally {
        await provider.shutdown();
        await removeHome(home);
      }
    },
  );
  assert.deepEqual(server.violations, []);
});

Deno.test("HonchoMemoryProvider applies contextTokens, dialecticMaxChars and injection.sessionStart", async () => {
  await using server = await startHonchoTestServer();
  seedKnowledge(server, { session: "s1" });
  server.setDialecticAnswer(`Insight ${"word ".repeat(100)}`);
  const home = await makeProfile(server, {
    config: {
      dialecticMaxChars: 30,
      injection: { sessionStart: ["peerCard", "aiCard"] },
    },
  });
  const provider = await startProvider(home);
  try {
    await provider.idle();
    const { injected } = await runTurn(provider, server, 1, "Oslo hiking?");
    assert.equal(
      injected,
      "## User Peer Card\nName: Alice\nPrefers tea\n\n## AI Identity Card\nI am Hermes\n\nInsight word word word word \u2026",
    );
    // Only the sections asked for are fetched: no summary/representation skip,
    // but the card comes with the session context.
  } finally {
    await provider.shutdown();
    await removeHome(home);
  }
  const budgetHome = await makeProfile(server, {
    config: { contextTokens: 10 },
  });
  const budgeted = await startProvider(budgetHome, "s1");
  try {
    await budgeted.idle();
    const { injected } = await runTurn(budgeted, server, 1, "Oslo hiking?");
    assert.ok(injected.length <= 42, injected);
    assert.ok(injected.endsWith(" \u2026"), injected);
  } finally {
    await budgeted.shutdown();
    await removeHome(budgetHome);
  }
  assert.deepEqual(server.violations, []);
});

Deno.test("HonchoMemoryProvider recallSync recalls for the current message within the request timeout", async () => {
  await using server = await startHonchoTestServer();
  seedKnowledge(server, { session: "s1" });
  server.setDialecticAnswer((req) => `About: ${req.query.split("\n")[1]}`);
  const home = await makeProfile(server, {
    config: { recallSync: true, timeout: 2 },
  });
  const provider = await startProvider(home);
  try {
    await provider.idle();
    assert.equal(
      server.requestCount(ROUTES.chat),
      0,
      "no prewarm in recallSync mode",
    );
    await provider.onTurnStart(1, "Oslo hiking gear?", {});
    const injected = await provider.prefetch("Oslo hiking gear?", {});
    assert.match(injected, /^## Session Summary\n/);
    assert.match(injected, /About: Oslo hiking gear\?$/);
    const chat = chatBodies(server)[0]!;
    assert.match(
      String(chat.query),
      /^Current user request:\nOslo hiking gear\?\n\n/,
    );
    const before = server.requests.length;
    await provider.queuePrefetch("Oslo hiking gear?", {});
    await provider.idle();
    assert.equal(
      server.requests.slice(before).filter((r) => r.route !== ROUTES.messages)
        .length,
      0,
    );
    // A slow server: the budget (timeout 2 s) is not exceeded and "" comes back.
    server.inject(ROUTES.chat, { latencyMs: 3000 });
    await provider.onTurnStart(2, "Anything else for Oslo?", {});
    const started = performance.now();
    const late = await provider.prefetch("Anything else for Oslo?", {});
    assert.ok(performance.now() - started < 2600);
    assert.doesNotMatch(late, /About:/);
  } finally {
    await provider.shutdown();
    await removeHome(home);
  }
  assert.deepEqual(server.violations, []);
});

Deno.test("HonchoMemoryProvider is inert for cron agents and inactive without config", async () => {
  await using server = await startHonchoTestServer();
  const home = await makeProfile(server);
  const cron = await startProvider(home, "c", {}, { agentContext: "cron" });
  try {
    assert.equal(cron.systemPromptBlock(), "");
    assert.deepEqual(await cron.getToolSchemas(), []);
    await cron.onTurnStart(1, "hi there friend", {});
    assert.equal(await cron.prefetch("What about Oslo?", {}), "");
    await cron.syncTurn("What about Oslo?", "Nice", {});
    assert.deepEqual(
      JSON.parse(
        await cron.handleToolCall("honcho_search", { query: "x" }, {}),
      ),
      { error: "Honcho is not active (cron context)." },
    );
    await cron.idle();
    assert.equal(server.requests.length, 0);
  } finally {
    await cron.shutdown();
  }
  const empty = await Deno.makeTempDir();
  await Deno.writeTextFile(
    `${empty}/honcho.json`,
    JSON.stringify({ enabled: false, apiKey: "k" }),
  );
  const off = await startProvider(empty, "c");
  try {
    assert.equal(await off.isAvailable(), false);
    assert.equal(await off.prefetch("What about Oslo?", {}), "");
    assert.deepEqual(
      JSON.parse(await off.handleToolCall("honcho_search", { query: "x" }, {})),
      { error: "Honcho is not active for this session." },
    );
  } finally {
    await off.shutdown();
    await removeHome(empty);
    await removeHome(home);
  }
  assert.deepEqual(server.violations, []);
});

Deno.test("HonchoMemoryProvider adopts the observation config Honcho already holds for the session (plugins/memory/honcho/SPEC.md §5)", async () => {
  await using server = await startHonchoTestServer();
  // Someone created the session earlier with the AI not observing the user.
  const earlier = await makeProfile(server, {
    config: {
      recallMode: "tools",
      observation: { ai: { observeOthers: false } },
    },
  });
  const first = await startProvider(earlier, "shared");
  try {
    await first.handleToolCall("honcho_profile", {}, {});
  } finally {
    await first.shutdown();
    await removeHome(earlier);
  }
  const home = await makeProfile(server);
  const provider = await startProvider(home, "shared");
  try {
    await provider.idle();
    await runTurn(provider, server, 1, "Oslo hiking?");
    const ctx = server.requests.filter((r) => r.route === ROUTES.sessionContext)
      .at(-1)!;
    // The server's observe_others=false wins: the user is read from its own perspective.
    assert.equal(ctx.query.peer_target, "alice");
    assert.equal(ctx.query.peer_perspective, undefined);
    const chat = server.requests.filter((r) => r.route === ROUTES.chat).at(-1)!;
    assert.equal(chat.path, "/v3/workspaces/ws/peers/alice/chat");
  } finally {
    await provider.shutdown();
    await removeHome(home);
  }
  assert.deepEqual(server.violations, []);
});

Deno.test("HonchoMemoryProvider never writes the API key to a log line", async () => {
  const key = "hk-log-secret-key-98765";
  await using server = await startHonchoTestServer({ apiKey: key });
  const lines: string[] = [];
  const previous = setLogger({ log: (_level, message) => lines.push(message) });
  const home = await makeProfile(server, { config: { apiKey: key } });
  const provider = await startProvider(home, "s1", {
    checkpointTimeoutMs: 300,
  });
  try {
    await provider.idle();
    server.inject("*", {
      status: 503,
      detail: `token ${key} rejected`,
      times: Infinity,
    });
    for (let turn = 1; turn <= 3; turn++) {
      await runTurn(provider, server, turn, `Turn ${turn}: Oslo?`);
    }
    await provider.onPreCompress([{ role: "user", content: "x" }], {});
    server.clearFaults();
  } finally {
    await provider.shutdown();
    setLogger(previous);
    await removeHome(home);
  }
  assert.ok(lines.length > 0);
  assert.deepEqual(lines.filter((line) => line.includes(key)), []);
});
