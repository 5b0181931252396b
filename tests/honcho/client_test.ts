// HonchoClient against the Honcho test server (tests/honcho_server.ts):
// table-driven retry and error mapping per status and method on a fake
// clock, Retry-After, timeouts that abort, caller aborts, secrets, shapes,
// pages, multipart uploads.
import assert from "node:assert/strict";
import {
  HonchoClient,
  type HonchoClientOptions,
} from "../../plugins/memory/honcho/client/client.ts";
import {
  abortableSleep,
  type FetchLike,
  parseRetryAfter,
} from "../../plugins/memory/honcho/client/_transport.ts";
import {
  errorFromResponse,
  HonchoError,
  type HonchoErrorKind,
  isHonchoError,
} from "../../plugins/memory/honcho/client/errors.ts";
import {
  type HonchoTestServer,
  startHonchoTestServer,
} from "../honcho_server.ts";

const WS = "/v3/workspaces/{workspace_id}";
const KEY = "sk-honcho-SECRET-4242";

interface Harness {
  client: HonchoClient;
  sleeps: number[];
  fetches: { url: string; init: RequestInit }[];
}

function harness(
  server: HonchoTestServer,
  options: Partial<HonchoClientOptions> = {},
): Harness {
  const sleeps: number[] = [];
  const fetches: { url: string; init: RequestInit }[] = [];
  const fetchSpy: FetchLike = (url, init) => {
    fetches.push({ url, init });
    return fetch(url, init);
  };
  const client = new HonchoClient({
    workspaceId: "ws",
    baseUrl: server.url,
    apiKey: KEY,
    fetch: fetchSpy,
    sleep: (ms, signal) => {
      if (signal?.aborted) return Promise.reject(signal.reason);
      sleeps.push(ms);
      return Promise.resolve();
    },
    random: () => 0.5,
    ...options,
  });
  return { client, sleeps, fetches };
}

function assertStyle(error: Error): void {
  assert.match(
    error.message,
    /^[A-Z]/,
    `message starts upper-case: ${error.message}`,
  );
  assert.doesNotMatch(
    error.message,
    /\.$/,
    `no trailing period: ${error.message}`,
  );
  assert.ok(!error.message.includes(KEY), `no API key in: ${error.message}`);
  assert.ok(
    !JSON.stringify((error as HonchoError).body ?? null).includes(KEY),
    "no API key in the body",
  );
}

interface MethodCase {
  name: string;
  route: string;
  retried: boolean;
  call: (client: HonchoClient) => Promise<unknown>;
}

const METHOD_CASES: MethodCase[] = [
  {
    name: "GET peer card",
    route: `GET ${WS}/peers/{peer_id}/card`,
    retried: true,
    call: (c) => c.getPeerCard("alice"),
  },
  {
    name: "GET session context",
    route: `GET ${WS}/sessions/{session_id}/context`,
    retried: true,
    call: (c) => c.getSessionContext("s1", { tokens: 100 }),
  },
  {
    name: "POST get-or-create peer",
    route: `POST ${WS}/peers`,
    retried: true,
    call: (c) => c.getOrCreatePeer("alice"),
  },
  {
    name: "POST get-or-create session",
    route: `POST ${WS}/sessions`,
    retried: true,
    call: (c) => c.getOrCreateSession("s1"),
  },
  {
    name: "POST list messages",
    route: `POST ${WS}/sessions/{session_id}/messages/list`,
    retried: true,
    call: (c) => c.listMessages("s1"),
  },
  {
    name: "POST peer search",
    route: `POST ${WS}/peers/{peer_id}/search`,
    retried: true,
    call: (c) => c.searchPeer("alice", "tea"),
  },
  {
    name: "PUT peer card",
    route: `PUT ${WS}/peers/{peer_id}/card`,
    retried: true,
    call: (c) => c.setPeerCard("alice", ["likes tea"]),
  },
  {
    name: "POST create messages",
    route: `POST ${WS}/sessions/{session_id}/messages`,
    retried: false,
    call: (c) => c.createMessages("s1", [{ peerId: "alice", content: "hi" }]),
  },
  {
    name: "POST create conclusions",
    route: `POST ${WS}/conclusions`,
    retried: false,
    call: (c) =>
      c.createConclusions([{
        observerId: "hermes",
        observedId: "alice",
        content: "x",
      }]),
  },
  {
    name: "POST upload file",
    route: `POST ${WS}/sessions/{session_id}/messages/upload`,
    retried: false,
    call: (c) =>
      c.uploadFile("s1", { peerId: "alice", file: "text", filename: "a.md" }),
  },
  {
    name: "DELETE conclusion",
    route: `DELETE ${WS}/conclusions/{conclusion_id}`,
    retried: false,
    call: (c) => c.deleteConclusion("abcdefghijklmnopqrstu"),
  },
];

const STATUS_CASES: [number, HonchoErrorKind][] = [
  [400, "validation"],
  [401, "auth"],
  [403, "auth"],
  [404, "not_found"],
  [409, "conflict"],
  [422, "validation"],
  [429, "rate_limited"],
  [500, "server_error"],
  [502, "server_error"],
  [503, "server_error"],
  [504, "server_error"],
];

const RETRIED_STATUSES = new Set([429, 500, 502, 503, 504]);

Deno.test("HonchoClient retries only idempotent requests, only on 429 and 5xx, and maps every status", async (t) => {
  await using server = await startHonchoTestServer();
  for (const method of METHOD_CASES) {
    await t.step(method.name, async (t) => {
      for (const [status, kind] of STATUS_CASES) {
        await t.step(`${status}`, async () => {
          server.clearFaults();
          server.inject(method.route, {
            status,
            detail: `injected ${status}`,
            times: Infinity,
          });
          const { client, sleeps } = harness(server, { maxRetries: 2 });
          const before = server.requestCount(method.route);
          const error = await method.call(client).then(
            () => assert.fail("expected a failure"),
            (e: unknown) => e as HonchoError,
          );
          assert.ok(isHonchoError(error, kind), `${error.name} is ${kind}`);
          assert.equal(error.status, status);
          assert.match(
            error.message,
            new RegExp(`failed with ${status}: injected ${status}$`),
          );
          assertStyle(error);
          const attempts = method.retried && RETRIED_STATUSES.has(status)
            ? 3
            : 1;
          assert.equal(server.requestCount(method.route) - before, attempts);
          // Full jitter with random() = 0.5: half of 500 ms, then of 1000 ms.
          assert.deepEqual(sleeps, attempts === 3 ? [250, 500] : []);
        });
      }
    });
  }
  server.clearFaults();
});

Deno.test("HonchoClient retries connection errors of idempotent requests only", async () => {
  const gone = await startHonchoTestServer();
  const url = gone.url;
  await gone.close();
  for (
    const [retried, call] of [
      [true, (c: HonchoClient) => c.getPeerCard("alice")],
      [
        false,
        (c: HonchoClient) =>
          c.createMessages("s1", [{ peerId: "alice", content: "hi" }]),
      ],
    ] as const
  ) {
    let calls = 0;
    const sleeps: number[] = [];
    const client = new HonchoClient({
      workspaceId: "ws",
      baseUrl: url,
      apiKey: KEY,
      fetch: (input, init) => {
        calls++;
        return fetch(input, init);
      },
      sleep: (ms) => {
        sleeps.push(ms);
        return Promise.resolve();
      },
    });
    const error = await call(client).catch((e: unknown) => e as HonchoError);
    assert.ok(isHonchoError(error, "connection"), String(error));
    assertStyle(error);
    assert.ok(error.cause instanceof TypeError);
    assert.equal(calls, retried ? 3 : 1);
    assert.equal(sleeps.length, retried ? 2 : 0);
  }
});

Deno.test("HonchoClient honours Retry-After (seconds or HTTP date), capped", async (t) => {
  await using server = await startHonchoTestServer();
  const route = `GET ${WS}/peers/{peer_id}/card`;
  await t.step("seconds", async () => {
    server.clearFaults();
    server.inject(route, { status: 429, retryAfter: "2", times: Infinity });
    const { client, sleeps } = harness(server);
    const error = await client.getPeerCard("alice").catch((e: unknown) => e);
    assert.ok(isHonchoError(error, "rate_limited"));
    assert.equal(error.retryAfterMs, 2_000);
    assert.deepEqual(sleeps, [2_000, 2_000]);
  });
  await t.step("HTTP date against the injected clock", async () => {
    server.clearFaults();
    const { client, sleeps } = harness(server, {
      now: () => Date.parse("Wed, 21 Oct 2026 07:28:00 GMT"),
    });
    await client.getOrCreatePeer("alice");
    server.inject(route, {
      status: 503,
      retryAfter: "Wed, 21 Oct 2026 07:28:05 GMT",
    });
    await client.getPeerCard("alice");
    assert.deepEqual(sleeps, [5_000]);
  });
  await t.step("capped", async () => {
    server.clearFaults();
    server.inject(route, { status: 429, retryAfter: "3600" });
    const { client, sleeps } = harness(server, { retryAfterCapMs: 10_000 });
    assert.equal(await client.getPeerCard("alice"), null);
    assert.deepEqual(sleeps, [10_000]);
  });
  server.clearFaults();
});

Deno.test("HonchoClient's timeout aborts the fetch; an idempotent read is retried, a write never", async () => {
  await using server = await startHonchoTestServer();
  const route = `GET ${WS}/peers/{peer_id}/card`;
  server.inject(route, { latencyMs: 5_000, times: Infinity });
  const { client, sleeps, fetches } = harness(server, {
    timeoutMs: 100,
    maxRetries: 1,
  });
  const started = performance.now();
  const error = await client.getPeerCard("alice").catch((e: unknown) => e);
  assert.ok(isHonchoError(error, "timeout"), String(error));
  assertStyle(error);
  assert.match(error.message, /timed out after 100 ms/);
  assert.ok(performance.now() - started < 2_000);
  assert.equal(fetches.length, 2);
  assert.ok(fetches.every((f) => f.init.signal?.aborted === true));
  assert.deepEqual(sleeps, [250]);

  const messages = `POST ${WS}/sessions/{session_id}/messages`;
  server.inject(messages, { latencyMs: 5_000 });
  fetches.length = 0;
  const write = await client.createMessages("s1", [{
    peerId: "alice",
    content: "hi",
  }]).catch((e: unknown) => e);
  assert.ok(isHonchoError(write, "timeout"), String(write));
  assert.equal(fetches.length, 1);
  server.clearFaults();
});

Deno.test("HonchoClient rethrows a caller abort unchanged and never retries it", async (t) => {
  await using server = await startHonchoTestServer();
  const route = `GET ${WS}/peers/{peer_id}/card`;

  await t.step("during the request", async () => {
    server.inject(route, { latencyMs: 5_000 });
    const { client, sleeps } = harness(server);
    const controller = new AbortController();
    const reason = new Error("Stopped by the caller");
    const before = server.requestCount(route);
    const pending = client.getPeerCard("alice", { signal: controller.signal });
    setTimeout(() => controller.abort(reason), 50);
    await assert.rejects(pending, (e) => e === reason);
    assert.equal(server.requestCount(route) - before, 1);
    assert.deepEqual(sleeps, []);
    server.clearFaults();
  });

  await t.step("during the backoff sleep", async () => {
    server.inject(route, { status: 503, times: Infinity });
    const { client } = harness(server, {
      sleep: abortableSleep,
      retryBaseDelayMs: 60_000,
      random: () => 1,
    });
    const controller = new AbortController();
    const reason = new Error("Shutting down");
    const before = server.requestCount(route);
    const pending = client.getPeerCard("alice", { signal: controller.signal });
    while (server.requestCount(route) === before) {
      await new Promise((r) => setTimeout(r, 5));
    }
    await new Promise((r) => setTimeout(r, 20));
    const started = performance.now();
    controller.abort(reason);
    await assert.rejects(pending, (e) => e === reason);
    assert.ok(performance.now() - started < 1_000);
    assert.equal(server.requestCount(route) - before, 1);
    server.clearFaults();
  });

  await t.step("already aborted: no request at all", async () => {
    const { client, fetches } = harness(server);
    const reason = new Error("Too late");
    await assert.rejects(
      client.getPeerCard("alice", { signal: AbortSignal.abort(reason) }),
      (e) => e === reason,
    );
    assert.equal(fetches.length, 0);
  });

  await t.step("listeners on the caller's signal are removed", async () => {
    const controller = new AbortController();
    const signal = controller.signal;
    let added = 0;
    let removed = 0;
    const add = signal.addEventListener.bind(signal);
    const remove = signal.removeEventListener.bind(signal);
    signal.addEventListener =
      ((...args: Parameters<AbortSignal["addEventListener"]>) => {
        added++;
        add(...args);
      }) as AbortSignal["addEventListener"];
    signal.removeEventListener =
      ((...args: Parameters<AbortSignal["removeEventListener"]>) => {
        removed++;
        remove(...args);
      }) as AbortSignal["removeEventListener"];
    server.inject(route, { status: 503 });
    const { client } = harness(server);
    await client.getOrCreatePeer("alice", { signal });
    await client.getPeerCard("alice", { signal });
    assert.ok(added >= 3);
    assert.equal(removed, added);
  });
});

Deno.test("HonchoClient keeps the API key out of errors, even when the server echoes it", async () => {
  await using server = await startHonchoTestServer();
  server.inject(`GET ${WS}/peers/{peer_id}/card`, {
    status: 401,
    detail: `Invalid token ${KEY}`,
  });
  const { client } = harness(server);
  const error = await client.getPeerCard("alice").catch((e: unknown) =>
    e as HonchoError
  );
  assert.ok(isHonchoError(error, "auth"));
  assertStyle(error);
  assert.match(error.message, /Invalid token \[redacted\]/);
  assert.deepEqual(error.body, { detail: "Invalid token [redacted]" });
});

Deno.test("HonchoClient sends the bearer token, telemetry headers and encoded path segments", async () => {
  await using server = await startHonchoTestServer({ apiKey: KEY });
  const { client, fetches } = harness(server, {
    baseUrl: `${server.url}/v3/`,
    headers: { "X-Honcho-Plugin": "hermes-plugin-honcho/1.0.0" },
  });
  await client.getPeerCard("a/b c?").catch(() => {});
  const sent = fetches[0]!;
  assert.equal(
    new URL(sent.url).pathname,
    "/v3/workspaces/ws/peers/a%2Fb%20c%3F/card",
  );
  const headers = sent.init.headers as Record<string, string>;
  assert.equal(headers.Authorization, `Bearer ${KEY}`);
  assert.equal(headers["X-Honcho-Plugin"], "hermes-plugin-honcho/1.0.0");
  await client.getOrCreatePeer("alice");
  assert.equal(
    (fetches[1]!.init.headers as Record<string, string>)["Content-Type"],
    "application/json",
  );
  assert.equal(fetches[1]!.init.body, JSON.stringify({ id: "alice" }));
});

Deno.test("HonchoClient checks response shapes at the boundary", async (t) => {
  await t.step("malformed JSON from the server", async () => {
    await using server = await startHonchoTestServer();
    server.inject(`POST ${WS}/peers`, { malformed: true, times: Infinity });
    const { client } = harness(server);
    const error = await client.getOrCreatePeer("alice").catch((e: unknown) =>
      e
    );
    assert.ok(isHonchoError(error, "invalid_response"), String(error));
    assertStyle(error);
  });
  await t.step("JSON of the wrong shape", async () => {
    const client = new HonchoClient({
      workspaceId: "ws",
      baseUrl: "http://127.0.0.1:9",
      maxRetries: 0,
      fetch: () => Promise.resolve(Response.json({ peer_card: "not a list" })),
    });
    const error = await client.getPeerCard("alice").catch((e: unknown) => e);
    assert.ok(isHonchoError(error, "invalid_response"));
    assert.match(error.message, /card\.peer_card is not an array/);
  });
});

Deno.test("HonchoClient covers every endpoint of plugins/memory/honcho/SPEC.md §13 without OpenAPI violations", async () => {
  await using server = await startHonchoTestServer({ apiKey: KEY });
  const { client } = harness(server);
  assert.equal((await client.getOrCreateWorkspace()).id, "ws");
  assert.equal(
    (await client.getOrCreatePeer("alice", { metadata: { a: 1 } })).id,
    "alice",
  );
  const session = await client.getOrCreateSession("s1", {
    peers: { alice: { observeMe: true, observeOthers: false } },
  });
  assert.equal(session.isActive, true);
  await client.addSessionPeers("s1", {
    hermes: { observeMe: false, observeOthers: true },
  });
  assert.deepEqual(await client.getSessionPeerConfig("s1", "hermes"), {
    observeMe: false,
    observeOthers: true,
  });
  const stored = await client.createMessages("s1", [
    {
      peerId: "alice",
      content: "I like green tea",
      metadata: { k: "v" },
      createdAt: new Date(0),
    },
    { peerId: "hermes", content: "Noted" },
  ]);
  assert.deepEqual(stored.map((m) => m.content), ["I like green tea", "Noted"]);
  assert.deepEqual(stored[0]!.metadata, { k: "v" });
  const context = await client.getSessionContext("s1", {
    tokens: 1000,
    summary: true,
    peerTarget: "alice",
    peerPerspective: "hermes",
  });
  assert.equal(context.messages.length, 2);
  assert.equal(context.summary, null);
  assert.ok(
    Array.isArray(await client.searchPeer("alice", "tea", { limit: 5 })),
  );
  assert.deepEqual(
    await client.setPeerCard("hermes", ["Likes tea"], { target: "alice" }),
    ["Likes tea"],
  );
  assert.deepEqual(await client.getPeerCard("hermes", { target: "alice" }), [
    "Likes tea",
  ]);
  const peerContext = await client.getPeerContext("hermes", {
    target: "alice",
    searchQuery: "tea",
  });
  assert.deepEqual(peerContext.peerCard, ["Likes tea"]);
  assert.equal(
    typeof await client.getPeerRepresentation("hermes", { target: "alice" }),
    "string",
  );
  assert.equal(
    typeof await client.peerChat("hermes", "Who is alice?", {
      target: "alice",
      reasoningLevel: "low",
    }),
    "string",
  );
  const [conclusion] = await client.createConclusions([
    {
      observerId: "hermes",
      observedId: "alice",
      content: "Likes tea",
      sessionId: "s1",
    },
  ]);
  const filters = { observer_id: "hermes", observed_id: "alice" };
  assert.deepEqual(
    (await client.listConclusions({ filters, size: 20 })).items.map((c) =>
      c.id
    ),
    [conclusion!.id],
  );
  assert.ok(
    Array.isArray(await client.queryConclusions("tea", { filters, topK: 20 })),
  );
  await client.deleteConclusion(conclusion!.id);
  assert.equal((await client.listConclusions({ filters })).items.length, 0);
  const uploaded = await client.uploadFile("s1", {
    peerId: "alice",
    file: "# Profile\nLikes tea",
    filename: "user_profile.md",
    metadata: {
      source: "local_memory",
      original_file: "USER.md",
      target_peer: "user",
    },
  });
  assert.ok(uploaded.length >= 1);
  const upload = server.state.uploads[0]!;
  assert.equal(upload.filename, "user_profile.md");
  assert.equal(upload.peer_id, "alice");
  assert.deepEqual(upload.metadata, {
    source: "local_memory",
    original_file: "USER.md",
    target_peer: "user",
  });
  assert.deepEqual((await client.listPeers()).items.map((p) => p.id).sort(), [
    "alice",
    "hermes",
  ]);
  assert.deepEqual((await client.listWorkspaces()).items.map((w) => w.id), [
    "ws",
  ]);
  assert.equal(client.withWorkspace("ws"), client);
  assert.equal(client.withWorkspace("other").workspaceId, "other");
  assert.deepEqual(server.violations, []);
});

Deno.test("HonchoClient pages: items, nextPage() and for-await across pages", async () => {
  await using server = await startHonchoTestServer();
  const { client } = harness(server);
  for (let batch = 0; batch < 3; batch++) {
    const count = batch < 2 ? 100 : 50;
    await client.createMessages(
      "s1",
      Array.from(
        { length: count },
        (_, i) => ({ peerId: "alice", content: `m${batch * 100 + i}` }),
      ),
    );
  }
  const listRoute = `POST ${WS}/sessions/{session_id}/messages/list`;
  const before = server.requestCount(listRoute);
  const first = await client.listMessages("s1", { size: 100 });
  assert.equal(first.items.length, 100);
  assert.equal(first.total, 250);
  assert.equal(first.hasNextPage(), true);
  const all: string[] = [];
  for await (const message of first) all.push(message.content);
  assert.deepEqual(all, Array.from({ length: 250 }, (_, i) => `m${i}`));
  assert.equal(server.requestCount(listRoute) - before, 3);
  const newest = await client.listMessages("s1", { size: 10, reverse: true });
  assert.equal(newest.items[0]!.content, "m249");
  assert.equal((await newest.toArray({ limit: 15 })).length, 15);
});

Deno.test("HonchoClient validates batches before sending", () => {
  const client = new HonchoClient({
    workspaceId: "ws",
    fetch: () => Promise.reject(new Error("No request expected")),
  });
  assert.throws(() => client.createMessages("s", []), RangeError);
  assert.throws(
    () =>
      client.createMessages(
        "s",
        Array.from({ length: 101 }, () => ({ peerId: "p", content: "x" })),
      ),
    RangeError,
  );
  assert.throws(
    () =>
      client.createMessages("s", [{
        peerId: "p",
        content: "x".repeat(25_001),
      }]),
    RangeError,
  );
  assert.throws(() => new HonchoClient({ workspaceId: "" }), RangeError);
  assert.throws(
    () => new HonchoClient({ workspaceId: "ws", timeoutMs: 0 }),
    RangeError,
  );
});

Deno.test("HonchoClient.fromConfig() sends the local placeholder key to a local server", async () => {
  await using server = await startHonchoTestServer({ apiKey: "local" });
  const client = HonchoClient.fromConfig({
    apiKey: "env-key",
    apiKeyInFile: false,
    baseUrl: `${server.url}/v3/`,
    environment: "production",
    timeout: 2,
    workspaceId: "ws",
  }, { hermesVersion: "0.9.0", platform: "linux" });
  assert.equal(client.baseUrl, server.url);
  assert.equal(client.timeoutMs, 2_000);
  assert.equal((await client.getOrCreateWorkspace()).id, "ws");
});

Deno.test("parseRetryAfter() and errorFromResponse() edge cases", () => {
  assert.equal(parseRetryAfter(null, 0), undefined);
  assert.equal(parseRetryAfter("1.5", 0), 1_500);
  assert.equal(parseRetryAfter("Thu, 01 Jan 1970 00:00:01 GMT", 5_000), 0);
  const validation = errorFromResponse(422, {
    detail: [{
      loc: ["body", "messages", 0, "content"],
      msg: "too long",
      type: "x",
    }],
  }, { method: "POST", path: "/v3/x" });
  assert.ok(isHonchoError(validation, "validation"));
  assert.equal(
    validation.message,
    "Honcho POST /v3/x failed with 422: body.messages.0.content: too long",
  );
  const teapot = errorFromResponse(418, "short and stout");
  assert.equal(teapot.constructor, HonchoError);
  assert.equal(
    teapot.message,
    "Honcho request failed with 418: short and stout",
  );
});
