// Structure rules of the bundled providers that reviews kept asking for:
// no class in plugins/ is over 600 lines (a class that big mixes concerns
// that want their own state and interface), and in the Honcho provider
// only the transport calls fetch (so auth, deadlines, error mapping and the
// no-re-send rule for writes cannot be bypassed).
import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { join } from "node:path";
import { readdir, readFile } from "node:fs/promises";

const root = fileURLToPath(new URL("../..", import.meta.url));
const MAX_CLASS_LINES = 600;

async function sourceFiles(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const entry of await readdir(join(root, dir), { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...await sourceFiles(path));
    else if (entry.name.endsWith(".ts")) out.push(path);
  }
  return out;
}

/**
 * Top-level classes of a formatted file and their lengths in lines, from
 * the `class` line to its closing brace (JSDoc inside the class included).
 */
export function classSizes(text: string): { name: string; lines: number }[] {
  const lines = text.split("\n");
  const out: { name: string; lines: number }[] = [];
  for (let i = 0; i < lines.length; i++) {
    const match = /^(?:export\s+)?(?:default\s+)?(?:abstract\s+)?class\s+(\w+)/
      .exec(lines[i]!);
    if (!match) continue;
    let end = i;
    if (!lines[i]!.trimEnd().endsWith("{}")) {
      while (end < lines.length && lines[end] !== "}") end++;
      assert.ok(end < lines.length, `class ${match[1]} has no closing brace`);
    }
    out.push({ name: match[1]!, lines: end - i + 1 });
  }
  return out;
}

Deno.test("classSizes() counts a class from its declaration to its closing brace", () => {
  const text = [
    "/** Doc. */",
    "export class A {",
    "  /** Inside. */",
    "  x = 1;",
    "}",
    "class B {}",
    "export abstract class C extends A {",
    "  y = `",
    "}`;",
    "}",
  ].join("\n");
  assert.deepEqual(classSizes(text), [
    { name: "A", lines: 4 },
    { name: "B", lines: 1 },
    { name: "C", lines: 4 },
  ]);
});

Deno.test(`no class in plugins/ is over ${MAX_CLASS_LINES} lines`, async () => {
  const offenders: string[] = [];
  for (const file of await sourceFiles("plugins")) {
    const text = await readFile(join(root, file), "utf8");
    for (const { name, lines } of classSizes(text)) {
      if (lines > MAX_CLASS_LINES) offenders.push(`${file}: ${name} ${lines}`);
    }
  }
  assert.deepEqual(offenders, []);
});

Deno.test("in the Honcho provider only client_transport.ts calls fetch", async () => {
  const offenders: string[] = [];
  for (const file of await sourceFiles(join("plugins", "memory", "honcho"))) {
    if (file.endsWith(join("honcho", "client_transport.ts"))) continue;
    const code = (await readFile(join(root, file), "utf8"))
      .replace(/\/\*[\s\S]*?\*\//g, "")
      .replace(/\/\/.*$/gm, "");
    if (/(?<![\w.#])fetch\s*\(|globalThis\.fetch\b/.test(code)) {
      offenders.push(file);
    }
  }
  assert.deepEqual(offenders, []);
});
