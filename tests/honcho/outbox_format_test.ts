// The outbox's on-disk format, byte for byte: one deterministic scenario
// (pinned clock, ids, generations and jitter) through appends, the size
// bound, a dropped answer, an attempt resolved by lookup, a 503, a 422
// refusal, a retry of the refused message and a flush; the log file, the
// rejected file and the results after each step must equal the recording
// in tests/fixtures/honcho_outbox/scenario.txt. That recording was made
// with the outbox as it was before it was split into outbox/_log.ts,
// outbox/_commit.ts and outbox/_delivery.ts (commit 69c4fe1), so the split
// provably changed nothing a file written by an earlier version, another
// process or `hermes honcho outbox` relies on.
import assert from "node:assert/strict";
import { HonchoClient } from "../../plugins/memory/honcho/client/client.ts";
import { HonchoOutbox } from "../../plugins/memory/honcho/outbox/outbox.ts";
import { startHonchoTestServer } from "../honcho_server.ts";

const MSG = "POST /v3/workspaces/{workspace_id}/sessions/{session_id}/messages";

async function scenario(home: string): Promise<string> {
  await using server = await startHonchoTestServer();
  let t = Date.UTC(2025, 0, 1);
  const now = (): number => (t += 7);
  const client = new HonchoClient({
    workspaceId: "ws",
    baseUrl: server.url,
    timeoutMs: 5000,
    sleep: () => Promise.resolve(),
    now,
  });
  const outbox = new HonchoOutbox({
    workspace: "ws",
    hermesHome: home,
    now,
    random: () => 0.5,
    sleep: () => Promise.resolve(),
    lateCommitGraceMs: 0,
    compactAfterBytes: 100_000_000,
    maxPendingMessages: 12,
  });
  const read = (path: string) => Deno.readTextFile(path).catch(() => "<none>");
  const snap: string[] = [];
  const r1 = await outbox.append([
    {
      session: "s1",
      peer: "alice",
      content: "one",
      metadata: { k: 1 },
      createdAt: "2025-01-01T00:00:00.000Z",
    },
    { session: "s1", peer: "hermes", content: "two" },
    { session: "s2", peer: "alice", content: "three", id: "fixed-1" },
  ]);
  snap.push(JSON.stringify(r1), await read(outbox.path));
  snap.push(JSON.stringify(
    await Promise.all([
      outbox.append([{ session: "s1", peer: "alice", content: "four" }]),
      outbox.append([
        { session: "s1", peer: "alice", content: "five", id: "fixed-1" },
      ]),
      outbox.append(
        Array.from({ length: 12 }, (_, i) => ({
          session: "s3",
          peer: "bob",
          content: `bulk ${i}`,
        })),
      ),
    ]),
  ));
  snap.push(await read(outbox.path));
  server.inject(MSG, { dropAfterHandling: true, times: 1 });
  snap.push(
    JSON.stringify(
      await outbox.deliver(client, { maxRetries: 0, maxWaitMs: 0 }),
    ),
    await read(outbox.path),
  );
  t += 60_000;
  server.inject(MSG, { status: 503, times: 1 });
  snap.push(
    JSON.stringify(await outbox.deliver(client, { maxRetries: 0 })),
    await read(outbox.path),
  );
  server.inject(MSG, {
    status: 422,
    detail: [{
      loc: ["body", "messages", 0, "content"],
      msg: "bad",
      type: "value_error",
    }],
    times: 1,
  });
  snap.push(
    JSON.stringify(await outbox.deliver(client)),
    await read(outbox.path),
    await read(outbox.rejectedPath),
  );
  snap.push(
    JSON.stringify(await outbox.stats()),
    JSON.stringify(await outbox.pending()),
  );
  snap.push(
    String(await outbox.retryRejected()),
    await read(outbox.path),
    await read(outbox.rejectedPath),
  );
  snap.push(String(await outbox.flush(client, 5000)), await read(outbox.path));
  snap.push(JSON.stringify(
    server.state.messages.map((m) => [m.session_id, m.content, m.metadata]),
  ));
  return snap.join("\n----\n") + "\n";
}

Deno.test("HonchoOutbox writes the recorded bytes: log lines, rejected file and results of every step", async () => {
  const home = await Deno.makeTempDir({ prefix: "honcho_outbox_format_" });
  const randomUUID = crypto.randomUUID;
  let n = 0;
  crypto.randomUUID = () =>
    `00000000-0000-4000-8000-${String(n++).padStart(12, "0")}` as ReturnType<
      typeof randomUUID
    >;
  const { setLogger } = await import("@hermes/memory");
  const previous = setLogger({ log: () => {} });
  try {
    const got = await scenario(home);
    const want = await Deno.readTextFile(
      new URL("../fixtures/honcho_outbox/scenario.txt", import.meta.url),
    );
    assert.equal(got, want);
  } finally {
    crypto.randomUUID = randomUUID;
    setLogger(previous);
    await Deno.remove(home, { recursive: true });
  }
});
