// Replays tests/fixtures/hermes_vectors/fence.json (Hermes Agent 0.19.0's
// agent/memory_manager.py: sanitize_context, build_memory_context_block and
// the StreamingContextScrubber) against src/context/context_fence.ts.
import assert from "node:assert/strict";
import {
  buildMemoryContextBlock,
  sanitizeContext,
  StreamingContextScrubber,
} from "../../src/context/context_fence.ts";
import { setLogger } from "../../src/core/log.ts";
import { deviationsFor, loadFixture, Tally } from "./_vectors.ts";

interface Case {
  id: string;
  input?: string;
  chunks?: string[];
  sanitize_context?: { value: string };
  build_memory_context_block?: { value: string };
  scrubbed?: { value: string[] };
}

Deno.test("the <memory-context> fence: every recorded text and stream is cleaned as Hermes 0.19.0 cleans it", async () => {
  const fixture = await loadFixture<Case>("fence.json");
  const deviations = await deviationsFor("fence");
  const tally = new Tally("fence");
  const previous = setLogger({ log: () => {} });
  try {
    for (const c of fixture.cases) {
      const failures: string[] = [];
      let byRule = false;
      const check = (what: string, ours: unknown, python: unknown) => {
        if (JSON.stringify(ours) !== JSON.stringify(python)) {
          failures.push(
            `${what}: ours ${JSON.stringify(ours)} python ${
              JSON.stringify(python)
            }`,
          );
        }
      };
      if (c.input !== undefined) {
        check(
          "sanitize_context",
          sanitizeContext(c.input),
          c.sanitize_context!.value,
        );
        check(
          "build_memory_context_block",
          buildMemoryContextBlock(c.input),
          c.build_memory_context_block!.value,
        );
      } else {
        const scrubber = new StreamingContextScrubber();
        const ours = [
          ...c.chunks!.map((chunk) => scrubber.feed(chunk)),
          scrubber.flush(),
        ];
        // Rule "fence-stream-chunking": the same text, maybe released at
        // other chunks.
        const python = c.scrubbed!.value;
        byRule = JSON.stringify(ours) !== JSON.stringify(python);
        check("stream", ours.join(""), python.join(""));
      }
      tally.add(c.id, failures, deviations.get(c.id), byRule);
    }
  } finally {
    setLogger(previous);
  }
  console.log(tally.report());
  assert.equal(tally.failures.length, 0, tally.failures.join("\n"));
});
