// The README's library example ("Using it from another Deno program"),
// taken from README.md as written: the code between the
// <!-- example:library --> markers and the shell lines that run it.
// tests/library/readme_example_test.ts runs both verbatim; other tests run
// the code against a local checkout or one served over HTTP, made runnable
// for them: the user's text and the model's reply come from the command
// line, and what the example computed is printed as one JSON line.
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { REPO } from "./plugin_fixtures.ts";
import { type CommandResult, runCommand } from "./run_command.ts";

/** The specifier the README's example imports the framework by. */
export const README_SPECIFIER = "jsr:@hermes/memory@^0.1";

/** The README's library example, unchanged. */
export interface ReadmeLibraryExampleText {
  /** The `ts` block. */
  code: string;
  /** The lines of the `sh` block beside it, in order. */
  commands: string[];
}

/**
 * The example's code and shell lines, as README.md has them.
 *
 * @returns Both.
 */
export async function readmeLibraryExampleText(): Promise<
  ReadmeLibraryExampleText
> {
  const readme = await Deno.readTextFile(join(REPO, "README.md"));
  const section = readme.match(
    /<!-- example:library -->([\s\S]*?)<!-- \/example:library -->/,
  )?.[1];
  const code = section?.match(/```ts\n([\s\S]*?)```/)?.[1];
  const sh = section?.match(/```sh\n([\s\S]*?)```/)?.[1];
  if (code === undefined || sh === undefined) {
    throw new Error(
      "README.md has no <!-- example:library --> section with a ts and a sh block",
    );
  }
  const commands = sh.split("\n").filter((line) => line.trim() !== "");
  return { code, commands };
}

/** The example's code block, unchanged. */
export async function readmeLibraryExampleCode(): Promise<string> {
  return (await readmeLibraryExampleText()).code;
}

/**
 * The example made runnable by a test: the framework imported from
 * `specifier` (the checkout's mod.ts by default), `userText` and `reply`
 * taken from `Deno.args` when given, and after the example's own code one
 * JSON line with the external provider's name, the recalled context, the
 * system prompt and the shutdown drain state.
 *
 * @param specifier Where the framework is imported from.
 * @returns The script.
 */
export async function readmeLibraryExample(
  specifier: string = pathToFileURL(join(REPO, "mod.ts")).href,
): Promise<string> {
  const code = await readmeLibraryExampleCode();
  if (!code.includes(`"${README_SPECIFIER}"`)) {
    throw new Error(
      `the README's example no longer imports ${README_SPECIFIER}`,
    );
  }
  let arg = 0;
  const runnable = code
    .replace(`"${README_SPECIFIER}"`, JSON.stringify(specifier))
    .replace(
      /^const (userText|reply) = (".*");$/gm,
      (_all, name: string, text: string) =>
        `const ${name} = Deno.args[${arg++}] ?? ${text};`,
    );
  return `${runnable}
await memory.close();
console.log(JSON.stringify({
  provider: manager.providers.find((p) => p.name !== "builtin")?.name ?? null,
  recalled,
  systemPrompt,
  drain: manager.shutdownDrainState,
}));
`;
}

/** Options of {@linkcode runReadmeCommands}. */
export interface RunReadmeCommandsOptions {
  /** Variables for the shell (added to a clean environment). */
  env?: Record<string, string>;
  /** Flags inserted before `main.ts` in every line (a test's own setting). */
  flags?: string[];
  /** Arguments after `main.ts` on the `deno run` line. */
  args?: string[];
}

/**
 * Runs the README's shell lines in `project` (which holds `main.ts`), each
 * in `sh -c` as typed, optionally with flags inserted before `main.ts` and
 * arguments after it. Every line must succeed.
 *
 * @param project The project directory.
 * @param options Environment, inserted flags, arguments.
 * @returns The last line's (the `deno run`'s) result.
 */
export async function runReadmeCommands(
  project: string,
  options: RunReadmeCommandsOptions = {},
): Promise<CommandResult & { line: string }> {
  const { commands } = await readmeLibraryExampleText();
  const last = commands.at(-1) ?? "";
  if (commands.length < 2 || !/^deno run .* main\.ts$/.test(last)) {
    throw new Error(
      `README's run lines changed shape:\n${commands.join("\n")}`,
    );
  }
  const quote = (word: string) => `'${word.replaceAll("'", "'\\''")}'`;
  const flags = (options.flags ?? []).map(quote).join(" ");
  let result: CommandResult | undefined;
  let line = "";
  for (const command of commands) {
    const args = command === last ? (options.args ?? []).map(quote) : [];
    line = command.replace(
      / main\.ts$/,
      [flags, "main.ts", ...args].filter((w) => w !== "").map((w) => ` ${w}`)
        .join(""),
    );
    result = await runCommand("sh", ["-c", line], {
      cwd: project,
      env: options.env,
    });
    if (result.code !== 0) return { ...result, line };
  }
  return { ...result!, line };
}
