/**
 * `lazyImport<typeof import("./x.ts")>("./x.ts", import.meta.url)`: imports
 * one of the project's own modules when first needed.
 *
 * Why not a literal `import("./x.ts")`: Deno reads the whole graph of a
 * literal dynamic import when the importing module loads, so start-up would
 * read every command's modules. The computed URL defers that; the type
 * argument (`typeof import` of the same path) keeps `deno check` on it, so a
 * renamed export fails the check. `typeof import` is a type dependency:
 * `deno run` does not read it, while `deno cache`/`deno install --entrypoint`
 * and `deno check` follow it, so the module is cached and checked with the
 * entry that names it. The hygiene test requires both paths to be equal and
 * reads them for its layer and cycle rules. A table of loads keys the
 * `typeof import` of each path by that same path instead
 * (`src/cli/commands/memory_group.ts`), so its type still names its module.
 *
 * @module
 */

/**
 * Imports `path`, resolved against `base` (pass `import.meta.url`).
 *
 * @typeParam T `typeof import(path)`, with the same path.
 */
export function lazyImport<T>(path: string, base: string): Promise<T> {
  return import(new URL(path, base).href);
}
