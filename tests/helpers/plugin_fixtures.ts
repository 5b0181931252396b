// Shared helpers for the plugin-system tests: throwaway profile homes with
// fixture providers installed, and log capture.
import "./test_home.ts";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { type LogLevel, setLogger } from "../../src/core/log.ts";

/** The directory of the fixture providers. */
export const FIXTURES: string = fileURLToPath(
  new URL("../fixtures/plugins/", import.meta.url),
).replace(/\/$/, "");

/** A temporary profile home, removed by `Symbol.asyncDispose`. */
export interface TempHome extends AsyncDisposable {
  /** The home (symlinks resolved). */
  home: string;
  /** `<home>/plugins`. */
  plugins: string;
  /** A scratch directory beside the home, outside it. */
  outside: string;
}

/** Creates a temporary profile home with an empty `plugins/`. */
export async function tempHome(): Promise<TempHome> {
  const root = await Deno.realPath(
    await Deno.makeTempDir({ prefix: "hermes-plugins-" }),
  );
  const home = join(root, "home");
  const plugins = join(home, "plugins");
  const outside = join(root, "outside");
  await Deno.mkdir(plugins, { recursive: true });
  await Deno.mkdir(outside, { recursive: true });
  return {
    home,
    plugins,
    outside,
    async [Symbol.asyncDispose]() {
      await Deno.remove(root, { recursive: true });
    },
  };
}

/** Copies a directory tree (files and directories only). */
export async function copyTree(from: string, to: string): Promise<void> {
  await Deno.mkdir(to, { recursive: true });
  for await (const entry of Deno.readDir(from)) {
    const source = join(from, entry.name);
    const target = join(to, entry.name);
    if (entry.isDirectory) await copyTree(source, target);
    else if (entry.isFile) await Deno.copyFile(source, target);
  }
}

/** Installs fixture `name` as `$HERMES_HOME/plugins/<as>` (or any root). */
export async function installFixture(
  root: string,
  name: string,
  as: string = name,
): Promise<string> {
  const dir = join(root, as);
  await copyTree(join(FIXTURES, name), dir);
  return dir;
}

/** Writes a small provider directory from text. */
export async function writeProvider(
  root: string,
  name: string,
  files: Record<string, string>,
): Promise<string> {
  const dir = join(root, name);
  await Deno.mkdir(dir, { recursive: true });
  for (const [file, text] of Object.entries(files)) {
    await Deno.mkdir(join(dir, file, ".."), { recursive: true });
    await Deno.writeTextFile(join(dir, file), text);
  }
  return dir;
}

/** A minimal provider module named `name`. */
export function simpleProviderSource(name: string, extra = ""): string {
  return `import { MemoryProvider, type ToolSchema } from "@hermes/memory";
export class P extends MemoryProvider {
  get name(): string { return ${JSON.stringify(name)}; }
  isAvailable(): boolean { return true; }
  initialize(): void {}
  getToolSchemas(): ToolSchema[] { return []; }
  ${extra}
}
`;
}

/** Captured log lines, restored by `Symbol.dispose`. */
export interface CapturedLogs extends Disposable {
  /** `"<level> <message>"` lines. */
  lines: string[];
  /** The messages logged at `level`. */
  at(level: LogLevel): string[];
}

/** Captures the framework's log lines until disposed. */
export function captureLogs(): CapturedLogs {
  const entries: { level: LogLevel; message: string }[] = [];
  const previous = setLogger({
    log(level, message) {
      entries.push({ level, message });
    },
  });
  return {
    get lines() {
      return entries.map((e) => `${e.level} ${e.message}`);
    },
    at(level) {
      return entries.filter((e) => e.level === level).map((e) => e.message);
    },
    [Symbol.dispose]() {
      setLogger(previous);
    },
  };
}

/** The repository root (for `--config` and imports in child scripts). */
export const REPO: string = fileURLToPath(new URL("../../", import.meta.url))
  .replace(/\/$/, "");

/** What a child `deno run` printed. */
export interface ChildRun {
  /** Exit code. */
  code: number;
  /** Standard output. */
  stdout: string;
  /** Standard error. */
  stderr: string;
}

/** Options of {@linkcode runChild}. */
export interface RunChildOptions {
  /** Deno flags (after `run`, before the script). */
  flags?: string[];
  /** Arguments after the script. */
  args?: string[];
  /** Run under a pseudo-terminal (`script -qec`), typing `input`. */
  tty?: boolean;
  /** What to type on standard input. */
  input?: string;
  /** Extra environment. */
  env?: Record<string, string>;
  /** The `--config` file; `null` for none (default: the repo's deno.json). */
  config?: string | null;
}

/**
 * Writes `source` to `<dir>/child.ts` and runs it with the repo's
 * deno.json and exactly `flags` (no flag is added).
 */
export async function runChild(
  dir: string,
  source: string,
  options: RunChildOptions = {},
): Promise<ChildRun> {
  const script = join(dir, `child_${crypto.randomUUID().slice(0, 8)}.ts`);
  await Deno.writeTextFile(script, source);
  const argv = [
    Deno.execPath(),
    "run",
    "--quiet",
    ...(options.config === null
      ? []
      : [`--config=${options.config ?? join(REPO, "deno.json")}`]),
    ...(options.flags ?? []),
    script,
    ...(options.args ?? []),
  ];
  const quote = (s: string) => `'${s.replaceAll("'", "'\\''")}'`;
  const command = options.tty
    ? new Deno.Command("script", {
      args: ["-qec", argv.map(quote).join(" "), "/dev/null"],
      stdin: "piped",
      stdout: "piped",
      stderr: "piped",
      env: { NO_COLOR: "1", ...options.env },
    })
    : new Deno.Command(argv[0] as string, {
      args: argv.slice(1),
      stdin: "piped",
      stdout: "piped",
      stderr: "piped",
      env: { NO_COLOR: "1", ...options.env },
    });
  const child = command.spawn();
  const writer = child.stdin.getWriter();
  if (options.input !== undefined) {
    await writer.write(new TextEncoder().encode(options.input));
  }
  if (!options.tty) await writer.close();
  const output = await child.output().finally(() =>
    writer.close().catch(() => {})
  );
  const decoder = new TextDecoder();
  return {
    code: output.code,
    stdout: decoder.decode(output.stdout),
    stderr: decoder.decode(output.stderr),
  };
}

// deno-lint-ignore no-control-regex
const ANSI_REGEXP = /\x1b\[[0-9;?]*[A-Za-z]/g;

/** What {@linkcode runChildOnTerminal} saw. */
export interface TerminalRun {
  /** Everything the child wrote to the terminal, ANSI codes removed. */
  output: string;
  /** Whether Deno showed a permission prompt (it was answered `y`). */
  prompted: boolean;
  /** Exit code of `script`. */
  code: number;
}

/**
 * Runs `source` like {@linkcode runChild}, but on a pseudo-terminal
 * (`script -qec`); any Deno permission prompt is answered `y`.
 */
export async function runChildOnTerminal(
  dir: string,
  source: string,
  flags: string[],
): Promise<TerminalRun> {
  const script = join(dir, `tty_${crypto.randomUUID().slice(0, 8)}.ts`);
  await Deno.writeTextFile(script, source);
  const quote = (s: string) => `'${s.replaceAll("'", "'\\''")}'`;
  const argv = [
    Deno.execPath(),
    "run",
    "--quiet",
    `--config=${join(REPO, "deno.json")}`,
    ...flags,
    script,
  ];
  const child = new Deno.Command("script", {
    args: ["-qec", argv.map(quote).join(" "), "/dev/null"],
    stdin: "piped",
    stdout: "piped",
    stderr: "null",
    env: { NO_COLOR: "1" },
  }).spawn();
  const writer = child.stdin.getWriter();
  const reader = child.stdout.getReader();
  const decoder = new TextDecoder();
  let output = "";
  let prompted = false;
  const timer = setTimeout(() => {
    try {
      child.kill();
    } catch {
      // Already gone.
    }
  }, 30_000);
  try {
    while (true) {
      const { value, done } = await reader.read();
      if (done) break;
      output += decoder.decode(value, { stream: true });
      if (!prompted && /Allow\? \[y\/n/.test(output)) {
        prompted = true;
        // Deno flushes pending input after printing the prompt: answer later.
        await new Promise((resolve) => setTimeout(resolve, 300));
        await writer.write(new TextEncoder().encode("y\r"));
      }
    }
  } finally {
    clearTimeout(timer);
    await writer.close().catch(() => {});
  }
  const status = await child.status;
  return {
    output: output.replace(ANSI_REGEXP, "").replaceAll("\r", ""),
    prompted,
    code: status.code,
  };
}

/**
 * What `hermes memory setup <name> --yes` records for an installed
 * provider: its manifest's whole request, as `memory.permissions.<name>`.
 *
 * @param dir The provider's directory.
 */
export async function approvalOf(
  dir: string,
): Promise<Record<string, unknown>> {
  const { parsePluginManifest } = await import(
    "../../src/plugins/plugin_manifest.ts"
  );
  let text = "";
  try {
    text = await Deno.readTextFile(join(dir, "plugin.yaml"));
  } catch {
    return {};
  }
  const request =
    (await parsePluginManifest(text, join(dir, "plugin.yaml"))).permissions;
  // Only what it asks for: merged into config.yaml, an empty list would
  // replace what the user granted there.
  const approval: Record<string, unknown> = {};
  for (const key of ["read", "write", "env", "net"] as const) {
    if (request[key].length > 0) approval[key] = request[key];
  }
  if (request.npm) approval.npm = true;
  return approval;
}

/**
 * Records the user's approval of installed providers' requests in the
 * profile's `config.yaml`, as `hermes memory setup <name> --yes` would
 * (merged with what the file already holds).
 *
 * @param home The profile home.
 * @param names The providers, installed in `<home>/plugins/`.
 */
export async function approveInstalled(
  home: string,
  names: string[],
): Promise<void> {
  const { saveConfig } = await import("../../src/config/config.ts");
  const { loadConfig } = await import("../../src/config/config.ts");
  const current = (await loadConfig({ hermesHome: home })) as {
    memory?: { permissions?: Record<string, Record<string, unknown>> };
  };
  const permissions: Record<string, unknown> = {};
  for (const name of names) {
    const mine = current.memory?.permissions?.[name] ?? {};
    const approval = await approvalOf(join(home, "plugins", name));
    for (const [key, value] of Object.entries(approval)) {
      const had = mine[key];
      approval[key] = Array.isArray(had) && Array.isArray(value)
        ? [...new Set([...had, ...value])]
        : value;
    }
    permissions[name] = approval;
  }
  await saveConfig({ memory: { permissions } }, { hermesHome: home });
}
