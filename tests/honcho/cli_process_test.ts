// `hermes honcho …` as a real process (src/cli/main.ts with the `hermes`
// task's flags plus the Honcho grant) against the Honcho test server: help
// and usage errors, status (also as the default command, with the server
// down, --json, --all), every settings command, broken and read-only
// honcho.json, --target-profile, sync/peers across profiles, setup from
// flags and piped keys, an existing ~/.honcho/config.json, identity and
// migrate (idempotent), enable/disable and peers map.
import assert from "node:assert/strict";
import { join } from "node:path";
import { startHonchoTestServer } from "../honcho_server.ts";
import {
  addProfile,
  hermes,
  readJson,
  testUser,
  writeJson,
} from "../helpers/honcho_cli.ts";

async function fileMode(path: string): Promise<number> {
  return (await Deno.stat(path)).mode! & 0o777;
}

function deadUrl(): string {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (listener.addr as Deno.NetAddr).port;
  listener.close();
  return `http://127.0.0.1:${port}`;
}

Deno.test("hermes honcho --help lists every command; usage errors exit 2; provider not active refuses", async () => {
  await using user = await testUser();
  const help = await hermes(user, ["honcho", "--help"]);
  assert.equal(help.code, 0, help.err);
  assert.equal(help.err, "");
  for (
    const command of [
      "status",
      "setup",
      "strategy [strategy]",
      "peer",
      "mode [mode]",
      "tokens",
      "identity [file]",
      "sync",
      "peers",
      "sessions",
      "map [name]",
      "enable",
      "disable",
      "migrate",
    ]
  ) {
    assert.match(
      help.out,
      new RegExp(`^ {2}${command.replace(/[[\]]/g, "\\$&")} `, "m"),
    );
  }
  assert.match(help.out, /--target-profile <name>/);
  const bad = await hermes(user, ["honcho", "mode", "--bogus"]);
  assert.equal(bad.code, 2);
  assert.equal(
    bad.err,
    "error: unknown option '--bogus'\nhint: run 'hermes honcho mode --help' for usage\n",
  );
  const invalid = await hermes(user, ["honcho", "mode", "fast"]);
  assert.equal(invalid.code, 2);
  assert.equal(
    invalid.err,
    "error: Cannot set recall mode 'fast': valid modes are hybrid, context, tools\nhint: run 'hermes honcho --help' for usage\n",
  );
  await using other = await testUser({ provider: "" });
  const inactive = await hermes(other, ["honcho", "status"]);
  assert.notEqual(inactive.code, 0);
  assert.equal(inactive.out, "");
});

Deno.test("hermes honcho (no command) is status: sources, masked key, card facts; --json; --all", async () => {
  await using server = await startHonchoTestServer({
    apiKey: "hch-proc-key-4242",
  });
  await using user = await testUser();
  await addProfile(user, "coder");
  const auth = {
    authorization: "Bearer hch-proc-key-4242",
    "content-type": "application/json",
  };
  for (
    const [method, path, body] of [
      ["POST", "/v3/workspaces/hermes/peers", { id: "hermes" }],
      ["PUT", "/v3/workspaces/hermes/peers/hermes/card?target=alice", {
        peer_card: ["Alice writes Rust"],
      }],
    ] as const
  ) {
    const res = await fetch(`${server.url}${path}`, {
      method,
      headers: auth,
      body: JSON.stringify(body),
    });
    await res.body?.cancel();
  }
  await writeJson(join(user.root, "honcho.json"), {
    apiKey: "hch-proc-key-4242",
    hosts: {
      hermes: { baseUrl: server.url, peerName: "alice", recallMode: "tools" },
      hermes_coder: { aiPeer: "coder", writeFrequency: "turn" },
    },
  });
  const status = await hermes(user, ["honcho"]);
  assert.equal(status.code, 0, status.err);
  assert.doesNotMatch(status.out + status.err, /hch-proc-key-4242/);
  assert.match(status.out, /^ {2}apiKey +\.\.\.4242 +root$/m);
  assert.match(status.out, /^ {2}recallMode +tools +host block$/m);
  // Settings at their defaults are listed with --verbose.
  assert.doesNotMatch(status.out, /^ {2}timeout /m);
  const verbose = await hermes(user, ["honcho", "status", "--verbose"]);
  assert.match(verbose.out, /^ {2}timeout +\(unset: 30 s\) +default$/m);
  assert.match(
    status.out,
    /User card \(hermes about alice, 1 fact\):\n {4}- Alice writes Rust/,
  );

  const env = await hermes(user, ["honcho", "status", "--json"], {
    env: { HONCHO_TIMEOUT: "12" },
  });
  const report = JSON.parse(env.out);
  assert.deepEqual(report.settings.timeout, { value: 12, source: "env" });
  assert.equal(report.settings.apiKey.value, "...4242");
  assert.equal(report.connection.ok, true);

  const all = await hermes(user, ["honcho", "status", "--all"]);
  assert.equal(all.code, 0, all.err);
  assert.match(all.out, /^\* +default +hermes +yes +tools +async /m);
  assert.match(all.out, /^ +coder +hermes_coder +yes +hybrid +turn /m);
});

Deno.test("hermes honcho status with the server down still prints local settings and the reason", async () => {
  await using user = await testUser();
  const url = deadUrl();
  await writeJson(join(user.root, "honcho.json"), {
    hosts: { hermes: { baseUrl: url, peerName: "alice" } },
  });
  const result = await hermes(user, ["honcho", "status"]);
  assert.equal(result.code, 1, "not connected: exit 1");
  assert.match(result.out, /^ {2}peerName +alice +host block$/m);
  assert.match(
    result.out,
    new RegExp(
      `Not connected: ${
        url.replaceAll(".", "\\.")
      } is unreachable \\(connection refused\\)`,
    ),
  );
  const json = JSON.parse(
    (await hermes(user, ["honcho", "status", "--json"])).out,
  );
  assert.equal(json.connection.ok, false);
  assert.match(json.connection.error, /connection refused/);
});

Deno.test("hermes honcho settings commands write $HERMES_HOME/honcho.json (0600) and only their keys", async () => {
  await using user = await testUser();
  const path = join(user.root, "honcho.json");
  await writeJson(path, {
    apiKey: "k-unchanged",
    hosts: { hermes: { peerName: "alice" }, other: { aiPeer: "o" } },
  });
  await Deno.chmod(path, 0o644);
  for (
    const args of [
      ["mode", "context"],
      ["strategy", "global"],
      ["peer", "--ai", "sage", "--reasoning", "high"],
      ["tokens", "--context", "800", "--dialectic", "700"],
      ["map", "Big Project"],
    ]
  ) {
    const result = await hermes(user, ["honcho", ...args]);
    assert.equal(result.code, 0, `${args.join(" ")}: ${result.err}`);
  }
  assert.deepEqual(await readJson(path), {
    apiKey: "k-unchanged",
    hosts: {
      hermes: {
        peerName: "alice",
        recallMode: "context",
        sessionStrategy: "global",
        aiPeer: "sage",
        dialecticReasoningLevel: "high",
        contextTokens: 800,
        dialecticMaxChars: 700,
      },
      other: { aiPeer: "o" },
    },
    sessions: { [user.cwd]: "Big-Project" },
  });
  assert.equal(await fileMode(path), 0o600);
  const sessions = await hermes(user, ["honcho", "sessions"]);
  assert.match(sessions.out, /→ Big-Project {2}← this directory/);
  const shown = await hermes(user, ["honcho", "strategy"]);
  assert.match(shown.out, /^Session strategy: global \(host block\)$/m);
  assert.match(shown.out, /^ {2}\* global /m);
});

Deno.test("hermes honcho refuses a broken or read-only honcho.json and leaves it byte-for-byte", async (t) => {
  await t.step("broken", async () => {
    await using user = await testUser();
    const path = join(user.root, "honcho.json");
    const text = '{"hosts": {"hermes": {"recallMode": "tools"}}\n';
    await Deno.writeTextFile(path, text);
    for (
      const args of [
        ["mode", "hybrid"],
        ["tokens", "--context", "5"],
        ["enable"],
        ["setup", "--yes", "--deployment", "local"],
        ["peers", "map", "--set", "a=b"],
      ]
    ) {
      const result = await hermes(user, ["honcho", ...args]);
      assert.equal(result.code, 1, args.join(" "));
      assert.ok(result.err.includes(path), result.err);
      assert.match(result.err, /does not parse at line 2, column 1/);
      assert.equal(await Deno.readTextFile(path), text);
    }
    const status = await hermes(user, ["honcho", "status"]);
    assert.equal(status.code, 1);
    assert.match(
      status.out,
      /honcho\.json \(it does not parse at line 2, column 1 .*using environment variables only\)/,
    );
  });
  await t.step("read-only", async () => {
    await using user = await testUser();
    const path = join(user.root, "honcho.json");
    await writeJson(path, { hosts: { hermes: { recallMode: "tools" } } });
    await Deno.chmod(path, 0o444);
    const before = await Deno.readFile(path);
    const result = await hermes(user, ["honcho", "mode", "context"]);
    assert.equal(result.code, 1);
    assert.equal(
      result.err,
      `error: Cannot change ${path}: the file is read-only (mode 0444); make it writable (chmod u+w) and try again, nothing was written\n`,
    );
    assert.deepEqual(await Deno.readFile(path), before);
  });
});

Deno.test("hermes honcho --target-profile writes that profile's host block; warns when it reads its own file", async () => {
  await using user = await testUser();
  const shared = join(user.root, "honcho.json");
  await writeJson(shared, { hosts: { hermes: { recallMode: "hybrid" } } });
  await addProfile(user, "coder");
  const writer = await addProfile(user, "writer");
  await writeJson(join(writer, "honcho.json"), {
    hosts: { hermes_writer: {} },
  });

  const coder = await hermes(user, [
    "honcho",
    "--target-profile",
    "coder",
    "mode",
    "tools",
  ]);
  assert.equal(coder.code, 0, coder.err);
  assert.match(
    coder.out,
    /^\[hermes_coder\] Recall mode set to tools \(hosts\.hermes_coder\.recallMode/m,
  );
  assert.equal(coder.err, "");
  const saved = await readJson(shared);
  assert.deepEqual(saved.hosts, {
    hermes: { recallMode: "hybrid" },
    hermes_coder: { recallMode: "tools" },
  });
  // The coder profile (no file of its own) reads the shared file.
  const seen = await hermes(user, ["--profile", "coder", "honcho", "mode"]);
  assert.match(
    seen.out,
    /^\[hermes_coder\] Recall mode: tools \(host block\)$/m,
  );

  const other = await hermes(user, [
    "honcho",
    "--target-profile",
    "writer",
    "mode",
    "context",
  ]);
  assert.equal(other.code, 0, other.err);
  assert.match(
    other.err,
    /warning: profile 'writer' reads its own .*writer\/honcho\.json, so this change does not reach it/,
  );
  const setup = await hermes(user, [
    "honcho",
    "--target-profile",
    "coder",
    "setup",
    "--yes",
    "--base-url",
    "http://127.0.0.1:7777",
    "--skip-connection-test",
  ]);
  assert.equal(setup.code, 0, setup.err);
  const afterSetup = (await readJson(shared)).hosts as Record<
    string,
    Record<string, unknown>
  >;
  assert.equal(afterSetup.hermes_coder!.aiPeer, "coder");
  assert.equal(afterSetup.hermes_coder!.recallMode, "tools");
  // Another profile's server goes to its own block; the default's is untouched.
  assert.equal(afterSetup.hermes_coder!.baseUrl, "http://127.0.0.1:7777");
  assert.equal((await readJson(shared)).baseUrl, undefined);
  assert.match(
    await Deno.readTextFile(
      join(user.root, "profiles", "coder", "config.yaml"),
    ),
    /127\.0\.0\.1:7777/,
  );
  const bad = await hermes(user, [
    "honcho",
    "--target-profile",
    "../x",
    "mode",
  ]);
  assert.equal(bad.code, 2);
});

Deno.test("hermes honcho sync clones the default block into profiles; peers lists them", async () => {
  await using server = await startHonchoTestServer();
  await using user = await testUser();
  await writeJson(join(user.root, "honcho.json"), {
    baseUrl: server.url,
    hosts: {
      hermes: {
        peerName: "alice",
        workspace: "team",
        recallMode: "tools",
        pinPeerName: true,
        apiKey: "not-cloned",
      },
      hermes_done: { aiPeer: "done" },
    },
  });
  await addProfile(user, "coder");
  await addProfile(user, "done");
  const dry = await hermes(user, ["honcho", "sync", "--dry-run"]);
  assert.match(
    dry.out,
    /Would clone Honcho settings into 1 profile; 1 already configured/,
  );
  const sync = await hermes(user, ["honcho", "sync"]);
  assert.equal(sync.code, 0, sync.err);
  assert.match(
    sync.out,
    /Cloned Honcho settings into 1 profile; 1 already configured/,
  );
  const saved = await readJson(join(user.root, "honcho.json"));
  assert.deepEqual((saved.hosts as Record<string, unknown>).hermes_coder, {
    recallMode: "tools",
    peerName: "alice",
    pinUserPeer: true,
    aiPeer: "coder",
    workspace: "team",
    enabled: true,
  });
  assert.ok(
    server.state.peers.some((p) =>
      p.workspace_id === "team" && p.id === "coder"
    ),
  );
  const again = await hermes(user, ["honcho", "sync"]);
  assert.match(
    again.out,
    /Cloned Honcho settings into 0 profiles; 2 already configured/,
  );
  const peers = await hermes(user, ["honcho", "peers"]);
  assert.equal(peers.code, 0, peers.err);
  assert.match(peers.out, /^\* +default +hermes +alice +hermes +team /m);
  assert.match(peers.out, /^ +coder +hermes_coder +alice +coder +team /m);
  assert.match(
    peers.out,
    /^ +done +hermes_done +\(none\) +done +hermes_done /m,
  );
});

Deno.test("hermes honcho setup --yes --api-key-stdin: host key, memory.provider, net grant, connection test", async () => {
  await using server = await startHonchoTestServer({
    apiKey: "jwt-piped-31415",
  });
  await using user = await testUser({ provider: "honcho" });
  const result = await hermes(user, [
    "honcho",
    "setup",
    "--yes",
    "--deployment",
    "local",
    "--base-url",
    server.url,
    "--api-key-stdin",
    "--peer-name",
    "alice",
    "--workspace",
    "lab",
  ], { stdin: "jwt-piped-31415\n" });
  assert.equal(result.code, 0, result.err);
  assert.doesNotMatch(result.out + result.err, /jwt-piped-31415/);
  assert.match(result.out, /API key +\.\.\.1415 \(hosts\.hermes\.apiKey\)/);
  assert.match(
    result.out,
    /Connection OK: .*workspace lab, peers hermes, alice ready/,
  );
  const path = join(user.root, "honcho.json");
  assert.equal(await fileMode(path), 0o600);
  const host =
    ((await readJson(path)).hosts as Record<string, Record<string, unknown>>)
      .hermes!;
  assert.equal(host.apiKey, "jwt-piped-31415");
  assert.equal(host.baseUrl, undefined);
  assert.equal((await readJson(path)).baseUrl, server.url);
  assert.equal(host.workspace, "lab");
  const yaml = await Deno.readTextFile(join(user.root, "config.yaml"));
  assert.match(yaml, /provider: honcho/);
  assert.ok(yaml.includes(new URL(server.url).host), yaml);

  // A server the process has no network grant for yet (the grant applies
  // from the next run): saved, and the test is skipped with a note.
  const port = new URL(server.url).port;
  const ungranted = await hermes(user, [
    "honcho",
    "setup",
    "--yes",
    "--base-url",
    `http://localhost:${port}`,
  ]);
  assert.equal(ungranted.code, 0, ungranted.err);
  assert.match(
    ungranted.out,
    new RegExp(
      `Connection not tested: this process was started without network access to localhost:${port}`,
    ),
  );
  assert.match(
    await Deno.readTextFile(join(user.root, "config.yaml")),
    new RegExp(`localhost:${port}`),
  );

  await using fresh = await testUser();
  const noKey = await hermes(fresh, [
    "honcho",
    "setup",
    "--yes",
    "--deployment",
    "cloud",
  ]);
  assert.equal(noKey.code, 1);
  assert.match(
    noKey.err,
    /Honcho cloud needs an API key: pipe it with --api-key-stdin, or set HONCHO_API_KEY/,
  );
});

Deno.test("hermes honcho setup keeps an existing ~/.honcho/config.json setup and copies it, never changing the original", async () => {
  await using server = await startHonchoTestServer();
  await using user = await testUser();
  const global = join(user.home, ".honcho", "config.json");
  await writeJson(global, {
    apiKey: "global-key-0001",
    hosts: {
      hermes: {
        baseUrl: server.url,
        peerName: "gus",
        workspace: "old-ws",
        recallMode: "context",
      },
      claude_code: { aiPeer: "claude" },
    },
  });
  const before = await Deno.readFile(global);
  const status = await hermes(user, ["honcho", "status", "--json"]);
  const report = JSON.parse(status.out);
  assert.equal(report.configPath, global);
  assert.equal(report.settings.recallMode.value, "context");
  assert.equal(report.connection.ok, true);

  const setup = await hermes(user, ["honcho", "setup", "--yes"]);
  assert.equal(setup.code, 0, setup.err);
  assert.match(
    setup.out,
    new RegExp(
      `Created ${join(user.root, "honcho.json")} from a copy of ${global}`,
    ),
  );
  assert.deepEqual(await Deno.readFile(global), before);
  const local = await readJson(join(user.root, "honcho.json"));
  assert.equal(local.apiKey, "global-key-0001");
  const hosts = local.hosts as Record<string, Record<string, unknown>>;
  assert.deepEqual(hosts.claude_code, { aiPeer: "claude" });
  assert.equal(hosts.hermes!.peerName, "gus");
  assert.equal(hosts.hermes!.workspace, "old-ws");
  assert.equal(hosts.hermes!.recallMode, "context");
  assert.equal(hosts.hermes!.baseUrl, undefined);
  assert.equal(local.baseUrl, server.url);
  assert.equal(hosts.hermes!.sessionStrategy, "per-directory");
});

Deno.test("hermes honcho identity and migrate seed and upload once, across runs", async () => {
  await using server = await startHonchoTestServer();
  await using user = await testUser();
  await writeJson(join(user.root, "honcho.json"), {
    hosts: { hermes: { baseUrl: server.url, peerName: "alice" } },
  });
  const openclaw = join(user.home, ".openclaw");
  await Deno.mkdir(openclaw);
  await Deno.writeTextFile(join(openclaw, "USER.md"), "Alice, night owl.\n");
  await Deno.writeTextFile(join(openclaw, "IDENTITY.md"), "Name: Sage.\n");
  await Deno.writeTextFile(join(user.cwd, "SOUL.md"), "Patient.\n");

  const first = await hermes(user, ["honcho", "migrate", "--yes"]);
  assert.equal(first.code, 0, first.err);
  assert.match(first.out, /Looking in: .*work\/project, .*\.openclaw/);
  assert.match(
    first.out,
    /uploaded .*\.openclaw\/USER\.md as user_profile\.md/,
  );
  assert.match(first.out, /seeded .*project\/SOUL\.md/);
  assert.match(first.out, /seeded .*\.openclaw\/IDENTITY\.md/);
  assert.equal(server.state.uploads.length, 1);
  const count = server.state.messages.length;
  const second = await hermes(user, ["honcho", "migrate", "--yes"]);
  assert.equal(second.code, 0, second.err);
  assert.equal(server.state.messages.length, count);
  assert.equal(
    await fileMode(join(user.root, "state", "honcho_migration.json")),
    0o600,
  );

  const identity = await hermes(user, ["honcho", "identity", "SOUL.md"]);
  assert.match(
    identity.out,
    /SOUL\.md was already seeded into AI peer 'hermes'/,
  );
  const show = await hermes(user, ["honcho", "identity", "--show"]);
  assert.equal(show.code, 0, show.err);
  assert.match(show.out, /What Honcho knows \(workspace hermes\)/);
});

Deno.test("hermes honcho enable, disable and peers map --set", async () => {
  await using server = await startHonchoTestServer();
  await using user = await testUser();
  const path = join(user.root, "honcho.json");
  await writeJson(path, {
    hosts: {
      hermes: { baseUrl: server.url, peerName: "alice", aiPeer: "hermes" },
    },
  });
  const disable = await hermes(user, ["honcho", "disable"]);
  assert.equal(disable.code, 0, disable.err);
  assert.match(disable.out, /Honcho disabled for host hermes/);
  const status = JSON.parse(
    (await hermes(user, ["honcho", "status", "--json"])).out,
  );
  assert.equal(status.usable, false);
  const enable = await hermes(user, ["honcho", "enable"]);
  assert.equal(enable.code, 0, enable.err);
  assert.match(enable.out, /Peers ready in workspace hermes: hermes, alice/);
  const map = await hermes(user, [
    "honcho",
    "peers",
    "map",
    "--set",
    "telegram:99=alice",
    "--scope",
    "host",
  ]);
  assert.equal(map.code, 0, map.err);
  const host =
    ((await readJson(path)).hosts as Record<string, Record<string, unknown>>)
      .hermes!;
  assert.equal(host.enabled, true);
  assert.deepEqual(host.userPeerAliases, { "telegram:99": "alice" });
});
