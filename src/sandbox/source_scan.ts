// What a provider's sources import, read as text before its worker starts:
// `npm:` (refused unless granted) and `@hermes/memory` (needs the full worker
// entry).

import { extname, join } from "../_util/path.ts";

const SOURCE_EXTENSIONS = new Set([
  ".ts",
  ".tsx",
  ".mts",
  ".cts",
  ".js",
  ".jsx",
  ".mjs",
  ".cjs",
]);
const NPM_SPECIFIER_REGEXP = /["'`]npm:/;
const FULL_FRAMEWORK_REGEXP = /["'`]@hermes\/memory["'`]/;

/** What the loader learns from a provider's source files. */
export interface SourceScan {
  npmFile?: string;
  /** Whether any file imports the whole framework (`@hermes/memory`). */
  fullFramework: boolean;
}

/**
 * Reads a provider directory's source files once (at most 2000 entries,
 * files up to 4 MiB, `node_modules` skipped) for the loader's checks.
 */
export async function scanProviderSources(dir: string): Promise<SourceScan> {
  const scan: SourceScan = { fullFramework: false };
  const queue = [dir];
  let budget = 2000;
  while (queue.length > 0 && budget > 0) {
    const current = queue.shift() as string;
    for await (const entry of Deno.readDir(current)) {
      if (--budget <= 0) break;
      const path = join(current, entry.name);
      if (entry.isDirectory && entry.name !== "node_modules") {
        queue.push(path);
      } else if (entry.isFile && SOURCE_EXTENSIONS.has(extname(entry.name))) {
        const info = await Deno.stat(path);
        if (info.size > 4 << 20) continue;
        const text = await Deno.readTextFile(path);
        if (scan.npmFile === undefined && NPM_SPECIFIER_REGEXP.test(text)) {
          scan.npmFile = path;
        }
        if (FULL_FRAMEWORK_REGEXP.test(text)) scan.fullFramework = true;
      }
    }
  }
  return scan;
}
