// `hermes memory status | reset | off | list | permissions` in-process,
// against scratch profile homes and a memory CliIo.
import assert from "node:assert/strict";
import { join } from "node:path";
import {
  CANCEL_PROMPT,
  main,
  memoryCliIo,
  type MemoryCliIoOptions,
} from "../../src/cli/mod.ts";
import { loadConfig } from "../../src/config/config.ts";
import { withHome } from "../helpers/test_home.ts";

async function run(
  home: string,
  args: string[],
  options: MemoryCliIoOptions = {},
): Promise<{ code: number; out: string; err: string; asked: string[] }> {
  const io = memoryCliIo({
    ...options,
    env: { HERMES_HOME: home, ...(options.env ?? {}) },
  });
  const code = await main(args, io);
  return {
    code,
    out: io.out,
    err: io.err,
    asked: io.asked.map((a) => a.message),
  };
}

async function writeMemories(
  home: string,
  files: { memory?: string; user?: string },
): Promise<void> {
  await Deno.mkdir(join(home, "memories"), { recursive: true });
  if (files.memory !== undefined) {
    await Deno.writeTextFile(join(home, "memories", "MEMORY.md"), files.memory);
  }
  if (files.user !== undefined) {
    await Deno.writeTextFile(join(home, "memories", "USER.md"), files.user);
  }
}

/**
 * stderr without the loader's warnings: under `deno test` (no --cached-only,
 * no net grant for api.honcho.dev) probing the bundled providers warns.
 */
function errors(err: string): string {
  return err.split("\n").filter((l) =>
    l !== "" && !l.startsWith("hermes: warn:")
  )
    .join("\n");
}

function exists(path: string): boolean {
  try {
    Deno.lstatSync(path);
    return true;
  } catch {
    return false;
  }
}

// ---------------------------------------------------------------- status

Deno.test("memory status shows flags, per-file usage and built-in only", async () => {
  await withHome(async (home) => {
    await writeMemories(home, {
      memory: "Repo uses Deno\n\u00a7\nTests live in tests/",
    });
    const { code, out, err } = await run(home, ["memory", "status"]);
    assert.equal(code, 0);
    assert.equal(errors(err), "");
    assert.match(out, /^Memory status\n\u2500{40}\n/);
    assert.match(out, new RegExp(`^  Home: +${home}$`, "m"));
    assert.match(out, /^ {4}memory\.memory_enabled: +true$/m);
    assert.match(out, /^ {4}memory\.user_profile_enabled: +true$/m);
    assert.match(
      out,
      /^ {4}MEMORY\.md +agent notes +2 entries +37\/2,200 chars \(1%\) +38 bytes$/m,
    );
    assert.match(
      out,
      /^ {4}USER\.md +user profile +not created yet +0\/1,375 chars \(0%\)$/m,
    );
    assert.match(out, new RegExp(`^ {4}Files in: ${home}/memories/$`, "m"));
    assert.match(out, /^ {2}Provider: {2}\(none \u2014 built-in only\)$/m);
    assert.match(out, /^ {2}Installed plugins:$/m);
    // Plain text: not a terminal, so no escape sequences.
    assert.ok(!out.includes("\x1b["));
  });
});

Deno.test("memory status reads the enable flags and limits from config.yaml", async () => {
  await withHome(async (home) => {
    await Deno.writeTextFile(
      join(home, "config.yaml"),
      "memory:\n  memory_enabled: false\n  user_char_limit: 500\n",
    );
    const { code, out } = await run(home, ["memory", "status"]);
    assert.equal(code, 0);
    assert.match(out, /^ {4}memory\.memory_enabled: +false$/m);
    assert.match(out, /MEMORY\.md +agent notes \(disabled\)/);
    assert.match(out, /0\/500 chars/);
  });
});

Deno.test("memory status colours only on a terminal without NO_COLOR", async () => {
  await withHome(async (home) => {
    const tty = await run(home, ["memory", "status"], {
      stdoutIsTerminal: true,
    });
    assert.ok(tty.out.includes("\x1b[1mMemory status\x1b[22m"));
    const noColor = await run(home, ["memory", "status"], {
      stdoutIsTerminal: true,
      env: { NO_COLOR: "1" },
    });
    assert.ok(!noColor.out.includes("\x1b["));
    const json = await run(home, ["memory", "status", "--json"], {
      stdoutIsTerminal: true,
    });
    assert.ok(!json.out.includes("\x1b["));
  });
});

Deno.test("memory status --json is machine-readable", async () => {
  await withHome(async (home) => {
    await writeMemories(home, { user: "Name: Ada" });
    await Deno.writeTextFile(
      join(home, "config.yaml"),
      "memory:\n  provider: none\n",
    );
    const { code, out, err } = await run(home, ["memory", "status", "--json"]);
    assert.equal(code, 0);
    assert.equal(errors(err), "");
    const report = JSON.parse(out);
    assert.equal(report.hermesHome, home);
    assert.equal(report.configPath, join(home, "config.yaml"));
    assert.equal(report.builtin.memoryEnabled, true);
    assert.equal(report.builtin.userProfileEnabled, true);
    assert.equal(report.providerSetting, "none");
    assert.equal(report.provider, null);
    const user = report.builtin.files.find((f: { target: string }) =>
      f.target === "user"
    );
    assert.deepEqual(
      {
        exists: user.exists,
        bytes: user.bytes,
        chars: user.chars,
        limit: user.limit,
        entries: user.entries,
      },
      { exists: true, bytes: 9, chars: 9, limit: 1375, entries: 1 },
    );
    assert.ok(Array.isArray(report.plugins));
  });
});

Deno.test("memory status names a provider that is not installed", async () => {
  await withHome(async (home) => {
    await Deno.writeTextFile(
      join(home, "config.yaml"),
      "memory:\n  provider: nosuch\n  nosuch:\n    workspace: team\n",
    );
    const { code, out } = await run(home, ["memory", "status"]);
    assert.equal(code, 0);
    assert.match(out, /^ {2}Provider: {2}nosuch$/m);
    assert.match(out, /^ {4}workspace: team$/m);
    assert.match(out, /^ {2}Plugin: {4}NOT installed \u2717$/m);
    assert.match(
      out,
      new RegExp(
        `Install the 'nosuch' memory plugin into ${home}/plugins/nosuch/`,
      ),
    );
  });
});

Deno.test("memory status reports a broken config.yaml with file and line", async () => {
  await withHome(async (home) => {
    await Deno.writeTextFile(
      join(home, "config.yaml"),
      "memory:\n  provider: [unclosed\n",
    );
    const { code, out, err } = await run(home, ["memory", "status"]);
    // The rest of the report is still shown; the provider is unknown.
    assert.equal(code, 1);
    assert.match(
      out,
      /Provider: {2}unknown \u2014 config\.yaml does not parse/,
    );
    assert.match(out, new RegExp(`\u2717 ${home}/config\\.yaml:3:1: `));
    assert.match(out, /fix: fix the YAML there/);
    assert.match(
      err,
      new RegExp(
        `^error: ${home}/config\\.yaml:3:1: .*; fix the YAML there`,
        "m",
      ),
    );
  });
});

// ----------------------------------------------------------------- reset

Deno.test("memory reset --yes deletes both files with Hermes' wording", async () => {
  await withHome(async (home) => {
    await writeMemories(home, { memory: "x".repeat(1234), user: "Name: Ada" });
    await Deno.writeTextFile(join(home, "memories", "MEMORY.md.lock"), "");
    const { code, out, err } = await run(home, ["memory", "reset", "--yes"]);
    assert.equal(code, 0);
    assert.equal(err, "");
    assert.equal(
      out,
      "This will permanently erase the following memory files:\n" +
        "  \u25c6 MEMORY.md (agent notes) \u2014 1,234 bytes\n" +
        "  \u25c6 USER.md (user profile) \u2014 9 bytes\n" +
        "\n" +
        "  \u2713 Deleted MEMORY.md (agent notes)\n" +
        "  \u2713 Deleted USER.md (user profile)\n" +
        "\n" +
        "Memory reset complete. Erased MEMORY.md and USER.md: new sessions start without them.\n" +
        `Files were in: ${home}/memories/\n`,
    );
    assert.equal(exists(join(home, "memories", "MEMORY.md")), false);
    assert.equal(exists(join(home, "memories", "USER.md")), false);
    // Lock files are not part of the reset.
    assert.equal(exists(join(home, "memories", "MEMORY.md.lock")), true);
  });
});

Deno.test("memory reset --target user -y leaves MEMORY.md alone", async () => {
  await withHome(async (home) => {
    await writeMemories(home, { memory: "keep", user: "drop" });
    const { code, out } = await run(home, [
      "memory",
      "reset",
      "--target",
      "user",
      "-y",
    ]);
    assert.equal(code, 0);
    // MEMORY.md is neither listed for erasing nor reported deleted: only kept.
    assert.doesNotMatch(out, /\u25c6 MEMORY\.md|Deleted MEMORY\.md/);
    assert.match(
      out,
      /Erased USER\.md: new sessions start without it\. MEMORY\.md was kept\.\n/,
    );
    assert.equal(exists(join(home, "memories", "MEMORY.md")), true);
    assert.equal(exists(join(home, "memories", "USER.md")), false);
  });
});

Deno.test("memory reset with nothing to erase says so", async () => {
  await withHome(async (home) => {
    const { code, out } = await run(home, ["memory", "reset", "--yes"]);
    assert.equal(code, 0);
    assert.equal(
      out,
      `Nothing to reset \u2014 no memory files found in ${home}/memories/\n`,
    );
  });
});

Deno.test("memory reset asks 'Type 'yes' to confirm: ' on a terminal", async (t) => {
  for (
    const [answer, erased] of [
      ["yes", true],
      ["  YES ", true],
      ["y", false],
      ["", false],
      [CANCEL_PROMPT, false],
    ] as const
  ) {
    await t.step(`answer ${String(answer)}`, async () => {
      await withHome(async (home) => {
        await writeMemories(home, { memory: "m" });
        const { code, out, asked } = await run(home, ["memory", "reset"], {
          stdinIsTerminal: true,
          answers: [answer],
        });
        assert.deepEqual(asked, ["Type 'yes' to confirm: "]);
        assert.equal(exists(join(home, "memories", "MEMORY.md")), !erased);
        if (erased) {
          assert.equal(code, 0);
          assert.match(out, /Memory reset complete\./);
        } else {
          assert.equal(code, 1);
          assert.match(out, /\nCancelled\.\n$/);
          assert.doesNotMatch(out, /Deleted/);
        }
      });
    });
  }
});

Deno.test("memory reset without --yes on a non-terminal erases nothing", async () => {
  await withHome(async (home) => {
    await writeMemories(home, { memory: "m" });
    const { code, out, err, asked } = await run(home, ["memory", "reset"]);
    assert.equal(code, 1);
    assert.deepEqual(asked, []);
    assert.match(err, /not a terminal.*re-run with --yes/);
    assert.match(out, /Cancelled\.\n$/);
    assert.equal(exists(join(home, "memories", "MEMORY.md")), true);
  });
});

// ------------------------------------------------------------------- off

Deno.test("memory off sets memory.provider to '' and keeps everything else", async () => {
  await withHome(async (home) => {
    const path = join(home, "config.yaml");
    await Deno.writeTextFile(
      path,
      "# my settings\nmodel: gpt-x # the model\nmemory:\n  provider: honcho\n  honcho:\n    workspace: team\n",
    );
    const { code, out, err } = await run(home, ["memory", "off"]);
    assert.equal(code, 0);
    assert.equal(err, "");
    assert.equal(
      out,
      `Turned off memory provider 'honcho': set memory.provider to "" in ${path}.\n` +
        "Built-in memory (MEMORY.md / USER.md) stays on. The settings in memory.honcho were kept. Turn 'honcho' back on with 'hermes honcho enable' or 'hermes memory setup honcho'.\n" +
        "Start a new session for the change to take effect.\n",
    );
    const text = await Deno.readTextFile(path);
    assert.match(text, /# my settings/);
    assert.match(text, /# the model/);
    assert.deepEqual(await loadConfig({ hermesHome: home }), {
      model: "gpt-x",
      memory: { provider: "", honcho: { workspace: "team" } },
    });
    const again = await run(home, ["memory", "off"]);
    assert.equal(again.code, 0);
    assert.match(again.out, /^Memory provider is already off/);
  });
});

Deno.test("memory off creates config.yaml when there is none", async () => {
  await withHome(async (home) => {
    const { code, out } = await run(home, ["memory", "off"]);
    assert.equal(code, 0);
    assert.match(out, /^Set memory\.provider to "" in /);
    assert.deepEqual(await loadConfig({ hermesHome: home }), {
      memory: { provider: "" },
    });
  });
});

Deno.test("memory off refuses to rewrite a broken config.yaml", async () => {
  await withHome(async (home) => {
    const path = join(home, "config.yaml");
    const broken = "memory:\n  provider: [oops\n";
    await Deno.writeTextFile(path, broken);
    const { code, err } = await run(home, ["memory", "off"]);
    assert.equal(code, 1);
    assert.match(err, /Cannot parse .*config\.yaml at line/);
    assert.equal(await Deno.readTextFile(path), broken);
  });
});

// ----------------------------------------------------- list, permissions

Deno.test("memory list --json marks built-in as active when no provider is set", async () => {
  await withHome(async (home) => {
    const { code, out } = await run(home, ["memory", "list", "--json"]);
    assert.equal(code, 0);
    const list = JSON.parse(out);
    assert.equal(list.active, null);
    assert.ok(Array.isArray(list.providers));
    const text = await run(home, ["memory", "list"]);
    assert.match(text.out, /^\(built-in\) +core +available .*\u2190 active$/m);
  });
});

Deno.test("memory permissions prints the host flags for the profile", async () => {
  await withHome(async (home) => {
    const { code, out } = await run(home, [
      "memory",
      "permissions",
      "--json",
    ]);
    assert.equal(code, 0);
    const result = JSON.parse(out);
    assert.equal(result.provider, null);
    assert.deepEqual(result.flags.slice(0, 3), [
      "--quiet",
      "--no-prompt",
      "--cached-only",
    ]);
    const read = result.flags.find((f: string) =>
      f.startsWith("--allow-read=")
    );
    assert.ok(read.split("=")[1].split(",").includes(home));
    assert.ok(result.flags.includes(`--allow-write=${home}`));
    const text = await run(home, ["memory", "permissions"]);
    assert.match(
      text.out,
      /^DENO_NO_PROMPT=1 deno run \\\n {2}--quiet \\\n {2}--no-prompt \\\n {2}--cached-only \\\n/m,
    );
  });
});
