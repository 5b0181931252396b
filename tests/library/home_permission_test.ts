// A home that is never guessed: when the process may not read HOME or
// HERMES_HOME, the library (openMemory, and the hand assembly), the CLI and
// the launcher stop with one error naming --allow-env=HOME,HERMES_HOME,
// and write nothing: not in the working directory (it used to become
// ./.hermes), not in the temp directory, not in the user's home.
import assert from "node:assert/strict";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { REPO } from "../helpers/plugin_fixtures.ts";
import { type CommandResult, runCommand } from "../helpers/run_command.ts";

const FLAG = "--allow-env=HOME,HERMES_HOME";
const MOD = pathToFileURL(join(REPO, "mod.ts")).href;

interface Scratch extends AsyncDisposable {
  /** The child's working directory. */
  cwd: string;
  /** The child's TMPDIR. */
  tmp: string;
  /** The child's HOME. */
  user: string;
  /** Everything under the three, relative to the scratch root. */
  contents(): string[];
}

async function scratch(): Promise<Scratch> {
  const root = await Deno.realPath(
    await Deno.makeTempDir({ prefix: "hermes-nohome-" }),
  );
  const [cwd, tmp, user] = ["cwd", "tmp", "user"].map((d) => join(root, d));
  for (const dir of [cwd, tmp, user]) await Deno.mkdir(dir!);
  const walk = (dir: string, rel: string, out: string[]): string[] => {
    for (const entry of Deno.readDirSync(dir)) {
      out.push(`${rel}/${entry.name}`);
      if (entry.isDirectory) {
        walk(join(dir, entry.name), `${rel}/${entry.name}`, out);
      }
    }
    return out;
  };
  return {
    cwd: cwd!,
    tmp: tmp!,
    user: user!,
    contents: () => walk(root, "", []).sort(),
    async [Symbol.asyncDispose]() {
      await Deno.remove(root, { recursive: true });
    },
  };
}

/** Runs deno in `s.cwd` with only HOME, TMPDIR, PATH and DENO_DIR set. */
function run(s: Scratch, args: string[]): Promise<CommandResult> {
  return runCommand(Deno.execPath(), args, {
    cwd: s.cwd,
    env: { HOME: s.user, TMPDIR: s.tmp },
  });
}

/** Runs `agent.ts` (no config, the locked npm packages) with `flags`. */
function runAgent(s: Scratch, flags: string[]): Promise<CommandResult> {
  return run(s, [
    "run",
    "--cached-only",
    "--no-prompt",
    "--no-config",
    `--lock=${join(REPO, "deno.lock")}`,
    "--frozen",
    "--allow-read",
    "--allow-write",
    ...flags,
    "agent.ts",
  ]);
}

const AGENTS: Record<string, string> = {
  "openMemory()": `
import { openMemory } from ${JSON.stringify(MOD)};
const memory = await openMemory({ sessionId: "s1" });
await memory.memoryTool({ action: "add", target: "user", content: "Lives in Porto" });
await memory.close();
`,
  "the hand assembly": `
import { BuiltinMemoryProvider, loadConfig, MemoryManager } from ${
    JSON.stringify(MOD)
  };
const config = await loadConfig();
const manager = new MemoryManager({ config });
const builtin = new BuiltinMemoryProvider();
await manager.addProvider(builtin);
await manager.initializeAll("s1", { platform: "cli" });
await builtin.handleMemoryTool({ action: "add", target: "user", content: "Lives in Porto" });
await manager.shutdownAll();
`,
};

for (const [name, source] of Object.entries(AGENTS)) {
  Deno.test(`library, ${name}: without env access, one error naming ${FLAG}, and nothing written anywhere`, async () => {
    await using s = await scratch();
    await Deno.writeTextFile(join(s.cwd, "agent.ts"), source);
    const before = s.contents();
    const result = await runAgent(s, []);
    assert.notEqual(result.code, 0, result.err);
    assert.match(result.err, /HermesHomeUnknownError/);
    assert.equal(result.err.split(FLAG).length - 1, 1, result.err);
    assert.match(result.err, /environment variable HERMES_HOME/);
    assert.deepEqual(s.contents(), before);
  });
}

Deno.test(`library: HERMES_HOME readable and unset, HOME denied: the error names HOME and ${FLAG}`, async () => {
  await using s = await scratch();
  await Deno.writeTextFile(join(s.cwd, "agent.ts"), AGENTS["openMemory()"]!);
  const before = s.contents();
  const result = await runAgent(s, ["--allow-env=HERMES_HOME"]);
  assert.notEqual(result.code, 0);
  assert.match(
    result.err,
    /may not read the environment variable HOME: run deno with --allow-env=HOME,HERMES_HOME/,
  );
  assert.deepEqual(s.contents(), before);
});

Deno.test(`library: with ${FLAG} the same agent works (the home is $HOME/.hermes)`, async () => {
  await using s = await scratch();
  await Deno.writeTextFile(join(s.cwd, "agent.ts"), AGENTS["openMemory()"]!);
  const result = await runAgent(s, [`${FLAG}`]);
  assert.equal(result.code, 0, result.err);
  assert.equal(result.err, "");
  assert.equal(
    (await Deno.readTextFile(join(s.user, ".hermes", "memories", "USER.md")))
      .trim(),
    "Lives in Porto",
  );
  assert.deepEqual([...Deno.readDirSync(s.cwd)].map((e) => e.name), [
    "agent.ts",
  ]);
});

for (
  const [what, entry, flags] of [
    ["the CLI run directly", "src/cli/main.ts", []],
    ["the launcher", "src/launcher/main.ts", ["--allow-run"]],
  ] as const
) {
  Deno.test(`${what} without env access: one error naming ${FLAG}, exit 1, nothing written`, async () => {
    await using s = await scratch();
    const before = s.contents();
    const result = await run(s, [
      "run",
      "--cached-only",
      "--no-prompt",
      `--config=${join(REPO, "deno.json")}`,
      "--allow-read",
      "--allow-write",
      ...flags,
      join(REPO, entry),
      "memory",
      "status",
    ]);
    assert.equal(result.code, 1, result.err);
    // The launcher's progress note, printed when filling Deno's cache takes
    // over a second (a first run, a loaded machine), is not an error line.
    const lines = result.err.trim().split("\n")
      .filter((l) => !l.startsWith("hermes: caching the modules"));
    assert.equal(lines.length, 1, result.err);
    assert.match(lines[0]!, /Cannot tell where the Hermes home is/);
    assert.ok(lines[0]!.includes(FLAG), lines[0]);
    assert.doesNotMatch(result.err, /absolute path|manifest|--help/);
    assert.equal(result.out, "");
    assert.deepEqual(s.contents(), before);
  });
}
