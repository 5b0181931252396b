// The command blocks of a Markdown page, and a runner that runs them as a
// reader would: in order, from the repository root, in one fresh home.
//
// A `sh`/`bash`/`shell` block is one script; a `console` block is the `$ `
// lines (the rest is the output it shows, which must appear in that order; a
// line holding only `…` stands for lines left out).
// An HTML comment on the line before a block says how to run it:
//
//   <!-- run: skip (reason) -->   not run; the reason is required
//   <!-- run: honcho-server -->   run against the Honcho test server: every
//                                 http://127.0.0.1:PORT in it is its URL
//   <!-- run: until REGEX -->     a long-running command (one line): passes
//                                 once a line of its output matches, then
//                                 it is stopped
//   <!-- run: exit N -->          must exit with N (otherwise 0)
import { join } from "node:path";

/** How a block is run. */
export type BlockMode =
  | { kind: "run"; exitCode: number }
  | { kind: "skip"; reason: string }
  | { kind: "honcho-server" }
  | { kind: "until"; pattern: RegExp };

/** One command block of a page. */
export interface CommandBlock {
  /** The line of the opening fence (1-based). */
  line: number;
  /** The fence's language: `sh`, `bash`, `shell` or `console`. */
  lang: string;
  /** The script to run (a console block's `$ ` lines without the prompt). */
  script: string;
  /** A console block's output lines, in order (empty for scripts). */
  expected: string[];
  mode: BlockMode;
}

const COMMAND_LANGS = new Set(["sh", "bash", "shell", "console"]);

function parseMarker(text: string, line: number): BlockMode {
  const skip = /^skip \((.+)\)$/.exec(text);
  if (skip) return { kind: "skip", reason: skip[1]! };
  if (text === "honcho-server") return { kind: "honcho-server" };
  const until = /^until (.+)$/.exec(text);
  if (until) return { kind: "until", pattern: new RegExp(until[1]!, "m") };
  const exit = /^exit (\d+)$/.exec(text);
  if (exit) return { kind: "run", exitCode: Number(exit[1]) };
  throw new Error(
    `line ${line}: unknown run marker '${text}' (use 'skip (reason)', 'honcho-server', 'until REGEX' or 'exit N')`,
  );
}

/** The command blocks of `markdown`, each with how it is run. */
export function commandBlocks(markdown: string): CommandBlock[] {
  const lines = markdown.split("\n");
  const blocks: CommandBlock[] = [];
  let marker: { text: string; line: number } | undefined;
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    const comment = /^<!--\s*run:\s*(.*?)\s*-->\s*$/.exec(line);
    if (comment) {
      marker = { text: comment[1]!, line: i + 1 };
      continue;
    }
    const fence = /^(`{3,})(\S*)/.exec(line);
    if (!fence) {
      if (line.trim() !== "") marker = undefined;
      continue;
    }
    const start = i;
    const body: string[] = [];
    for (i++; i < lines.length && !lines[i]!.startsWith(fence[1]!); i++) {
      body.push(lines[i]!);
    }
    const lang = fence[2]!;
    if (!COMMAND_LANGS.has(lang)) {
      if (marker) {
        throw new Error(
          `line ${marker.line}: a run marker before a '${lang}' block`,
        );
      }
      continue;
    }
    const mode = marker
      ? parseMarker(marker.text, marker.line)
      : { kind: "run" as const, exitCode: 0 };
    marker = undefined;
    const block = { line: start + 1, lang, mode, expected: [] as string[] };
    if (lang !== "console") {
      blocks.push({ ...block, script: body.join("\n") });
      continue;
    }
    const commands: string[] = [];
    let continued = false;
    for (const text of body) {
      if (continued || text.startsWith("$ ")) {
        commands.push(continued ? text : text.slice(2));
        continued = text.endsWith("\\");
      } else if (text.trim() !== "" && text.trim() !== "…") {
        block.expected.push(text.trimEnd());
      }
    }
    blocks.push({ ...block, script: commands.join("\n") });
  }
  return blocks;
}

/** What running one block gave. */
export interface BlockResult {
  ok: boolean;
  /** Why it failed, with the output (empty when it passed). */
  problem: string;
}

/** Where and how blocks run. */
export interface BlockEnvironment {
  /** The working directory (the repository root). */
  cwd: string;
  /** The whole environment of every block. */
  env: Record<string, string>;
  /** Paths shown as `/home/me` in the page (the temporary home). */
  home: string;
  /** The Honcho test server's URL, for `honcho-server` blocks. */
  honchoUrl?: () => Promise<string>;
  /** Milliseconds a block may take. */
  timeoutMs: number;
}

const decoder = new TextDecoder();

/** Runs one block (not a skipped one) and says whether it worked as written. */
export async function runBlock(
  block: CommandBlock,
  where: BlockEnvironment,
): Promise<BlockResult> {
  const { mode } = block;
  if (mode.kind === "skip") throw new Error("a skipped block is not run");
  let script = block.script;
  if (mode.kind === "honcho-server") {
    if (!where.honchoUrl) throw new Error("no Honcho test server given");
    const url = await where.honchoUrl();
    script = script.replace(/http:\/\/127\.0\.0\.1:\d+/g, url);
  }
  if (mode.kind === "until") return await runUntil(script, mode.pattern, where);
  const output = await bash(
    ["-e", "-u", "-o", "pipefail", "-c", `exec 2>&1\n${script}`],
    where,
    AbortSignal.timeout(where.timeoutMs),
  ).output();
  const out = decoder.decode(output.stdout).replaceAll(where.home, "/home/me");
  const want = mode.kind === "run" ? mode.exitCode : 0;
  if (output.code !== want) {
    return {
      ok: false,
      problem: `exit code ${output.code} (the page expects ${want}):\n${out}`,
    };
  }
  const missing = missingOutput(block.expected, out);
  if (missing !== undefined) {
    return {
      ok: false,
      problem:
        `the output lacks the shown line '${missing}' (in order):\n${out}`,
    };
  }
  return { ok: true, problem: "" };
}

/** `bash args…` in the block environment, output (stderr included) piped. */
function bash(
  args: string[],
  where: BlockEnvironment,
  signal?: AbortSignal,
): Deno.Command {
  return new Deno.Command("bash", {
    args,
    cwd: where.cwd,
    clearEnv: true,
    env: where.env,
    stdin: "null",
    stdout: "piped",
    stderr: "null",
    signal,
  });
}

/** The first shown line not found, in order, among the output's lines. */
function missingOutput(expected: string[], out: string): string | undefined {
  const lines = out.split("\n").map((l) => l.trimEnd());
  let at = 0;
  for (const want of expected) {
    const found = lines.indexOf(want, at);
    if (found < 0) return want;
    at = found + 1;
  }
  return undefined;
}

async function runUntil(
  script: string,
  pattern: RegExp,
  where: BlockEnvironment,
): Promise<BlockResult> {
  if (script.trim().includes("\n")) {
    throw new Error("an 'until' block holds one command");
  }
  // exec: the command replaces bash, so stopping it stops the command.
  const child = bash(["-c", `exec 2>&1; exec ${script.trim()}`], where)
    .spawn();
  let out = "";
  let matched = false;
  const timer = setTimeout(() => child.kill("SIGTERM"), where.timeoutMs);
  try {
    for await (const chunk of child.stdout) {
      out += decoder.decode(chunk, { stream: true });
      if (pattern.test(out)) {
        matched = true;
        child.kill("SIGTERM");
        break;
      }
    }
  } finally {
    clearTimeout(timer);
  }
  const status = await child.status;
  if (matched) return { ok: true, problem: "" };
  return {
    ok: false,
    problem:
      `ended (exit code ${status.code}) before printing a line matching ${pattern}:\n${out}`,
  };
}

/** The pinned Deno version of `tools/deno` (`version="…"`). */
async function pinnedDenoVersion(repo: string): Promise<string> {
  const text = await Deno.readTextFile(join(repo, "tools", "deno"));
  const version = /^version="([^"]+)"$/m.exec(text)?.[1];
  if (!version) throw new Error("tools/deno names no version");
  return version;
}

/**
 * A fresh temporary home (removed on dispose) in which the pinned Deno is
 * where `tools/deno` installs it, as a link to the running Deno: tools/deno
 * then needs neither npm nor the network.
 */
export async function freshMachine(
  repo: string,
  prefix: string,
): Promise<{ home: string } & AsyncDisposable> {
  const home = await Deno.makeTempDir({ prefix });
  const version = await pinnedDenoVersion(repo);
  const bin = join(home, ".cache", "hermes-memory", `deno-${version}`);
  await Deno.mkdir(join(bin, "node_modules", ".bin"), { recursive: true });
  await Deno.symlink(
    Deno.execPath(),
    join(bin, "node_modules", ".bin", "deno"),
  );
  return {
    home,
    async [Symbol.asyncDispose]() {
      await Deno.remove(home, { recursive: true });
    },
  };
}
