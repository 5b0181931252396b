// The `hermes` CLI as a real process, run with exactly the flags of the
// `hermes` task: help, status, off, reset and --profile; a home outside the
// grant fails with a permission hint; the reset confirmation and the setup
// picker driven through a pseudo-terminal (keys, Enter, Ctrl-C).
import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { join } from "node:path";
import { KEYS, spawnPty } from "../helpers/pty.ts";
import { loadConfig } from "../../src/config/config.ts";
import {
  cliGrant,
  grantFromFlags,
  mergeGrants,
  type RunGrant,
} from "../../src/cli/mod.ts";
import { listMemoryProviderNames } from "../../src/plugins/plugin_discovery.ts";
import {
  denoRunFlags,
  providerPermissions,
} from "../../src/plugins/provider_permissions.ts";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
// The child gets a scratch HOME; it must still find the npm cache.
const DENO_DIR = Deno.env.get("DENO_DIR") ??
  join(Deno.env.get("HOME") ?? "/root", ".cache", "deno");

/** The `hermes` task of deno.json (the line given to the maintainers). */
export const HERMES_TASK = [
  "DENO_NO_PROMPT=1 deno run --no-prompt --cached-only",
  "--allow-read=$HOME/.hermes,.,$HOME/.honcho/config.json",
  "--allow-write=$HOME/.hermes",
  "--allow-env=HERMES_HOME,HOME,HERMES_DATA_DIR_SUFFIX,HERMES_ENABLE_PROJECT_PLUGINS,HERMES_SESSION_SOURCE,TERMINAL_CWD,LOG_TOKENS,LOG_STREAM,DENO_NO_PROMPT," +
  "TERM,COLORTERM,TERM_PROGRAM,TERM_PROGRAM_VERSION,TMUX,NO_COLOR,FORCE_COLOR,NODE_DISABLE_COLORS," +
  "CI,CI_NAME,TF_BUILD,TEAMCITY_VERSION,GITHUB_ACTIONS,GITEA_ACTIONS,CIRCLECI,TRAVIS,APPVEYOR,GITLAB_CI,BUILDKITE,DRONE," +
  "INQUIRER_KEYBINDINGS,CLI_WIDTH," +
  "HONCHO_API_KEY,HONCHO_BASE_URL,HONCHO_URL,HONCHO_ENVIRONMENT,HONCHO_TIMEOUT,HERMES_HONCHO_HOST",
  "--allow-net=api.honcho.dev",
  "src/cli/main.ts",
].join(" ");

/** The task's argv after `deno`, with `$HOME` expanded as deno task does. */
function taskArgs(home: string): string[] {
  const words = HERMES_TASK.split(" ");
  return words.slice(words.indexOf("deno") + 1).map((arg) =>
    arg.replaceAll("$HOME", home)
  );
}

/** The variables the task line sets before `deno` (`NAME=value`). */
const TASK_ENV: Record<string, string> = Object.fromEntries(
  HERMES_TASK.split(" ").slice(0, HERMES_TASK.split(" ").indexOf("deno"))
    .map((word) => word.split("=", 2) as [string, string]),
);

interface Result {
  code: number;
  out: string;
  err: string;
}

async function hermes(
  userHome: string,
  args: string[],
  env: Record<string, string> = {},
): Promise<Result> {
  const output = await new Deno.Command(Deno.execPath(), {
    args: [...taskArgs(userHome), ...args],
    cwd: ROOT,
    clearEnv: true,
    env: {
      HOME: userHome,
      PATH: "/usr/bin:/bin",
      DENO_DIR,
      ...TASK_ENV,
      ...env,
    },
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
  const decoder = new TextDecoder();
  return {
    code: output.code,
    out: decoder.decode(output.stdout),
    err: decoder.decode(output.stderr),
  };
}

async function withUserHome<T>(fn: (home: string) => Promise<T>): Promise<T> {
  const home = await Deno.makeTempDir({ prefix: "hermes-user-" });
  try {
    return await fn(home);
  } finally {
    await Deno.remove(home, { recursive: true });
  }
}

function exists(path: string): boolean {
  try {
    Deno.lstatSync(path);
    return true;
  } catch {
    return false;
  }
}

Deno.test("hermes task line in deno.json matches the tested flags", async () => {
  const config = JSON.parse(await Deno.readTextFile(join(ROOT, "deno.json")));
  const task = config.tasks?.hermes;
  if (task === undefined) return; // Not added yet.
  // The task first caches the locked npm packages, so the --cached-only run
  // works on a fresh machine.
  assert.equal(
    typeof task === "string" ? task : task.command,
    `deno install --frozen --quiet && ${HERMES_TASK}`,
  );
});

Deno.test("hermes task grants the CLI's own needs plus every bundled provider's sandbox", async () => {
  // plugin.yaml paths such as ~/.honcho expand with the process's HOME.
  const home = Deno.env.get("HOME") ?? "/root";
  const task = grantFromFlags(taskArgs(home)).grant;
  const needed: RunGrant[] = [cliGrant(join(home, ".hermes"))];
  for (
    const name of await listMemoryProviderNames({ hermesHome: "/nonexistent" })
  ) {
    const grant = await providerPermissions(name, {
      hermesHome: join(home, ".hermes"),
      config: {},
    });
    assert.ok(grant, name);
    needed.push(grantFromFlags(denoRunFlags(grant)).grant);
  }
  const want = mergeGrants(...needed);
  // Paths: the task grants "." (the framework) instead of each bundled dir.
  const covered = (path: string): boolean =>
    task.read.some((p) =>
      p === path ||
      (p === "." && `${path}/`.startsWith(ROOT)) ||
      path.startsWith(`${p}/`)
    );
  for (const path of want.read) assert.ok(covered(path), `read ${path}`);
  assert.deepEqual(task.write, want.write);
  assert.deepEqual(new Set(task.env), new Set(want.env));
  assert.deepEqual(new Set(task.net), new Set(want.net));
});

Deno.test("hermes --help and memory reset --help run under the task flags", async () => {
  await withUserHome(async (home) => {
    const root = await hermes(home, ["--help"]);
    assert.equal(root.code, 0, root.err);
    assert.equal(root.err, "");
    assert.match(root.out, /^USAGE:\n {2}hermes \[--profile NAME\]/m);
    const reset = await hermes(home, ["memory", "reset", "--help"]);
    assert.equal(reset.code, 0, reset.err);
    assert.match(reset.out, /^ {2}-y, --yes +Erase without asking/m);
    const bad = await hermes(home, ["memory", "status", "--nope"]);
    assert.equal(bad.code, 2);
    assert.equal(bad.out, "");
    assert.equal(
      bad.err,
      "error: unknown option '--nope'\nhint: run 'hermes memory status --help' for usage\n",
    );
  });
});

Deno.test("hermes memory status, off and reset work under the task flags", async () => {
  await withUserHome(async (home) => {
    const hermesHome = join(home, ".hermes");
    const status = await hermes(home, ["memory", "status"]);
    assert.equal(status.code, 0, status.err);
    assert.equal(status.err, "");
    assert.match(status.out, new RegExp(`Home: +${hermesHome}\n`));
    assert.match(status.out, /Provider: {2}\(none \u2014 built-in only\)/);

    const off = await hermes(home, ["memory", "off"]);
    assert.equal(off.code, 0, off.err);
    assert.deepEqual(await loadConfig({ hermesHome }), {
      memory: { provider: "" },
    });

    await Deno.mkdir(join(hermesHome, "memories"), { recursive: true });
    await Deno.writeTextFile(join(hermesHome, "memories", "USER.md"), "Ada");
    const reset = await hermes(home, ["memory", "reset", "--yes"]);
    assert.equal(reset.code, 0, reset.err);
    assert.match(reset.out, /\u2713 Deleted USER\.md \(user profile\)/);
    assert.equal(exists(join(hermesHome, "memories", "USER.md")), false);

    const json = await hermes(home, ["memory", "status", "--json"], {
      TERM: "xterm-256color",
    });
    assert.equal(json.code, 0, json.err);
    assert.equal(JSON.parse(json.out).hermesHome, hermesHome);
  });
});

Deno.test("hermes --profile NAME runs in <root>/profiles/NAME", async () => {
  await withUserHome(async (home) => {
    const { code, out, err } = await hermes(home, [
      "--profile",
      "coder",
      "memory",
      "status",
      "--json",
    ]);
    assert.equal(code, 0, err);
    assert.equal(
      JSON.parse(out).hermesHome,
      join(home, ".hermes", "profiles", "coder"),
    );
  });
});

Deno.test("hermes with HERMES_HOME outside the grant fails with a permission hint", async () => {
  await withUserHome(async (home) => {
    const outside = await Deno.makeTempDir({ prefix: "hermes-outside-" });
    try {
      const { code, out, err } = await hermes(home, ["memory", "status"], {
        HERMES_HOME: outside,
      });
      assert.equal(code, 1);
      assert.equal(out, "");
      assert.match(err, /^error: Requires read access to /);
      assert.match(
        err,
        new RegExp(`--allow-read=${outside}.* --allow-write=${outside}`),
      );
    } finally {
      await Deno.remove(outside, { recursive: true });
    }
  });
});

// ------------------------------------------------------ pseudo-terminal

function ptyEnv(home: string): Record<string, string> {
  return {
    HOME: home,
    PATH: "/usr/bin:/bin",
    TERM: "xterm-256color",
    DENO_DIR,
    ...TASK_ENV,
  };
}

function ptyCommand(home: string, args: string[]): string[] {
  return [Deno.execPath(), ...taskArgs(home), ...args];
}

Deno.test("hermes memory reset in a terminal: 'yes' erases, Ctrl-C cancels", async (t) => {
  await t.step("typing yes", async () => {
    await withUserHome(async (home) => {
      const dir = join(home, ".hermes", "memories");
      await Deno.mkdir(dir, { recursive: true });
      await Deno.writeTextFile(join(dir, "MEMORY.md"), "note");
      await using term = spawnPty(ptyCommand(home, ["memory", "reset"]), {
        cwd: ROOT,
        env: ptyEnv(home),
      });
      await term.expect("Type 'yes' to confirm: ");
      await term.send("yes\r");
      await term.expect("Memory reset complete.");
      assert.equal(await term.exit(), 0);
      assert.equal(exists(join(dir, "MEMORY.md")), false);
    });
  });
  await t.step("Ctrl-C", async () => {
    await withUserHome(async (home) => {
      const dir = join(home, ".hermes", "memories");
      await Deno.mkdir(dir, { recursive: true });
      await Deno.writeTextFile(join(dir, "MEMORY.md"), "note");
      await using term = spawnPty(ptyCommand(home, ["memory", "reset"]), {
        cwd: ROOT,
        env: ptyEnv(home),
      });
      await term.expect("Type 'yes' to confirm: ");
      await term.send(KEYS.ctrlC);
      await term.expect("Cancelled.");
      assert.equal(await term.exit(), 1);
      assert.equal(exists(join(dir, "MEMORY.md")), true);
    });
  });
});

Deno.test("hermes memory setup picker in a terminal: Enter keeps built-in, Ctrl-C saves nothing", async (t) => {
  await t.step("Enter on the preselected built-in entry", async () => {
    await withUserHome(async (home) => {
      await using term = spawnPty(ptyCommand(home, ["memory", "setup"]), {
        cwd: ROOT,
        env: ptyEnv(home),
      });
      await term.expect("Select a memory provider");
      await term.expect("Built-in only");
      await term.send(KEYS.enter);
      await term.expect("Start a new session");
      assert.equal(await term.exit(), 0);
      // The task's flags satisfy the sandbox checks: no warnings on a TTY.
      assert.ok(!term.text.includes("hermes: warn"), term.text);
      assert.deepEqual(
        await loadConfig({ hermesHome: join(home, ".hermes") }),
        { memory: { provider: "" } },
      );
    });
  });
  await t.step("Ctrl-C in the picker", async () => {
    await withUserHome(async (home) => {
      await using term = spawnPty(ptyCommand(home, ["memory", "setup"]), {
        cwd: ROOT,
        env: ptyEnv(home),
      });
      await term.expect("Select a memory provider");
      await term.send(KEYS.ctrlC);
      await term.expect("Cancelled. No changes saved.");
      assert.equal(await term.exit(), 1);
      assert.equal(exists(join(home, ".hermes", "config.yaml")), false);
    });
  });
  await t.step("Ctrl-D in the picker", async () => {
    await withUserHome(async (home) => {
      await using term = spawnPty(ptyCommand(home, ["memory", "setup"]), {
        cwd: ROOT,
        env: ptyEnv(home),
      });
      await term.expect("Select a memory provider");
      await term.send(KEYS.ctrlD);
      await term.expect("Cancelled. No changes saved.");
      assert.equal(await term.exit(), 1);
      assert.equal(exists(join(home, ".hermes", "config.yaml")), false);
    });
  });
});
