// Replays tests/fixtures/hermes_vectors/writeback.json: files the project's
// writers (saveConfig, saveEnvValue) produced, and how Hermes' Python
// readers (PyYAML safe_load, load_hermes_dotenv) read them back. The test
// fails when a writer no longer writes exactly the recorded bytes (then
// Python's recorded reading would not apply: re-record, see
// record/README.md), and when a recorded reading is not what was meant to
// be written, unless listed in deviations.json.
import assert from "node:assert/strict";
import {
  decodeBytes,
  deviationsFor,
  type EncodedBytes,
  expectedJs,
  loadFixture,
  sameValue,
  Tally,
} from "./_vectors.ts";
import {
  envSpecs,
  writeEnv,
  writeYaml,
  yamlSpecs,
} from "../fixtures/hermes_vectors/record/gen_writeback.ts";

interface YamlVector {
  id: string;
  mode: "fresh" | "merge";
  original: string | null;
  intended: unknown;
  written: EncodedBytes;
  python_reread: { value?: unknown; error?: unknown };
  python_original?: { value?: unknown; error?: unknown };
}
interface EnvVector {
  id: string;
  existing: EncodedBytes;
  name: string;
  value: string;
  error?: string;
  written: EncodedBytes;
  python_reread?: { set: Record<string, string>; exception?: unknown };
  python_original?: { set: Record<string, string>; exception?: unknown };
}

// The generator's JSON form of JS values back to JS.
function untag(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(untag);
  if (v === null || typeof v !== "object") return v;
  const t = v as Record<string, unknown>;
  if ("$num" in t) return Number(t.$num);
  if ("$date" in t) return new Date(t.$date as string);
  if ("$obj" in t) {
    return Object.fromEntries(
      (t.$obj as [string, unknown][]).map(([k, x]) => [k, untag(x)]),
    );
  }
  return v;
}

function same(a: unknown, b: unknown): boolean {
  return sameValue(a, b) &&
    JSON.stringify(a, order) === JSON.stringify(b, order);
}
// Keys in iteration order matter; NaN compares as text.
function order(_k: string, v: unknown): unknown {
  if (typeof v === "bigint") return `${v}n`;
  if (v instanceof Set) return { $set: [...v] };
  if (v instanceof Uint8Array) return { $bytes: [...v] };
  return typeof v === "number" && !Number.isFinite(v) ? String(v) : v;
}

function bytesEqual(a: Uint8Array | null, b: Uint8Array | null): boolean {
  if (a === null || b === null) return a === b;
  return a.length === b.length && a.every((x, i) => x === b[i]);
}

Deno.test("config.yaml written by saveConfig reads back in PyYAML as what was written", async () => {
  const fixture = await loadFixture<never>("writeback.json") as unknown as {
    yaml: YamlVector[];
  };
  const deviations = await deviationsFor("yaml_writeback");
  const specs = new Map((await yamlSpecs()).map((s) => [s.id, s]));
  const tally = new Tally("yaml_writeback");
  for (const v of fixture.yaml) {
    const spec = specs.get(v.id);
    const failures: string[] = [];
    if (spec === undefined) {
      tally.failures.push(`${v.id}: no longer generated (re-record)`);
      continue;
    }
    const now = await writeYaml(spec);
    if (!now || !bytesEqual(now.written, decodeBytes(v.written))) {
      tally.failures.push(
        `${v.id}: saveConfig now writes different bytes; re-record (record/README.md):\n  ${
          JSON.stringify(now && new TextDecoder().decode(now.written))
        }\n  was ${JSON.stringify(v.written)}`,
      );
      continue;
    }
    if (v.python_reread.error) {
      failures.push(
        `PyYAML cannot read it: ${JSON.stringify(v.python_reread.error)}`,
      );
    } else if (!same(expectedJs(v.python_reread.value), untag(v.intended))) {
      failures.push(
        `PyYAML reads ${
          JSON.stringify(expectedJs(v.python_reread.value), order)
        }, meant ${JSON.stringify(untag(v.intended), order)}`,
      );
    }
    if (
      v.mode === "fresh" && v.python_original &&
      JSON.stringify(v.python_reread) !== JSON.stringify(v.python_original)
    ) {
      failures.push(
        `Python type/value changed: ${JSON.stringify(v.python_original)} -> ${
          JSON.stringify(v.python_reread)
        }`,
      );
    }
    tally.add(v.id, failures, deviations.get(v.id));
  }
  console.log(tally.report());
  assert.equal(tally.failures.length, 0, tally.failures.join("\n"));
});

Deno.test(".env written by saveEnvValue reads back in Hermes' loader as what was written", async () => {
  const fixture = await loadFixture<never>("writeback.json") as unknown as {
    env: EnvVector[];
  };
  const deviations = await deviationsFor("dotenv_writeback");
  const specs = new Map((await envSpecs()).map((s) => [s.id, s]));
  const tally = new Tally("dotenv_writeback");
  for (const v of fixture.env) {
    const spec = specs.get(v.id);
    if (spec === undefined) {
      tally.failures.push(`${v.id}: no longer generated (re-record)`);
      continue;
    }
    const now = await writeEnv(spec);
    if (
      now.error !== v.error ||
      !bytesEqual(now.written, decodeBytes(v.written))
    ) {
      tally.failures.push(
        `${v.id}: saveEnvValue now ${
          now.error ?? JSON.stringify(new TextDecoder().decode(now.written!))
        }; recorded ${v.error ?? JSON.stringify(v.written)} (re-record)`,
      );
      continue;
    }
    const failures: string[] = [];
    if (v.error === undefined) {
      const read = v.python_reread!.set;
      const meant = v.value.replace(/[\r\n]/g, "");
      if (read[v.name] !== meant) {
        failures.push(
          `Hermes reads ${v.name}=${JSON.stringify(read[v.name])}, meant ${
            JSON.stringify(meant)
          }`,
        );
      }
      if (v.python_original) {
        // Every other variable reads as before, except ones that refer to
        // the changed one (`${NAME}`), which follow it as they should.
        const text = new TextDecoder().decode(decodeBytes(v.existing)!);
        for (
          const key of new Set([
            ...Object.keys(read),
            ...Object.keys(v.python_original.set),
          ])
        ) {
          if (key === v.name) continue;
          if (
            text.includes(`\${${v.name}}`) || text.includes(`\${${v.name}:-`)
          ) {
            continue;
          }
          if (read[key] !== v.python_original.set[key]) {
            failures.push(
              `${key}: ${JSON.stringify(v.python_original.set[key])} -> ${
                JSON.stringify(read[key])
              }`,
            );
          }
        }
      }
    }
    tally.add(v.id, failures, deviations.get(v.id));
  }
  console.log(tally.report());
  assert.equal(tally.failures.length, 0, tally.failures.join("\n"));
});
