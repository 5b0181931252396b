/**
 * {@linkcode HermesCommand}: the command tree, with its own small parser
 * (no npm package on the start-up path).
 * @module
 */

import { closestName } from "./suggest.ts";
import { type CliIo, memoryCliIo } from "./cli_io.ts";
import { firstLine, formatHelp } from "./help_text.ts";
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

/** Thrown instead of exiting, after `--help` (0) or a printed usage error (2). */
export class CliExit extends Error {
  /** The exit code. */
  readonly exitCode: number;
  /** What ended the parse, such as `help` or `unknownOption`. */
  readonly code: string;

  /** Creates the signal (`message`: what was printed). */
  constructor(exitCode: number, code: string, message: string) {
    super(message);
    this.name = "CliExit";
    this.exitCode = exitCode;
    this.code = code;
  }
}

/** Options of {@linkcode HermesCommand.addCommand}. */
export interface AddCommandOptions {
  /** Leave the subcommand out of the help. @default {false} */
  hidden?: boolean;
  /** Run this subcommand when the parent is given none. @default {false} */
  isDefault?: boolean;
}

/** An option of a {@linkcode HermesCommand}, as declared. */
export interface CommandOption {
  /** The flags as declared, such as `-t, --target <target>`. */
  readonly flags: string;
  /** The help text. */
  readonly description: string;
  /** The short flag, such as `-t`. */
  readonly short?: string;
  /** The long flag, such as `--target`. */
  readonly long?: string;
  /** The key in {@linkcode HermesCommand.opts}, such as `target`. */
  readonly key: string;
  /** The value when the option is absent. */
  readonly defaultValue?: unknown;
  /** The allowed values, when limited. */
  readonly choices?: readonly string[];
}

/** A positional argument of a {@linkcode HermesCommand}. */
export interface CommandArgument {
  /** Its name, such as `text`. */
  readonly name: string;
  /** The help text. */
  readonly description: string;
  /** Whether it must be given (`<name>`, not `[name]`). */
  readonly required: boolean;
  /** Whether it takes the rest of the words (`<name...>`). */
  readonly variadic: boolean;
  /** The allowed values, when limited. */
  readonly choices?: readonly string[];
  /** Values shell completion offers without limiting what is accepted. */
  readonly suggest?: readonly string[];
}

/** What {@linkcode HermesCommand.info} tells of a command. */
export interface CommandInfo {
  /** The description (`""` when unset). */
  readonly description: string;
  /** The one-line summary (`""` when unset). */
  readonly summary: string;
  /** The usage after the command path. */
  readonly usage: string;
}

/**
 * The option values of a parse, by key (`--dry-run` is `dryRun`): the
 * string given for `<value>`, `true` for a flag given, `false` for
 * `--no-x`, what the option's parser returned, else the default.
 */
export type ParsedOptions = Readonly<Record<string, unknown>>;

type Parser = (value: string, previous: unknown) => unknown;

interface ParsedOption extends CommandOption {
  value: "required" | "optional" | "none";
  negate: boolean;
  parse?: Parser;
}

/**
 * A command whose tree shares one {@linkcode CliContext}. Providers get one in
 * `registerCli(command)`; actions write through `command.context.io` and may
 * return an exit code. Usage errors and help throw {@linkcode CliExit}.
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
 * await root.parseAsync(["mine", "ping"]);
 * assert.equal(io.out, "pong\n");
 * ```
 */
export class HermesCommand {
  #context: CliContext;
  #name: string;
  #description = "";
  #summary = "";
  #usage: string | undefined;
  #examples: string[] = [];
  #commands: HermesCommand[] = [];
  #options: ParsedOption[] = [];
  #arguments: CommandArgument[] = [];
  #values: Record<string, unknown> = {};
  // deno-lint-ignore no-explicit-any
  #action: ((...args: any[]) => unknown) | undefined;
  #defaultCommand: string | undefined;
  #hidden = false;
  #allowExcess = false;
  #args: string[] = [];
  #parent: HermesCommand | null = null;

  /** Creates a command (`context`: kept in memory when absent; replaced on attach). */
  constructor(name = "", context?: CliContext) {
    this.#name = name;
    this.#context = context ?? { io: memoryCliIo(), exitCode: 0 };
  }

  /** The state shared by the whole command tree. */
  get context(): CliContext {
    return this.#context;
  }

  /** The command this one is a subcommand of. */
  get parent(): HermesCommand | null {
    return this.#parent;
  }

  /** The subcommands, in the order they were added. */
  get commands(): readonly HermesCommand[] {
    return this.#commands;
  }

  /** The options, in the order they were added. */
  get options(): readonly CommandOption[] {
    return this.#options;
  }

  /** The positional arguments, in order. */
  get registeredArguments(): readonly CommandArgument[] {
    return this.#arguments;
  }

  /** The words the last parse left to this command (arguments, unknowns). */
  get args(): string[] {
    return this.#args;
  }

  /** The subcommand run when the words name none, if any. */
  get defaultCommand(): HermesCommand | undefined {
    return this.#commands.find((c) => c.#name === this.#defaultCommand);
  }

  /** Whether the help leaves this command out. */
  get hidden(): boolean {
    return this.#hidden;
  }

  /** The command's name. */
  name(): string {
    return this.#name;
  }

  /** What the help shows of this command (`usage`: after the command path). */
  get info(): CommandInfo {
    return {
      description: this.#description,
      summary: this.#summary,
      usage: this.#usage ?? [
        "[options]",
        ...(this.#commands.length > 0 ? ["[command]"] : []),
        ...this.#arguments.map(argumentTerm),
      ].join(" "),
    };
  }

  /** Sets the description, printed first in the help; returns this command. */
  description(text: string): this {
    this.#description = text;
    return this;
  }

  /** Sets the one-line summary the parent's help lists; returns this command. */
  summary(text: string): this {
    this.#summary = text;
    return this;
  }

  /** Sets the usage after the command path, such as `[options]`; returns this command. */
  usage(text: string): this {
    this.#usage = text;
    return this;
  }

  /** Adds and returns a subcommand sharing this command's context. */
  command(name: string, options?: AddCommandOptions): HermesCommand {
    const command = new HermesCommand(name, this.#context);
    this.addCommand(command, options);
    return command;
  }

  /** Attaches a prepared subcommand (its subtree adopts this context); returns this. */
  addCommand(command: HermesCommand, options: AddCommandOptions = {}): this {
    command.#adopt(this.#context);
    command.#parent = this;
    command.#hidden = options.hidden === true;
    if (options.isDefault) this.#defaultCommand = command.#name;
    this.#commands.push(command);
    return this;
  }

  #adopt(context: CliContext): void {
    this.#context = context;
    for (const child of this.#commands) child.#adopt(context);
  }

  /**
   * Adds an argument: `<name>` required, `[name]` optional, `name...` the
   * rest; `values`: the only ones accepted (a list), or `{ suggest }` for
   * completion only. Returns this.
   */
  argument(
    spec: string,
    description = "",
    values?: readonly string[] | { suggest: readonly string[] },
  ): this {
    const name = spec.replace(/^[<[]|[>\]]$/g, "");
    this.#arguments.push({
      name: name.replace(/\.\.\.$/, ""),
      description,
      required: spec.startsWith("<"),
      variadic: name.endsWith("..."),
      ...(Array.isArray(values) ? { choices: values } : values),
    });
    return this;
  }

  /**
   * Adds an option (`--x <v>` takes a value, `--x [v]` may, `--no-x` sets
   * `x` false); `parseOrDefault` is a `(value, previous)` parser or the
   * default. Returns this.
   */
  option(
    flags: string,
    description = "",
    parseOrDefault?: unknown,
    defaultValue?: unknown,
  ): this {
    const parse = typeof parseOrDefault === "function"
      ? parseOrDefault as Parser
      : undefined;
    return this.#addOption(
      flags,
      description,
      parse ? defaultValue : parseOrDefault,
      parse,
    );
  }

  /** Adds an option whose value must be one of `choices` (else a usage error); returns this. */
  choiceOption(
    flags: string,
    description: string,
    choices: readonly string[],
    defaultValue?: string,
  ): this {
    return this.#addOption(
      flags,
      description,
      defaultValue,
      undefined,
      choices,
    );
  }

  #addOption(
    flags: string,
    description: string,
    defaultValue: unknown,
    parse?: Parser,
    choices?: readonly string[],
  ): this {
    const words = flags.split(/[ ,|]+/);
    const short = words.find((w) => /^-[^-]$/.test(w));
    const long = words.find((w) => w.startsWith("--"));
    const negate = long?.startsWith("--no-") === true;
    const key = camelCase(
      (long ?? short ?? "").replace(negate ? /^--no-/ : /^--?/, ""),
    );
    const option: ParsedOption = {
      flags,
      description,
      key,
      value: flags.includes("<")
        ? "required"
        : flags.includes("[")
        ? "optional"
        : "none",
      negate,
      ...(short ? { short } : {}),
      ...(long ? { long } : {}),
      ...(defaultValue !== undefined ? { defaultValue } : {}),
      ...(choices ? { choices } : {}),
      ...(parse ? { parse } : {}),
    };
    this.#options.push(option);
    if (defaultValue !== undefined) this.#values[key] = defaultValue;
    else if (negate && !this.#find(`--${long!.slice(5)}`)) {
      // `--no-x` alone means `x` is on unless turned off.
      this.#values[key] = true;
    }
    return this;
  }

  /** Adds a full command line to the EXAMPLES of the help; returns this. */
  example(line: string): this {
    this.#examples.push(line);
    return this;
  }

  /** Accepts more words than the arguments declare (read them in `args`). */
  allowExcessArguments(allow = true): this {
    this.#allowExcess = allow;
    return this;
  }

  /** Sets the action `(…arguments, opts, command)`; a number it returns becomes the exit code. */
  // deno-lint-ignore no-explicit-any
  action(fn: (this: HermesCommand, ...args: any[]) => unknown): this {
    this.#action = fn;
    return this;
  }

  /** The option values (defaults until parsed): `--dry-run` is `dryRun`. */
  opts(): ParsedOptions {
    return this.#values;
  }

  /** Parses the words after the program name and runs the named action. @throws {CliExit} */
  async parseAsync(args: readonly string[]): Promise<this> {
    await this.#parse([], [...args]);
    return this;
  }

  async #parse(operands: string[], words: string[]): Promise<void> {
    const parsed = this.#parseOptions(words);
    operands = [...operands, ...parsed.operands];
    const unknown = parsed.unknown;
    this.#args = [...operands, ...unknown];
    const [first] = operands;
    const sub = this.#commands.find((c) => c.#name === first);
    if (sub !== undefined) return await sub.#parse(operands.slice(1), unknown);
    const fallback = this.defaultCommand;
    if (fallback !== undefined) {
      this.#helpIfAsked(unknown);
      // A word naming no subcommand is a typo, not an argument of the
      // default one ("too many arguments for 'status'").
      if (first !== undefined && fallback.#arguments.length === 0) {
        this.unknownSubcommand(first);
      }
      return await fallback.#parse(operands, unknown);
    }
    const group = this.#commands.length > 0 && !this.#action;
    if (group && operands.length === 0 && unknown.length === 0) {
      this.#help(true);
    }
    this.#helpIfAsked(unknown);
    if (group) {
      if (operands.length === 0) this.#unknownOption(unknown[0]!);
      this.unknownSubcommand(first!);
    }
    if (unknown.length > 0) this.#unknownOption(unknown[0]!);
    this.#arguments.forEach((arg, i) => {
      if (arg.required && operands[i] === undefined) {
        this.error(`error: missing required argument '${arg.name}'`);
      }
    });
    const expected = this.#arguments.length;
    if (
      !this.#allowExcess && !this.#arguments.at(-1)?.variadic &&
      operands.length > expected
    ) {
      this.error(
        `error: too many arguments${
          this.#parent ? ` for '${this.#name}'` : ""
        }. Expected ${expected} argument${
          expected === 1 ? "" : "s"
        } but got ${operands.length}.`,
      );
    }
    const values = this.#arguments.map((arg, i) => {
      if (arg.variadic) return operands.slice(i);
      const value = operands[i];
      if (value !== undefined && arg.choices && !arg.choices.includes(value)) {
        this.error(
          `error: command-argument value '${value}' is invalid for argument '${arg.name}'. Allowed choices are ${
            arg.choices.join(", ")
          }.`,
        );
      }
      return value;
    });
    const result = await this.#action?.call(
      this,
      ...values,
      this.#values,
      this,
    );
    if (typeof result === "number") this.#context.exitCode = result;
  }

  // Own options are taken from anywhere; after the first unknown option the
  // rest is left for a subcommand.
  #parseOptions(words: string[]): { operands: string[]; unknown: string[] } {
    const operands: string[] = [];
    const unknown: string[] = [];
    let dest = operands;
    while (words.length > 0) {
      const word = words.shift()!;
      if (word === "--") {
        if (dest === unknown) dest.push(word);
        dest.push(...words);
        break;
      }
      const flag = word.startsWith("--") ? word.split("=", 1)[0]! : word;
      const option = this.#find(flag);
      if (option !== undefined && (flag === word || option.value !== "none")) {
        const inline = flag === word ? undefined : word.slice(flag.length + 1);
        this.#set(option, inline, words);
        continue;
      }
      const short = /^-[^-]./.test(word)
        ? this.#find(word.slice(0, 2))
        : undefined;
      if (short !== undefined) {
        if (short.value === "none") {
          this.#set(short, undefined, words);
          words.unshift(`-${word.slice(2)}`);
        } else this.#set(short, word.slice(2), words);
        continue;
      }
      const negativeNumber = this.#commands.length === 0 &&
        /^-\d*\.?\d+(e[+-]?\d+)?$/.test(word);
      if (
        dest === operands && word.length > 1 && word[0] === "-" &&
        !negativeNumber
      ) dest = unknown;
      dest.push(word);
    }
    return { operands, unknown };
  }

  #find(flag: string): ParsedOption | undefined {
    return this.#options.find((o) => o.long === flag || o.short === flag);
  }

  #set(option: ParsedOption, inline: string | undefined, rest: string[]): void {
    let value: string | undefined = inline;
    if (value === undefined && option.value === "required") {
      value = rest.shift();
      if (value === undefined) {
        this.error(`error: option '${option.flags}' argument missing`);
      }
    } else if (
      value === undefined && option.value === "optional" &&
      rest[0] !== undefined && !/^-./.test(rest[0])
    ) value = rest.shift();
    let result: unknown = value;
    if (value === undefined) result = !option.negate;
    else if (option.choices && !option.choices.includes(value)) {
      this.error(
        `error: option '${option.flags}' argument '${value}' is invalid. Allowed choices are ${
          option.choices.join(", ")
        }.`,
      );
    } else if (option.parse) {
      result = option.parse(value, this.#values[option.key]);
    }
    this.#values[option.key] = result;
  }

  #helpIfAsked(unknown: readonly string[]): void {
    if (unknown.some((w) => w === "-h" || w === "--help")) this.#help(false);
  }

  #help(error: boolean): never {
    const text = this.helpInformation();
    if (error) this.#context.io.stderr(text);
    else this.#context.io.stdout(text);
    throw new CliExit(error ? USAGE_EXIT_CODE : 0, "help", "(help)");
  }

  #unknownOption(flag: string): never {
    const longs = this.#lineage().flatMap((c) =>
      c.#options.flatMap((o) => o.long ?? [])
    );
    longs.push("--help");
    const close = flag.startsWith("--") ? closestName(flag, longs) : undefined;
    this.#unknown("option", flag, "usage", close);
  }

  /** Prints `error: message` and a hint, then throws {@linkcode CliExit} (exit 2). @throws {CliExit} */
  error(message: string, errorOptions?: { code?: string }): never {
    const line = message.replace(/\s*\n\s*/g, " ").trim();
    const io = this.#context.io;
    io.stderr(`${line.startsWith("error:") ? line : `error: ${line}`}\n`);
    io.stderr(`hint: run '${this.#path()} --help' for usage\n`);
    throw new CliExit(USAGE_EXIT_CODE, errorOptions?.code ?? "usage", line);
  }

  /** Reports `word` as an unknown subcommand, with a close name if any. */
  unknownSubcommand(word: string): never {
    const names = this.#commands.filter((c) => !c.#hidden).map((c) => c.#name);
    const distance = Math.max(1, Math.floor(word.length / 3));
    const close = closestName(word, names, distance);
    return this.#unknown("command", word, "unknownCommand", close);
  }

  // `error: unknown option|command '<word>'`, with the close name if any.
  #unknown(what: string, word: string, code: string, close?: string): never {
    const hint = close ? ` (Did you mean ${close}?)` : "";
    return this.error(`error: unknown ${what} '${word}'${hint}`, { code });
  }

  /** The help text, ending with a line break. */
  helpInformation(): string {
    const optionRow = (o: CommandOption): [string, string] => [
      o.flags,
      optionDescription(o),
    ];
    const globals = this.#lineage().slice(1).flatMap((c) =>
      c.#options.map(optionRow)
    );
    return formatHelp({
      summary: this.#description || this.#summary,
      usage: `${this.#path()} ${this.info.usage}`,
      commands: this.#commands.filter((c) => !c.#hidden).map((
        c,
      ): [string, string] => [
        [c.#name, ...c.#arguments.map(argumentTerm)].join(" "),
        c.#summary || firstLine(c.#description),
      ]),
      options: [
        ...this.#options.map(optionRow),
        [HELP_OPTION.flags, HELP_OPTION.description],
      ],
      globals,
      examples: this.#examples,
    });
  }

  #path(): string {
    return this.#lineage().reverse().map((c) => c.#name).join(" ");
  }

  #lineage(): HermesCommand[] {
    const chain: HermesCommand[] = [];
    for (let c = this.#parent; c; c = c.#parent) chain.push(c);
    return [this, ...chain];
  }
}

function camelCase(flag: string): string {
  return flag.replace(/-([a-z])/g, (_, c: string) => c.toUpperCase());
}

function argumentTerm(arg: CommandArgument): string {
  const name = arg.name + (arg.variadic ? "..." : "");
  return arg.required ? `<${name}>` : `[${name}]`;
}

function optionDescription(option: CommandOption): string {
  const extra: string[] = [];
  if (option.choices) extra.push(`choices: ${option.choices.join(", ")}`);
  const value = option.defaultValue;
  if (
    value !== undefined && value !== false &&
    !(Array.isArray(value) && value.length === 0)
  ) extra.push(`default: ${JSON.stringify(value)}`);
  const description = option.description;
  if (extra.length === 0) return description;
  return `${description}${description ? " " : ""}(${extra.join("; ")})`;
}

/** Creates a {@linkcode HermesCommand} (`name`, shared `context`). */
export function createCommand(
  name?: string,
  context?: CliContext,
): HermesCommand {
  return new HermesCommand(name, context);
}
