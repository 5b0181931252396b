// The `hermes` command tree in-process: help on every level (stdout, exit
// 0), usage errors (one line + hint on stderr, exit 2), global options, and
// the HermesCommand contract providers build on.
import assert from "node:assert/strict";
import {
  createCommand,
  HermesCommand,
  main,
  memoryCliIo,
  type MemoryCliIoOptions,
  USAGE_EXIT_CODE,
} from "../../src/cli/mod.ts";
import { scanGlobalArgs } from "../../src/cli/arg_scan.ts";
import { withHome } from "../helpers/test_home.ts";

async function run(
  home: string,
  args: string[],
  options: MemoryCliIoOptions = {},
): Promise<{ code: number; out: string; err: string }> {
  const io = memoryCliIo({
    ...options,
    env: { HERMES_HOME: home, ...(options.env ?? {}) },
  });
  const code = await main(args, io);
  return { code, out: io.out, err: io.err };
}

const ROOT_HELP =
  `Hermes memory: inspect and configure an agent's persistent memory

USAGE:
  hermes [--profile NAME] <command> [options]

COMMANDS:
  memory              Inspect and configure persistent memory
  completion <shell>  Print a shell completion script

OPTIONS:
  --profile <name>  Use the named profile's home, <root>/profiles/<name>
                    (default: $HERMES_HOME, else ~/.hermes; env: HERMES_HOME)
  -V, --version     Show the versions: module, Deno, active provider
  -h, --help        Show this help

EXAMPLES:
  hermes memory status
  hermes memory setup
  hermes --profile coder memory status --json
`;

const MEMORY_HELP =
  `Inspect and configure persistent memory: the built-in MEMORY.md / USER.md
store plus at most one external provider (memory.provider).
Without a subcommand, runs 'status'.

USAGE:
  hermes memory <command> [options]

COMMANDS:
  status                  Show built-in memory, the active provider and plugins
  setup [provider]        Pick the memory provider and enter its settings
  doctor                  Check the profile's memory setup; one line per problem
  list                    List the provider plugins that can be activated
  permissions [provider]  Print the deno run flags the configuration needs
  off                     Turn the external provider off (built-in memory only)
  reset                   Erase the built-in MEMORY.md / USER.md files
  recall <text>           Show what the agent would be given for a message
  entries                 List, add, replace or remove built-in memory entries
  mcp                     Serve this profile's memory to MCP clients (stdio)
  dashboard               Open a local web page to configure and inspect memory
  import <transcript>     Replay a chat transcript into the active provider

OPTIONS:
  -h, --help  Show this help

GLOBAL OPTIONS:
  --profile <name>  Use the named profile's home, <root>/profiles/<name>
                    (default: $HERMES_HOME, else ~/.hermes; env: HERMES_HOME)
  -V, --version     Show the versions: module, Deno, active provider

EXAMPLES:
  hermes memory status
  hermes memory setup
  hermes memory doctor
  hermes memory setup honcho --set workspace=team --yes
  hermes memory reset --target user --yes
`;

const RESET_HELP =
  `Erase the built-in memory files of the active profile (MEMORY.md: agent notes,
USER.md: user profile). Files are deleted; running sessions keep the snapshot
they loaded. Asks for 'yes' unless --yes is given; without a terminal,
--yes is required.

USAGE:
  hermes memory reset [options]

OPTIONS:
  -t, --target <target>  Which files to erase (choices: all, memory, user;
                         default: "all")
  -y, --yes              Erase without asking for confirmation
  --json                 Print what was erased and kept as JSON (needs --yes)
  -h, --help             Show this help

GLOBAL OPTIONS:
  --profile <name>  Use the named profile's home, <root>/profiles/<name>
                    (default: $HERMES_HOME, else ~/.hermes; env: HERMES_HOME)
  -V, --version     Show the versions: module, Deno, active provider

EXAMPLES:
  hermes memory reset
  hermes memory reset --target user --yes
  hermes memory reset --yes --json
`;

Deno.test("main() --help prints the root help on stdout and exits 0", async () => {
  await withHome(async (home) => {
    for (const flag of ["--help", "-h"]) {
      const { code, out, err } = await run(home, [flag]);
      assert.equal(code, 0);
      assert.equal(err, "");
      assert.equal(out, ROOT_HELP);
    }
  });
});

Deno.test("main() with no arguments prints help on stderr and exits 2", async () => {
  await withHome(async (home) => {
    const { code, out, err } = await run(home, []);
    assert.equal(code, USAGE_EXIT_CODE);
    assert.equal(out, "");
    assert.equal(err, ROOT_HELP);
  });
});

Deno.test("main() memory --help and memory reset --help match the snapshots", async () => {
  await withHome(async (home) => {
    const memory = await run(home, ["memory", "--help"]);
    assert.equal(memory.code, 0);
    assert.equal(memory.out, MEMORY_HELP);
    const reset = await run(home, ["memory", "reset", "--help"]);
    assert.equal(reset.code, 0);
    assert.equal(reset.err, "");
    assert.equal(reset.out, RESET_HELP);
  });
});

Deno.test("main() every memory subcommand has sectioned --help on stdout", async () => {
  await withHome(async (home) => {
    for (
      const sub of [
        "status",
        "setup",
        "list",
        "permissions",
        "off",
        "reset",
        "recall",
        "import",
        "entries",
        "mcp",
        "dashboard",
      ]
    ) {
      await Deno.writeTextFile(`${home}/marker`, "x");
      const { code, out, err } = await run(home, ["memory", sub, "--help"]);
      assert.equal(code, 0, sub);
      assert.equal(err, "", sub);
      assert.match(out, new RegExp(`^USAGE:\\n  hermes memory ${sub}`, "m"));
      assert.match(out, /^OPTIONS:\n {2}.*\n/m, sub);
      assert.match(out, /^ {2}-h, --help +Show this help$/m, sub);
      assert.match(out, /^GLOBAL OPTIONS:\n {2}--profile <name>/m, sub);
      assert.match(out, /^EXAMPLES:\n {2}hermes memory /m, sub);
      // Help never ran the command: the home is untouched.
      assert.deepEqual(
        [...Deno.readDirSync(home)].map((e) => e.name),
        ["marker"],
      );
    }
  });
});

Deno.test("main() rejects unknown flags per command with one line and a hint", async () => {
  await withHome(async (home) => {
    const cases: [string[], string, string][] = [
      [
        ["memory", "status", "--bogus"],
        "error: unknown option '--bogus'",
        "hermes memory status",
      ],
      [
        ["memory", "off", "--yes"],
        "error: unknown option '--yes'",
        "hermes memory off",
      ],
      [
        ["memory", "reset", "--target", "both"],
        "error: option '-t, --target <target>' argument 'both' is invalid. Allowed choices are all, memory, user.",
        "hermes memory reset",
      ],
      [
        ["memory", "recall"],
        "error: missing required argument 'text'",
        "hermes memory recall",
      ],
      [
        ["memory", "status", "extra"],
        "error: too many arguments for 'status'. Expected 0 arguments but got 1.",
        "hermes memory status",
      ],
      [
        ["memory", "import", "a.jsonl", "b.jsonl"],
        "error: too many arguments for 'import'. Expected 1 argument but got 2.",
        "hermes memory import",
      ],
      [["frobnicate"], "error: unknown command 'frobnicate'", "hermes"],
    ];
    for (const [args, line, path] of cases) {
      const { code, out, err } = await run(home, args);
      assert.equal(code, USAGE_EXIT_CODE, args.join(" "));
      assert.equal(out, "");
      assert.equal(err, `${line}\nhint: run '${path} --help' for usage\n`);
    }
  });
});

Deno.test("main() suggests a close command name on one line", async () => {
  await withHome(async (home) => {
    const { code, err } = await run(home, ["memory", "stauts"]);
    assert.equal(code, USAGE_EXIT_CODE);
    const lines = err.trimEnd().split("\n");
    assert.equal(lines.length, 2);
    assert.match(
      lines[0] ?? "",
      /unknown command 'stauts' \(Did you mean status\?\)/,
    );
  });
});

Deno.test("main() 'memory' alone runs status", async () => {
  await withHome(async (home) => {
    const { code, out } = await run(home, ["memory"]);
    assert.equal(code, 0);
    assert.match(out, /^Memory status\n/);
  });
});

Deno.test("main() rejects a malformed --profile name before doing anything", async () => {
  await withHome(async (home) => {
    const { code, out, err } = await run(home, [
      "--profile",
      "../etc",
      "memory",
      "status",
    ]);
    assert.equal(code, USAGE_EXIT_CODE);
    assert.equal(out, "");
    assert.match(err, /^error: Cannot use profile name '\.\.\/etc'/);
    assert.match(err, /hint: run 'hermes --help' for usage\n$/);
  });
});

Deno.test("scanGlobalArgs() finds the profile and the first command word", () => {
  assert.deepEqual(scanGlobalArgs(["--profile=a", "memory", "-h"]), {
    profile: "a",
    command: "memory",
    help: false,
  });
  assert.deepEqual(scanGlobalArgs(["-h"]), { help: true });
  assert.deepEqual(scanGlobalArgs(["--", "--profile", "x"]), { help: false });
  assert.equal(
    scanGlobalArgs(["honcho", "status", "--profile", "b"]).profile,
    "b",
  );
});

Deno.test("HermesCommand shares one context with commands added later", async () => {
  const io = memoryCliIo();
  const root = createCommand("hermes", { io, exitCode: 0 });
  const detached = new HermesCommand("tool");
  detached.command("ping").action(() => {
    detached.context.io.stdout("pong\n");
    return 3;
  });
  root.addCommand(detached);
  await root.parseAsync(["tool", "ping"]);
  assert.equal(io.out, "pong\n");
  assert.equal(root.context.exitCode, 3);
  assert.equal(detached.context, root.context);
});

Deno.test("HermesCommand.error() prints one line and a hint and throws CliExit", () => {
  const io = memoryCliIo();
  const root = createCommand("hermes", { io, exitCode: 0 });
  const sub = root.command("x");
  assert.throws(() => sub.error("error: bad value\n(try again)"), {
    name: "CliExit",
  });
  assert.equal(
    io.err,
    "error: bad value (try again)\nhint: run 'hermes x --help' for usage\n",
  );
});
