// The outbox's format version: a file written by a newer format, and lines
// this version cannot read (a renamed field), are kept byte for byte, never
// sent nor deleted, with one notice naming the version and the fix; a file
// of the older, unversioned format keeps delivering. Counted on the test
// server. Before the fix such records got one warning each and were removed
// from disk by the first delivery's compaction.
import assert from "node:assert/strict";
import { join } from "node:path";
import { type LogLevel, setLogger } from "@hermes/memory";
import { HonchoClient } from "../../plugins/memory/honcho/client/client.ts";
import {
  HonchoOutbox,
  OUTBOX_ID_METADATA_KEY,
} from "../../plugins/memory/honcho/outbox/outbox.ts";
import { startHonchoTestServer } from "../honcho_server.ts";

function captureWarnings(): { lines: string[] } & Disposable {
  const lines: string[] = [];
  const previous = setLogger({
    log: (level: LogLevel, message: string) => {
      if (level === "warn") lines.push(message);
    },
  });
  return { lines, [Symbol.dispose]: () => setLogger(previous) };
}

async function tempHome(): Promise<string & AsyncDisposable> {
  const home = await Deno.makeTempDir({ prefix: "outbox_version_" });
  return Object.assign(new String(home) as string, {
    [Symbol.asyncDispose]: () => Deno.remove(home, { recursive: true }),
  }) as string & AsyncDisposable;
}

function message(id: string, extra: Record<string, unknown> = {}): string {
  return JSON.stringify({
    type: "message",
    id,
    workspace: "ws",
    session: "s1",
    peer: "alice",
    content: `text of ${id}`,
    metadata: { [OUTBOX_ID_METADATA_KEY]: id },
    createdAt: "2026-01-01T00:00:00.000Z",
    ...extra,
  });
}

Deno.test("HonchoOutbox: a file from a newer outbox format is kept byte for byte, never sent, with one notice naming the version and the fix", async () => {
  await using server = await startHonchoTestServer();
  await using home = await tempHome();
  using warnings = captureWarnings();
  const outbox = new HonchoOutbox({ workspace: "ws", hermesHome: `${home}` });
  await Deno.mkdir(join(`${home}`, "honcho", "outbox"), { recursive: true });
  const newer = [
    JSON.stringify({ type: "header", version: 2, generation: "g" }),
    ...["a", "b", "c", "d"].map((id) => message(id, { priority: 1 })),
  ].join("\n") + "\n";
  await Deno.writeTextFile(outbox.path, newer);
  const client = new HonchoClient({
    workspaceId: "ws",
    baseUrl: server.url,
    sleep: () => Promise.resolve(),
  });

  const { accepted } = await outbox.append([
    { session: "s1", peer: "alice", content: "new turn" },
  ]);
  for (let i = 0; i < 3; i++) await outbox.deliver(client);
  await new HonchoOutbox({ workspace: "ws", hermesHome: `${home}` }).deliver(
    client,
  );

  // Only this version's own message reached the server, once.
  assert.deepEqual(
    server.state.messages.map((m) => m.metadata[OUTBOX_ID_METADATA_KEY]),
    accepted,
  );
  const kept = `${outbox.path}.format-v2.kept`;
  assert.equal(await Deno.readTextFile(kept), newer);
  const notices = warnings.lines.filter((l) => l.includes("format version 2"));
  assert.equal(notices.length, 1, warnings.lines.join("\n"));
  assert.match(notices[0]!, /upgrade hermes-memory/);
  assert.ok(notices[0]!.includes(kept));
});

Deno.test("HonchoOutbox: lines this version cannot read (a renamed field) are kept byte for byte through delivery and compaction, with one notice", async () => {
  await using server = await startHonchoTestServer();
  await using home = await tempHome();
  using warnings = captureWarnings();
  const outbox = new HonchoOutbox({
    workspace: "ws",
    hermesHome: `${home}`,
    compactAfterBytes: 1,
  });
  await Deno.mkdir(join(`${home}`, "honcho", "outbox"), { recursive: true });
  const renamed = ["r1", "r2", "r3", "r4"].map((id) => {
    const line = JSON.parse(message(id));
    line.text = line.content;
    delete line.content;
    return JSON.stringify(line);
  });
  await Deno.writeTextFile(
    outbox.path,
    [
      JSON.stringify({ type: "header", version: 1, generation: "g" }),
      message("ok1"),
      ...renamed,
      message("ok2"),
    ].join("\n") + "\n",
  );
  const client = new HonchoClient({
    workspaceId: "ws",
    baseUrl: server.url,
    sleep: () => Promise.resolve(),
  });
  const { accepted } = await outbox.append([
    { session: "s1", peer: "alice", content: "new turn" },
  ]);
  await outbox.deliver(client);
  await outbox.deliver(client);

  const stored = server.state.messages.map((m) =>
    String(m.metadata[OUTBOX_ID_METADATA_KEY])
  );
  assert.deepEqual(stored, ["ok1", "ok2", ...accepted]);
  const after = (await Deno.readTextFile(outbox.path)).trim().split("\n");
  // Compacted: the header and the four unreadable lines, verbatim.
  assert.equal(JSON.parse(after[0]!).type, "header");
  assert.deepEqual(after.slice(1), renamed);
  const notices = warnings.lines.filter((l) => l.includes("cannot read"));
  assert.equal(notices.length, 1, warnings.lines.join("\n"));
  assert.match(notices[0]!, /4 lines.*outbox format version 1.*Upgrade/);
});

Deno.test("HonchoOutbox: a file of the older, unversioned format keeps delivering", async () => {
  await using server = await startHonchoTestServer();
  await using home = await tempHome();
  using warnings = captureWarnings();
  const outbox = new HonchoOutbox({ workspace: "ws", hermesHome: `${home}` });
  await Deno.mkdir(join(`${home}`, "honcho", "outbox"), { recursive: true });
  await Deno.writeTextFile(
    outbox.path,
    [
      JSON.stringify({ type: "header", generation: "old" }),
      message("m1"),
      message("m2"),
      // An attempt recorded before `until` existed, long ago.
      JSON.stringify({
        type: "attempt",
        ids: ["m2"],
        at: "2020-01-01T00:00:00.000Z",
      }),
    ].join("\n") + "\n",
  );
  const client = new HonchoClient({
    workspaceId: "ws",
    baseUrl: server.url,
    sleep: () => Promise.resolve(),
  });
  const result = await outbox.deliver(client);
  assert.equal(result.pending, 0);
  assert.deepEqual(
    server.state.messages.map((m) => m.metadata[OUTBOX_ID_METADATA_KEY]),
    ["m1", "m2"],
  );
  assert.deepEqual(warnings.lines, []);
});
