// Pure pieces of the Honcho provider: chunking (plugins/memory/honcho/SPEC.md §9), the token budget and
// caps (plugins/memory/honcho/SPEC.md §7–§8), summary cleaning (plugins/memory/honcho/SPEC.md §7), formatting (plugins/memory/honcho/SPEC.md §7),
// dialectic levels, prompts, early exit and cadence (plugins/memory/honcho/SPEC.md §8), the
// internal-notification filter (plugins/memory/honcho/SPEC.md §9), notices (plugins/memory/honcho/SPEC.md §9), write modes (plugins/memory/honcho/SPEC.md §9) and
// checkpoint evidence (src/context/SPEC.md §5).
import assert from "node:assert/strict";
import {
  chunkMessage,
  CONTINUED_PREFIX,
} from "../../plugins/memory/honcho/session/chunking.ts";
import {
  applyTokenBudget,
  capDialecticInput,
  capDialecticResult,
  cleanHonchoSummary,
  formatBaseContext,
} from "../../plugins/memory/honcho/recall/context.ts";
import {
  COLD_PROMPT,
  effectiveCadence,
  heuristicLevel,
  passPrompt,
  PREWARM_QUERY,
  resolvePassLevel,
  runDialecticDepth,
  signalSufficient,
  WARM_PROMPT,
} from "../../plugins/memory/honcho/recall/dialectic.ts";
import { isInternalGatewayNotification } from "../../plugins/memory/honcho/session/turn_filter.ts";
import {
  classifyFailure,
  NoticeBoard,
  noticeText,
} from "../../plugins/memory/honcho/notices.ts";
import { writeModeOf } from "../../plugins/memory/honcho/outbox/outbox.ts";
import {
  evidenceItems,
  messageText,
  missingEvidence,
  turnDigest,
} from "../../plugins/memory/honcho/session/checkpoint.ts";
import { HonchoError } from "../../plugins/memory/honcho/client/errors.ts";

Deno.test("chunkMessage() keeps short text whole and cuts long text at paragraph, sentence, word, or hard", async (t) => {
  await t.step("within the limit", () => {
    assert.deepEqual(chunkMessage("", 100), [""]);
    assert.deepEqual(chunkMessage("x".repeat(100), 100), ["x".repeat(100)]);
  });
  await t.step("paragraph break first", () => {
    const text = `${"a".repeat(50)}. ${"b".repeat(10)}\n\n${"c".repeat(80)}`;
    const chunks = chunkMessage(text, 100);
    assert.equal(chunks[0], `${"a".repeat(50)}. ${"b".repeat(10)}`);
    assert.equal(chunks[1], `${CONTINUED_PREFIX}${"c".repeat(80)}`);
  });
  await t.step("sentence end, cut after the period and space", () => {
    const text = `${"a".repeat(60)}. ${"b".repeat(60)}`;
    assert.deepEqual(chunkMessage(text, 100), [
      `${"a".repeat(60)}.`,
      `${CONTINUED_PREFIX}${"b".repeat(60)}`,
    ]);
  });
  await t.step("a break earlier than 30% of the window is ignored", () => {
    const text = `aa. ${"b".repeat(40)} ${"c".repeat(80)}`;
    const chunks = chunkMessage(text, 100);
    assert.equal(chunks[0], `aa. ${"b".repeat(40)}`);
  });
  await t.step("hard cut without spaces; never over the limit", () => {
    const chunks = chunkMessage("z".repeat(250), 100);
    assert.equal(chunks[0], "z".repeat(100));
    assert.ok(chunks.every((c) => c.length <= 100));
    assert.equal(
      chunks.map((c) => c.replace(CONTINUED_PREFIX, "")).join(""),
      "z".repeat(250),
    );
  });
  await t.step("no split surrogate pairs", () => {
    const chunks = chunkMessage("😀".repeat(80), 101);
    for (const chunk of chunks) assert.ok(!/[\ud800-\udbff]$/.test(chunk));
  });
  await t.step(
    "raises a tiny limit (Hermes accepts any messageMaxChars) to 24",
    () => {
      assert.deepEqual(chunkMessage("x", 10), ["x"]);
      const chunks = chunkMessage("y".repeat(60), -5);
      assert.ok(chunks.length > 1);
      for (const chunk of chunks) assert.ok(chunk.length <= 24, chunk);
    },
  );
});

Deno.test("applyTokenBudget() cuts at contextTokens x 4 characters, at a late space, with ' …'", () => {
  assert.equal(applyTokenBudget("abc", undefined), "abc");
  assert.equal(applyTokenBudget("abc", 0), "abc");
  assert.equal(applyTokenBudget("x".repeat(40), 10), "x".repeat(40));
  assert.equal(
    applyTokenBudget("x".repeat(50), 10),
    `${"x".repeat(40)} \u2026`,
  );
  const words = "alpha beta gamma delta epsilon zeta eta theta";
  const cut = applyTokenBudget(words, 10);
  assert.equal(cut, "alpha beta gamma delta epsilon zeta eta \u2026");
  // The last space is too early (before 80 %): hard cut.
  assert.equal(
    applyTokenBudget(`ab ${"c".repeat(60)}`, 10),
    `ab ${"c".repeat(37)} \u2026`,
  );
});

Deno.test("capDialecticResult() and capDialecticInput() cut back to the last space", () => {
  assert.equal(capDialecticResult("short", 600), "short");
  assert.equal(capDialecticResult("one two three four", 10), "one two \u2026");
  assert.equal(capDialecticInput("one two three four", 10), "one two");
  assert.equal(capDialecticInput("onetwothreefour", 10), "onetwothre");
});

Deno.test("cleanHonchoSummary() drops reasoning and planning, keeps real summaries", () => {
  assert.equal(cleanHonchoSummary(null), "");
  assert.equal(
    cleanHonchoSummary("  Alice plans a trip.  "),
    "Alice plans a trip.",
  );
  assert.equal(
    cleanHonchoSummary("draft...</think> Alice plans a trip."),
    "Alice plans a trip.",
  );
  assert.equal(
    cleanHonchoSummary(
      "<thinking>x</thinking>Alice <reasoning>y</reasoning>plans.",
    ),
    "Alice plans.",
  );
  assert.equal(cleanHonchoSummary("<thought>unclosed"), "");
  assert.equal(cleanHonchoSummary("I need to summarize this."), "");
});

Deno.test("formatBaseContext() renders fixed headers in order and honours the section filter", () => {
  const data = {
    aiCard: "AI fact",
    aiRepresentation: "AI rep",
    card: "User fact",
    representation: "User rep",
    summary: "Summary",
  };
  assert.equal(
    formatBaseContext(data),
    "## Session Summary\nSummary\n\n## User Representation\nUser rep\n\n## User Peer Card\nUser fact\n\n## AI Self-Representation\nAI rep\n\n## AI Identity Card\nAI fact",
  );
  assert.equal(formatBaseContext(data, []), "");
  assert.equal(
    formatBaseContext({ summary: "  ", card: "x" }),
    "## User Peer Card\nx",
  );
});

Deno.test("resolvePassLevel() follows explicit levels, the proportional table and the heuristic", () => {
  const base = {
    dialecticDepth: 1,
    dialecticDepthLevels: undefined,
    dialecticReasoningLevel: "low" as const,
    reasoningHeuristic: true,
    reasoningLevelCap: "high" as const,
  };
  assert.equal(resolvePassLevel(0, "x".repeat(119), base), "low");
  assert.equal(resolvePassLevel(0, "x".repeat(120), base), "medium");
  assert.equal(resolvePassLevel(0, "x".repeat(400), base), "high");
  assert.equal(
    resolvePassLevel(0, "x".repeat(400), {
      ...base,
      reasoningLevelCap: "medium",
    }),
    "medium",
  );
  assert.equal(
    resolvePassLevel(0, "x".repeat(400), {
      ...base,
      reasoningHeuristic: false,
    }),
    "low",
  );
  assert.equal(resolvePassLevel(0, "", base), "low");
  const three = { ...base, dialecticDepth: 3 };
  assert.deepEqual([0, 1, 2].map((i) => resolvePassLevel(i, "hi", three)), [
    "minimal",
    "low",
    "low",
  ]);
  const explicit = {
    ...three,
    dialecticDepthLevels: [
      "high",
      "minimal",
      "max",
    ] as ("high" | "minimal" | "max")[],
  };
  assert.deepEqual(
    [0, 1, 2].map((i) => resolvePassLevel(i, "x".repeat(500), explicit)),
    ["high", "minimal", "max"],
  );
  assert.equal(
    heuristicLevel("max", "x".repeat(10), base),
    "high",
    "a base above the cap is lowered",
  );
  assert.ok(PREWARM_QUERY.length < 120);
});

Deno.test("signalSufficient() and passPrompt() follow plugins/memory/honcho/SPEC.md §8", () => {
  assert.equal(signalSufficient("x".repeat(99)), false);
  assert.equal(signalSufficient("x".repeat(200)), false);
  assert.equal(signalSufficient("x".repeat(301)), true);
  assert.equal(signalSufficient(`${"x".repeat(120)}\n## Facts`), true);
  assert.equal(signalSufficient(`${"x".repeat(120)}\n  12. item`), true);
  assert.equal(signalSufficient(`${"x".repeat(120)}\n\u2022 item`), true);
  assert.equal(passPrompt(0, { cold: true, results: [] }), COLD_PROMPT);
  assert.match(COLD_PROMPT, /^Who is this person\?.*preferences/);
  assert.doesNotMatch(COLD_PROMPT, /session/);
  assert.equal(passPrompt(0, { cold: false, results: [] }), WARM_PROMPT);
  assert.match(WARM_PROMPT, /session.*current conversation/);
  assert.equal(
    passPrompt(1, { cold: true, results: [""] }),
    COLD_PROMPT,
    "no usable prior: retry the base prompt",
  );
  assert.match(
    passPrompt(2, { cold: true, results: ["A", ""] }),
    /^Pass 1:\nA\n\nPass 2:\n\(empty\)\n\n/,
  );
  assert.match(
    passPrompt(0, { cold: true, results: [], currentRequest: "Oslo?" }),
    /^Current user request:\nOslo\?\n\nRecall the evidence/,
  );
  assert.equal(
    passPrompt(0, { cold: true, results: [], rewritten: "What gear?" }),
    "What gear?",
  );
});

Deno.test("runDialecticDepth() retries an empty pass and returns the last non-empty answer", async () => {
  const answers = ["", "second", ""];
  const prompts: string[] = [];
  const result = await runDialecticDepth({
    query: "q",
    cold: true,
    settings: {
      dialecticDepth: 3,
      dialecticDepthLevels: undefined,
      dialecticReasoningLevel: "low",
      reasoningHeuristic: true,
      reasoningLevelCap: "high",
    },
    runPass: (prompt) => {
      prompts.push(prompt);
      return Promise.resolve(answers.shift() ?? "");
    },
  });
  assert.equal(result, "second");
  assert.equal(prompts[1], COLD_PROMPT);
  assert.match(prompts[2]!, /^Pass 1:\n\(empty\)\n\nPass 2:\nsecond\n\n/);
});

Deno.test("effectiveCadence() widens by the empty streak up to 8 x cadence", () => {
  assert.deepEqual([0, 1, 2, 7, 8, 100].map((s) => effectiveCadence(1, s)), [
    1,
    2,
    3,
    8,
    8,
    8,
  ]);
  assert.equal(effectiveCadence(3, 2), 5);
  assert.equal(effectiveCadence(0, 0), 1);
});

Deno.test("isInternalGatewayNotification() matches gateway notices only at the start", () => {
  for (
    const text of [
      "[ASYNC TASK 4 COMPLETE] ok",
      "[async delegation completed]",
      "  [CONTEXT COMPACTION] summary",
      "[CONTEXT SUMMARY] x",
      "[PRIOR CONTEXT from earlier] x",
      "[Your active task list was preserved across compaction]",
      "[IMPORTANT: Background process 12 matched watch pattern 'ERROR']",
      "A background subagent has finished.",
      "The background fan-out of 3 subagents have finished.",
    ]
  ) assert.equal(isInternalGatewayNotification(text), true, text);
  for (
    const text of [
      "What does [ASYNC TASK COMPLETE] mean?",
      "my context summary please",
      "background reading has finished",
    ]
  ) assert.equal(isInternalGatewayNotification(text), false, text);
});

Deno.test("NoticeBoard shows each cause once per episode; classifyFailure() names the cause", () => {
  assert.equal(
    classifyFailure(new HonchoError("auth", "x", { status: 401 })),
    "auth",
  );
  assert.equal(
    classifyFailure(new HonchoError("rate_limited", "x", { status: 429 })),
    "rate-limited",
  );
  assert.equal(
    classifyFailure(new HonchoError("server_error", "x", { status: 503 })),
    "unreachable",
  );
  assert.equal(
    classifyFailure(new HonchoError("connection", "x")),
    "unreachable",
  );
  assert.equal(classifyFailure(new HonchoError("timeout", "x")), "unreachable");
  assert.equal(
    classifyFailure(new HonchoError("not_found", "x", { status: 404 })),
    undefined,
  );
  const board = new NoticeBoard("telegram");
  board.reportError(
    new HonchoError("server_error", "x", {
      status: 503,
      body: { detail: "Service Unavailable" },
    }),
  );
  board.reportError(new HonchoError("server_error", "x", { status: 503 }));
  assert.equal(
    board.take(),
    noticeText("unreachable", { reason: "HTTP 503: Service Unavailable" }),
  );
  assert.equal(board.take(), "");
  board.report("no-peer");
  assert.match(board.take(), /platform supplied no user id/);
  board.clear();
  assert.equal(board.active, "no-peer", "the no-peer state is permanent");
  assert.match(noticeText("no-peer"), /hermes honcho peer --user <name>/);
});

Deno.test("writeModeOf() maps every writeFrequency", () => {
  assert.deepEqual(writeModeOf(undefined), { kind: "async" });
  assert.deepEqual(writeModeOf("async"), { kind: "async" });
  assert.deepEqual(writeModeOf("Turn"), { kind: "turn" });
  assert.deepEqual(writeModeOf(3), { kind: "every", n: 3 });
  assert.deepEqual(writeModeOf("5"), { kind: "every", n: 5 });
  assert.deepEqual(writeModeOf(0), { kind: "session" });
  assert.deepEqual(writeModeOf("session"), { kind: "session" });
  assert.deepEqual(writeModeOf("whenever"), { kind: "session" });
});

Deno.test("checkpoint evidence: text parts only, digests per role, count-based missing set", () => {
  assert.equal(messageText("plain"), "plain");
  assert.equal(
    messageText([{ type: "text", text: "a" }, {
      type: "image_url",
      image_url: {},
    }]),
    "a",
  );
  assert.equal(messageText(42), "");
  const items = evidenceItems([
    { role: "system", content: "sys" },
    { role: "user", content: " hi <memory-context>x</memory-context>" },
    { role: "assistant", content: "", tool_calls: [{}] },
    { role: "assistant", content: "Sure", tool_calls: [{}] },
    { role: "tool", content: "out" },
    { role: "user", content: "s", _compressed_summary: true },
    { role: "user", content: "   " },
  ]);
  assert.deepEqual(items.map((i) => [i.role, i.text]), [["user", "hi"], [
    "assistant",
    "Sure",
  ]]);
  assert.equal(items[0]!.digest, turnDigest("user", "hi"));
  const ok = {
    role: "user" as const,
    text: "ok",
    digest: turnDigest("user", "ok"),
  };
  assert.equal(missingEvidence([ok, ok], new Map()).length, 2);
  assert.equal(missingEvidence([ok, ok], new Map([[ok.digest, 2]])).length, 0);
});

Deno.test("HonchoMemoryProvider static surface: register, config schema, saveConfig, identitySignature, backupPaths", async () => {
  const { HonchoMemoryProvider, register } = await import(
    "../../plugins/memory/honcho/mod.ts"
  );
  const registered: unknown[] = [];
  register({ registerMemoryProvider: (p) => registered.push(p) });
  assert.equal(registered.length, 1);
  assert.ok(registered[0] instanceof HonchoMemoryProvider);
  const provider = new HonchoMemoryProvider();
  assert.equal(provider.name, "honcho");
  assert.ok(
    provider.getConfigSchema().some((f) => f.key === "apiKey" && f.secret),
  );
  assert.match(provider.backupPaths()[0]!, /\.honcho$/);
  assert.equal(provider.recallStatus(), null);
  const home = await Deno.makeTempDir();
  try {
    await provider.saveConfig(
      {
        apiKey: "must-not-be-saved",
        baseUrl: "http://localhost:8000",
        recallMode: "tools",
        peerName: "ada",
      },
      home,
    );
    const saved = JSON.parse(await Deno.readTextFile(`${home}/honcho.json`));
    assert.equal(saved.apiKey, undefined);
    assert.equal(saved.baseUrl, "http://localhost:8000");
    assert.equal(saved.hosts.hermes.recallMode, "tools");
    assert.equal(saved.hosts.hermes.peerName, "ada");
    const { withHermesHome } = await import("@hermes/memory");
    const signature = await withHermesHome(
      home,
      () => provider.identitySignature(),
    );
    assert.equal(signature.peerName, "ada");
    assert.equal(signature.workspace, "hermes");
    assert.deepEqual(
      await withHermesHome(home, () => provider.identitySignature()),
      signature,
    );
    assert.equal(
      await withHermesHome(home, () => provider.isAvailable()),
      true,
    );
  } finally {
    await Deno.remove(home, { recursive: true });
  }
});
