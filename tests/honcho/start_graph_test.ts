// What a sandboxed Honcho start evaluates (issue 31 item 4): loading the
// provider adds no module of Deno's Node-compatibility layer to what the
// framework's provider entry already evaluates. `node:crypto` (turn digests,
// long ids) and `node:fs/promises` (the injection log) evaluated it at load,
// 12–20 ms of every start before the first call; digests now load it at
// their first use (the first turn's write).
import assert from "node:assert/strict";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { REPO } from "../helpers/plugin_fixtures.ts";

/** The modules a child evaluates importing `specifiers` (V8's code cache log). */
async function evaluated(specifiers: string[]): Promise<string[]> {
  const dir = await Deno.makeTempDir({ prefix: "honcho_start_graph_" });
  try {
    const script = join(dir, "load.ts");
    await Deno.writeTextFile(
      script,
      specifiers.map((s) => `await import(${JSON.stringify(s)});\n`).join(""),
    );
    const output = await new Deno.Command(Deno.execPath(), {
      args: [
        "run",
        "--log-level=debug",
        "--cached-only",
        "--no-prompt",
        "--no-config",
        "--allow-read",
        "--allow-env",
        script,
      ],
      stdin: "null",
      stdout: "null",
      stderr: "piped",
    }).output();
    const log = new TextDecoder().decode(output.stderr);
    assert.equal(output.code, 0, log.slice(-2000));
    return [
      ...log.matchAll(
        /V8 code cache (?:hit|miss) for (?:ES module|script): (\S+?),/g,
      ),
    ].map((m) => m[1]!);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

Deno.test("loading the Honcho provider evaluates no Node-layer module beyond the framework's provider entry", async () => {
  const url = (path: string) => pathToFileURL(join(REPO, path)).href;
  // What the sandbox's worker evaluates before it imports a provider.
  const framework = [
    url("src/provider/mod.ts"),
    url("src/provider/_bundled.ts"),
    url("src/profile/context_task.ts"),
  ];
  const node = (modules: string[]) =>
    new Set(modules.filter((m) => /^(node:|ext:deno_node\/)/.test(m)));
  const before = node(await evaluated(framework));
  const honcho = await evaluated([
    ...framework,
    url("plugins/memory/honcho/mod.ts"),
  ]);
  assert.ok(honcho.some((m) => m.endsWith("/plugins/memory/honcho/mod.ts")));
  const added = [...node(honcho)].filter((m) => !before.has(m));
  assert.deepEqual(added, []);
});
