// Runs a small TypeScript snippet in a child `deno run` with chosen flags and
// environment, for tests of behaviour that depends on the process
// environment or on narrow permission grants (which must not be changed in
// the shared test process).
import "./test_home.ts";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const ROOT = new URL("../..", import.meta.url);

/** The result of a child run. */
export interface ChildResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Options of {@linkcode runDenoChild}. */
export interface ChildOptions {
  /** Permission flags, e.g. `["--allow-read=/tmp/x"]`. */
  flags?: string[];
  /** Variables added to (or, as `""`, blanked in) the child's environment. */
  env?: Record<string, string>;
  /** The child's working directory. */
  cwd?: string;
  /** Arguments after the script. */
  args?: string[];
}

/** Options of {@linkcode runDeno}. */
export interface RunDenoOptions {
  /** The working directory. */
  cwd?: string;
  /** The environment (added to the parent's unless `clearEnv`). */
  env?: Record<string, string>;
  /** Start from an empty environment. */
  clearEnv?: boolean;
}

/**
 * Runs `deno <args>` with stdin closed, keeping the module cache when the
 * child gets a scratch `HOME` (`DENO_DIR` is always passed).
 */
export async function runDeno(
  args: string[],
  options: RunDenoOptions = {},
): Promise<ChildResult> {
  const output = await new Deno.Command(Deno.execPath(), {
    args,
    cwd: options.cwd,
    clearEnv: options.clearEnv ?? false,
    env: {
      DENO_DIR: denoDir(),
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
    stdout: decoder.decode(output.stdout),
    stderr: decoder.decode(output.stderr),
  };
}

/** Resolves `src/<file>` as a file URL, for imports in child scripts. */
export function srcUrl(file: string): string {
  return new URL(`src/${file}`, ROOT).href;
}

/** The Deno cache directory children share with this process. */
export function denoDir(): string {
  const explicit = Deno.env.get("DENO_DIR");
  if (explicit) return explicit;
  const cache = Deno.env.get("XDG_CACHE_HOME") ??
    join(Deno.env.get("HOME") ?? ".", ".cache");
  return join(cache, "deno");
}

/**
 * Writes `source` to `<dir>/child_<n>.ts` and runs it with the repo's
 * deno.json (so npm imports resolve), `--no-prompt` and `flags`.
 */
export async function runDenoChild(
  dir: string,
  source: string,
  options: ChildOptions = {},
): Promise<ChildResult> {
  const script = join(dir, `child_${crypto.randomUUID().slice(0, 8)}.ts`);
  await Deno.writeTextFile(script, source);
  return await runDeno([
    "run",
    "--quiet",
    "--no-prompt",
    "--frozen",
    `--config=${new URL("deno.json", ROOT).pathname}`,
    ...(options.flags ?? []),
    pathToFileURL(script).href,
    ...(options.args ?? []),
  ], { cwd: options.cwd, env: options.env });
}

/** Options of {@linkcode spawnRepoScript}. */
export interface SpawnScriptOptions {
  /** `--allow-net=` value. @default {"127.0.0.1"} */
  net?: string;
  /** Standard output. @default {"piped"} */
  stdout?: "piped" | "null";
  /** Standard error. @default {"piped"} */
  stderr?: "piped" | "null";
}

/**
 * Starts `deno run` on a script with the repo's deno.json (so `@hermes/memory`
 * and npm imports resolve) and read, write, env and 127.0.0.1 net access —
 * for crash and concurrency tests that kill or race child processes.
 */
export function spawnRepoScript(
  script: string,
  args: readonly string[],
  options: SpawnScriptOptions = {},
): Deno.ChildProcess {
  return new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "--quiet",
      "--no-prompt",
      "--frozen",
      `--config=${new URL("deno.json", ROOT).pathname}`,
      "--allow-read",
      "--allow-write",
      "--allow-env",
      `--allow-net=${options.net ?? "127.0.0.1"}`,
      script,
      ...args,
    ],
    stdout: options.stdout ?? "piped",
    stderr: options.stderr ?? "piped",
  }).spawn();
}
