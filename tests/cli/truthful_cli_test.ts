// What a user sees from the real `hermes` process (the `hermes` task line,
// through the launcher) is true and points at the right fix (issue 22):
// recall status lines on failures, hints that name the working command
// once, usage errors with exit 2, exit codes scripts can rely on, and
// read-only commands that leave the profile home exactly as it was.
import assert from "node:assert/strict";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { runDeno } from "../helpers/deno_child.ts";
import {
  type HermesRun,
  hermesTaskLine,
  runHermesCli,
} from "../helpers/hermes_cli_child.ts";
import { KEYS, spawnPty } from "../helpers/pty.ts";
import { DENO_DIR } from "../helpers/run_command.ts";
import { diffTrees, snapshotTree } from "../helpers/plugin_tree.ts";
import { startHonchoTestServer } from "../honcho_server.ts";

const KEY = "sk-test-key-4321";
const ROOT = fileURLToPath(new URL("../..", import.meta.url));

interface Home extends AsyncDisposable {
  home: string;
  root: string;
  run(...args: string[]): Promise<HermesRun>;
}

/** A user whose profile selects Honcho at `url` (settings in honcho.json). */
async function honchoHome(
  url: string,
  host: Record<string, unknown>,
  extraYaml = "",
): Promise<Home> {
  const home = await Deno.realPath(
    await Deno.makeTempDir({ prefix: "hermes-truthful-" }),
  );
  const root = join(home, ".hermes");
  await Deno.mkdir(root, { recursive: true });
  const netHost = new URL(url).host;
  await Deno.writeTextFile(
    join(root, "config.yaml"),
    `memory:\n  provider: honcho\n  permissions:\n    honcho:\n      net:\n        - ${netHost}\n${extraYaml}`,
  );
  await Deno.writeTextFile(
    join(root, "honcho.json"),
    `${JSON.stringify({ baseUrl: url, hosts: { hermes: host } })}\n`,
    { mode: 0o600 },
  );
  return {
    home,
    root,
    run: (...args: string[]) => runHermesCli(args, { userHome: home }),
    async [Symbol.asyncDispose]() {
      await Deno.remove(home, { recursive: true }).catch(() => {});
    },
  };
}

/** A port nothing listens on (bound, then released). */
function deadUrl(): string {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (listener.addr as Deno.NetAddr).port;
  listener.close();
  return `http://127.0.0.1:${port}`;
}

function all(run: HermesRun): string {
  return `${run.stdout}${run.stderr}`;
}

function count(text: string, part: string): number {
  return text.split(part).length - 1;
}

Deno.test("memory recall shows a failure line and exits 1 on a 401, an unreachable server and a missing user peer; turn 1 says it answered the warm-up question", async () => {
  await using server = await startHonchoTestServer({ apiKey: KEY });
  const cases: [string, string, Record<string, unknown>, RegExp][] = [
    [
      "401",
      server.url,
      { apiKey: "wrong-key", peerName: "alice" },
      /⚠ Honcho — recall failed: the server refused the API key \(HTTP 401\)/,
    ],
    [
      "unreachable",
      deadUrl(),
      { peerName: "alice" },
      /⚠ Honcho — recall failed: the server is unreachable/,
    ],
    [
      "no user peer",
      server.url,
      { apiKey: KEY },
      /⚠ Honcho — off for this session: no user peer \(set one with 'hermes honcho peer --user NAME'\)/,
    ],
  ];
  for (const [label, url, host, line] of cases) {
    await using user = await honchoHome(url, host);
    const run = await user.run("memory", "recall", "what do I like to drink?");
    assert.equal(run.code, 1, `${label}: ${all(run)}`);
    assert.match(run.stdout, line, label);
    assert.doesNotMatch(run.stdout, /recalled relevant memory/, label);
  }
  await using ok = await honchoHome(server.url, {
    apiKey: KEY,
    peerName: "alice",
  });
  const run = await ok.run("memory", "recall", "what do I like to drink?");
  assert.equal(run.code, 0, all(run));
  assert.match(run.stdout, /🧠 Honcho — recalled relevant memory/);
  assert.match(
    run.stdout,
    /note: Honcho: turn 1 shows Honcho's answer to its warm-up question about the user/,
  );
});

Deno.test("read-only commands create no file or directory in the profile home and leave no queue warnings", async () => {
  await using server = await startHonchoTestServer({ apiKey: KEY });
  await using user = await honchoHome(server.url, {
    apiKey: KEY,
    peerName: "alice",
  });
  const commands = [
    ["memory", "status"],
    ["memory", "status", "--json"],
    ["memory", "recall", "what do I like to drink?"],
    ["memory", "list"],
    ["memory", "doctor"],
    ["honcho", "status"],
  ];
  for (const args of commands) {
    const before = await snapshotTree(user.root);
    const run = await user.run(...args);
    assert.deepEqual(
      diffTrees(before, await snapshotTree(user.root)),
      [],
      `'hermes ${args.join(" ")}' changed the home:\n${all(run)}`,
    );
    assert.doesNotMatch(all(run), /still queued|queued in/, args.join(" "));
  }
});

Deno.test("hints name the working fix once; usage errors exit 2; failed checks exit non-zero", async () => {
  await using server = await startHonchoTestServer({ apiKey: KEY });
  await using user = await honchoHome(server.url, { apiKey: KEY });

  // No user peer: ask and status agree on the fix; doctor finds it.
  const ask = await user.run("honcho", "ask", "what do I like?");
  assert.equal(ask.code, 1, all(ask));
  assert.match(ask.stderr, /'hermes honcho peer --user NAME'/);
  assert.doesNotMatch(ask.stderr, /honcho identity/);
  const doctor = await user.run("memory", "doctor");
  assert.equal(doctor.code, 1, all(doctor));
  assert.match(
    doctor.stdout,
    /no user peer is configured .* fix: set one with 'hermes honcho peer --user NAME'/,
  );

  // Did-you-mean under `honcho`, whose default command is `status`.
  const typo = await user.run("honcho", "aks", "x");
  assert.equal(typo.code, 2, all(typo));
  assert.match(typo.stderr, /unknown command 'aks' \(Did you mean ask\?\)/);
  assert.doesNotMatch(typo.stderr, /too many arguments/);

  // An unknown provider for setup: one error, no "Changes:" trailer.
  const setupTypo = await user.run("memory", "setup", "honchoo", "--yes");
  assert.equal(setupTypo.code, 2, all(setupTypo));
  assert.match(setupTypo.stderr, /did you mean 'honcho'/);
  assert.doesNotMatch(all(setupTypo), /Changes:/);

  // A wrong key: setup saves, says so with the fix once, and exits 1.
  const wrong = await user.run(
    "memory",
    "setup",
    "honcho",
    "--yes",
    "--set",
    "apiKey=not-the-key",
  );
  assert.equal(wrong.code, 1, all(wrong));
  assert.match(wrong.stderr, /connection test failed: .*HTTP 401/);
  assert.equal(count(all(wrong), "hermes honcho setup"), 1, all(wrong));
  const status = await user.run("honcho", "status");
  assert.equal(status.code, 1, all(status));
  assert.match(status.stdout, /Not connected: .*refused the credentials/);

  // A dead server: ask gets a fix; doctor names the URL once per line.
  await using dead = await honchoHome(deadUrl(), { peerName: "alice" });
  const deadAsk = await dead.run("honcho", "ask", "what do I like?");
  assert.equal(deadAsk.code, 1, all(deadAsk));
  assert.match(
    deadAsk.stderr,
    /unreachable \(connection refused\); fix: start the Honcho server at http:\/\/127\.0\.0\.1:\d+/,
  );
  const deadDoctor = await dead.run("memory", "doctor");
  for (const line of deadDoctor.stdout.split("\n")) {
    const url = line.match(/http:\/\/127\.0\.0\.1:\d+/)?.[0];
    if (url && line.startsWith("\u2717")) {
      assert.ok(
        !line.includes(`${url}: ${url}`),
        `doctor repeats the URL: ${line}`,
      );
    }
  }
  const deadSetup = await dead.run("memory", "setup", "honcho", "--yes");
  assert.equal(deadSetup.code, 1, all(deadSetup));
});

Deno.test("logging: true without the write grant of its log: setup warns at save and doctor reports it", async () => {
  await using server = await startHonchoTestServer({ apiKey: KEY });
  await using user = await honchoHome(server.url, {
    apiKey: KEY,
    peerName: "alice",
  });
  const setup = await user.run(
    "memory",
    "setup",
    "honcho",
    "--yes",
    "--set",
    "logging=true",
  );
  const log = join(user.home, ".honcho", "injection.log");
  assert.match(
    setup.stderr,
    new RegExp(
      `warning: logging is on, but the provider may not write its log ${log}`,
    ),
    all(setup),
  );
  const doctor = await user.run("memory", "doctor");
  assert.equal(doctor.code, 1, all(doctor));
  assert.match(
    doctor.stdout,
    new RegExp(`memory\\.permissions\\.honcho\\.write: lacks ${log}`),
  );
});

Deno.test("an API key given to setup for a self-hosted server is the key requests carry, and honcho status shows it", async () => {
  await using server = await startHonchoTestServer({ apiKey: KEY });
  await using user = await honchoHome(server.url, { peerName: "alice" });
  const setup = await user.run(
    "memory",
    "setup",
    "honcho",
    "--yes",
    "--set",
    `apiKey=${KEY}`,
  );
  assert.equal(setup.code, 0, all(setup));
  assert.match(setup.stdout, /Connection OK/);
  const status = await user.run("honcho", "status");
  assert.equal(status.code, 0, all(status));
  assert.match(status.stdout, /API key +\.\.\.4321 \(host block\)/);
  assert.ok(!all(status).includes(KEY), "the key is masked");
  // The short status hides settings at their defaults; --verbose lists them.
  assert.match(status.stdout, /at their defaults not shown, --verbose/);
  assert.doesNotMatch(status.stdout, /dialecticDepthLevels/);
  const verbose = await user.run("honcho", "status", "--verbose");
  assert.match(verbose.stdout, /dialecticDepthLevels/);
  assert.ok(
    status.stdout.split("\n").length < 30,
    `status is short:\n${status.stdout}`,
  );
});

Deno.test("Ctrl-C in the setup picker or the Honcho wizard leaves the profile home as it was", async () => {
  const words = (await hermesTaskLine()).split(/\s+/);
  const taskArgs = words.slice(words.indexOf("deno") + 1);
  for (
    const [args, prompt] of [
      [["memory", "setup"], "Select a memory provider"],
      [["memory", "setup", "honcho"], "?"],
    ] as const
  ) {
    const home = await Deno.realPath(
      await Deno.makeTempDir({ prefix: "hermes-truthful-pty-" }),
    );
    try {
      const root = join(home, ".hermes");
      await Deno.mkdir(root);
      const before = await snapshotTree(root);
      await using term = spawnPty([Deno.execPath(), ...taskArgs, ...args], {
        cwd: ROOT,
        env: {
          HOME: home,
          PATH: "/usr/bin:/bin",
          TERM: "xterm-256color",
          DENO_DIR,
        },
      });
      await term.expect(prompt, 30_000);
      await term.send(KEYS.ctrlC);
      await term.expect("No changes saved", 15_000);
      assert.equal(await term.exit(), 1, term.text);
      assert.deepEqual(
        diffTrees(before, await snapshotTree(root)),
        [],
        `hermes ${args.join(" ")} + Ctrl-C:\n${term.text}`,
      );
    } finally {
      await Deno.remove(home, { recursive: true });
    }
  }
});

Deno.test("run without the launcher, a missing net permission names the launcher, not config.yaml, when config.yaml already allows the host", async () => {
  await using server = await startHonchoTestServer({ apiKey: KEY });
  await using user = await honchoHome(server.url, {
    apiKey: KEY,
    peerName: "alice",
  });
  const host = new URL(server.url).host;
  for (const args of [["memory", "doctor"], ["honcho", "ask", "tea?"]]) {
    const run = await runDeno([
      "run",
      "--no-prompt",
      "--cached-only",
      "--allow-read",
      "--allow-write",
      "--allow-env",
      join(ROOT, "src", "cli", "main.ts"),
      ...args,
    ], {
      cwd: ROOT,
      clearEnv: true,
      env: { HOME: user.home, PATH: "/usr/bin:/bin" },
    });
    assert.notEqual(run.code, 0, all(run));
    assert.doesNotMatch(
      all(run),
      new RegExp(
        `allow ${host} in config\\.yaml|add it to memory\\.permissions`,
      ),
      args.join(" "),
    );
    assert.match(all(run), /launcher/, args.join(" "));
  }
});

Deno.test("run without the launcher, a config.yaml or .env the run may not read names the missing flag and the launcher, not the YAML, in status and doctor", async () => {
  const home = await Deno.realPath(
    await Deno.makeTempDir({ prefix: "hermes-truthful-" }),
  );
  try {
    const root = join(home, ".hermes");
    await Deno.mkdir(root);
    await Deno.writeTextFile(join(root, "config.yaml"), "memory: {}\n");
    await Deno.writeTextFile(join(root, ".env"), "A=1\n", { mode: 0o600 });
    const narrow = (command: string) =>
      runDeno([
        "run",
        "--no-prompt",
        "--cached-only",
        `--allow-read=${ROOT}`,
        "--allow-env",
        join(ROOT, "src", "cli", "main.ts"),
        "memory",
        command,
      ], {
        cwd: ROOT,
        clearEnv: true,
        env: { HOME: home, PATH: "/usr/bin:/bin" },
      });
    const status = await narrow("status");
    const doctor = await narrow("doctor");
    assert.equal(status.code, 1, all(status));
    assert.equal(doctor.code, 1, all(doctor));
    for (const file of ["config.yaml", ".env"]) {
      const path = join(root, file);
      const line =
        `${path}: cannot be read: this run lacks --allow-read=${path}`;
      assert.ok(
        status.stderr.includes(
          `error: ${line}; start hermes through its launcher`,
        ),
        all(status),
      );
      assert.ok(all(doctor).includes(line), all(doctor));
    }
    assert.match(
      status.stdout,
      /config\.yaml cannot be read \(see Settings files\)/,
    );
    // Was: "fix the YAML there (indentation, an unclosed bracket or quote)"
    // for config.yaml (doctor: "does not parse"), and nothing about .env.
    for (const run of [status, doctor]) {
      assert.doesNotMatch(
        all(run),
        /fix the YAML|does not parse|chmod|check its permissions/,
      );
    }
    const plugins = join(root, "plugins");
    assert.ok(
      status.stderr.includes(
        `Skipping unreadable plugin directory ${plugins}: this run lacks --allow-read=${plugins}\n`,
      ),
      status.stderr,
    );
  } finally {
    await Deno.remove(home, { recursive: true });
  }
});

Deno.test("hermes completion bash is generated from the command tree: 'hermes mem<TAB>' completes to memory, 'hermes honcho a<TAB>' to ask", async () => {
  await using server = await startHonchoTestServer({ apiKey: KEY });
  await using user = await honchoHome(server.url, { apiKey: KEY });
  const script = await user.run("completion", "bash");
  assert.equal(script.code, 0, all(script));
  const path = join(user.home, "hermes.bash");
  await Deno.writeTextFile(path, script.stdout);
  const complete = async (...words: string[]): Promise<string> => {
    const line = words.map((w) => `'${w}'`).join(" ");
    const out = await new Deno.Command("bash", {
      args: [
        "-c",
        `source '${path}'; COMP_WORDS=(${line}); COMP_CWORD=${
          words.length - 1
        }; _hermes_completion; echo "\${COMPREPLY[*]}"`,
      ],
      stdout: "piped",
      stderr: "piped",
    }).output();
    return new TextDecoder().decode(out.stdout).trim();
  };
  assert.equal(await complete("hermes", "mem"), "memory");
  assert.equal(await complete("hermes", "honcho", "a"), "ask");
  assert.equal(
    await complete("hermes", "--profile", "x", "memory", "status", "--j"),
    "--json",
  );
  assert.equal(await complete("hermes", "completion", "f"), "fish");
  // Values too: providers, modes, strategies, targets, profiles.
  assert.match(await complete("hermes", "memory", "setup", ""), /\bhoncho\b/);
  assert.equal(
    await complete("hermes", "honcho", "mode", ""),
    "hybrid context tools --json --help",
  );
  assert.match(
    await complete("hermes", "honcho", "strategy", "per-"),
    /^per-session per-directory per-repo$/,
  );
  assert.equal(
    await complete("hermes", "memory", "reset", "--target", ""),
    "all memory user",
  );
  await Deno.mkdir(join(user.home, ".hermes", "profiles", "coder"), {
    recursive: true,
  });
  const again = await user.run("completion", "bash");
  await Deno.writeTextFile(path, again.stdout);
  assert.equal(await complete("hermes", "--profile", ""), "default coder");
  assert.equal(
    await complete("hermes", "honcho", "--target-profile", "c"),
    "coder",
  );
  for (const shell of ["zsh", "fish"]) {
    const other = await user.run("completion", shell);
    assert.equal(other.code, 0, all(other));
    assert.match(other.stdout, /memory/);
  }
  const bad = await user.run("completion", "tcsh");
  assert.equal(bad.code, 2, all(bad));
});

Deno.test("--json is accepted at every level and errors come as JSON with the usual exit code", async () => {
  await using server = await startHonchoTestServer({ apiKey: KEY });
  await using user = await honchoHome(server.url, {
    apiKey: KEY,
    peerName: "alice",
  });
  for (
    const args of [
      ["--json", "memory", "status"],
      ["memory", "--json", "status"],
      ["memory", "--json"],
      ["honcho", "--json"],
    ]
  ) {
    const run = await user.run(...args);
    assert.equal(run.code, 0, `${args.join(" ")}: ${all(run)}`);
    assert.equal(typeof JSON.parse(run.stdout), "object", args.join(" "));
  }
  const typo = await user.run("--json", "honcho", "aks", "x");
  assert.equal(typo.code, 2, all(typo));
  const { error } = JSON.parse(typo.stdout);
  assert.match(error.message, /unknown command 'aks' \(Did you mean ask\?\)/);
  assert.equal(error.exitCode, 2);
  const missing = await user.run(
    "memory",
    "import",
    join(user.home, "nope.jsonl"),
    "--json",
  );
  assert.equal(missing.code, 1, all(missing));
  assert.match(JSON.parse(missing.stdout).error.message, /nope\.jsonl/);
});

Deno.test("a file named on the command line is readable by that run: memory import FILE and honcho identity FILE outside the profile home", async () => {
  await using server = await startHonchoTestServer({ apiKey: KEY });
  await using user = await honchoHome(server.url, {
    apiKey: KEY,
    peerName: "alice",
  });
  const work = join(user.home, "work");
  await Deno.mkdir(work);
  await Deno.writeTextFile(
    join(work, "chat.jsonl"),
    '{"role":"user","content":"I like tea"}\n{"role":"assistant","content":"Noted"}\n',
  );
  await Deno.writeTextFile(join(work, "SOUL.md"), "# Soul\nI help.\n");
  const imported = await user.run("memory", "import", join(work, "chat.jsonl"));
  assert.equal(imported.code, 0, all(imported));
  assert.match(imported.stdout, /Imported 1 turn/);
  const seeded = await user.run("honcho", "identity", join(work, "SOUL.md"));
  assert.equal(seeded.code, 0, all(seeded));
  assert.match(seeded.stdout, /Seeded AI peer 'hermes' with SOUL\.md/);
  // Only for that run: the next command's grant does not include it.
  const permissions = await user.run("memory", "permissions");
  assert.doesNotMatch(permissions.stdout, /SOUL\.md|chat\.jsonl/);
  // migrate warns about ~/.openclaw only when it exists (and can read it).
  const migrate = await user.run("honcho", "migrate", "--yes");
  assert.doesNotMatch(all(migrate), /cannot read .*\.openclaw/);
});

Deno.test("--profile and --target-profile name the same profile and say which files they read", async () => {
  await using server = await startHonchoTestServer({ apiKey: KEY });
  await using user = await honchoHome(server.url, { apiKey: KEY });
  const other = join(user.root, "profiles", "other");
  await Deno.mkdir(other, { recursive: true });
  await Deno.copyFile(
    join(user.root, "config.yaml"),
    join(other, "config.yaml"),
  );
  const own = await user.run(
    "--profile",
    "other",
    "honcho",
    "status",
    "--offline",
  );
  assert.match(
    own.stdout,
    new RegExp(
      `profile other \\(--profile: this profile's own home ${other}\\)`,
    ),
  );
  const target = await user.run(
    "honcho",
    "--target-profile",
    "other",
    "status",
    "--offline",
  );
  assert.match(
    target.stdout,
    new RegExp(
      `profile other \\(--target-profile: its host block in ${user.root}/honcho\\.json;`,
    ),
  );
});
