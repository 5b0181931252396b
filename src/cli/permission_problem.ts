/**
 * Telling a permission problem from every other failure, and saying which
 * flag or config key grants what was denied.
 *
 * @module
 */

import {
  type DenoDenial,
  denoDenial,
  grantKey,
} from "../sandbox/deno_denial.ts";

/** The denial behind an error, its `cause` chain included. */
export function permissionDenial(error: unknown): DenoDenial | undefined {
  for (let e = error, depth = 0; e instanceof Error && depth < 8; depth++) {
    const denial = denoDenial(e);
    if (denial !== undefined) return denial;
    e = e.cause;
  }
  return undefined;
}

/** Options of {@linkcode describePermissionProblem}. */
interface PermissionProblemOptions {
  hermesHome: string;
  provider?: string | null;
}

/** The fix for a run that lacks what the profile's configuration needs. */
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
 * The `error:` and `hint:` lines for a permission problem. Inside the
 * profile home the fix is the launcher (it always grants the home); what
 * the active provider needs is granted in `config.yaml`.
 */
export function describePermissionProblem(
  denial: DenoDenial,
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
  const hint = denial.target === undefined || inHome || !options.provider ||
      !["read", "env", "net"].includes(denial.kind)
    ? launcher
    : `if memory provider '${options.provider}' needs it, grant it under ${
      grantKey(options.provider, denial.kind, options.hermesHome)
    } (the launcher adds it on the next run); else ${launcher}`;
  return `${error}hint: ${hint}\n`;
}
