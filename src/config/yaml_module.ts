/**
 * The `yaml` package, loaded on first use: Deno loads it through CommonJS
 * emulation, which would cost every command tens of milliseconds at import.
 *
 * @module
 */

/** The `yaml` package's exports. */
export type YamlModule = typeof import("npm:yaml@^2.9.1");

let loaded: Promise<YamlModule> | undefined;
let ready: YamlModule | undefined;

/** The `yaml` package, imported once per process (or worker) on first call. */
export function loadYamlModule(): Promise<YamlModule> {
  loaded ??= import("npm:yaml@^2.9.1").then((module) => ready = module);
  return loaded;
}

/**
 * The `yaml` package if {@linkcode loadYamlModule} has loaded it, for code
 * that must stay synchronous (it asks its async caller to load it first).
 */
export function loadedYamlModule(): YamlModule | undefined {
  return ready;
}
