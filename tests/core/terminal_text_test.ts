import assert from "node:assert/strict";
import {
  terminalSafe,
  terminalSafeDeep,
} from "../../src/core/terminal_text.ts";

Deno.test("terminalSafe() shows escape sequences instead of obeying them", () => {
  // Clear screen, window title (OSC … BEL), the one-byte CSI, a carriage
  // return that would overwrite the line, a backspace.
  assert.equal(
    terminalSafe("a\x1b[2J\x1b]0;owned\x07b\u009b31mc\rd\be"),
    "a\\x1b[2J\\x1b]0;owned\\x07b\\x9b31mc\\x0dd\\x08e",
  );
  assert.equal(terminalSafe("line one\n\tline two"), "line one\n\tline two");
  assert.equal(
    terminalSafe("line one\nline two", { singleLine: true }),
    "line one\\x0aline two",
  );
  assert.equal(terminalSafe("Überall ✓ 記憶"), "Überall ✓ 記憶");
});

Deno.test("terminalSafeDeep() escapes every string of a report, keys included", () => {
  const report = {
    name: "x\x1b[8m",
    rows: [{ value: "\x1b]0;t\x07", n: 3, ok: true, none: null }],
    "\x1bkey": "v",
  };
  assert.deepEqual(terminalSafeDeep(report), {
    name: "x\\x1b[8m",
    rows: [{ value: "\\x1b]0;t\\x07", n: 3, ok: true, none: null }],
    "\\x1bkey": "v",
  });
});
