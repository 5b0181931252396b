// A library host started with only --allow-read --allow-write --allow-env
// --allow-run (no unstable flag, no --allow-net, a deno.json without
// "unstable") loads providers through the public API. Each provider runs in
// its own deno process: Honcho reaches its server although the host has no
// network at all; a provider that exhausts its heap, one that spins and one
// that tries to exit end themselves only, and the host goes on serving the
// built-in memory.
import assert from "node:assert/strict";
import { join } from "node:path";
import { startHonchoTestServer } from "../honcho_server.ts";
import { REPO, writeProvider } from "../helpers/plugin_fixtures.ts";
import { runDeno } from "../helpers/deno_child.ts";
import { lockedDenoDir } from "../helpers/locked_npm_cache.ts";
import { type LibraryWorld, libraryWorld } from "../helpers/library_world.ts";

const HOST = join(REPO, "tests", "helpers", "library_host.ts");

/** Runs the library host with exactly the four flags. */
export async function runLibraryHost(
  world: LibraryWorld,
  args: string[],
): Promise<{ code: number; out: Record<string, unknown>; stderr: string }> {
  const run = await runDeno([
    "run",
    "--quiet",
    "--no-lock",
    "--cached-only",
    "--allow-read",
    "--allow-write",
    "--allow-env",
    "--allow-run",
    `--config=${world.config}`,
    HOST,
    ...args,
  ], {
    // No lock: npm packages resolve from the cache's metadata, which here
    // lists only the pinned versions.
    cwd: world.root,
    env: { HOME: world.userHome, DENO_DIR: await lockedDenoDir() },
  });
  const last = run.stdout.trim().split("\n").at(-1) ?? "";
  let out: Record<string, unknown> = {};
  try {
    out = JSON.parse(last);
  } catch {
    // Reported by the caller's assertion on `code`.
  }
  return { code: run.code, out, stderr: run.stderr };
}

Deno.test("a library host with only --allow-read/write/env/run loads Honcho from config.yaml; Honcho reaches its server from its own process", async () => {
  await using honcho = await startHonchoTestServer({ apiKey: "hch-lib-42" });
  const host = new URL(honcho.url).host;
  await using w = await libraryWorld(
    `memory:\n  provider: honcho\n  permissions:\n    honcho:\n      net: [${host}]\n`,
  );
  await Deno.writeTextFile(
    join(w.home, "honcho.json"),
    JSON.stringify({
      apiKey: "hch-lib-42",
      hosts: { hermes: { baseUrl: honcho.url, peerName: "alice" } },
    }),
  );
  const run = await runLibraryHost(w, [
    "turns",
    "the kite is red",
    "noted, red kite",
    "the sky is grey",
    "noted, grey sky",
  ]);
  assert.equal(run.code, 0, run.stderr);
  assert.doesNotMatch(run.stderr, /unstable|cannot confirm/i);
  assert.equal(run.out.loaded, "honcho", run.stderr);
  assert.equal(run.out.memory, true);
  assert.deepEqual(run.out.warnings, []);
  const contents = honcho.state.messages.map((m) => m.content);
  for (
    const text of [
      "the kite is red",
      "noted, red kite",
      "the sky is grey",
      "noted, grey sky",
    ]
  ) {
    assert.equal(contents.filter((c) => c === text).length, 1, text);
  }
  honcho.assertNoViolations();
});

function hostileSource(name: string, body: string): string {
  return `import { MemoryProvider, type ToolSchema } from "@hermes/memory/provider";
export class P extends MemoryProvider {
  get name(): string { return ${JSON.stringify(name)}; }
  isAvailable(): boolean { return true; }
  initialize(): void {}
  getToolSchemas(): ToolSchema[] {
    return [{ name: "boom", description: "x", parameters: { type: "object", properties: {} } }];
  }
  handleToolCall(): string {
${body}
  }
}
`;
}

const HOSTILE: Record<string, { body: string; stopped: RegExp }> = {
  heap: {
    body: `    const hoard: unknown[] = [];
    while (true) hoard.push(new Array(1 << 16).fill(hoard.length));`,
    stopped:
      /its sandbox process ran out of memory \(its heap is capped at 64 MB\) and ended/,
  },
  spin: {
    body: "    while (true) { /* spin */ }",
    stopped:
      /its sandbox process stopped responding for 1000 ms of CPU time \(a busy loop\?\) and was killed/,
  },
  quitter: {
    // Deno.exit is refused by the hardening; process.abort() is not, and
    // ends the process it runs in (in a worker, the host's).
    body: `    try { Deno.exit(9); } catch { /* refused */ }
    (globalThis as unknown as { process: { abort(): never } }).process.abort();`,
    stopped: /its sandbox process was ended by SIGABRT/,
  },
};

for (const [name, attack] of Object.entries(HOSTILE)) {
  Deno.test(`a provider that ${name === "heap" ? "exhausts its heap" : name === "spin" ? "spins" : "ends its process"} ends itself only: the library host answers the built-in memory tool`, async () => {
    await using w = await libraryWorld(`memory:\n  provider: ${name}\n`);
    await writeProvider(join(w.home, "plugins"), name, {
      "mod.ts": hostileSource(name, attack.body),
      "plugin.yaml": `name: ${name}\n`,
    });
    const run = await runLibraryHost(w, ["tool", "boom"]);
    assert.equal(run.code, 0, `the host died: ${run.stderr}`);
    assert.equal(run.out.loaded, name);
    const tool = JSON.parse(String(run.out.tool)) as { error?: string };
    assert.match(tool.error ?? "", attack.stopped, String(run.out.tool));
    assert.equal(run.out.memory, true);
    const memory = await Deno.readTextFile(
      join(w.home, "memories", "MEMORY.md"),
    );
    assert.match(memory, /the kite is red/);
  });
}

Deno.test("a gateway serving 5 profiles with at most 2 live providers stores every turn on the Honcho server exactly once", async () => {
  await using honcho = await startHonchoTestServer({ apiKey: "hch-gw-5" });
  const host = new URL(honcho.url).host;
  await using w = await libraryWorld("memory:\n  provider: ''\n");
  const homes: string[] = [];
  for (let i = 0; i < 5; i++) {
    const home = join(w.home, "profiles", `p${i}`);
    await Deno.mkdir(home, { recursive: true });
    await Deno.writeTextFile(
      join(home, "config.yaml"),
      `memory:\n  provider: honcho\n  permissions:\n    honcho:\n      net: [${host}]\n`,
    );
    await Deno.writeTextFile(
      join(home, "honcho.json"),
      JSON.stringify({
        apiKey: "hch-gw-5",
        hosts: {
          [`hermes_p${i}`]: { baseUrl: honcho.url, peerName: `user${i}` },
        },
      }),
    );
    homes.push(home);
  }
  const turns = 3;
  const run = await runLibraryHost(w, [
    "gateway",
    "2",
    String(turns),
    ...homes,
  ]);
  assert.equal(run.code, 0, run.stderr);
  assert.deepEqual(run.out.loaded, Array(5).fill("honcho"), run.stderr);
  assert.ok(
    Number(run.out.maxLive) <= 2,
    `${run.out.maxLive} providers ran at once`,
  );
  assert.deepEqual(run.out.warnings, []);
  const contents = honcho.state.messages.map((m) => m.content);
  for (let i = 0; i < 5; i++) {
    for (let turn = 1; turn <= turns; turn++) {
      for (const text of [`p${i} turn ${turn}`, `p${i} reply ${turn}`]) {
        assert.equal(
          contents.filter((c) => c === text).length,
          1,
          `${text}: ${JSON.stringify(contents)}`,
        );
      }
    }
  }
  assert.equal(contents.length, 5 * turns * 2);
  honcho.assertNoViolations();
});
