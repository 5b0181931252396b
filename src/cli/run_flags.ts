// The CLI's `deno run` permission flags, merged with a provider's worker
// grant: a worker cannot get more than its parent holds.

import { cliLocation } from "./cli_location.ts";
import { PARSED_CONFIG_ENV } from "../config/config.ts";
import { realPathOf } from "../sandbox/grant.ts";

/** Read by the terminal libraries during a prompt (ungranted reads fail); none is a secret. */
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

/** Read by the framework (`PATH`: a sandbox process starts with it) and by `yaml` on every parse (`LOG_*`). */
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
  "HERMES_GRANT_LINKS",
  "DENO_INSTALL_ROOT",
]);

/** The permission lists of one `deno run`. */
export interface RunGrant {
  read: string[];
  write: string[];
  env: string[];
  net: string[];
  import?: string[];
}

/** The framework's root when it runs from local files (remote modules need no read grant). */
export function frameworkDir(): string | undefined {
  return cliLocation().dir;
}

/** The CLI's own grant: the home, the framework (read) and its variables. */
export function cliGrant(hermesHome: string): RunGrant {
  const framework = frameworkDir();
  // A symlinked home (~/.hermes -> /data/hermes) or install: discovery lists
  // plugins/ and plugins/memory through the real path, so the CLI holds both.
  const both = (path: string) => [...new Set([path, realPathOf(path) ?? path])];
  const homes = both(hermesHome);
  const grant: RunGrant = {
    read: [...homes, ...(framework ? both(framework) : [])],
    write: homes,
    env: [...HERMES_ENV_VARS, ...TERMINAL_ENV_VARS],
    net: [],
  };
  const host = frameworkImportHost(new URL("../../", import.meta.url));
  if (host !== undefined) grant.import = [host];
  return grant;
}

function frameworkImportHost(url: URL): string | undefined {
  if (url.protocol === "http:" || url.protocol === "https:") return url.host;
  if (url.protocol === "jsr:") return "jsr.io";
  return undefined;
}

/** Merges grants in order, dropping duplicates and paths inside another granted path. */
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

function dropCoveredPaths(paths: string[]): string[] {
  const inside = (child: string, parent: string): boolean =>
    child !== parent &&
    child.startsWith(parent.endsWith("/") ? parent : `${parent}/`);
  return paths.filter((p) => !paths.some((other) => inside(p, other)));
}

/** Reads `--allow-{read,write,env,net,import}=…` flags into a grant; other flags are returned apart. */
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
 * A grant as `deno run` flags after `--no-prompt` (no prompt to escalate
 * with) and `--cached-only`, then `extra`. @throws {TypeError} On a comma.
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
