// Replays tests/fixtures/hermes_vectors/threat_patterns.json (Hermes Agent's
// tools/threat_patterns.py on 120 texts) against scanForThreats() and
// firstThreatMessage(): every scope's findings, in order, and every message.
import assert from "node:assert/strict";
import {
  firstThreatMessage,
  INVISIBLE_CHARS,
  MAX_SCAN_CHARS,
  scanForThreats,
  THREAT_PATTERNS,
  type ThreatScope,
} from "../../src/builtin/threat_scan.ts";
import { deviationsFor, loadFixture, Tally } from "./_vectors.ts";

type Input = string | {
  concat: (string | { repeat: string; times: number })[];
};
interface Case {
  input: Input;
  scan: Record<ThreatScope, string[]>;
  first_threat_message: Record<ThreatScope, string | null>;
  first_threat_message_default_scope: string | null;
  nfkc: string | null;
  hash_order_dependent?: true;
}

function text(input: Input): string {
  if (typeof input === "string") return input;
  return input.concat.map((p) =>
    typeof p === "string" ? p : p.repeat.repeat(p.times)
  ).join("");
}

const SCOPES: ThreatScope[] = ["all", "context", "strict"];

// Python reports several distinct invisible characters in set order
// (PYTHONHASHSEED-dependent): flagged cases compare them as a set, and the
// first message only as "some invisible character".
function fuzzy(findings: string[]): string[] {
  const invisible = findings.filter((f) => f.startsWith("invisible_unicode_"))
    .sort();
  return [...invisible, ...findings.filter((f) => !invisible.includes(f))];
}

Deno.test("threat patterns: the pattern table is Hermes' (ids, scopes, order, limits)", async () => {
  const fixture = await loadFixture<Case>("threat_patterns.json");
  const patterns = fixture.patterns as { id: string; scope: string }[];
  // The *_cjk patterns are ours (deviation memory-cjk-threat-patterns).
  assert.deepEqual(
    THREAT_PATTERNS.filter((p) => !p.id.endsWith("_cjk"))
      .map((p) => ({ id: p.id, scope: p.scope })),
    patterns,
  );
  assert.equal(MAX_SCAN_CHARS, fixture.max_scan_chars);
  assert.deepEqual(
    INVISIBLE_CHARS.map((c) =>
      `U+${c.codePointAt(0)!.toString(16).toUpperCase().padStart(4, "0")}`
    ).sort(),
    fixture.invisible_chars,
  );
  assert.throws(
    () => scanForThreats("x", { scope: "bogus" as ThreatScope }),
    RangeError,
  );
});

Deno.test("threat patterns: every recorded text scans as Hermes scans it", async () => {
  const fixture = await loadFixture<Case>("threat_patterns.json");
  const deviations = await deviationsFor("threat_patterns");
  const tally = new Tally("threat_patterns");
  for (const [i, c] of fixture.cases.entries()) {
    const input = text(c.input);
    const vid = `#${i}`;
    const failures: string[] = [];
    const order = c.hash_order_dependent ? fuzzy : (f: string[]) => f;
    for (const scope of SCOPES) {
      const ours = scanForThreats(input, { scope });
      if (
        JSON.stringify(order(ours)) !== JSON.stringify(order(c.scan[scope]))
      ) {
        failures.push(`${scope}: ours ${ours} python ${c.scan[scope]}`);
      }
      const message = firstThreatMessage(input, { scope });
      const want = c.first_threat_message[scope];
      const same = c.hash_order_dependent && message?.includes("invisible")
        ? want?.includes("invisible") === true
        : message === want;
      if (!same) {
        failures.push(`${scope} message: ours ${message} python ${want}`);
      }
    }
    const def = firstThreatMessage(input);
    if (
      !c.hash_order_dependent && def !== c.first_threat_message_default_scope
    ) failures.push(`default scope: ${def}`);
    if (c.nfkc !== null && input.normalize("NFKC") !== c.nfkc) {
      failures.push("NFKC differs from Python's unicodedata");
    }
    if (deviations.has(vid)) {
      tally.deviating++;
      if (failures.length === 0) {
        tally.failures.push(`${vid}: listed but matches`);
      }
    } else if (failures.length > 0) {
      tally.failures.push(
        `${vid} ${JSON.stringify(input).slice(0, 120)}\n  ${
          failures.join("\n  ")
        }`,
      );
    } else tally.matched++;
  }
  console.log(tally.report());
  assert.equal(tally.failures.length, 0, tally.failures.join("\n"));
});
