// The launcher: runs the CLI in a child `deno run` with the grant the profile
// needs (`run_plan.ts`), cached with a record of the reads computing it made,
// so a warm start loads only this folder. Answers `hermes --help` itself.

import { commandIntent, scanGlobalArgs } from "../cli/arg_scan.ts";
import { denoCacheDir, readProcessEnv } from "../core/env.ts";
import {
  cliCacheStep,
  cliLocation,
  FRAMEWORK_URL,
} from "../cli/cli_location.ts";
import { recordReads, unchanged } from "./input_record.ts";
import { sha256Hex } from "../_util/sha256.ts";
import { execProgram } from "./exec.ts";
import {
  grantSources,
  LAUNCH_FORMAT,
  launcherCacheDir,
  launcherKey,
  launchKey,
  type LaunchRecord,
  pruneLaunchRecords,
  readLaunchRecord,
  sealRecord,
  sourceStamp,
  writeCacheFile,
} from "./launch_cache.ts";
import { lazyImport } from "../_util/lazy_import.ts";

/** Options of {@linkcode launch}. */
export interface LaunchOptions {
  /** Where the launcher's own messages go. @default {console.error} */
  warn?: (line: string) => void;
  /**
   * Replace this process with the CLI where it can (`main.ts`), instead of
   * starting it as a child.
   * @default {false}
   */
  exec?: boolean;
}

/** `deno task` runs in `deno.json`'s folder: go back to the user's (`INIT_CWD`). */
function enterUserDirectory(root: string | undefined): void {
  const initial = readProcessEnv("INIT_CWD");
  if (!initial || root === undefined) return;
  try {
    const cwd = Deno.cwd(); // Without symlinks: most starts need no realPath.
    if (cwd !== root && Deno.realPathSync(cwd) !== Deno.realPathSync(root)) {
      return;
    }
    Deno.chdir(initial);
  } catch {
    // Gone or unreadable: stay where the task put us.
  }
}

async function computeRecord(
  args: string[],
  root: string | undefined,
  deps: string,
): Promise<LaunchRecord> {
  const sources = root === undefined ? [] : grantSources(root);
  const stamp = sourceStamp(sources);
  // Lazy: Deno reads a literal dynamic import's graph at start-up.
  const { computeLaunch } = await lazyImport<typeof import("./plan.ts")>(
    "./plan.ts",
    import.meta.url,
  );
  const { result, observations, digest } = await recordReads(() =>
    computeLaunch(args)
  );
  return {
    format: LAUNCH_FORMAT,
    ...result,
    deps,
    observations,
    inputsDigest: digest,
    sources,
    sourceStamp: stamp,
  };
}

/**
 * What the module cache was filled for: CLI, Deno cache (inode: wiped?),
 * `deno.json` and `deno.lock` (inode, size and times, as git's index does) and
 * Deno's version.
 */
function depsState(): string {
  const { entry, dir } = cliLocation();
  const denoDir = denoCacheDir();
  const id = (path: string, contents: boolean): string => {
    try {
      const i = Deno.statSync(path);
      const times = contents ? [i.size, i.mtime, i.ctime] : [];
      return [i.dev, i.ino, i.birthtime, ...times].map(Number).join(":");
    } catch {
      return "missing";
    }
  };
  const files = dir === undefined
    ? []
    : ["deno.json", "deno.lock"].map((name) => id(`${dir}/${name}`, true));
  return JSON.stringify([
    entry,
    denoDir,
    denoDir && id(denoDir, false),
    ...files,
    Deno.version.deno,
  ]);
}

/** Fills Deno's module cache once per {@linkcode depsState} (the CLI runs `--cached-only`). */
async function ensureCached(
  cacheDir: string | undefined,
  deps: string,
  warn: (line: string) => void,
): Promise<boolean> {
  const marker = `deps-${await sha256Hex(deps)}`;
  if (cacheDir !== undefined) {
    try {
      Deno.statSync(`${cacheDir}/${marker}`);
      return true;
    } catch {
      // Not cached yet (or Deno's cache was replaced).
    }
  }
  const step = cliCacheStep();
  const unlocked = step.cwd === undefined || step.lockfile === undefined
    ? undefined
    : unlockedImport(`${step.cwd}/deno.json`, step.lockfile);
  if (unlocked !== undefined) {
    warn(
      cacheFailure(
        step,
        `deno.json imports ${unlocked}, which it does not resolve`,
      ),
    );
    return false;
  }
  const slow = setTimeout(
    () => warn("hermes: caching the modules the CLI needs (first run)…"),
    1000,
  );
  const run = (args: string[]) =>
    new Deno.Command(Deno.execPath(), {
      args,
      cwd: step.cwd,
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
      env: { DENO_NO_UPDATE_CHECK: "1", NO_COLOR: "1" },
    }).output();
  let output: Deno.CommandOutput;
  try {
    // A remote install whose modules are all cached needs no network.
    const offline = step.offlineArgs && await run(step.offlineArgs);
    output = offline?.success ? offline : await run(step.args);
  } finally {
    clearTimeout(slow);
  }
  if (!output.success) {
    warn(
      cacheFailure(step, new TextDecoder().decode(output.stderr), output.code),
    );
    return false;
  }
  if (cacheDir !== undefined) {
    writeCacheFile(cacheDir, marker, new Uint8Array());
  }
  return true;
}

/** The variable that makes a failed cache step print Deno's whole output. */
const DEBUG_ENV = "HERMES_DEBUG";

/**
 * The first `npm:`/`jsr:` import of `deno.json` that `deno.lock` does not
 * resolve: checked before the frozen install, which on a first run with a
 * fresh Deno cache sometimes accepted such a lockfile (and the CLI's own
 * `deno run` would then rewrite it).
 */
function unlockedImport(config: string, lockfile: string): string | undefined {
  try {
    const imports = JSON.parse(Deno.readTextFileSync(config))
      .imports as Record<string, unknown> | undefined;
    const locked = JSON.parse(Deno.readTextFileSync(lockfile))
      .specifiers as Record<string, unknown> | undefined;
    return Object.values(imports ?? {}).find((value): value is string =>
      typeof value === "string" && /^(?:npm|jsr):/.test(value) &&
      !Object.hasOwn(locked ?? {}, value)
    );
  } catch {
    return undefined; // Unreadable: the install reports it.
  }
}

/**
 * One cause and fix for a failed cache step: `stderr` and `code` are Deno's
 * (its full output only under `HERMES_DEBUG=1`); without a code, `stderr`
 * says which import the lockfile does not resolve.
 */
function cacheFailure(
  step: ReturnType<typeof cliCacheStep>,
  stderr: string,
  code?: number,
): string {
  const detail = stderr.trim();
  const cause = /^error: (.*)$/m.exec(detail)?.[1] ??
    detail.split("\n", 1)[0] ?? "";
  const debug = readProcessEnv(DEBUG_ENV) === "1";
  const more = !debug && detail.includes("\n")
    ? ` (${DEBUG_ENV}=1 shows Deno's full output)`
    : "";
  const text = code === undefined || /lockfile is out of date/i.test(cause)
    ? `${step.lockfile ?? "deno.lock"} is out of date (${
      code === undefined ? detail : "it does not match deno.json"
    })\n` +
      `hint: run 'deno install' in ${step.cwd} to update it, or 'git checkout deno.lock' there if the change was not meant${more}`
    : `'deno ${step.args[0]}' failed (exit code ${code})${
      cause ? `: ${cause}` : ""
    }\nhint: check the network (the npm registry) or the Deno cache, then run hermes again${more}`;
  return `hermes: cannot cache the modules the CLI needs: ${text}${
    debug && code !== undefined
      ? `\n'deno ${step.args.join(" ")}' printed:\n${detail}`
      : ""
  }`;
}

const SIGNAL_NUMBERS: Partial<Record<Deno.Signal, number>> = {
  SIGHUP: 1,
  SIGINT: 2,
  SIGQUIT: 3,
  SIGTERM: 15,
};

// Passes terminating signals on to the CLI (Ctrl-C reaches it via the
// terminal: SIGINT only must not end the launcher); one before the start stops it.
class SignalRelay implements Disposable {
  #child: Deno.ChildProcess | undefined;
  #pending: Deno.Signal | undefined;
  #listeners: [Deno.Signal, () => void][] = [];

  constructor() {
    const signals: Deno.Signal[] = Deno.build.os === "windows"
      ? ["SIGINT"]
      : ["SIGINT", "SIGTERM", "SIGHUP", "SIGQUIT"];
    for (const signal of signals) {
      const listener = (): void => {
        if (signal === "SIGINT" && this.#child !== undefined) return;
        if (this.#child === undefined) {
          this.#pending ??= signal;
          return;
        }
        try {
          this.#child.kill(signal);
        } catch {
          // Already gone.
        }
      };
      try {
        Deno.addSignalListener(signal, listener);
        this.#listeners.push([signal, listener]);
      } catch {
        // Not supported here.
      }
    }
  }

  /** The exit code of a signal that stopped the launch. */
  get stopped(): number | undefined {
    return this.#pending === undefined
      ? undefined
      : 128 + (SIGNAL_NUMBERS[this.#pending] ?? 15);
  }

  attach(child: Deno.ChildProcess): void {
    this.#child = child;
  }

  [Symbol.dispose](): void {
    for (const [signal, listener] of this.#listeners) {
      Deno.removeSignalListener(signal, listener);
    }
  }
}

async function runChild(
  record: LaunchRecord,
  args: string[],
  relay: SignalRelay,
  exec: boolean,
): Promise<number> {
  const stopped = relay.stopped;
  if (stopped !== undefined) return stopped;
  const argv = [...record.denoArgs, ...args];
  const env = { ...record.env, DENO_NO_UPDATE_CHECK: "1" };
  if (exec) execProgram(Deno.execPath(), argv, env);
  const child = new Deno.Command(Deno.execPath(), { args: argv, env }).spawn();
  relay.attach(child);
  return (await child.status).code;
}

/** Runs the CLI with its (cached) grant; resolves to its exit code (1: the launcher failed). */
export async function launch(
  args: string[],
  options: LaunchOptions = {},
): Promise<number> {
  const warn = options.warn ?? ((line: string) => console.error(line));
  using relay = new SignalRelay();
  const cacheDir = launcherCacheDir();
  const root = cliLocation().dir;
  enterUserDirectory(root);
  const intent = commandIntent(args);
  const key = await launchKey({
    launcher: FRAMEWORK_URL.href,
    deno: Deno.version.deno,
    cwd: Deno.cwd(),
    profile: scanGlobalArgs(args).profile ?? null,
    setup: intent.setup ?? null,
    ...(intent.spansProfiles ? { spansProfiles: true } : {}),
    reads: intent.reads ?? null,
  });
  const deps = depsState();
  const name = `plan-${key}.json`;
  const sealing = cacheDir === undefined
    ? undefined
    : await launcherKey(cacheDir);
  let record = cacheDir === undefined || sealing === undefined
    ? undefined
    : await readLaunchRecord(cacheDir, name, sealing);
  if (
    record !== undefined &&
    (record.deps !== deps ||
      sourceStamp(record.sources) !== record.sourceStamp ||
      !(await unchanged(record.observations, record.inputsDigest)))
  ) {
    record = undefined;
  }
  if (record === undefined) {
    // A record exists only once the cache was filled for its `deps`.
    if (!(await ensureCached(cacheDir, deps, warn))) return 1;
    try {
      record = await computeRecord(args, root, deps);
    } catch (error) {
      warn(
        `hermes: cannot work out the permissions the CLI needs: ${
          error instanceof Error ? error.message : String(error)
        }`,
      );
      return 1;
    }
    if (cacheDir !== undefined && sealing !== undefined) {
      writeCacheFile(cacheDir, name, await sealRecord(record, sealing, name));
      pruneLaunchRecords(cacheDir);
    }
  }
  if (scanGlobalArgs(args).help && relay.stopped === undefined) {
    // What the CLI's main.ts would print (lazy: only for --help).
    const help = await lazyImport<typeof import("../cli/root_help.ts")>(
      "../cli/root_help.ts",
      import.meta.url,
    );
    const provider = help.isRootHelpRequest(args)
      ? help.parseProviderCommandLine(record.env[help.ROOT_HELP_ENV])
      : null;
    if (provider !== null) {
      await help.writeRootHelp(provider);
      return 0;
    }
  }
  return await runChild(record, args, relay, options.exec === true);
}
