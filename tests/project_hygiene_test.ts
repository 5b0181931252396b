// Checks a user of the published module relies on without knowing it: the
// package publishes cleanly, its public API is documented, and the layout
// rules that keep providers confinable hold.
import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { join, relative } from "node:path";
import { readdir, readFile } from "node:fs/promises";

const root = fileURLToPath(new URL("..", import.meta.url));

async function deno(
  args: string[],
): Promise<{ code: number; out: string }> {
  const { code, stdout, stderr } = await new Deno.Command(Deno.execPath(), {
    args,
    cwd: root,
    env: { NO_COLOR: "1" },
    stdout: "piped",
    stderr: "piped",
  }).output();
  const decoder = new TextDecoder();
  return {
    code,
    out: decoder.decode(stdout) + decoder.decode(stderr),
  };
}

async function sourceFiles(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const entry of await readdir(join(root, dir), { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...await sourceFiles(path));
    else if (entry.name.endsWith(".ts")) out.push(path);
  }
  return out;
}

Deno.test("deno publish --dry-run accepts the package without slow types", async () => {
  const { code, out } = await deno(["publish", "--dry-run", "--allow-dirty"]);
  assert.equal(code, 0, out);
});

Deno.test("deno doc --lint finds every entry point's public symbols documented", async () => {
  const config = JSON.parse(await readFile(join(root, "deno.json"), "utf8"));
  const entryPoints = Object.values(config.exports as Record<string, string>);
  assert.ok(entryPoints.includes("./mod.ts"), entryPoints.join(", "));
  // Each entry point on its own: a type it exposes must be exported by that
  // entry point, not only by another one.
  for (const entryPoint of entryPoints) {
    const { code, out } = await deno(["doc", "--lint", entryPoint]);
    assert.equal(code, 0, `${entryPoint}:\n${out}`);
  }
});

Deno.test("deno fmt --check and deno lint are clean", async () => {
  const fmt = await deno(["fmt", "--check"]);
  assert.equal(fmt.code, 0, fmt.out);
  const lint = await deno(["lint"]);
  assert.equal(lint.code, 0, lint.out);
});

Deno.test("Deno.env is read only in src/core/env.ts", async () => {
  const offenders: string[] = [];
  for (
    const file of [...await sourceFiles("src"), ...await sourceFiles("plugins")]
  ) {
    const text = await readFile(join(root, file), "utf8");
    if (/Deno\.env\b/.test(text) && file !== join("src", "core", "env.ts")) {
      offenders.push(relative(root, join(root, file)));
    }
  }
  assert.deepEqual(offenders, []);
});

Deno.test("bundled providers import the framework only as @hermes/memory", async () => {
  const offenders: string[] = [];
  for (const file of await sourceFiles("plugins")) {
    const text = await readFile(join(root, file), "utf8");
    if (/from\s+["'](\.\.\/)+src\//.test(text)) offenders.push(file);
  }
  assert.deepEqual(offenders, []);
});

Deno.test("Deno.exit is called only by the CLI entry point", async () => {
  const offenders: string[] = [];
  for (
    const file of [...await sourceFiles("src"), ...await sourceFiles("plugins")]
  ) {
    const text = await readFile(join(root, file), "utf8");
    if (/Deno\.exit\(/.test(text) && file !== join("src", "cli", "main.ts")) {
      offenders.push(file);
    }
  }
  assert.deepEqual(offenders, []);
});
