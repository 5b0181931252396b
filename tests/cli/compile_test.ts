// The `compile` task: a single `hermes` binary with the bundled providers
// and the worker bootstrap included and the grant of the profile it is run
// for baked in (the plan `hermes memory permissions` prints). `deno compile`
// needs denort from dl.deno.land, which these machines cannot reach, so the
// test accepts exactly that failure; it then runs the same entry point
// under `deno run` with the same permission flags.
import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { join } from "node:path";
import { type CommandResult, runCommand } from "../helpers/run_command.ts";

const ROOT = fileURLToPath(new URL("../..", import.meta.url)).replace(
  /\/$/,
  "",
);

/** The `compile` task of deno.json (the line given to the maintainers). */
export const COMPILE_TASK =
  "deno run --no-prompt --cached-only --allow-read --allow-write --allow-env --allow-run src/launcher/compile.ts";

function deno(
  args: string[],
  home: string,
  cwd = ROOT,
): Promise<CommandResult> {
  return runCommand(Deno.execPath(), args, { cwd, env: { HOME: home } });
}

/** A user home whose default profile uses a self-hosted Honcho. */
async function withUserHome<T>(fn: (home: string) => Promise<T>): Promise<T> {
  const home = await Deno.realPath(
    await Deno.makeTempDir({ prefix: "hermes-compile-" }),
  );
  await Deno.mkdir(join(home, ".hermes", "profiles", "coder"), {
    recursive: true,
  });
  await Deno.writeTextFile(
    join(home, ".hermes", "config.yaml"),
    "memory:\n  provider: honcho\n  permissions:\n    honcho:\n      net: [honcho.lan:8000]\n",
  );
  try {
    return await fn(home);
  } finally {
    await Deno.remove(home, { recursive: true });
  }
}

/** `deno task compile <args>` run as its task line. */
function compileScript(args: string[], home: string) {
  return deno([...COMPILE_TASK.split(" ").slice(1), ...args], home);
}

async function compileCommand(home: string, args: string[] = []) {
  const dry = await compileScript(["--dry-run", ...args], home);
  assert.equal(dry.code, 0, dry.err);
  return JSON.parse(dry.out) as string[];
}

Deno.test("compile task line in deno.json matches the tested one", async () => {
  const config = JSON.parse(await Deno.readTextFile(join(ROOT, "deno.json")));
  const task = config.tasks?.compile;
  assert.equal(typeof task === "string" ? task : task.command, COMPILE_TASK);
});

Deno.test("compile bakes the grant of the profile it is run for", async () => {
  await withUserHome(async (home) => {
    const command = await compileCommand(home);
    const root = join(home, ".hermes");
    assert.deepEqual(command.slice(0, 4), [
      "deno",
      "compile",
      "--no-prompt",
      "--cached-only",
    ]);
    assert.ok(command.includes(`--allow-write=${root}`), command.join(" "));
    assert.ok(command.includes("--allow-net=api.honcho.dev,honcho.lan:8000"));
    assert.equal(command.at(-1), join(ROOT, "src", "cli", "main.ts"));
    const coder = await compileCommand(home, ["--profile", "coder"]);
    assert.ok(
      coder.includes(`--allow-write=${join(root, "profiles", "coder")}`),
    );
    assert.ok(!coder.some((f) => f.includes("honcho.lan")));
  });
});

/**
 * Relative `.ts` specifiers a module names outside its `import … from`
 * lines and literal `import("…")` calls (so: computed imports such as
 * `import(new URL("./run.ts", …).href)` and tables of them), resolved
 * against the repository root.
 */
async function computedSpecifiers(file: string): Promise<string[]> {
  const text = (await Deno.readTextFile(join(ROOT, file)))
    .replace(/^\s*(\/\/|\*).*$/gm, "")
    .replace(/\bimport\s[^;]*?\bfrom\s*["'][^"']+["']/g, "")
    // Literal dynamic imports are in the graph (embedded by compile).
    .replace(/import\(\s*["'][^"']+["']\s*\)/g, "");
  return [...text.matchAll(/["'](\.\.?\/[\w/.]+\.ts)["']/g)].map((m) =>
    join(file, "..", m[1]!)
  );
}

Deno.test("compile includes every module loaded by computed path", async () => {
  await withUserHome(async (home) => {
    const command = await compileCommand(home);
    const includes = command.flatMap((a, i) =>
      command[i - 1] === "--include" ? [a] : []
    );
    for (
      const file of [
        "src/cli/main.ts",
        "src/cli/run.ts",
        "src/cli/commands/memory_group.ts",
        "src/launcher/launch.ts",
        "src/sandbox/sandbox_launch.ts",
      ]
    ) {
      const found = await computedSpecifiers(file);
      assert.ok(found.length > 0, file);
      for (const module of found) {
        // Worker entry modules are never embedded unless included (a
        // folder includes every module below it).
        assert.ok(
          includes.some((dir) =>
            dir.endsWith("/") && join(ROOT, module).startsWith(dir)
          ),
          `--include ${module}`,
        );
      }
    }
    // Bundled providers (mod.ts, cli.ts) are imported by computed path.
    assert.ok(includes.includes(`${join(ROOT, "plugins", "memory")}/`));
  });
});

Deno.test("deno task compile builds hermes, or fails only for the blocked denort download", async () => {
  await withUserHome(async (home) => {
    const output = join(home, "hermes");
    const result = await compileScript(["--output", output], home);
    if (result.code !== 0) {
      // The runtime (denort) cannot be downloaded here.
      assert.match(result.err, /denort/);
      assert.match(result.err, /dl\.deno\.land/);
      return;
    }
    const help = await new Deno.Command(output, {
      args: ["--help"],
      env: { HOME: home },
      stdout: "piped",
    }).output();
    assert.equal(help.code, 0);
    assert.match(new TextDecoder().decode(help.stdout), /^USAGE:/m);
  });
});

Deno.test("the compile entry point runs under deno run with the same permission flags", async () => {
  await withUserHome(async (home) => {
    const command = await compileCommand(home);
    const flags: string[] = [];
    for (let i = 2; i < command.length - 1; i++) {
      if (command[i] === "--include" || command[i] === "--output") i++;
      else flags.push(command[i]!);
    }
    const run = (args: string[]) =>
      deno(["run", ...flags, command.at(-1)!, ...args], home, "/");
    const help = await run(["--help"]);
    assert.equal(help.code, 0, help.err);
    assert.match(help.out, /^USAGE:\n {2}hermes /m);
    const status = await run(["memory", "status"]);
    assert.equal(status.code, 0, status.err);
    assert.match(status.out, /Provider: +honcho/);
    const off = await run(["memory", "off"]);
    assert.equal(off.code, 0, off.err);
  });
});
