/**
 * The modules the framework starts or imports by a URL computed at run time,
 * named here as type references so that `deno cache` / `deno install` of
 * anything that imports `@hermes/memory` fetches them too (both follow type
 * dependencies; `deno run` does not read them), `deno run --cached-only`
 * then finds them, and `deno check` checks them:
 *
 * - the entry modules of a provider's sandbox (`src/provider/worker_*.ts`)
 *   and the host's watchdog (`src/sandbox/watchdog_process.ts`), which the
 *   host starts by URL;
 * - the bundled providers, which the loader imports by a runtime value so
 *   that their whole graph is checked against the sandbox's permissions.
 *
 * Type references, not `import()`: `worker_bootstrap_full.ts` preloads
 * `mod.ts`, and a runtime edge back to it would be an import cycle.
 * When a sandbox entry module is renamed or added, update this list (a test
 * in tests/library/ runs an agent with `--cached-only` after one
 * `deno cache`, so a missing entry fails there).
 *
 * @module
 */

/** Never used as a value: the type references are what counts. */
export type ModulesLoadedByUrl = [
  typeof import("./src/provider/worker_bootstrap.ts"),
  typeof import("./src/provider/worker_bootstrap_full.ts"),
  typeof import("./src/sandbox/watchdog_process.ts"),
  typeof import("./plugins/memory/archive/mod.ts"),
  typeof import("./plugins/memory/honcho/mod.ts"),
];
