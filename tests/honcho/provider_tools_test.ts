// The five Honcho tools: exact schemas (no anyOf/oneOf/allOf), every guard
// string of plugins/memory/honcho/SPEC.md §10, and the results of plugins/memory/honcho/SPEC.md §10, against the real test server.
import assert from "node:assert/strict";
import type { ToolSchema } from "@hermes/memory";
import {
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
import type { HonchoMemoryProvider } from "../../plugins/memory/honcho/mod.ts";

async function call(
  provider: HonchoMemoryProvider,
  name: string,
  args: Record<string, unknown> = {},
): Promise<Record<string, unknown>> {
  const raw = await provider.handleToolCall(name, args, {});
  assert.equal(typeof raw, "string");
  return JSON.parse(raw);
}

function walk(value: unknown, visit: (key: string) => void): void {
  if (Array.isArray(value)) value.forEach((v) => walk(v, visit));
  else if (value && typeof value === "object") {
    for (const [key, item] of Object.entries(value)) {
      visit(key);
      walk(item, visit);
    }
  }
}

Deno.test("honcho tool schemas are exact and use no anyOf/oneOf/allOf", async () => {
  await using server = await startHonchoTestServer();
  const home = await makeProfile(server, { config: { recallMode: "tools" } });
  const provider = await startProvider(home);
  try {
    const schemas: ToolSchema[] = await provider.getToolSchemas();
    const shape = Object.fromEntries(schemas.map((s) => {
      const params = s.parameters as {
        type: string;
        properties: Record<
          string,
          { type: string; enum?: string[]; items?: { type: string } }
        >;
        required: string[];
      };
      assert.equal(params.type, "object");
      assert.ok(typeof s.description === "string" && s.description.length > 40);
      return [s.name, {
        props: Object.fromEntries(
          Object.entries(params.properties).map(([k, v]) => [k, v.type]),
        ),
        required: params.required,
      }];
    }));
    assert.deepEqual(shape, {
      honcho_profile: {
        props: { peer: "string", card: "array" },
        required: [],
      },
      honcho_search: {
        props: { query: "string", max_tokens: "integer", peer: "string" },
        required: ["query"],
      },
      honcho_context: { props: { peer: "string" }, required: [] },
      honcho_reasoning: {
        props: { query: "string", reasoning_level: "string", peer: "string" },
        required: ["query"],
      },
      honcho_conclude: {
        props: {
          conclusion: "string",
          delete_id: "string",
          list: "boolean",
          query: "string",
          peer: "string",
        },
        required: [],
      },
    });
    const reasoning = schemas.find((s) => s.name === "honcho_reasoning")!;
    assert.deepEqual(
      (reasoning.parameters as {
        properties: { reasoning_level: { enum: string[] } };
      })
        .properties.reasoning_level.enum,
      ["minimal", "low", "medium", "high", "max"],
    );
    const profile = schemas.find((s) => s.name === "honcho_profile")!;
    assert.deepEqual(
      (profile.parameters as { properties: { card: { items: unknown } } })
        .properties.card.items,
      { type: "string" },
    );
    walk(
      schemas,
      (key) => assert.ok(!["anyOf", "oneOf", "allOf"].includes(key), key),
    );
  } finally {
    await provider.shutdown();
    await removeHome(home);
  }
});

Deno.test("honcho tools: dispatch guards", async (t) => {
  await using server = await startHonchoTestServer();
  await t.step("unknown tool", async () => {
    const home = await makeProfile(server, { config: { recallMode: "tools" } });
    const provider = await startProvider(home);
    try {
      assert.deepEqual(await call(provider, "honcho_nope"), {
        error: "Unknown tool: honcho_nope",
      });
    } finally {
      await provider.shutdown();
      await removeHome(home);
    }
  });
  await t.step("still initializing", async () => {
    server.inject(ROUTES.session, { latencyMs: 300 });
    const home = await makeProfile(server);
    const provider = await startProvider(home, "init");
    try {
      await waitUntil(() => server.requestCount(ROUTES.session) === 1);
      assert.deepEqual(await call(provider, "honcho_profile"), {
        error: "Honcho session is still initializing; try again shortly.",
      });
    } finally {
      await provider.shutdown();
      await removeHome(home);
    }
  });
  await t.step("lazy init fails: auth, other, no peer", async () => {
    const home = await makeProfile(server, { config: { recallMode: "tools" } });
    server.inject(ROUTES.session, { status: 401 });
    let provider = await startProvider(home, "auth");
    try {
      assert.deepEqual(await call(provider, "honcho_profile"), {
        error:
          "Honcho memory authentication failed: Honcho POST /v3/workspaces/ws/sessions failed with 401: Invalid JWT",
      });
    } finally {
      await provider.shutdown();
    }
    server.inject(ROUTES.session, { status: 503 });
    provider = await startProvider(home, "down");
    try {
      assert.deepEqual(await call(provider, "honcho_profile"), {
        error: "Honcho session could not be initialized.",
      });
      // The next call retries and works.
      assert.ok("result" in await call(provider, "honcho_profile"));
    } finally {
      await provider.shutdown();
      await removeHome(home);
    }
    const nobody = await makeProfile(server, {
      config: { recallMode: "tools", peerName: null },
    });
    provider = await startProvider(nobody, "nobody");
    try {
      const result = await call(provider, "honcho_profile");
      assert.match(
        String(result.error),
        /^\[Honcho memory status\] Honcho memory is off for this session: no user peer could be named\. Set one with 'hermes honcho peer --user <name>'\.$/,
      );
    } finally {
      await provider.shutdown();
      await removeHome(nobody);
    }
  });
  await t.step("errors during a call", async () => {
    const home = await makeProfile(server, { config: { recallMode: "tools" } });
    const provider = await startProvider(home, "errors");
    try {
      assert.ok("result" in await call(provider, "honcho_profile"));
      server.inject(ROUTES.peerSearch, { status: 401 });
      assert.deepEqual(
        await call(provider, "honcho_search", { query: "tea" }),
        {
          error:
            "Honcho memory authentication failed: Honcho POST /v3/workspaces/ws/peers/alice/search failed with 401: Invalid JWT",
        },
      );
      server.inject(ROUTES.peerSearch, { status: 500 });
      assert.deepEqual(
        await call(provider, "honcho_search", { query: "tea" }),
        {
          error:
            "Honcho honcho_search failed: Honcho POST /v3/workspaces/ws/peers/alice/search failed with 500: An unexpected error occurred",
        },
      );
    } finally {
      await provider.shutdown();
      await removeHome(home);
    }
  });
  assert.deepEqual(server.violations, []);
});

async function toolsProvider(
  server: HonchoTestServer,
  config: Record<string, unknown> = {},
  session = "s1",
): Promise<{ provider: HonchoMemoryProvider; home: string }> {
  const home = await makeProfile(server, {
    config: { recallMode: "tools", ...config },
  });
  const provider = await startProvider(home, session);
  await provider.onTurnStart(1, "hello there", {});
  return { provider, home };
}

Deno.test("honcho_profile reads, explains an empty card, and overwrites", async () => {
  await using server = await startHonchoTestServer();
  seedKnowledge(server);
  const { provider, home } = await toolsProvider(server);
  try {
    assert.deepEqual(await call(provider, "honcho_profile"), {
      result: ["Name: Alice", "Prefers tea"],
    });
    assert.deepEqual(await call(provider, "honcho_profile", { peer: "ai" }), {
      result: ["I am Hermes"],
    });
    assert.deepEqual(
      await call(provider, "honcho_profile", { peer: "carol" }),
      {
        result: "No profile facts available yet.",
        hint:
          "This is not an error.  this session has only 1 turn so far.  Try honcho_reasoning for a synthesized answer or honcho_search for raw excerpts.",
      },
    );
    await provider.onTurnStart(3, "more", {});
    assert.deepEqual(
      await call(provider, "honcho_profile", { peer: "carol" }),
      {
        result: "No profile facts available yet.",
        hint:
          "This is not an error.  the card has no facts yet (or a self-hosted Honcho older than 3.x has no peer cards).  Try honcho_reasoning for a synthesized answer or honcho_search for raw excerpts.",
      },
    );
    assert.deepEqual(
      await call(provider, "honcho_profile", {
        card: ["Name: Alice", " Drinks oolong ", ""],
      }),
      {
        result: "Peer card updated (2 facts).",
        card: ["Name: Alice", "Drinks oolong"],
      },
    );
    const put = server.requests.find((r) => r.route === ROUTES.setCard)!;
    assert.equal(put.path, "/v3/workspaces/ws/peers/hermes/card");
    assert.equal(put.query.target, "alice");
    assert.deepEqual(await call(provider, "honcho_profile"), {
      result: ["Name: Alice", "Drinks oolong"],
    });
    await provider.onTurnStart(4, "beep", {
      authorId: "bot:x",
      authorIsBot: true,
    });
    assert.match(
      String((await call(provider, "honcho_profile", { card: ["x"] })).error),
      /^Honcho memory writes are off during a bot-to-bot turn\./,
    );
  } finally {
    await provider.shutdown();
    await removeHome(home);
  }
  const unobserved = await toolsProvider(server, {
    observation: { user: { observeMe: false, observeOthers: false } },
  }, "s2");
  try {
    await unobserved.provider.onTurnStart(5, "x", {});
    const result = await call(unobserved.provider, "honcho_profile", {
      peer: "dave",
    });
    assert.equal(result.result, "No profile facts available yet.");
    const own = await call(unobserved.provider, "honcho_profile", {
      peer: "ai",
    });
    assert.ok(Array.isArray(own.result));
  } finally {
    await unobserved.provider.shutdown();
    await removeHome(unobserved.home);
  }
  const hidden = await toolsProvider(server, {
    observationMode: "unified",
    observation: { user: { observeMe: false, observeOthers: false } },
  }, "s3");
  try {
    server.state.peerCards.length = 0;
    await hidden.provider.onTurnStart(5, "x", {});
    const result = await call(hidden.provider, "honcho_profile");
    assert.match(
      String(result.hint),
      /observation is disabled for peer 'alice'/,
    );
  } finally {
    await hidden.provider.shutdown();
    await removeHome(hidden.home);
  }
  assert.deepEqual(server.violations, []);
});

Deno.test("honcho_search and honcho_context return formatted excerpts", async () => {
  await using server = await startHonchoTestServer();
  seedKnowledge(server, { session: "s1" });
  const { provider, home } = await toolsProvider(server);
  try {
    for (let turn = 1; turn <= 3; turn++) {
      await runTurn(
        provider,
        server,
        turn,
        `I want to brew green tea number ${turn}`,
      );
    }
    assert.deepEqual(await call(provider, "honcho_search", { query: "  " }), {
      error: "Missing required parameter: query",
    });
    assert.deepEqual(await call(provider, "honcho_reasoning", {}), {
      error: "Missing required parameter: query",
    });
    const hits = await call(provider, "honcho_search", { query: "green tea" });
    assert.equal(
      hits.result,
      "[alice \u00b7 s1] I want to brew green tea number 1\n\n[alice \u00b7 s1] I want to brew green tea number 2\n\n[alice \u00b7 s1] I want to brew green tea number 3",
    );
    const search = server.requests.filter((r) => r.route === ROUTES.peerSearch)
      .at(-1)!;
    assert.deepEqual(search.body, { query: "green tea", limit: 10 });
    const small = await call(provider, "honcho_search", {
      query: "green tea",
      max_tokens: 10,
    });
    assert.ok(String(small.result).length <= 200);
    assert.equal(
      (server.requests.filter((r) => r.route === ROUTES.peerSearch).at(-1)!
        .body as { limit: number }).limit,
      3,
    );
    await call(provider, "honcho_search", {
      query: "green tea",
      max_tokens: 5000,
    });
    assert.equal(
      (server.requests.filter((r) => r.route === ROUTES.peerSearch).at(-1)!
        .body as { limit: number }).limit,
      20,
    );
    assert.deepEqual(
      await call(provider, "honcho_search", { query: "zebra" }),
      {
        result: "No relevant context found.",
      },
    );
    const context = await call(provider, "honcho_context");
    assert.match(
      String(context.result),
      /^## Summary\nAlice and Hermes discussed tea\.\n\n## Representation\n## Explicit Observations\n\[[^\]]+\] Alice is planning a hiking trip to Oslo\n\n## Card\nName: Alice\nPrefers tea\n\n## Recent messages\n {2}\[hermes\] Reply to turn 1\.\n {2}\[alice\] I want to brew green tea number 2\n/,
    );
    assert.match(String(context.result), / {2}\[hermes\] Reply to turn 3\.$/);
    const empty = await call(provider, "honcho_context", {
      peer: "nobody-yet",
    });
    assert.ok(typeof empty.result === "string");
  } finally {
    await provider.shutdown();
    await removeHome(home);
  }
  assert.deepEqual(server.violations, []);
});

Deno.test("honcho_reasoning answers, honours the level, and reports backend errors", async () => {
  await using server = await startHonchoTestServer();
  server.setDialecticAnswer((req) =>
    `Answer at ${req.reasoningLevel} for ${req.targetId}`
  );
  const { provider, home } = await toolsProvider(server);
  try {
    await provider.onTurnStart(5, "q", {});
    assert.deepEqual(
      await call(provider, "honcho_reasoning", {
        query: "What does Alice drink?",
        reasoning_level: "high",
      }),
      { result: "Answer at high for alice" },
    );
    assert.equal(provider.livenessSnapshot().lastDialecticTurn, 5);
    const body = server.requests.filter((r) => r.route === ROUTES.chat).at(-1)!;
    assert.equal(body.path, "/v3/workspaces/ws/peers/hermes/chat");
    assert.deepEqual(body.body, {
      query: "What does Alice drink?",
      stream: false,
      target: "alice",
      reasoning_level: "high",
    });
    assert.deepEqual(
      await call(provider, "honcho_reasoning", {
        query: "Who are you?",
        peer: "ai",
        reasoning_level: "bogus",
      }),
      { result: "Answer at low for hermes" },
    );
    server.setDialecticAnswer(() => null);
    assert.deepEqual(
      await call(provider, "honcho_reasoning", { query: "Anything?" }),
      {
        result: "No result from Honcho.",
      },
    );
    server.inject(ROUTES.chat, { status: 500 });
    const failed = await call(provider, "honcho_reasoning", {
      query: "Anything?",
    });
    assert.match(
      String(failed.error),
      /^Honcho reasoning query failed \(Honcho POST \/v3\/workspaces\/ws\/peers\/hermes\/chat failed with 500: An unexpected error occurred\)\. This is a backend error, not an empty result: .*reasoning_level.*'timeout'/,
    );
  } finally {
    await provider.shutdown();
    await removeHome(home);
  }
  assert.deepEqual(server.violations, []);
});

Deno.test("honcho_conclude writes, lists, searches and deletes conclusions with exact guards", async () => {
  await using server = await startHonchoTestServer();
  const { provider, home } = await toolsProvider(server);
  try {
    const exactlyOne = {
      error: "Exactly one of conclusion, delete_id, or list must be provided.",
    };
    assert.deepEqual(await call(provider, "honcho_conclude", {}), exactlyOne);
    assert.deepEqual(
      await call(provider, "honcho_conclude", { conclusion: "   " }),
      exactlyOne,
    );
    assert.deepEqual(
      await call(provider, "honcho_conclude", {
        conclusion: "x",
        delete_id: "y",
      }),
      exactlyOne,
    );
    assert.deepEqual(
      await call(provider, "honcho_conclude", { conclusion: "x", list: true }),
      exactlyOne,
    );
    assert.deepEqual(
      await call(provider, "honcho_conclude", {
        conclusion: "x",
        query: "tea",
      }),
      { error: "query is only valid when list is true." },
    );
    assert.deepEqual(
      await call(provider, "honcho_conclude", {
        conclusion: "  Alice drinks oolong  ",
      }),
      { result: "Conclusion saved for user: Alice drinks oolong" },
    );
    const create = server.requests.find((r) => r.route === ROUTES.conclusions)!;
    assert.deepEqual(create.body, {
      conclusions: [{
        content: "Alice drinks oolong",
        observer_id: "hermes",
        observed_id: "alice",
        session_id: "s1",
      }],
    });
    await call(provider, "honcho_conclude", {
      conclusion: "Alice hikes",
      peer: "user",
    });
    const listed = await call(provider, "honcho_conclude", { list: true });
    const items = listed.conclusions as { id: string; content: string }[];
    assert.deepEqual(items.map((c) => c.content).sort(), [
      "Alice drinks oolong",
      "Alice hikes",
    ]);
    assert.ok(items.every((c) => Object.keys(c).join() === "id,content"));
    const queried = await call(provider, "honcho_conclude", {
      list: true,
      query: "oolong",
    });
    assert.ok(Array.isArray(queried.conclusions));
    assert.equal(server.requestCount(ROUTES.conclusionsQuery), 1);
    const id = items[0]!.id;
    assert.deepEqual(
      await call(provider, "honcho_conclude", { delete_id: id }),
      {
        result: `Conclusion ${id} deleted.`,
      },
    );
    assert.deepEqual(
      await call(provider, "honcho_conclude", { delete_id: id }),
      {
        error: `Failed to delete conclusion ${id}.`,
      },
    );
    server.inject(ROUTES.conclusions, { status: 422 });
    assert.deepEqual(
      await call(provider, "honcho_conclude", { conclusion: "x" }),
      {
        error: "Failed to save conclusion.",
      },
    );
    await provider.onTurnStart(2, "beep", {
      authorId: "bot:x",
      authorIsBot: true,
    });
    assert.match(
      String(
        (await call(provider, "honcho_conclude", { conclusion: "x" })).error,
      ),
      /^Honcho memory writes are off during a bot-to-bot turn\./,
    );
    assert.ok(
      "conclusions" in await call(provider, "honcho_conclude", { list: true }),
    );
  } finally {
    await provider.shutdown();
    await removeHome(home);
  }
  assert.deepEqual(server.violations, []);
});

Deno.test("honcho tools never reveal the API key", async () => {
  const key = "hk-super-secret-key-123456";
  await using server = await startHonchoTestServer({ apiKey: key });
  const home = await makeProfile(server, {
    config: { recallMode: "tools", apiKey: key },
  });
  const provider = await startProvider(home);
  try {
    await provider.onTurnStart(1, "x", {});
    server.inject(ROUTES.peerSearch, {
      status: 500,
      detail: `upstream rejected ${key}`,
    });
    const raw = await provider.handleToolCall(
      "honcho_search",
      { query: "tea" },
      {},
    );
    assert.equal(raw.includes(key), false, raw);
    assert.match(raw, /\[redacted\]/);
    server.inject(ROUTES.chat, {
      status: 502,
      detail: `bad gateway for ${key}`,
    });
    const reasoning = await provider.handleToolCall("honcho_reasoning", {
      query: "tea?",
    }, {});
    assert.equal(reasoning.includes(key), false, reasoning);
  } finally {
    await provider.shutdown();
    await removeHome(home);
  }
  assert.deepEqual(server.violations, []);
});
