/**
 * The `deno run` permission flags the `hermes` CLI needs, and merging them
 * with a provider's worker grant: the host must hold everything it hands a
 * sandboxed provider (a worker cannot get more than its parent).
 *
 * @module
 */

import { fileURLToPath } from "node:url";
import { PARSED_CONFIG_ENV } from "../config/config.ts";

/**
 * Variables read by the terminal libraries while a prompt is shown (Node's
 * colour detection, `@inquirer/*`); reading an ungranted one fails, so the
 * whole set is granted. None of them is a secret.
 */
export const TERMINAL_ENV_VARS: readonly string[] = Object.freeze([
  "TERM",
  "COLORTERM",
  "TERM_PROGRAM",
  "TERM_PROGRAM_VERSION",
  "TMUX",
  "NO_COLOR",
  "FORCE_COLOR",
  "NODE_DISABLE_COLORS",
  "CI",
  "CI_NAME",
  "TF_BUILD",
  "TEAMCITY_VERSION",
  "GITHUB_ACTIONS",
  "GITEA_ACTIONS",
  "CIRCLECI",
  "TRAVIS",
  "APPVEYOR",
  "GITLAB_CI",
  "BUILDKITE",
  "DRONE",
  "INQUIRER_KEYBINDINGS",
  "CLI_WIDTH",
]);

/**
 * Variables the framework itself reads (profile resolution, plugin
 * discovery, working directory, `DENO_NO_PROMPT` for the sandbox safety
 * check, where Deno's module cache is and `PATH`, which a provider's sandbox
 * process is started with), the launcher's parse of `config.yaml`, plus the
 * two debug switches the `yaml` parser reads on every parse (`LOG_TOKENS`,
 * `LOG_STREAM`).
 */
export const HERMES_ENV_VARS: readonly string[] = Object.freeze([
  "HERMES_HOME",
  "HOME",
  "HERMES_DATA_DIR_SUFFIX",
  "HERMES_ENABLE_PROJECT_PLUGINS",
  "HERMES_SESSION_SOURCE",
  "TERMINAL_CWD",
  "LOG_TOKENS",
  "LOG_STREAM",
  "DENO_NO_PROMPT",
  "HERMES_CLI_PROVIDER_COMMAND",
  "DENO_DIR",
  "XDG_CACHE_HOME",
  "LOCALAPPDATA",
  "PATH",
  PARSED_CONFIG_ENV,
]);

/** The permission lists of one `deno run`. */
export interface RunGrant {
  /** Readable paths. */
  read: string[];
  /** Writable paths. */
  write: string[];
  /** Readable environment variables. */
  env: string[];
  /** Reachable hosts. */
  net: string[];
  /** Hosts remote modules may be imported from (`--allow-import`). */
  import?: string[];
}

/**
 * The framework's root directory when it runs from local files (a checkout
 * or a vendored copy), else `undefined` (remote modules need no read
 * grant).
 *
 * @returns The absolute directory, or `undefined`.
 */
export function frameworkDir(): string | undefined {
  const url = new URL("../../", import.meta.url);
  if (url.protocol !== "file:") return undefined;
  return fileURLToPath(url).replace(/[\\/]$/, "");
}

/**
 * The grant of the CLI itself for one profile home: read and write of the
 * home, read of the framework (bundled providers and the worker
 * bootstrap are loaded by computed path), and the environment it reads.
 */
export function cliGrant(hermesHome: string): RunGrant {
  const framework = frameworkDir();
  // A symlinked home (~/.hermes -> /data/hermes): discovery lists plugins/
  // through its real path, so the CLI holds both forms.
  const homes = [hermesHome];
  try {
    const real = Deno.realPathSync(hermesHome);
    if (real !== hermesHome) homes.push(real);
  } catch {
    // Not created yet: nothing to resolve.
  }
  const grant: RunGrant = {
    read: framework ? [...homes, framework] : [...homes],
    write: [...homes],
    env: [...HERMES_ENV_VARS, ...TERMINAL_ENV_VARS],
    net: [],
  };
  const host = frameworkImportHost(new URL("../../", import.meta.url));
  if (host !== undefined) grant.import = [host];
  return grant;
}

/**
 * The host remote framework modules are imported from (`jsr.io` for a
 * `jsr:` install), or `undefined` for local files.
 */
function frameworkImportHost(url: URL): string | undefined {
  if (url.protocol === "http:" || url.protocol === "https:") return url.host;
  if (url.protocol === "jsr:") return "jsr.io";
  return undefined;
}

/**
 * Merges grants, keeping the first occurrence order and dropping
 * duplicates and paths inside another granted path.
 *
 * @returns One grant holding all of them.
 */
export function mergeGrants(...grants: RunGrant[]): RunGrant {
  const unique = (lists: string[][]): string[] => [...new Set(lists.flat())];
  const merged: RunGrant = {
    read: dropCoveredPaths(unique(grants.map((g) => g.read))),
    write: dropCoveredPaths(unique(grants.map((g) => g.write))),
    env: unique(grants.map((g) => g.env)),
    net: unique(grants.map((g) => g.net)),
  };
  const imports = unique(grants.map((g) => g.import ?? []));
  if (imports.length > 0) merged.import = imports;
  return merged;
}

/** Drops absolute paths that lie inside another path of the list. */
function dropCoveredPaths(paths: string[]): string[] {
  const inside = (child: string, parent: string): boolean =>
    child !== parent &&
    child.startsWith(parent.endsWith("/") ? parent : `${parent}/`);
  return paths.filter((p) => !paths.some((other) => inside(p, other)));
}

/**
 * Reads `--allow-read=…`, `--allow-write=…`, `--allow-env=…` and
 * `--allow-net=…` and `--allow-import=…` flags into a grant; other flags
 * are returned apart.
 *
 * @returns The grant and the remaining flags.
 */
export function grantFromFlags(
  flags: readonly string[],
): { grant: RunGrant; other: string[] } {
  const grant: RunGrant = { read: [], write: [], env: [], net: [] };
  const other: string[] = [];
  for (const flag of flags) {
    const match = /^--allow-(read|write|env|net|import)=(.*)$/.exec(flag);
    if (match) {
      const key = match[1] as keyof RunGrant;
      const list = grant[key] ?? (grant[key] = []);
      list.push(...(match[2] ?? "").split(",").filter((s) => s !== ""));
    } else {
      other.push(flag);
    }
  }
  return { grant, other };
}

/**
 * Renders a grant as `deno run` flags, preceded by `--no-prompt` and
 * `--cached-only` (no permission prompts a sandboxed provider could use to
 * escalate; no npm downloads at run time). Empty lists are left out.
 *
 * @param extra Other flags to keep (after the permission flags).
 * @throws {TypeError} When a value holds a comma.
 */
export function grantToFlags(
  grant: RunGrant,
  extra: readonly string[] = [],
): string[] {
  const flags = ["--no-prompt", "--cached-only"];
  for (const key of ["read", "write", "env", "net", "import"] as const) {
    const list = grant[key] ?? [];
    const split = list.find((value) => value.includes(","));
    if (split !== undefined) {
      // Deno splits a flag's list at commas: this value would become two.
      throw new TypeError(
        `Cannot grant ${
          JSON.stringify(split)
        } to the hermes CLI: it holds a comma, which Deno would read as two ${key} grants; move it to a path without one`,
      );
    }
    if (list.length > 0) flags.push(`--allow-${key}=${list.join(",")}`);
  }
  for (const flag of extra) {
    if (!flags.includes(flag)) flags.push(flag);
  }
  return flags;
}
