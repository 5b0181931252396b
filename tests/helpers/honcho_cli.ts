// Helpers for the `hermes honcho …` tests: throwaway user homes (HOME with a
// `.hermes` root and profiles), running the real CLI process
// (src/cli/main.ts) with the flags of the `hermes` task plus the Honcho
// provider's grant, in a pipe or a pseudo-terminal, and running the command
// tree in-process.
import "./test_home.ts";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import {
  type CliIo,
  createCommand,
  memoryCliIo,
  type MemoryCliIoOptions,
} from "../../src/cli/mod.ts";
import { withHermesHome } from "../../src/profile/context_scope.ts";
import { HERMES_ENV_VARS, TERMINAL_ENV_VARS } from "../../src/cli/run_flags.ts";
import { registerCli } from "../../plugins/memory/honcho/cli.ts";
import { type PtySession, spawnPty } from "./pty.ts";

export const ROOT: string = fileURLToPath(new URL("../..", import.meta.url))
  .replace(/\/$/, "");
const DENO_DIR = Deno.env.get("DENO_DIR") ??
  join(Deno.env.get("HOME") ?? "/root", ".cache", "deno");

/** Variables the Honcho CLI reads (beyond the `hermes` CLI's own). */
export const HONCHO_ENV_VARS: readonly string[] = [
  "HONCHO_API_KEY",
  "HONCHO_BASE_URL",
  "HONCHO_URL",
  "HONCHO_ENVIRONMENT",
  "HONCHO_TIMEOUT",
  "HERMES_HONCHO_HOST",
  "HONCHO_LOGGING",
  "HONCHO_INJECTION_LOG",
  "USER",
];

/** The `hermes` CLI's environment grant (as in the `hermes` task). */
const HERMES_CLI_ENV_VARS: readonly string[] = [
  ...HERMES_ENV_VARS,
  ...TERMINAL_ENV_VARS,
];

/** A throwaway user: `HOME`, its `.hermes` root, and a working directory. */
export interface TestUser extends AsyncDisposable {
  /** `HOME`. */
  home: string;
  /** `$HOME/.hermes`, the default profile. */
  root: string;
  /** `$HOME/work/project`, the working directory of commands. */
  cwd: string;
}

/**
 * Creates a user home with `.hermes/config.yaml` selecting Honcho (unless
 * `provider` is `""`).
 */
export async function testUser(
  options: { provider?: string } = {},
): Promise<TestUser> {
  const home = await Deno.realPath(
    await Deno.makeTempDir({ prefix: "hermes-honcho-cli-" }),
  );
  const root = join(home, ".hermes");
  const cwd = join(home, "work", "project");
  await Deno.mkdir(root, { recursive: true });
  await Deno.mkdir(cwd, { recursive: true });
  const provider = options.provider ?? "honcho";
  if (provider) {
    await Deno.writeTextFile(
      join(root, "config.yaml"),
      `memory:\n  provider: ${provider}\n`,
    );
  }
  return {
    home,
    root,
    cwd,
    async [Symbol.asyncDispose](): Promise<void> {
      await Deno.chmod(home, 0o755).catch(() => {});
      await Deno.remove(home, { recursive: true }).catch(() => {});
    },
  };
}

/** Creates `<root>/profiles/<name>` (with its own config.yaml). */
export async function addProfile(
  user: TestUser,
  name: string,
): Promise<string> {
  const dir = join(user.root, "profiles", name);
  await Deno.mkdir(dir, { recursive: true });
  await Deno.writeTextFile(
    join(dir, "config.yaml"),
    "memory:\n  provider: honcho\n",
  );
  return dir;
}

/** Writes a JSON file (mode 0600), creating its directory. */
export async function writeJson(path: string, value: unknown): Promise<void> {
  await Deno.mkdir(join(path, ".."), { recursive: true });
  await Deno.writeTextFile(path, `${JSON.stringify(value, null, 2)}\n`, {
    mode: 0o600,
  });
}

/** Reads a JSON file. */
export async function readJson(path: string): Promise<Record<string, unknown>> {
  return JSON.parse(await Deno.readTextFile(path));
}

/** The script the tests run: the real `hermes` entry point. */
export const HERMES_MAIN: string = join(ROOT, "src", "cli", "main.ts");

/** The `deno run` flags: the `hermes` task's, plus Honcho's grant. */
export function runFlags(user: TestUser): string[] {
  return [
    "run",
    "--no-prompt",
    "--cached-only",
    "--frozen",
    `--config=${join(ROOT, "deno.json")}`,
    `--allow-read=${user.root},${ROOT},${join(user.home, ".honcho")},${
      join(user.home, "work")
    },${join(user.home, ".openclaw")}`,
    `--allow-write=${user.root}`,
    `--allow-env=${[...HERMES_CLI_ENV_VARS, ...HONCHO_ENV_VARS].join(",")}`,
    "--allow-net=127.0.0.1",
    // Each sandboxed provider runs in its own deno process.
    `--allow-run=${Deno.execPath()}`,
  ];
}

function childEnv(
  user: TestUser,
  env: Record<string, string>,
): Record<string, string> {
  return {
    HOME: user.home,
    PATH: "/usr/bin:/bin",
    DENO_DIR,
    NO_COLOR: "1",
    ...env,
  };
}

/** The result of one CLI run. */
export interface RunResult {
  code: number;
  out: string;
  err: string;
}

async function runRaw(
  user: TestUser,
  args: string[],
  options: { env?: Record<string, string>; stdin?: string; cwd?: string },
): Promise<RunResult> {
  const child = new Deno.Command(Deno.execPath(), {
    args: [...runFlags(user), HERMES_MAIN, ...args],
    cwd: options.cwd ?? user.cwd,
    clearEnv: true,
    env: childEnv(user, options.env ?? {}),
    stdin: options.stdin === undefined ? "null" : "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  if (options.stdin !== undefined) {
    const writer = child.stdin.getWriter();
    await writer.write(new TextEncoder().encode(options.stdin));
    await writer.close();
  }
  const output = await child.output();
  const decoder = new TextDecoder();
  return {
    code: output.code,
    out: decoder.decode(output.stdout),
    err: decoder.decode(output.stderr),
  };
}

/** Runs `hermes <args>` as a process (stdin a pipe or /dev/null). */
export async function hermes(
  user: TestUser,
  args: string[],
  options: { env?: Record<string, string>; stdin?: string; cwd?: string } = {},
): Promise<RunResult> {
  return await runRaw(user, args, options);
}

/**
 * Runs `hermes <args>` as a process that may load the Honcho provider's
 * sandbox worker: the flags of {@linkcode hermes} plus the worker's network
 * grant (`api.honcho.dev` is granted, never reached: the tests point
 * `honcho.json` at the local test server).
 */
export async function hermesWithWorker(
  user: TestUser,
  args: string[],
  options: { env?: Record<string, string> } = {},
): Promise<RunResult> {
  const output = await new Deno.Command(Deno.execPath(), {
    args: [
      ...runFlags(user).filter((flag) => !flag.startsWith("--allow-net")),
      "--allow-net=127.0.0.1,api.honcho.dev",
      HERMES_MAIN,
      ...args,
    ],
    cwd: user.cwd,
    clearEnv: true,
    env: childEnv(user, options.env ?? {}),
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

/** Runs `hermes <args>` in a pseudo-terminal. */
export function hermesPty(
  user: TestUser,
  args: string[],
  options: { env?: Record<string, string>; cwd?: string } = {},
): Promise<PtySession> {
  return Promise.resolve(
    spawnPty([Deno.execPath(), ...runFlags(user), HERMES_MAIN, ...args], {
      cwd: options.cwd ?? user.cwd,
      env: { ...childEnv(user, options.env ?? {}), TERM: "xterm-256color" },
    }),
  );
}

/** Runs `hermes honcho <args>` in-process against a scripted I/O. */
export async function honchoInProcess(
  home: string,
  args: string[],
  options: MemoryCliIoOptions = {},
): Promise<{ code: number; io: ReturnType<typeof memoryCliIo> }> {
  const io = memoryCliIo(options);
  const code = await withHermesHome(home, () => runTree(io, args));
  return { code, io };
}

async function runTree(io: CliIo, args: string[]): Promise<number> {
  const context = { io, exitCode: 0 };
  const root = createCommand("hermes", context);
  await registerCli(root.command("honcho"));
  try {
    await root.parseAsync(["honcho", ...args]);
    return context.exitCode;
  } catch (error) {
    const exit = (error as { exitCode?: number }).exitCode;
    if (typeof exit === "number") return exit === 0 ? 0 : 2;
    throw error;
  }
}

/** Removes the volatile parts of output for example transcripts. */
export function scrub(text: string, user: TestUser, url?: string): string {
  let out = text.replaceAll(user.home, "/home/me");
  if (url) out = out.replaceAll(url, "http://127.0.0.1:8000");
  return out;
}
