/**
 * The `yaml` package, loaded on first use. Deno loads it through its
 * CommonJS emulation (the package's `exports` map puts `"node"` before the
 * ESM build), which costs a command that never parses YAML tens of
 * milliseconds, so nothing imports it statically: a module that parses
 * YAML awaits {@linkcode loadYamlModule} first (and imports only its types).
 *
 * @module
 */

/** The `yaml` package's exports. */
export type YamlModule = typeof import("npm:yaml@^2.9.1");

let loaded: Promise<YamlModule> | undefined;
let ready: YamlModule | undefined;

/**
 * The `yaml` package, imported once per process (or worker) on first call.
 *
 * @returns The package's exports.
 *
 * @example Parsing a document
 * ```ts
 * import { loadYamlModule } from "./yaml_module.ts";
 * import assert from "node:assert/strict";
 * const yaml = await loadYamlModule();
 * assert.deepEqual(yaml.parse("a: 1"), { a: 1 });
 * ```
 */
export function loadYamlModule(): Promise<YamlModule> {
  loaded ??= import("npm:yaml@^2.9.1").then((module) => ready = module);
  return loaded;
}

/**
 * The `yaml` package if {@linkcode loadYamlModule} has loaded it, for code
 * that must stay synchronous (it asks its async caller to load it first).
 *
 * @returns The package's exports, or `undefined` before it is loaded.
 *
 * @example Before and after loading
 * ```ts
 * import { loadedYamlModule, loadYamlModule } from "./yaml_module.ts";
 * import assert from "node:assert/strict";
 * await loadYamlModule();
 * assert.ok(loadedYamlModule() !== undefined);
 * ```
 */
export function loadedYamlModule(): YamlModule | undefined {
  return ready;
}
