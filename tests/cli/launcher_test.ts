// The launcher as users start it (`deno task hermes`, the command of
// `deno install -g`, a remote URL): it computes the plan `hermes memory
// permissions` prints and runs the CLI under exactly that grant, from any
// directory, for any HERMES_HOME and --profile, with the user's grants from
// config.yaml and a self-hosted Honcho picked up on the next run; quiet once
// cached. Also: permission problems of a CLI run without the launcher are
// reported as permission problems, naming the flag or key.
import assert from "node:assert/strict";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { startHonchoTestServer } from "../honcho_server.ts";
import {
  type CommandResult,
  DENO_DIR,
  runCommand,
} from "../helpers/run_command.ts";
import { cliCacheStep } from "../../src/cli/cli_location.ts";
import {
  launcherKey,
  type LaunchRecord,
  readLaunchRecord,
} from "../../src/launcher/launch_cache.ts";

/** Opens a launch record as the launcher does (it is sealed with its key). */
async function openRecord(dir: string, name: string): Promise<LaunchRecord> {
  const key = await launcherKey(dir);
  const record = key && await readLaunchRecord(dir, name, key);
  assert.ok(record, `${name} does not open with the launcher's key`);
  return record;
}
import { lockedNpmCache } from "../helpers/locked_npm_cache.ts";

const ROOT = fileURLToPath(new URL("../..", import.meta.url)).replace(
  /\/$/,
  "",
);

/** The `hermes` task line (asserted against deno.json in process_test.ts). */
const TASK = JSON.parse(Deno.readTextFileSync(join(ROOT, "deno.json"))).tasks
  .hermes as string;
/** The task's `deno` arguments, with the entry made absolute. */
const LAUNCHER = TASK.split(" ").slice(1).map((w) =>
  w === "src/launcher/main.ts" ? join(ROOT, w) : w
);

interface User extends AsyncDisposable {
  /** HOME. */
  home: string;
  /** `$HOME/.hermes`. */
  root: string;
  /** A working directory outside the repository. */
  work: string;
}

async function user(config?: string): Promise<User> {
  const home = await Deno.realPath(
    await Deno.makeTempDir({ prefix: "hermes-launcher-" }),
  );
  const root = join(home, ".hermes");
  const work = join(home, "work");
  await Deno.mkdir(root, { recursive: true });
  await Deno.mkdir(work, { recursive: true });
  if (config !== undefined) {
    await Deno.writeTextFile(join(root, "config.yaml"), config);
  }
  return {
    home,
    root,
    work,
    async [Symbol.asyncDispose](): Promise<void> {
      await Deno.remove(home, { recursive: true }).catch(() => {});
    },
  };
}

function run(
  command: string,
  args: string[],
  options: { cwd: string; env: Record<string, string> },
): Promise<CommandResult> {
  return runCommand(command, args, options);
}

/** The launcher run as the installed command would: from `u.work`. */
function hermes(
  u: User,
  args: string[],
  env: Record<string, string> = {},
  cwd: string = u.work,
): Promise<CommandResult> {
  return run(Deno.execPath(), [...LAUNCHER, ...args], {
    cwd,
    env: { HOME: u.home, ...env },
  });
}

/** `deno task --config <repo>/deno.json hermes …` from `u.work`. */
function task(
  u: User,
  args: string[],
  options: { quiet?: boolean; env?: Record<string, string> } = {},
): Promise<CommandResult> {
  return run(
    Deno.execPath(),
    [
      "task",
      ...(options.quiet ? ["-q"] : []),
      "--config",
      join(ROOT, "deno.json"),
      "hermes",
      ...args,
    ],
    { cwd: u.work, env: { HOME: u.home, ...options.env } },
  );
}

/** Deno's own output lines a quiet run must not print. */
const NOISE = /Download|Initialize|npm (notice|warn)|Warning|A new release/i;

Deno.test("deno task hermes from another directory: the user's directory, and quiet once cached", async () => {
  await using u = await user();
  // A relative HERMES_HOME is resolved against the directory the user typed
  // the command in (deno task itself runs in the repository).
  const first = await task(u, ["memory", "status"], {
    env: { HERMES_HOME: "./profile-here" },
  });
  assert.equal(first.code, 0, first.err);
  assert.match(first.out, new RegExp(`Home: +${u.work}/profile-here\n`));
  assert.doesNotMatch(first.err, NOISE);
  const cached = await task(u, ["memory", "status"], {
    env: { HERMES_HOME: "./profile-here" },
  });
  assert.equal(cached.code, 0, cached.err);
  // Only deno task's own echo of the (short) task line.
  assert.equal(cached.err, `Task hermes ${TASK} 'memory' 'status'\n`);
  const quiet = await task(u, ["memory", "status"], {
    quiet: true,
    env: { HERMES_HOME: "./profile-here" },
  });
  assert.equal(quiet.code, 0, quiet.err);
  assert.equal(quiet.err, "");
  assert.equal(quiet.out, cached.out);
});

Deno.test("the launcher runs the CLI under exactly the plan 'hermes memory permissions' prints", async () => {
  await using u = await user("memory:\n  provider: archive\n");
  const plan = await hermes(u, ["memory", "permissions", "--json"]);
  assert.equal(plan.code, 0, plan.err);
  const printed = JSON.parse(plan.out);
  assert.equal(printed.hermesHome, u.root);
  assert.equal(printed.provider, "archive");
  assert.equal(printed.command.at(-1), join(ROOT, "src", "cli", "main.ts"));
  assert.ok(printed.flags.includes(`--config=${join(ROOT, "deno.json")}`));
  // The cached launch record holds the same command.
  const dir = join(u.home, ".cache", "hermes-memory", "launcher");
  const records = [...Deno.readDirSync(dir)].filter((e) =>
    e.name.startsWith("plan-")
  );
  assert.equal(records.length, 1);
  const record = await openRecord(dir, records[0]!.name);
  assert.deepEqual(record.denoArgs, [
    "run",
    ...printed.command.slice(2),
  ]);
  assert.equal(record.env.DENO_NO_PROMPT, "1");
  // Only hashes of what was read are kept: never a value or a content.
  assert.doesNotMatch(JSON.stringify(record.observations), /archive\n/);
});

Deno.test("HERMES_HOME outside ~/.hermes and --profile work from any directory with no flag added", async () => {
  await using u = await user();
  const elsewhere = await Deno.realPath(
    await Deno.makeTempDir({ prefix: "hermes-elsewhere-" }),
  );
  try {
    await Deno.writeTextFile(
      join(elsewhere, "config.yaml"),
      "memory:\n  provider: archive\n",
    );
    const status = await hermes(u, ["memory", "status"], {
      HERMES_HOME: elsewhere,
    }, "/");
    assert.equal(status.code, 0, status.err);
    assert.match(status.out, new RegExp(`Home: +${elsewhere}\n`));
    assert.match(status.out, /Provider: +archive/);
    const perms = await hermes(u, ["memory", "permissions", "--json"], {
      HERMES_HOME: elsewhere,
    });
    const grant = JSON.parse(perms.out).grant;
    assert.ok(grant.read.includes(elsewhere));
    assert.deepEqual(grant.write, [elsewhere]);
  } finally {
    await Deno.remove(elsewhere, { recursive: true });
  }
  const coder = join(u.root, "profiles", "coder");
  await Deno.mkdir(coder, { recursive: true });
  const status = await hermes(u, ["--profile", "coder", "memory", "status"]);
  assert.equal(status.code, 0, status.err);
  assert.match(status.out, new RegExp(`Home: +${coder}\n`));
  const perms = await hermes(u, [
    "--profile",
    "coder",
    "memory",
    "permissions",
    "--json",
  ]);
  assert.deepEqual(JSON.parse(perms.out).grant.write, [coder]);
  const bad = await hermes(u, ["--profile", "../x", "memory", "status"]);
  assert.equal(bad.code, 2);
  assert.match(bad.err, /^error: Cannot use profile name '\.\.\/x'/);
});

Deno.test("a user grant under memory.permissions.<name> reaches the provider on the next run, and its removal too", async () => {
  await using u = await user();
  const outside = join(u.home, "notes-data");
  await Deno.mkdir(outside);
  const fact = join(outside, "fact.txt");
  await Deno.writeTextFile(fact, "The user prefers metric units.");
  const plugin = join(u.root, "plugins", "notes");
  await Deno.mkdir(plugin, { recursive: true });
  await Deno.writeTextFile(
    join(plugin, "mod.ts"),
    `import { MemoryProvider, type ToolSchema } from "@hermes/memory";
export class Notes extends MemoryProvider {
  get name(): string { return "notes"; }
  isAvailable(): boolean { return true; }
  initialize(): void {}
  getToolSchemas(): ToolSchema[] { return []; }
  async prefetch(): Promise<string> {
    try {
      return await Deno.readTextFile(${JSON.stringify(fact)});
    } catch (error) {
      return "DENIED " + (error as Error).name;
    }
  }
}
`,
  );
  await Deno.writeTextFile(
    join(plugin, "plugin.yaml"),
    "name: notes\ndescription: Notes from a file\n",
  );
  const granted = "memory:\n  provider: notes\n  permissions:\n    notes:\n" +
    `      read: [${JSON.stringify(fact)}]\n`;
  await Deno.writeTextFile(join(u.root, "config.yaml"), granted);
  const recall = await hermes(u, ["memory", "recall", "which units"]);
  assert.equal(recall.code, 0, recall.err);
  assert.match(recall.out, /The user prefers metric units\./);
  // The grant is gone on the next run: the cached plan is recomputed.
  await Deno.writeTextFile(
    join(u.root, "config.yaml"),
    "memory:\n  provider: notes\n",
  );
  const denied = await hermes(u, ["memory", "recall", "which units"]);
  assert.equal(denied.code, 0, denied.err);
  assert.doesNotMatch(denied.out, /metric units/);
  assert.match(denied.out, /DENIED NotCapable/);
});

Deno.test("a self-hosted Honcho configured as setup writes it is reached on the next run with no flag", async () => {
  await using server = await startHonchoTestServer();
  const host = new URL(server.url).host;
  await using u = await user(
    "memory:\n  provider: honcho\n  permissions:\n    honcho:\n" +
      `      net: [${JSON.stringify(host)}]\n`,
  );
  await Deno.writeTextFile(
    join(u.root, "honcho.json"),
    JSON.stringify({
      baseUrl: server.url,
      hosts: { hermes: { peerName: "alice", workspace: "team" } },
    }),
  );
  const status = await task(u, ["honcho", "status"], { quiet: true });
  assert.equal(status.code, 0, status.err);
  assert.ok(server.requests.length > 0, status.out);
  const before = server.requests.length;
  const recall = await task(u, ["memory", "recall", "what did we plan"], {
    quiet: true,
  });
  assert.equal(recall.code, 0, recall.err);
  assert.ok(server.requests.length > before, recall.out + recall.err);
  assert.deepEqual(server.violations, []);
  const perms = await hermes(u, ["memory", "permissions", "--json"]);
  assert.ok(JSON.parse(perms.out).grant.net.includes(host));
});

/** The `deno install -g` command of docs/install.md's "from a checkout" form. */
function readmeInstallCommand(): string[] {
  const readme = Deno.readTextFileSync(join(ROOT, "docs", "install.md"));
  const match =
    /^(deno install -g [^\n]*(?:\\\n[^\n]*)*?checkout\/src\/launcher\/main\.ts)$/m
      .exec(readme);
  assert.ok(match, "docs/install.md shows the deno install -g command");
  return match[1]!.replace(/\\\n/g, " ").split(/\s+/).filter((w) => w)
    .map((w) => w.replaceAll("/path/to/checkout", ROOT));
}

Deno.test("the deno install -g command of docs/install.md installs a hermes that works from any directory", async () => {
  await using u = await user("memory:\n  provider: archive\n");
  const bin = join(u.home, "bin-root");
  const words = readmeInstallCommand();
  assert.equal(words[0], "deno");
  // A global install ignores the config's lockfile; given a copy of it, the
  // npm packages resolve from the cache alone (no registry lookup), and the
  // checkout's own lockfile is left as it is.
  const lock = join(u.home, "deno.lock");
  await Deno.copyFile(join(ROOT, "deno.lock"), lock);
  const install = await run(Deno.execPath(), [
    ...words.slice(1, 3),
    "--quiet",
    "--root",
    bin,
    `--lock=${lock}`,
    ...words.slice(3),
  ], { cwd: u.work, env: { HOME: u.home } });
  assert.equal(install.code, 0, install.err);
  const command = join(bin, "bin", "hermes");
  const status = await run(command, ["memory", "status"], {
    cwd: "/",
    env: { HOME: u.home },
  });
  assert.equal(status.code, 0, status.err);
  assert.match(status.out, new RegExp(`Home: +${u.root}\n`));
  assert.match(status.out, /Provider: +archive/);
  assert.equal(status.err, "");
  const help = await run(command, ["--help"], {
    cwd: u.work,
    env: { HOME: u.home },
  });
  assert.equal(help.code, 0, help.err);
  assert.match(help.out, /^USAGE:\n {2}hermes \[--profile NAME\]/m);
});

/**
 * Serves the checkout over http://127.0.0.1 (read-only, files only), as a
 * stand-in for JSR, which these machines cannot reach.
 */
function serveCheckout(): { url: string; close(): Promise<void> } {
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen() {} },
    async (request) => {
      const path = decodeURIComponent(new URL(request.url).pathname);
      if (path.includes("..")) return new Response("no", { status: 400 });
      try {
        const body = await Deno.readFile(join(ROOT, path));
        const type = path.endsWith(".json")
          ? "application/json"
          : "application/typescript";
        return new Response(body, { headers: { "content-type": type } });
      } catch {
        return new Response("not found", { status: 404 });
      }
    },
  );
  return {
    url: `http://127.0.0.1:${server.addr.port}`,
    close: () => server.shutdown(),
  };
}

Deno.test("the launcher and the CLI work when the module is a remote URL", async () => {
  const served = serveCheckout();
  await using u = await user();
  // A Deno cache of its own for the remote modules, sharing the npm cache
  // with metadata that lists only the locked versions: a remote CLI has no
  // lockfile, and its cache step resolves from that metadata.
  const denoDir = join(u.home, "deno-dir");
  await lockedNpmCache(denoDir, join(ROOT, "deno.lock"));
  try {
    const launcher = `${served.url}/src/launcher/main.ts`;
    const importMap = `${served.url}/deno.json`;
    const env = { HOME: u.home, DENO_DIR: denoDir };
    // What installing from JSR caches (the launcher, and the CLI modules
    // its first start would cache), resolved against a copy of the
    // checkout's lockfile so that no test asks the npm registry. The copy
    // leaves out the lock's "workspace" list: run where no deno.json
    // declares those dependencies, Deno would drop their pins and resolve
    // them again from the registry's newest versions.
    const lock = join(u.home, "deno.lock");
    const { workspace: _w, ...pinned } = JSON.parse(
      await Deno.readTextFile(join(ROOT, "deno.lock")),
    );
    await Deno.writeTextFile(lock, JSON.stringify(pinned));
    const cliModules = cliCacheStep(new URL(`${served.url}/`)).args.filter(
      (arg) => arg.startsWith("http:"),
    );
    const cache = await run(Deno.execPath(), [
      "cache",
      "--quiet",
      `--lock=${lock}`,
      `--import-map=${importMap}`,
      launcher,
      `${served.url}/src/launcher/plan.ts`,
      ...cliModules,
    ], { cwd: u.work, env });
    assert.equal(cache.code, 0, cache.err);
    const after = JSON.parse(await Deno.readTextFile(lock));
    assert.deepEqual(
      [after.specifiers, after.npm],
      [pinned.specifiers, pinned.npm],
      "the remote modules resolved to the packages deno.lock pins",
    );
    // With everything cached, the launcher's own cache step is answered
    // from the cache (`deno install --cached-only`), without the network.
    assert.ok(
      cliCacheStep(new URL(`${served.url}/`)).offlineArgs?.includes(
        "--cached-only",
      ),
    );
    const args = [
      "run",
      "--no-prompt",
      "--cached-only",
      "--allow-read",
      "--allow-write",
      "--allow-env",
      "--allow-run",
      `--allow-import=${new URL(served.url).host}`,
      `--import-map=${importMap}`,
      launcher,
    ];
    const status = await run(Deno.execPath(), [...args, "memory", "status"], {
      cwd: u.work,
      env,
    });
    assert.equal(status.code, 0, status.err);
    assert.match(status.out, new RegExp(`Home: +${u.root}\n`));
    const perms = await run(
      Deno.execPath(),
      [...args, "memory", "permissions", "--json"],
      { cwd: u.work, env },
    );
    assert.equal(perms.code, 0, perms.err);
    const plan = JSON.parse(perms.out);
    assert.equal(plan.command.at(-1), `${served.url}/src/cli/main.ts`);
    assert.ok(plan.flags.includes(`--import-map=${importMap}`));
    assert.ok(
      plan.flags.includes(`--allow-import=${new URL(served.url).host}`),
    );
  } finally {
    await served.close();
  }
});

// ------------------------------------------------- without the launcher

/** The CLI run directly with the old static task's narrow flags. */
function narrowCli(u: User, args: string[], hermesHome: string) {
  return run(Deno.execPath(), [
    "run",
    "--quiet",
    "--no-prompt",
    "--cached-only",
    `--config=${join(ROOT, "deno.json")}`,
    `--allow-read=${u.root},${ROOT}`,
    `--allow-write=${u.root}`,
    "--allow-env=HERMES_HOME,HOME,DENO_NO_PROMPT",
    join(ROOT, "src", "cli", "main.ts"),
    ...args,
  ], { cwd: u.work, env: { HOME: u.home, HERMES_HOME: hermesHome } });
}

Deno.test("without the launcher, permission problems are reported as permission problems", async () => {
  await using u = await user();
  const elsewhere = join(u.home, "elsewhere");
  await Deno.mkdir(elsewhere);
  await Deno.writeTextFile(
    join(elsewhere, "config.yaml"),
    "memory:\n  provider: honcho\n",
  );
  const config = join(elsewhere, "config.yaml");
  const expected =
    `error: permission denied: hermes may not read ${config} (this run lacks --allow-read=${config})\n` +
    "hint: start hermes through its launcher ('deno task hermes …' in a checkout, or the 'hermes' command installed with 'deno install -g'), which grants what the profile's configuration needs; 'hermes memory permissions' prints that grant\n";
  // Was: "'honcho' commands are available only while memory.provider is
  // 'honcho'".
  const honcho = await narrowCli(u, ["honcho", "status"], elsewhere);
  assert.equal(honcho.code, 1);
  assert.equal(honcho.err, expected);
  // Was: a NotCapable message and a hint to run this very command.
  const perms = await narrowCli(u, ["memory", "permissions"], elsewhere);
  assert.equal(perms.code, 1);
  assert.equal(perms.err, expected);

  // Was: "could not be loaded; see the warning above, fix the plugin".
  await Deno.writeTextFile(
    join(u.root, "config.yaml"),
    "memory:\n  provider: honcho\n",
  );
  const setup = await narrowCli(u, [
    "memory",
    "setup",
    "honcho",
    "--yes",
  ], u.root);
  assert.equal(setup.code, 1);
  assert.match(
    setup.err,
    /^error: permission denied: memory provider 'honcho' needs --allow-read=\S+\/\.honcho\/config\.json --allow-env=HONCHO_API_KEY .*--allow-net=api\.honcho\.dev, which this run lacks\nhint: start hermes through its launcher/m,
  );
  assert.doesNotMatch(setup.err, /fix the plugin/);

  // Was: "Invalid YAML in …/plugin.yaml" when only LOG_TOKENS was not
  // granted (the yaml parser reads it).
  const plugin = join(u.root, "plugins", "notes");
  await Deno.mkdir(plugin, { recursive: true });
  await Deno.writeTextFile(
    join(plugin, "mod.ts"),
    "export class P extends MemoryProvider {}\n",
  );
  await Deno.writeTextFile(
    join(plugin, "plugin.yaml"),
    "name: notes # a comment makes it full YAML\ndescription: 'Notes: local'\nversion: 1.0\n",
  );
  const list = await narrowCli(u, ["memory", "list"], u.root);
  assert.doesNotMatch(list.err, /Invalid YAML/);
  assert.match(list.out, /notes/);
});

// ------------------------------------------------------- what loads

/** Modules a `deno run` evaluated, from Deno's debug log. */
async function evaluated(
  args: string[],
  env: Record<string, string>,
  cwd: string,
): Promise<string[]> {
  const output = await new Deno.Command(Deno.execPath(), {
    args: [args[0]!, "--log-level=debug", ...args.slice(1)],
    cwd,
    clearEnv: true,
    env: { PATH: "/usr/bin:/bin", DENO_DIR, NO_COLOR: "1", ...env },
    stdin: "null",
    stdout: "null",
    stderr: "piped",
  }).output();
  const log = new TextDecoder().decode(output.stderr);
  const modules = new Set<string>();
  for (
    const match of log.matchAll(
      /V8 code cache (?:hit|miss) for (?:ES module|script): (\S+?),/g,
    )
  ) {
    modules.add(match[1]!);
  }
  return [...modules];
}

Deno.test("a cached start loads no npm code: the launcher's own modules, then a lean CLI for --help and status", async () => {
  await using u = await user("memory:\n  provider: honcho\n");
  const warm = await hermes(u, ["--help"]);
  assert.equal(warm.code, 0, warm.err);
  assert.match(warm.out, /^ {2}honcho +Honcho \(plastic-labs\)/m);
  const env = { HOME: u.home };
  const launcher = await evaluated(
    ["run", ...LAUNCHER.slice(1), "--help"],
    env,
    u.work,
  );
  assert.ok(launcher.some((m) => m.endsWith("/src/launcher/main.ts")));
  const own = launcher.filter((m) => m.startsWith("file://"));
  assert.deepEqual(
    own.map((m) => m.slice(m.indexOf("/src/") + 1)).sort(),
    [
      "src/_util/lazy_import.ts",
      "src/_util/sha256.ts",
      "src/cli/arg_scan.ts",
      "src/cli/cli_location.ts",
      "src/cli/help_text.ts",
      "src/cli/root_help.ts",
      "src/core/env.ts",
      "src/launcher/exec.ts",
      "src/launcher/input_record.ts",
      "src/launcher/launch.ts",
      "src/launcher/launch_cache.ts",
      "src/launcher/main.ts",
    ],
  );
  assert.ok(!launcher.some((m) => m.startsWith("node:")), launcher.join("\n"));
  // The CLI as the launcher runs it (the cached record's command).
  const dir = join(u.home, ".cache", "hermes-memory", "launcher");
  const name =
    [...Deno.readDirSync(dir)].find((e) => e.name.startsWith("plan-"))!.name;
  const record = await openRecord(dir, name);
  const cli = (args: string[]) =>
    evaluated(
      record.denoArgs.filter((a: string) => a !== "--quiet").concat(args),
      { ...env, ...record.env },
      u.work,
    );
  const help = await cli(["--help"]);
  assert.ok(help.some((m) => m.endsWith("/src/cli/main.ts")));
  for (const heavy of [/yaml/, /commander/, /inquirer/, /\/cli\.ts$/]) {
    assert.ok(!help.some((m) => heavy.test(m)), `--help loaded ${heavy}`);
  }
  const status = await cli(["memory", "status"]);
  assert.ok(status.some((m) => m.endsWith("/memory_status.ts")));
  assert.ok(!status.some((m) => /inquirer/.test(m)), "status loaded inquirer");
  // config.yaml is unchanged since the launcher parsed it: no `yaml` package.
  assert.ok(
    !status.some((m) => /\/npm\/.*\/yaml\//.test(m)),
    "status loaded the yaml package",
  );
  for (const other of ["memory_setup", "memory_import", "memory_recall"]) {
    assert.ok(!status.some((m) => m.includes(other)), `status loaded ${other}`);
  }
});

Deno.test("a cached 'memory status' on a built-in-only home evaluates no Node-compatibility module and no provider-loading code", async () => {
  await using u = await user();
  const warm = await hermes(u, ["memory", "status"]);
  assert.equal(warm.code, 0, warm.err);
  const dir = join(u.home, ".cache", "hermes-memory", "launcher");
  const name =
    [...Deno.readDirSync(dir)].find((e) => e.name.startsWith("plan-"))!.name;
  const record = await openRecord(dir, name);
  const status = await evaluated(
    record.denoArgs.filter((a: string) => a !== "--quiet").concat([
      "memory",
      "status",
    ]),
    { HOME: u.home, ...record.env },
    u.work,
  );
  assert.ok(status.some((m) => m.endsWith("/memory_status.ts")));
  // node:path, node:url and node:async_hooks evaluated about 50 modules of
  // Deno's Node layer (about 10 ms of every start).
  const node = status.filter((m) => /^(node:|ext:deno_node\/)/.test(m));
  assert.deepEqual(node, []);
  const loading = status.filter((m) =>
    /\/src\/cli\/(_plugins|provider_report)\.ts$|\/src\/sandbox\/(denial|worker_protocol)\.ts$/
      .test(m)
  );
  assert.deepEqual(loading, []);
});

Deno.test("SIGTERM ends the CLI: the launcher became it (execve), or without --allow-ffi passes the signal on and exits with its status", async () => {
  await using u = await user("memory:\n  provider: archive\n");
  const warm = await hermes(u, ["memory", "status"]);
  assert.equal(warm.code, 0, warm.err);
  const terminate = async (flags: string[]) => {
    // `memory import -` waits for the transcript on standard input.
    const child = new Deno.Command(Deno.execPath(), {
      args: [...flags, "memory", "import", "-"],
      cwd: u.work,
      clearEnv: true,
      env: { HOME: u.home, PATH: "/usr/bin:/bin", DENO_DIR, NO_COLOR: "1" },
      stdin: "piped",
      stdout: "null",
      stderr: "null",
    }).spawn();
    const writer = child.stdin.getWriter();
    await writer.write(new TextEncoder().encode('{"role":"user",'));
    await new Promise((resolve) => setTimeout(resolve, 1500));
    child.kill("SIGTERM");
    const status = await child.status;
    await writer.close().catch(() => {});
    return status;
  };
  // The task line's --allow-ffi: the process is the CLI, which SIGTERM ends
  // as it ends any program (143 in a shell).
  const exec = await terminate(LAUNCHER);
  assert.equal(exec.signal, "SIGTERM");
  assert.equal(exec.code, 143);
  // An older install without --allow-ffi starts the CLI as a child: the
  // launcher exits (no signal) with 128 + 15, the status of the CLI that the
  // signal it passed on terminated.
  const spawned = await terminate(LAUNCHER.filter((w) => w !== "--allow-ffi"));
  assert.equal(spawned.signal, null);
  assert.equal(spawned.code, 143);
});
