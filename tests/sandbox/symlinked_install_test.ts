// A framework installed through a symbolic link (a vendored or linked
// package directory) works as through its real path: a library host that
// imports it through the link loads the bundled Honcho provider, whose
// turns reach the server once each (issue 27, item 5).
import assert from "node:assert/strict";
import { join } from "node:path";
import { startHonchoTestServer } from "../honcho_server.ts";
import { REPO } from "../helpers/plugin_fixtures.ts";
import { runDeno } from "../helpers/deno_child.ts";
import { lockedDenoDir } from "../helpers/locked_npm_cache.ts";
import { hostConfig } from "../helpers/library_world.ts";

/** Runs tests/helpers/library_host.ts with a deno.json naming the framework through `link`. */
async function linkedHost(
  root: string,
  link: string,
  args: string[],
): Promise<{ code: number; out: Record<string, unknown>; stderr: string }> {
  await Deno.symlink(REPO, link);
  const config = await hostConfig(root, link);
  const run = await runDeno([
    "run",
    "--quiet",
    "--no-lock",
    "--cached-only",
    "--allow-read",
    "--allow-write",
    "--allow-env",
    "--allow-run",
    `--config=${config}`,
    join(link, "tests", "helpers", "library_host.ts"),
    ...args,
  ], {
    cwd: root,
    // No lock: the pinned versions' metadata only.
    env: { HOME: join(root, "user"), DENO_DIR: await lockedDenoDir() },
  });
  const last = run.stdout.trim().split("\n").at(-1) ?? "";
  return { code: run.code, out: JSON.parse(last || "{}"), stderr: run.stderr };
}

Deno.test("a library host importing the framework through a symlinked directory stores its turns through the bundled provider", async () => {
  await using honcho = await startHonchoTestServer({ apiKey: "hch-link-7" });
  const host = new URL(honcho.url).host;
  const root = await Deno.realPath(await Deno.makeTempDir());
  const home = join(root, "user", ".hermes");
  await Deno.mkdir(home, { recursive: true });
  await Deno.writeTextFile(
    join(home, "config.yaml"),
    `memory:\n  provider: honcho\n  permissions:\n    honcho:\n      net: [${host}]\n`,
  );
  await Deno.writeTextFile(
    join(home, "honcho.json"),
    JSON.stringify({
      apiKey: "hch-link-7",
      hosts: { hermes: { baseUrl: honcho.url, peerName: "alice" } },
    }),
  );
  // The host's import map names the framework through the link only.
  const run = await linkedHost(root, join(root, "vendor-hermes"), [
    "turns",
    "the kite is red",
    "noted",
  ]);
  await Deno.remove(root, { recursive: true });
  assert.equal(run.code, 0, run.stderr);
  assert.equal(run.out.loaded, "honcho", run.stderr);
  assert.deepEqual(run.out.warnings, []);
  const contents = honcho.state.messages.map((m) => m.content);
  for (const text of ["the kite is red", "noted"]) {
    assert.equal(contents.filter((c) => c === text).length, 1, text);
  }
});

Deno.test("the launcher started through a symlinked directory lists the bundled providers", async () => {
  const root = await Deno.realPath(await Deno.makeTempDir());
  const home = join(root, "user");
  await Deno.mkdir(join(home, ".hermes"), { recursive: true });
  const link = join(root, "vendor-hermes");
  await Deno.symlink(REPO, link);
  const run = await runDeno([
    "run",
    "--no-prompt",
    "--cached-only",
    "--allow-read",
    "--allow-write",
    "--allow-env",
    "--allow-run",
    "--allow-ffi",
    join(link, "src", "launcher", "main.ts"),
    "memory",
    "list",
  ], { cwd: root, env: { HOME: home } });
  await Deno.remove(root, { recursive: true });
  assert.equal(run.code, 0, run.stderr);
  assert.doesNotMatch(run.stderr, /Skipping unreadable plugin directory/);
  assert.match(run.stdout, /^archive +bundled/m);
  assert.match(run.stdout, /^honcho +bundled/m);
});
