// The CLI's conventions through the real `hermes` process (the `hermes`
// task's launcher): --version at every level (text and --json), --profile
// of a profile that does not exist, "did you mean" for provider names,
// `hermes honcho enable` after `memory off` and the refusals that say how
// to turn a provider back on or that config.yaml is broken, --json on
// off/reset/import and on the show forms of `honcho mode|strategy|tokens`.
import assert from "node:assert/strict";
import { join } from "node:path";
import { runHermesCli } from "../helpers/hermes_cli_child.ts";
import { loadConfig } from "../../src/config/config.ts";

const ROOT = new URL("../..", import.meta.url);
const META = JSON.parse(
  await Deno.readTextFile(new URL("deno.json", ROOT)),
) as { name: string; version: string };
const HONCHO_VERSION = /^version:\s*(\S+)/m.exec(
  await Deno.readTextFile(
    new URL("plugins/memory/honcho/plugin.yaml", ROOT),
  ),
)?.[1];

interface User extends AsyncDisposable {
  home: string;
  root: string;
  hermes(args: string[]): ReturnType<typeof runHermesCli>;
}

async function user(provider?: string): Promise<User> {
  const home = await Deno.realPath(
    await Deno.makeTempDir({ prefix: "hermes-conv-" }),
  );
  const root = join(home, ".hermes");
  await Deno.mkdir(root);
  if (provider !== undefined) {
    await Deno.writeTextFile(
      join(root, "config.yaml"),
      `memory:\n  provider: ${provider}\n`,
    );
  }
  return {
    home,
    root,
    hermes: (args) => runHermesCli(args, { userHome: home }),
    async [Symbol.asyncDispose]() {
      await Deno.remove(home, { recursive: true });
    },
  };
}

function exists(path: string): boolean {
  try {
    Deno.lstatSync(path);
    return true;
  } catch {
    return false;
  }
}

Deno.test("hermes --version, memory --version and honcho --version name the module, Deno and the active provider", async () => {
  await using u = await user("honcho");
  const expected = `${META.name} ${META.version}\ndeno ${Deno.version.deno}\n` +
    `memory provider: honcho ${HONCHO_VERSION} (bundled)\n`;
  for (
    const args of [
      ["--version"],
      ["-V"],
      ["memory", "--version"],
      ["honcho", "--version"],
    ]
  ) {
    const run = await u.hermes(args);
    assert.equal(run.code, 0, run.stderr);
    assert.equal(run.stderr, "");
    assert.equal(run.stdout, expected, args.join(" "));
  }
  const json = await u.hermes(["--version", "--json"]);
  assert.equal(json.code, 0, json.stderr);
  assert.deepEqual(JSON.parse(json.stdout), {
    module: { name: META.name, version: META.version },
    deno: Deno.version.deno,
    provider: { name: "honcho", version: HONCHO_VERSION, source: "bundled" },
  });
  // A global option, like --profile: a leaf command prints it too.
  const leaf = await u.hermes(["honcho", "status", "--version"]);
  assert.equal(leaf.code, 0, leaf.stderr);
  assert.equal(leaf.stdout, expected);

  await using none = await user();
  const builtin = await none.hermes(["--version"]);
  assert.match(builtin.stdout, /^memory provider: none \(built-in only\)$/m);
  const help = await none.hermes(["--help"]);
  assert.match(
    help.stdout,
    /^ {2}-V, --version +Show the versions: module, Deno, active provider$/m,
  );
});

Deno.test("--profile of a missing profile is an error naming its directory; setup says it creates it", async () => {
  await using u = await user();
  await Deno.mkdir(join(u.root, "profiles", "coder"), { recursive: true });
  const dir = join(u.root, "profiles", "nosuch");
  for (
    const args of [
      ["--profile", "nosuch", "memory", "status"],
      ["memory", "off", "--profile=nosuch"],
      ["--profile", "nosuch", "--version"],
    ]
  ) {
    const run = await u.hermes(args);
    assert.equal(run.code, 2, args.join(" "));
    assert.equal(run.stdout, "");
    assert.equal(
      run.stderr,
      `error: profile 'nosuch' does not exist: there is no directory ${dir}\n` +
        "hint: create it with 'hermes --profile nosuch memory setup', or check the name\n",
    );
    assert.equal(exists(dir), false, "the profile was created");
  }
  const setup = await u.hermes([
    "memory",
    "setup",
    "archive",
    "--yes",
    "--profile",
    "nosuch",
  ]);
  assert.equal(setup.code, 0, setup.stderr);
  assert.equal(
    setup.stderr,
    `note: profile 'nosuch' does not exist yet; setup creates it in ${dir}\n`,
  );
  assert.deepEqual(await loadConfig({ hermesHome: dir }), {
    memory: { provider: "archive" },
  });
  const status = await u.hermes(["--profile", "nosuch", "memory", "status"]);
  assert.equal(status.code, 0, status.stderr);
  // The default profile needs no directory of its own.
  const main = await u.hermes(["--profile", "default", "memory", "status"]);
  assert.equal(main.code, 0, main.stderr);
});

Deno.test("a provider name one or two edits off gets a 'did you mean'", async () => {
  await using typo = await user("honchoo");
  const config = join(typo.root, "config.yaml");
  const status = await typo.hermes(["honcho", "status"]);
  assert.equal(status.code, 2);
  assert.equal(
    status.stderr,
    `error: 'honcho' commands are available only while memory.provider is 'honcho'; memory.provider is 'honchoo' in ${config}, which names no installed provider (did you mean 'honcho'?)\n` +
      "hint: turn it back on with 'hermes honcho enable' (keeps its settings), or reconfigure it with 'hermes memory setup honcho'\n",
  );
  const own = await typo.hermes(["honchoo", "status"]);
  assert.equal(own.code, 2);
  assert.match(
    own.stderr,
    /^error: memory\.provider is 'honchoo' in .*config\.yaml, which names no installed provider \(did you mean 'honcho'\?\)\n/,
  );
  const version = await typo.hermes(["--version"]);
  assert.match(version.stdout, /^memory provider: honchoo \(not installed\)$/m);
  const plan = await typo.hermes(["memory", "permissions"]);
  assert.equal(plan.code, 1);
  assert.match(
    plan.stderr,
    /memory provider 'honchoo' was not found \(did you mean 'honcho'\?\)/,
  );

  await using active = await user("honcho");
  const word = await active.hermes(["honchoo", "status"]);
  assert.equal(word.code, 2);
  assert.equal(
    word.stderr,
    "error: unknown command 'honchoo' (did you mean 'honcho'?)\nhint: run 'hermes --help' for usage\n",
  );
  // Three edits away: no guess.
  const far = await active.hermes(["mem0", "status"]);
  assert.doesNotMatch(far.stderr, /did you mean/);
});

Deno.test("after memory off, honcho commands say how to turn it back on and 'honcho enable' does", async () => {
  await using u = await user("honcho");
  const config = join(u.root, "config.yaml");
  const off = await u.hermes(["memory", "off", "--json"]);
  assert.equal(off.code, 0, off.stderr);
  assert.deepEqual(JSON.parse(off.stdout), {
    configPath: config,
    previous: "honcho",
    changed: true,
    keptSettings: null,
    reenable: ["hermes honcho enable", "hermes memory setup honcho"],
  });
  const status = await u.hermes(["honcho", "status"]);
  assert.equal(status.code, 2);
  assert.equal(status.stdout, "");
  assert.equal(
    status.stderr,
    `error: 'honcho' commands are available only while memory.provider is 'honcho'; memory.provider is "" in ${config} (built-in memory only, e.g. after 'hermes memory off')\n` +
      "hint: turn it back on with 'hermes honcho enable' (keeps its settings), or reconfigure it with 'hermes memory setup honcho'\n",
  );
  assert.doesNotMatch(status.stderr, /wizard/);
  const enable = await u.hermes(["honcho", "enable"]);
  assert.equal(enable.code, 0, enable.stderr);
  assert.match(
    enable.stdout,
    new RegExp(
      `^Set memory\\.provider to honcho in ${config} \\(it was ""\\)$`,
      "m",
    ),
  );
  assert.equal(
    ((await loadConfig({ hermesHome: u.root })).memory as Record<
      string,
      unknown
    >)
      .provider,
    "honcho",
  );
  const after = await u.hermes(["honcho", "mode"]);
  assert.equal(after.code, 0, after.stderr);
});

Deno.test("with a broken config.yaml, honcho commands say so (file, line, column) instead of 'not the provider'", async () => {
  await using u = await user();
  const config = join(u.root, "config.yaml");
  await Deno.writeTextFile(config, "memory:\n  provider: honcho\n  x: [1, 2\n");
  const run = await u.hermes(["honcho", "status"]);
  assert.equal(run.code, 2);
  assert.match(
    run.stderr,
    new RegExp(
      `^error: 'honcho' commands cannot tell whether 'honcho' is the memory provider: Cannot parse ${config} at line 4, column 1: .*; fix the YAML there`,
      "m",
    ),
  );
  assert.match(
    run.stderr,
    /^hint: fix .*config\.yaml, then run 'hermes memory status'/m,
  );
  assert.doesNotMatch(run.stderr, /available only while/);
});

Deno.test("memory reset says what it erased and what it left; --json", async () => {
  await using u = await user("honcho");
  const dir = join(u.root, "memories");
  await Deno.mkdir(dir);
  await Deno.writeTextFile(join(dir, "USER.md"), "Name: Ada");
  await Deno.writeTextFile(join(dir, "MEMORY.md"), "note");
  const text = await u.hermes(["memory", "reset", "--target", "user", "--yes"]);
  assert.equal(text.code, 0, text.stderr);
  assert.doesNotMatch(text.stdout, /blank slate/);
  assert.match(
    text.stdout,
    /^Memory reset complete\. Erased USER\.md: new sessions start without it\. MEMORY\.md was kept\.$/m,
  );
  assert.match(
    text.stdout,
    /^Not reset: what memory provider 'honcho' stored \(its own files or server\)/m,
  );
  await Deno.writeTextFile(join(dir, "USER.md"), "Name: Ada");
  const refused = await u.hermes(["memory", "reset", "--json"]);
  assert.equal(refused.code, 1);
  assert.equal(JSON.parse(refused.stdout).cancelled, true);
  assert.equal(exists(join(dir, "USER.md")), true);
  const json = await u.hermes(["memory", "reset", "--yes", "--json"]);
  assert.equal(json.code, 0, json.stderr);
  assert.deepEqual(JSON.parse(json.stdout), {
    memoryDir: dir,
    target: "all",
    deleted: ["MEMORY.md", "USER.md"],
    kept: [],
    cancelled: false,
    untouched: { provider: "honcho" },
  });
});

Deno.test("memory import --json reports turns, skipped lines and unanswered messages", async () => {
  await using u = await user("archive");
  const file = join(u.root, "chat.jsonl");
  await Deno.writeTextFile(
    file,
    [
      JSON.stringify({ role: "user", content: "hi" }),
      JSON.stringify({ role: "assistant", content: "hello" }),
      "{bad",
      JSON.stringify({ role: "user", content: "still there?" }),
    ].join("\n") + "\n",
  );
  const run = await u.hermes(["memory", "import", file, "--json"]);
  assert.equal(run.code, 0, run.stderr);
  assert.equal(run.stderr, "");
  const report = JSON.parse(run.stdout);
  assert.deepEqual(
    { ...report, skipped: report.skipped.map((s: { line: number }) => s.line) },
    {
      file,
      sessionId: "import-chat",
      provider: "archive",
      imported: 1,
      skipped: [3],
      unanswered: [4],
    },
  );
});

Deno.test("honcho mode, strategy and tokens --json show the setting with its source; the labels agree with setup", async () => {
  await using u = await user("honcho");
  await Deno.writeTextFile(
    join(u.root, "honcho.json"),
    JSON.stringify({ hosts: { hermes: { recallMode: "tools" } } }),
  );
  const mode = await u.hermes(["honcho", "mode", "--json"]);
  assert.equal(mode.code, 0, mode.stderr);
  const shown = JSON.parse(mode.stdout);
  assert.deepEqual(
    { ...shown, choices: shown.choices.map((c: { name: string }) => c.name) },
    {
      hostKey: "hermes",
      key: "recallMode",
      value: "tools",
      source: "host",
      choices: ["hybrid", "context", "tools"],
    },
  );
  const strategy = await u.hermes(["honcho", "strategy", "--json"]);
  const current = JSON.parse(strategy.stdout);
  assert.equal(current.key, "sessionStrategy");
  assert.equal(current.value, "per-directory");
  assert.equal(current.source, "default");
  const text = await u.hermes(["honcho", "strategy"]);
  // per-directory is what an unset key means; setup writes per-session.
  assert.match(
    text.stdout,
    /^ {2}\* per-directory .*\(used while sessionStrategy is unset\)$/m,
  );
  assert.match(text.stdout, /^ {4}per-session .*\(what setup writes\)$/m);
  assert.doesNotMatch(text.stdout, /\(the default\)/);
  const tokens = await u.hermes(["honcho", "tokens", "--json"]);
  assert.equal(tokens.code, 0, tokens.stderr);
  assert.deepEqual(JSON.parse(tokens.stdout), {
    hostKey: "hermes",
    contextTokens: { value: null, source: "default" },
    dialecticMaxChars: { value: 600, source: "default" },
  });
  const set = await u.hermes(["honcho", "mode", "hybrid", "--json"]);
  assert.equal(set.code, 2);
  // Under --json the error is JSON too.
  assert.match(
    JSON.parse(set.stdout).error.message,
    /^--json shows the setting/,
  );
});
