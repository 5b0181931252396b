// @hermes/memory/provider is all a sandbox worker loads: its module graph
// (and the worker bootstrap's) holds no npm package and nothing of the
// manager, the CLI or the plugin loader; the bundled providers import
// nothing else of the framework.
import assert from "node:assert/strict";
import { join, relative } from "node:path";
import { REPO } from "../helpers/plugin_fixtures.ts";

async function graph(entry: string): Promise<string[]> {
  const { stdout, code } = await new Deno.Command(Deno.execPath(), {
    args: ["info", "--json", `--config=${join(REPO, "deno.json")}`, entry],
    cwd: REPO,
    stdout: "piped",
    stderr: "null",
  }).output();
  assert.equal(code, 0);
  const info = JSON.parse(new TextDecoder().decode(stdout)) as {
    modules: { specifier: string }[];
  };
  return info.modules.map((m) => m.specifier);
}

Deno.test("the worker bootstrap's graph is the provider entry and the sandbox protocol: no npm package", async () => {
  const modules = await graph("src/provider/worker_bootstrap.ts");
  assert.deepEqual(modules.filter((m) => m.startsWith("npm:")), []);
  const local = modules.filter((m) => m.startsWith("file:")).map((m) =>
    relative(REPO, new URL(m).pathname)
  );
  const folders = new Set(local.map((p) => p.split("/").slice(0, 2).join("/")));
  assert.deepEqual([...folders].sort(), [
    "src/_util",
    "src/context",
    "src/core",
    "src/io",
    "src/profile",
    "src/provider",
    "src/sandbox",
  ]);
  assert.ok(!local.includes("src/sandbox/worker_rpc.ts"), local.join("\n"));
  assert.ok(!local.includes("mod.ts"));
  // 30, src/_util/path.ts, which replaced node:path and node:url (about 50
  // Node-compatibility modules), and the bundled providers' helpers
  // (src/provider/_bundled.ts, with src/_util/lazy_import.ts), preloaded
  // because their sandbox may not read the framework's code.
  assert.ok(local.length <= 33, `${local.length} modules`);
});

Deno.test("the bundled providers' worker-side code imports the framework only as @hermes/memory/provider", async () => {
  const offenders: string[] = [];
  const walk = async (dir: string): Promise<void> => {
    for await (const entry of Deno.readDir(dir)) {
      const path = join(dir, entry.name);
      if (entry.isDirectory && entry.name !== "cli") await walk(path);
      else if (
        entry.isFile && entry.name.endsWith(".ts") && entry.name !== "cli.ts"
      ) {
        const code = (await Deno.readTextFile(path)).replace(
          /\/\*[\s\S]*?\*\//g,
          "",
        );
        if (/from\s+["']@hermes\/memory(?:\/cli)?["']/.test(code)) {
          offenders.push(relative(REPO, path));
        }
      }
    }
  };
  await walk(join(REPO, "plugins", "memory"));
  assert.deepEqual(offenders, []);
});

Deno.test("honcho's and archive's module graphs hold no npm package", async () => {
  for (const name of ["honcho", "archive"]) {
    const modules = await graph(`plugins/memory/${name}/mod.ts`);
    assert.deepEqual(modules.filter((m) => m.startsWith("npm:")), [], name);
  }
});
