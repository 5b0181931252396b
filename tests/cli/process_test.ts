// The `hermes` CLI as a real process, started the way users start it:
// through the launcher with exactly the flags of the `hermes` task (which
// then runs the CLI under the profile's grant): help, status, off, reset
// and --profile; a home outside ~/.hermes; the reset confirmation and the
// setup picker driven through a pseudo-terminal (keys, Enter, Ctrl-C reach
// the CLI through the launcher).
import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { join } from "node:path";
import { KEYS, spawnPty } from "../helpers/pty.ts";
import { loadConfig } from "../../src/config/config.ts";
import {
  type CommandResult,
  DENO_DIR,
  runCommand,
} from "../helpers/run_command.ts";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));

/** The `hermes` task of deno.json (the line given to the maintainers). */
export const HERMES_TASK =
  "deno run --no-prompt --cached-only --allow-read --allow-write --allow-env --allow-run --allow-ffi src/launcher/main.ts";

/** The task's argv after `deno`. */
function taskArgs(): string[] {
  return HERMES_TASK.split(" ").slice(1);
}

function hermes(
  userHome: string,
  args: string[],
  env: Record<string, string> = {},
): Promise<CommandResult> {
  return runCommand(Deno.execPath(), [...taskArgs(), ...args], {
    cwd: ROOT,
    env: { HOME: userHome, ...env },
  });
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
  assert.equal(typeof task === "string" ? task : task.command, HERMES_TASK);
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
    // An existing profile (a missing one is an error: conventions_test.ts).
    await Deno.mkdir(join(home, ".hermes", "profiles", "coder"), {
      recursive: true,
    });
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

Deno.test("hermes with HERMES_HOME outside ~/.hermes works with no flag added", async () => {
  await withUserHome(async (home) => {
    const outside = await Deno.realPath(
      await Deno.makeTempDir({ prefix: "hermes-outside-" }),
    );
    try {
      await Deno.writeTextFile(
        join(outside, "config.yaml"),
        "memory:\n  provider: archive\n",
      );
      const { code, out, err } = await hermes(home, ["memory", "status"], {
        HERMES_HOME: outside,
      });
      assert.equal(code, 0, err);
      assert.match(out, new RegExp(`Home: +${outside}\n`));
      assert.match(out, /Provider: +archive/);
      const off = await hermes(home, ["memory", "off"], {
        HERMES_HOME: outside,
      });
      assert.equal(off.code, 0, off.err);
      assert.deepEqual(await loadConfig({ hermesHome: outside }), {
        memory: { provider: "" },
      });
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
  };
}

function ptyCommand(args: string[]): string[] {
  return [Deno.execPath(), ...taskArgs(), ...args];
}

Deno.test("hermes memory reset in a terminal: 'yes' erases, Ctrl-C cancels", async (t) => {
  await t.step("typing yes", async () => {
    await withUserHome(async (home) => {
      const dir = join(home, ".hermes", "memories");
      await Deno.mkdir(dir, { recursive: true });
      await Deno.writeTextFile(join(dir, "MEMORY.md"), "note");
      await using term = spawnPty(ptyCommand(["memory", "reset"]), {
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
      await using term = spawnPty(ptyCommand(["memory", "reset"]), {
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
      await using term = spawnPty(ptyCommand(["memory", "setup"]), {
        cwd: ROOT,
        env: ptyEnv(home),
      });
      await term.expect("Select a memory provider");
      await term.expect("Built-in only");
      await term.send(KEYS.enter);
      await term.expect("Start a new session");
      assert.equal(await term.exit(), 0);
      // The launcher's flags satisfy the sandbox checks: no warnings on a TTY.
      assert.ok(!term.text.includes("hermes: warn"), term.text);
      assert.deepEqual(
        await loadConfig({ hermesHome: join(home, ".hermes") }),
        { memory: { provider: "" } },
      );
    });
  });
  await t.step("Ctrl-C in the picker", async () => {
    await withUserHome(async (home) => {
      await using term = spawnPty(ptyCommand(["memory", "setup"]), {
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
      await using term = spawnPty(ptyCommand(["memory", "setup"]), {
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
