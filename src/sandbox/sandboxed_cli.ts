// A user or project provider's `cli.ts` run in its own sandbox process under
// exactly its grant, like the provider, on `src/cli/sandbox_bootstrap.ts`.

import { log } from "../core/log.ts";
import { terminalSafe } from "../core/terminal_text.ts";
import { errorText } from "../_util/error_text.ts";
import type { ProviderGrant } from "./grant.ts";
import { openChannel } from "./transport.ts";
import { denialReporter } from "./denial.ts";
import {
  checkGrantAtStart,
  limitScope,
  prepareDataDir,
  realEntry,
} from "./sandbox_launch.ts";
import {
  type CallContext,
  type CliDescription,
  type CliTerminal,
  serializeError,
  type WorkerMessage,
} from "./worker_protocol.ts";
import { WorkerRpc } from "./worker_rpc.ts";

const CLI_BOOTSTRAP = new URL("../cli/sandbox_bootstrap.ts", import.meta.url);

/**
 * Where a sandboxed `cli.ts` prints and asks: the CLI's `io`
 * (`CliIo` of `@hermes/memory/cli` fits).
 */
export interface CliBridge {
  stdout(text: string): void;
  stderr(text: string): void;
  readonly stdinIsTerminal: boolean;
  readonly stdoutIsTerminal: boolean;
  readonly stderrIsTerminal: boolean;
  /** The prompts (`select`, `input`, `password`, `confirm`, `line`). */
  readonly prompts: object;
}

/** Options of {@linkcode startProviderCli}. */
export interface ProviderCliStartOptions {
  name: string;
  specifier: string;
  description: string;
  grant: ProviderGrant;
  manifestPath?: string;
  io: CliBridge;
  /** Whether a missing data directory is created (default `true`; `false`: write nothing). */
  createDataDir?: boolean;
  /** The heap cap of the sandbox process, in MiB (default `512`). */
  heapLimitMb?: number;
  /** How long starting and loading `cli.ts` may take (default `30000`). */
  loadTimeoutMs?: number;
}

/** A provider's `cli.ts`, loaded in its sandbox process. */
export interface SandboxedCli {
  readonly description: CliDescription;
  run(args: readonly string[]): Promise<number>;
  /**
   * Calls one export of `cli.ts`. An argument `{__hermesIo: true}` becomes
   * the bridged `io` in the sandbox.
   *
   * @throws {Error} What it threw (a denial explained), or a
   * `ProviderCallTimeoutError`.
   */
  call(name: string, args: unknown[], timeoutMs?: number): Promise<unknown>;
  close(): void;
}

/** The marker {@linkcode SandboxedCli.call} turns into the bridged `io`. */
export const BRIDGED_IO: { __hermesIo: true } = Object.freeze({
  __hermesIo: true,
});

/**
 * Starts a provider's `cli.ts` in its own sandbox process under its grant.
 *
 * @throws {Error} When the process cannot start or `cli.ts` fails to load.
 */
export async function startProviderCli(
  options: ProviderCliStartOptions,
): Promise<SandboxedCli> {
  const { name, grant, io } = options;
  checkGrantAtStart(grant);
  await prepareDataDir(grant, options.createDataDir !== false);
  const denials = denialReporter(name, grant, options.manifestPath);
  const explain = denials.explain;
  // A provider speaks as itself: every prompt and every line it prints on a
  // terminal starts with its name, and a prompt dressed as Hermes' own
  // approval is refused.
  const mark = `[${terminalSafe(name, { singleLine: true })}] `;
  const answerPrompt = async (ask: number, kind: string, given: unknown) => {
    try {
      const prompts = io.prompts as Record<
        string,
        (...args: unknown[]) => Promise<unknown>
      >;
      const asked = safePrompt(
        kind === "line"
          ? { message: String((given as { prompt?: unknown })?.prompt ?? "") }
          : given,
        mark,
      );
      const value = kind === "line"
        ? await prompts.line!(asked.message)
        : await prompts[kind]!.call(prompts, asked);
      rpc.answer({ t: "answer", ask, ok: true, value });
    } catch (error) {
      rpc.answer({ t: "answer", ask, ok: false, error: serializeError(error) });
    }
  };
  const lineStart = { stdout: true, stderr: true };
  const print = (stream: "stdout" | "stderr", text: string): void => {
    let shown = terminalSafe(text);
    if (io[`${stream}IsTerminal`] && shown !== "") {
      shown = (lineStart[stream] ? mark : "") +
        shown.replace(/\n(?=.)/g, `\n${mark}`);
      lineStart[stream] = shown.endsWith("\n");
    }
    io[stream](shown);
  };
  const onEvent = (message: WorkerMessage): void => {
    switch (message.t) {
      case "io":
        print(message.stream === "stdout" ? "stdout" : "stderr", message.text);
        return;
      case "ask":
        answerPrompt(message.ask, message.kind, message.options);
        return;
      case "log":
        log(message.level, message.message);
        return;
      case "denied":
        denials.report(message.error);
        return;
    }
  };
  const channel = openChannel("process", {
    entry: realEntry(CLI_BOOTSTRAP),
    grant,
    frameworkNpm: true,
    heapLimitMb: options.heapLimitMb,
  }, `memory-provider-cli-${name}`);
  const rpc: WorkerRpc = new WorkerRpc(channel, {
    provider: name,
    onEvent,
    onStopped: (reason) =>
      log("warn", `Memory provider '${name}' command line stopped: ${reason}`),
  });
  const context = (): CallContext => {
    const scope = limitScope(grant);
    return {
      hermesHome: grant.hermesHome,
      multiplex: false,
      ...(scope !== undefined ? { scope } : {}),
    };
  };
  const terminal = (): CliTerminal => ({
    stdin: io.stdinIsTerminal,
    stdout: io.stdoutIsTerminal,
    stderr: io.stderrIsTerminal,
  });
  let description: CliDescription;
  try {
    description = await rpc.request({
      t: "cliLoad",
      specifier: options.specifier,
      providerName: name,
      description: options.description,
      terminal: terminal(),
      context: context(),
    }, {
      timeoutMs: options.loadTimeoutMs ?? 30_000,
      label: "load of cli.ts",
      adaptive: true,
    }) as CliDescription;
  } catch (error) {
    rpc.terminate("its cli.ts failed to load");
    throw explain(error);
  }
  return {
    description,
    async run(args: readonly string[]): Promise<number> {
      try {
        const code = await rpc.request(
          {
            t: "cliRun",
            args: [...args],
            terminal: terminal(),
            context: context(),
          },
          { timeoutMs: Infinity, label: `hermes ${name}` },
        );
        return typeof code === "number" && Number.isInteger(code) ? code : 1;
      } catch (error) {
        const explained = explain(error);
        const text = errorText(explained);
        if (!denials.reported(explained) && rpc.stopped === undefined) {
          io.stderr(`error: ${terminalSafe(text)}\n`);
        }
        return 1;
      }
    },
    async call(
      exported: string,
      args: unknown[],
      timeoutMs = Infinity,
    ): Promise<unknown> {
      try {
        return await rpc.request(
          {
            t: "cliCall",
            name: exported,
            args,
            terminal: terminal(),
            context: context(),
          },
          { timeoutMs, label: exported, adaptive: true },
        );
      } catch (error) {
        throw explain(error);
      }
    },
    close(): void {
      rpc.terminate("its command finished");
    },
  };
}

/** Hermes' own approval wording, which no provider's prompt may use. */
const APPROVAL_WORDING = /approve this for|asks for:|memory provider '/i;

/**
 * A prompt's options with the text the user sees made terminal-safe and
 * marked as the provider's (choice values kept).
 *
 * @throws {Error} `PromptCancelled` when the text imitates Hermes' approval.
 */
function safePrompt(given: unknown, mark: string): Record<string, unknown> {
  const options = given !== null && typeof given === "object" &&
      !Array.isArray(given)
    ? { ...given as Record<string, unknown> }
    : {};
  const shown = (value: unknown): unknown =>
    typeof value === "string"
      ? terminalSafe(value, { singleLine: true })
      : value;
  for (const key of ["message", "default"]) {
    if (key in options) options[key] = shown(options[key]);
  }
  if (APPROVAL_WORDING.test(String(options.message ?? ""))) {
    throw Object.assign(
      new Error(
        "Hermes refused this prompt: it imitates Hermes' own approval prompt",
      ),
      { name: "PromptCancelled" },
    );
  }
  options.message = `${mark}${options.message ?? ""}`;
  if (Array.isArray(options.choices)) {
    options.choices = options.choices.map((choice: unknown) => {
      if (choice === null || typeof choice !== "object") return choice;
      const c = { ...choice as Record<string, unknown> };
      if ("name" in c) c.name = shown(c.name);
      if ("description" in c) c.description = shown(c.description);
      return c;
    });
  }
  return options;
}

/**
 * A bridge whose target is set after the sandbox starts; without one, output
 * goes to the debug log and prompts are refused (a status hook has no terminal).
 */
export function switchableBridge(): {
  bridge: CliBridge;
  use(io: CliBridge | undefined): void;
} {
  let target: CliBridge | undefined;
  const quiet = (text: string): void => {
    const line = text.replace(/\n$/, "");
    if (line !== "") log("debug", line);
  };
  const refuse = (): Promise<never> =>
    Promise.reject(
      Object.assign(new Error("Cannot prompt: no terminal here"), {
        name: "PromptCancelled",
      }),
    );
  const noPrompts = {
    select: refuse,
    input: refuse,
    password: refuse,
    confirm: refuse,
    line: refuse,
  };
  return {
    bridge: {
      stdout: (text) => target ? target.stdout(text) : quiet(text),
      stderr: (text) => target ? target.stderr(text) : quiet(text),
      get stdinIsTerminal() {
        return target?.stdinIsTerminal ?? false;
      },
      get stdoutIsTerminal() {
        return target?.stdoutIsTerminal ?? false;
      },
      get stderrIsTerminal() {
        return target?.stderrIsTerminal ?? false;
      },
      get prompts() {
        return target?.prompts ?? noPrompts;
      },
    },
    use(io: CliBridge | undefined): void {
      target = io;
    },
  };
}
