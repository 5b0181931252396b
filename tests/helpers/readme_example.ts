// The README's library example (between `<!-- example:library -->` and
// `<!-- /example:library -->`), taken from README.md as written and made
// runnable: the user's text and the model's reply come from the command
// line, and what the example computed is printed as one JSON line. Tests run
// it as a user would, in a child process, against a local checkout or one
// served over HTTP.
import { join } from "node:path";
import { REPO } from "./plugin_fixtures.ts";

/** The example's code block, unchanged. */
export async function readmeLibraryExampleCode(): Promise<string> {
  const readme = await Deno.readTextFile(join(REPO, "README.md"));
  const section = readme.split("<!-- example:library -->")[1]
    ?.split("<!-- /example:library -->")[0];
  const block = section?.match(/```ts[^\n]*\n([\s\S]*?)```/);
  if (!block?.[1]) throw new Error("README.md has no library example");
  return block[1];
}

/**
 * The runnable script: the example between a prelude that defines
 * `userText` and `reply` and an epilogue that prints what it computed.
 */
export async function readmeLibraryExample(): Promise<string> {
  const code = await readmeLibraryExampleCode();
  return `const userText = Deno.args[0] ?? "hello";
const reply = Deno.args[1] ?? "hi";
${code}
console.log(JSON.stringify({
  provider: external?.name ?? null,
  recalled,
  systemPrompt,
  drain: manager.shutdownDrainState,
}));
`;
}
