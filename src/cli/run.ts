// Builds and runs the `hermes` command tree. Apart from `main.ts`: a
// provider's `cli.ts` imports `@hermes/memory/cli` during the entry's
// top-level `await`, so that graph must not include the entry.

import { terminalSafe } from "../core/terminal_text.ts";
import { errorText } from "../_util/error_text.ts";
import { type CliIo, denoCliIo, redirectIo } from "./cli_io.ts";
import {
  type CliContext,
  CliExit,
  createCommand,
  type HermesCommand,
  USAGE_EXIT_CODE,
} from "./hermes_command.ts";
import { checkProfile, resolveCliHome } from "./global_args.ts";
import {
  attachMemoryCommand,
  defineMemoryGroup,
} from "./commands/memory_group.ts";
import {
  argsAfterCommand,
  commandIntent,
  commandWords,
  isVersionRequest,
  scanGlobalArgs,
} from "./arg_scan.ts";
import {
  describePermissionProblem,
  permissionDenial,
} from "./permission_problem.ts";
import { getConfigValue, loadConfig } from "../config/config.ts";
import {
  PROFILE_OPTION,
  ROOT_DESCRIPTION,
  ROOT_EXAMPLES,
  ROOT_USAGE,
  VERSION_OPTION,
} from "./root_help.ts";
import {
  getHermesHome,
  HermesHomeUnknownError,
} from "../profile/hermes_home.ts";
import { resolve } from "../_util/path.ts";
import { type Logger, setLogger } from "../core/log.ts";
import { lazyImport } from "../_util/lazy_import.ts";

/** The `hermes` root command with its options, without subcommands. */
export function rootCommand(context: CliContext): HermesCommand {
  const program = createCommand("hermes", context)
    .description(ROOT_DESCRIPTION)
    .usage(ROOT_USAGE)
    .option(PROFILE_OPTION.flags, PROFILE_OPTION.description)
    .option(VERSION_OPTION.flags, VERSION_OPTION.description);
  for (const line of ROOT_EXAMPLES) program.example(line);
  return program;
}

function cliLogger(io: CliIo): Logger {
  return {
    log(level, message): void {
      if (level === "warn" || level === "error") {
        io.stderr(`hermes: ${level}: ${terminalSafe(message)}\n`);
      }
    },
  };
}

/**
 * Runs one `hermes` command line (the arguments after the program name) in
 * the profile home of `--profile NAME` or `HERMES_HOME`; resolves to `0`
 * (also after `--help`), `1` (the command failed) or `2` (usage error).
 *
 * @example Showing the status of a scratch home
 * ```ts ignore
 * import { main, memoryCliIo } from "@hermes/memory/cli";
 * const io = memoryCliIo({ env: { HERMES_HOME: "/tmp/hermes-demo" } });
 * const code = await main(["memory", "status"], io);
 * ```
 */
export async function main(
  args: string[],
  io: CliIo = denoCliIo(),
): Promise<number> {
  const context: CliContext = { io, exitCode: 0 };
  const scan = scanGlobalArgs(args);
  let home: string;
  try {
    home = resolveCliHome(scan.profile, (name) => io.env(name));
  } catch (error) {
    io.stderr(`error: ${errorText(error)}\n`);
    // Not a usage error: the process may not read where the home is.
    if (error instanceof HermesHomeUnknownError) return 1;
    io.stderr("hint: run 'hermes --help' for usage\n");
    return USAGE_EXIT_CODE;
  }
  const help = args.includes("-h") || args.includes("--help");
  if (scan.profile !== undefined && !help) {
    const setup = commandIntent(args).setup !== undefined;
    const check = await checkProfile(scan.profile, home, setup);
    if (check.error !== undefined) {
      io.stderr(check.error);
      return USAGE_EXIT_CODE;
    }
    if (check.note !== undefined) io.stderr(`${check.note}\n`);
  }
  // `--json` at any level: the command that takes it gets it; an error
  // becomes {"error": …} (jsonErrors).
  const json = args.includes("--json");
  const errors = json ? jsonErrors(io) : undefined;
  if (errors !== undefined) context.io = errors.io;
  const words = json ? args.filter((a) => a !== "--json") : args;
  const previousLogger = setLogger(cliLogger(context.io));
  try {
    const inHome = () => run(words, context, scan, json);
    // Already the home (the `hermes` process): no scope, no node:async_hooks.
    const code = await (currentHome() === resolve(home)
      ? inHome()
      : (await import("../profile/context_scope.ts")).withHermesHome(
        home,
        inHome,
      ));
    errors?.finish(code);
    return code;
  } finally {
    setLogger(previousLogger);
  }
}

// Under `--json`, a failure that printed no JSON report of its own turns its
// held-back `error:`/`hint:` lines into one `{"error": …}` on stdout.
function jsonErrors(io: CliIo): { io: CliIo; finish(code: number): void } {
  let held = "";
  let printed = false;
  const wrapped = redirectIo(io, {
    stdout(text: string): void {
      if (text !== "") printed = true;
      io.stdout(text);
    },
    stderr(text: string): void {
      held += text;
    },
  });
  return {
    io: wrapped,
    finish(code: number): void {
      if (code === 0 || printed) {
        if (held !== "") io.stderr(held);
        return;
      }
      const messages: string[] = [];
      const hints: string[] = [];
      const rest: string[] = [];
      for (const line of held.split("\n")) {
        if (line.startsWith("error: ")) messages.push(line.slice(7));
        else if (line.startsWith("hint: ")) hints.push(line.slice(6));
        else if (line.trim() !== "") rest.push(line);
      }
      if (messages.length === 0 && rest.length > 0) {
        messages.push(...rest.splice(0));
      }
      if (rest.length > 0) io.stderr(`${rest.join("\n")}\n`);
      const error: Record<string, unknown> = {
        message: messages.join("\n") || "the command failed",
        exitCode: code,
      };
      if (hints.length > 0) error.hint = hints.join("\n");
      io.stdout(`${JSON.stringify({ error }, null, 2)}\n`);
    },
  };
}

/** Gives `--json` to the named command when it takes it (elsewhere it only shapes errors). */
function jsonAtLeaf(program: HermesCommand, args: string[]): string[] {
  let command = program;
  const words = commandWords(args);
  let depth = 0;
  for (const word of words) {
    const child = command.commands.find((c) => c.name() === word);
    if (child === undefined) break;
    command = child;
    depth++;
  }
  const takes = (c: HermesCommand): boolean =>
    c.options.some((o) => o.long === "--json");
  if (!takes(command)) {
    // A group that runs a subcommand when given none (`hermes honcho`,
    // `hermes memory`: status) passes it on.
    const named = command.defaultCommand;
    const fallback = named ??
      command.commands.find((c) => c.name() === "status");
    if (
      fallback === undefined || !takes(fallback) || depth < words.length
    ) return args;
    if (fallback !== named) args = [...args, fallback.name()];
  }
  const end = args.indexOf("--");
  return end < 0
    ? [...args, "--json"]
    : [...args.slice(0, end), "--json", ...args.slice(end)];
}

const providerCommands = () =>
  lazyImport<typeof import("./commands/provider_commands.ts")>(
    "./commands/provider_commands.ts",
    import.meta.url,
  );

async function run(
  args: string[],
  context: CliContext,
  scan: ReturnType<typeof scanGlobalArgs>,
  json: boolean,
): Promise<number> {
  const { io } = context;
  try {
    if (isVersionRequest(args)) {
      return await printVersion(io, json ? [...args, "--json"] : args);
    }
    const program = rootCommand(context);
    const completion = scan.command === "completion";
    if (scan.command === "memory" || completion) {
      const help = args.includes("-h") || args.includes("--help");
      await attachMemoryCommand(
        program,
        completion ? undefined : commandWords(args)[1],
        help || completion,
      );
    } else {
      defineMemoryGroup(program);
    }
    if (scan.command !== "memory") {
      // Only the root's help and its word list need it.
      const { registerCompletion } = await lazyImport<
        typeof import("./completion.ts")
      >("./completion.ts", import.meta.url);
      registerCompletion(program);
    }
    if (completion) {
      // The script lists the active provider's whole tree too.
      const provider = await configuredProvider();
      if (provider !== null) {
        const { attachProviderCommand } = await providerCommands();
        await attachProviderCommand(program, provider, "status");
      }
    }
    const known = program.commands.some((c) => c.name() === scan.command);
    if (!known) {
      // Loaded only for a command that is not built in (a provider's).
      const { attachProviderCommand } = await providerCommands();
      const refused = await attachProviderCommand(
        program,
        scan.command,
        commandWords(args)[1],
        argsAfterCommand(args),
      );
      if (typeof refused === "string") {
        io.stderr(`error: ${refused}\n`);
        return USAGE_EXIT_CODE;
      }
      // A user or project provider: its cli.ts parses and runs the rest
      // in its own sandbox process.
      if (refused !== undefined) return await refused.run(io);
    }
    await program.parseAsync(json ? jsonAtLeaf(program, args) : args);
    return context.exitCode;
  } catch (error) {
    const code = exitCodeOf(error);
    if (code !== undefined) return code;
    const denial = permissionDenial(error);
    if (denial !== undefined) {
      io.stderr(
        describePermissionProblem(denial, {
          hermesHome: getHermesHome(),
          provider: await configuredProvider(),
        }),
      );
    } else {
      io.stderr(`error: ${terminalSafe(errorText(error))}\n`);
    }
    return 1;
  }
}

/** The exit code of a parse ended by help or a usage error, else `undefined`. */
export function exitCodeOf(error: unknown): number | undefined {
  return error instanceof CliExit ? error.exitCode : undefined;
}

/** `hermes [group] --version [--json]`: loads the version module only then. */
async function printVersion(io: CliIo, args: string[]): Promise<number> {
  const { versionReport, formatVersion } = await lazyImport<
    typeof import("./version.ts")
  >("./version.ts", import.meta.url);
  const report = await versionReport();
  io.stdout(
    args.includes("--json")
      ? `${JSON.stringify(report, null, 2)}\n`
      : formatVersion(report),
  );
  return 0;
}

function currentHome(): string | undefined {
  try {
    return getHermesHome();
  } catch {
    return undefined;
  }
}

/** `memory.provider`, when `config.yaml` can be read (for hints only). */
async function configuredProvider(): Promise<string | null> {
  try {
    const raw = getConfigValue(await loadConfig(), "memory.provider");
    return typeof raw === "string" && raw.trim() !== "" ? raw.trim() : null;
  } catch {
    return null;
  }
}
