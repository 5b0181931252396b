// HonchoOutbox: durable, ordered, deduplicated delivery of message writes,
// against the Honcho test server (tests/honcho_server.ts), including a child
// process killed with SIGKILL in the middle of a flush.
import assert from "node:assert/strict";
import { join } from "node:path";
import { type LogLevel, setLogger } from "@hermes/memory";
import { HonchoClient } from "../../plugins/memory/honcho/client/client.ts";
import { isHonchoError } from "../../plugins/memory/honcho/client/errors.ts";
import {
  HonchoOutbox,
  OUTBOX_ID_METADATA_KEY,
  outboxFileName,
} from "../../plugins/memory/honcho/outbox/outbox.ts";
import {
  type HonchoTestServer,
  startHonchoTestServer,
} from "../honcho_server.ts";
import { withHome } from "../helpers/test_home.ts";

const MESSAGES_ROUTE =
  "POST /v3/workspaces/{workspace_id}/sessions/{session_id}/messages";
const LIST_ROUTE =
  "POST /v3/workspaces/{workspace_id}/sessions/{session_id}/messages/list";

function captureLogs(): {
  lines: { level: LogLevel; message: string }[];
  restore: () => void;
} {
  const lines: { level: LogLevel; message: string }[] = [];
  const previous = setLogger({
    log: (level, message) => lines.push({ level, message }),
  });
  return { lines, restore: () => setLogger(previous) };
}

function fakeSleep(): {
  sleeps: number[];
  sleep: (ms: number, signal?: AbortSignal) => Promise<void>;
} {
  const sleeps: number[] = [];
  return {
    sleeps,
    sleep: (ms: number, signal?: AbortSignal) => {
      if (signal?.aborted) return Promise.reject(signal.reason);
      sleeps.push(ms);
      return Promise.resolve();
    },
  };
}

function clientFor(server: HonchoTestServer, workspaceId = "ws"): HonchoClient {
  return new HonchoClient({
    workspaceId,
    baseUrl: server.url,
    timeoutMs: 5_000,
    sleep: () => Promise.resolve(),
  });
}

function storedOutboxIds(server: HonchoTestServer): string[] {
  return server.state.messages.map((m) =>
    String(m.metadata[OUTBOX_ID_METADATA_KEY])
  );
}

function turns(
  session: string,
  count: number,
  from = 0,
): { session: string; peer: string; content: string }[] {
  return Array.from({ length: count }, (_, i) => ({
    session,
    peer: i % 2 === 0 ? "alice" : "hermes",
    content: `${session} message ${from + i}`,
  }));
}

Deno.test("HonchoOutbox.append() then deliver() stores every message once and empties the outbox", async () => {
  await using server = await startHonchoTestServer();
  await withHome(async (home) => {
    const outbox = new HonchoOutbox({ workspace: "ws", hermesHome: home });
    assert.equal(outbox.path, join(home, "honcho", "outbox", "ws.jsonl"));
    const { accepted, rejected } = await outbox.append(turns("s1", 3));
    assert.equal(accepted.length, 3);
    assert.equal(rejected, 0);
    assert.equal((await outbox.pending()).length, 3);
    assert.equal((await Deno.stat(outbox.path)).mode! & 0o777, 0o600);

    const result = await outbox.deliver(clientFor(server));
    assert.deepEqual(result, {
      delivered: 3,
      duplicates: 0,
      rejected: 0,
      pending: 0,
    });
    assert.deepEqual(storedOutboxIds(server), accepted);
    assert.deepEqual(server.state.messages.map((m) => m.content), [
      "s1 message 0",
      "s1 message 1",
      "s1 message 2",
    ]);
    assert.deepEqual(await outbox.pending(), []);
    // Compacted: only the header line is left.
    const lines = (await Deno.readTextFile(outbox.path)).trim().split("\n");
    assert.equal(lines.length, 1);
    assert.equal(JSON.parse(lines[0]!).type, "header");
    assert.deepEqual(server.violations, []);
  });
});

Deno.test("HonchoOutbox.deliver() keeps per-session order in batches of at most 100", async () => {
  await using server = await startHonchoTestServer();
  await withHome(async (home) => {
    const outbox = new HonchoOutbox({ workspace: "ws", hermesHome: home });
    await outbox.append(turns("a", 150));
    await outbox.append(turns("b", 20));
    await outbox.append(turns("a", 60, 150));
    const result = await outbox.deliver(clientFor(server));
    assert.equal(result.delivered, 230);
    const sizes = server.requests
      .filter((r) => r.route === MESSAGES_ROUTE)
      .map((r) => (r.body as { messages: unknown[] }).messages.length);
    assert.ok(sizes.every((n) => n <= 100), `batch sizes ${sizes}`);
    const contentsOf = (session: string): string[] =>
      server.state.messages.filter((m) => m.session_id === session).map((m) =>
        m.content
      );
    assert.deepEqual(
      contentsOf("a"),
      Array.from({ length: 210 }, (_, i) => `a message ${i}`),
    );
    assert.deepEqual(
      contentsOf("b"),
      Array.from({ length: 20 }, (_, i) => `b message ${i}`),
    );
  });
});

Deno.test("HonchoOutbox loses nothing while Honcho is down and delivers once it is back", async (t) => {
  await t.step("503 on every write, then recovery", async () => {
    await using server = await startHonchoTestServer();
    await withHome(async (home) => {
      const { sleeps, sleep } = fakeSleep();
      const outbox = new HonchoOutbox({
        workspace: "ws",
        hermesHome: home,
        sleep,
        random: () => 0.5,
        maxRetries: 3,
      });
      const { accepted } = await outbox.append(turns("s1", 5));
      server.inject(MESSAGES_ROUTE, { status: 503, times: Infinity });
      const down = await outbox.deliver(clientFor(server));
      assert.ok(isHonchoError(down.error, "server_error"));
      assert.equal(down.pending, 5);
      assert.equal(down.delivered, 0);
      assert.deepEqual(sleeps, [500, 1000, 2000]); // full jitter (random 0.5) of 1 s, 2 s, 4 s
      assert.equal(server.state.messages.length, 0);

      server.clearFaults();
      const up = await outbox.deliver(clientFor(server));
      assert.equal(up.delivered, 5);
      assert.equal(up.pending, 0);
      assert.deepEqual(storedOutboxIds(server), accepted);
    });
  });

  await t.step(
    "server process gone (connection refused), then a new one",
    async () => {
      await withHome(async (home) => {
        const outbox = new HonchoOutbox({
          workspace: "ws",
          hermesHome: home,
          ...fakeSleep(),
          maxRetries: 1,
        });
        await outbox.append(turns("s1", 4));
        const gone = await startHonchoTestServer();
        const url = gone.url;
        await gone.close();
        const client = new HonchoClient({
          workspaceId: "ws",
          baseUrl: url,
          sleep: () => Promise.resolve(),
        });
        const down = await outbox.deliver(client);
        assert.equal(down.pending, 4);
        assert.equal((down.error as Error).name, "ConnectionError");

        await using server = await startHonchoTestServer();
        const up = await outbox.deliver(clientFor(server));
        assert.equal(up.delivered, 4);
        assert.equal(server.state.messages.length, 4);
      });
    },
  );
});

Deno.test("HonchoOutbox.deliver() honours Retry-After, capped", async () => {
  await using server = await startHonchoTestServer();
  await withHome(async (home) => {
    const { sleeps, sleep } = fakeSleep();
    const outbox = new HonchoOutbox({
      workspace: "ws",
      hermesHome: home,
      sleep,
      retryAfterCapMs: 60_000,
    });
    await outbox.append(turns("s1", 2));
    server.inject(MESSAGES_ROUTE, { status: 429, retryAfter: "7" });
    server.inject(MESSAGES_ROUTE, { status: 503, retryAfter: "3600" });
    const result = await outbox.deliver(clientFor(server));
    assert.equal(result.delivered, 2);
    assert.deepEqual(sleeps, [7_000, 60_000]);
  });
});

Deno.test("HonchoOutbox settles an unacknowledged batch Honcho stored by a lookup, without waiting for the attempt's window or re-sending", async () => {
  await using server = await startHonchoTestServer();
  await withHome(async (home) => {
    const outbox = new HonchoOutbox({
      workspace: "ws",
      hermesHome: home,
      lateCommitGraceMs: 200,
      ...fakeSleep(),
    });
    const { accepted } = await outbox.append(turns("s1", 3));
    // Honcho stores the batch, then the connection drops before the answer.
    server.inject(MESSAGES_ROUTE, { dropAfterHandling: true });
    const client = new HonchoClient({
      workspaceId: "ws",
      baseUrl: server.url,
      timeoutMs: 1_000,
    });
    const result = await outbox.deliver(client);
    // Settled by the lookup: the messages were never sent a second time.
    assert.equal(result.duplicates, 3);
    assert.equal(result.delivered, 0);
    assert.equal(result.pending, 0);
    assert.deepEqual(storedOutboxIds(server), accepted);
    assert.equal(server.requestCount(MESSAGES_ROUTE), 1);
    assert.equal(server.requestCount(LIST_ROUTE), 1);
  });
});

Deno.test("HonchoOutbox settles handed-over ids in a session it filled itself by a count per batch, and still stores each id once", async () => {
  await using server = await startHonchoTestServer();
  await withHome(async (home) => {
    const outbox = new HonchoOutbox({
      workspace: "ws",
      hermesHome: home,
      ...fakeSleep(),
    });
    const client = clientFor(server);
    // Ids as an import gives them: each is looked up before its first send.
    const imported = (from: number, count: number) =>
      turns("s1", count, from).map((m, i) => ({
        ...m,
        id: `turn-${from + i}`,
      }));
    const lookups = () =>
      server.requests.filter((r) =>
        r.route === LIST_ROUTE &&
        (r.body as { filters?: unknown } | null)?.filters !== undefined
      ).length;
    await outbox.append(imported(0, 250));
    assert.equal((await outbox.deliver(client)).delivered, 250);
    // A new session: one count per batch of 100 answers for every id in it.
    assert.equal(server.requestCount(LIST_ROUTE), 3);
    assert.equal(lookups(), 0);
    // Handed over again in the same process: known stored, not sent again.
    await outbox.append(imported(200, 100));
    const again = await outbox.deliver(client);
    assert.deepEqual([again.delivered, again.duplicates], [50, 50]);
    assert.equal(lookups(), 0);
    // Something else stores in the session (another host sent turn-300): the count no longer
    // answers, the ids are looked up.
    await client.createMessages("s1", [{
      peerId: "alice",
      content: "from elsewhere",
      metadata: { [OUTBOX_ID_METADATA_KEY]: "turn-300" },
    }]);
    await outbox.append(imported(300, 10));
    const after = await outbox.deliver(client);
    assert.deepEqual([after.delivered, after.duplicates], [9, 1]);
    assert.ok(lookups() > 0);
    const ids = storedOutboxIds(server);
    assert.equal(ids.length, 310);
    assert.equal(new Set(ids).size, 310);
  });
});

Deno.test("HonchoOutbox.deliver() stops on an auth failure and keeps every message", async () => {
  await using server = await startHonchoTestServer({ apiKey: "right-key" });
  await withHome(async (home) => {
    const outbox = new HonchoOutbox({
      workspace: "ws",
      hermesHome: home,
      ...fakeSleep(),
    });
    await outbox.append(turns("s1", 2));
    const wrong = new HonchoClient({
      workspaceId: "ws",
      baseUrl: server.url,
      apiKey: "wrong-key",
    });
    const result = await outbox.deliver(wrong);
    assert.ok(isHonchoError(result.error, "auth"));
    assert.equal(result.pending, 2);
    assert.equal(server.requestCount(MESSAGES_ROUTE), 1);
    const right = new HonchoClient({
      workspaceId: "ws",
      baseUrl: server.url,
      apiKey: "right-key",
    });
    assert.equal((await outbox.deliver(right)).delivered, 2);
  });
});

const CONTENT_REFUSAL = (index: number) => [{
  type: "value_error",
  loc: ["body", "messages", index, "content"],
  msg: "Value error, bad message",
  input: "x",
}];

Deno.test("HonchoOutbox moves a message Honcho refused for its content aside with a warning and delivers the rest", async (t) => {
  for (
    const [label, detail, times] of [
      ["Honcho names the message", CONTENT_REFUSAL(0), 1],
      // No index: the batch is sent one by one to find it.
      ["Honcho names no message", [{
        type: "value_error",
        loc: ["body", "messages"],
        msg: "Value error, bad message",
        input: [],
      }], 2],
    ] as const
  ) {
    await t.step(label, async () => {
      await using server = await startHonchoTestServer();
      await withHome(async (home) => {
        const logs = captureLogs();
        try {
          const outbox = new HonchoOutbox({
            workspace: "ws",
            hermesHome: home,
            ...fakeSleep(),
          });
          const { accepted } = await outbox.append(turns("s1", 3));
          server.inject(MESSAGES_ROUTE, { status: 422, detail, times });
          const result = await outbox.deliver(clientFor(server));
          assert.equal(result.rejected, 1);
          assert.equal(result.delivered, 2);
          assert.equal(result.pending, 0);
          assert.deepEqual(storedOutboxIds(server), accepted.slice(1));
          const rejected = await outbox.rejected();
          assert.equal(rejected.length, 1);
          assert.equal(rejected[0]!.id, accepted[0]);
          assert.equal(rejected[0]!.status, 422);
          assert.match(rejected[0]!.reason, /bad message/);
          assert.ok(
            logs.lines.some((l) =>
              l.level === "warn" && l.message.includes(outbox.rejectedPath)
            ),
          );
          // Fixed on the server: queued again, stored once.
          assert.equal(await outbox.retryRejected(), 1);
          assert.deepEqual(await outbox.rejected(), []);
          assert.equal((await outbox.deliver(clientFor(server))).delivered, 1);
          assert.deepEqual(
            new Set(storedOutboxIds(server)),
            new Set(accepted),
          );
          assert.equal(server.state.messages.length, 3);
        } finally {
          logs.restore();
        }
      });
    });
  }
});

Deno.test("HonchoOutbox keeps every message on a systemic refusal (a refused id, 404, a 400 on the dedup read) and rejects none", async (t) => {
  const cases: [string, string, Record<string, unknown>][] = [
    ["422 naming the workspace", MESSAGES_ROUTE, {
      status: 422,
      detail: [{
        type: "string_pattern_mismatch",
        loc: ["path", "workspace_id"],
        msg: "String should match pattern",
        input: "my ws",
      }],
    }],
    ["422 with a plain detail", MESSAGES_ROUTE, {
      status: 422,
      detail: "Workspace refused",
    }],
    ["404 on the workspace", MESSAGES_ROUTE, {
      status: 404,
      detail: "Workspace not found",
    }],
    ["400 on the dedup read", LIST_ROUTE, {
      status: 400,
      detail: "Bad filter",
    }],
  ];
  for (const [label, route, fault] of cases) {
    await t.step(label, async () => {
      await using server = await startHonchoTestServer();
      await withHome(async (home) => {
        const outbox = new HonchoOutbox({
          workspace: "ws",
          hermesHome: home,
          ...fakeSleep(),
        });
        // Stable ids are looked up before the first send (the dedup read).
        const messages = turns("s1", 3).map((m, i) => ({
          ...m,
          id: `00000000-0000-5000-8000-00000000000${i}`,
        }));
        await outbox.append(messages);
        server.inject(route, { ...fault, times: Infinity });
        const result = await outbox.deliver(clientFor(server));
        assert.equal(result.systemic, true, String(result.error));
        assert.equal(result.rejected, 0);
        assert.equal(result.pending, 3);
        assert.deepEqual(await outbox.rejected(), []);
        assert.equal(server.state.messages.length, 0);
        server.clearFaults();
        assert.equal((await outbox.deliver(clientFor(server))).delivered, 3);
        assert.equal(server.state.messages.length, 3);
      });
    });
  }
});
Deno.test("HonchoOutbox ignores a torn last line with a warning and keeps working", async () => {
  await using server = await startHonchoTestServer();
  await withHome(async (home) => {
    const logs = captureLogs();
    try {
      const first = new HonchoOutbox({ workspace: "ws", hermesHome: home });
      const { accepted } = await first.append(turns("s1", 2));
      // A crash in the middle of the next append.
      await Deno.writeTextFile(
        first.path,
        '{"type":"message","id":"torn","sess',
        { append: true },
      );

      const second = new HonchoOutbox({ workspace: "ws", hermesHome: home });
      assert.deepEqual((await second.pending()).map((r) => r.id), accepted);
      assert.ok(
        logs.lines.some((l) =>
          l.level === "warn" && l.message.includes("torn") &&
          l.message.includes(first.path)
        ),
      );
      const text = await Deno.readTextFile(first.path);
      assert.ok(text.endsWith("\n") && !text.includes('"torn"'));
      const more = await second.append(turns("s1", 1, 2));
      assert.equal((await second.pending()).length, 3);
      assert.equal((await second.deliver(clientFor(server))).delivered, 3);
      assert.deepEqual(storedOutboxIds(server), [
        ...accepted,
        ...more.accepted,
      ]);
    } finally {
      logs.restore();
    }
  });
});

Deno.test("HonchoOutbox.append() refuses messages past the size bound with one warning naming the file", async () => {
  await withHome(async (home) => {
    const logs = captureLogs();
    try {
      const outbox = new HonchoOutbox({
        workspace: "ws",
        hermesHome: home,
        maxPendingMessages: 3,
      });
      const first = await outbox.append(turns("s1", 5));
      assert.equal(first.accepted.length, 3);
      assert.equal(first.rejected, 2);
      const second = await outbox.append(turns("s1", 1));
      assert.equal(second.rejected, 1);
      const warnings = logs.lines.filter((l) => l.level === "warn");
      assert.equal(warnings.length, 1);
      assert.ok(warnings[0]!.message.includes(outbox.path));
      assert.match(warnings[0]!.message, /full/);

      const bytes = new HonchoOutbox({
        workspace: "other",
        hermesHome: home,
        maxPendingBytes: 600,
      });
      const result = await bytes.append(turns("s1", 10));
      assert.ok(result.accepted.length > 0 && result.rejected > 0);
      assert.ok((await bytes.stats()).bytes <= 600);
    } finally {
      logs.restore();
    }
  });
});

Deno.test("HonchoOutbox.append() validates messages before queuing any", async () => {
  await withHome(async (home) => {
    const outbox = new HonchoOutbox({ workspace: "ws", hermesHome: home });
    await assert.rejects(
      outbox.append([{ session: "s", peer: "p", content: "ok" }, {
        session: "s",
        peer: "p",
        content: "x".repeat(25_001),
      }]),
      RangeError,
    );
    await assert.rejects(
      outbox.append([{ session: "", peer: "p", content: "x" }]),
      RangeError,
    );
    assert.deepEqual(await outbox.pending(), []);
  });
});

Deno.test("HonchoOutbox: two profiles never share an outbox; two instances of one profile do", async () => {
  await using server = await startHonchoTestServer();
  await withHome(async (homeA) => {
    await withHome(async (homeB) => {
      const a = new HonchoOutbox({ workspace: "ws", hermesHome: homeA });
      const b = new HonchoOutbox({ workspace: "ws", hermesHome: homeB });
      assert.notEqual(a.path, b.path);
      await a.append(turns("s1", 2));
      assert.equal((await b.pending()).length, 0);

      // A second process of profile A (simulated by a second instance).
      const a2 = new HonchoOutbox({ workspace: "ws", hermesHome: homeA });
      await a2.append(turns("s1", 2, 2));
      assert.equal((await a.pending()).length, 4);
      const result = await a.deliver(clientFor(server));
      assert.equal(result.delivered, 4);
      assert.deepEqual(await a2.pending(), []);
      assert.equal(server.state.messages.length, 4);
    });
  });
});

Deno.test("HonchoOutbox.flush() delivers within the deadline and reports what is left", async () => {
  await using server = await startHonchoTestServer();
  await withHome(async (home) => {
    const outbox = new HonchoOutbox({ workspace: "ws", hermesHome: home });
    await outbox.append(turns("s1", 3));
    assert.equal(await outbox.flush(clientFor(server), 5_000), true);
    assert.equal(server.state.messages.length, 3);

    await outbox.append(turns("s1", 1, 3));
    server.inject(MESSAGES_ROUTE, { latencyMs: 2_000 });
    const started = performance.now();
    assert.equal(await outbox.flush(clientFor(server), 100), false);
    assert.ok(performance.now() - started < 1_500);
    assert.equal((await outbox.stats()).pending, 1);
    server.clearFaults();
    assert.equal(await outbox.flush(clientFor(server), 5_000), true);
    assert.equal(
      new Set(storedOutboxIds(server)).size,
      server.state.messages.length,
    );
  });
});

Deno.test("outboxFileName() keeps safe workspace ids and hashes unsafe ones", () => {
  assert.equal(outboxFileName("hermes_coder"), "hermes_coder.jsonl");
  assert.match(outboxFileName("a/b"), /^a_b-[0-9a-f]{8}\.jsonl$/);
  assert.notEqual(outboxFileName("a/b"), outboxFileName("a_b"));
});

// ---------------------------------------------------------------------------
// Crash: a child process killed with SIGKILL in the middle of a flush
// ---------------------------------------------------------------------------

const CHILD_SOURCE = (outboxUrl: string, clientUrl: string) => `
import { HonchoOutbox } from "${outboxUrl}";
import { HonchoClient } from "${clientUrl}";
const [home, url, count] = Deno.args;
const outbox = new HonchoOutbox({
  workspace: "ws",
  hermesHome: home,
  lateCommitGraceMs: 300,
  // Long waits after a failure, so the parent can kill us while we wait.
  retryBaseDelayMs: 20_000,
  retryMaxDelayMs: 20_000,
  random: () => 1,
});
const messages = Array.from({ length: Number(count) }, (_, i) => ({
  session: "s1",
  peer: i % 2 === 0 ? "alice" : "hermes",
  content: "message " + i,
}));
await outbox.append(messages);
console.log("appended");
const client = new HonchoClient({ workspaceId: "ws", baseUrl: url, maxRetries: 0, timeoutMs: 1_000 });
await outbox.flush(client, 600_000);
console.log("flushed");
`;

async function runChildUntil(
  home: string,
  server: HonchoTestServer,
  count: number,
  killWhen: () => boolean,
): Promise<void> {
  const dir = await Deno.makeTempDir({ prefix: "honcho_outbox_child_" });
  try {
    const script = join(dir, "child.ts");
    await Deno.writeTextFile(
      script,
      CHILD_SOURCE(
        new URL("../../plugins/memory/honcho/outbox/outbox.ts", import.meta.url)
          .href,
        new URL("../../plugins/memory/honcho/client/client.ts", import.meta.url)
          .href,
      ),
    );
    const child = new Deno.Command(Deno.execPath(), {
      args: [
        "run",
        "--quiet",
        "--no-prompt",
        "--frozen",
        `--config=${new URL("../../deno.json", import.meta.url).pathname}`,
        "--allow-read",
        "--allow-write",
        "--allow-env",
        "--allow-net=127.0.0.1",
        script,
        home,
        server.url,
        String(count),
      ],
      stdout: "piped",
      stderr: "piped",
    }).spawn();
    const deadline = Date.now() + 30_000;
    let killed = false;
    while (Date.now() < deadline) {
      if (killWhen()) {
        child.kill("SIGKILL");
        killed = true;
        break;
      }
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    const output = await child.output();
    const stdout = new TextDecoder().decode(output.stdout);
    const stderr = new TextDecoder().decode(output.stderr);
    assert.ok(killed, `the child was not killed in time: ${stdout} ${stderr}`);
    assert.equal(output.signal, "SIGKILL", stderr);
    assert.ok(
      !stdout.includes("flushed"),
      "the child finished before it was killed",
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

Deno.test("HonchoOutbox after a SIGKILL mid-flush: the restart stores every message exactly once", async (t) => {
  await t.step(
    "killed after Honcho stored a batch it never acknowledged",
    async () => {
      await using server = await startHonchoTestServer();
      await withHome(async (home) => {
        // Batch 1 succeeds; batch 2 is stored but its answer is lost; the
        // child then waits (long backoff) and is killed.
        server.inject(MESSAGES_ROUTE, { latencyMs: 0 });
        server.inject(MESSAGES_ROUTE, { dropAfterHandling: true });
        await runChildUntil(
          home,
          server,
          250,
          () => server.state.messages.length >= 200,
        );
        assert.equal(server.state.messages.length, 200);

        const outbox = new HonchoOutbox({
          workspace: "ws",
          hermesHome: home,
          lateCommitGraceMs: 300,
        });
        const before = await outbox.stats();
        assert.equal(before.pending, 150);
        assert.equal(before.attempted, 100);
        const result = await outbox.deliver(clientFor(server));
        assert.equal(result.duplicates, 100);
        assert.equal(result.delivered, 50);
        assert.equal(result.pending, 0);
        const ids = storedOutboxIds(server);
        assert.equal(ids.length, 250);
        assert.equal(new Set(ids).size, 250);
        assert.deepEqual(
          server.state.messages.map((m) => m.content),
          Array.from({ length: 250 }, (_, i) => `message ${i}`),
        );
      });
    },
  );

  await t.step(
    "killed while a slow write was in flight: Honcho stores it after the kill, the restart waits it out",
    async () => {
      await using server = await startHonchoTestServer();
      await withHome(async (home) => {
        // Stored 800 ms after it arrived, within the child's 1 s timeout +
        // 300 ms grace.
        server.inject(MESSAGES_ROUTE, { latencyMs: 800 });
        await runChildUntil(
          home,
          server,
          30,
          () => server.requestCount(MESSAGES_ROUTE) >= 1,
        );
        assert.equal(server.state.messages.length, 0);
        const outbox = new HonchoOutbox({
          workspace: "ws",
          hermesHome: home,
          lateCommitGraceMs: 300,
        });
        assert.equal((await outbox.stats()).waiting, 30);
        const result = await outbox.deliver(clientFor(server));
        // Before this fix the restart sent the batch again at once: 60.
        assert.equal(result.duplicates, 30);
        assert.equal(result.delivered, 0);
        const ids = storedOutboxIds(server);
        assert.equal(ids.length, 30);
        assert.equal(new Set(ids).size, 30);
      });
    },
  );
});

Deno.test("HonchoOutbox.retryRejected() leaves in the rejected file what a full outbox refuses", async () => {
  await withHome(async (source) => {
    // Three records as the outbox writes them, moved aside as refused.
    const writer = new HonchoOutbox({ workspace: "ws", hermesHome: source });
    await writer.append(turns("s1", 3));
    const lines = (await Deno.readTextFile(writer.path)).split("\n")
      .filter((l) => l.includes('"content"'))
      .map((l) => ({ ...JSON.parse(l), reason: "refused", rejectedAt: "x" }));
    assert.equal(lines.length, 3);
    await withHome(async (home) => {
      const logs = captureLogs();
      try {
        const outbox = new HonchoOutbox({
          workspace: "ws",
          hermesHome: home,
          maxPendingMessages: 2,
        });
        await outbox.append(turns("s2", 1));
        await Deno.writeTextFile(
          outbox.rejectedPath,
          lines.map((l) => `${JSON.stringify(l)}\n`).join(""),
        );
        // Room for one: one is queued, the two refused stay where they were.
        assert.equal(await outbox.retryRejected(), 1);
        const left = await outbox.rejected();
        assert.deepEqual(
          left.map((r) => r.id),
          lines.slice(1).map((l) => l.id),
        );
        assert.equal((await outbox.pending()).length, 2);
      } finally {
        logs.restore();
      }
    });
  });
});
