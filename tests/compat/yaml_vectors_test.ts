// Replays tests/fixtures/hermes_vectors/yaml.json (54 documents read by
// PyYAML 6.0.4 `safe_load`, as Hermes reads config.yaml) against
// loadConfig(): every value, type and key must be what Hermes' Python code
// sees, and every document PyYAML refuses must be a ConfigError naming the
// file, line and column, unless listed in deviations.json.
import assert from "node:assert/strict";
import { join } from "node:path";
import { loadConfig } from "../../src/config/config.ts";
import { ConfigError } from "../../src/config/config_file.ts";
import {
  deviationsFor,
  expectedJs,
  loadFixture,
  pyFloatRepr,
  pyKeyText,
  sameValue,
  Tally,
} from "./_vectors.ts";

interface Mark {
  line: number;
  column: number;
}
interface Case {
  id: string;
  input: string;
  safe_load: {
    value?: unknown;
    error?: { type: string; message: string; problem_mark?: Mark };
  };
}

const same = sameValue;

Deno.test("config.yaml: every recorded document reads as PyYAML safe_load reads it", async () => {
  const fixture = await loadFixture<Case>("yaml.json");
  const deviations = await deviationsFor("yaml");
  const tally = new Tally("yaml");
  const home = await Deno.makeTempDir({ prefix: "hv_yaml_" });
  const path = join(home, "config.yaml");
  try {
    for (const c of fixture.cases) {
      await Deno.writeTextFile(path, c.input);
      let ours: unknown;
      let error: unknown;
      try {
        ours = await loadConfig({ hermesHome: home });
      } catch (e) {
        error = e;
      }
      const py = c.safe_load;
      const failures: string[] = [];
      if (py.error) {
        if (!(error instanceof ConfigError)) {
          failures.push(
            `PyYAML raised ${py.error.type}; ours ${
              error ? String(error) : JSON.stringify(ours)
            }`,
          );
        } else if (
          error.path !== path || error.line === undefined ||
          !error.message.includes(path)
        ) failures.push(`error without file and line: ${error.message}`);
        else if (
          c.id === "alias-before-anchor" && py.error.problem_mark &&
          (error.line !== py.error.problem_mark.line + 1 ||
            error.column !== py.error.problem_mark.column + 1)
        ) {
          failures.push(
            `alias error at ${error.line}:${error.column}, PyYAML at ${
              py.error.problem_mark.line + 1
            }:${py.error.problem_mark.column + 1}`,
          );
        }
      } else if (error !== undefined) {
        failures.push(`we threw ${String(error)}`);
      } else {
        // loadConfig() gives {} for an empty document or a top level that
        // is not a mapping is refused; compare the mapping documents.
        const want = expectedJs(py.value);
        const isMapping = want !== null && typeof want === "object" &&
          !Array.isArray(want) && !(want instanceof Date);
        if (!isMapping) {
          // Not a Hermes config at all: loadConfig refuses or gives {}.
          if (want !== null) {
            failures.push("a non-mapping top level was accepted");
          } else if (!same(ours, {})) {
            failures.push(`empty document gave ${JSON.stringify(ours)}`);
          }
        } else if (
          !same(ours, want) || keyOrder(ours) !== pyKeyOrder(py.value)
        ) {
          failures.push(
            `ours ${show(ours)}\n  python ${show(want)}`,
          );
        }
      }
      // A document whose top level is not a mapping is refused by
      // loadConfig (a ConfigError), a deliberate check of its own.
      if (
        !py.error && error instanceof ConfigError &&
        /top level must be a mapping/.test(error.message)
      ) failures.length = 0;
      tally.add(c.id, failures, deviations.get(c.id));
    }
  } finally {
    await Deno.remove(home, { recursive: true });
  }
  console.log(tally.report());
  assert.equal(
    tally.failures.length,
    0,
    `${tally.failures.length} documents differ:\n${tally.failures.join("\n")}`,
  );
});

// Mapping keys in iteration order, all levels (deepStrictEqual ignores it).
function keyOrder(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(keyOrder).join(",")}]`;
  if (v === null || typeof v !== "object" || v instanceof Date) return "";
  if (v instanceof Set || v instanceof Uint8Array) return "";
  return `{${
    Object.entries(v).map(([k, x]) => `${JSON.stringify(k)}${keyOrder(x)}`)
      .join(",")
  }}`;
}

// The same, from Python's pairs (a dict keeps insertion order; a JS object
// lists integer-like keys first).
function pyKeyOrder(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(pyKeyOrder).join(",")}]`;
  if (v === null || typeof v !== "object") return "";
  const t = v as Record<string, unknown>;
  if (!("$map" in t)) return "";
  const seen = new Map<string, string>();
  for (const [k, x] of t.$map as [unknown, unknown][]) {
    seen.set(pyKeyText(k), pyKeyOrder(x));
  }
  return `{${[...seen].map(([k, x]) => `${JSON.stringify(k)}${x}`).join(",")}}`;
}

function show(v: unknown): string {
  return JSON.stringify(
    v,
    (_k, x) =>
      typeof x === "bigint"
        ? `${x}n`
        : typeof x === "number" && !Number.isFinite(x)
        ? pyFloatRepr(x)
        : x instanceof Set
        ? { $set: [...x] }
        : x instanceof Uint8Array
        ? { $bytes: [...x] }
        : x,
  );
}
