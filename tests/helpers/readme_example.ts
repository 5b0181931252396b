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
