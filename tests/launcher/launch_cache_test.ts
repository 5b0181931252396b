// What decides that a cached launch record is stale, besides the reads it
// recorded: the framework's own grant code, all of it.
import assert from "node:assert/strict";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { runCommand } from "../helpers/run_command.ts";
import { grantSources, sourceStamp } from "../../src/launcher/launch_cache.ts";

Deno.test("the source stamp changes when grant code is edited, added or removed", async () => {
  const root = await Deno.makeTempDir({ prefix: "hermes-stamp-" });
  try {
    await Deno.mkdir(join(root, "src", "plugins"), { recursive: true });
    await Deno.mkdir(join(root, "src", "builtin"), { recursive: true });
    const code = join(root, "src", "plugins", "grant.ts");
    await Deno.writeTextFile(code, "export const a = 1;\n");
    await Deno.writeTextFile(join(root, "deno.json"), "{}");
    const sources = grantSources(root);
    assert.ok(sources.includes(code));
    // Code that does not compute the grant is left out.
    assert.ok(!sources.some((p) => p.includes("builtin")));
    const stamp = sourceStamp(sources);
    assert.equal(sourceStamp(grantSources(root)), stamp);
    // Edited in place (an editor keeping the inode): the file's mtime.
    await Deno.utime(code, new Date(), new Date(Date.now() + 5000));
    assert.notEqual(sourceStamp(sources), stamp);
    const edited = sourceStamp(sources);
    // A new file: its folder's mtime.
    await Deno.utime(
      join(root, "src", "plugins"),
      new Date(0),
      new Date(1000),
    );
    const before = sourceStamp(sources);
    await Deno.writeTextFile(join(root, "src", "plugins", "new.ts"), "");
    assert.notEqual(sourceStamp(sources), before);
    assert.notEqual(edited, before);
    // Removed: "-".
    await Deno.remove(code);
    assert.match(sourceStamp(sources), /(^|,)-(,|$)/);
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("every framework module the grant computation imports is in grantSources", async () => {
  const root = fileURLToPath(new URL("../..", import.meta.url)).replace(
    /\/$/,
    "",
  );
  const info = await runCommand(Deno.execPath(), [
    "info",
    "--json",
    join(root, "src/launcher/plan.ts"),
  ], { cwd: root });
  assert.equal(info.code, 0, info.err);
  const modules = (JSON.parse(info.out) as { modules: { specifier: string }[] })
    .modules.map((m) => m.specifier)
    .filter((s) => s.startsWith(`file://${root}/src/`))
    .map((s) => fileURLToPath(s));
  assert.ok(modules.length > 20, modules.join("\n"));
  const sources = new Set(grantSources(root));
  assert.deepEqual(modules.filter((m) => !sources.has(m)), []);
});
