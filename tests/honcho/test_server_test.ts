// Tests for the Honcho-compatible test server: status codes, page format and
// id rules per route, OpenAPI validation, fault injection seen by a plain
// fetch client, and a run of the official @honcho-ai/sdk against it.
import assert from "node:assert/strict";
import { Honcho } from "npm:@honcho-ai/sdk@2.5.0";
import {
  type HonchoTestServer,
  startHonchoTestServer,
} from "../honcho_server.ts";

const KEY = "test-key";
const NANOID_REGEXP = /^[A-Za-z0-9_-]{21}$/;

interface Reply {
  status: number;
  headers: Headers;
  body: unknown;
}

async function api(
  server: HonchoTestServer,
  method: string,
  path: string,
  body?: unknown,
  options: { key?: string | null; raw?: string; contentType?: string } = {},
): Promise<Reply> {
  const headers: Record<string, string> = {};
  const key = options.key === undefined ? KEY : options.key;
  if (key !== null) headers.authorization = `Bearer ${key}`;
  let payload: string | undefined;
  if (options.raw !== undefined) payload = options.raw;
  else if (body !== undefined) payload = JSON.stringify(body);
  if (payload !== undefined) {
    headers["content-type"] = options.contentType ?? "application/json";
  }
  const res = await fetch(`${server.url}${path}`, {
    method,
    headers,
    body: payload,
  });
  const text = await res.text();
  let parsed: unknown = text;
  try {
    parsed = text === "" ? null : JSON.parse(text);
  } catch {
    // keep the raw text
  }
  return { status: res.status, headers: res.headers, body: parsed };
}

// deno-lint-ignore no-explicit-any
type AnyJson = any;

function assertPage(
  body: AnyJson,
  expected: { total: number; page: number; size: number },
): void {
  assert.deepEqual(Object.keys(body).sort(), [
    "items",
    "page",
    "pages",
    "size",
    "total",
  ]);
  assert.equal(body.total, expected.total);
  assert.equal(body.page, expected.page);
  assert.equal(body.size, expected.size);
  assert.equal(body.pages, Math.ceil(expected.total / expected.size));
  assert.ok(Array.isArray(body.items));
}

async function withServer(
  fn: (server: HonchoTestServer) => Promise<void>,
  options: { apiKey?: string; latencyMs?: number } = { apiKey: KEY },
): Promise<void> {
  await using server = await startHonchoTestServer(options);
  await fn(server);
}

Deno.test("startHonchoTestServer() listens on 127.0.0.1 and answers /health", async () => {
  await withServer(async (server) => {
    assert.match(server.url, /^http:\/\/127\.0\.0\.1:\d+$/);
    const health = await api(server, "GET", "/health", undefined, {
      key: null,
    });
    assert.equal(health.status, 200);
    assert.deepEqual(health.body, { status: "ok" });
    assert.deepEqual(server.violations, []);
  });
});

Deno.test("workspaces: get-or-create answers 201 then 200 and enforces id rules", async () => {
  await withServer(async (server) => {
    const first = await api(server, "POST", "/v3/workspaces", {
      id: "ws_1",
      metadata: { a: 1 },
    });
    assert.equal(first.status, 201);
    const ws = first.body as AnyJson;
    assert.equal(ws.id, "ws_1");
    assert.deepEqual(ws.metadata, { a: 1 });
    assert.deepEqual(ws.configuration, {});
    assert.ok(!Number.isNaN(Date.parse(ws.created_at)));
    const again = await api(server, "POST", "/v3/workspaces", {
      id: "ws_1",
      metadata: { b: 2 },
    });
    assert.equal(again.status, 200);
    assert.deepEqual(
      (again.body as AnyJson).metadata,
      { a: 1 },
      "existing workspace ignores body",
    );

    for (const bad of ["has space", "dot.ted", "", "x".repeat(513)]) {
      const res = await api(server, "POST", "/v3/workspaces", { id: bad });
      assert.equal(res.status, 422, bad);
      const detail = (res.body as AnyJson).detail;
      assert.ok(Array.isArray(detail));
      assert.deepEqual(detail[0].loc, ["body", "id"]);
    }
    assert.equal(
      (await api(server, "POST", "/v3/workspaces", { id: "x".repeat(512) }))
        .status,
      201,
    );
    assert.equal(server.violations.length, 4);
    assert.ok(server.violations.every((v) => v.kind === "body"));
  });
});

Deno.test("workspaces: list, update, search and delete", async () => {
  await withServer(async (server) => {
    await api(server, "POST", "/v3/workspaces", { id: "a" });
    await api(server, "POST", "/v3/workspaces", {
      id: "b",
      metadata: { tier: "pro" },
    });
    const list = await api(server, "POST", "/v3/workspaces/list?size=1", {});
    assert.equal(list.status, 200);
    assertPage(list.body, { total: 2, page: 1, size: 1 });
    assert.equal((list.body as AnyJson).items[0].id, "a");
    const filtered = await api(server, "POST", "/v3/workspaces/list", {
      filters: { metadata: { tier: "pro" } },
    });
    assert.deepEqual(
      (filtered.body as AnyJson).items.map((w: AnyJson) => w.id),
      ["b"],
    );

    const put = await api(server, "PUT", "/v3/workspaces/c", {
      metadata: { x: 1 },
    });
    assert.equal(put.status, 200, "PUT auto-creates");
    assert.deepEqual((put.body as AnyJson).metadata, { x: 1 });

    await api(server, "POST", "/v3/workspaces/a/sessions/s/messages", {
      messages: [{ peer_id: "u", content: "the red fox" }],
    });
    const search = await api(server, "POST", "/v3/workspaces/a/search", {
      query: "fox",
    });
    assert.equal(search.status, 200);
    assert.equal((search.body as AnyJson).length, 1);

    const busy = await api(server, "DELETE", "/v3/workspaces/a");
    assert.equal(busy.status, 409);
    assert.equal(typeof (busy.body as AnyJson).detail, "string");
    assert.equal(
      (await api(server, "DELETE", "/v3/workspaces/a/sessions/s")).status,
      202,
    );
    const deleted = await api(server, "DELETE", "/v3/workspaces/a");
    assert.equal(deleted.status, 202);
    assert.deepEqual(deleted.body, { message: "Workspace deletion accepted" });
    assert.equal((await api(server, "DELETE", "/v3/workspaces/a")).status, 404);
    assert.deepEqual(server.violations, []);
  });
});

Deno.test("peers: get-or-create, list, update, card, context, representation and search", async (t) => {
  await withServer(async (server) => {
    await t.step(
      "get-or-create 201/200 replaces metadata and configuration",
      async () => {
        const created = await api(server, "POST", "/v3/workspaces/ws/peers", {
          id: "alice",
        });
        assert.equal(created.status, 201);
        assert.deepEqual(Object.keys(created.body as AnyJson).sort(), [
          "configuration",
          "created_at",
          "id",
          "metadata",
          "workspace_id",
        ]);
        const again = await api(server, "POST", "/v3/workspaces/ws/peers", {
          id: "alice",
          metadata: { role: "user" },
          configuration: { observe_me: false },
        });
        assert.equal(again.status, 200);
        assert.deepEqual((again.body as AnyJson).metadata, { role: "user" });
        assert.deepEqual((again.body as AnyJson).configuration, {
          observe_me: false,
        });
        const bad = await api(server, "POST", "/v3/workspaces/ws/peers", {
          id: "al ice",
        });
        assert.equal(bad.status, 422);
      },
    );

    await t.step("list pages and filters", async () => {
      for (const id of ["bob", "carol"]) {
        await api(server, "POST", "/v3/workspaces/ws/peers", { id });
      }
      const page2 = await api(
        server,
        "POST",
        "/v3/workspaces/ws/peers/list?page=2&size=2",
        {},
      );
      assertPage(page2.body, { total: 3, page: 2, size: 2 });
      assert.deepEqual(
        (page2.body as AnyJson).items.map((p: AnyJson) => p.id),
        ["carol"],
      );
      const rev = await api(
        server,
        "POST",
        "/v3/workspaces/ws/peers/list?reverse=true",
        {},
      );
      assert.equal((rev.body as AnyJson).items[0].id, "carol");
      const none = await api(server, "POST", "/v3/workspaces/ws/peers/list");
      assert.equal(none.status, 200, "the list body is optional");
      const badFilter = await api(
        server,
        "POST",
        "/v3/workspaces/ws/peers/list",
        {
          filters: { nope: 1 },
        },
      );
      assert.equal(badFilter.status, 422);
      assert.equal(typeof (badFilter.body as AnyJson).detail, "string");
      const tooBig = await api(
        server,
        "POST",
        "/v3/workspaces/ws/peers/list?size=101",
        {},
      );
      assert.equal(tooBig.status, 422);
      assert.deepEqual((tooBig.body as AnyJson).detail[0].loc, [
        "query",
        "size",
      ]);
    });

    await t.step("PUT updates and auto-creates", async () => {
      const put = await api(server, "PUT", "/v3/workspaces/ws/peers/dave", {
        metadata: { n: 1 },
      });
      assert.equal(put.status, 200);
      assert.deepEqual((put.body as AnyJson).metadata, { n: 1 });
    });

    await t.step(
      "card: 404 for a missing peer, null before set, set per target",
      async () => {
        assert.equal(
          (await api(server, "GET", "/v3/workspaces/ws/peers/zed/card")).status,
          404,
        );
        const empty = await api(
          server,
          "GET",
          "/v3/workspaces/ws/peers/alice/card",
        );
        assert.deepEqual(empty.body, { peer_card: null });
        const set = await api(
          server,
          "PUT",
          "/v3/workspaces/ws/peers/alice/card",
          {
            peer_card: ["Likes tea"],
          },
        );
        assert.equal(set.status, 200);
        assert.deepEqual(set.body, { peer_card: ["Likes tea"] });
        await api(
          server,
          "PUT",
          "/v3/workspaces/ws/peers/hermes/card?target=alice",
          {
            peer_card: ["User named Alice"],
          },
        );
        const own = await api(
          server,
          "GET",
          "/v3/workspaces/ws/peers/alice/card",
        );
        assert.deepEqual(own.body, { peer_card: ["Likes tea"] });
        const about = await api(
          server,
          "GET",
          "/v3/workspaces/ws/peers/hermes/card?target=alice",
        );
        assert.deepEqual(about.body, { peer_card: ["User named Alice"] });
        const missingBody = await api(
          server,
          "PUT",
          "/v3/workspaces/ws/peers/alice/card",
          {},
        );
        assert.equal(missingBody.status, 422);
        assert.deepEqual((missingBody.body as AnyJson).detail[0].loc, [
          "body",
          "peer_card",
        ]);
      },
    );

    await t.step("representation and context render conclusions", async () => {
      const empty = await api(
        server,
        "POST",
        "/v3/workspaces/ws/peers/hermes/representation",
        {
          target: "alice",
        },
      );
      assert.deepEqual(empty.body, { representation: "" });
      await api(server, "POST", "/v3/workspaces/ws/conclusions", {
        conclusions: [{
          content: "Alice drinks tea",
          observer_id: "hermes",
          observed_id: "alice",
        }],
      });
      const rep = await api(
        server,
        "POST",
        "/v3/workspaces/ws/peers/hermes/representation",
        {
          target: "alice",
        },
      );
      assert.match(
        (rep.body as AnyJson).representation,
        /^## Explicit Observations\n\[\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}\] Alice drinks tea$/,
      );
      const ctx = await api(
        server,
        "GET",
        "/v3/workspaces/ws/peers/hermes/context?target=alice&search_query=tea",
      );
      assert.equal(ctx.status, 200);
      const body = ctx.body as AnyJson;
      assert.equal(body.peer_id, "hermes");
      assert.equal(body.target_id, "alice");
      assert.match(body.representation, /Alice drinks tea/);
      assert.deepEqual(body.peer_card, ["User named Alice"]);
      const badK = await api(
        server,
        "GET",
        "/v3/workspaces/ws/peers/hermes/context?search_top_k=0",
      );
      assert.equal(badK.status, 422);
    });

    await t.step("peer search returns only the peer's messages", async () => {
      await api(server, "POST", "/v3/workspaces/ws/sessions/s1/messages", {
        messages: [
          { peer_id: "alice", content: "green tea please" },
          { peer_id: "bob", content: "tea for me too" },
        ],
      });
      const hits = await api(
        server,
        "POST",
        "/v3/workspaces/ws/peers/alice/search",
        {
          query: "tea",
          limit: 5,
        },
      );
      assert.equal(hits.status, 200);
      assert.deepEqual((hits.body as AnyJson).map((m: AnyJson) => m.peer_id), [
        "alice",
      ]);
    });
    const unexpected = server.violations.filter((v) =>
      !(v.kind === "body" &&
        v.route === "POST /v3/workspaces/{workspace_id}/peers") &&
      !(v.kind === "query") &&
      !(v.kind === "body" && v.route?.endsWith("/card"))
    );
    assert.deepEqual(unexpected, []);
  });
});

Deno.test("sessions: get-or-create, list, peers, peer config, delete and clone", async (t) => {
  await withServer(async (server) => {
    const base = "/v3/workspaces/ws/sessions";
    await t.step(
      "get-or-create 201/200 auto-creates peers with their config",
      async () => {
        const created = await api(server, "POST", base, {
          id: "s1",
          peers: {
            alice: { observe_me: true, observe_others: false },
            hermes: {},
          },
        });
        assert.equal(created.status, 201);
        const s = created.body as AnyJson;
        assert.deepEqual(
          { id: s.id, is_active: s.is_active, workspace_id: s.workspace_id },
          { id: "s1", is_active: true, workspace_id: "ws" },
        );
        assert.equal(
          (await api(server, "POST", base, { id: "s1" })).status,
          200,
        );
        assert.equal(server.state.peers.length, 2);
        const bad = await api(server, "POST", base, {
          id: "s2",
          peers: { "bad peer": {} },
        });
        assert.equal(bad.status, 422);
        assert.match(
          (bad.body as AnyJson).detail,
          /Peer name\(s\) \['bad peer'\] must match pattern/,
        );
      },
    );

    await t.step(
      "peer membership add/set/list and config get/set",
      async () => {
        const cfg = await api(server, "GET", `${base}/s1/peers/alice/config`);
        assert.deepEqual(cfg.body, { observe_me: true, observe_others: false });
        const unset = await api(
          server,
          "GET",
          `${base}/s1/peers/hermes/config`,
        );
        assert.deepEqual(unset.body, {
          observe_me: null,
          observe_others: null,
        });
        assert.equal(
          (await api(server, "GET", `${base}/s1/peers/ghost/config`)).status,
          404,
        );
        const put = await api(server, "PUT", `${base}/s1/peers/hermes/config`, {
          observe_others: true,
        });
        assert.equal(put.status, 204);
        assert.equal(put.body, null);
        const after = await api(
          server,
          "GET",
          `${base}/s1/peers/hermes/config`,
        );
        assert.deepEqual(after.body, {
          observe_me: null,
          observe_others: true,
        });
        assert.equal(
          (await api(server, "PUT", `${base}/nope/peers/hermes/config`, {
            observe_me: true,
          })).status,
          404,
        );

        const add = await api(server, "POST", `${base}/s1/peers`, {
          alice: { observe_me: false },
          bob: { observe_me: false },
        });
        assert.equal(add.status, 200);
        const kept = await api(server, "GET", `${base}/s1/peers/alice/config`);
        assert.deepEqual(
          kept.body,
          { observe_me: true, observe_others: false },
          "active keeps config",
        );
        const list = await api(server, "GET", `${base}/s1/peers?size=2`);
        assertPage(list.body, { total: 3, page: 1, size: 2 });
        const set = await api(server, "PUT", `${base}/s1/peers`, { bob: {} });
        assert.equal(set.status, 200);
        const members = await api(server, "GET", `${base}/s1/peers`);
        assert.deepEqual(
          (members.body as AnyJson).items.map((p: AnyJson) => p.id),
          ["bob"],
        );
        const removed = await api(server, "DELETE", `${base}/s1/peers`, [
          "bob",
        ]);
        assert.equal(removed.status, 200);
        assert.equal(
          (await api(server, "GET", `${base}/s1/peers`) as AnyJson).body.total,
          0,
        );
        const wrongShape = await api(server, "POST", `${base}/s1/peers`, [
          "alice",
        ]);
        assert.equal(wrongShape.status, 422);
      },
    );

    await t.step("list, update, clone and delete", async () => {
      await api(server, "POST", base, { id: "s2", metadata: { k: "v" } });
      const list = await api(server, "POST", `${base}/list`, {
        filters: { metadata: { k: "v" } },
      });
      assertPage(list.body, { total: 1, page: 1, size: 50 });
      const upd = await api(server, "PUT", `${base}/s2`, {
        configuration: { summary: { enabled: false } },
      });
      assert.deepEqual((upd.body as AnyJson).configuration, {
        summary: { enabled: false },
      });
      const badCfg = await api(server, "PUT", `${base}/s2`, {
        configuration: { summary: { messages_per_short_summary: 3 } },
      });
      assert.equal(badCfg.status, 422);
      const msgs = await api(server, "POST", `${base}/s2/messages`, {
        messages: [{ peer_id: "alice", content: "one" }, {
          peer_id: "alice",
          content: "two",
        }],
      });
      const firstId = (msgs.body as AnyJson)[0].id;
      const clone = await api(
        server,
        "POST",
        `${base}/s2/clone?message_id=${firstId}`,
      );
      assert.equal(clone.status, 201);
      const cloneId = (clone.body as AnyJson).id;
      const cloned = await api(
        server,
        "POST",
        `${base}/${cloneId}/messages/list`,
        {},
      );
      assert.deepEqual(
        (cloned.body as AnyJson).items.map((m: AnyJson) => m.content),
        ["one"],
      );
      const del = await api(server, "DELETE", `${base}/s2`);
      assert.equal(del.status, 202);
      assert.deepEqual(del.body, { message: "Session deleted successfully" });
      assert.equal((await api(server, "POST", base, { id: "s2" })).status, 404);
      assert.equal((await api(server, "DELETE", `${base}/never`)).status, 404);
      const active = await api(server, "POST", `${base}/list`, {});
      assert.ok(
        !(active.body as AnyJson).items.some((s: AnyJson) => s.id === "s2"),
      );
    });
  });
});

Deno.test("messages: batch create, 100-message limit, list pages and filters, get and update", async () => {
  await withServer(async (server) => {
    const base = "/v3/workspaces/ws/sessions/s1/messages";
    const created = await api(server, "POST", base, {
      messages: [
        { peer_id: "alice", content: "hello there", metadata: { turn: 1 } },
        {
          peer_id: "hermes",
          content: "hi!",
          created_at: "2024-01-02T03:04:05Z",
        },
      ],
    });
    assert.equal(created.status, 201);
    const [m1, m2] = created.body as AnyJson[];
    assert.match(m1.id, NANOID_REGEXP);
    assert.match(m2.id, NANOID_REGEXP);
    assert.notEqual(m1.id, m2.id);
    assert.deepEqual(Object.keys(m1).sort(), [
      "content",
      "created_at",
      "id",
      "metadata",
      "peer_id",
      "session_id",
      "token_count",
      "workspace_id",
    ]);
    assert.deepEqual(m1.metadata, { turn: 1 });
    assert.equal(m2.created_at, "2024-01-02T03:04:05.000Z");
    assert.ok(m1.token_count > 0);
    assert.equal(
      server.state.sessionPeers.length,
      2,
      "authors join the session",
    );

    const many = Array.from(
      { length: 101 },
      (_, i) => ({ peer_id: "alice", content: `m${i}` }),
    );
    const tooMany = await api(server, "POST", base, { messages: many });
    assert.equal(tooMany.status, 422);
    assert.equal((tooMany.body as AnyJson).detail[0].type, "too_long");
    assert.equal(
      (await api(server, "POST", base, { messages: [] })).status,
      422,
    );
    const hundred = await api(server, "POST", base, {
      messages: many.slice(0, 100),
    });
    assert.equal(hundred.status, 201);
    const long = await api(server, "POST", base, {
      messages: [{ peer_id: "alice", content: "x".repeat(25_001) }],
    });
    assert.equal(long.status, 422);
    const badAuthor = await api(server, "POST", base, {
      messages: [{ peer_id: "no.dots", content: "x" }],
    });
    assert.equal(badAuthor.status, 422);
    assert.equal(typeof (badAuthor.body as AnyJson).detail, "string");

    const page = await api(server, "POST", `${base}/list?page=3&size=40`, {});
    assertPage(page.body, { total: 102, page: 3, size: 40 });
    assert.equal((page.body as AnyJson).items.length, 22);
    const newest = await api(
      server,
      "POST",
      `${base}/list?reverse=true&size=1`,
      {},
    );
    assert.equal((newest.body as AnyJson).items[0].content, "m99");
    const byPeer = await api(server, "POST", `${base}/list`, {
      filters: { peer_id: "hermes" },
    });
    assert.deepEqual((byPeer.body as AnyJson).items.map((m: AnyJson) => m.id), [
      m2.id,
    ]);
    const byMeta = await api(server, "POST", `${base}/list`, {
      filters: { metadata: { turn: 1 } },
    });
    assert.equal((byMeta.body as AnyJson).total, 1);
    const unknown = await api(
      server,
      "POST",
      "/v3/workspaces/ws/sessions/none/messages/list",
      {},
    );
    assertPage(unknown.body, { total: 0, page: 1, size: 50 });

    const got = await api(server, "GET", `${base}/${m1.id}`);
    assert.equal(got.status, 200);
    assert.equal((got.body as AnyJson).content, "hello there");
    const missing = await api(server, "GET", `${base}/AAAAAAAAAAAAAAAAAAAAA`);
    assert.equal(missing.status, 404);
    assert.deepEqual(missing.body, {
      detail: "Message with ID AAAAAAAAAAAAAAAAAAAAA not found",
    });
    const upd = await api(server, "PUT", `${base}/${m1.id}`, {
      metadata: { edited: true },
    });
    assert.deepEqual((upd.body as AnyJson).metadata, { edited: true });
  });
});

Deno.test("messages/upload: multipart upload creates messages and records the file", async () => {
  await withServer(async (server) => {
    const form = new FormData();
    form.append(
      "file",
      new Blob(["# Memory\nlikes tea"], { type: "text/markdown" }),
      "memory.md",
    );
    form.append("peer_id", "alice");
    form.append("metadata", JSON.stringify({ source: "local_memory" }));
    const res = await fetch(
      `${server.url}/v3/workspaces/ws/sessions/s1/messages/upload`,
      {
        method: "POST",
        headers: { authorization: `Bearer ${KEY}` },
        body: form,
      },
    );
    assert.equal(res.status, 201);
    const messages = await res.json();
    assert.equal(messages.length, 1);
    assert.equal(messages[0].content, "# Memory\nlikes tea");
    assert.deepEqual(messages[0].metadata, { source: "local_memory" });
    assert.equal(server.state.uploads.length, 1);
    assert.equal(server.state.uploads[0]!.filename, "memory.md");
    assert.deepEqual(server.state.uploads[0]!.message_ids, [messages[0].id]);

    const noFile = new FormData();
    noFile.append("peer_id", "alice");
    const bad = await fetch(
      `${server.url}/v3/workspaces/ws/sessions/s1/messages/upload`,
      {
        method: "POST",
        headers: { authorization: `Bearer ${KEY}` },
        body: noFile,
      },
    );
    assert.equal(bad.status, 422);
    assert.deepEqual((await bad.json()).detail[0].loc, ["body", "file"]);
    assert.equal(server.violations.length, 1);
  });
});

Deno.test("session context: budget, summary, peer_target and peer_perspective", async () => {
  await withServer(async (server) => {
    const base = "/v3/workspaces/ws/sessions/s1";
    const msgs = await api(server, "POST", `${base}/messages`, {
      messages: [
        { peer_id: "alice", content: "one two three four" },
        { peer_id: "hermes", content: "five six seven eight" },
        { peer_id: "alice", content: "nine ten" },
      ],
    });
    const ids = (msgs.body as AnyJson).map((m: AnyJson) => m.id);
    const all = await api(server, "GET", `${base}/context`);
    assert.equal(all.status, 200);
    assert.deepEqual(Object.keys(all.body as AnyJson).sort(), [
      "id",
      "messages",
      "peer_card",
      "peer_representation",
      "summary",
    ]);
    assert.deepEqual(
      (all.body as AnyJson).messages.map((m: AnyJson) => m.id),
      ids,
    );
    assert.equal((all.body as AnyJson).summary, null);
    assert.equal((all.body as AnyJson).peer_representation, null);

    const tight = await api(server, "GET", `${base}/context?tokens=5`);
    assert.deepEqual(
      (tight.body as AnyJson).messages.map((m: AnyJson) => m.id),
      [ids[2]],
    );

    server.state.summaries.push({
      workspace_id: "ws",
      session_id: "s1",
      content: "They counted.",
      message_id: ids[0],
      summary_type: "short",
      created_at: new Date().toISOString(),
      token_count: 3,
    });
    const withSummary = await api(
      server,
      "GET",
      `${base}/context?tokens=100&summary=true`,
    );
    assert.equal(
      (withSummary.body as AnyJson).summary.content,
      "They counted.",
    );
    assert.deepEqual(
      (withSummary.body as AnyJson).messages.map((m: AnyJson) => m.id),
      ids.slice(1),
    );
    const noSummary = await api(server, "GET", `${base}/context?summary=false`);
    assert.equal((noSummary.body as AnyJson).summary, null);
    assert.equal((noSummary.body as AnyJson).messages.length, 3);

    await api(
      server,
      "PUT",
      "/v3/workspaces/ws/peers/hermes/card?target=alice",
      {
        peer_card: ["Alice"],
      },
    );
    const persp = await api(
      server,
      "GET",
      `${base}/context?peer_target=alice&peer_perspective=hermes&search_query=x&search_top_k=3`,
    );
    assert.equal(persp.status, 200);
    assert.equal((persp.body as AnyJson).peer_representation, "");
    assert.deepEqual((persp.body as AnyJson).peer_card, ["Alice"]);
    const orphan = await api(
      server,
      "GET",
      `${base}/context?peer_perspective=hermes`,
    );
    assert.equal(orphan.status, 422);
    const overMax = await api(server, "GET", `${base}/context?tokens=100001`);
    assert.equal(overMax.status, 422);
    const unknown = await api(
      server,
      "GET",
      "/v3/workspaces/ws/sessions/none/context",
    );
    assert.equal(unknown.status, 200);
    assert.deepEqual((unknown.body as AnyJson).messages, []);
    const summaries = await api(server, "GET", `${base}/summaries`);
    assert.equal(
      (summaries.body as AnyJson).short_summary.content,
      "They counted.",
    );
    assert.equal((summaries.body as AnyJson).long_summary, null);
    const search = await api(server, "POST", `${base}/search`, {
      query: "seven",
    });
    assert.deepEqual((search.body as AnyJson).map((m: AnyJson) => m.id), [
      ids[1],
    ]);
  });
});

Deno.test("dialectic chat: deterministic JSON and SSE answers, custom answers", async () => {
  await withServer(async (server) => {
    await api(server, "POST", "/v3/workspaces/ws/sessions/s1/messages", {
      messages: [{
        peer_id: "alice",
        content: "I climb mountains on weekends",
      }],
    });
    const path = "/v3/workspaces/ws/peers/alice/chat";
    const a = await api(server, "POST", path, {
      query: "what about mountains?",
      stream: false,
    });
    const b = await api(server, "POST", path, {
      query: "what about mountains?",
      stream: false,
    });
    assert.equal(a.status, 200);
    assert.deepEqual(a.body, b.body);
    assert.match((a.body as AnyJson).content, /I climb mountains on weekends/);
    const high = await api(server, "POST", path, {
      query: "what about mountains?",
      reasoning_level: "high",
    });
    assert.match((high.body as AnyJson).content, /\(high\)/);
    const badLevel = await api(server, "POST", path, {
      query: "q",
      reasoning_level: "extreme",
    });
    assert.equal(badLevel.status, 422);
    assert.equal((badLevel.body as AnyJson).detail[0].type, "enum");
    assert.equal((await api(server, "POST", path, { query: "" })).status, 422);

    const res = await fetch(`${server.url}${path}`, {
      method: "POST",
      headers: {
        authorization: `Bearer ${KEY}`,
        "content-type": "application/json",
      },
      body: JSON.stringify({ query: "what about mountains?", stream: true }),
    });
    assert.match(res.headers.get("content-type") ?? "", /^text\/event-stream/);
    const events = (await res.text()).split("\n\n").filter(Boolean).map((e) => {
      assert.ok(e.startsWith("data: "));
      return JSON.parse(e.slice(6));
    });
    assert.deepEqual(events.at(-1), { done: true });
    const joined = events.slice(0, -1).map((e) => e.delta.content).join("");
    assert.equal(joined, (a.body as AnyJson).content);

    server.setDialecticAnswer("fixed");
    assert.deepEqual((await api(server, "POST", path, { query: "x" })).body, {
      content: "fixed",
    });
    server.setDialecticAnswer((req) =>
      req.targetId === "bob" ? null : `about ${req.targetId}`
    );
    assert.deepEqual(
      (await api(server, "POST", path, { query: "x", target: "bob" })).body,
      {
        content: null,
      },
    );
    server.setDialecticAnswer(null);
    assert.deepEqual(
      (await api(server, "POST", path, { query: "what about mountains?" }))
        .body,
      a.body,
    );
  });
});

Deno.test("conclusions: create, list newest first, query, delete", async () => {
  await withServer(async (server) => {
    const base = "/v3/workspaces/ws/conclusions";
    const missing = await api(server, "POST", base, {
      conclusions: [{
        content: "x",
        observer_id: "hermes",
        observed_id: "alice",
      }],
    });
    assert.equal(missing.status, 404, "peers must exist");
    await api(server, "POST", "/v3/workspaces/ws/peers", { id: "hermes" });
    await api(server, "POST", "/v3/workspaces/ws/peers", { id: "alice" });
    const created = await api(server, "POST", base, {
      conclusions: [
        {
          content: "Alice likes green tea",
          observer_id: "hermes",
          observed_id: "alice",
        },
        {
          content: "Alice lives in Oslo",
          observer_id: "hermes",
          observed_id: "alice",
        },
      ],
    });
    assert.equal(created.status, 201);
    const [c1, c2] = created.body as AnyJson[];
    assert.match(c1.id, NANOID_REGEXP);
    assert.equal(c1.level, "explicit");
    assert.equal(c1.session_id, null);
    const list = await api(server, "POST", `${base}/list?page=1&size=20`, {
      filters: { observer_id: "hermes", observed_id: "alice" },
    });
    assertPage(list.body, { total: 2, page: 1, size: 20 });
    assert.deepEqual((list.body as AnyJson).items.map((c: AnyJson) => c.id), [
      c2.id,
      c1.id,
    ]);
    const query = await api(server, "POST", `${base}/query`, {
      query: "tea",
      top_k: 1,
      filters: { observer_id: "hermes", observed_id: "alice" },
    });
    assert.deepEqual((query.body as AnyJson).map((c: AnyJson) => c.id), [
      c1.id,
    ]);
    const noObserver = await api(server, "POST", `${base}/query`, {
      query: "tea",
      filters: {},
    });
    assert.equal(noObserver.status, 422);
    assert.equal((await api(server, "DELETE", `${base}/${c1.id}`)).status, 204);
    assert.equal((await api(server, "DELETE", `${base}/${c1.id}`)).status, 404);
    const after = await api(server, "POST", `${base}/list`, {});
    assert.deepEqual((after.body as AnyJson).items.map((c: AnyJson) => c.id), [
      c2.id,
    ]);
    const empty = await api(server, "POST", base, { conclusions: [] });
    assert.equal(empty.status, 422);
  });
});

Deno.test("validation: violations are recorded for bad bodies, queries and unknown routes", async () => {
  await withServer(async (server) => {
    const bad = await api(
      server,
      "POST",
      "/v3/workspaces/ws/sessions/s1/messages",
      {
        messages: [{ content: 5 }],
      },
    );
    assert.equal(bad.status, 422);
    const detail = (bad.body as AnyJson).detail;
    assert.deepEqual(detail.map((d: AnyJson) => [d.type, d.loc]), [
      ["missing", ["body", "messages", 0, "peer_id"]],
      ["string_type", ["body", "messages", 0, "content"]],
    ]);
    assert.equal(server.violations.length, 1);
    assert.equal(server.violations[0]!.kind, "body");
    assert.equal(
      server.violations[0]!.route,
      "POST /v3/workspaces/{workspace_id}/sessions/{session_id}/messages",
    );

    const notJson = await api(server, "POST", "/v3/workspaces", undefined, {
      raw: "{nope",
    });
    assert.equal(notJson.status, 422);
    assert.equal((notJson.body as AnyJson).detail[0].type, "json_invalid");
    const noBody = await api(server, "POST", "/v3/workspaces");
    assert.equal(noBody.status, 422);
    assert.deepEqual((noBody.body as AnyJson).detail[0].loc, ["body"]);
    const wrongType = await api(server, "POST", "/v3/workspaces", undefined, {
      raw: "id=x",
      contentType: "application/x-www-form-urlencoded",
    });
    assert.equal(wrongType.status, 422);

    const badQuery = await api(
      server,
      "POST",
      "/v3/workspaces/ws/peers/list?page=0&reverse=maybe",
      {},
    );
    assert.equal(badQuery.status, 422);
    assert.deepEqual(
      (badQuery.body as AnyJson).detail.map((d: AnyJson) => [d.type, d.loc]),
      [
        ["bool_parsing", ["query", "reverse"]],
        ["greater_than_equal", ["query", "page"]],
      ],
      "issues follow the declaration order of the parameters",
    );
    const extra = await api(
      server,
      "POST",
      "/v3/workspaces/ws/peers/list?pagesize=3",
      {},
    );
    assert.equal(
      extra.status,
      200,
      "FastAPI ignores undeclared query parameters",
    );

    const unknown = await api(server, "GET", "/v3/workspaces/ws/peers/alice");
    assert.equal(unknown.status, 405);
    const nowhere = await api(server, "GET", "/v3/nowhere");
    assert.equal(nowhere.status, 404);
    assert.deepEqual(nowhere.body, { detail: "Not Found" });

    assert.deepEqual(server.violations.map((v) => v.kind), [
      "body",
      "body",
      "body",
      "content_type",
      "query",
      "unknown_query_param",
      "method_not_allowed",
      "unknown_route",
    ]);
  });
});

Deno.test("validation: unknown body fields, path schemas and assertNoViolations()", async () => {
  await withServer(async (server) => {
    server.assertNoViolations();
    const typo = await api(
      server,
      "POST",
      "/v3/workspaces/ws/peers/alice/chat",
      {
        query: "hi",
        reasoningLevel: "high",
      },
    );
    assert.equal(typo.status, 200, "pydantic ignores unknown fields");
    assert.equal(server.violations.length, 1);
    const [violation] = server.violations;
    assert.equal(violation!.kind, "unknown_body_field");
    assert.deepEqual(violation!.issues.map((i) => [i.type, i.loc]), [
      ["extra_forbidden", ["body", "reasoningLevel"]],
    ]);
    assert.throws(
      () => server.assertNoViolations(),
      /unknown_body_field.*reasoningLevel/s,
    );

    const lagging = await api(server, "POST", "/v3/workspaces/ws/sessions", {
      id: "s",
      scopes: ["work"],
    });
    assert.equal(lagging.status, 201);
    const nested = await api(
      server,
      "POST",
      "/v3/workspaces/ws/sessions/s/messages",
      {
        messages: [{
          peer_id: "a",
          content: "x",
          configuration: { reasoning: { enabled: false, extra: 1 } },
        }],
      },
    );
    assert.equal(nested.status, 201);
    assert.deepEqual(
      server.violations.map((v) => v.kind),
      [
        "unknown_body_field",
        "unknown_body_field",
      ],
      "documented spec-lag fields (scopes) are allowed, nested unknown ones are not",
    );
    assert.deepEqual(server.violations[1]!.issues[0]!.loc, [
      "body",
      "messages",
      0,
      "configuration",
      "reasoning",
      "extra",
    ]);
  });
});

Deno.test("validation: metadata limits answer 422 and NUL characters are stripped", async () => {
  await withServer(async (server) => {
    const wide = Object.fromEntries(
      Array.from({ length: 101 }, (_, i) => [`k${i}`, i]),
    );
    const tooWide = await api(server, "POST", "/v3/workspaces", {
      id: "w",
      metadata: wide,
    });
    assert.equal(tooWide.status, 422);
    const [issue] = (tooWide.body as AnyJson).detail;
    assert.deepEqual([issue.type, issue.loc], ["value_error", [
      "body",
      "metadata",
    ]]);
    assert.match(issue.msg, /maximum of 100 top-level keys/);
    const deep = { a: { b: { c: { d: { e: { f: 1 } } } } } };
    const tooDeep = await api(
      server,
      "POST",
      "/v3/workspaces/w/sessions/s/messages",
      {
        messages: [{ peer_id: "p", content: "x", metadata: deep }],
      },
    );
    assert.equal(tooDeep.status, 422);
    assert.deepEqual((tooDeep.body as AnyJson).detail[0].loc, [
      "body",
      "messages",
      0,
      "metadata",
    ]);
    const ok = await api(
      server,
      "POST",
      "/v3/workspaces/w/sessions/s/messages",
      {
        messages: [{
          peer_id: "p",
          content: "a\u0000b",
          metadata: { n: "x\u0000y", d: deep.a.b },
        }],
      },
    );
    assert.equal(ok.status, 201);
    assert.equal((ok.body as AnyJson)[0].content, "ab");
    assert.deepEqual((ok.body as AnyJson)[0].metadata.n, "xy");
    assert.deepEqual(server.violations.map((v) => v.kind), ["body", "body"]);
  });
});

Deno.test("search: the peer_perspective filter limits results to the peer's sessions", async () => {
  await withServer(async (server) => {
    await api(server, "POST", "/v3/workspaces/ws/sessions", {
      id: "a",
      peers: { alice: {} },
    });
    await api(server, "POST", "/v3/workspaces/ws/sessions/a/messages", {
      messages: [{ peer_id: "bob", content: "pizza in session a" }],
    });
    await api(server, "POST", "/v3/workspaces/ws/sessions/b/messages", {
      messages: [{ peer_id: "bob", content: "pizza in session b" }],
    });
    const hits = await api(server, "POST", "/v3/workspaces/ws/search", {
      query: "pizza",
      filters: { peer_perspective: "alice" },
      limit: 10,
    });
    assert.deepEqual((hits.body as AnyJson).map((m: AnyJson) => m.session_id), [
      "a",
    ]);
    const all = await api(server, "POST", "/v3/workspaces/ws/search", {
      query: "pizza",
    });
    assert.equal((all.body as AnyJson).length, 2);
    const bad = await api(server, "POST", "/v3/workspaces/ws/search", {
      query: "pizza",
      filters: { colour: "red" },
    });
    assert.equal(bad.status, 422);
    server.assertNoViolations();
  });
});

Deno.test("remaining routes: queue status, dreams, keys, peer sessions, conclusion get, webhooks", async () => {
  await withServer(async (server) => {
    await api(server, "POST", "/v3/workspaces/ws/sessions", {
      id: "s1",
      peers: { alice: {} },
    });
    await api(server, "POST", "/v3/workspaces/ws/sessions", { id: "s2" });
    const status = await api(
      server,
      "GET",
      "/v3/workspaces/ws/queue/status?session_id=s1",
    );
    assert.equal(status.status, 200);
    assert.equal((status.body as AnyJson).pending_work_units, 0);
    const dream = await api(
      server,
      "POST",
      "/v3/workspaces/ws/schedule_dream",
      {
        observer: "alice",
        dream_type: "omni",
      },
    );
    assert.equal(dream.status, 204);
    const badDream = await api(
      server,
      "POST",
      "/v3/workspaces/ws/schedule_dream",
      {
        observer: "alice",
        dream_type: "nap",
      },
    );
    assert.equal(badDream.status, 422);
    const keys = await api(server, "POST", "/v3/keys?workspace_id=ws");
    assert.deepEqual([keys.status, keys.body], [405, {
      detail: "Feature is disabled",
    }]);
    const sessions = await api(
      server,
      "POST",
      "/v3/workspaces/ws/peers/alice/sessions",
      {},
    );
    assertPage(sessions.body, { total: 1, page: 1, size: 50 });
    assert.equal((sessions.body as AnyJson).items[0].id, "s1");

    await api(server, "POST", "/v3/workspaces/ws/peers", { id: "hermes" });
    const [c] = (await api(server, "POST", "/v3/workspaces/ws/conclusions", {
      conclusions: [{
        content: "c",
        observer_id: "hermes",
        observed_id: "alice",
        session_id: "s1",
      }],
    })).body as AnyJson[];
    const got = await api(
      server,
      "GET",
      `/v3/workspaces/ws/conclusions/${c.id}`,
    );
    assert.deepEqual([got.status, (got.body as AnyJson).session_id], [
      200,
      "s1",
    ]);
    assert.equal(
      (await api(server, "GET", "/v3/workspaces/ws/conclusions/nope")).status,
      404,
    );
    assert.deepEqual(server.violations.map((v) => v.kind), ["body"]);

    const hooks = await api(server, "GET", "/v3/workspaces/ws/webhooks");
    assert.equal(hooks.status, 501);
    assert.equal(server.violations.at(-1)!.kind, "unimplemented_route");
  });
});

Deno.test("startHonchoTestServer() reports responses that break the documented schema", async () => {
  const doc = JSON.parse(
    await Deno.readTextFile(
      new URL("../fixtures/honcho/openapi.json", import.meta.url),
    ),
  );
  doc.components.schemas.Workspace.required.push("owner");
  const dir = await Deno.makeTempDir();
  try {
    const openapiPath = `${dir}/openapi.json`;
    await Deno.writeTextFile(openapiPath, JSON.stringify(doc));
    await using server = await startHonchoTestServer({ openapiPath });
    const res = await api(server, "POST", "/v3/workspaces", { id: "w" }, {
      key: null,
    });
    assert.equal(res.status, 201);
    assert.equal(server.violations.length, 1);
    const [violation] = server.violations;
    assert.equal(violation!.kind, "response_schema");
    assert.deepEqual(violation!.issues[0]!.loc, ["response", "owner"]);
    await assert.rejects(
      startHonchoTestServer({ openapiPath: `${dir}/missing.json` }),
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("auth: 401 without or with a wrong bearer token", async () => {
  await withServer(async (server) => {
    const none = await api(server, "POST", "/v3/workspaces", { id: "w" }, {
      key: null,
    });
    assert.equal(none.status, 401);
    assert.deepEqual(none.body, { detail: "No access token provided" });
    const wrong = await api(server, "POST", "/v3/workspaces", { id: "w" }, {
      key: "nope",
    });
    assert.equal(wrong.status, 401);
    assert.deepEqual(wrong.body, { detail: "Invalid JWT" });
    assert.equal(server.state.workspaces.length, 0);
  });
  await withServer(async (server) => {
    const open = await api(server, "POST", "/v3/workspaces", { id: "w" }, {
      key: null,
    });
    assert.equal(open.status, 201, "no apiKey = auth disabled");
  }, {});
});

Deno.test("inject(): status faults with Retry-After, times and the * route", async () => {
  await withServer(async (server) => {
    const route =
      "POST /v3/workspaces/{workspace_id}/sessions/{session_id}/messages";
    const path = "/v3/workspaces/ws/sessions/s1/messages";
    const body = { messages: [{ peer_id: "alice", content: "hi" }] };
    server.inject(route, { status: 429, retryAfter: "2" });
    server.inject(route, { status: 500 });
    server.inject(route, { status: 503, times: 2 });
    server.inject(route, { status: 401 });
    const limited = await api(server, "POST", path, body);
    assert.equal(limited.status, 429);
    assert.equal(limited.headers.get("retry-after"), "2");
    assert.equal(typeof (limited.body as AnyJson).detail, "string");
    const failed = await api(server, "POST", path, body);
    assert.deepEqual([failed.status, failed.body], [500, {
      detail: "An unexpected error occurred",
    }]);
    assert.equal((await api(server, "POST", path, body)).status, 503);
    assert.equal((await api(server, "POST", path, body)).status, 503);
    assert.equal((await api(server, "POST", path, body)).status, 401);
    assert.equal((await api(server, "POST", path, body)).status, 201);
    assert.equal(
      server.state.messages.length,
      1,
      "faulted requests change nothing",
    );
    assert.equal(server.requestCount(route), 6);

    server.inject("*", { status: 503, times: Infinity });
    assert.equal(
      (await api(server, "POST", "/v3/workspaces", { id: "x" })).status,
      503,
    );
    assert.equal(
      (await api(server, "GET", "/health", undefined, { key: null })).status,
      503,
    );
    server.clearFaults();
    assert.equal(
      (await api(server, "POST", "/v3/workspaces", { id: "x" })).status,
      201,
    );
    assert.throws(
      () => server.inject("POST /v3/nope", { status: 500 }),
      RangeError,
    );
  });
});

Deno.test("inject(): malformed bodies, latency and dropped connections seen by fetch", async (t) => {
  await withServer(async (server) => {
    const route = "POST /v3/workspaces";
    await t.step("malformed: success status, unparsable JSON", async () => {
      server.inject(route, { malformed: true });
      const res = await fetch(`${server.url}/v3/workspaces`, {
        method: "POST",
        headers: {
          authorization: `Bearer ${KEY}`,
          "content-type": "application/json",
        },
        body: JSON.stringify({ id: "ws" }),
      });
      assert.equal(res.status, 200);
      await assert.rejects(res.json(), SyntaxError);
    });

    await t.step("latency delays the answer", async () => {
      server.inject(route, { latencyMs: 150 });
      const started = performance.now();
      const res = await api(server, "POST", "/v3/workspaces", { id: "ws" });
      assert.ok(performance.now() - started >= 140);
      assert.equal(res.status, 201);
    });

    await t.step(
      "drop: fetch rejects with a TypeError and nothing is stored",
      async () => {
        server.inject(route, { drop: true });
        await assert.rejects(
          fetch(`${server.url}/v3/workspaces`, {
            method: "POST",
            headers: {
              authorization: `Bearer ${KEY}`,
              "content-type": "application/json",
            },
            body: JSON.stringify({ id: "dropped" }),
          }),
          TypeError,
        );
        assert.ok(!server.state.workspaces.some((w) => w.id === "dropped"));
        const last = server.requests.at(-1)!;
        assert.equal(last.dropped, true);
        assert.equal(last.status, 0);
        assert.equal(
          (await api(server, "POST", "/v3/workspaces", { id: "after" })).status,
          201,
        );
      },
    );

    await t.step(
      "dropAfterHandling: the write lands but the answer is lost",
      async () => {
        server.inject(route, { dropAfterHandling: true });
        await assert.rejects(
          fetch(`${server.url}/v3/workspaces`, {
            method: "POST",
            headers: {
              authorization: `Bearer ${KEY}`,
              "content-type": "application/json",
            },
            body: JSON.stringify({ id: "landed" }),
          }),
          TypeError,
        );
        assert.ok(server.state.workspaces.some((w) => w.id === "landed"));
      },
    );
  });
});

Deno.test("close() cancels pending latency so no timer leaks", async () => {
  const server = await startHonchoTestServer({ latencyMs: 60_000 });
  const pending = fetch(`${server.url}/health`).then(
    async (res) => {
      await res.body?.cancel();
      return res.status;
    },
    (error: unknown) => error,
  );
  while (server.requestCount() === 0) {
    await new Promise((r) => setTimeout(r, 5));
  }
  const started = performance.now();
  await server.close();
  assert.ok(performance.now() - started < 5_000);
  const outcome = await pending;
  assert.ok(outcome === 503 || outcome instanceof TypeError, String(outcome));
});

Deno.test("@honcho-ai/sdk drives the server without OpenAPI violations", async () => {
  await using server = await startHonchoTestServer({ apiKey: KEY });
  const honcho = new Honcho({
    baseURL: server.url,
    apiKey: KEY,
    workspaceId: "sdk-ws",
    maxRetries: 0,
  });
  const alice = await honcho.peer("alice");
  const hermes = await honcho.peer("hermes", { metadata: { kind: "agent" } });
  assert.equal(alice.id, "alice");
  assert.deepEqual(hermes.metadata, { kind: "agent" });

  const session = await honcho.session("sdk-session");
  await session.addPeers([alice, [hermes, {
    observeMe: false,
    observeOthers: true,
  }]]);
  const config = await session.getPeerConfiguration(hermes);
  assert.deepEqual(config, { observeMe: false, observeOthers: true });

  const added = await session.addMessages([
    alice.message("I moved to Lisbon last spring"),
    hermes.message("Lisbon is lovely in spring"),
  ]);
  assert.equal(added.length, 2);
  assert.match(added[0]!.id, NANOID_REGEXP);

  const page = await session.messages({ size: 1 });
  assert.equal(page.total, 2);
  assert.equal(page.items[0]!.content, "I moved to Lisbon last spring");
  const all = await page.toArray();
  assert.deepEqual(all.map((m) => m.peerId), ["alice", "hermes"]);

  const answer = await alice.chat("Where does alice live? Lisbon?", {
    reasoningLevel: "medium",
  });
  assert.equal(typeof answer, "string");
  assert.match(answer as string, /Lisbon/);

  await hermes.setCard(["Alice lives in Lisbon"], alice);
  assert.deepEqual(await hermes.getCard(alice), ["Alice lives in Lisbon"]);
  assert.equal(await alice.getCard(), null);

  const created = await hermes.conclusionsOf(alice).create([
    { content: "Alice relocated to Lisbon", sessionId: session.id },
  ]);
  assert.equal(created.length, 1);
  const listed = await hermes.conclusionsOf(alice).list({ size: 20 });
  assert.deepEqual(listed.items.map((c) => c.content), [
    "Alice relocated to Lisbon",
  ]);
  const found = await hermes.conclusionsOf(alice).query("Lisbon", 5);
  assert.equal(found.length, 1);

  const context = await session.context({
    summary: true,
    tokens: 500,
    peerTarget: alice,
    peerPerspective: hermes,
  });
  assert.equal(context.messages.length, 2);
  assert.match(context.peerRepresentation ?? "", /Alice relocated to Lisbon/);
  assert.deepEqual(context.peerCard, ["Alice lives in Lisbon"]);

  const peerContext = await hermes.context({
    target: alice,
    searchQuery: "Lisbon",
  });
  assert.match(peerContext.representation ?? "", /Lisbon/);

  await hermes.conclusionsOf(alice).delete(created[0]!.id);
  const afterDelete = await hermes.conclusionsOf(alice).list();
  assert.equal(afterDelete.items.length, 0);

  const peers = await honcho.peers();
  assert.deepEqual(peers.items.map((p) => p.id), ["alice", "hermes"]);

  assert.deepEqual(server.violations, []);
  assert.equal(server.requests.filter((r) => r.status >= 400).length, 0);
});

Deno.test("@honcho-ai/sdk: uploads, search, streaming, summaries and workspace chat", async () => {
  await using server = await startHonchoTestServer({ apiKey: KEY });
  const honcho = new Honcho({
    baseURL: server.url,
    apiKey: KEY,
    workspaceId: "sdk-ws",
    maxRetries: 0,
  });
  const alice = await honcho.peer("alice");
  const hermes = await honcho.peer("hermes");
  const session = await honcho.session("s1", { metadata: { topic: "travel" } });
  await session.addPeers([alice, hermes]);
  assert.deepEqual((await session.peers()).map((p) => p.id), [
    "alice",
    "hermes",
  ]);

  const uploaded = await session.uploadFile(
    {
      filename: "user_profile.md",
      content: new TextEncoder().encode("Alice: vegetarian"),
      content_type: "text/markdown",
    },
    alice,
    { metadata: { source: "local_memory", original_file: "USER.md" } },
  );
  assert.equal(uploaded.length, 1);
  assert.deepEqual(uploaded[0]!.metadata, {
    source: "local_memory",
    original_file: "USER.md",
  });
  assert.equal(server.state.uploads[0]!.filename, "user_profile.md");
  const got = await session.getMessage(uploaded[0]!.id);
  assert.equal(got.content, "Alice: vegetarian");

  await session.addMessages([hermes.message("Noted: no meat for Alice")]);
  const hits = await honcho.search("vegetarian", {
    filters: { peer_perspective: "hermes" },
  });
  assert.deepEqual(hits.map((m) => m.content), ["Alice: vegetarian"]);
  const own = await alice.search("vegetarian");
  assert.equal(own.length, 1);
  const inSession = await session.search("meat", { limit: 3 });
  assert.equal(inSession.length, 1);

  const stream = await alice.chatStream("Is alice vegetarian?");
  let streamed = "";
  for await (const chunk of stream) streamed += chunk;
  assert.match(streamed, /vegetarian/);
  assert.equal(streamed, await alice.chat("Is alice vegetarian?"));

  const workspaceAnswer = await honcho.chat("Who is vegetarian?");
  assert.match(workspaceAnswer ?? "", /vegetarian/);

  const summaries = await session.summaries();
  assert.equal(summaries.shortSummary, null);
  const sessions = await honcho.sessions();
  assert.deepEqual(sessions.items.map((s) => s.id), ["s1"]);
  assert.equal(await hermes.representation({ target: alice }), "");

  assert.ok(
    server.requestCount("POST /v3/workspaces/{workspace_id}/chat") === 1,
  );
  server.assertNoViolations();
});
