/**
 * Where the `hermes` CLI's entry point is, the flags that make it load
 * from any working directory, and the `deno` command that fills Deno's
 * module cache for it. Plain Deno APIs, no imports: the launcher uses it
 * on every start.
 *
 * @module
 */

/** Where the CLI's entry point is and the flags its location needs. */
interface CliLocation {
  /** The entry point: a path for local files, else a URL. */
  entry: string;
  /** Flags that make it resolve: its `deno.json`, or an import map. */
  flags: string[];
  /** The framework directory when it runs from local files. */
  dir?: string;
}

/** The framework's root URL (the directory holding `deno.json`). */
export const FRAMEWORK_URL: URL = new URL("../../", import.meta.url);

/**
 * The path of a `file:` URL.
 */
function filePath(url: URL): string {
  const path = decodeURIComponent(url.pathname);
  return Deno.build.os === "windows"
    ? path.replace(/^\/([A-Za-z]:)/, "$1").replaceAll("/", "\\")
    : path;
}

/**
 * The CLI entry point and the flags that make it load from anywhere: for
 * a local checkout or install its `deno.json` (import map, lockfile); for
 * a JSR package its `jsr:` export; for another
 * remote URL the package's `deno.json` as import map.
 */
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
  /** Its arguments. */
  args: string[];
  /** Its working directory. */
  cwd?: string;
  /** The lockfile it installs from, when local. */
  lockfile?: string;
  /**
   * For a remote install: the same step answered from Deno's cache alone
   * (`deno install --cached-only --entrypoint`), tried first so that a
   * complete cache needs no network (`deno cache` asks the npm registry
   * for package metadata even then).
   */
  offlineArgs?: string[];
}

/**
 * The framework's modules that are imported by computed specifier (so
 * that Deno does not read their graphs at start-up), relative to its root.
 * A cache step and `deno compile` must name them; a test checks the list
 * against the sources.
 */
export const COMPUTED_MODULES: readonly string[] = Object.freeze([
  "src/cli/run.ts",
  "src/cli/commands/provider_commands.ts",
  "src/cli/commands/memory_status.ts",
  "src/cli/commands/memory_setup.ts",
  "src/cli/commands/memory_doctor.ts",
  "src/cli/commands/memory_list.ts",
  "src/cli/commands/memory_permissions.ts",
  "src/cli/commands/memory_off.ts",
  "src/cli/commands/memory_reset.ts",
  "src/cli/commands/memory_recall.ts",
  "src/cli/commands/memory_import.ts",
  "src/cli/commands/memory_entries.ts",
  "src/cli/commands/memory_mcp.ts",
  "src/cli/commands/memory_dashboard.ts",
  "src/cli/version.ts",
  "src/cli/completion.ts",
  "src/cli/_inquirer.ts",
  "src/launcher/plan.ts",
  "src/plugins/provider_loader.ts",
  "src/sandbox/sandboxed_cli.ts",
  "src/sandbox/transport.ts",
  "src/provider/worker_bootstrap.ts",
  "src/provider/worker_bootstrap_full.ts",
]);

/**
 * The modules loaded by computed specifier, which a cache step must name
 * besides the entry point: the command tree (`run.ts`), the launcher's
 * slow path, the worker bootstrap and the bundled providers' `mod.ts` and
 * `cli.ts`.
 */
function computedModules(base: URL): URL[] {
  const modules = [
    "src/cli/main.ts",
    ...COMPUTED_MODULES,
  ].map((path) => new URL(path, base));
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

/**
 * The step that fills Deno's cache for the CLI: `deno install --frozen`
 * of its modules against the checkout's lockfile; for a remote install,
 * `deno cache` of them.
 */
export function cliCacheStep(base: URL = FRAMEWORK_URL): CacheStep {
  const location = cliLocation(base);
  const modules = computedModules(base).map((u) =>
    u.protocol === "file:" ? filePath(u) : u.href
  );
  if (location.dir !== undefined) {
    return {
      args: [
        "install",
        "--quiet",
        "--frozen",
        ...location.flags,
        "--entrypoint",
        ...modules,
      ],
      cwd: location.dir,
      lockfile: filePath(new URL("deno.lock", base)),
    };
  }
  return {
    args: ["cache", "--quiet", ...location.flags, ...modules],
    offlineArgs: [
      "install",
      "--quiet",
      "--cached-only",
      ...location.flags,
      "--entrypoint",
      ...modules,
    ],
  };
}
