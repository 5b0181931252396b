// The bundled providers work under the narrowed grant: Honcho writes its
// outbox in $HERMES_HOME/honcho/ and reaches a self-hosted server only
// once memory.permissions.honcho.net grants it (and says so, once, when
// it does not); archive checkpoints into $HERMES_HOME/archive/. Neither
// gets anything else of the profile.
import assert from "node:assert/strict";
import { join } from "node:path";
import { loadMemoryProvider } from "../../src/plugins/provider_loader.ts";
import { providerPermissions } from "../../src/plugins/provider_permissions.ts";
import {
  getDefaultHermesRoot,
  getUserHome,
} from "../../src/profile/hermes_home.ts";
import type { SandboxedMemoryProvider } from "../../src/sandbox/sandboxed_provider.ts";
import { startHonchoTestServer } from "../honcho_server.ts";
import { captureLogs, REPO, tempHome } from "../helpers/plugin_fixtures.ts";
import { readmeLibraryExample } from "../helpers/readme_example.ts";
import { type ChildResult, runDeno } from "../helpers/deno_child.ts";
import { runHermesCli } from "../helpers/hermes_cli_child.ts";
import { honchoUser } from "../helpers/honcho_user.ts";

const BUNDLED = join(REPO, "plugins", "memory");

Deno.test("honcho's grant: its code, its data directory, its settings files read-only, nothing else of HERMES_HOME", async () => {
  await using h = await tempHome();
  const grant = await providerPermissions("honcho", {
    hermesHome: h.home,
    config: {},
  });
  assert.ok(grant);
  const data = join(h.home, "honcho");
  assert.equal(grant.dataDir, data);
  assert.deepEqual(grant.read, [
    { value: join(BUNDLED, "honcho"), from: "provider-dir" },
    { value: data, from: "data-dir" },
    { value: join(h.home, "honcho.json"), from: "plugin.yaml" },
    { value: join(getDefaultHermesRoot(), "honcho.json"), from: "plugin.yaml" },
    {
      value: join(getUserHome() ?? "", ".honcho", "config.json"),
      from: "plugin.yaml",
    },
  ]);
  assert.deepEqual(grant.write, [{ value: data, from: "data-dir" }]);
  assert.deepEqual(grant.net, [{
    value: "api.honcho.dev",
    from: "plugin.yaml",
  }]);
});

// The child is a library host as a careful user runs it: every permission
// (-A), but --no-prompt and --cached-only; the worker grant is the only
// limit on the provider.
async function runExample(
  userHome: string,
  args: string[],
  env: Record<string, string> = {},
): Promise<ChildResult> {
  const dir = await Deno.makeTempDir({ prefix: "hermes-example-" });
  try {
    const script = join(dir, "example.ts");
    await Deno.writeTextFile(script, await readmeLibraryExample());
    return await runDeno([
      "run",
      "--quiet",
      "-A",
      "--no-prompt",
      "--cached-only",
      `--config=${join(REPO, "deno.json")}`,
      script,
      ...args,
    ], { env: { HOME: userHome, ...env } });
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

Deno.test("honcho under the narrowed grant, from the README's library example: turns reach a self-hosted server granted in config.yaml", async () => {
  await using server = await startHonchoTestServer({
    apiKey: "hch-narrow-1234",
  });
  const host = new URL(server.url).host;
  await using user = await honchoUser(
    server.url,
    "hch-narrow-1234",
    `memory:\n  provider: honcho\n  permissions:\n    honcho:\n      net: [${host}]\n`,
  );
  const run = await runExample(user.userHome, [
    "the kite is red",
    "noted, red kite",
  ]);
  assert.equal(run.code, 0, run.stderr);
  assert.equal(run.stderr, "");
  const result = JSON.parse(run.stdout.trim().split("\n").at(-1)!);
  assert.equal(result.provider, "honcho");
  assert.equal(result.drain.notDurable, 0);
  const contents = server.state.messages.map((m) => m.content);
  assert.equal(contents.filter((c) => c === "the kite is red").length, 1);
  assert.equal(contents.filter((c) => c === "noted, red kite").length, 1);
  // Its state lives in its data directory (memories/ is the built-in
  // store's, written by the host).
  assert.deepEqual(
    [...Deno.readDirSync(user.home)].map((e) => e.name).sort(),
    ["config.yaml", "honcho", "honcho.json", "memories"],
  );
  assert.deepEqual(
    [...Deno.readDirSync(join(user.home, "honcho"))].map((e) => e.name),
    ["outbox"],
  );
  server.assertNoViolations();
});

Deno.test("honcho without the net grant for a server only the environment names: one warning naming memory.permissions.honcho.net, and nothing sent", async () => {
  await using server = await startHonchoTestServer({
    apiKey: "hch-narrow-5678",
  });
  await using user = await honchoUser(
    server.url,
    "hch-narrow-5678",
    "memory:\n  provider: honcho\n",
  );
  // An address in honcho.json is the user's consent (the grant's
  // "settings" entries); one in the environment is not.
  await Deno.writeTextFile(
    join(user.home, "honcho.json"),
    JSON.stringify({ apiKey: "hch-narrow-5678", peerName: "alice" }),
  );
  const run = await runExample(user.userHome, ["turn one", "ok"], {
    HONCHO_BASE_URL: server.url,
  });
  assert.equal(run.code, 0, run.stderr);
  const host = new URL(server.url).host;
  const denial =
    `hermes: warn: Memory provider 'honcho' may not connect to ${host}: grant it under memory.permissions.honcho.net in ${
      join(user.home, "config.yaml")
    }`;
  const lines = run.stderr.split("\n").filter((l) => l.includes(host));
  assert.deepEqual(lines, [denial]);
  assert.equal(server.state.messages.length, 0);
});

Deno.test("archive under the narrowed grant: checkpoints land in $HERMES_HOME/archive/ and nothing else is writable", async () => {
  await using h = await tempHome();
  const grant = await providerPermissions("archive", {
    hermesHome: h.home,
    config: {},
  });
  assert.deepEqual(grant?.write, [{
    value: join(h.home, "archive"),
    from: "data-dir",
  }]);
  assert.deepEqual(grant?.env, []);
  assert.deepEqual(grant?.net, []);
  using logs = captureLogs();
  await using provider = await loadMemoryProvider("archive", {
    hermesHome: h.home,
    config: {},
    hostCheck: false,
  }) as SandboxedMemoryProvider;
  assert.ok(provider, logs.lines.join("\n"));
  await provider.initialize("arch-1", { hermesHome: h.home });
  await provider.onPreCompress(
    [
      { role: "user", content: "remember the red kite" },
      { role: "assistant", content: "noted" },
    ],
    { requireCheckpoint: true },
  );
  const sessions = [...Deno.readDirSync(join(h.home, "archive"))];
  assert.equal(sessions.length, 1);
  const transcript = await Deno.readTextFile(
    join(h.home, "archive", sessions[0]!.name, "transcript.jsonl"),
  );
  assert.match(transcript, /remember the red kite/);
  assert.deepEqual(logs.at("warn"), []);
});

Deno.test("hermes memory setup honcho --yes --set saves honcho.json on the host: the sandboxed provider only reads it", async () => {
  const userHome = await Deno.realPath(
    await Deno.makeTempDir({ prefix: "hermes-user-" }),
  );
  try {
    const home = join(userHome, ".hermes");
    await Deno.mkdir(home, { recursive: true });
    const run = await runHermesCli([
      "memory",
      "setup",
      "honcho",
      "--yes",
      "--set",
      "baseUrl=http://127.0.0.1:8123",
      "--set",
      "peerName=alice",
    ], { userHome });
    // Saved; nothing listens on :8123, so the connection test fails (exit 1).
    assert.equal(run.code, 1, run.stderr);
    assert.match(
      run.stderr,
      /connection test failed: .*the settings are saved/,
    );
    assert.doesNotMatch(run.stderr, /could not save its own config/);
    const saved = JSON.parse(
      await Deno.readTextFile(join(home, "honcho.json")),
    );
    assert.equal(saved.baseUrl, "http://127.0.0.1:8123");
    assert.equal(saved.hosts.hermes.peerName, "alice");
  } finally {
    await Deno.remove(userHome, { recursive: true });
  }
});
