// The interactive `hermes honcho …` commands through a pseudo-terminal (the
// real CLI process, inquirer prompts): the setup wizard end to end against
// the Honcho test server, Ctrl-C saving nothing, migrate's step prompts,
// and the interactive `peers map`.
import assert from "node:assert/strict";
import { join } from "node:path";
import { startHonchoTestServer } from "../honcho_server.ts";
import {
  hermesPty,
  readJson,
  testUser,
  writeJson,
} from "../helpers/honcho_cli.ts";
import { KEYS } from "../helpers/pty.ts";

function exists(path: string): boolean {
  try {
    Deno.statSync(path);
    return true;
  } catch {
    return false;
  }
}

Deno.test("hermes honcho setup wizard in a terminal: self-hosted, defaults, saved and tested", async () => {
  await using server = await startHonchoTestServer();
  await using user = await testUser();
  await using term = await hermesPty(user, ["honcho", "setup"], {
    env: { USER: "dana" },
  });
  await term.expect("Where is your Honcho server?");
  await term.send(KEYS.down + KEYS.enter);
  await term.expect("Base URL of your Honcho server");
  await term.send(`${server.url}${KEYS.enter}`);
  await term.expect("API key for this server (optional; Enter for none)");
  await term.send(KEYS.enter);
  await term.expect("(dana)");
  await term.send(KEYS.enter);
  await term.expect("The assistant's peer (aiPeer)");
  await term.send(`sage${KEYS.enter}`);
  await term.expect("Workspace");
  await term.send(KEYS.enter);
  await term.expect("Observation");
  await term.send(KEYS.enter);
  await term.expect("When are turns written");
  await term.send(KEYS.down + KEYS.enter);
  await term.expect("Recall mode");
  await term.send(KEYS.down + KEYS.down + KEYS.enter);
  await term.expect("Context budget");
  await term.send(`1200${KEYS.enter}`);
  await term.expect("Dialectic cadence");
  await term.send(KEYS.enter);
  await term.expect("Dialectic reasoning level");
  await term.send(KEYS.enter);
  await term.expect("Session strategy");
  await term.send(KEYS.enter);
  await term.expect("Save these settings?");
  await term.send(`y${KEYS.enter}`);
  await term.expect("Connection OK");
  await term.expect("Start a new session to use Honcho memory.");
  assert.equal(await term.exit(), 0);
  const host =
    ((await readJson(join(user.root, "honcho.json"))).hosts as Record<
      string,
      Record<string, unknown>
    >).hermes!;
  assert.deepEqual(host, {
    enabled: true,
    workspace: "hermes",
    aiPeer: "sage",
    observationMode: "directional",
    writeFrequency: "turn",
    recallMode: "tools",
    dialecticCadence: 2,
    dialecticReasoningLevel: "low",
    sessionStrategy: "per-session",
    peerName: "dana",
    contextTokens: 1200,
    saveMessages: true,
  });
  assert.equal(
    (await readJson(join(user.root, "honcho.json"))).baseUrl,
    server.url,
  );
  assert.ok(server.state.peers.some((p) => p.id === "sage"));
  assert.match(
    await Deno.readTextFile(join(user.root, "config.yaml")),
    /provider: honcho/,
  );
});

Deno.test("hermes honcho setup in a terminal: the key is not echoed, Ctrl-C saves nothing", async () => {
  await using user = await testUser({ provider: "honcho" });
  const config = await Deno.readTextFile(join(user.root, "config.yaml"));
  await using term = await hermesPty(user, ["honcho", "setup"]);
  await term.expect("Where is your Honcho server?");
  await term.send(KEYS.enter);
  await term.expect("Get an API key at https://app.honcho.dev");
  await term.expect("Honcho API key");
  await term.send("hch-typed-secret-8080");
  await term.send(KEYS.ctrlC);
  await term.expect("Cancelled. No changes saved.");
  assert.equal(await term.exit(), 1);
  assert.doesNotMatch(term.text, /hch-typed-secret-8080/);
  assert.equal(exists(join(user.root, "honcho.json")), false);
  assert.equal(await Deno.readTextFile(join(user.root, "config.yaml")), config);
});

Deno.test("hermes honcho migrate in a terminal asks before each step", async () => {
  await using server = await startHonchoTestServer();
  await using user = await testUser();
  await writeJson(join(user.root, "honcho.json"), {
    hosts: { hermes: { baseUrl: server.url, peerName: "alice" } },
  });
  await Deno.writeTextFile(join(user.cwd, "MEMORY.md"), "Likes tea.\n");
  await Deno.writeTextFile(join(user.cwd, "SOUL.md"), "Gentle.\n");
  await using term = await hermesPty(user, ["honcho", "migrate"]);
  await term.expect("Upload MEMORY.md to user peer 'alice' now?");
  await term.send(`n${KEYS.enter}`);
  await term.expect("Seed SOUL.md into AI peer 'hermes' now?");
  await term.send(`y${KEYS.enter}`);
  await term.expect("Step 6/6: Next steps");
  assert.equal(await term.exit(), 0);
  assert.equal(server.state.uploads.length, 0);
  assert.equal(
    server.state.messages.filter((m) => m.content.includes("<source>SOUL.md"))
      .length,
    1,
  );
});

Deno.test("hermes honcho peers map in a terminal: add an account, pick a workspace peer, save", async () => {
  await using server = await startHonchoTestServer();
  await using user = await testUser();
  await writeJson(join(user.root, "honcho.json"), {
    hosts: { hermes: { baseUrl: server.url, peerName: "alice" } },
  });
  const res = await fetch(`${server.url}/v3/workspaces/hermes/peers`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ id: "bob" }),
  });
  await res.body?.cancel();
  await using term = await hermesPty(user, ["honcho", "peers", "map"]);
  await term.expect("workspace hermes, 1 peer)");
  await term.expect("Pick an account to map");
  await term.send(KEYS.enter); // "Add an account id…" is first: no accounts yet.
  await term.expect("Account id");
  await term.send(`telegram:7${KEYS.enter}`);
  await term.expect("Peer for this account");
  await term.send(KEYS.enter); // bob
  await term.expect("telegram:7 → bob");
  await term.send(KEYS.down.repeat(4) + KEYS.enter); // Save and exit
  await term.expect("Saved 1 account mapping to root userPeerAliases");
  assert.equal(await term.exit(), 0);
  assert.deepEqual(
    (await readJson(join(user.root, "honcho.json"))).userPeerAliases,
    { "telegram:7": "bob" },
  );
});
