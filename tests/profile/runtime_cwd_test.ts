import assert from "node:assert/strict";
import { join } from "node:path";
import { resolveAgentCwd } from "../../src/profile/runtime_cwd.ts";
import { type Logger, setLogger } from "../../src/core/log.ts";
import { runDenoChild, srcUrl } from "../helpers/deno_child.ts";
import { withSessionCwd } from "../../src/profile/context_scope.ts";

async function withTempDir(fn: (dir: string) => Promise<void>): Promise<void> {
  const dir = await Deno.realPath(await Deno.makeTempDir());
  try {
    await fn(dir);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

async function capturingWarnings(
  fn: (warnings: string[]) => void | Promise<void>,
): Promise<void> {
  const warnings: string[] = [];
  const logger: Logger = {
    log: (level, message) => {
      if (level === "warn") warnings.push(message);
    },
  };
  const previous = setLogger(logger);
  try {
    await fn(warnings);
  } finally {
    setLogger(previous);
  }
}

function runsAsRoot(): boolean {
  try {
    return Deno.uid() === 0;
  } catch {
    return true;
  }
}

const PRINT_CWD = `import { resolveAgentCwd } from ${
  JSON.stringify(srcUrl("profile/runtime_cwd.ts"))
};
import { withSessionCwd } from ${
  JSON.stringify(srcUrl("profile/context_scope.ts"))
};
const session = Deno.args[0];
console.log(session ? withSessionCwd(session, resolveAgentCwd) : resolveAgentCwd());
`;

Deno.test("resolveAgentCwd() uses the session directory inside withSessionCwd", async () => {
  await withTempDir(async (dir) => {
    const a = join(dir, "a");
    const b = join(dir, "b");
    await Deno.mkdir(a);
    await Deno.mkdir(b);
    const before = Deno.cwd();
    const seen = await Promise.all(
      [a, b].map((cwd) =>
        withSessionCwd(cwd, async () => {
          await new Promise((r) => setTimeout(r, 1));
          return resolveAgentCwd();
        })
      ),
    );
    assert.deepEqual(seen, [a, b]);
    assert.equal(Deno.cwd(), before);
  });
});

Deno.test("resolveAgentCwd() skips a missing or non-directory session cwd with one warning", async () => {
  await withTempDir(async (dir) => {
    await capturingWarnings(async (warnings) => {
      const outside = resolveAgentCwd();
      const missing = join(dir, "gone");
      assert.equal(withSessionCwd(missing, resolveAgentCwd), outside);
      assert.equal(withSessionCwd(missing, resolveAgentCwd), outside);
      const file = join(dir, "file.txt");
      await Deno.writeTextFile(file, "x");
      assert.equal(withSessionCwd(file, resolveAgentCwd), outside);
      assert.equal(warnings.length, 2, warnings.join("\n"));
      assert.ok(warnings[0]!.includes(missing));
      assert.ok(warnings[1]!.includes(file));
    });
  });
});

Deno.test({
  name: "resolveAgentCwd() skips a directory the process cannot enter",
  ignore: Deno.build.os === "windows" || runsAsRoot(),
  fn: async () => {
    await withTempDir(async (dir) => {
      const locked = join(dir, "locked");
      await Deno.mkdir(locked);
      await Deno.chmod(locked, 0o600);
      try {
        await capturingWarnings((warnings) => {
          assert.notEqual(withSessionCwd(locked, resolveAgentCwd), locked);
          assert.equal(warnings.length, 1);
        });
      } finally {
        await Deno.chmod(locked, 0o700);
      }
    });
  },
});

Deno.test("resolveAgentCwd() falls back to TERMINAL_CWD, then to the process directory", async () => {
  await withTempDir(async (dir) => {
    const terminal = join(dir, "terminal");
    const proc = join(dir, "process");
    const session = join(dir, "session");
    for (const d of [terminal, proc, session]) await Deno.mkdir(d);
    const flags = ["--allow-env=TERMINAL_CWD", `--allow-read=${dir}`];

    const fromTerminal = await runDenoChild(dir, PRINT_CWD, {
      flags,
      cwd: proc,
      env: { TERMINAL_CWD: `${terminal} ` },
    });
    assert.equal(fromTerminal.stdout.trim(), terminal, fromTerminal.stderr);

    const sessionWins = await runDenoChild(dir, PRINT_CWD, {
      flags,
      cwd: proc,
      env: { TERMINAL_CWD: terminal },
      args: [session],
    });
    assert.equal(sessionWins.stdout.trim(), session, sessionWins.stderr);

    const badTerminal = await runDenoChild(dir, PRINT_CWD, {
      flags,
      cwd: proc,
      env: { TERMINAL_CWD: join(dir, "missing") },
    });
    assert.equal(badTerminal.stdout.trim(), proc);
    assert.match(badTerminal.stderr, /TERMINAL_CWD/);

    const unset = await runDenoChild(dir, PRINT_CWD, {
      flags,
      cwd: proc,
      env: { TERMINAL_CWD: "" },
    });
    assert.equal(unset.stdout.trim(), proc, unset.stderr);
    assert.equal(unset.stderr, "");
  });
});
