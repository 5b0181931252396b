/**
 * Telling a permission problem from every other failure, and saying which
 * flag or config key grants what was denied. Deno reports a denial as
 * `NotCapable` (or, for a denied dynamic `import()`, a `TypeError`) with
 * the message `Requires read access to "<path>", run again with the
 * --allow-read flag`.
 *
 * @module
 */

import { join } from "node:path";

/** A permission Deno denied. */
interface PermissionDenial {
  /** The permission: `read`, `write`, `env`, `net`, `run`, `import`, … */
  kind: string;
  /** The path, variable, host or program, when Deno named it. */
  target?: string;
  /** The `deno run` flag that grants it, such as `--allow-read=/srv/h`. */
  flag: string;
}

const DENIAL_REGEXP = /Requires (\w+) access(?: to "([^"]*)")?/;

/**
 * Finds the permission denial behind an error (its `cause` chain
 * included).
 *
 * @param error Anything thrown.
 * @returns The denial, or `undefined` when the error is not one.
 *
 * @example Basic usage
 * ```ts
 * import { permissionDenial } from "./permission_problem.ts";
 * import assert from "node:assert/strict";
 * const error = new Error('Requires env access to "LOG_TOKENS", run again with the --allow-env flag');
 * error.name = "NotCapable";
 * assert.equal(permissionDenial(error)?.flag, "--allow-env=LOG_TOKENS");
 * ```
 */
export function permissionDenial(
  error: unknown,
): PermissionDenial | undefined {
  for (let e = error, depth = 0; e instanceof Error && depth < 8; depth++) {
    if (e.name === "NotCapable" || e.name === "TypeError") {
      const match = DENIAL_REGEXP.exec(e.message);
      if (match !== null) {
        const kind = match[1] as string;
        const target = match[2] || undefined;
        return {
          kind,
          target,
          flag: target === undefined
            ? `--allow-${kind}`
            : `--allow-${kind}=${target}`,
        };
      }
    }
    e = e.cause;
  }
  return undefined;
}

/** Options of {@linkcode describePermissionProblem}. */
interface PermissionProblemOptions {
  /** The profile home the command runs in. */
  hermesHome: string;
  /** The active provider, when one is configured. */
  provider?: string | null;
}

/**
 * The fix for a run that lacks what the profile's configuration needs:
 * start `hermes` through its launcher.
 */
export const LAUNCHER_HINT =
  "start hermes through its launcher ('deno task hermes …' in a checkout, or the 'hermes' command installed with 'deno install -g'), which grants what the profile's configuration needs; 'hermes memory permissions' prints that grant";

const VERBS: Record<string, string> = {
  read: "read",
  write: "write",
  env: "read the environment variable",
  net: "connect to",
  run: "run",
  import: "import modules from",
  sys: "read the system information",
  ffi: "load the library",
};

function inside(path: string, dir: string): boolean {
  return path === dir || path.startsWith(dir.endsWith("/") ? dir : `${dir}/`);
}

/**
 * The two lines a command prints for a permission problem: an `error:`
 * naming what was denied and the flag that grants it, and a `hint:`
 * naming the fix. Inside the profile home the fix is the launcher (it
 * always grants the home); anything else the active provider needs is
 * granted under `memory.permissions.<provider>` in `config.yaml`, which
 * the launcher reads on every start.
 *
 * @param denial The denial.
 * @param options The profile home and active provider.
 * @returns The `error:` and `hint:` lines, each ending with a line break.
 *
 * @example Basic usage
 * ```ts
 * import { describePermissionProblem } from "./permission_problem.ts";
 * import assert from "node:assert/strict";
 * const text = describePermissionProblem(
 *   { kind: "net", target: "honcho.lan:8000", flag: "--allow-net=honcho.lan:8000" },
 *   { hermesHome: "/srv/h", provider: "honcho" },
 * );
 * assert.match(text, /memory\.permissions\.honcho\.net/);
 * ```
 */
export function describePermissionProblem(
  denial: PermissionDenial,
  options: PermissionProblemOptions,
): string {
  const verb = VERBS[denial.kind] ?? `use ${denial.kind} access to`;
  const what = denial.target === undefined ? "" : ` ${denial.target}`;
  const error =
    `error: permission denied: hermes may not ${verb}${what} (this run lacks ${denial.flag})\n`;
  const launcher = LAUNCHER_HINT;
  const inHome = denial.target !== undefined &&
    (denial.kind === "read" || denial.kind === "write") &&
    inside(denial.target, options.hermesHome);
  const key = ["read", "env", "net"].includes(denial.kind) &&
      options.provider
    ? `memory.permissions.${options.provider}.${denial.kind}`
    : undefined;
  let hint: string;
  if (denial.target === undefined || inHome || key === undefined) {
    hint = launcher;
  } else {
    hint =
      `if memory provider '${options.provider}' needs it, grant it under ${key} in ${
        join(options.hermesHome, "config.yaml")
      } (the launcher adds it on the next run); else ${launcher}`;
  }
  return `${error}hint: ${hint}\n`;
}
