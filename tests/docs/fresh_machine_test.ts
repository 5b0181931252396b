// What a fresh machine needs, checked from the files that decide it:
// .ci/run runs the README's test command and nothing else (no apt-get, no
// browser install: the test browser comes from npm); deno.lock, the lock of
// `hermes`, pins only what the CLI and its bundled providers import, so a
// first run fetches no test package; tests/deno.lock pins the same versions
// plus every package a test or benchmark imports, so no test resolves a
// package past the locks. tools/fresh_machine_check.sh runs the whole thing
// on a fresh clone, online and then offline.
import assert from "node:assert/strict";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { commandBlocks } from "../helpers/readme_blocks.ts";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));

interface Lock {
  specifiers: Record<string, string>;
  npm: Record<string, { integrity: string; dependencies?: string[] }>;
  workspace: { dependencies: string[] };
}

async function readLock(path: string): Promise<Lock> {
  return JSON.parse(await Deno.readTextFile(join(ROOT, path)));
}

/** The lines of a shell script that do something (no comments, blanks, set or cd). */
function commands(script: string): string[] {
  return script.split("\n").map((l) => l.trim()).filter((l) =>
    l !== "" && !l.startsWith("#") && !/^set -[euxo ]+pipefail$/.test(l) &&
    !/^cd "\$\(dirname "\$0"\)\/\.\."$/.test(l)
  );
}

/** The README's test command: the development section's one command. */
async function readmeTestCommand(): Promise<string> {
  const readme = await Deno.readTextFile(join(ROOT, "README.md"));
  const section = readme.slice(readme.indexOf("\n## Development\n"));
  const blocks = commandBlocks(section);
  assert.equal(
    blocks.length,
    1,
    "README.md's Development section has one command block",
  );
  const lines = commands(blocks[0]!.script.replace(/\s+#.*$/gm, ""));
  assert.equal(lines.length, 1, blocks[0]!.script);
  return lines[0]!;
}

Deno.test(".ci/run runs exactly the README's test command and nothing else", async () => {
  const test = await readmeTestCommand();
  assert.equal(test, "./tools/deno task test");
  const ci = await Deno.readTextFile(join(ROOT, ".ci", "run"));
  assert.deepEqual(commands(ci), [test]);
});

/** The package keys `from` reaches in `lock` (its `dependencies`, recursively). */
function closure(lock: Lock, from: string[]): Set<string> {
  const keys = Object.keys(lock.npm);
  const named = (dep: string) =>
    lock.npm[dep]
      ? dep
      : keys.find((k) => k.slice(0, k.indexOf("@", 1)) === dep);
  const seen = new Set<string>();
  const stack = [...from];
  while (stack.length > 0) {
    const key = named(stack.pop()!);
    assert.ok(key !== undefined, `a dependency the lock does not hold`);
    if (seen.has(key)) continue;
    seen.add(key);
    stack.push(...lock.npm[key]!.dependencies ?? []);
  }
  return seen;
}

const PACKAGE = String.raw`npm:(?:@[^/"]+\/)?[^/"@]+@[^/"]+`;
/** Static imports at the start of a line (not those in a fixture's source text). */
const STATIC = new RegExp(
  String.raw`^(?:import|export|\})[^\n]*? from "(${PACKAGE})`,
  "gm",
);
const DYNAMIC = new RegExp(String.raw`\bimport\("(${PACKAGE})`, "g");

/** The `npm:` packages the .ts files under `dirs` import. */
async function npmSpecifiers(
  dirs: string[],
  patterns: RegExp[],
): Promise<Set<string>> {
  const found = new Set<string>();
  const walk = async (dir: string): Promise<void> => {
    for await (const e of Deno.readDir(join(ROOT, dir))) {
      const path = `${dir}/${e.name}`;
      if (e.isDirectory && e.name !== "fixtures") await walk(path);
      else if (e.isFile && e.name.endsWith(".ts")) {
        const text = await Deno.readTextFile(join(ROOT, path));
        for (const pattern of patterns) {
          for (const m of text.matchAll(pattern)) found.add(m[1]!);
        }
      }
    }
  };
  for (const dir of dirs) await walk(dir);
  return found;
}

Deno.test("deno.lock pins only what hermes imports; tests/deno.lock pins the same and every test package", async () => {
  const cli = await readLock("deno.lock");
  const tests = await readLock("tests/deno.lock");
  const config = JSON.parse(await Deno.readTextFile(join(ROOT, "deno.json")));
  // The CLI's lock: its specifiers are deno.json's npm imports and the
  // framework's own npm: imports, and it holds exactly their packages.
  const imports = Object.values(config.imports as Record<string, string>)
    .filter((v) => v.startsWith("npm:"))
    .map((v) => v.replace(/^npm:\/?/, "npm:").replace(/\/$/, ""));
  const own = await npmSpecifiers(["src", "plugins"], [STATIC, DYNAMIC]);
  assert.deepEqual(
    Object.keys(cli.specifiers).sort(),
    [...new Set([...imports, ...own])].sort(),
  );
  const reached = closure(
    cli,
    Object.entries(cli.specifiers).map(([s, v]) =>
      `${s.slice(4, s.indexOf("@", 5))}@${v}`
    ),
  );
  assert.deepEqual([...reached].sort(), Object.keys(cli.npm).sort());
  for (
    const testOnly of [
      "puppeteer-core",
      "@sparticuz/chromium",
      "@honcho-ai/sdk",
    ]
  ) {
    assert.ok(
      !Object.keys(cli.npm).some((k) => k.startsWith(`${testOnly}@`)),
      `deno.lock holds the test package ${testOnly}`,
    );
  }
  // The tests' lock: the same workspace, the same version and integrity of
  // every package, and a pin for each npm: import of the tests and benches.
  assert.deepEqual(tests.workspace, cli.workspace);
  for (const [specifier, version] of Object.entries(cli.specifiers)) {
    assert.equal(tests.specifiers[specifier], version, specifier);
  }
  for (const [key, entry] of Object.entries(cli.npm)) {
    assert.equal(tests.npm[key]?.integrity, entry.integrity, key);
  }
  for (const specifier of await npmSpecifiers(["tests", "bench"], [STATIC])) {
    assert.ok(
      specifier in tests.specifiers,
      `${specifier} is imported by a test but not pinned in tests/deno.lock`,
    );
  }
});

Deno.test("the fixtures' npm packages are pinned in tests/fixtures/npm_fixtures.lock and every task installs from a lock, --frozen", async () => {
  const fixtures = await readLock("tests/fixtures/npm_fixtures.lock");
  // What the fixture plugins declare in their deno.json: exactly the lock's.
  const declared = new Set<string>();
  const plugins = join(ROOT, "tests", "fixtures", "plugins");
  for await (const e of Deno.readDir(plugins)) {
    const config = join(plugins, e.name, "deno.json");
    const text = await Deno.readTextFile(config).catch(() => "{}");
    for (const value of Object.values(JSON.parse(text).imports ?? {})) {
      if (String(value).startsWith("npm:")) declared.add(String(value));
    }
  }
  assert.deepEqual(
    Object.keys(fixtures.specifiers).sort(),
    [...declared].sort(),
  );
  const reached = closure(
    fixtures,
    Object.entries(fixtures.specifiers).map(([s, v]) =>
      `${s.slice(4, s.lastIndexOf("@"))}@${v}`
    ),
  );
  assert.deepEqual([...reached].sort(), Object.keys(fixtures.npm).sort());
  // No task resolves past a lock: every install is --frozen against one,
  // and deps:fixtures installs exactly the fixtures' lock.
  const tasks = JSON.parse(
    await Deno.readTextFile(join(ROOT, "deno.json")),
  ).tasks as Record<string, string>;
  for (const [name, task] of Object.entries(tasks)) {
    assert.doesNotMatch(task, /--no-lock/, `task ${name}`);
    for (const install of task.match(/deno install[^&]*/g) ?? []) {
      assert.match(install, /--frozen/, `task ${name}: ${install}`);
    }
  }
  const install = tasks["deps:fixtures"]!;
  assert.match(install, /--lock=tests\/fixtures\/npm_fixtures\.lock/);
  assert.deepEqual(
    install.split(" --entrypoint ")[1]!.trim().split(/\s+/).sort(),
    Object.keys(fixtures.specifiers).sort(),
  );
});
