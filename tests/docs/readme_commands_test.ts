// Every command block of README.md works as written: run in order from the
// repository root, as a reader on a fresh machine would, in one temporary
// HOME (no HERMES_HOME, no deno on the PATH: only /usr/bin, /bin and the
// folder tools/install.sh fills). The pinned Deno that tools/deno would fetch
// from npm is already in that home (a link to this Deno), and the Deno module
// cache is the test's own, so nothing is downloaded; HTTP(S) goes to a dead
// proxy except for 127.0.0.1, so a block that needs any other network fails.
// How each block is run is in tests/helpers/readme_blocks.ts.
import assert from "node:assert/strict";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { startHonchoTestServer } from "../honcho_server.ts";
import {
  type BlockEnvironment,
  commandBlocks,
  freshMachine,
  runBlock,
} from "../helpers/readme_blocks.ts";
import { DENO_DIR } from "../helpers/run_command.ts";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const DEAD_PROXY = "http://127.0.0.1:9";

function environment(home: string): Record<string, string> {
  return {
    HOME: home,
    PATH: `${join(home, ".deno", "bin")}:/usr/bin:/bin`,
    DENO_DIR,
    DENO_NO_UPDATE_CHECK: "1",
    NO_COLOR: "1",
    LANG: "C.UTF-8",
    HTTP_PROXY: DEAD_PROXY,
    HTTPS_PROXY: DEAD_PROXY,
    http_proxy: DEAD_PROXY,
    https_proxy: DEAD_PROXY,
    NO_PROXY: "127.0.0.1,localhost",
    no_proxy: "127.0.0.1,localhost",
  };
}

Deno.test("every command block of README.md works as written on a fresh machine", async (t) => {
  const readme = await Deno.readTextFile(join(ROOT, "README.md"));
  const blocks = commandBlocks(readme);
  assert.ok(blocks.length >= 5, "README.md shows its commands in blocks");
  await using machine = await freshMachine(ROOT, "hermes-readme-");
  let server: Awaited<ReturnType<typeof startHonchoTestServer>> | undefined;
  const where: BlockEnvironment = {
    cwd: ROOT,
    env: environment(machine.home),
    home: machine.home,
    honchoUrl: async () => (server ??= await startHonchoTestServer()).url,
    timeoutMs: 240_000,
  };
  try {
    for (const block of blocks) {
      const first = block.script.trim().split("\n")[0]!.slice(0, 60);
      const name = `README.md:${block.line} ${first}`;
      if (block.mode.kind === "skip") {
        await t.step({
          name: `${name} (skipped: ${block.mode.reason})`,
          ignore: true,
          fn: () => {},
        });
        continue;
      }
      await t.step(name, async () => {
        const result = await runBlock(block, where);
        assert.ok(result.ok, `README.md:${block.line}: ${result.problem}`);
      });
    }
    if (server) assert.deepEqual(server.violations, []);
  } finally {
    await server?.[Symbol.asyncDispose]();
  }
});

Deno.test("the README runner fails a block that does not work as written", async () => {
  const page = [
    "```sh",
    "false",
    "```",
    "",
    "```console",
    "$ echo hello",
    "goodbye",
    "```",
    "",
    "<!-- run: exit 3 -->",
    "```sh",
    "exit 4",
    "```",
    "",
    "<!-- run: until ^ready -->",
    "```sh",
    "echo starting",
    "```",
    "",
    "```console",
    "$ printf 'a\\nb\\nc\\n' \\",
    "  | tac",
    "c",
    "…",
    "a",
    "```",
    "",
    "<!-- run: skip (needs a terminal) -->",
    "```sh",
    "top",
    "```",
  ].join("\n");
  const blocks = commandBlocks(page);
  assert.deepEqual(blocks.map((b) => b.mode.kind), [
    "run",
    "run",
    "run",
    "until",
    "run",
    "skip",
  ]);
  const where: BlockEnvironment = {
    cwd: ROOT,
    env: { PATH: "/usr/bin:/bin" },
    home: "/nonexistent",
    timeoutMs: 30_000,
  };
  const results = [];
  for (const block of blocks.slice(0, 5)) {
    results.push(await runBlock(block, where));
  }
  assert.deepEqual(results.map((r) => r.ok), [
    false,
    false,
    false,
    false,
    true,
  ]);
  assert.match(results[0]!.problem, /^exit code 1 \(the page expects 0\)/);
  assert.match(results[1]!.problem, /lacks the shown line 'goodbye'/);
  assert.match(results[2]!.problem, /^exit code 4 \(the page expects 3\)/);
  assert.match(results[3]!.problem, /before printing a line matching/);
});

Deno.test("a run marker must be one the runner knows and sit before a command block", () => {
  assert.throws(
    () => commandBlocks("<!-- run: sometimes -->\n```sh\ntrue\n```\n"),
    /line 1: unknown run marker 'sometimes'/,
  );
  assert.throws(
    () => commandBlocks("<!-- run: skip -->\n```sh\ntrue\n```\n"),
    /unknown run marker 'skip'/,
  );
  assert.throws(
    () => commandBlocks("<!-- run: exit 1 -->\n```ts\n1\n```\n"),
    /a run marker before a 'ts' block/,
  );
});
