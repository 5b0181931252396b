// The Honcho test server closes finished connections: a long run (20,000
// requests, some of them dropped by faults) keeps the server's own socket
// count flat (/proc/self/fd needs --allow-all, which the suite does not
// grant; the sockets are the descriptors that leaked). Before the fix every
// finished connection stayed open (3 descriptors per request: the relay
// waited for an inner server that waits for the client), and long runs
// died with "Too many open files".
import assert from "node:assert/strict";
import { startHonchoTestServer } from "../honcho_server.ts";

const REQUESTS = 20_000;
const CONCURRENCY = 8;
const ROUTE = "POST /v3/workspaces";

Deno.test("the Honcho test server keeps its open sockets flat over 20,000 requests", async () => {
  await using server = await startHonchoTestServer();
  const one = async (i: number): Promise<void> => {
    try {
      const response = await fetch(`${server.url}/v3/workspaces`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ id: `w${i % 7}` }),
      });
      await response.body?.cancel();
    } catch {
      // A dropped connection (the faults below).
    }
  };
  for (let i = 0; i < 50; i++) await one(i);
  const before = server.openConnections();
  let next = 50;
  const samples: number[] = [];
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < REQUESTS) {
        const i = next++;
        if (i % 1000 === 0) {
          server.inject(ROUTE, { drop: true });
          server.inject(ROUTE, { dropAfterHandling: true });
          samples.push(server.openConnections());
        }
        await one(i);
      }
    }),
  );
  await new Promise((resolve) => setTimeout(resolve, 200));
  const after = server.openConnections();
  assert.equal(server.requestCount(ROUTE) >= REQUESTS - 100, true);
  assert.ok(
    after - before < 40,
    `open files grew from ${before} to ${after} (samples ${
      samples.join(", ")
    })`,
  );
  assert.ok(
    Math.max(...samples) - before < 40,
    `open sockets peaked at ${Math.max(...samples)} (from ${before})`,
  );
  assert.ok(
    server.openConnections() <= 2 * CONCURRENCY,
    `${server.openConnections()} sockets still open`,
  );
});
