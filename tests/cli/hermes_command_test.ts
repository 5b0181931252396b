// HermesCommand's parser as a unit: a table of argument shapes and what
// each parses to (the action run, its arguments and options) or the usage
// error it prints (exit 2), on one small command tree.
import assert from "node:assert/strict";
import {
  CliExit,
  createCommand,
  type HermesCommand,
  type ParsedOptions,
} from "../../src/cli/hermes_command.ts";
import { memoryCliIo } from "../../src/cli/cli_io.ts";

/** What one parse did: the action that ran and with what, or the exit and its first line. */
type Outcome =
  | { ran: string; args: unknown[]; opts: ParsedOptions; root?: ParsedOptions }
  | { exit: number; line: string };

async function parse(words: string[]): Promise<Outcome> {
  const io = memoryCliIo();
  const root = createCommand("hermes", { io, exitCode: 0 })
    .option("--profile <name>", "Profile");
  let ran: Outcome | undefined;
  const record =
    (name: string, command: HermesCommand) => (...values: unknown[]) => {
      const n = command.registeredArguments.length;
      ran = { ran: name, args: values.slice(0, n), opts: { ...values[n]! } };
      const profile = root.opts().profile;
      if (profile !== undefined) ran.root = { profile };
      return 0;
    };
  const tool = root.command("tool")
    .argument("<name>", "A name")
    .argument("[rest...]", "More words")
    .choiceOption("-t, --target <target>", "Target", [
      "all",
      "memory",
      "user",
    ], "all")
    .option("-y, --yes", "Ask nothing", false)
    .option("-v, --verbose", "Say more")
    .option(
      "--set <key=value>",
      "Repeatable",
      (value: string, previous: string[]) => [...previous, value],
      [],
    )
    .option("--limit [n]", "An optional value")
    .option("--no-color", "No colour")
    .option("--dry-run", "Change nothing");
  tool.action(record("tool", tool));
  const group = root.command("group").summary("A group");
  const status = group.command("status", { isDefault: true })
    .option("--json", "JSON");
  status.action(record("status", status));
  const list = group.command("list").argument("[mode]", "Mode", ["a", "b"]);
  list.action(record("list", list));
  const pick = group.command("pick")
    .argument("[what]", "Anything", { suggest: ["x", "y"] });
  pick.action(record("pick", pick));
  try {
    await root.parseAsync(words);
  } catch (error) {
    if (!(error instanceof CliExit)) throw error;
    // Help starts with its USAGE heading: the usage line is the second.
    const text = (error.exitCode === 0 ? io.out : io.err).replace(
      /^USAGE:\n\s*/,
      "",
    );
    return { exit: error.exitCode, line: text.split("\n")[0]! };
  }
  return ran ?? { exit: -1, line: "no action ran" };
}

const DEFAULTS = { target: "all", yes: false, set: [], color: true };

const CASES: [string[], Outcome][] = [
  // Arguments.
  [["tool", "x"], { ran: "tool", args: ["x", []], opts: DEFAULTS }],
  [["tool", "x", "y", "z"], {
    ran: "tool",
    args: ["x", ["y", "z"]],
    opts: DEFAULTS,
  }],
  // Long, inline and short values; a short value glued on.
  ...[
    ["--target", "user"],
    ["--target=user"],
    ["-t", "user"],
    ["-tuser"],
  ].map((flags): [string[], Outcome] => [["tool", ...flags, "x"], {
    ran: "tool",
    args: ["x", []],
    opts: { ...DEFAULTS, target: "user" },
  }]),
  // Grouped short flags.
  [["tool", "-yv", "x"], {
    ran: "tool",
    args: ["x", []],
    opts: { ...DEFAULTS, yes: true, verbose: true },
  }],
  // Options after the arguments; a repeatable option collects.
  [["tool", "x", "--set", "a=1", "--set", "b=2"], {
    ran: "tool",
    args: ["x", []],
    opts: { ...DEFAULTS, set: ["a=1", "b=2"] },
  }],
  // An optional value: absent, given, or not taken from a flag.
  [["tool", "x", "--limit"], {
    ran: "tool",
    args: ["x", []],
    opts: { ...DEFAULTS, limit: true },
  }],
  [["tool", "x", "--limit", "5"], {
    ran: "tool",
    args: ["x", []],
    opts: { ...DEFAULTS, limit: "5" },
  }],
  [["tool", "--limit", "-y", "x"], {
    ran: "tool",
    args: ["x", []],
    opts: { ...DEFAULTS, limit: true, yes: true },
  }],
  // Negation and kebab-case keys.
  [["tool", "x", "--no-color", "--dry-run"], {
    ran: "tool",
    args: ["x", []],
    opts: { ...DEFAULTS, color: false, dryRun: true },
  }],
  // After `--` everything is an argument; a negative number is one too.
  [["tool", "--", "-x", "--yes"], {
    ran: "tool",
    args: ["-x", ["--yes"]],
    opts: DEFAULTS,
  }],
  [["tool", "x", "-5"], { ran: "tool", args: ["x", ["-5"]], opts: DEFAULTS }],
  // A parent's option before or after the subcommand.
  [["--profile", "p", "tool", "x"], {
    ran: "tool",
    args: ["x", []],
    opts: DEFAULTS,
    root: { profile: "p" },
  }],
  [["tool", "x", "--profile=p"], {
    ran: "tool",
    args: ["x", []],
    opts: DEFAULTS,
    root: { profile: "p" },
  }],
  // A default subcommand; argument choices; suggestions accept anything.
  [["group"], { ran: "status", args: [], opts: {} }],
  [["group", "--json"], { ran: "status", args: [], opts: { json: true } }],
  [["group", "list", "b"], { ran: "list", args: ["b"], opts: {} }],
  [["group", "pick", "zzz"], { ran: "pick", args: ["zzz"], opts: {} }],
  // Usage errors: exit 2 and one line naming the problem.
  [["tool"], { exit: 2, line: "error: missing required argument 'name'" }],
  [["tool", "x", "--target", "bogus"], {
    exit: 2,
    line:
      "error: option '-t, --target <target>' argument 'bogus' is invalid. Allowed choices are all, memory, user.",
  }],
  [["tool", "x", "--target"], {
    exit: 2,
    line: "error: option '-t, --target <target>' argument missing",
  }],
  [["tool", "x", "--bogus"], {
    exit: 2,
    line: "error: unknown option '--bogus'",
  }],
  [["tool", "x", "--yess"], {
    exit: 2,
    line: "error: unknown option '--yess' (Did you mean --yes?)",
  }],
  [["tol", "x"], {
    exit: 2,
    line: "error: unknown command 'tol' (Did you mean tool?)",
  }],
  [["group", "lst"], {
    exit: 2,
    line: "error: unknown command 'lst' (Did you mean list?)",
  }],
  [["group", "list", "c"], {
    exit: 2,
    line:
      "error: command-argument value 'c' is invalid for argument 'mode'. Allowed choices are a, b.",
  }],
  [["group", "list", "a", "b"], {
    exit: 2,
    line:
      "error: too many arguments for 'list'. Expected 1 argument but got 2.",
  }],
  [["--yes"], { exit: 2, line: "error: unknown option '--yes'" }],
  // Help: asked for (stdout, 0), or a group given nothing (stderr, 2).
  [["tool", "x", "--help"], {
    exit: 0,
    line: "hermes tool [options] <name> [rest...]",
  }],
  [[], { exit: 2, line: "hermes [options] [command]" }],
];

for (const [words, expected] of CASES) {
  Deno.test(`HermesCommand parses ${JSON.stringify(words)}`, async () => {
    assert.deepEqual(await parse(words), expected);
  });
}

Deno.test("HermesCommand: setters chain, info reads, a parse returns the command", async () => {
  const root = createCommand("hermes");
  const command = root.command("x");
  assert.equal(
    command.description("Long text").summary("Short").usage("[thing]"),
    command,
  );
  assert.deepEqual(command.info, {
    description: "Long text",
    summary: "Short",
    usage: "[thing]",
  });
  assert.deepEqual(
    root.command("y").argument("<a>").info.usage,
    "[options] <a>",
  );
  command.action(() => 4);
  assert.equal(await root.parseAsync(["x"]), root);
  assert.equal(root.context.exitCode, 4);
});
