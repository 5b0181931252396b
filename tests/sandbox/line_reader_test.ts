// The one line reader both ends of the process transport use.
import assert from "node:assert/strict";
import { readLines } from "../../src/sandbox/worker_protocol.ts";

/** Feeds `chunks` to readLines (each from one reused buffer, as the bootstrap reads). */
async function lines(chunks: Uint8Array[], limit?: number, stopAt?: string) {
  const seen: string[] = [];
  const buffer = new Uint8Array(64);
  let i = 0;
  const end = await readLines(() => {
    const chunk = chunks[i++];
    if (chunk === undefined) return Promise.resolve(null);
    buffer.set(chunk);
    return Promise.resolve(buffer.subarray(0, chunk.length));
  }, (line) => {
    seen.push(line);
    return line !== stopAt;
  }, limit);
  return { seen, end };
}

const bytes = (text: string) => new TextEncoder().encode(text);

Deno.test("readLines splits lines across chunks, keeps a character split between chunks, and stops when told", async () => {
  const euro = bytes("€"); // three bytes
  assert.deepEqual(
    await lines([
      bytes("a\nb"),
      bytes("c\n\nd"),
      euro.subarray(0, 1),
      euro.subarray(1),
      bytes("\nrest"),
    ]),
    { seen: ["a", "bc", "", "d€"], end: "end" },
  );
  assert.deepEqual(await lines([bytes("x\ny\nz\n")], undefined, "y"), {
    seen: ["x", "y"],
    end: "stopped",
  });
});

Deno.test("readLines ends at a line over its limit, terminated or not, and takes one at the limit", async () => {
  assert.deepEqual(await lines([bytes("12345\n")], 5), {
    seen: ["12345"],
    end: "end",
  });
  assert.deepEqual(await lines([bytes("ok\n123"), bytes("456\n")], 5), {
    seen: ["ok"],
    end: "overlong",
  });
  assert.deepEqual(await lines([bytes("123"), bytes("456")], 5), {
    seen: [],
    end: "overlong",
  });
});
