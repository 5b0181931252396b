// @hermes/memory/provider is all a sandbox worker loads: its module graph
// (and the worker bootstrap's) holds no npm package and nothing of the
// manager, the CLI or the plugin loader; the bundled providers import
// nothing else of the framework.
import assert from "node:assert/strict";
import { join, relative } from "node:path";
import { REPO } from "../helpers/plugin_fixtures.ts";

interface GraphModule {
  specifier: string;
  dependencies?: {
    code?: { specifier: string };
    isDynamic?: boolean;
  }[];
}

async function graphModules(entry: string): Promise<GraphModule[]> {
  const { stdout, code } = await new Deno.Command(Deno.execPath(), {
    args: ["info", "--json", `--config=${join(REPO, "deno.json")}`, entry],
    cwd: REPO,
    stdout: "piped",
    stderr: "null",
  }).output();
  assert.equal(code, 0);
  return (JSON.parse(new TextDecoder().decode(stdout)) as {
    modules: GraphModule[];
  }).modules;
}

async function graph(entry: string): Promise<string[]> {
  return (await graphModules(entry)).map((m) => m.specifier);
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
  // Node-compatibility modules), the bundled providers' helpers
  // (src/provider/_bundled.ts, with src/_util/lazy_import.ts), preloaded
  // because their sandbox may not read the framework's code, and the scopes
  // (src/profile/context_scope.ts), loaded only by a call that needs one.
  assert.ok(local.length <= 34, `${local.length} modules`);
});

// Evaluating any node: module loads Deno's Node layer, 6-10 ms of a start
// that a bare `deno run` takes about 20 ms for. A sandbox whose calls all come
// from its own profile without a secret scope never needs it.
Deno.test("the worker bootstrap evaluates no node: module at start (the scopes load on the first call that needs one)", async () => {
  const modules = new Map(
    (await graphModules("src/provider/worker_bootstrap.ts")).map((m) => [
      m.specifier,
      m,
    ]),
  );
  const seen = new Set<string>();
  const visit = (specifier: string, path: string[]): string[] => {
    if (specifier.startsWith("node:")) {
      return [[...path, specifier].join(" -> ")];
    }
    if (seen.has(specifier)) return [];
    seen.add(specifier);
    return (modules.get(specifier)?.dependencies ?? []).flatMap((dep) =>
      dep.code && !dep.isDynamic
        ? visit(dep.code.specifier, [
          ...path,
          relative(REPO, new URL(specifier).pathname),
        ])
        : []
    );
  };
  const entry = new URL("src/provider/worker_bootstrap.ts", `file://${REPO}/`);
  assert.deepEqual(visit(entry.href, []), []);
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
