// How the benches run the `hermes` CLI, read from deno.json at run time so
// they measure whatever the `hermes` task is when they run (the task line
// may become a launcher):
//
// - `viaTask()`: `deno task hermes <args>` in the repository, as a user runs
//   it (the task's own steps included);
// - `viaDirect()`: the task line's `deno run <flags> <entry>` command alone,
//   with `$HOME` expanded and its `NAME=value` prefixes as environment; or
//   the reason there is none (a task line without `deno run`).
import { launcherKey, readLaunchRecord } from "../src/launcher/launch_cache.ts";
import { join } from "node:path";
import { childEnv, DENO_JSON, ROOT } from "./_harness.ts";

/** The entry the benches expect the task to run; only a label. */
export const CLI_ENTRY = "src/cli/main.ts";

/** A command line ready for {@linkcode runProcess}. */
export interface CliInvocation {
  /** How it is run, for tables (`deno task hermes`, `deno run … src/cli/main.ts`). */
  label: string;
  command: string;
  args: string[];
  cwd: string;
  env: Record<string, string>;
}

/** The `hermes` task line of deno.json as it is now. */
export function hermesTaskLine(): string {
  const config = JSON.parse(Deno.readTextFileSync(DENO_JSON)) as {
    tasks?: Record<string, string | { command?: string }>;
  };
  const task = config.tasks?.hermes;
  const line = typeof task === "string" ? task : task?.command;
  if (!line) throw new Error(`${DENO_JSON} has no "hermes" task`);
  return line;
}

/** Shell words of one command (quotes kept together, not interpreted further). */
function words(command: string): string[] {
  const out: string[] = [];
  const re = /"((?:[^"\\]|\\.)*)"|'([^']*)'|(\S+)/g;
  for (const match of command.matchAll(re)) {
    out.push(match[1] ?? match[2] ?? match[3]!);
  }
  return out;
}

function expand(word: string, vars: Record<string, string>): string {
  return word.replace(
    /\$\{(\w+)\}|\$(\w+)/g,
    (_all, a: string | undefined, b: string | undefined) =>
      vars[(a ?? b)!] ?? "",
  );
}

/** `deno task hermes <args>` run in the repository with HOME = `home`. */
export function viaTask(home: string, args: readonly string[]): CliInvocation {
  return {
    label: "deno task hermes",
    command: Deno.execPath(),
    args: ["task", "hermes", ...args],
    cwd: ROOT,
    env: childEnv(home),
  };
}

/**
 * The task line's `deno run` command (the last one when it chains several),
 * run directly; a string saying why when the line has none.
 *
 * @param home HOME for `$HOME` and the child.
 * @param args The CLI's arguments.
 * @param options `net`: hosts added to the command's `--allow-net` (for a
 * self-hosted server, as a user would add them).
 */
export function viaDirect(
  home: string,
  args: readonly string[],
  options: { net?: readonly string[] } = {},
): CliInvocation | string {
  const line = hermesTaskLine();
  const commands = line.split(/&&|\|\||;/).map((c) => words(c.trim()));
  const run = commands.findLast((w) => {
    const i = w.indexOf("deno");
    return i >= 0 && w[i + 1] === "run";
  });
  if (!run) {
    return `the hermes task runs no 'deno run' command: ${line}`;
  }
  const vars = childEnv(home);
  const at = run.indexOf("deno");
  const prefix: Record<string, string> = {};
  for (const word of run.slice(0, at)) {
    const eq = word.indexOf("=");
    if (eq > 0) prefix[word.slice(0, eq)] = expand(word.slice(eq + 1), vars);
  }
  const rest = run.slice(at + 2).map((w) => expand(w, vars));
  const entryAt = rest.findIndex((w) => !w.startsWith("-"));
  if (options.net && options.net.length > 0) {
    const netAt = rest.findIndex((w, i) =>
      (entryAt < 0 || i < entryAt) &&
      (w === "--allow-net" || w.startsWith("--allow-net="))
    );
    const hosts = options.net.join(",");
    if (netAt < 0) {
      rest.splice(Math.max(0, entryAt), 0, `--allow-net=${hosts}`);
    } else if (rest[netAt]!.startsWith("--allow-net=")) {
      rest[netAt] = `${rest[netAt]},${hosts}`;
    } // a bare --allow-net already allows every host
  }
  const entry = entryAt >= 0
    ? rest[rest.findIndex((w) => !w.startsWith("-"))]!
    : "(none)";
  return {
    label: `deno run <task flags> ${entry}`,
    command: Deno.execPath(),
    args: ["run", ...rest, ...args],
    cwd: ROOT,
    env: { ...vars, ...prefix },
  };
}

/**
 * The CLI alone, as the launcher starts it: the command of the newest launch
 * record a launcher run left in `home`'s cache; a string saying why when
 * there is none (run the launcher once first).
 */
export async function viaLaunchRecord(
  home: string,
  args: readonly string[],
): Promise<CliInvocation | string> {
  const dir = join(home, ".cache", "hermes-memory", "launcher");
  let newest: { path: string; mtime: number } | undefined;
  try {
    for (const entry of Deno.readDirSync(dir)) {
      if (!entry.name.startsWith("plan-")) continue;
      const path = join(dir, entry.name);
      const mtime = Deno.statSync(path).mtime?.getTime() ?? 0;
      if (!newest || mtime > newest.mtime) newest = { path, mtime };
    }
  } catch {
    // No cache directory: no launcher run yet.
  }
  if (newest === undefined) return `no launch record in ${dir}`;
  // Sealed with the launcher's key: opened as the launcher opens it.
  const key = await launcherKey(dir);
  const name = newest.path.slice(dir.length + 1);
  const record = key && await readLaunchRecord(dir, name, key);
  if (!record) return `the launch record ${newest.path} does not open`;
  return {
    label: "the CLI alone (launch record)",
    command: Deno.execPath(),
    args: [...record.denoArgs, ...args],
    cwd: ROOT,
    env: { ...childEnv(home), ...record.env, DENO_NO_UPDATE_CHECK: "1" },
  };
}

/** A throwaway user home for CLI runs. */
export interface CliHome extends AsyncDisposable {
  /** HOME. */
  home: string;
  /** `$HOME/.hermes`. */
  hermes: string;
}

/**
 * A user home as a Honcho user has it: `config.yaml` selecting Honcho,
 * `honcho.json` with a key (and `baseUrl` when given), a few built-in
 * memory entries.
 */
export async function honchoUserHome(
  options: { baseUrl?: string; prefix?: string; net?: string[] } = {},
): Promise<CliHome> {
  const home = await Deno.realPath(
    await Deno.makeTempDir({ prefix: options.prefix ?? "hermes_cli_bench_" }),
  );
  const hermes = join(home, ".hermes");
  await Deno.mkdir(join(hermes, "memories"), { recursive: true });
  await Deno.writeTextFile(
    join(hermes, "config.yaml"),
    "memory:\n  provider: honcho\n" +
      (options.net
        ? `  permissions:\n    honcho:\n      net: [${
          options.net.map((h) => JSON.stringify(h)).join(", ")
        }]\n`
        : ""),
  );
  await Deno.writeTextFile(
    join(hermes, "honcho.json"),
    JSON.stringify({
      apiKey: "hch-bench-key-0000",
      workspace: "bench",
      peerName: "alice",
      aiPeer: "hermes",
      ...(options.baseUrl ? { baseUrl: options.baseUrl } : {}),
    }),
    { mode: 0o600 },
  );
  await Deno.writeTextFile(
    join(hermes, "memories", "MEMORY.md"),
    "The user deploys with a canary at 10% for an hour.\n§\nThe user prefers helix with tabs.\n",
  );
  await Deno.writeTextFile(
    join(hermes, "memories", "USER.md"),
    "Name: Alice\n§\nPrefers oolong tea.\n",
  );
  return {
    home,
    hermes,
    async [Symbol.asyncDispose](): Promise<void> {
      await Deno.remove(home, { recursive: true }).catch(() => {});
    },
  };
}
