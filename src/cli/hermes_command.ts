/**
 * {@linkcode HermesCommand}: the commander `Command` every `hermes` command
 * (and every provider's `hermes <provider> …` tree) is built on.
 *
 * Differences from a plain commander command:
 * - all output goes through the tree's {@linkcode CliIo}; nothing calls
 *   `process.exit` (usage errors and `--help` throw {@linkcode CliExit});
 * - a usage error prints one `error: …` line plus a hint on stderr and
 *   exits with {@linkcode USAGE_EXIT_CODE};
 * - help text has fixed sections: summary, USAGE, COMMANDS, OPTIONS,
 *   GLOBAL OPTIONS, EXAMPLES;
 * - an action may return a number: it becomes the process exit code.
 *
 * @module
 */

import { closestName } from "./suggest.ts";
import { Command, Help, type Option } from "npm:commander@^14.0.3";
import type { CliIo } from "./cli_io.ts";
import { firstLine, formatHelp, HELP_WIDTH } from "./help_text.ts";
import { HELP_OPTION } from "./root_help.ts";

/** The exit code of a usage error (unknown flag, missing argument, …). */
export const USAGE_EXIT_CODE = 2;

/** State shared by every command of one `hermes` invocation. */
export interface CliContext {
  /** Where output goes and prompts come from. */
  io: CliIo;
  /** The exit code the invocation ends with; actions set it. */
  exitCode: number;
}

/**
 * Thrown instead of exiting the process: after `--help` (code 0) or a usage
 * error (code {@linkcode USAGE_EXIT_CODE}); the message is already printed.
 */
export class CliExit extends Error {
  /** The exit code. */
  readonly exitCode: number;
  /** Commander's code, such as `commander.unknownOption`. */
  readonly code: string;

  /**
   * Creates the signal.
   *
   * @param exitCode The exit code.
   * @param code Commander's code.
   * @param message What was printed.
   */
  constructor(exitCode: number, code: string, message: string) {
    super(message);
    this.name = "CliExit";
    this.exitCode = exitCode;
    this.code = code;
  }
}

/**
 * Options of {@linkcode HermesCommand.addCommand}: commander's
 * `CommandOptions`.
 */
export interface AddCommandOptions {
  /**
   * Leave the subcommand out of the help.
   *
   * @default {false}
   */
  hidden?: boolean;
  /**
   * Run this subcommand when the parent is given no subcommand.
   *
   * @default {false}
   */
  isDefault?: boolean;
  /**
   * Same as `hidden`.
   *
   * @deprecated Use `hidden`.
   */
  noHelp?: boolean;
}

/**
 * commander's `Command`, unchanged: the base of {@linkcode HermesCommand}.
 *
 * It only stands between the two so that the documentation of
 * `@hermes/memory/cli` does not take in commander's whole API, which is
 * documented by commander: `deno doc --lint` reports a public type that
 * extends or takes a type of another package as referencing a private type
 * (denoland/deno#27364), and re-exporting commander's types would make it
 * lint commander's own declarations.
 *
 * @ignore
 */
class CommanderCommand extends Command {}

/**
 * A commander command whose tree shares one {@linkcode CliContext}.
 *
 * Providers receive one in `registerCli(command)` and add subcommands with
 * `command.command("status")…`; actions write through
 * `command.context.io` and may return an exit code.
 *
 * @example A provider's CLI
 * ```ts
 * import { createCommand, memoryCliIo } from "@hermes/memory/cli";
 * import assert from "node:assert/strict";
 *
 * const io = memoryCliIo();
 * const root = createCommand("hermes", { io, exitCode: 0 });
 * const mine = root.command("mine").description("Manage mine memory plugin");
 * mine.command("ping").description("Say pong").action(() => {
 *   mine.context.io.stdout("pong\n");
 *   return 0;
 * });
 * await root.parseAsync(["mine", "ping"], { from: "user" });
 * assert.equal(io.out, "pong\n");
 * ```
 */
export class HermesCommand extends CommanderCommand {
  #context: CliContext;
  #examples: string[] = [];

  /**
   * Creates a command.
   *
   * @param name The command's name.
   * @param context The state shared with the tree (a fresh one writing
   * nowhere when absent; it is replaced when the command is attached).
   */
  constructor(name?: string, context?: CliContext) {
    super(name);
    this.#context = context ?? { io: nullIo(), exitCode: 0 };
    this.exitOverride();
    this.helpCommand(false);
    this.helpOption(HELP_OPTION.flags, HELP_OPTION.description);
    // A group with a default subcommand (`hermes honcho` runs `status`)
    // would hand an unknown word to it as an argument ("too many arguments
    // for 'status'"): report it as an unknown command with a suggestion.
    this.hook("preSubcommand", (group, sub) => {
      const word = group.args[0];
      const defaultName = (group as unknown as {
        _defaultCommandName?: string | null;
      })._defaultCommandName;
      if (
        group instanceof HermesCommand && word !== undefined &&
        !word.startsWith("-") && sub.name() === defaultName &&
        word !== sub.name() && !sub.aliases().includes(word) &&
        sub.registeredArguments.length === 0
      ) {
        group.unknownSubcommand(word);
      }
    });
    this.configureOutput({
      writeOut: (text: string): void => this.#context.io.stdout(text),
      writeErr: (text: string): void => this.#context.io.stderr(text),
      outputError: (text: string, write: (s: string) => void): void =>
        write(text),
      getOutHelpWidth: (): number => HELP_WIDTH,
      getErrHelpWidth: (): number => HELP_WIDTH,
      getOutHasColors: (): boolean => false,
      getErrHasColors: (): boolean => false,
    });
  }

  /** The state shared by the whole command tree. */
  get context(): CliContext {
    return this.#context;
  }

  /**
   * Creates a subcommand sharing this command's context (used by
   * `.command(name)`).
   *
   * @param name The subcommand's name.
   * @returns The subcommand.
   */
  override createCommand(name?: string): HermesCommand {
    return new HermesCommand(name, this.#context);
  }

  /**
   * Attaches a prepared subcommand; a {@linkcode HermesCommand} (and its
   * whole subtree) adopts this command's context.
   *
   * @param cmd The subcommand (any commander command).
   * @param opts Whether it is hidden or the default subcommand.
   * @returns This command.
   */
  override addCommand(cmd: CommanderCommand, opts?: AddCommandOptions): this {
    if (cmd instanceof HermesCommand) cmd.#adopt(this.#context);
    return super.addCommand(cmd, opts);
  }

  #adopt(context: CliContext): void {
    this.#context = context;
    for (const child of this.commands) {
      if (child instanceof HermesCommand) child.#adopt(context);
    }
  }

  /**
   * Adds a line to the EXAMPLES section of the help.
   *
   * @param line A full command line, such as `hermes memory status --json`.
   * @returns This command.
   */
  example(line: string): this {
    this.#examples.push(line);
    return this;
  }

  /**
   * Adds an option whose value must be one of `choices`: anything else is a
   * usage error listing them. A provider's commands use it instead of
   * building commander's `Option` themselves.
   *
   * @param flags The flags, such as `--level <level>`.
   * @param description The help text.
   * @param choices The allowed values.
   * @param defaultValue The value when the option is absent.
   * @returns This command.
   */
  choiceOption(
    flags: string,
    description: string,
    choices: readonly string[],
    defaultValue?: string,
  ): this {
    const option = this.createOption(flags, description).choices(choices);
    if (defaultValue !== undefined) option.default(defaultValue);
    return this.addOption(option);
  }

  /**
   * Sets the action. The handler may return (or resolve to) a number, which
   * becomes {@linkcode CliContext.exitCode}.
   *
   * @param fn The handler; it receives the arguments, the options and the
   * command, like a commander action.
   * @returns This command.
   */
  override action(
    // deno-lint-ignore no-explicit-any
    fn: (this: this, ...args: any[]) => unknown,
  ): this {
    const context = (): CliContext => this.#context;
    // deno-lint-ignore no-explicit-any
    return super.action(async function (this: any, ...args: any[]) {
      const result = await fn.apply(this, args);
      if (typeof result === "number") context().exitCode = result;
    });
  }

  /**
   * Reports a usage error: one `error: …` line and a hint on stderr, then
   * throws {@linkcode CliExit} (exit code {@linkcode USAGE_EXIT_CODE}).
   *
   * @param message The error, normally starting with `error: `.
   * @param errorOptions Commander's code and exit code.
   * @throws {CliExit} Always.
   */
  override error(
    message: string,
    errorOptions?: { code?: string; exitCode?: number },
  ): never {
    const line = message.replace(/\s*\n\s*/g, " ").trim();
    const io = this.#context.io;
    io.stderr(`${line.startsWith("error:") ? line : `error: ${line}`}\n`);
    io.stderr(`hint: run '${this.#path()} --help' for usage\n`);
    const code = errorOptions?.code ?? "commander.error";
    throw new CliExit(USAGE_EXIT_CODE, code, line);
  }

  /**
   * Reports `word` as an unknown subcommand of this command (with a
   * suggestion when a subcommand name is close), like commander does for
   * commands without an action of their own.
   *
   * @param word The word that names no subcommand.
   * @throws {CliExit} Always.
   */
  unknownSubcommand(word: string): never {
    const names = this.commands.filter((c) => !hiddenCommand(c)).map((c) =>
      c.name()
    );
    const close = closestName(
      word,
      names,
      Math.max(1, Math.floor(word.length / 3)),
    );
    const hint = close ? ` (Did you mean ${close}?)` : "";
    return this.error(`error: unknown command '${word}'${hint}`, {
      code: "commander.unknownCommand",
    });
  }

  /**
   * Formats the help: summary, USAGE, COMMANDS, OPTIONS, GLOBAL OPTIONS and
   * EXAMPLES.
   *
   * @returns The help text, ending with a line break.
   */
  override helpInformation(): string {
    const help = new Help();
    const optionRow = (option: Option): [string, string] => [
      help.optionTerm(option),
      optionDescription(option),
    ];
    const globals: [string, string][] = [];
    for (let parent = this.parent; parent; parent = parent.parent) {
      for (const option of parent.options) {
        if (!option.hidden) globals.push(optionRow(option));
      }
    }
    return formatHelp({
      summary: this.description() || this.summary(),
      usage: help.commandUsage(this),
      commands: help.visibleCommands(this).map((cmd): [string, string] => [
        commandTerm(cmd),
        cmd.summary() || firstLine(cmd.description()),
      ]),
      options: help.visibleOptions(this).map(optionRow),
      globals,
      examples: this.#examples,
    });
  }

  /** The full command path, such as `hermes memory status`. */
  #path(): string {
    const names: string[] = [this.name()];
    for (let cmd = this.parent; cmd; cmd = cmd.parent) {
      names.unshift(cmd.name());
    }
    return names.join(" ");
  }
}

function hiddenCommand(cmd: Command): boolean {
  return (cmd as unknown as { _hidden?: boolean })._hidden === true;
}

function commandTerm(cmd: Command): string {
  const args = cmd.registeredArguments.map((arg) => {
    const name = arg.name() + (arg.variadic ? "..." : "");
    return arg.required ? `<${name}>` : `[${name}]`;
  });
  return [cmd.name(), ...args].join(" ");
}

/**
 * An option's help text: its description, then its choices, default
 * (left out for `false` switches and empty lists) and environment variable.
 */
function optionDescription(option: Option): string {
  const extra: string[] = [];
  if (option.argChoices) {
    extra.push(`choices: ${option.argChoices.join(", ")}`);
  }
  const value: unknown = option.defaultValue;
  const trivial = value === undefined || value === false ||
    (Array.isArray(value) && value.length === 0);
  if (!trivial) {
    extra.push(
      `default: ${option.defaultValueDescription ?? JSON.stringify(value)}`,
    );
  }
  if (option.envVar !== undefined) extra.push(`env: ${option.envVar}`);
  const description = option.description ?? "";
  if (extra.length === 0) return description;
  return `${description}${description ? " " : ""}(${extra.join("; ")})`;
}

function nullIo(): CliIo {
  return {
    stdout: (): void => {},
    stderr: (): void => {},
    stdinIsTerminal: false,
    stdoutIsTerminal: false,
    stderrIsTerminal: false,
    env: (): undefined => undefined,
    prompts: {
      select: (): Promise<never> => Promise.reject(new Error("No terminal")),
      input: (): Promise<never> => Promise.reject(new Error("No terminal")),
      password: (): Promise<never> => Promise.reject(new Error("No terminal")),
      confirm: (): Promise<never> => Promise.reject(new Error("No terminal")),
      line: (): Promise<never> => Promise.reject(new Error("No terminal")),
    },
  };
}

/**
 * Creates a {@linkcode HermesCommand}.
 *
 * @param name The command's name.
 * @param context The state shared by its tree.
 * @returns The command.
 *
 * @example Basic usage
 * ```ts
 * import { createCommand, memoryCliIo } from "@hermes/memory/cli";
 * import assert from "node:assert/strict";
 * const cmd = createCommand("hermes", { io: memoryCliIo(), exitCode: 0 });
 * assert.equal(cmd.name(), "hermes");
 * ```
 */
export function createCommand(
  name?: string,
  context?: CliContext,
): HermesCommand {
  return new HermesCommand(name, context);
}
