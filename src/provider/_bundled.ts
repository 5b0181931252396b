/**
 * What the bundled providers use beside the contract: paths with Node's
 * rules (without evaluating Deno's Node layer: `node:path` and `node:url`
 * load about 50 of its modules), values read the way Hermes' Python code
 * reads them, and {@linkcode lazyImport}. Not published as an entry: third-party
 * providers get the contract only (`@hermes/memory/provider`); the hygiene
 * test lets only `plugins/` import this file. The worker bootstrap preloads
 * it, so a bundled provider's sandbox needs no read access to it.
 *
 * @module
 */

export { lazyImport } from "../_util/lazy_import.ts";
export { pythonStr } from "../_util/python_json.ts";
export { pythonStrip } from "../_util/python_text.ts";
export {
  pythonFloat,
  pythonInt,
  pythonTruthy,
} from "../_util/python_values.ts";
export { isTruthyEnvValue } from "../core/env.ts";
export {
  basename,
  dirname,
  extname,
  fileURLToPath,
  isAbsolute,
  join,
  normalize,
  pathToFileURL,
  relative,
  resolve,
  sep,
} from "../_util/path.ts";
