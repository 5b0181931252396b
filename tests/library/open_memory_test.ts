// openMemory()'s options as an agent meets them, each run in a child
// process with a scratch HOME (the profile root is ~/.hermes): a named
// profile opens its own home, a mistyped one is refused without creating
// anything, `provider: false` keeps the built-in store only although
// config.yaml names a provider.
import assert from "node:assert/strict";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { REPO } from "../helpers/plugin_fixtures.ts";
import { type CommandResult, runCommand } from "../helpers/run_command.ts";

const MOD = JSON.stringify(pathToFileURL(join(REPO, "mod.ts")).href);

async function withUser(
  fn: (
    user: string,
    run: (source: string) => Promise<CommandResult>,
  ) => Promise<void>,
): Promise<void> {
  const user = await Deno.realPath(
    await Deno.makeTempDir({ prefix: "hermes-open-" }),
  );
  const run = async (source: string): Promise<CommandResult> => {
    await Deno.writeTextFile(join(user, "agent.ts"), source);
    return await runCommand(Deno.execPath(), [
      "run",
      "--cached-only",
      "--no-prompt",
      `--config=${join(REPO, "deno.json")}`,
      "--allow-env",
      `--allow-read=${REPO},${user}`,
      `--allow-write=${user}`,
      join(user, "agent.ts"),
    ], { cwd: user, env: { HOME: user } });
  };
  try {
    await fn(user, run);
  } finally {
    await Deno.remove(user, { recursive: true });
  }
}

Deno.test("openMemory({ profile }) opens <root>/profiles/<name>; a name with no profile is refused and nothing is created", async () => {
  await withUser(async (user, run) => {
    const root = join(user, ".hermes");
    await Deno.mkdir(join(root, "profiles", "work"), { recursive: true });
    const ok = await run(`import { openMemory } from ${MOD};
await using memory = await openMemory({ sessionId: "s1", profile: "work" });
console.log(memory.hermesHome);
await memory.memoryTool({ action: "add", target: "user", content: "Works on the tram app" });
`);
    assert.equal(ok.code, 0, ok.err);
    assert.equal(ok.out.trim(), join(root, "profiles", "work"));
    assert.match(
      await Deno.readTextFile(
        join(root, "profiles", "work", "memories", "USER.md"),
      ),
      /Works on the tram app/,
    );
    const typo = await run(`import { openMemory } from ${MOD};
await openMemory({ sessionId: "s1", profile: "wrok" });
`);
    assert.notEqual(typo.code, 0);
    assert.match(
      typo.err,
      /Cannot open memory: profile 'wrok' does not exist: there is no directory .*profiles\/wrok: create it with 'hermes --profile wrok memory setup'/,
    );
    assert.deepEqual(
      [...Deno.readDirSync(join(root, "profiles"))].map((e) => e.name),
      ["work"],
    );
  });
});

Deno.test("openMemory({ provider: false }) keeps the built-in store only although config.yaml names a provider", async () => {
  await withUser(async (user, run) => {
    const home = join(user, ".hermes");
    await Deno.mkdir(home);
    await Deno.writeTextFile(
      join(home, "config.yaml"),
      "memory:\n  provider: honcho\n",
    );
    const result = await run(`import { openMemory } from ${MOD};
await using memory = await openMemory({
  sessionId: "s9",
  provider: false,
  initialize: { platform: "telegram" },
});
console.log(JSON.stringify({
  providers: memory.manager.providers.map((p) => p.name),
  session: memory.sessionId,
  tool: memory.builtin.memoryToolSchema()?.name,
}));
`);
    assert.equal(result.code, 0, result.err);
    assert.equal(result.err, "");
    assert.deepEqual(JSON.parse(result.out), {
      providers: ["builtin"],
      session: "s9",
      tool: "memory",
    });
  });
});
