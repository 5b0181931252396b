import assert from "node:assert/strict";
import { pythonJsonDumps } from "../../src/_util/python_json.ts";

// Expected strings were produced by CPython's json.dumps(..., ensure_ascii=False).
Deno.test("pythonJsonDumps() matches Python's spacing, escapes and literal non-ASCII", () => {
  const value = {
    success: false,
    error: 'x"y\\z\n\t\x01\x7f é 🧠',
    n: [1, 2.5, 1e-05, 123456789.123, -0.001, 0.1 + 0.2],
    o: {},
    a: [],
    b: true,
    c: null,
    d: { "1": "a", "2": [{}] },
  };
  assert.equal(
    pythonJsonDumps(value),
    '{"success": false, "error": "x\\"y\\\\z\\n\\t\\u0001\x7f é 🧠", "n": [1, 2.5, 1e-05, 123456789.123, -0.001, 0.30000000000000004], "o": {}, "a": [], "b": true, "c": null, "d": {"1": "a", "2": [{}]}}',
  );
});

Deno.test("pythonJsonDumps() keeps insertion order of keys and drops undefined members", () => {
  assert.equal(
    pythonJsonDumps({ error: "e", success: false, skipped: undefined }),
    '{"error": "e", "success": false}',
  );
  assert.equal(pythonJsonDumps([undefined]), "[null]");
  assert.equal(
    pythonJsonDumps(new Map<string, unknown>([["b", 1], ["a", 2]])),
    '{"b": 1, "a": 2}',
  );
});

Deno.test("pythonJsonDumps() prints floats like Python's repr", () => {
  assert.equal(pythonJsonDumps(1.23e-18), "1.23e-18");
  assert.equal(pythonJsonDumps(2.5e-300), "2.5e-300");
  assert.equal(pythonJsonDumps(0.0001), "0.0001");
  assert.equal(pythonJsonDumps(1234.5), "1234.5");
  assert.equal(pythonJsonDumps(NaN), "NaN");
  assert.equal(pythonJsonDumps(-Infinity), "-Infinity");
  assert.equal(pythonJsonDumps(2 ** 60), "1152921504606846976");
});

Deno.test("pythonJsonDumps() escapes non-ASCII with ensureAscii like Python's default", () => {
  assert.equal(
    pythonJsonDumps("é🧠\x7f", { ensureAscii: true }),
    '"\\u00e9\\ud83e\\udde0\\u007f"',
  );
});

Deno.test("pythonJsonDumps() rejects circular values and functions", () => {
  const loop: Record<string, unknown> = {};
  loop.self = loop;
  assert.throws(() => pythonJsonDumps(loop), TypeError);
  assert.throws(() => pythonJsonDumps({ f: () => 1 }), TypeError);
  // A shared (non-circular) reference is fine.
  const shared = { a: 1 };
  assert.equal(pythonJsonDumps([shared, shared]), '[{"a": 1}, {"a": 1}]');
});
