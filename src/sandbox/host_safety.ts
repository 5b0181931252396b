// Checks the host flags the worker transport depends on (Deno 2.9.6):
// `--no-prompt`, `--cached-only` and the `worker-options` unstable flag.

import { dirname, fileURLToPath, join } from "../_util/path.ts";
import { isTruthyEnvValue, readProcessEnv } from "../core/env.ts";
import { words } from "../_util/python_text.ts";

/** How permission prompts are ruled out. */
export type PromptSafety =
  | "no-prompt"
  | "no-terminal"
  | "test-runner"
  | "prompts"
  | "unknown";

/** What `npm:` imports can do in this process. */
export type NpmSafety = "no-npm" | "cached-only" | "open" | "unknown";

/** Whether `Worker` permission options are enabled. */
export type WorkerOptionsState = "enabled" | "disabled" | "unknown";

/** What {@linkcode checkHostSafety} found. */
export interface HostSafetyReport {
  /** How permission prompts are ruled out (`prompts`: they are not). */
  prompt: PromptSafety;
  npm: NpmSafety;
  workerOptions: WorkerOptionsState;
  commandLine: string[] | null;
  problems: string[];
  /** Things that could not be confirmed, or weaker settings. */
  warnings: string[];
}

/** Options of {@linkcode checkHostSafety}. */
export interface HostSafetyOptions {
  /** Probe again instead of returning the cached report (default `false`). */
  refresh?: boolean;
}

let cached: Promise<HostSafetyReport> | undefined;

function readCommandLine(): string[] | null {
  try {
    const text = Deno.readTextFileSync("/proc/self/cmdline");
    const parts = text.split("\0");
    if (parts.at(-1) === "") parts.pop();
    return parts;
  } catch {
    return null;
  }
}

/** The deno flags of a command line: between the subcommand and the script. */
function hostFlags(commandLine: string[]): { sub: string; flags: string[] } {
  const sub = commandLine[1] ?? "";
  const flags: string[] = [];
  const takesValue = new Set(words`
    -c --config --import-map --lock --cert --location --seed --v8-flags
    --env-file
  `);
  for (let i = 2; i < commandLine.length; i++) {
    const arg = commandLine[i] as string;
    if (!arg.startsWith("-")) break;
    flags.push(arg);
    if (takesValue.has(arg) && i + 1 < commandLine.length) {
      flags.push(commandLine[++i] as string);
    }
  }
  return { sub, flags };
}

function flagValue(flags: string[], names: string[]): string | undefined {
  for (let i = 0; i < flags.length; i++) {
    const flag = flags[i] as string;
    for (const name of names) {
      if (flag === name) return flags[i + 1];
      if (flag.startsWith(`${name}=`)) return flag.slice(name.length + 1);
    }
  }
  return undefined;
}

function configEnablesWorkerOptions(path: string): boolean | undefined {
  let text: string;
  try {
    text = Deno.readTextFileSync(path);
  } catch {
    return undefined;
  }
  return /"unstable"\s*:\s*\[[^\]]*"worker-options"/.test(text);
}

/** The nearest deno.json(c) above the main module, or `undefined`. */
function findMainConfig(): string | undefined {
  let url: URL;
  try {
    url = new URL(Deno.mainModule);
  } catch {
    return undefined;
  }
  if (url.protocol !== "file:") return undefined;
  let dir = dirname(fileURLToPath(url));
  for (let depth = 0; depth < 64; depth++) {
    for (const name of ["deno.json", "deno.jsonc"]) {
      const path = join(dir, name);
      try {
        Deno.statSync(path);
        return path;
      } catch {
        // Keep looking.
      }
    }
    const parent = dirname(dir);
    if (parent === dir) break;
    dir = parent;
  }
  return undefined;
}

function isTerminal(): boolean {
  try {
    return Deno.stdin.isTerminal() && Deno.stderr.isTerminal();
  } catch {
    return false;
  }
}

function runChecks(): HostSafetyReport {
  const commandLine = readCommandLine();
  const parsed = commandLine !== null ? hostFlags(commandLine) : undefined;
  const flags = parsed?.flags ?? [];
  const problems: string[] = [];
  const warnings: string[] = [];

  let prompt: PromptSafety;
  if (parsed?.sub === "test") prompt = "test-runner";
  else if (flags.includes("--no-prompt")) prompt = "no-prompt";
  else if (isTruthyEnvValue(readProcessEnv("DENO_NO_PROMPT"))) {
    prompt = "no-prompt";
  } else if (!isTerminal()) prompt = "no-terminal";
  else if (parsed !== undefined) prompt = "prompts";
  else prompt = "unknown";
  if (prompt === "prompts") {
    problems.push(
      "Deno runs without --no-prompt on a terminal, so a sandboxed memory provider could ask for (and be given) any permission: add --no-prompt to the deno command or set DENO_NO_PROMPT=1",
    );
  } else if (prompt === "unknown") {
    warnings.push(
      "Cannot confirm that Deno runs with --no-prompt on this terminal: without it a sandboxed memory provider could ask for more permissions; pass --no-prompt or set DENO_NO_PROMPT=1",
    );
  }

  let npm: NpmSafety;
  if (flags.includes("--no-npm")) npm = "no-npm";
  else if (flags.includes("--cached-only")) npm = "cached-only";
  else if (parsed !== undefined) npm = "open";
  else npm = "unknown";
  if (npm === "unknown") {
    warnings.push(
      "Cannot tell whether Deno runs with --cached-only: without it a sandboxed memory provider can download npm packages at run time; pass --cached-only",
    );
  } else if (npm === "open") {
    warnings.push(
      "Deno runs without --cached-only, so a sandboxed memory provider can download and load any npm package at run time: add --cached-only to the deno command (run 'hermes memory setup' to cache a provider's packages first)",
    );
  }

  let workerOptions: WorkerOptionsState = "unknown";
  if (
    flags.includes("--unstable-worker-options") || flags.includes("--unstable")
  ) {
    workerOptions = "enabled";
  } else {
    const explicit = flagValue(flags, ["--config", "-c"]);
    const noConfig = flags.includes("--no-config");
    const path = noConfig ? undefined : explicit ?? findMainConfig();
    const enabled = path !== undefined
      ? configEnablesWorkerOptions(path)
      : undefined;
    if (enabled === true) workerOptions = "enabled";
    else if (parsed !== undefined) workerOptions = "disabled";
  }
  if (workerOptions === "disabled") {
    problems.push(
      `Worker permissions are not enabled, and Deno would exit with code 70 on the first sandboxed load: add "unstable": ["worker-options"] to deno.json or run deno with --unstable-worker-options`,
    );
  } else if (workerOptions === "unknown") {
    warnings.push(
      `Cannot confirm that worker permissions are enabled: make sure deno.json has "unstable": ["worker-options"] or deno runs with --unstable-worker-options, else Deno exits with code 70`,
    );
  }
  return { prompt, npm, workerOptions, commandLine, problems, warnings };
}

/** Checks the host process for the flags the worker transport depends on (cached). */
export function checkHostSafety(
  options: HostSafetyOptions = {},
): Promise<HostSafetyReport> {
  if (cached === undefined || options.refresh) {
    cached = Promise.resolve(runChecks());
  }
  return cached;
}
