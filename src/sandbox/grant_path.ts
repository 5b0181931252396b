// How a grant path is written (in plugin.yaml and config.yaml): the
// per-profile placeholders, and text Deno would misread. Apart from grant.ts
// so reading a manifest loads none of the floor's tables.

import { join, normalize } from "../_util/path.ts";

const PLACEHOLDER_REGEXP = /^\$(HERMES_HOME|HERMES_ROOT)(?=\/|$)/;

/** Tells whether a grant path uses a per-profile placeholder (`$HERMES_HOME/…`, `$HERMES_ROOT/…`). */
export function isPlaceholderPath(path: string): boolean {
  if (!PLACEHOLDER_REGEXP.test(path)) return false;
  return !path.split("/").includes("..");
}

/** Resolves `$HERMES_HOME` / `$HERMES_ROOT` in a grant path; other paths are normalized. */
export function expandGrantPath(
  path: string,
  homes: { hermesHome: string; hermesRoot: string },
): string {
  const match = PLACEHOLDER_REGEXP.exec(path);
  if (match === null) return normalize(path);
  const base = match[1] === "HERMES_HOME" ? homes.hermesHome : homes.hermesRoot;
  return normalize(join(base, path.slice(match[0].length)));
}

/**
 * Why a permission path as written cannot be used, or `undefined`: no `,`
 * (Deno splits permission lists on it), control character or `..` segment.
 */
export function grantPathTextProblem(value: string): string | undefined {
  if (value.includes(",")) {
    return "it contains a comma, which Deno reads as a list separator (the rest would become a second path)";
  }
  // deno-lint-ignore no-control-regex
  if (/[\u0000-\u001f\u007f-\u009f]/.test(value)) {
    return "it contains a control character";
  }
  if (value.split(/[\\/]/).includes("..")) {
    return "it has a '..' segment: write the path it means";
  }
  return undefined;
}
