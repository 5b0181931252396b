// The framework imported from a remote URL, as from JSR: the checkout is
// served over http://127.0.0.1 (tests/helpers/serve_checkout.ts) and a
// user's project imports it from there, with no deno.json and no import
// map (the published graph names its npm packages itself). The README's library example then
// runs with memory.provider: honcho, and the bundled Honcho provider loads
// for real: listed from the framework's embedded manifests, its worker
// bootstrap and module fetched from the server under an import grant for
// that host only, its turns delivered to a Honcho server.
import assert from "node:assert/strict";
import { join } from "node:path";
import { startHonchoTestServer } from "../honcho_server.ts";
import { REPO } from "../helpers/plugin_fixtures.ts";
import { readmeLibraryExample } from "../helpers/readme_example.ts";
import { serveCheckout } from "../helpers/serve_checkout.ts";
import { runDeno } from "../helpers/deno_child.ts";
import { lockedDenoDir } from "../helpers/locked_npm_cache.ts";
import { honchoUser } from "../helpers/honcho_user.ts";

Deno.test("from a remote URL, the README's library example loads the bundled honcho provider and delivers its turns", async () => {
  await using checkout = serveCheckout();
  await using honcho = await startHonchoTestServer({ apiKey: "hch-remote-77" });
  await using user = await honchoUser(honcho.url, "hch-remote-77");
  const root = user.userHome;
  const home = user.home;
  const project = join(root, "project");
  await Deno.mkdir(project);
  // The locked npm versions, so nothing but 127.0.0.1 is asked.
  await Deno.copyFile(join(REPO, "deno.lock"), join(project, "deno.lock"));
  await Deno.writeTextFile(
    join(project, "example.ts"),
    await readmeLibraryExample(`${checkout.url}/mod.ts`),
  );
  const { code, stdout, stderr } = await runDeno([
    "run",
    "--quiet",
    "--no-prompt",
    `--allow-import=${checkout.host}`,
    `--allow-read=${root}`,
    `--allow-write=${home}`,
    `--allow-net=${new URL(honcho.url).host},api.honcho.dev`,
    "--allow-env",
    "--allow-sys",
    `--allow-run=${Deno.execPath()}`,
    "--lock=deno.lock",
    "example.ts",
    "the kite is red",
    "noted, red kite",
  ], {
    cwd: project,
    // The provider's sandbox resolves without a lock: pinned metadata only.
    env: { HOME: root, DENO_DIR: await lockedDenoDir() },
  });
  assert.equal(code, 0, stderr);
  const result = JSON.parse(stdout.trim().split("\n").at(-1)!);
  assert.equal(result.provider, "honcho", stderr);
  assert.equal(result.drain.notDurable, 0);
  // Loaded from the server, not from any local file.
  for (
    const path of [
      "/mod.ts",
      "/src/provider/worker_bootstrap.ts",
      "/src/provider/mod.ts",
      "/plugins/memory/honcho/mod.ts",
    ]
  ) {
    assert.ok(checkout.requests.has(path), `${path} was not fetched`);
  }
  const contents = honcho.state.messages.map((m) => m.content);
  assert.equal(contents.filter((c) => c === "the kite is red").length, 1);
  assert.equal(contents.filter((c) => c === "noted, red kite").length, 1);
  honcho.assertNoViolations();
});

Deno.test("from a remote URL, the CLI lists the bundled providers and runs honcho's own commands (its remote cli.ts)", async () => {
  await using checkout = serveCheckout();
  const root = await Deno.realPath(
    await Deno.makeTempDir({ prefix: "hermes-remote-cli-" }),
  );
  try {
    const home = join(root, "user", ".hermes");
    await Deno.mkdir(home, { recursive: true });
    await Deno.writeTextFile(
      join(home, "config.yaml"),
      "memory:\n  provider: honcho\n",
    );
    await Deno.writeTextFile(
      join(home, "honcho.json"),
      JSON.stringify({
        apiKey: "hch-remote-cli-4321",
        hosts: { hermes: { baseUrl: "http://127.0.0.1:9" } },
      }),
    );
    await Deno.copyFile(join(REPO, "deno.lock"), join(root, "deno.lock"));
    const denoDir = await lockedDenoDir();
    const hermes = (args: string[]) =>
      runDeno([
        "run",
        "--quiet",
        "-A",
        "--no-prompt",
        "--lock=deno.lock",
        `${checkout.url}/src/cli/main.ts`,
        ...args,
      ], {
        cwd: root,
        // Its providers' sandboxes resolve without a lock: pinned metadata.
        env: { HOME: join(root, "user"), DENO_DIR: denoDir },
      });
    const status = await hermes(["memory", "status", "--json"]);
    assert.equal(status.code, 0, status.stderr);
    const report = JSON.parse(status.stdout);
    assert.deepEqual(
      report.plugins.map((p: { name: string; source: string }) => [
        p.name,
        p.source,
      ]),
      [["archive", "bundled"], ["honcho", "bundled"]],
    );
    assert.equal(report.provider.available, true);
    assert.equal(
      report.provider.directory,
      `${checkout.url}/plugins/memory/honcho/mod.ts`,
    );
    const own = await hermes(["honcho", "status", "--offline"]);
    assert.equal(own.code, 0, own.stderr);
    assert.match(own.stdout, /^ {2}apiKey +\.\.\.4321 +root$/m);
    assert.ok(checkout.requests.has("/plugins/memory/honcho/cli.ts"));
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});
