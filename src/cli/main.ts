/**
 * The `hermes` command line entry point: `hermes memory …` plus the active
 * memory provider's own `hermes <provider> …` tree.
 *
 * Started by the launcher (`src/launcher/main.ts`: `deno task hermes`, the
 * `hermes` command of `deno install -g`, or the `jsr:` entry), which gives
 * it exactly the permissions the profile's configuration needs;
 * `hermes memory permissions` prints that command:
 *
 * ```sh
 * deno run --quiet --no-prompt --cached-only --allow-read=… src/cli/main.ts memory status
 * ```
 *
 * `hermes --help` is answered here without loading `yaml` or any provider
 * code; everything else loads the command tree (`run.ts`).
 * As a library, use `main()` from `@hermes/memory/cli`, which never exits
 * the process; only this file calls `Deno.exit`.
 *
 * Who imports it: nobody; the launcher runs it in a child `deno run`.
 *
 * @module
 */

import { readProcessEnv } from "../core/env.ts";
import {
  isRootHelpRequest,
  parseProviderCommandLine,
  ROOT_HELP_ENV,
  writeRootHelp,
} from "./root_help.ts";

if (import.meta.main) {
  const args = Deno.args;
  const provider = isRootHelpRequest(args)
    ? parseProviderCommandLine(readProcessEnv(ROOT_HELP_ENV))
    : null;
  if (provider !== null) {
    // The launcher said which provider command the root help lists.
    await writeRootHelp(provider);
    Deno.exit(0);
  }
  // A computed specifier on purpose: Deno reads the whole graph of a
  // literal dynamic import at start-up (68 files for `hermes --help`). The
  // module is named in the launcher's cache step and compile's --include.
  const run = new URL("./run.ts", import.meta.url).href;
  let loaded: typeof import("./run.ts");
  try {
    loaded = await import(run) as typeof import("./run.ts");
  } catch (error) {
    // Without read access to the framework the command tree cannot load.
    const { permissionDenial, LAUNCHER_HINT } = await import(
      "./permission_problem.ts"
    );
    const denial = permissionDenial(error);
    if (denial === undefined) throw error;
    console.error(
      `error: permission denied: hermes may not read its own files (this run lacks ${denial.flag})\nhint: ${LAUNCHER_HINT}`,
    );
    Deno.exit(1);
  }
  Deno.exit(await loaded.main(args));
}
