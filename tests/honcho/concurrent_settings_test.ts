// Every `hermes honcho …` command that writes a settings file reads what it
// changes inside the file's lock: 50 concurrent `hermes` processes of one
// command (the real entry point, src/cli/main.ts) each keep their change.
// Before the fix `map`, `peers map` and `setup` (its config.yaml network
// grant) read the map or list before taking the lock, and most of 50
// concurrent changes were lost while every process exited 0.
import assert from "node:assert/strict";
import { join } from "node:path";
import {
  hermes,
  readJson,
  type RunResult,
  type TestUser,
  testUser,
} from "../helpers/honcho_cli.ts";
import { loadConfig } from "../../src/config/config.ts";

const WRITERS = 50;

/** Runs the commands as concurrent processes; every one must exit 0. */
async function all(
  user: TestUser,
  runs: { args: string[]; cwd?: string }[],
): Promise<void> {
  const results: RunResult[] = await Promise.all(
    runs.map((run) => hermes(user, run.args, { cwd: run.cwd })),
  );
  results.forEach((result, i) =>
    assert.equal(
      result.code,
      0,
      `${runs[i]!.args.join(" ")}: ${result.err}${result.out}`,
    )
  );
}

async function directories(user: TestUser, count: number): Promise<string[]> {
  const dirs = Array.from(
    { length: count },
    (_, i) => join(user.home, "work", `dir${i}`),
  );
  for (const dir of dirs) await Deno.mkdir(dir, { recursive: true });
  return dirs;
}

Deno.test("hermes honcho map: 50 concurrent processes in 50 directories keep all 50 mappings, and concurrent removals remove only theirs", async () => {
  await using user = await testUser();
  const honchoJson = join(user.root, "honcho.json");
  await Deno.writeTextFile(
    honchoJson,
    JSON.stringify({ hosts: { hermes: { workspace: "w" } } }),
    { mode: 0o600 },
  );
  const dirs = await directories(user, WRITERS);
  await all(
    user,
    dirs.map((dir, i) => ({ args: ["honcho", "map", `s${i}`], cwd: dir })),
  );
  const mapped = (await readJson(honchoJson)).sessions as Record<
    string,
    string
  >;
  const lost = dirs.filter((dir, i) => mapped[dir] !== `s${i}`);
  assert.deepEqual(lost, [], `${lost.length} of ${WRITERS} mappings lost`);

  // Half remove their mapping while 25 new directories are mapped.
  const more = (await directories(user, WRITERS + 25)).slice(WRITERS);
  await all(user, [
    ...dirs.slice(0, 25).map((dir) => ({
      args: ["honcho", "map", "--remove"],
      cwd: dir,
    })),
    ...more.map((dir, i) => ({
      args: ["honcho", "map", `t${i}`],
      cwd: dir,
    })),
  ]);
  const after = (await readJson(honchoJson)).sessions as Record<string, string>;
  const expected: Record<string, string> = {};
  dirs.slice(25).forEach((dir, i) => expected[dir] = `s${i + 25}`);
  more.forEach((dir, i) => expected[dir] = `t${i}`);
  assert.deepEqual(after, expected);
});

Deno.test("hermes honcho peers map --set: 50 concurrent processes keep all 50 account mappings", async () => {
  await using user = await testUser();
  const honchoJson = join(user.root, "honcho.json");
  await Deno.writeTextFile(
    honchoJson,
    JSON.stringify({
      userPeerAliases: { "telegram:0": "kept" },
      hosts: { hermes: { workspace: "w" } },
    }),
    { mode: 0o600 },
  );
  await all(
    user,
    Array.from({ length: WRITERS }, (_, i) => ({
      args: [
        "honcho",
        "peers",
        "map",
        "--set",
        `discord:${i}=peer${i}`,
        "--scope",
        "root",
      ],
    })),
  );
  const aliases = (await readJson(honchoJson)).userPeerAliases as Record<
    string,
    string
  >;
  const expected: Record<string, string> = { "telegram:0": "kept" };
  for (let i = 0; i < WRITERS; i++) expected[`discord:${i}`] = `peer${i}`;
  assert.deepEqual(aliases, expected);
});

Deno.test("hermes honcho setup --yes: 50 concurrent setups for 50 servers keep all 50 network grants in config.yaml", async () => {
  await using user = await testUser();
  await Deno.writeTextFile(
    join(user.root, "config.yaml"),
    "# mine\nmodel: gpt\nmemory:\n  provider: honcho\n",
  );
  await all(
    user,
    Array.from({ length: WRITERS }, (_, i) => ({
      args: [
        "honcho",
        "setup",
        "--yes",
        "--base-url",
        `http://localhost:${20000 + i}`,
        "--skip-connection-test",
      ],
    })),
  );
  const config = await loadConfig({ hermesHome: user.root });
  const memory = config.memory as Record<string, unknown>;
  const net = ((memory.permissions as Record<string, Record<string, unknown>>)
    .honcho!.net as string[]).slice().sort();
  const expected = Array.from(
    { length: WRITERS },
    (_, i) => `localhost:${20000 + i}`,
  ).sort();
  assert.deepEqual(net, expected);
  assert.equal(config.model, "gpt");
  assert.equal(memory.provider, "honcho");
});

Deno.test("hermes honcho: 50 concurrent writers of different commands (map, peers map, mode, strategy, tokens, peer, enable) keep every change", async () => {
  await using user = await testUser();
  const honchoJson = join(user.root, "honcho.json");
  await Deno.writeTextFile(
    honchoJson,
    JSON.stringify({ workspace: "w", hosts: {} }),
    { mode: 0o600 },
  );
  const dirs = await directories(user, 22);
  const runs: { args: string[]; cwd?: string }[] = [
    { args: ["honcho", "mode", "tools"] },
    { args: ["honcho", "strategy", "global"] },
    { args: ["honcho", "tokens", "--context", "1234"] },
    { args: ["honcho", "tokens", "--dialectic", "777"] },
    { args: ["honcho", "peer", "--user", "alice"] },
    { args: ["honcho", "enable"] },
    ...dirs.map((dir, i) => ({ args: ["honcho", "map", `m${i}`], cwd: dir })),
    ...Array.from({ length: 22 }, (_, i) => ({
      args: ["honcho", "peers", "map", "--set", `slack:${i}=p${i}`],
    })),
  ];
  assert.equal(runs.length, WRITERS);
  await all(user, runs);
  const saved = await readJson(honchoJson);
  const host = (saved.hosts as Record<string, Record<string, unknown>>)
    .hermes!;
  assert.equal(host.recallMode, "tools");
  assert.equal(host.sessionStrategy, "global");
  assert.equal(host.contextTokens, 1234);
  assert.equal(host.dialecticMaxChars, 777);
  assert.equal(host.peerName, "alice");
  assert.equal(host.enabled, true);
  const sessions = saved.sessions as Record<string, string>;
  assert.equal(Object.keys(sessions).length, dirs.length);
  dirs.forEach((dir, i) => assert.equal(sessions[dir], `m${i}`));
  const aliases = (saved.userPeerAliases ?? host.userPeerAliases) as Record<
    string,
    string
  >;
  assert.equal(Object.keys(aliases).length, 22);
  for (let i = 0; i < 22; i++) assert.equal(aliases[`slack:${i}`], `p${i}`);
});
