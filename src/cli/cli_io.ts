/** The I/O seam every `hermes` command writes, reads the environment and asks through. @module */

import { readProcessEnv } from "../core/env.ts";
import { lazyImport } from "../_util/lazy_import.ts";

/**
 * Thrown by a prompt when the user cancels it: Ctrl-C, Ctrl-D or end of
 * input. Commands catch it, save nothing and say so.
 */
export class PromptCancelled extends Error {
  /** Creates the error: `message` says what ended the prompt. */
  constructor(message = "Prompt cancelled", options?: ErrorOptions) {
    super(message, options);
    this.name = "PromptCancelled";
  }
}

/** One entry of a {@linkcode CliPrompts.select} picker. */
export interface SelectChoice<T> {
  /** The value returned when the entry is picked. */
  value: T;
  /** The label shown. */
  name: string;
  /** A hint shown while the entry is highlighted. */
  description?: string;
}

/** Options of {@linkcode CliPrompts.select}. */
export interface SelectPromptOptions<T> {
  /** The question. */
  message: string;
  /** The entries, in display order. */
  choices: SelectChoice<T>[];
  /** The value highlighted first (the first entry when absent). */
  default?: T;
}

/** Options of {@linkcode CliPrompts.input}. */
export interface InputPromptOptions {
  /** The question. */
  message: string;
  /** The answer used when the user just presses Enter. */
  default?: string;
}

/** Options of {@linkcode CliPrompts.password}. */
export interface PasswordPromptOptions {
  /** The question. */
  message: string;
}

/** Options of {@linkcode CliPrompts.confirm}. */
export interface ConfirmPromptOptions {
  /** The question. */
  message: string;
  /** The answer used when the user just presses Enter (default `false`). */
  default?: boolean;
}

/**
 * Interactive questions. Every method rejects with
 * {@linkcode PromptCancelled} on Ctrl-C or end of input; callers must only
 * ask when {@linkcode CliIo.stdinIsTerminal} is true.
 */
export interface CliPrompts {
  /** An arrow-key picker; resolves to the picked entry's value. */
  select<T>(options: SelectPromptOptions<T>): Promise<T>;
  /** A line of text; resolves to the answer (the default when empty). */
  input(options: InputPromptOptions): Promise<string>;
  /** A secret, read without echo (`""` when the user just pressed Enter). */
  password(options: PasswordPromptOptions): Promise<string>;
  /** A yes/no question. */
  confirm(options: ConfirmPromptOptions): Promise<boolean>;
  /**
   * A plain line (without its line break) read after printing `prompt` as
   * is, for confirmations with an exact wording such as `Type 'yes' to confirm: `.
   */
  line(prompt: string): Promise<string>;
}

/** Everything a CLI command may touch outside its own arguments. */
export interface CliIo {
  /** Writes to standard output, as is (include the line break). */
  stdout(text: string): void;
  /** Writes to standard error, as is (include the line break). */
  stderr(text: string): void;
  /** Whether standard input is a terminal (prompts are allowed). */
  readonly stdinIsTerminal: boolean;
  /** Whether standard output is a terminal (colour and tables allowed). */
  readonly stdoutIsTerminal: boolean;
  /** Whether standard error is a terminal (progress bars allowed). */
  readonly stderrIsTerminal: boolean;
  /** An environment variable (`undefined` when unset or not readable). */
  env(name: string): string | undefined;
  /** Interactive questions. */
  readonly prompts: CliPrompts;
}

const encoder = new TextEncoder();

const closed = new WeakSet<object>();

/**
 * A reader that went away (`hermes … | head -1`) is not an error: the rest
 * of the output is dropped and the command ends as it would have.
 */
function writeAll(stream: typeof Deno.stdout, text: string): void {
  const bytes = encoder.encode(text);
  let offset = 0;
  try {
    while (offset < bytes.length && !closed.has(stream)) {
      offset += stream.writeSync(bytes.subarray(offset));
    }
  } catch (error) {
    if (!(error instanceof Deno.errors.BrokenPipe)) throw error;
    closed.add(stream);
  }
}

function isTerminal(stream: { isTerminal(): boolean }): boolean {
  try {
    return stream.isTerminal();
  } catch {
    return false;
  }
}

function requireTerminal(): void {
  if (!isTerminal(Deno.stdin)) {
    throw new PromptCancelled(
      "Cannot prompt: standard input is not a terminal",
    );
  }
}

type Inquirer = typeof import("./_inquirer.ts");

/**
 * Runs one inquirer prompt (loaded only when a question is asked: inquirer
 * reads environment grants at import). Inquirer settles on Ctrl-C but waits
 * forever on end of input or Ctrl-D, so both are turned into an abort.
 */
async function ask<T>(
  prompt: (inquirer: Inquirer, signal: AbortSignal) => Promise<T>,
): Promise<T> {
  requireTerminal();
  // Lazy: a literal specifier puts inquirer into the graph read at start.
  const inquirer: Inquirer = await lazyImport<typeof import("./_inquirer.ts")>(
    "./_inquirer.ts",
    import.meta.url,
  );
  const { default: process } = await import("node:process");
  const controller = new AbortController();
  const onData = (chunk: unknown): void => {
    const bytes = typeof chunk === "string"
      ? encoder.encode(chunk)
      : chunk as Uint8Array;
    if (bytes.includes(0x04)) controller.abort(new Error("Ctrl-D"));
  };
  const onEnd = (): void => controller.abort(new Error("end of input"));
  process.stdin.on("data", onData);
  process.stdin.once("end", onEnd);
  try {
    return await prompt(inquirer, controller.signal);
  } catch (error) {
    if (
      error instanceof Error &&
      /^(Exit|Abort|Cancel)PromptError$/.test(error.name)
    ) throw new PromptCancelled(error.message, { cause: error });
    throw error;
  } finally {
    process.stdin.off("data", onData);
    process.stdin.off("end", onEnd);
    process.stdin.pause();
  }
}

const terminalPrompts: CliPrompts = {
  select: <T>(options: SelectPromptOptions<T>) =>
    ask(({ select }, signal) =>
      select<T>({
        message: options.message,
        choices: options.choices.map((c) => ({
          value: c.value,
          name: c.name,
          description: c.description,
        })),
        default: options.default,
        loop: false,
      }, { signal })
    ),
  input: (options) =>
    ask(({ input }, signal) =>
      input({ message: options.message, default: options.default }, {
        signal,
      })
    ),
  password: (options) =>
    ask(({ password }, signal) =>
      password({ message: options.message, toggleMask: false }, { signal })
    ),
  confirm: (options) =>
    ask(({ confirm }, signal) =>
      confirm({ message: options.message, default: options.default ?? false }, {
        signal,
      })
    ),
  async line(prompt: string): Promise<string> {
    requireTerminal();
    const { createInterface } = await import("node:readline");
    const { default: process } = await import("node:process");
    const rl = createInterface({ input: process.stdin, terminal: false });
    const onSigint = (): void => rl.close();
    // Listen before showing the prompt, so an early Ctrl-C still cancels.
    Deno.addSignalListener("SIGINT", onSigint);
    writeAll(Deno.stdout, prompt);
    try {
      return await new Promise<string>((resolve, reject) => {
        let answered = false;
        rl.once("line", (text: string) => {
          answered = true;
          resolve(text);
          rl.close();
        });
        rl.once("close", () => {
          if (!answered) {
            writeAll(Deno.stdout, "\n");
            reject(new PromptCancelled("End of input"));
          }
        });
      });
    } finally {
      Deno.removeSignalListener("SIGINT", onSigint);
      process.stdin.pause();
    }
  },
};

/**
 * `io` with its two output streams replaced (what `--json` modes use);
 * `stdoutLike` names the stream whose terminal flag stdout now reports.
 */
export function redirectIo(
  io: CliIo,
  streams: {
    stdout: (text: string) => void;
    stderr: (text: string) => void;
    stdoutLike?: "stdout" | "stderr";
  },
): CliIo {
  return {
    stdout: streams.stdout,
    stderr: streams.stderr,
    get stdinIsTerminal() {
      return io.stdinIsTerminal;
    },
    get stdoutIsTerminal() {
      return streams.stdoutLike === "stderr"
        ? io.stderrIsTerminal
        : io.stdoutIsTerminal;
    },
    get stderrIsTerminal() {
      return io.stderrIsTerminal;
    },
    env: (name: string) => io.env(name),
    get prompts() {
      return io.prompts;
    },
  };
}

/**
 * The I/O of the running process: `Deno.stdout`/`Deno.stderr` (written
 * synchronously, in order), terminal detection, the process environment
 * through the framework's one environment reader, and terminal prompts.
 *
 * @example Basic usage
 * ```ts no-assert
 * import { denoCliIo } from "@hermes/memory/cli";
 * denoCliIo().stdout("hello\n");
 * ```
 */
export function denoCliIo(): CliIo {
  return {
    stdout: (text: string): void => writeAll(Deno.stdout, text),
    stderr: (text: string): void => writeAll(Deno.stderr, text),
    stdinIsTerminal: isTerminal(Deno.stdin),
    stdoutIsTerminal: isTerminal(Deno.stdout),
    stderrIsTerminal: isTerminal(Deno.stderr),
    env: (name: string): string | undefined => readProcessEnv(name),
    prompts: terminalPrompts,
  };
}

/** Answer that makes a scripted prompt throw {@linkcode PromptCancelled}. */
export const CANCEL_PROMPT: unique symbol = Symbol("CANCEL_PROMPT");

/** One question a {@linkcode memoryCliIo} was asked. */
export interface RecordedPrompt {
  /** Which prompt. */
  kind: "select" | "input" | "password" | "confirm" | "line";
  /** The question. */
  message: string;
  /** The picker's entries (`select` only). */
  choices?: SelectChoice<unknown>[];
  /** The default or preselected value. */
  default?: unknown;
}

/**
 * A scripted answer: a value, {@linkcode CANCEL_PROMPT}, or a function of
 * the question that returns either.
 */
export type ScriptedAnswer =
  | unknown
  | typeof CANCEL_PROMPT
  | ((prompt: RecordedPrompt) => unknown);

/** Options of {@linkcode memoryCliIo}. */
export interface MemoryCliIoOptions {
  /** The environment seen by {@linkcode CliIo.env} (default `{}`). */
  env?: Record<string, string>;
  /** Whether standard input counts as a terminal (default `false`). */
  stdinIsTerminal?: boolean;
  /** Whether standard output counts as a terminal (default `false`). */
  stdoutIsTerminal?: boolean;
  /** Whether standard error counts as a terminal (default `false`). */
  stderrIsTerminal?: boolean;
  /**
   * Answers to the prompts, consumed in order. A `select` answer is the
   * value to pick; `undefined` for `select`/`input` takes the default
   * (default: none).
   */
  answers?: ScriptedAnswer[];
}

/** A {@linkcode CliIo} that records output and answers from a script. */
export interface MemoryCliIo extends CliIo {
  /** Everything written to standard output. */
  readonly out: string;
  /** Everything written to standard error. */
  readonly err: string;
  /** The questions asked, in order. */
  readonly asked: readonly RecordedPrompt[];
  /** Answers not consumed yet. */
  readonly remainingAnswers: number;
}

function scriptedPrompts(
  answers: ScriptedAnswer[],
  asked: RecordedPrompt[],
  isTerminal: boolean,
): CliPrompts {
  // Deferred a tick, as a real prompt is: a refusal is a rejection.
  const next = (prompt: RecordedPrompt): Promise<unknown> =>
    Promise.resolve().then(() => {
      if (!isTerminal) {
        throw new Error(
          `A prompt was shown on a non-terminal stdin: '${prompt.message}'`,
        );
      }
      asked.push(prompt);
      if (answers.length === 0) {
        throw new Error(`No scripted answer for prompt '${prompt.message}'`);
      }
      let answer = answers.shift();
      if (typeof answer === "function") answer = answer(prompt);
      if (answer === CANCEL_PROMPT) {
        throw new PromptCancelled("Scripted cancel");
      }
      return answer;
    });
  const text = (answer: unknown): string =>
    answer === undefined ? "" : String(answer);
  return {
    async select<T>(options: SelectPromptOptions<T>): Promise<T> {
      const answer = await next({
        kind: "select",
        message: options.message,
        choices: options.choices as SelectChoice<unknown>[],
        default: options.default,
      });
      if (answer === undefined) {
        return options.default ?? (options.choices[0] as SelectChoice<T>).value;
      }
      if (!options.choices.some((c) => c.value === answer)) {
        throw new Error(
          `Scripted answer ${
            JSON.stringify(answer)
          } is not a choice of '${options.message}'`,
        );
      }
      return answer as T;
    },
    async input(options: InputPromptOptions): Promise<string> {
      const answer = text(
        await next({
          kind: "input",
          message: options.message,
          default: options.default,
        }),
      );
      return answer === "" ? options.default ?? "" : answer;
    },
    async password(options: PasswordPromptOptions): Promise<string> {
      return text(await next({ kind: "password", message: options.message }));
    },
    async confirm(options: ConfirmPromptOptions): Promise<boolean> {
      const answer = await next({
        kind: "confirm",
        message: options.message,
        default: options.default ?? false,
      });
      return answer === undefined ? options.default ?? false : Boolean(answer);
    },
    async line(prompt: string): Promise<string> {
      return text(await next({ kind: "line", message: prompt }));
    },
  };
}

/**
 * An in-memory {@linkcode CliIo} for tests: output is collected (`out`,
 * `err`), the environment is a plain object and prompts answer from a
 * script (`asked` records the questions).
 *
 * @example Capturing output
 * ```ts
 * import { memoryCliIo } from "@hermes/memory/cli";
 * import assert from "node:assert/strict";
 * const io = memoryCliIo();
 * io.stdout("hi\n");
 * assert.equal(io.out, "hi\n");
 * ```
 */
export function memoryCliIo(options: MemoryCliIoOptions = {}): MemoryCliIo {
  let out = "";
  let err = "";
  const asked: RecordedPrompt[] = [];
  const answers = [...(options.answers ?? [])];
  const env = { ...(options.env ?? {}) };
  const stdinIsTerminal = options.stdinIsTerminal ?? false;
  return {
    stdout(text: string): void {
      out += text;
    },
    stderr(text: string): void {
      err += text;
    },
    stdinIsTerminal,
    stdoutIsTerminal: options.stdoutIsTerminal ?? false,
    stderrIsTerminal: options.stderrIsTerminal ?? false,
    env: (name: string): string | undefined =>
      Object.hasOwn(env, name) ? env[name] : undefined,
    prompts: scriptedPrompts(answers, asked, stdinIsTerminal),
    get out(): string {
      return out;
    },
    get err(): string {
      return err;
    },
    get asked(): readonly RecordedPrompt[] {
      return asked;
    },
    get remainingAnswers(): number {
      return answers.length;
    },
  };
}
