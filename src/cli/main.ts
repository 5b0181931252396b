/**
 * The `hermes` command line entry point: `hermes memory …` plus the active
 * memory provider's own `hermes <provider> …` tree.
 *
 * Run it with the flags of the `hermes` task (see `docs/readme/cli.md`):
 *
 * ```sh
 * deno run --no-prompt --cached-only --allow-read=… src/cli/main.ts memory status
 * ```
 *
 * {@linkcode main} never exits the process; only the `import.meta.main`
 * block of this file calls `Deno.exit`.
 *
 * @module
 */

import { main } from "./run.ts";

export { buildProgram, main } from "./run.ts";

if (import.meta.main) {
  const code = await main(Deno.args);
  Deno.exit(code);
}
