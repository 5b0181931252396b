// The test suite never reads or writes the user's real home. A fake user
// home with a used ~/.hermes (honcho.json with peers, aliases and a session
// map, config.yaml, .env) and ~/.honcho/config.json plays the real one; the
// suite's helpers and the tests known to have read the real home
// (tests/honcho/cli_test.ts: the wizard's default peer and `peers map`) run
// with HOME pointing at it and HERMES_HOME unset, as a developer would run
// them. Every test passes and not one byte of that home changes. Before,
// cli_test.ts failed there (the wizard offered the real peer name).
import assert from "node:assert/strict";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = fileURLToPath(new URL("..", import.meta.url));

async function snapshot(dir: string): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  const walk = async (path: string): Promise<void> => {
    for await (const entry of Deno.readDir(path)) {
      const full = join(path, entry.name);
      if (entry.isDirectory) await walk(full);
      else out[relative(dir, full)] = await Deno.readTextFile(full);
    }
  };
  await walk(dir);
  return out;
}

Deno.test("the suite's helpers and the Honcho CLI tests leave a used ~/.hermes untouched and do not depend on it", async () => {
  const home = await Deno.makeTempDir({ prefix: "fake-real-home-" });
  try {
    const hermes = join(home, ".hermes");
    await Deno.mkdir(join(hermes, "profiles", "work"), { recursive: true });
    await Deno.mkdir(join(home, ".honcho"), { recursive: true });
    await Deno.writeTextFile(
      join(hermes, "honcho.json"),
      JSON.stringify({
        apiKey: "hch-real-user-key-0001",
        workspace: "real-workspace",
        peerName: "real-user",
        userPeerAliases: { "telegram:1": "real-peer", "discord:2": "other" },
        sessions: { [join(home, "work", "project")]: "real-session" },
        hosts: {
          hermes: { aiPeer: "real-ai", peerName: "real-host-user" },
          "hermes_work": { aiPeer: "work-ai" },
        },
      }),
    );
    await Deno.writeTextFile(
      join(hermes, "config.yaml"),
      "memory:\n  provider: honcho\nmodel: real-model\n",
    );
    await Deno.writeTextFile(
      join(hermes, ".env"),
      "HONCHO_API_KEY=hch-real-user-key-0002\n",
    );
    await Deno.writeTextFile(
      join(hermes, "profiles", "work", "config.yaml"),
      "memory:\n  provider: honcho\n",
    );
    await Deno.writeTextFile(
      join(home, ".honcho", "config.json"),
      JSON.stringify({ apiKey: "hch-real-user-key-0003", peerName: "global" }),
    );
    const before = await snapshot(home);
    const env = Deno.env.toObject();
    delete env.HERMES_HOME;
    delete env.HERMES_TEST_HOME;
    const output = await new Deno.Command(Deno.execPath(), {
      args: [
        "test",
        // The tests' lockfile, as the test task gives it (tools/test_home.ts).
        `--lock=${join(ROOT, "tests", "deno.lock")}`,
        "--cached-only",
        "--no-prompt",
        "--allow-read",
        "--allow-write",
        "--allow-env",
        "--allow-net=127.0.0.1,localhost",
        "--allow-run",
        "--allow-sys",
        "tests/honcho/cli_test.ts",
        "tests/honcho/outbox_cli_test.ts",
      ],
      cwd: ROOT,
      clearEnv: true,
      env: {
        ...env,
        HOME: home,
        DENO_DIR: Deno.env.get("DENO_DIR") ??
          join(Deno.env.get("HOME") ?? "/root", ".cache", "deno"),
        NO_COLOR: "1",
      },
      stdout: "piped",
      stderr: "piped",
    }).output();
    const text = new TextDecoder().decode(output.stdout) +
      new TextDecoder().decode(output.stderr);
    assert.equal(output.code, 0, text.slice(-4000));
    assert.match(text, /\d+ passed/);
    assert.deepEqual(await snapshot(home), before);
  } finally {
    await Deno.remove(home, { recursive: true });
  }
});
