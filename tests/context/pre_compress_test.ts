import assert from "node:assert/strict";
import {
  COMPRESSED_SUMMARY_MARKER,
  normalizePreCompressEvidence,
} from "../../src/context/pre_compress.ts";

Deno.test("normalizePreCompressEvidence() keeps only user and assistant messages, in order", () => {
  const out = normalizePreCompressEvidence([
    { role: "system", content: "sys" },
    { role: "user", content: "u1" },
    { role: "tool", tool_call_id: "t", content: "tool out" },
    { role: "assistant", content: "a1" },
    { role: "developer", content: "dev" },
    { role: "user", content: "u2" },
  ]);
  assert.deepEqual(out, [
    { role: "user", content: "u1" },
    { role: "assistant", content: "a1" },
    { role: "user", content: "u2" },
  ]);
});

Deno.test("normalizePreCompressEvidence() drops rows that are not objects", () => {
  const out = normalizePreCompressEvidence([
    null,
    undefined,
    "user: hi",
    42,
    ["user", "hi"],
    { role: "user", content: "kept" },
  ]);
  assert.deepEqual(out, [{ role: "user", content: "kept" }]);
  assert.deepEqual(
    normalizePreCompressEvidence("nope" as unknown as unknown[]),
    [],
  );
});

Deno.test("normalizePreCompressEvidence() strips tool_calls and keeps the prose", async (t) => {
  await t.step("assistant prose with tool calls keeps the prose", () => {
    const out = normalizePreCompressEvidence([
      {
        role: "assistant",
        content: "Let me look.",
        tool_calls: [{ id: "c1", function: { name: "x" } }],
        reasoning: "r",
      },
    ]);
    assert.deepEqual(out, [{
      role: "assistant",
      content: "Let me look.",
      reasoning: "r",
    }]);
  });
  await t.step(
    "empty, whitespace or null content with tool calls is dropped",
    () => {
      const out = normalizePreCompressEvidence([
        { role: "assistant", content: "", tool_calls: [{ id: "1" }] },
        { role: "assistant", content: "  \n", tool_calls: [{ id: "2" }] },
        { role: "assistant", content: null, tool_calls: [{ id: "3" }] },
        { role: "assistant", tool_calls: [{ id: "4" }] },
        { role: "assistant", content: [], tool_calls: [{ id: "5" }] },
      ]);
      assert.deepEqual(out, []);
    },
  );
  await t.step("structured content with tool calls is kept", () => {
    const parts = [{ type: "text", text: "see" }];
    const out = normalizePreCompressEvidence([
      { role: "assistant", content: parts, tool_calls: [{ id: "1" }] },
    ]);
    assert.deepEqual(out, [{ role: "assistant", content: parts }]);
  });
  await t.step(
    "an empty tool_calls list is removed but does not drop the message",
    () => {
      const out = normalizePreCompressEvidence([
        { role: "assistant", content: "plain", tool_calls: [] },
      ]);
      assert.deepEqual(out, [{ role: "assistant", content: "plain" }]);
    },
  );
});

Deno.test("normalizePreCompressEvidence() drops messages flagged _compressed_summary", () => {
  assert.equal(COMPRESSED_SUMMARY_MARKER, "_compressed_summary");
  const out = normalizePreCompressEvidence([
    { role: "user", content: "summary", _compressed_summary: true },
    { role: "assistant", content: "summary2", _compressed_summary: 1 },
    { role: "user", content: "kept-false", _compressed_summary: false },
    { role: "user", content: "kept-empty", _compressed_summary: "" },
    { role: "user", content: "kept-list", _compressed_summary: [] },
    { role: "user", content: "dropped-str", _compressed_summary: "yes" },
  ]);
  assert.deepEqual(out.map((m) => m.content), [
    "kept-false",
    "kept-empty",
    "kept-list",
  ]);
});

Deno.test("normalizePreCompressEvidence() never mutates its input", () => {
  const call = { id: "c1", function: { name: "x" } };
  const input = [
    { role: "system", content: "s" },
    { role: "assistant", content: "prose", tool_calls: [call] },
    { role: "user", content: "u" },
  ];
  const snapshot = structuredClone(input);
  const frozen = input.map((m) => Object.freeze(m));
  Object.freeze(frozen);
  const out = normalizePreCompressEvidence(frozen);
  assert.deepEqual(input, snapshot);
  assert.equal(out.length, 2);
  // The result holds copies: changing them leaves the input alone.
  out[1]!.content = "changed";
  assert.equal(input[2]!.content, "u");
  assert.notEqual(out[0], input[1]);
});
