/**
 * The `hermes` command line entry point, started by the launcher
 * (`src/launcher/main.ts`) with the permissions `hermes memory permissions`
 * prints. As a library, use `main()` from `@hermes/memory/cli`, which never
 * exits the process.
 *
 * Who imports it: nobody; the launcher runs it in its own process.
 *
 * ```sh
 * deno run --quiet --no-prompt --cached-only --allow-read=… src/cli/main.ts memory status
 * ```
 *
 * @module
 */

import { lazyImport } from "../_util/lazy_import.ts";
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
  // Lazy: Deno reads a literal dynamic import's graph at start-up (68 files
  // for `hermes --help`).
  let loaded: typeof import("./run.ts");
  try {
    loaded = await lazyImport<typeof import("./run.ts")>(
      "./run.ts",
      import.meta.url,
    );
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
