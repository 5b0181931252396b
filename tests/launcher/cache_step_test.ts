// What `hermes memory status` loads and what the launcher says when it
// cannot fill the module cache: no npm package in the status path's module
// graph (commander, inquirer), and a lockfile that no longer matches
// deno.json reported in one cause line and one fix, not Deno's whole diff.
import assert from "node:assert/strict";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { runCommand } from "../helpers/run_command.ts";
import { withHome } from "../helpers/test_home.ts";

const ROOT = fileURLToPath(new URL("../..", import.meta.url)).replace(
  /\/$/,
  "",
);
/** The `deno` arguments of the `hermes` task, for the launcher in `root`. */
function launcher(root: string): string[] {
  const task = JSON.parse(Deno.readTextFileSync(join(ROOT, "deno.json")))
    .tasks.hermes as string;
  return task.split(" ").slice(1).map((w) =>
    w === "src/launcher/main.ts" ? join(root, w) : w
  );
}

interface InfoModule {
  specifier: string;
  dependencies?: { code?: { specifier?: string }; isDynamic?: boolean }[];
}

/**
 * The modules Deno reads when it starts `roots`: static imports and literal
 * dynamic ones (not type-only imports, not computed specifiers); with
 * `evaluated`, only the static imports (what runs before the command does).
 */
async function startGraph(
  roots: string[],
  evaluated = false,
): Promise<Set<string>> {
  const seen = new Set<string>();
  for (const root of roots) {
    const info = await runCommand(Deno.execPath(), [
      "info",
      "--json",
      `--config=${join(ROOT, "deno.json")}`,
      join(ROOT, root),
    ], { cwd: ROOT });
    assert.equal(info.code, 0, info.err);
    const graph = JSON.parse(info.out) as {
      roots: string[];
      modules: InfoModule[];
    };
    const bySpecifier = new Map(graph.modules.map((m) => [m.specifier, m]));
    const stack = [...graph.roots];
    while (stack.length > 0) {
      const specifier = stack.pop()!;
      if (seen.has(specifier)) continue;
      seen.add(specifier);
      for (const dep of bySpecifier.get(specifier)?.dependencies ?? []) {
        if (dep.code?.specifier && !(evaluated && dep.isDynamic)) {
          stack.push(dep.code.specifier);
        }
      }
    }
  }
  return seen;
}

Deno.test("the modules Deno reads to start 'hermes memory status' name neither commander nor inquirer", async () => {
  // main.ts, then what it and the memory group import by computed path.
  const graph = await startGraph([
    "src/cli/main.ts",
    "src/cli/run.ts",
    "src/cli/commands/memory_status.ts",
  ]);
  assert.ok([...graph].some((m) => m.endsWith("/memory_status.ts")));
  // commander is gone; @inquirer/prompts loads by computed path. (yaml stays
  // a literal import: the library's users cache and grant by the graph.)
  const npm = [...graph].filter((m) => /commander|inquirer/.test(m));
  assert.deepEqual(npm, []);
});

Deno.test("'hermes memory status' evaluates no module that starts a sandbox until a provider needs one", async () => {
  const graph = await startGraph([
    "src/cli/main.ts",
    "src/cli/run.ts",
    "src/cli/commands/memory_status.ts",
  ], true);
  const starters = [...graph].filter((m) =>
    /\/src\/sandbox\/(sandboxed_cli|sandboxed_provider|sandbox_launch|transport|worker_rpc)\.ts$/
      .test(m)
  );
  assert.deepEqual(starters, []);
});

Deno.test("the Honcho status hook evaluates neither the whole library nor node:crypto", async () => {
  const graph = await startGraph([
    "plugins/memory/honcho/cli.ts",
    "plugins/memory/honcho/cli/describe_status.ts",
  ], true);
  const heavy = [...graph].filter((m) =>
    m === `file://${ROOT}/mod.ts` || m === "node:crypto"
  );
  assert.deepEqual(heavy, []);
});

async function copyCheckout(to: string): Promise<void> {
  for (const entry of Deno.readDirSync(ROOT)) {
    if (
      ["src", "plugins"].includes(entry.name) ||
      (entry.isFile && /\.(ts|json|lock)$/.test(entry.name))
    ) {
      const copy = await runCommand("cp", [
        "-R",
        join(ROOT, entry.name),
        join(to, entry.name),
      ]);
      assert.equal(copy.code, 0, copy.err);
    }
  }
}

Deno.test("a deno.lock out of date with deno.json: the launcher prints the cause and the fix in two lines", async () => {
  await withHome(async (home) => {
    const checkout = join(home, "checkout");
    await Deno.mkdir(checkout);
    await copyCheckout(checkout);
    const config = JSON.parse(
      await Deno.readTextFile(join(checkout, "deno.json")),
    );
    // A dependency range the lockfile has never resolved.
    config.imports.yaml = "npm:yaml@^2.8.0";
    await Deno.writeTextFile(
      join(checkout, "deno.json"),
      JSON.stringify(config, null, 2),
    );
    const launch = (env: Record<string, string> = {}) =>
      runCommand(
        Deno.execPath(),
        [...launcher(checkout), "memory", "status"],
        { cwd: home, env: { HOME: home, ...env } },
      );
    const run = await launch();
    assert.equal(run.code, 1);
    assert.equal(run.out, "");
    // A slow machine also gets the "(first run)…" note before the error.
    assert.equal(
      run.err.replace(/^hermes: caching .*\(first run\)…\n/, ""),
      `hermes: cannot cache the modules the CLI needs: ${checkout}/deno.lock is out of date (deno.json imports npm:yaml@^2.8.0, which it does not resolve)\n` +
        `hint: run 'deno install' in ${checkout} to update it, or 'git checkout deno.lock' there if the change was not meant\n`,
    );
  });
});

Deno.test("after a cached start, an edited deno.lock or deno.json runs the cache step again", async () => {
  await withHome(async (home) => {
    const checkout = join(home, "checkout");
    await Deno.mkdir(checkout);
    await copyCheckout(checkout);
    const launch = () =>
      runCommand(
        Deno.execPath(),
        [...launcher(checkout), "memory", "status"],
        { cwd: home, env: { HOME: home } },
      );
    const outOfDate = `${checkout}/deno.lock is out of date`;
    // `deno run` itself prunes deno.lock after a deno.json edit: both go back.
    const saved = await Promise.all(
      ["deno.lock", "deno.json"].map((f) =>
        Deno.readTextFile(join(checkout, f))
      ),
    );
    for (const file of ["deno.lock", "deno.json"]) {
      const warm = await launch();
      assert.equal(warm.code, 0, warm.err);
      const path = join(checkout, file);
      const data = JSON.parse(await Deno.readTextFile(path));
      // The lockfile forgets a dependency; deno.json asks for a range it never resolved.
      if (file === "deno.lock") delete data.specifiers["npm:yaml@^2.9.1"];
      else data.imports.yaml = "npm:yaml@^2.8.0";
      await Deno.writeTextFile(path, JSON.stringify(data, null, 2));
      const stale = await launch();
      assert.equal(stale.code, 1, `${file}: ${stale.err}`);
      assert.ok(stale.err.includes(outOfDate), stale.err);
      await Deno.writeTextFile(join(checkout, "deno.lock"), saved[0]!);
      await Deno.writeTextFile(join(checkout, "deno.json"), saved[1]!);
    }
    const restored = await launch();
    assert.equal(restored.code, 0, restored.err);
  });
});
