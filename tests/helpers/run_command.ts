// Runs a real process for the CLI tests: a clean environment (PATH, the
// shared Deno cache, no colours, plus what the test adds), standard input
// closed, output captured.
import "./test_home.ts";
import { dirname, join } from "node:path";

/** The Deno cache the children use (the test's own, so npm stays cached). */
export const DENO_DIR: string = Deno.env.get("DENO_DIR") ??
  join(Deno.env.get("HOME") ?? "/root", ".cache", "deno");

/** What a process printed and how it ended. */
export interface CommandResult {
  code: number;
  out: string;
  err: string;
}

/** Options of {@linkcode runCommand}. */
export interface RunCommandOptions {
  /** The working directory. */
  cwd?: string;
  /** Variables added to the clean environment. */
  env?: Record<string, string>;
}

/**
 * Runs `command args…` to the end. `PATH` holds `/usr/bin`, `/bin` and the
 * directory of the running Deno (for commands that run `deno` by name).
 */
export async function runCommand(
  command: string,
  args: string[],
  options: RunCommandOptions = {},
): Promise<CommandResult> {
  const output = await new Deno.Command(command, {
    args,
    cwd: options.cwd,
    clearEnv: true,
    env: {
      PATH: `${dirname(Deno.execPath())}:/usr/bin:/bin`,
      DENO_DIR,
      DENO_NO_UPDATE_CHECK: "1",
      NO_COLOR: "1",
      ...options.env,
    },
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
  const decoder = new TextDecoder();
  return {
    code: output.code,
    out: decoder.decode(output.stdout),
    err: decoder.decode(output.stderr),
  };
}

/** The pids of live processes (not zombies) whose parent is `parent` and whose command line has `word` (all of them without `parent`). */
export async function livePids(
  word: string,
  parent?: number,
): Promise<number[]> {
  const ps = await new Deno.Command("ps", {
    args: [
      "-o",
      "pid=,stat=,args=",
      ...(parent ? ["--ppid", `${parent}`] : ["-e"]),
    ],
    stdout: "piped",
    stderr: "null",
  }).output();
  return new TextDecoder().decode(ps.stdout).split("\n")
    .map((line) => line.trim().split(/\s+/))
    .filter((f) =>
      f.length > 2 && !f[1]!.startsWith("Z") &&
      f.slice(2).join(" ").includes(word)
    )
    .map((f) => Number(f[0]));
}
