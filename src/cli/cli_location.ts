// Where the CLI's entry point is, its flags, and the step filling Deno's
// module cache for it. No imports: the launcher uses it on every start.

/** Where the CLI's entry point is and the flags its location needs. */
interface CliLocation {
  /** A path for local files, else a URL. */
  entry: string;
  /** `--config` of its `deno.json`, or an import map. */
  flags: string[];
  /** The framework directory, for local files. */
  dir?: string;
}

/** The framework's root URL (the directory holding `deno.json`). */
export const FRAMEWORK_URL: URL = new URL("../../", import.meta.url);

function filePath(url: URL): string {
  const path = decodeURIComponent(url.pathname);
  return Deno.build.os === "windows"
    ? path.replace(/^\/([A-Za-z]:)/, "$1").replaceAll("/", "\\")
    : path;
}

/** The CLI entry and flags to load it from anywhere (local `deno.json`, `jsr:` export, or import map). */
export function cliLocation(base: URL = FRAMEWORK_URL): CliLocation {
  if (base.protocol === "file:") {
    const dir = filePath(base).replace(/[\\/]$/, "");
    return {
      entry: filePath(new URL("src/cli/main.ts", base)),
      flags: [`--config=${filePath(new URL("deno.json", base))}`],
      dir,
    };
  }
  const jsr = /^https:\/\/jsr\.io\/(@[^/]+\/[^/]+)\/([^/]+)\/$/.exec(base.href);
  if (jsr !== null) {
    // Providers run in their own processes: no worker options needed.
    return { entry: `jsr:${jsr[1]}@${jsr[2]}/cli/main`, flags: [] };
  }
  return {
    entry: new URL("src/cli/main.ts", base).href,
    flags: [`--import-map=${new URL("deno.json", base).href}`],
  };
}

/** A `deno` command that fills Deno's module cache for the CLI. */
interface CacheStep {
  args: string[];
  cwd?: string;
  /** When local. */
  lockfile?: string;
  /** Remote: the step from the cache alone, tried first (`deno cache` always asks npm). */
  offlineArgs?: string[];
}

/**
 * The roots to cache: the entry (its lazy loads are `typeof import` type
 * dependencies, which `deno install`/`deno cache` follow), the modules the
 * framework starts or imports by URL (`_loaded_by_url.ts`), and the bundled
 * providers' `mod.ts`/`cli.ts`.
 */
function computedModules(base: URL): URL[] {
  const modules = ["src/cli/main.ts", "_loaded_by_url.ts"]
    .map((path) => new URL(path, base));
  if (base.protocol !== "file:") return modules;
  const bundled = new URL("plugins/memory/", base);
  try {
    const names = [...Deno.readDirSync(bundled)]
      .filter((e) => e.isDirectory && !/^[_.]/.test(e.name))
      .map((e) => e.name)
      .sort();
    for (const name of names) {
      for (const file of ["mod.ts", "cli.ts"]) {
        const url = new URL(`${name}/${file}`, bundled);
        try {
          if (Deno.statSync(url).isFile) modules.push(url);
        } catch {
          // Not every provider has a cli.ts.
        }
      }
    }
  } catch {
    // No bundled providers.
  }
  return modules;
}

/** Fills Deno's cache: `deno install --frozen` against the lockfile; remote: `deno cache`. */
export function cliCacheStep(base: URL = FRAMEWORK_URL): CacheStep {
  const location = cliLocation(base);
  const modules = computedModules(base).map((u) =>
    u.protocol === "file:" ? filePath(u) : u.href
  );
  const install = (flag: string) => [
    "install",
    "--quiet",
    flag,
    ...location.flags,
    "--entrypoint",
    ...modules,
  ];
  if (location.dir !== undefined) {
    return {
      args: install("--frozen"),
      cwd: location.dir,
      lockfile: filePath(new URL("deno.lock", base)),
    };
  }
  return {
    args: ["cache", "--quiet", ...location.flags, ...modules],
    offlineArgs: install("--cached-only"),
  };
}
