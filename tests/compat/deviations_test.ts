// The "Differences from Hermes Agent" table of docs/compatibility.md and the machine-readable
// tests/fixtures/hermes_vectors/deviations.json are one list: this test
// fails when they disagree, when an entry lacks a field, or when an entry
// names a harness no replay test reads.
import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { type Deviation, loadDeviations } from "./_vectors.ts";

const COMPAT_DOC = fileURLToPath(
  new URL("../../docs/compatibility.md", import.meta.url),
);
const START = "<!-- deviations:start -->";
const END = "<!-- deviations:end -->";
const HARNESSES = new Set([
  "memory_tool",
  "threat_patterns",
  "honcho_config",
  "session_names",
  "dotenv",
  "yaml",
  "yaml_writeback",
  "dotenv_writeback",
  "fence",
]);

/** The table rows for the deviations, as cell arrays. */
export function deviationRows(deviations: Deviation[]): string[][] {
  return deviations.map((d) => [
    `\`${d.id}\``,
    d.what,
    d.python,
    d.ours,
    d.why,
    d.safer,
  ]);
}

/** The table as Markdown (what goes between the markers). */
export function deviationTable(deviations: Deviation[]): string {
  const esc = (cell: string) => cell.replaceAll("|", "\\|");
  return [
    "| Deviation | What | Hermes Agent | Here | Why | Safer |",
    "| --- | --- | --- | --- | --- | --- |",
    ...deviationRows(deviations).map((row) =>
      `| ${row.map(esc).join(" | ")} |`
    ),
  ].join("\n");
}

function cells(line: string): string[] {
  return line.trim().replace(/^\||\|$/g, "").split(/(?<!\\)\|/).map((c) =>
    c.trim().replaceAll("\\|", "|")
  );
}

Deno.test("the deviation table of docs/compatibility.md is deviations.json, row for row", async () => {
  const deviations = await loadDeviations();
  const text = await Deno.readTextFile(COMPAT_DOC);
  const start = text.indexOf(START);
  const end = text.indexOf(END);
  assert.ok(
    start >= 0 && end > start,
    `docs/compatibility.md lacks ${START} … ${END}`,
  );
  const rows = text.slice(start + START.length, end).trim().split("\n")
    .slice(2).map(cells);
  assert.deepEqual(
    rows,
    deviationRows(deviations),
    `regenerate the table with:\n${deviationTable(deviations)}`,
  );
});

Deno.test("every deviation is complete and belongs to a replayed harness", async () => {
  const ids = new Set<string>();
  for (const d of await loadDeviations()) {
    assert.ok(!ids.has(d.id), `duplicate id ${d.id}`);
    ids.add(d.id);
    for (const field of ["what", "python", "ours", "why", "safer"] as const) {
      assert.ok(d[field].trim().length > 0, `${d.id}: empty ${field}`);
    }
    for (const h of [d.harness].flat()) {
      assert.ok(HARNESSES.has(h), `${d.id}: unknown harness ${h}`);
    }
  }
});

if (import.meta.main) console.log(deviationTable(await loadDeviations()));
