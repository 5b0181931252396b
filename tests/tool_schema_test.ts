import assert from "node:assert/strict";
import {
  normalizeToolSchema,
  RESERVED_CORE_TOOL_NAMES,
  toolError,
} from "../src/tool_schema.ts";

Deno.test("normalizeToolSchema() returns bare schemas unchanged and unwraps the OpenAI form", () => {
  const bare = {
    name: "notes_search",
    description: "d",
    parameters: { type: "object" },
  };
  assert.equal(normalizeToolSchema(bare), bare);
  assert.equal(normalizeToolSchema({ type: "function", function: bare }), bare);
});

Deno.test("normalizeToolSchema() rejects non-objects and nameless schemas", () => {
  for (
    const bad of [
      null,
      undefined,
      "notes",
      42,
      [{ name: "x" }],
      {},
      { name: "" },
      { name: 7 },
      { type: "function", function: { description: "no name" } },
      { type: "function", function: "x" },
    ]
  ) {
    assert.equal(normalizeToolSchema(bad), null, JSON.stringify(bad));
  }
});

Deno.test('toolError() builds the Hermes {"error": …} JSON string', () => {
  assert.equal(
    toolError("No memory provider handles tool 'x'"),
    '{"error": "No memory provider handles tool \'x\'"}',
  );
  assert.deepEqual(JSON.parse(toolError('quote " and \\ newline\n')), {
    error: 'quote " and \\ newline\n',
  });
});

Deno.test("RESERVED_CORE_TOOL_NAMES covers the host's core tools", () => {
  for (
    const name of [
      "clarify",
      "delegate_task",
      "memory",
      "terminal",
      "web_search",
      "read_file",
      "todo",
      "session_search",
      "execute_code",
      "cronjob",
      "send_message",
    ]
  ) {
    assert.ok(RESERVED_CORE_TOOL_NAMES.has(name), name);
  }
  assert.equal(RESERVED_CORE_TOOL_NAMES.has("honcho_profile"), false);
});
