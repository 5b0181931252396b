// A generic pseudo-terminal driver for tests: spawn a command in a pty, send
// keys, wait for output with timeouts, collect the exit code.
//
// The pty itself comes from `tests/helpers/pty_driver.py` (python3's `pty`
// module); this file only talks to that relay over pipes.
//
//   await using term = spawnPty(["deno", "run", …], { env, cwd });
//   await term.expect("Select a provider");
//   term.send(KEYS.down + KEYS.enter);
//   const code = await term.exit();

import { fileURLToPath } from "node:url";

/** Key sequences a test can send. */
export const KEYS = {
  up: "\x1b[A",
  down: "\x1b[B",
  right: "\x1b[C",
  left: "\x1b[D",
  enter: "\r",
  ctrlC: "\x03",
  ctrlD: "\x04",
  backspace: "\x7f",
  tab: "\t",
} as const;

/** Options of {@linkcode spawnPty}. */
export interface PtyOptions {
  /** Environment of the command (replaces the test's environment). */
  env?: Record<string, string>;
  /** Working directory of the command. */
  cwd?: string;
  /** Terminal rows. Default 40. */
  rows?: number;
  /** Terminal columns. Default 120. */
  cols?: number;
}

const DRIVER = fileURLToPath(new URL("./pty_driver.py", import.meta.url));
const ANSI = new RegExp(
  [
    "\\x1b\\[[0-?]*[ -/]*[@-~]", // CSI
    "\\x1b\\][^\\x07]*(?:\\x07|\\x1b\\\\)", // OSC
    "\\x1b[()][0-9A-Za-z]", // charset
    "\\x1b[=>78]",
  ].join("|"),
  "g",
);

/**
 * Removes ANSI escape sequences and carriage returns from terminal output.
 *
 * @param text Raw terminal output.
 * @returns Plain text.
 */
export function stripAnsi(text: string): string {
  return text.replace(ANSI, "").replace(/\r/g, "");
}

/** A command running in a pseudo-terminal. */
export class PtySession implements AsyncDisposable {
  #child: Deno.ChildProcess;
  #writer: WritableStreamDefaultWriter<Uint8Array>;
  #raw = "";
  #waiters = new Set<() => void>();
  #reading: Promise<void>;
  #status: Promise<Deno.CommandStatus>;
  #cursor = 0;

  constructor(command: string[], options: PtyOptions = {}) {
    const rows = String(options.rows ?? 40);
    const cols = String(options.cols ?? 120);
    this.#child = new Deno.Command("python3", {
      args: [DRIVER, rows, cols, "--", ...command],
      env: options.env,
      clearEnv: options.env !== undefined,
      cwd: options.cwd,
      stdin: "piped",
      stdout: "piped",
      stderr: "inherit",
    }).spawn();
    this.#writer = this.#child.stdin.getWriter();
    this.#status = this.#child.status;
    this.#reading = this.#read();
  }

  async #read(): Promise<void> {
    const decoder = new TextDecoder();
    for await (const chunk of this.#child.stdout) {
      this.#raw += decoder.decode(chunk, { stream: true });
      for (const wake of this.#waiters) wake();
    }
    this.#raw += decoder.decode();
    for (const wake of this.#waiters) wake();
  }

  /** Everything printed so far, raw (with escape sequences). */
  get raw(): string {
    return this.#raw;
  }

  /** Everything printed so far, without escape sequences. */
  get text(): string {
    return stripAnsi(this.#raw);
  }

  /**
   * Types bytes into the terminal.
   *
   * @param keys Text or {@linkcode KEYS} sequences.
   */
  async send(keys: string): Promise<void> {
    await this.#writer.write(new TextEncoder().encode(keys));
  }

  /**
   * Waits until the plain output printed since the last successful `expect`
   * contains `pattern`.
   *
   * @param pattern A substring or a regular expression.
   * @param timeoutMs How long to wait. Default 10 s.
   * @returns The plain output that matched.
   */
  async expect(pattern: string | RegExp, timeoutMs = 10_000): Promise<string> {
    const deadline = Date.now() + timeoutMs;
    while (true) {
      const plain = stripAnsi(this.#raw);
      const rest = plain.slice(this.#cursor);
      const index = typeof pattern === "string"
        ? rest.indexOf(pattern)
        : rest.search(pattern);
      if (index >= 0) {
        const length = typeof pattern === "string"
          ? pattern.length
          : (rest.slice(index).match(pattern)?.[0].length ?? 0);
        this.#cursor += index + length;
        return rest.slice(0, index + length);
      }
      const left = deadline - Date.now();
      if (left <= 0) {
        throw new Error(
          `Timed out after ${timeoutMs} ms waiting for ${
            String(pattern)
          }; output so far:\n${plain}`,
        );
      }
      await new Promise<void>((resolve) => {
        const timer = setTimeout(done, Math.min(left, 200));
        const self = this.#waiters;
        function done(): void {
          clearTimeout(timer);
          self.delete(done);
          resolve();
        }
        this.#waiters.add(done);
      });
    }
  }

  /**
   * Waits for the command to end.
   *
   * @param timeoutMs How long to wait before killing it. Default 15 s.
   * @returns The command's exit code.
   */
  async exit(timeoutMs = 15_000): Promise<number> {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const timeout = new Promise<"timeout">((resolve) => {
      timer = setTimeout(() => resolve("timeout"), timeoutMs);
    });
    const result = await Promise.race([this.#status, timeout]);
    clearTimeout(timer);
    if (result === "timeout") {
      await this.#kill();
      throw new Error(
        `Command did not exit within ${timeoutMs} ms; output:\n${this.text}`,
      );
    }
    await this.#writer.close().catch(() => {});
    await this.#reading;
    return result.code;
  }

  async #kill(): Promise<void> {
    try {
      this.#child.kill("SIGKILL");
    } catch {
      // Already gone.
    }
    await this.#writer.close().catch(() => {});
    await this.#status;
    await this.#reading;
  }

  async [Symbol.asyncDispose](): Promise<void> {
    const finished = await Promise.race([
      this.#status.then(() => true),
      Promise.resolve(false),
    ]);
    if (!finished) {
      await this.#kill();
    } else {
      await this.#writer.close().catch(() => {});
      await this.#reading;
    }
  }
}

/**
 * Spawns `command` in a pseudo-terminal.
 *
 * @param command The program and its arguments.
 * @param options Environment, working directory and terminal size.
 * @returns The running session.
 */
export function spawnPty(
  command: string[],
  options: PtyOptions = {},
): PtySession {
  return new PtySession(command, options);
}
