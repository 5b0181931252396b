// The lines of the process transport: how a message becomes one, and the
// one line reader both ends use.
import assert from "node:assert/strict";
import { encodeMessage, readLines } from "../../src/sandbox/worker_protocol.ts";

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

Deno.test("encodeMessage writes what JSON writes and refuses, at any depth, what a structured clone refuses", () => {
  /** `levels` arrays deep around `inner`. */
  const nest = (inner: unknown, levels: number): unknown => {
    let value = inner;
    for (let i = 0; i < levels; i++) value = [value];
    return value;
  };
  const inherited = Object.create({ method: () => 1 }) as Record<
    string,
    unknown
  >;
  inherited.own = "kept";
  const plain = [
    { t: "call", args: ["text", 1.5, true, null, { sessionId: "s" }] },
    { skipped: undefined, holes: [1, , 3], date: new Date(0) },
    { custom: { toJSON: () => ({ as: "json" }) }, inherited },
    { deep: nest("bottom", 200) },
  ];
  for (const message of plain) {
    assert.equal(encodeMessage(message), JSON.stringify(message));
  }
  const refused: [unknown, string][] = [
    [{ args: [() => 1] }, "function"],
    [{ args: [{ options: { onDone: Symbol("x") } }] }, "symbol"],
    [{ value: 10n }, "bigint"],
    [{ deep: nest(() => 1, 200) }, "function"],
    [{ custom: { toJSON: () => ({ f: () => 1 }) } }, "function"],
  ];
  for (const [message, type] of refused) {
    assert.throws(() => encodeMessage(message), {
      name: "TypeError",
      message: `a ${type} could not be cloned`,
    });
  }
  const cycle: Record<string, unknown> = {};
  cycle.self = cycle;
  assert.throws(() => encodeMessage({ cycle }), TypeError);
});
