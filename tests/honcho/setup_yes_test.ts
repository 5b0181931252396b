// `hermes memory setup honcho --yes --set …` through the real entry point:
// on a configured home it changes only what --set names (no default pinned
// into hosts.hermes, nothing copied into config.yaml); it refuses to finish
// for Honcho cloud without an API key (naming how to give one) and saves
// nothing; a self-hosted baseUrl needs no key, gets its net grant in
// memory.permissions.honcho.net and a connection test in the same run.
import assert from "node:assert/strict";
import { join } from "node:path";
import { loadConfig } from "../../src/config/config.ts";
import { startHonchoTestServer } from "../honcho_server.ts";
import {
  hermesWithWorker as runWithWorker,
  readJson,
  type TestUser,
  testUser,
  writeJson,
} from "../helpers/honcho_cli.ts";

function hermesWithWorker(
  user: TestUser,
  args: string[],
  env: Record<string, string> = {},
): Promise<{ code: number; out: string; err: string }> {
  return runWithWorker(user, args, { env });
}

function exists(path: string): boolean {
  try {
    Deno.lstatSync(path);
    return true;
  } catch {
    return false;
  }
}

Deno.test("memory setup honcho --yes on a configured home changes only what --set names", async () => {
  await using server = await startHonchoTestServer();
  await using user = await testUser();
  const host = new URL(server.url).host;
  const honcho = {
    baseUrl: server.url,
    workspace: "team",
    hosts: {
      hermes: {
        recallMode: "tools",
        sessionStrategy: "per-session",
        peerName: "alice",
        aiPeer: "hermes",
      },
    },
  };
  await writeJson(join(user.root, "honcho.json"), honcho);
  const yaml =
    `# my settings\nmemory:\n  provider: honcho\n  permissions:\n    honcho:\n      net: ["${host}"]\n`;
  await Deno.writeTextFile(join(user.root, "config.yaml"), yaml);
  const result = await hermesWithWorker(user, [
    "memory",
    "setup",
    "honcho",
    "--yes",
    "--set",
    "dialecticMaxChars=800",
  ]);
  assert.equal(result.code, 0, result.err);
  // Before this fix: recallMode tools → hybrid, sessionStrategy per-session
  // → per-directory, 14 defaults pinned here, 21 copied into config.yaml.
  assert.deepEqual(await readJson(join(user.root, "honcho.json")), {
    ...honcho,
    hosts: { hermes: { ...honcho.hosts.hermes, dialecticMaxChars: 800 } },
  });
  const config = await loadConfig({ hermesHome: user.root });
  assert.deepEqual(config.memory, {
    provider: "honcho",
    permissions: { honcho: { net: [host] } },
  });
  assert.match(
    await Deno.readTextFile(join(user.root, "config.yaml")),
    /^# my settings/,
  );
  assert.match(result.out, /Connection OK/);
});

Deno.test("memory setup honcho --yes refuses Honcho cloud without an API key, naming how to give one, and saves nothing", async () => {
  await using user = await testUser({ provider: "" });
  const result = await hermesWithWorker(user, [
    "memory",
    "setup",
    "honcho",
    "--yes",
    "--set",
    "workspace=team",
  ]);
  assert.equal(result.code, 1, result.out);
  assert.match(result.err, /Honcho cloud .* needs an API key/);
  assert.match(result.err, /--set apiKey=<key>/);
  assert.match(result.err, /HONCHO_API_KEY/);
  assert.match(result.err, /--set baseUrl=http/);
  assert.match(result.err, /Nothing was saved/);
  assert.equal(exists(join(user.root, "config.yaml")), false);
  assert.equal(exists(join(user.root, "honcho.json")), false);
  assert.equal(exists(join(user.root, ".env")), false);

  // With the key in the environment it is fine (and nothing is written to .env).
  const keyed = await hermesWithWorker(user, [
    "memory",
    "setup",
    "honcho",
    "--yes",
    "--set",
    "workspace=team",
  ], { HONCHO_API_KEY: "hch-env-key-9876" });
  // Saved; the connection test cannot reach Honcho cloud from here (exit 1).
  assert.equal(keyed.code, 1, keyed.err);
  assert.match(keyed.err, /connection test failed: .*the settings are saved/);
  assert.doesNotMatch(keyed.out + keyed.err, /hch-env-key-9876/);
  assert.equal(exists(join(user.root, ".env")), false);
  assert.deepEqual(await readJson(join(user.root, "honcho.json")), {
    hosts: { hermes: { workspace: "team" } },
  });
});

Deno.test("memory setup honcho --yes --set baseUrl=<self-hosted>: no key needed, the net grant is written and the connection tested in the same run", async () => {
  await using server = await startHonchoTestServer();
  await using user = await testUser({ provider: "" });
  const result = await hermesWithWorker(user, [
    "memory",
    "setup",
    "honcho",
    "--yes",
    "--set",
    `baseUrl=${server.url}`,
    "--set",
    "peerName=alice",
  ]);
  assert.equal(result.code, 0, result.err);
  const host = new URL(server.url).host;
  assert.match(
    result.out,
    new RegExp(`allowed ${host} in memory.permissions.honcho.net`),
  );
  assert.match(result.out, /Connection OK: .*peers hermes, alice ready/);
  const config = await loadConfig({ hermesHome: user.root });
  assert.deepEqual(config.memory, {
    provider: "honcho",
    permissions: { honcho: { net: [host] } },
  });
  assert.deepEqual(await readJson(join(user.root, "honcho.json")), {
    baseUrl: server.url,
    hosts: { hermes: { peerName: "alice" } },
  });
  assert.ok(server.requestCount("POST /v3/workspaces") >= 1);
});
