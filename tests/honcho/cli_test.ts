// The `hermes honcho …` commands in-process (memoryCliIo): settings commands
// write only their keys to the host block or root, atomically with mode
// 0600; invalid values and broken or read-only files change nothing; status
// shows sources and what Honcho knows; identity seeds and shows; migrate
// uploads and seeds once; setup runs from flags and from scripted answers.
import assert from "node:assert/strict";
import { join } from "node:path";
import { CANCEL_PROMPT, memoryCliIo } from "../../src/cli/mod.ts";
import { withHermesHome } from "../../src/profile/context_scope.ts";
import { startHonchoTestServer } from "../honcho_server.ts";
import { honchoInProcess, readJson, writeJson } from "../helpers/honcho_cli.ts";
import { resolveScope } from "../../plugins/memory/honcho/cli/_common.ts";
import { runSetup } from "../../plugins/memory/honcho/cli/setup.ts";
import { postSetup } from "../../plugins/memory/honcho/cli.ts";
import { loadConfig } from "../../src/config/config.ts";
import { withHome } from "../helpers/test_home.ts";

/** A temporary profile home, with `honcho` as its honcho.json when given. */
function withHonchoHome(
  fn: (home: string) => Promise<void>,
  honcho?: Record<string, unknown>,
): Promise<void> {
  return withHome(
    fn,
    async (home) => {
      if (honcho) await writeJson(join(home, "honcho.json"), honcho);
    },
  );
}

async function tempHome(): Promise<string> {
  return await Deno.realPath(
    await Deno.makeTempDir({ prefix: "honcho-cli-inproc-" }),
  );
}

async function mode(path: string): Promise<number> {
  return (await Deno.stat(path)).mode! & 0o777;
}

const LOCAL = (url: string): Record<string, unknown> => ({
  hosts: {
    hermes: {
      baseUrl: url,
      peerName: "alice",
      aiPeer: "hermes",
      workspace: "hermes",
      enabled: true,
    },
  },
});

Deno.test("honcho mode shows the current mode and writes only hosts.<host>.recallMode", async () => {
  await withHonchoHome(async (home) => {
    const shown = await honchoInProcess(home, ["mode"]);
    assert.equal(shown.code, 0);
    assert.match(shown.io.out, /^Recall mode: hybrid \(default\)$/m);
    assert.match(shown.io.out, /^ {2}\* hybrid /m);

    const set = await honchoInProcess(home, ["mode", "tools"]);
    assert.equal(set.code, 0, set.io.err);
    const saved = await readJson(join(home, "honcho.json"));
    assert.deepEqual(saved, {
      sessions: { "/x": "y" },
      hosts: {
        hermes: { recallMode: "tools", peerName: "alice" },
        other: { recallMode: "context" },
      },
    });
    assert.equal(await mode(join(home, "honcho.json")), 0o600);
    const again = await honchoInProcess(home, ["mode"]);
    assert.match(again.io.out, /^Recall mode: tools \(host block\)$/m);
  }, {
    sessions: { "/x": "y" },
    hosts: { hermes: { peerName: "alice" }, other: { recallMode: "context" } },
  });
});

Deno.test("honcho mode, strategy, peer and tokens refuse invalid values and write nothing", async (t) => {
  const cases: [string, string[], RegExp][] = [
    ["mode", ["mode", "fast"], /valid modes are hybrid, context, tools/],
    [
      "strategy",
      ["strategy", "per-user"],
      /valid strategies are per-session, per-directory, per-repo, global/,
    ],
    [
      "reasoning",
      ["peer", "--reasoning", "huge"],
      /valid levels are minimal, low, medium, high, max/,
    ],
    ["peer name", ["peer", "--user", "Jane Doe"], /'Jane-Doe'/],
    ["tokens", ["tokens", "--context", "-5"], /whole number from 1 to/],
    ["dialectic", ["tokens", "--dialectic", "lots"], /whole number from 1/],
  ];
  for (const [name, args, message] of cases) {
    await t.step(name, async () => {
      await withHonchoHome(async (home) => {
        const before = await Deno.readFile(join(home, "honcho.json"));
        const result = await honchoInProcess(home, args);
        assert.equal(result.code, 2);
        assert.match(result.io.err, /^error: /);
        assert.match(result.io.err, message);
        assert.match(result.io.err, /hint: run 'hermes honcho --help'/);
        assert.deepEqual(
          await Deno.readFile(join(home, "honcho.json")),
          before,
        );
      }, { hosts: { hermes: { recallMode: "context" } } });
    });
  }
});

Deno.test("honcho strategy, peer and tokens write their keys to the host block", async () => {
  await withHonchoHome(async (home) => {
    assert.equal(
      (await honchoInProcess(home, ["strategy", "per-repo"])).code,
      0,
    );
    const peer = await honchoInProcess(home, [
      "peer",
      "--user",
      "alice",
      "--ai",
      "sage",
      "--reasoning",
      "MEDIUM",
    ]);
    assert.equal(peer.code, 0, peer.io.err);
    assert.match(peer.io.out, /User peer set to alice/);
    const tokens = await honchoInProcess(home, [
      "tokens",
      "--context",
      "uncapped",
      "--dialectic",
      "900",
    ]);
    assert.equal(tokens.code, 0, tokens.io.err);
    const saved = await readJson(join(home, "honcho.json"));
    assert.deepEqual(saved, {
      contextTokens: 2000,
      hosts: {
        hermes: {
          sessionStrategy: "per-repo",
          peerName: "alice",
          aiPeer: "sage",
          dialecticReasoningLevel: "medium",
          contextTokens: 0,
          dialecticMaxChars: 900,
        },
      },
    });
    const shown = await honchoInProcess(home, ["tokens"]);
    assert.match(
      shown.io.out,
      /Context budget: +uncapped \(contextTokens, host block\)/,
    );
    assert.match(shown.io.out, /Dialectic cap: +900 characters/);
    const peers = await honchoInProcess(home, ["peer"]);
    assert.match(peers.io.out, /^User peer: +alice \(peerName, host block\)$/m);
    assert.match(peers.io.out, /^AI peer: +sage \(aiPeer, host block\)$/m);
    assert.match(peers.io.out, /^Reasoning level: +medium/m);
  }, { contextTokens: 2000 });
});

Deno.test("honcho commands refuse a broken honcho.json, naming file and line, and leave it untouched", async () => {
  const home = await tempHome();
  try {
    const path = join(home, "honcho.json");
    const broken =
      '{\n  "hosts": {\n    "hermes": { "recallMode": "tools", }\n  }\n}\n';
    await Deno.writeTextFile(path, broken);
    for (
      const args of [["mode", "context"], ["map", "x"], ["peer", "--user", "a"]]
    ) {
      const result = await honchoInProcess(home, args);
      assert.equal(result.code, 1, args.join(" "));
      assert.match(
        result.io.err,
        new RegExp(
          `error: Cannot use ${path}: it does not parse at line 3, column \\d+`,
        ),
      );
      assert.equal(await Deno.readTextFile(path), broken);
    }
    const status = await honchoInProcess(home, ["status", "--offline"]);
    assert.equal(status.code, 1);
    assert.match(
      status.io.out,
      /^Settings \(value, then where it came from; \d+ at their defaults not shown, --verbose lists them\):$/m,
    );
    assert.match(status.io.err, /does not parse at line 3/);
    assert.equal(await Deno.readTextFile(path), broken);
  } finally {
    await Deno.remove(home, { recursive: true });
  }
});

Deno.test("honcho commands refuse a read-only honcho.json and leave it byte-for-byte", async () => {
  await withHonchoHome(async (home) => {
    const path = join(home, "honcho.json");
    await Deno.chmod(path, 0o400);
    const before = await Deno.readFile(path);
    const result = await honchoInProcess(home, ["mode", "tools"]);
    assert.equal(result.code, 1);
    assert.equal(
      result.io.err,
      `error: Cannot change ${path}: the file is read-only (mode 0400); make it writable (chmod u+w) and try again, nothing was written\n`,
    );
    assert.deepEqual(await Deno.readFile(path), before);
    assert.equal(await mode(path), 0o400);
  }, { hosts: { hermes: { recallMode: "hybrid" } } });
});

Deno.test("honcho map sanitises the name, sessions marks the working directory, --remove unmaps", async () => {
  await withHonchoHome(async (home) => {
    const cwd = Deno.cwd();
    const map = await honchoInProcess(home, ["map", "my project!"]);
    assert.equal(map.code, 0, map.io.err);
    assert.match(map.io.out, /^Session name sanitized to: my-project$/m);
    const saved = await readJson(join(home, "honcho.json"));
    assert.deepEqual(saved.sessions, {
      "/old": "old-one",
      [cwd]: "my-project",
    });
    const list = await honchoInProcess(home, ["sessions"]);
    assert.match(
      list.io.out,
      new RegExp(`${cwd} +→ my-project {2}← this directory`),
    );
    assert.match(list.io.out, /\/old +→ old-one\n/);
    const json = await honchoInProcess(home, ["sessions", "--json"]);
    assert.equal(JSON.parse(json.io.out).current.key, "my-project");
    const clean = await honchoInProcess(home, ["map", "ok_name"]);
    assert.doesNotMatch(clean.io.out, /sanitized/);
    const empty = await honchoInProcess(home, ["map", "!!!"]);
    assert.equal(empty.code, 2);
    const removed = await honchoInProcess(home, ["map", "--remove"]);
    assert.equal(removed.code, 0);
    assert.deepEqual((await readJson(join(home, "honcho.json"))).sessions, {
      "/old": "old-one",
    });
  }, { sessions: { "/old": "old-one" } });
});

Deno.test("honcho disable and enable switch the host block; --target-profile names another host", async () => {
  await using server = await startHonchoTestServer();
  await withHonchoHome(async (home) => {
    const none = await honchoInProcess(home, [
      "--target-profile",
      "coder",
      "disable",
    ]);
    assert.match(
      none.io.out,
      /no host block 'hermes_coder'.*nothing to disable/,
    );
    const enable = await honchoInProcess(home, [
      "--target-profile",
      "coder",
      "enable",
    ]);
    assert.equal(enable.code, 0, enable.io.err);
    assert.match(
      enable.io.out,
      /\[hermes_coder\] Honcho enabled for host hermes_coder/,
    );
    assert.match(
      enable.io.out,
      /Peers ready in workspace team: hermes_coder, alice/,
    );
    const saved = await readJson(join(home, "honcho.json"));
    const hosts = saved.hosts as Record<string, Record<string, unknown>>;
    assert.deepEqual(hosts.hermes_coder, {
      recallMode: "tools",
      peerName: "alice",
      aiPeer: "hermes_coder",
      workspace: "team",
      enabled: true,
    });
    assert.ok(
      server.state.peers.some((p) =>
        p.workspace_id === "team" && p.id === "hermes_coder"
      ),
    );
    const disable = await honchoInProcess(home, [
      "disable",
      "--target-profile",
      "coder",
    ]);
    assert.equal(disable.code, 0);
    const after = await readJson(join(home, "honcho.json"));
    assert.equal(
      (after.hosts as Record<string, Record<string, unknown>>).hermes_coder!
        .enabled,
      false,
    );
    const again = await honchoInProcess(home, [
      "--target-profile",
      "coder",
      "disable",
    ]);
    assert.match(again.io.out, /already disabled/);
  }, {
    baseUrl: server.url,
    hosts: {
      hermes: {
        recallMode: "tools",
        peerName: "alice",
        workspace: "team",
        apiKey: "never-copied",
      },
    },
  });
});

Deno.test("honcho status shows every setting's source, the masked key, the card and the representation", async () => {
  await using server = await startHonchoTestServer({
    apiKey: "hch-secret-key-9876",
  });
  await withHonchoHome(async (home) => {
    // Seed through an authorised request.
    for (
      const [method, path, body] of [
        ["POST", "/v3/workspaces", { id: "hermes" }],
        ["POST", "/v3/workspaces/hermes/peers", { id: "hermes" }],
        ["POST", "/v3/workspaces/hermes/peers", { id: "alice" }],
        ["PUT", "/v3/workspaces/hermes/peers/hermes/card?target=alice", {
          peer_card: ["Alice likes green tea", "Alice lives in Lyon"],
        }],
        ["POST", "/v3/workspaces/hermes/conclusions", {
          conclusions: [{
            observer_id: "hermes",
            observed_id: "hermes",
            content: "The assistant answers briefly",
          }],
        }],
      ] as const
    ) {
      const res = await fetch(`${server.url}${path}`, {
        method,
        headers: {
          authorization: "Bearer hch-secret-key-9876",
          "content-type": "application/json",
        },
        body: JSON.stringify(body),
      });
      await res.body?.cancel();
    }
    const result = await honchoInProcess(home, ["status", "--verbose"]);
    assert.equal(result.code, 0, result.io.err);
    const out = result.io.out;
    assert.doesNotMatch(out + result.io.err, /hch-secret-key-9876/);
    assert.match(out, /^ {2}apiKey +\.\.\.9876 +root$/m);
    assert.match(
      out,
      new RegExp(`^ {2}baseUrl +${server.url} +host block$`, "m"),
    );
    assert.match(out, /^ {2}recallMode +context +host block$/m);
    assert.match(out, /^ {2}writeFrequency +async +default$/m);
    assert.match(out, /^ {2}workspace +hermes +host block$/m);
    assert.match(
      out,
      /User card \(hermes about alice, 2 facts\):\n {4}- Alice likes green tea\n {4}- Alice lives in Lyon/,
    );
    assert.match(
      out,
      /AI representation \(hermes\):\n {4}## Explicit Observations/,
    );
    assert.match(out, /The assistant answers briefly/);

    const json = await honchoInProcess(home, ["--json"]);
    const report = JSON.parse(json.io.out);
    assert.equal(report.settings.apiKey.value, "...9876");
    assert.equal(report.settings.apiKey.source, "root");
    assert.equal(report.settings.recallMode.source, "host");
    assert.equal(report.connection.ok, true);
    assert.deepEqual(report.connection.userCard, [
      "Alice likes green tea",
      "Alice lives in Lyon",
    ]);
    assert.doesNotMatch(json.io.out, /hch-secret-key-9876/);
  }, {
    apiKey: "hch-secret-key-9876",
    hosts: {
      hermes: {
        baseUrl: server.url,
        peerName: "alice",
        aiPeer: "hermes",
        workspace: "hermes",
        recallMode: "context",
      },
    },
  });
});

Deno.test("honcho status with the server down prints the settings and why it could not connect", async () => {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (listener.addr as Deno.NetAddr).port;
  listener.close();
  await withHonchoHome(async (home) => {
    const result = await honchoInProcess(home, ["status", "--verbose"]);
    assert.equal(result.code, 1, "not connected: exit 1");
    assert.match(result.io.out, /^ {2}recallMode +hybrid +default$/m);
    assert.match(
      result.io.out,
      new RegExp(
        `Not connected: http://127\\.0\\.0\\.1:${port} is unreachable \\(connection refused\\)`,
      ),
    );
  }, LOCAL(`http://127.0.0.1:${port}`));
});

Deno.test("honcho status with a wrong key says the server refused it", async () => {
  await using server = await startHonchoTestServer({ apiKey: "right" });
  await withHonchoHome(async (home) => {
    const result = await honchoInProcess(home, ["status"]);
    assert.equal(result.code, 1, "not connected: exit 1");
    assert.match(
      result.io.out,
      /Not connected: .* refused the credentials \(HTTP 401/,
    );
    assert.doesNotMatch(result.io.out, /wrong-key/);
  }, { ...LOCAL(server.url), apiKey: "wrong-key" });
});

Deno.test("honcho identity seeds the AI peer once, --force seeds again, --show prints the card", async () => {
  await using server = await startHonchoTestServer();
  await withHonchoHome(async (home) => {
    const file = join(home, "SOUL.md");
    await Deno.writeTextFile(file, "I am a calm assistant.\n");
    const first = await honchoInProcess(home, ["identity", file]);
    assert.equal(first.code, 0, first.io.err);
    assert.match(
      first.io.out,
      /Seeded AI peer 'hermes' with SOUL.md \(1 message, session /,
    );
    const seeds = server.state.messages.filter((m) =>
      m.content.startsWith("<ai_identity_seed>")
    );
    assert.equal(seeds.length, 1);
    assert.equal(
      seeds[0]!.content,
      "<ai_identity_seed>\n<source>SOUL.md</source>\nI am a calm assistant.\n</ai_identity_seed>",
    );
    assert.equal(seeds[0]!.peer_id, "hermes");
    const second = await honchoInProcess(home, ["identity", file]);
    assert.match(second.io.out, /already seeded into AI peer 'hermes'/);
    assert.equal(
      server.state.messages.filter((m) =>
        m.content.startsWith("<ai_identity_seed>")
      ).length,
      1,
    );
    const forced = await honchoInProcess(home, ["identity", file, "--force"]);
    assert.match(forced.io.out, /Seeded AI peer/);
    assert.equal(
      server.state.messages.filter((m) =>
        m.content.startsWith("<ai_identity_seed>")
      ).length,
      2,
    );
    const ledger = await readJson(join(home, "state", "honcho_migration.json"));
    assert.equal(Object.keys(ledger.entries as object).length, 1);
    assert.equal(
      await mode(join(home, "state", "honcho_migration.json")),
      0o600,
    );

    const show = await honchoInProcess(home, ["identity", "--show"]);
    assert.equal(show.code, 0);
    assert.match(show.io.out, /User card \(alice\): no facts yet/);
    const usage = await honchoInProcess(home, ["identity"]);
    assert.equal(usage.code, 2);
    const missing = await honchoInProcess(home, [
      "identity",
      join(home, "NOPE.md"),
    ]);
    assert.equal(missing.code, 1);
    assert.match(
      missing.io.err,
      /Cannot seed from .*NOPE\.md: the file does not exist/,
    );
  }, LOCAL(server.url));
});

Deno.test("honcho identity without any connection settings says to run setup", async () => {
  await withHonchoHome(async (home) => {
    const result = await honchoInProcess(home, ["identity", "--show"]);
    assert.equal(result.code, 1);
    assert.match(
      result.io.err,
      /Honcho is not configured: no API key or base URL/,
    );
  }, { hosts: { hermes: { peerName: "alice" } } });
});

Deno.test("honcho migrate --yes uploads user files, seeds agent files, and sends nothing twice", async () => {
  await using server = await startHonchoTestServer();
  await withHonchoHome(async (home) => {
    const dir = join(home, "openclaw");
    await Deno.mkdir(dir);
    await Deno.writeTextFile(join(dir, "USER.md"), "Alice, vegetarian.\n");
    await Deno.writeTextFile(
      join(dir, "MEMORY.md"),
      "Prefers short answers.\n",
    );
    await Deno.writeTextFile(join(dir, "SOUL.md"), "Curious and kind.\n");
    await Deno.writeTextFile(join(dir, "TOOLS.md"), "   \n");
    await Deno.writeTextFile(join(dir, "AGENTS.md"), "Delegate tests.\n");
    const first = await honchoInProcess(home, [
      "migrate",
      "--yes",
      "--dir",
      dir,
    ]);
    assert.equal(first.code, 0, first.io.err);
    for (
      const step of [
        "Step 1/6: Honcho account",
        "Step 2/6",
        "Step 3/6",
        "Step 4/6",
        "Step 5/6",
        "Step 6/6",
      ]
    ) assert.ok(first.io.out.includes(step), step);
    assert.deepEqual(
      server.state.uploads.map((u) => [u.filename, u.peer_id, u.metadata]),
      [
        ["user_profile.md", "alice", {
          source: "local_memory",
          original_file: "USER.md",
          target_peer: "user",
          migration_id: server.state.uploads[0]!.metadata!.migration_id,
        }],
        ["consolidated_memory.md", "alice", {
          source: "local_memory",
          original_file: "MEMORY.md",
          target_peer: "user",
          migration_id: server.state.uploads[1]!.metadata!.migration_id,
        }],
      ],
    );
    assert.match(
      server.state.uploads[0]!.text,
      /^<prior_memory_file>\n<context>/,
    );
    assert.match(server.state.uploads[0]!.text, /Alice, vegetarian\./);
    const seeds = server.state.messages.filter((m) =>
      m.content.startsWith("<ai_identity_seed>")
    ).map((m) => /<source>(.*)<\/source>/.exec(m.content)![1]);
    assert.deepEqual(seeds, ["SOUL.md", "AGENTS.md"]);

    const messages = server.state.messages.length;
    const second = await honchoInProcess(home, [
      "migrate",
      "--yes",
      "--dir",
      dir,
    ]);
    assert.equal(second.code, 0, second.io.err);
    assert.match(second.io.out, /already uploaded .*USER\.md/);
    assert.match(second.io.out, /already seeded .*SOUL\.md/);
    assert.equal(server.state.messages.length, messages);
    assert.equal(server.state.uploads.length, 2);

    // Without the ledger, the server's migration_id metadata still prevents duplicates.
    await Deno.remove(join(home, "state", "honcho_migration.json"));
    const third = await honchoInProcess(home, [
      "migrate",
      "--yes",
      "--dir",
      dir,
    ]);
    assert.equal(third.code, 0, third.io.err);
    assert.equal(server.state.messages.length, messages);

    // An edited file is sent again.
    await Deno.writeTextFile(join(dir, "USER.md"), "Alice, vegan now.\n");
    await honchoInProcess(home, [
      "migrate",
      "--yes",
      "--skip-identity",
      "--dir",
      dir,
    ]);
    assert.equal(server.state.uploads.length, 3);
  }, LOCAL(server.url));
});

Deno.test("honcho migrate skips steps by flag, and asks on a terminal", async () => {
  await using server = await startHonchoTestServer();
  await withHonchoHome(async (home) => {
    const dir = join(home, "openclaw");
    await Deno.mkdir(dir);
    await Deno.writeTextFile(join(dir, "USER.md"), "Alice.\n");
    await Deno.writeTextFile(join(dir, "SOUL.md"), "Kind.\n");
    const skipped = await honchoInProcess(home, [
      "migrate",
      "--skip-upload",
      "--skip-identity",
      "--dir",
      dir,
    ]);
    assert.equal(skipped.code, 0, skipped.io.err);
    assert.match(skipped.io.out, /Skipped \(--skip-upload\)/);
    assert.match(skipped.io.out, /Skipped \(--skip-identity\)/);
    assert.equal(server.state.messages.length, 0);
    const noTerminal = await honchoInProcess(home, ["migrate", "--dir", dir]);
    assert.equal(noTerminal.code, 2);
    const asked = await honchoInProcess(home, ["migrate", "--dir", dir], {
      stdinIsTerminal: true,
      answers: [false, true],
    });
    assert.equal(asked.code, 0, asked.io.err);
    assert.deepEqual(asked.io.asked.map((p) => p.kind), ["confirm", "confirm"]);
    assert.match(
      asked.io.asked[0]!.message,
      /Upload USER\.md to user peer 'alice' now\?/,
    );
    assert.equal(server.state.uploads.length, 0);
    assert.equal(
      server.state.messages.filter((m) => m.content.includes("<source>SOUL.md"))
        .length,
      1,
    );
  }, LOCAL(server.url));
});

Deno.test("honcho migrate without a user peer uploads nothing and fails; not set up refuses", async () => {
  await using server = await startHonchoTestServer();
  await withHonchoHome(async (home) => {
    const dir = join(home, "openclaw");
    await Deno.mkdir(dir);
    await Deno.writeTextFile(join(dir, "USER.md"), "Alice.\n");
    const result = await honchoInProcess(home, [
      "migrate",
      "--yes",
      "--dir",
      dir,
    ]);
    assert.equal(result.code, 1);
    assert.match(result.io.err, /no user peer is configured/);
    assert.equal(server.state.uploads.length, 0);
  }, { hosts: { hermes: { baseUrl: server.url } } });
  await withHonchoHome(async (home) => {
    const result = await honchoInProcess(home, ["migrate", "--yes"]);
    assert.equal(result.code, 1);
    assert.match(
      result.io.err,
      /Honcho is not set up: run 'hermes honcho setup' first/,
    );
  }, {});
});

Deno.test("honcho setup from flags writes the host block, memory.provider and the net grant, keeping everything else", async () => {
  await using server = await startHonchoTestServer();
  await withHonchoHome(async (home) => {
    await Deno.writeTextFile(
      join(home, "config.yaml"),
      "# mine\nmemory:\n  permissions:\n    honcho:\n      net: [example.org]\nmodel: x\n",
    );
    const result = await honchoInProcess(home, [
      "setup",
      "--yes",
      "--deployment",
      "local",
      "--base-url",
      `${server.url}/v3/`,
      "--peer-name",
      "alice",
      "--recall-mode",
      "tools",
    ]);
    assert.equal(result.code, 0, result.io.err);
    const saved = await readJson(join(home, "honcho.json"));
    assert.deepEqual(saved.sessions, { "/kept": "kept" });
    const hosts = saved.hosts as Record<string, Record<string, unknown>>;
    assert.deepEqual(hosts.other, { aiPeer: "x" });
    assert.deepEqual(hosts.hermes, {
      dialecticCadence: 3,
      enabled: true,
      workspace: "hermes",
      aiPeer: "hermes",
      observationMode: "unified",
      writeFrequency: "async",
      recallMode: "tools",
      dialecticReasoningLevel: "low",
      sessionStrategy: "per-directory",
      peerName: "alice",
      saveMessages: true,
    });
    assert.equal(saved.baseUrl, server.url);
    assert.equal(await mode(join(home, "honcho.json")), 0o600);
    const yaml = await loadConfig({ hermesHome: home });
    assert.deepEqual(yaml.memory, {
      permissions: {
        honcho: { net: ["example.org", new URL(server.url).host] },
      },
      provider: "honcho",
    });
    assert.equal(yaml.model, "x");
    assert.match(await Deno.readTextFile(join(home, "config.yaml")), /# mine/);
    assert.match(result.io.out, /Connection OK: .*peers hermes, alice ready/);
    assert.match(
      result.io.out,
      /Tools for the model: honcho_profile, honcho_search, honcho_context, honcho_reasoning, honcho_conclude/,
    );
    assert.ok(server.state.peers.some((p) => p.id === "alice"));
  }, {
    sessions: { "/kept": "kept" },
    hosts: { hermes: { dialecticCadence: 3 }, other: { aiPeer: "x" } },
  });
});

Deno.test("honcho setup refuses bad flags before asking or writing anything", async (t) => {
  const cases: [string[], RegExp][] = [
    [["--deployment", "moon"], /valid values are cloud, local/],
    [["--base-url", "ftp://x"], /give an http:\/\/ or https:\/\/ URL/],
    [["--recall-mode", "x"], /valid values are hybrid, context, tools/],
    [
      ["--write-frequency", "often"],
      /async, turn, session, or a number of turns/,
    ],
    [["--peer-name", "a b"], /Cannot use 'a b' as peer name/],
    [
      ["--deployment", "cloud", "--base-url", "http://h"],
      /Cannot use --base-url with --deployment cloud/,
    ],
  ];
  for (const [args, message] of cases) {
    await t.step(args.join(" "), async () => {
      await withHonchoHome(async (home) => {
        const result = await honchoInProcess(home, ["setup", "--yes", ...args]);
        assert.equal(result.code, 2);
        assert.match(result.io.err, message);
        assert.deepEqual([...Deno.readDirSync(home)], []);
      });
    });
  }
  await t.step("no terminal and no flags", async () => {
    await withHonchoHome(async (home) => {
      const result = await honchoInProcess(home, ["setup"]);
      assert.equal(result.code, 2);
      assert.match(result.io.err, /standard input is not a terminal/);
    });
  });
});

Deno.test("honcho setup wizard (scripted answers): cloud key stored at root, never printed", async () => {
  await withHonchoHome(async (home) => {
    const key = "hch-v3-typed-secret-5555";
    const result = await honchoInProcess(home, [
      "setup",
      "--skip-connection-test",
    ], {
      stdinIsTerminal: true,
      env: { USER: "bob" },
      answers: [
        "cloud", // deployment
        key, // API key
        undefined, // peer name: default $USER
        undefined, // ai peer
        undefined, // workspace
        undefined, // observation
        undefined, // write frequency
        "context", // recall mode
        "1500", // context tokens
        "x", // dialectic cadence: invalid → 2
        "high", // reasoning level
        undefined, // session strategy (default per-session for a new setup)
        true, // save
      ],
    });
    assert.equal(result.code, 0, result.io.err);
    assert.equal(result.io.remainingAnswers, 0);
    assert.deepEqual(result.io.asked.map((p) => p.kind), [
      "select",
      "password",
      "input",
      "input",
      "input",
      "select",
      "select",
      "select",
      "input",
      "input",
      "select",
      "select",
      "confirm",
    ]);
    assert.equal(result.io.asked[2]!.default, "bob");
    assert.ok(!result.io.out.includes(key) && !result.io.err.includes(key));
    assert.match(result.io.out, /API key +\.\.\.5555/);
    assert.match(result.io.out, /Not a whole number of turns: using 2/);
    assert.match(result.io.out, /Tools: none in context mode/);
    const saved = await readJson(join(home, "honcho.json"));
    assert.equal(saved.apiKey, key);
    const host = (saved.hosts as Record<string, Record<string, unknown>>)
      .hermes!;
    assert.equal(host.peerName, "bob");
    assert.equal(host.recallMode, "context");
    assert.equal(host.contextTokens, 1500);
    assert.equal(host.dialecticCadence, 2);
    assert.equal(host.sessionStrategy, "per-session");
    assert.equal(host.observationMode, "directional");
    const yaml = await loadConfig({ hermesHome: home });
    assert.deepEqual(yaml.memory, {
      provider: "honcho",
      permissions: { honcho: { net: ["api.honcho.dev"] } },
    });
  });
});

Deno.test("honcho setup offers existing settings as defaults and Ctrl-C saves nothing", async () => {
  await withHonchoHome(async (home) => {
    const before = await Deno.readFile(join(home, "honcho.json"));
    const result = await honchoInProcess(home, ["setup"], {
      stdinIsTerminal: true,
      answers: [undefined, undefined, undefined, CANCEL_PROMPT],
    });
    assert.equal(result.code, 1);
    assert.match(
      result.io.out,
      /Found existing Honcho settings in .*honcho\.json/,
    );
    assert.match(result.io.out, /Cancelled\. No changes saved\./);
    assert.equal(result.io.asked[0]!.default, "local");
    assert.equal(result.io.asked[1]!.default, "http://127.0.0.1:9");
    assert.match(result.io.asked[2]!.message, /\[\.\.\.1234; Enter keeps it\]/);
    assert.equal(result.io.asked[3]!.default, "carol");
    assert.deepEqual(await Deno.readFile(join(home, "honcho.json")), before);
    assert.equal(
      [...Deno.readDirSync(home)].some((e) => e.name === "config.yaml"),
      false,
    );
  }, {
    hosts: {
      hermes: {
        baseUrl: "http://127.0.0.1:9",
        apiKey: "local-jwt-1234",
        peerName: "carol",
      },
    },
  });
});

Deno.test("honcho setup --api-key-stdin stores a self-hosted key in the host block", async () => {
  await using server = await startHonchoTestServer({
    apiKey: "jwt-abcdef-7777",
  });
  await withHonchoHome(async (home) => {
    const io = memoryCliIo();
    const code = await withHermesHome(
      home,
      () =>
        runSetup(resolveScope(io, { hermesHome: home }), {
          yes: true,
          deployment: "local",
          baseUrl: server.url,
          apiKeyStdin: true,
          peerName: "alice",
        }, { readStdin: () => Promise.resolve("jwt-abcdef-7777\n") }),
    );
    assert.equal(code, 0, io.err);
    const saved = await readJson(join(home, "honcho.json"));
    const host = (saved.hosts as Record<string, Record<string, unknown>>)
      .hermes!;
    assert.equal(host.apiKey, "jwt-abcdef-7777");
    assert.equal(saved.apiKey, undefined);
    assert.match(io.out, /Connection OK/);
    assert.ok(!io.out.includes("jwt-abcdef-7777"));
  });
});

Deno.test("honcho peers map --set writes userPeerAliases; scripted interactive map saves too", async () => {
  await withHonchoHome(async (home) => {
    const set = await honchoInProcess(home, [
      "peers",
      "map",
      "--set",
      "telegram:42=alice",
      "--set",
      "discord:7=bob",
      "--remove",
      "old:1",
    ]);
    assert.equal(set.code, 0, set.io.err);
    const saved = await readJson(join(home, "honcho.json"));
    assert.deepEqual(saved.userPeerAliases, {
      "telegram:42": "alice",
      "discord:7": "bob",
    });
    const bad = await honchoInProcess(home, ["peers", "map", "--set", "x"]);
    assert.equal(bad.code, 2);
    const noTerminal = await honchoInProcess(home, ["peers", "map"]);
    assert.equal(noTerminal.code, 2);
    const interactive = await honchoInProcess(home, [
      "peers",
      "map",
      "--scope",
      "host",
    ], {
      stdinIsTerminal: true,
      answers: [
        "\u0000add",
        "slack:U1",
        "\u0000type",
        "carol",
        "\u0000save",
      ],
    });
    assert.equal(interactive.code, 0, interactive.io.err);
    const after = await readJson(join(home, "honcho.json"));
    assert.deepEqual(
      (after.hosts as Record<string, Record<string, unknown>>).hermes!
        .userPeerAliases,
      { "telegram:42": "alice", "discord:7": "bob", "slack:U1": "carol" },
    );
  }, { userPeerAliases: { "old:1": "zed" }, hosts: { hermes: {} } });
});

Deno.test("postSetup (hermes memory setup honcho) runs the wizard in the given home", async () => {
  await using server = await startHonchoTestServer();
  await withHonchoHome(async (home) => {
    const io = memoryCliIo({
      stdinIsTerminal: true,
      answers: [
        "local",
        server.url,
        "", // no key
        "erin",
        undefined,
        undefined,
        undefined,
        undefined,
        undefined,
        undefined,
        undefined,
        undefined,
        undefined,
        true,
      ],
    });
    const code = await postSetup(home, { memory: {} }, io);
    assert.equal(code, 0, io.err);
    assert.equal(io.remainingAnswers, 0);
    const host = ((await readJson(join(home, "honcho.json"))).hosts as Record<
      string,
      Record<string, unknown>
    >).hermes!;
    assert.equal(host.peerName, "erin");
    assert.equal(
      (await readJson(join(home, "honcho.json"))).baseUrl,
      server.url,
    );
    assert.match(io.out, /Connection OK/);
    const cancelled = memoryCliIo({
      stdinIsTerminal: true,
      answers: [CANCEL_PROMPT],
    });
    assert.equal(await postSetup(home, {}, cancelled), 1);
    assert.match(cancelled.out, /Cancelled\. No changes saved\./);
  });
});

Deno.test("honcho peers map lists the gateway accounts of state.db, skipping bots and the CLI", async () => {
  await withHonchoHome(async (home) => {
    const { DatabaseSync } = await import("node:sqlite");
    const db = new DatabaseSync(join(home, "state.db"));
    db.exec("CREATE TABLE sessions (id TEXT, source TEXT, user_id TEXT)");
    db.exec(
      "INSERT INTO sessions VALUES ('a','telegram','42'),('b','cli','me'),('c','discord','bot:9'),('d','discord','77'),('e','telegram','42')",
    );
    db.close();
    const result = await honchoInProcess(home, ["peers", "map"], {
      stdinIsTerminal: true,
      answers: ["42", "\u0000type", "alice", "\u0000save"],
    });
    assert.equal(result.code, 0, result.io.err);
    const first = result.io.asked[0]!;
    assert.deepEqual(
      first.choices!.slice(0, 2).map((c) => c.name),
      ["42 (telegram) → (not mapped)", "77 (discord) → (not mapped)"],
    );
    assert.deepEqual(
      (await readJson(join(home, "honcho.json"))).userPeerAliases,
      { "42": "alice" },
    );
  }, { hosts: { hermes: { peerName: "alice" } } });
});
