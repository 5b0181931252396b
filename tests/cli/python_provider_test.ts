// A Python provider where Hermes Agent documents it ($HERMES_HOME/plugins/
// <name>/ with plugin.yaml and __init__.py) is named as one, with what to
// do, by status, list and doctor, run as users run them (the launcher).
import assert from "node:assert/strict";
import { join } from "node:path";
import { runHermesCli } from "../helpers/hermes_cli_child.ts";

Deno.test("status, list and doctor name a Python provider in plugins/<name>/ as one and say what to do", async () => {
  const home = await Deno.realPath(
    await Deno.makeTempDir({ prefix: "hermes-python-provider-" }),
  );
  const root = join(home, ".hermes");
  const dir = join(root, "plugins", "mempy");
  try {
    await Deno.mkdir(dir, { recursive: true });
    await Deno.writeTextFile(
      join(dir, "plugin.yaml"),
      'name: mempy\nversion: 1.0.0\ndescription: "A Python memory provider"\n',
    );
    await Deno.writeTextFile(
      join(dir, "__init__.py"),
      "def register(ctx):\n    pass\n",
    );
    await Deno.writeTextFile(
      join(root, "config.yaml"),
      "memory:\n  provider: mempy\n",
    );
    const named = new RegExp(
      `'mempy' in ${dir}/ is a Python provider \\(plugin\\.yaml \\+ __init__\\.py, for Hermes Agent\\)`,
    );
    const fix = /run it with Hermes Agent, add a TypeScript port of it/;
    for (
      const args of [["status", "--no-probe"], ["list"], ["doctor"]]
    ) {
      const run = await runHermesCli(["memory", ...args], { userHome: home });
      const out = run.stdout + run.stderr;
      assert.match(out, named, `memory ${args[0]}: ${out}`);
      assert.match(out, fix, `memory ${args[0]}`);
      assert.doesNotMatch(out, /NOT installed|no such plugin|not installed/);
    }
    // Not selected: list still names it.
    await Deno.writeTextFile(
      join(root, "config.yaml"),
      "memory:\n  provider: ''\n",
    );
    const list = await runHermesCli(["memory", "list"], { userHome: home });
    assert.match(list.stdout, named);
    assert.doesNotMatch(list.stdout, /memory\.provider names it/);
  } finally {
    await Deno.remove(home, { recursive: true }).catch(() => {});
  }
});
