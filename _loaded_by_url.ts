/**
 * The modules the framework loads by a URL computed at run time, named
 * here as literal `import()`s so that they belong to the static module
 * graph of everything that imports `@hermes/memory`:
 *
 * - the entry modules of a provider's sandbox (`src/provider/worker_*.ts`),
 *   which the host starts by URL;
 * - the bundled providers, which the loader imports by a runtime value so
 *   that their whole graph is checked against the sandbox's permissions.
 *
 * Because of this list, `deno cache main.ts` (or `deno install`) of an
 * agent fetches them too, `deno run --cached-only` then finds them, and
 * `deno compile` embeds them. {@linkcode modulesLoadedByUrl} is never
 * called: the framework itself never imports them from here.
 *
 * When a sandbox entry module is renamed or added, update this list (a test
 * in tests/library/ runs an agent with `--cached-only` after one
 * `deno cache`, so a missing entry fails there).
 *
 * @module
 */

/**
 * Never called: the literal specifiers are what counts.
 *
 * @returns The modules' import promises.
 */
export function modulesLoadedByUrl(): Promise<unknown>[] {
  return [
    import("./src/provider/worker_bootstrap.ts"),
    import("./src/provider/worker_bootstrap_full.ts"),
    import("./plugins/memory/archive/mod.ts"),
    import("./plugins/memory/honcho/mod.ts"),
  ];
}
