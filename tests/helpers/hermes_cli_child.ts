// Runs the `hermes` command line as a child process exactly the way
// `deno task hermes` starts it: the `deno run …` command of the `hermes`
// task in deno.json (whatever flags, launcher or entry point it names),
// with `$HOME` expanded and the task's own `NAME=value` prefixes, in the
// repository root (where `deno task` runs). Tests of what a CLI user sees
// go through this one helper, so they follow the task line when it
// changes. Set HERMES_CLI_TASK to test another command line instead.
import { fileURLToPath } from "node:url";
import { join } from "node:path";
import { type ChildResult, denoDir, runDeno } from "./deno_child.ts";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
/** What a `hermes` child printed. */
export type HermesRun = ChildResult;

/** Options of {@linkcode runHermesCli}. */
export interface HermesRunOptions {
  /** The user's home directory (`$HOME`; the default profile is `<it>/.hermes`). */
  userHome: string;
  /** Extra environment (e.g. `HERMES_ENABLE_PROJECT_PLUGINS`). */
  env?: Record<string, string>;
  /** The working directory (default: the repository root, as `deno task`). */
  cwd?: string;
}

/** The command line the `hermes` task runs (its last `&&` step). */
export async function hermesTaskLine(): Promise<string> {
  const override = Deno.env.get("HERMES_CLI_TASK");
  if (override) return override;
  const config = JSON.parse(await Deno.readTextFile(join(ROOT, "deno.json")));
  const task = config.tasks?.hermes;
  const line = typeof task === "string" ? task : task?.command;
  if (typeof line !== "string") throw new Error("deno.json has no hermes task");
  const steps = line.split("&&").map((s: string) => s.trim());
  const run = [...steps].reverse().find((s: string) =>
    /(^|\s)deno\s+run\s/.test(s)
  );
  if (run === undefined) throw new Error(`no deno run step in: ${line}`);
  return run;
}

/** The `deno` command line that starts `hermes <args>` as the task does. */
export interface HermesCliCommand {
  /** The `deno` executable. */
  command: string;
  /** Its arguments. */
  args: string[];
  /** The whole environment (nothing else is inherited). */
  env: Record<string, string>;
  /** The working directory. */
  cwd: string;
}

/**
 * The command that starts `hermes <args>` as the task line does, for a
 * test that talks to the process itself (an MCP client over stdio, a
 * server whose URL it reads).
 *
 * @param args The arguments after `hermes`.
 * @param options The user's home, environment and working directory.
 * @returns The command, arguments, environment and directory.
 */
export async function hermesCliCommand(
  args: string[],
  options: HermesRunOptions,
): Promise<HermesCliCommand> {
  const words = (await hermesTaskLine()).split(/\s+/).map((w) =>
    w.replaceAll("${HOME}", options.userHome).replaceAll(
      "$HOME",
      options.userHome,
    )
  );
  const at = words.indexOf("deno");
  const env: Record<string, string> = {};
  for (const word of words.slice(0, at)) {
    const eq = word.indexOf("=");
    if (eq > 0) env[word.slice(0, eq)] = word.slice(eq + 1);
  }
  return {
    command: Deno.execPath(),
    args: [...words.slice(at + 1), ...args],
    cwd: options.cwd ?? ROOT,
    env: {
      DENO_DIR: denoDir(),
      DENO_NO_UPDATE_CHECK: "1",
      NO_COLOR: "1",
      HOME: options.userHome,
      PATH: "/usr/bin:/bin",
      ...env,
      ...options.env,
    },
  };
}

/**
 * Runs `hermes <args>` as the task line does.
 *
 * @param args The arguments after `hermes`.
 * @param options The user's home, environment and working directory.
 * @returns Exit code and output.
 */
export async function runHermesCli(
  args: string[],
  options: HermesRunOptions,
): Promise<HermesRun> {
  const c = await hermesCliCommand(args, options);
  return await runDeno(c.args, { cwd: c.cwd, clearEnv: true, env: c.env });
}
