// `deno task honcho-dev-server`: the Honcho test server as a standalone
// program, started the way tests/HONCHO_TEST_SERVER.md says: it prints its
// 127.0.0.1 URL, applies --latency and --fault, answers, and stops on
// SIGTERM.
import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { DENO_DIR } from "../helpers/run_command.ts";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));

Deno.test("deno task honcho-dev-server prints its URL, injects a fault, answers and stops", async () => {
  const child = new Deno.Command(Deno.execPath(), {
    args: [
      "task",
      "-q",
      "honcho-dev-server",
      "--latency",
      "20",
      "--fault",
      '{"route":"POST /v3/workspaces","status":503}',
    ],
    cwd: ROOT,
    clearEnv: true,
    env: { PATH: "/usr/bin:/bin", DENO_DIR, NO_COLOR: "1" },
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const stderr = new Response(child.stderr).text();
  const reader = child.stdout.getReader();
  let printed = "";
  try {
    while (!printed.includes("\n")) {
      const chunk = await reader.read();
      if (chunk.done) break;
      printed += new TextDecoder().decode(chunk.value);
    }
    const url = printed.split("\n")[0] ?? "";
    assert.match(url, /^http:\/\/127\.0\.0\.1:\d+$/);
    const post = () =>
      fetch(`${url}/v3/workspaces`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ id: "dev" }),
      });
    const faulted = await post();
    await faulted.body?.cancel();
    assert.equal(faulted.status, 503);
    const started = performance.now();
    const created = await post();
    assert.equal(created.status, 201);
    assert.equal((await created.json()).id, "dev");
    assert.ok(performance.now() - started >= 15, "latency applied");
  } finally {
    child.kill("SIGTERM");
  }
  const status = await child.status;
  while (!(await reader.read()).done) {
    // Drain what is left.
  }
  assert.equal(status.code, 0);
  assert.match(
    await stderr,
    /^Honcho test server listening on http:\/\/127\.0\.0\.1:\d+ \(auth off, latency 20 ms, 1 fault\(s\) queued\); Ctrl-C stops it\n$/,
  );
});

Deno.test("deno task honcho-dev-server refuses a bad flag with a hint", async () => {
  const output = await new Deno.Command(Deno.execPath(), {
    args: ["task", "-q", "honcho-dev-server", "--fault", "503"],
    cwd: ROOT,
    clearEnv: true,
    env: { PATH: "/usr/bin:/bin", DENO_DIR, NO_COLOR: "1" },
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
  assert.equal(output.code, 2);
  assert.equal(
    new TextDecoder().decode(output.stderr),
    "error: --fault must be a JSON object, not '503'\nhint: deno task honcho-dev-server --help\n",
  );
});
