// Deno's permission denials (`Requires read access to "/x", run again with the
// --allow-read flag`), parsed here once for the whole framework.

import { join } from "../_util/path.ts";

/** A permission Deno denied. */
export interface DenoDenial {
  /** `read`, `write`, `env`, `net`, `run`, `ffi`, `sys`, `import` or `all`. */
  kind: string;
  /** The path, variable, host or program, when Deno named one. */
  target?: string;
  /** The `deno run` flag that grants it, such as `--allow-read=/srv/h`. */
  flag: string;
}

const DENIAL_REGEXP = /Requires (\w+) access(?: to (?:"([^"]*)"|([^",]*)))?/;

/**
 * The denial an error reports: a `NotCapable`, the `TypeError` a denied
 * dynamic `import()` rejects with, or an error revived from a worker whose
 * message is Deno's.
 */
export function denoDenial(error: unknown): DenoDenial | undefined {
  if (!(error instanceof Error)) return undefined;
  if (
    error.name !== "NotCapable" && error.name !== "TypeError" &&
    !error.message.startsWith("Requires ")
  ) return undefined;
  const match = DENIAL_REGEXP.exec(error.message);
  if (match === null) return undefined;
  const kind = match[1] as string;
  const target = match[2] || match[3] || undefined;
  return {
    kind,
    target,
    flag: target === undefined
      ? `--allow-${kind}`
      : `--allow-${kind}=${target}`,
  };
}

/** Where the user grants a provider more: `memory.permissions.<provider>.<key> in <config.yaml>`. */
export function grantKey(
  provider: string,
  key: string,
  hermesHome: string,
): string {
  return `memory.permissions.${provider}.${key} in ${
    join(hermesHome, "config.yaml")
  }`;
}
