// What `hermes` tells a user in the situations issue 29 found it saying
// something false, through the real command line (the task line, a temp
// HOME): a service without HOME, a reader that closes the pipe early, a
// broken honcho.json.
import assert from "node:assert/strict";
import { join } from "node:path";
import { startHonchoTestServer } from "../honcho_server.ts";
import { honchoUser } from "../helpers/honcho_user.ts";
import { hermesCliCommand, runHermesCli } from "../helpers/hermes_cli_child.ts";

Deno.test("hermes memory status runs without HOME when HERMES_HOME is set (systemd, cron)", async () => {
  const root = await Deno.realPath(await Deno.makeTempDir());
  try {
    const c = await hermesCliCommand(["memory", "status"], { userHome: root });
    delete c.env.HOME;
    const home = join(root, "service-home");
    const out = await new Deno.Command(c.command, {
      args: c.args,
      cwd: c.cwd,
      clearEnv: true,
      env: { ...c.env, HERMES_HOME: home },
      stdin: "null",
    }).output();
    const text = (b: Uint8Array) => new TextDecoder().decode(b);
    const [stdout, stderr] = [text(out.stdout), text(out.stderr)];
    assert.equal(out.code, 0, stderr);
    assert.ok(stdout.includes(`Files in: ${home}/memories/`), stdout);
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("hermes honcho status | head -1: a closed pipe ends it quietly with its own exit code", async () => {
  await using server = await startHonchoTestServer();
  await using user = await honchoUser(server.url, "hch-pipe-1234");
  const c = await hermesCliCommand(["honcho", "status"], {
    userHome: user.userHome,
  });
  const quote = (word: string) => `'${word.replaceAll("'", `'\\''`)}'`;
  const line = [c.command, ...c.args].map(quote).join(" ");
  const out = await new Deno.Command("bash", {
    args: ["-c", `${line} | head -1; echo "exit \${PIPESTATUS[0]}" >&2`],
    cwd: c.cwd,
    clearEnv: true,
    env: c.env,
    stdin: "null",
  }).output();
  const text = (b: Uint8Array) => new TextDecoder().decode(b);
  assert.match(text(out.stdout), /^Honcho memory: host hermes[^\n]*\n$/);
  assert.equal(text(out.stderr), "exit 0\n");
});

Deno.test("hermes honcho status with a broken honcho.json says the file is broken, not that nothing is configured", async () => {
  await using server = await startHonchoTestServer();
  await using user = await honchoUser(server.url, "hch-broken-1234");
  const file = join(user.home, "honcho.json");
  await Deno.writeTextFile(file, `{"apiKey": "hch-broken-1234",\n`);
  const run = await runHermesCli(["honcho", "status"], {
    userHome: user.userHome,
  });
  assert.equal(run.code, 1);
  assert.ok(
    run.stdout.includes(
      `\nConnection:\n  Not connected: cannot read ${file}: it does not parse at line 2, column 1 (invalid JSON), so no server or API key comes from it; fix or remove the file\n`,
    ),
    run.stdout,
  );
  assert.doesNotMatch(run.stdout, /no API key or base URL is configured/);
});
