import assert from "node:assert/strict";
import {
  codePointLength,
  decodeMemoryBytes,
  entriesSize,
  formatShortUsage,
  formatThousands,
  formatUsage,
  parseEntries,
  previewEntry,
  pythonStrip,
  renderMemoryBlock,
  serializeEntries,
  splitEntries,
  usagePercent,
} from "../../src/builtin/memory_format.ts";

const RULE = "═".repeat(46);

Deno.test("pythonStrip() trims Python whitespace but keeps U+FEFF and U+200B", () => {
  assert.equal(pythonStrip("\u3000\u0085\x1c note \u2029"), "note");
  assert.equal(pythonStrip("\ufeffnote\ufeff"), "\ufeffnote\ufeff");
  assert.equal(pythonStrip("\u200bnote"), "\u200bnote");
  assert.equal(pythonStrip(" \t\n "), "");
});

Deno.test("splitEntries() splits only on the full delimiter and keeps a bare §", () => {
  assert.deepEqual(splitEntries("Uses § in paths\n§\n  second  \n§\n\n§\n"), [
    "Uses § in paths",
    "second",
  ]);
  assert.deepEqual(splitEntries("  \n\t"), []);
  // CRLF is not normalised: the file reads as one merged entry.
  assert.deepEqual(splitEntries("a\r\n§\r\nb"), ["a\r\n§\r\nb"]);
});

Deno.test("parseEntries() collapses exact duplicates keeping the first occurrence", () => {
  assert.deepEqual(parseEntries("b\n§\na\n§\nb\n§\n a "), ["b", "a"]);
});

Deno.test("serializeEntries() joins with the delimiter and writes nothing for no entries", () => {
  assert.equal(serializeEntries(["a", "b\nc"]), "a\n§\nb\nc");
  assert.equal(serializeEntries([]), "");
});

Deno.test("entriesSize() counts code points plus 3 per gap", () => {
  assert.equal(entriesSize([]), 0);
  assert.equal(entriesSize(["🧠🧠"]), 2);
  assert.equal(entriesSize(["🧠", "ab"]), 6);
  assert.equal(
    entriesSize(["a", "b"]),
    codePointLength(serializeEntries(["a", "b"])),
  );
});

Deno.test("usagePercent() truncates like Python and caps at 100", () => {
  assert.equal(usagePercent(29, 100), 28);
  assert.equal(usagePercent(1364, 2200), 62);
  assert.equal(usagePercent(2200, 2200), 100);
  assert.equal(usagePercent(9999, 2200), 100);
  assert.equal(usagePercent(5, 0), 0);
});

Deno.test("formatUsage() groups thousands and uses an em dash", () => {
  assert.equal(formatUsage(1364, 2200), "62% — 1,364/2,200 chars");
  assert.equal(formatShortUsage(999, 1000), "999/1,000");
  assert.equal(formatThousands(1234567), "1,234,567");
  assert.equal(formatThousands(0), "0");
});

Deno.test("previewEntry() cuts at 80 code points and appends ...", () => {
  const exact = "🧠".repeat(80);
  assert.equal(previewEntry(exact), exact);
  assert.equal(previewEntry(exact + "x"), exact + "...");
});

Deno.test("renderMemoryBlock() renders rules, header with usage, and entries", async (t) => {
  await t.step("memory block", () => {
    assert.equal(
      renderMemoryBlock("memory", ["a", "b"], 2200),
      `${RULE}\nMEMORY (your personal notes) [0% — 5/2,200 chars]\n${RULE}\na\n§\nb`,
    );
  });
  await t.step("user block", () => {
    assert.equal(
      renderMemoryBlock("user", ["x".repeat(1364)], 2200).split("\n")[1],
      "USER PROFILE (who the user is) [62% — 1,364/2,200 chars]",
    );
  });
  await t.step("empty store renders nothing", () => {
    assert.equal(renderMemoryBlock("memory", [], 2200), "");
  });
  await t.step("over budget has the plain header, as in Hermes 0.19.0", () => {
    assert.equal(
      renderMemoryBlock("memory", ["x".repeat(120)], 100).split("\n")[1],
      "MEMORY (your personal notes) [100% — 120/100 chars]",
    );
  });
  await t.step("far over budget keeps head and tail around a marker", () => {
    const body = "h".repeat(3000) + "t".repeat(2000);
    const block = renderMemoryBlock("memory", [body], 1000);
    const shown = block.split("\n").slice(3).join("\n");
    // cap = max(2000, 4000) = 4000 → head 2800, tail 800, omitted 1400
    assert.equal(
      shown,
      "h".repeat(2800) +
        "\n\n[... 1,400 chars truncated — memory over budget (5,000/1,000); consolidate via memory(action=remove/replace) ...]\n\n" +
        "t".repeat(800),
    );
  });
});

Deno.test("decodeMemoryBytes() reads like Python's read_text: BOM kept, universal newlines, invalid UTF-8 rejected", () => {
  assert.equal(
    decodeMemoryBytes(new TextEncoder().encode("\ufeffa\n§\nb")),
    "\ufeffa\n§\nb",
  );
  assert.equal(
    decodeMemoryBytes(new TextEncoder().encode("a\r\n§\r\nb\rc")),
    "a\n§\nb\nc",
  );
  assert.throws(
    () => decodeMemoryBytes(new Uint8Array([0x61, 0xc3, 0x28])),
    TypeError,
  );
});
