// `hermes honcho ask` (the dialectic, as the honcho_reasoning tool) and
// `hermes honcho search` (as the honcho_search tool) through the real
// `hermes` process (the `hermes` task's launcher) against the Honcho test
// server on 127.0.0.1: text and --json, --peer, --level, a dead server, a
// refused key and no peer name.
import assert from "node:assert/strict";
import { join } from "node:path";
import { startHonchoTestServer } from "../honcho_server.ts";
import { runHermesCli } from "../helpers/hermes_cli_child.ts";

async function seed(url: string, key: string): Promise<void> {
  const headers = {
    authorization: `Bearer ${key}`,
    "content-type": "application/json",
  };
  const calls: [string, unknown][] = [
    ["/v3/workspaces", { id: "hermes" }],
    ["/v3/workspaces/hermes/peers", { id: "alice" }],
    ["/v3/workspaces/hermes/peers", { id: "hermes" }],
    ["/v3/workspaces/hermes/sessions", { id: "s1" }],
    ["/v3/workspaces/hermes/sessions/s1/messages", {
      messages: [
        { peer_id: "alice", content: "I drink green tea every morning" },
        { peer_id: "hermes", content: "Noted: green tea in the morning" },
        { peer_id: "alice", content: "My cat is called Ada" },
      ],
    }],
  ];
  for (const [path, body] of calls) {
    const res = await fetch(`${url}${path}`, {
      method: "POST",
      headers,
      body: JSON.stringify(body),
    });
    await res.body?.cancel();
    assert.ok(res.ok, `${path}: ${res.status}`);
  }
}

async function userFor(
  baseUrl: string,
  honcho: Record<string, unknown>,
): Promise<{ home: string } & AsyncDisposable> {
  const home = await Deno.realPath(
    await Deno.makeTempDir({ prefix: "hermes-ask-" }),
  );
  const root = join(home, ".hermes");
  await Deno.mkdir(root);
  const host = new URL(baseUrl).host;
  await Deno.writeTextFile(
    join(root, "config.yaml"),
    "memory:\n  provider: honcho\n  permissions:\n    honcho:\n" +
      `      net: [${JSON.stringify(host)}]\n`,
  );
  await Deno.writeTextFile(
    join(root, "honcho.json"),
    JSON.stringify({ baseUrl, ...honcho }),
    { mode: 0o600 },
  );
  return {
    home,
    async [Symbol.asyncDispose]() {
      await Deno.remove(home, { recursive: true });
    },
  };
}

Deno.test("hermes honcho ask answers from the dialectic; --json; --peer ai; --level", async () => {
  await using server = await startHonchoTestServer({ apiKey: "hch-ask-9876" });
  await seed(server.url, "hch-ask-9876");
  await using u = await userFor(server.url, {
    apiKey: "hch-ask-9876",
    peerName: "alice",
  });
  const run = (args: string[]) => runHermesCli(args, { userHome: u.home });
  const text = await run(["honcho", "ask", "What does alice drink?"]);
  assert.equal(text.code, 0, text.stderr);
  assert.equal(text.stderr, "");
  assert.match(text.stdout, /- message: I drink green tea every morning/);
  assert.doesNotMatch(text.stdout, /Ada/);

  const json = await run([
    "honcho",
    "ask",
    "What is the cat called?",
    "--level",
    "high",
    "--json",
  ]);
  assert.equal(json.code, 0, json.stderr);
  const answer = JSON.parse(json.stdout);
  assert.deepEqual(Object.keys(answer), [
    "peer",
    "query",
    "reasoningLevel",
    "answer",
  ]);
  assert.equal(answer.peer, "alice");
  assert.equal(answer.query, "What is the cat called?");
  assert.equal(answer.reasoningLevel, "high");
  assert.match(answer.answer, /My cat is called Ada/);
  const chats = server.requests.filter((r) =>
    r.route === "POST /v3/workspaces/{workspace_id}/peers/{peer_id}/chat"
  );
  assert.equal(chats.length, 2);
  assert.equal(
    (chats[1]?.body as Record<string, unknown>).reasoning_level,
    "high",
  );

  const ai = await run([
    "honcho",
    "ask",
    "Anything about green tea?",
    "--peer",
    "ai",
  ]);
  assert.equal(ai.code, 0, ai.stderr);
  assert.match(ai.stdout, /Noted: green tea/);

  const bad = await run(["honcho", "ask", "x", "--level", "extreme"]);
  assert.equal(bad.code, 2);
  assert.match(bad.stderr, /argument 'extreme' is invalid/);
  server.assertNoViolations();
});

Deno.test("hermes honcho search prints excerpts of the peer's messages; --json", async () => {
  await using server = await startHonchoTestServer({ apiKey: "hch-ask-9876" });
  await seed(server.url, "hch-ask-9876");
  await using u = await userFor(server.url, {
    apiKey: "hch-ask-9876",
    peerName: "alice",
  });
  const run = (args: string[]) => runHermesCli(args, { userHome: u.home });
  const text = await run(["honcho", "search", "green tea"]);
  assert.equal(text.code, 0, text.stderr);
  assert.equal(
    text.stdout,
    "[alice \u00b7 s1] I drink green tea every morning\n",
  );
  const json = await run(["honcho", "search", "cat", "--json"]);
  assert.equal(json.code, 0, json.stderr);
  assert.deepEqual(JSON.parse(json.stdout), {
    peer: "alice",
    query: "cat",
    result: "[alice \u00b7 s1] My cat is called Ada",
  });
  const none = await run(["honcho", "search", "volcano"]);
  assert.equal(none.code, 0, none.stderr);
  assert.equal(none.stdout, "No relevant context found.\n");
  server.assertNoViolations();
});

Deno.test("hermes honcho ask and search say why Honcho cannot answer", async () => {
  await using server = await startHonchoTestServer({
    apiKey: "hch-right-1111",
  });
  await using wrong = await userFor(server.url, {
    apiKey: "hch-wrong-2222",
    peerName: "alice",
  });
  const refused = await runHermesCli(["honcho", "ask", "hello?"], {
    userHome: wrong.home,
  });
  assert.equal(refused.code, 1);
  assert.match(
    refused.stderr,
    /^error: cannot ask Honcho: http:\/\/127\.0\.0\.1:\d+ refused the credentials \(HTTP 401/,
  );
  assert.doesNotMatch(refused.stderr, /hch-wrong-2222/);

  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const dead = `http://127.0.0.1:${(listener.addr as Deno.NetAddr).port}`;
  listener.close();
  await using gone = await userFor(dead, { peerName: "alice" });
  const down = await runHermesCli(["honcho", "search", "tea"], {
    userHome: gone.home,
  });
  assert.equal(down.code, 1);
  assert.equal(
    down.stderr,
    `error: cannot ask Honcho: ${dead} is unreachable (connection refused); fix: start the Honcho server at ${dead}, or point baseUrl at the running one: 'hermes memory setup honcho --yes --set baseUrl=http://host:port'\n`,
  );

  // The server comes from the environment only (.env), which is not the
  // user's consent to reach it the way an address in honcho.json is, and
  // config.yaml lists no memory.permissions.honcho.net for it: the launcher
  // does not grant it, and the message says where the grant goes.
  await using ungranted = await userFor(server.url, {
    apiKey: "hch-right-1111",
    peerName: "alice",
  });
  const ungrantedRoot = join(ungranted.home, ".hermes");
  await Deno.writeTextFile(
    join(ungrantedRoot, "config.yaml"),
    "memory:\n  provider: honcho\n",
  );
  await Deno.writeTextFile(
    join(ungrantedRoot, "honcho.json"),
    JSON.stringify({ apiKey: "hch-right-1111", peerName: "alice" }),
    { mode: 0o600 },
  );
  await Deno.writeTextFile(
    join(ungrantedRoot, ".env"),
    `HONCHO_BASE_URL=${server.url}\n`,
    { mode: 0o600 },
  );
  const denied = await runHermesCli(["honcho", "ask", "hello?"], {
    userHome: ungranted.home,
  });
  assert.equal(denied.code, 1);
  const host = new URL(server.url).host;
  assert.equal(
    denied.stderr,
    `error: cannot ask Honcho: this run may not connect to ${host} (no network permission); fix: ${host} is not in memory.permissions.honcho.net in config.yaml, so no run of hermes is granted it: approve it with 'hermes memory setup honcho', then run this again\n`,
  );

  await using anon = await userFor(server.url, { apiKey: "hch-right-1111" });
  const nobody = await runHermesCli(["honcho", "ask", "who am I?"], {
    userHome: anon.home,
  });
  assert.equal(nobody.code, 1);
  assert.match(
    nobody.stderr,
    /^error: no user peer is configured \(peerName\)/,
  );
});
