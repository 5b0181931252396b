/**
 * The entry module of the sandbox that runs a user or project provider's
 * `cli.ts` (its `hermes <provider> …` commands, `describeStatus`,
 * `saveConfig`, `postSetup`, `applySetup`): the ordinary sandbox bootstrap
 * (`src/provider/worker_bootstrap.ts`: the same process, flags, grant,
 * hardening and protocol) with a CLI mode installed. Not public API: the
 * host starts it through `src/sandbox/sandboxed_cli.ts`.
 *
 * @module
 */

import { type CliIo, type HermesCommand, PromptCancelled } from "./mod.ts";
import { exitCodeOf, rootCommand } from "./run.ts";
import { shortDescription } from "./format.ts";
import { readProcessEnv } from "../core/env.ts";
// The provider sandbox's bootstrap with the whole framework preloaded
// (`@hermes/memory`), then its named exports.
import "../provider/worker_bootstrap_full.ts";
import {
  formatConsoleArgs,
  inContext,
  installCliMode,
  postToHost,
  setSandboxProviderName,
} from "../provider/worker_bootstrap.ts";
import {
  type AnswerMessage,
  type CliDescription,
  type CliLoadRequest,
  type CliTerminal,
  type HostRequest,
  reviveError,
} from "../sandbox/worker_protocol.ts";

/** The loaded `cli.ts`. */
let loaded:
  | {
    module: Record<string, unknown>;
    name: string;
    description: string;
  }
  | undefined;

const asked = new Map<
  number,
  { resolve(value: unknown): void; reject(error: unknown): void }
>();
let askCount = 0;

function write(stream: "stdout" | "stderr", text: string): boolean {
  if (text !== "") postToHost({ t: "io", stream, text });
  return true;
}

function ask(kind: string, options: unknown): Promise<never> {
  const id = ++askCount;
  const { promise, resolve, reject } = Promise.withResolvers<unknown>();
  asked.set(id, { resolve, reject });
  postToHost({
    t: "ask",
    ask: id,
    kind,
    options: JSON.parse(JSON.stringify(options ?? {})),
  });
  return promise as Promise<never>;
}

/** The `io` a sandboxed command gets: the user's terminal, through the host. */
function bridgedIo(terminal: CliTerminal): CliIo {
  return {
    stdout: (text: string) => void write("stdout", String(text)),
    stderr: (text: string) => void write("stderr", String(text)),
    stdinIsTerminal: terminal.stdin,
    stdoutIsTerminal: terminal.stdout,
    stderrIsTerminal: terminal.stderr,
    env: (name: string): string | undefined => readProcessEnv(name),
    prompts: {
      select: (options) => ask("select", options),
      input: (options) => ask("input", options),
      password: (options) => ask("password", options),
      confirm: (options) => ask("confirm", options),
      line: (prompt) => ask("line", { prompt }),
    },
  };
}

/** `console` prints to the user's terminal, as in the host. */
function consoleToTerminal(): void {
  const streams: [string, "stdout" | "stderr"][] = [
    ["log", "stdout"],
    ["info", "stdout"],
    ["debug", "stdout"],
    ["warn", "stderr"],
    ["error", "stderr"],
  ];
  for (const [method, stream] of streams) {
    (console as unknown as Record<string, unknown>)[method] = (
      ...args: unknown[]
    ): void => void write(stream, `${formatConsoleArgs(args)}\n`);
  }
}

function current(): NonNullable<typeof loaded> {
  if (loaded === undefined) throw new Error("cli.ts is not loaded");
  return loaded;
}

/** A fresh `hermes` tree with the provider's command attached. */
async function buildTree(io: CliIo): Promise<{
  program: HermesCommand;
  command: HermesCommand;
  context: { io: CliIo; exitCode: number };
}> {
  const cli = current();
  const context = { io, exitCode: 0 };
  const program = rootCommand(context);
  const description = cli.description || `Manage ${cli.name} memory plugin`;
  const command = program.command(cli.name)
    .summary(shortDescription(description))
    .description(description);
  const register = cli.module.registerCli;
  if (typeof register === "function") await register(command);
  return { program, command, context };
}

async function cliLoad(request: CliLoadRequest): Promise<CliDescription> {
  if (loaded !== undefined) throw new Error("cli.ts is already loaded");
  setSandboxProviderName(String(request.providerName));
  const module = await import(String(request.specifier)) as Record<
    string,
    unknown
  >;
  loaded = {
    module,
    name: String(request.providerName),
    description: String(request.description ?? ""),
  };
  const exports = Object.keys(module).filter((k) =>
    typeof module[k] === "function"
  );
  let commands: CliDescription["commands"] = [];
  if (typeof module.registerCli === "function") {
    const { command } = await buildTree(bridgedIo(request.terminal));
    commands = command.commands.map((c) => ({
      name: c.name(),
      summary: c.info.summary || shortDescription(c.info.description),
    }));
  }
  return {
    registerCli: typeof module.registerCli === "function",
    exports,
    commands,
  };
}

async function cliRun(
  args: string[],
  terminal: CliTerminal,
): Promise<number> {
  const cli = current();
  const { program, context } = await buildTree(bridgedIo(terminal));
  try {
    await program.parseAsync([cli.name, ...args.map(String)]);
    return context.exitCode;
  } catch (error) {
    const code = exitCodeOf(error);
    if (code !== undefined) return code;
    throw error;
  }
}

/** Arguments the host marks as the bridged `io`. */
function reviveArgs(args: unknown[], io: CliIo): unknown[] {
  return args.map((arg) => {
    if (
      arg !== null && typeof arg === "object" &&
      (arg as Record<string, unknown>).__hermesIo === true
    ) return io;
    return arg;
  });
}

async function cliCall(
  name: string,
  args: unknown[],
  terminal: CliTerminal,
): Promise<unknown> {
  const fn = current().module[name];
  if (typeof fn !== "function") {
    throw new TypeError(`cli.ts exports no ${name}()`);
  }
  const io = bridgedIo(terminal);
  const revived = reviveArgs(args, io);
  if (name === "describeStatus") {
    const context = revived[0] as Record<string, unknown>;
    revived[0] = { ...context, env: (key: string) => io.env(key) };
  }
  const result = await (fn as (...a: unknown[]) => unknown)(...revived);
  return result === undefined ? null : result;
}

installCliMode({
  request(request: HostRequest): unknown {
    switch (request.t) {
      case "cliLoad":
        consoleToTerminal();
        return inContext(request.context, () => cliLoad(request));
      case "cliRun":
        return inContext(
          request.context,
          () => cliRun(request.args, request.terminal),
        );
      case "cliCall":
        return inContext(
          request.context,
          () => cliCall(String(request.name), request.args, request.terminal),
        );
      default:
        throw new TypeError(`a CLI sandbox does not answer '${request.t}'`);
    }
  },
  answer(message: AnswerMessage): void {
    const waiter = asked.get(message.ask);
    if (waiter === undefined) return;
    asked.delete(message.ask);
    if (message.ok) waiter.resolve(message.value);
    else {
      const error = reviveError(
        message.error ?? { name: "Error", message: "no answer" },
      );
      waiter.reject(
        error.name === "PromptCancelled"
          ? new PromptCancelled(error.message)
          : error,
      );
    }
  },
  write,
});
