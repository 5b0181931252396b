/**
 * Permission denials of a sandboxed provider, told in terms of its grant:
 * which key of which file grants the access, or why nothing ever will.
 *
 * @module
 */

import { fileURLToPath } from "node:url";
import { getConfigPath } from "../config/config.ts";
import { getDefaultHermesRoot, getUserHome } from "../profile/hermes_home.ts";
import {
  approveCommand,
  forbiddenGrantPath,
  type ProviderGrant,
} from "./grant.ts";

/**
 * A sandboxed provider was denied something its grant does not cover.
 *
 * @category Errors callers catch
 */
export class ProviderPermissionError extends Error {
  /** The provider's name. */
  readonly provider: string;
  /** `read`, `write`, `env`, `net`, `run`, `ffi`, `sys`, `import` or `all`. */
  readonly permission: string;
  /** The path, variable or host, when Deno named one. */
  readonly target: string | undefined;
  /** Deno's own message. */
  readonly denoMessage: string;

  /**
   * Creates the error.
   *
   * @param provider The provider's name.
   * @param permission The permission kind.
   * @param target What was asked for.
   * @param message The full message.
   * @param denoMessage Deno's own message.
   */
  constructor(
    provider: string,
    permission: string,
    target: string | undefined,
    message: string,
    denoMessage: string,
  ) {
    super(message);
    this.name = "ProviderPermissionError";
    this.provider = provider;
    this.permission = permission;
    this.target = target;
    this.denoMessage = denoMessage;
  }
}

const DENIAL_REGEXP = /Requires (\w+) access(?: to "?([^",]*)"?)?/;

/**
 * The framework's own directory when it runs from local files.
 *
 * @returns The directory, or `undefined` for a remote framework.
 */
export function localFrameworkDir(): string | undefined {
  const url = new URL("../../", import.meta.url);
  return url.protocol === "file:"
    ? fileURLToPath(url).replace(/[\\/]$/, "")
    : undefined;
}

/**
 * Explains a Deno permission denial in terms of the provider's grant:
 * which file and key to add it to (or why it can never be granted).
 *
 * @param provider The provider's name.
 * @param grant Its grant (home, data directory and config location).
 * @param manifestPath Its `plugin.yaml` when the user can edit it
 * (`undefined` for bundled and package providers).
 * @param error The error from the worker.
 * @returns A {@linkcode ProviderPermissionError}, or `error` unchanged when
 * it is not a denial.
 *
 * @example
 * ```ts
 * import { explainDenial } from "./denial.ts";
 * import assert from "node:assert/strict";
 * const denial = new Error('Requires net access to "evil.example:443", run again with the --allow-net flag');
 * denial.name = "NotCapable";
 * const grant = { provider: "notes", hermesHome: "/h", read: [], write: [], env: [], net: [], import: [], npm: false };
 * const explained = explainDenial("notes", grant, "/h/plugins/notes/plugin.yaml", denial);
 * assert.match(explained.message, /may not connect to evil.example:443/);
 * ```
 */
export function explainDenial(
  provider: string,
  grant: ProviderGrant,
  manifestPath: string | undefined,
  error: Error,
): Error {
  const match = DENIAL_REGEXP.exec(error.message);
  if (match === null) return error;
  const kind = match[1] ?? "";
  const target = match[2] !== undefined && match[2] !== ""
    ? match[2]
    : undefined;
  const config = getConfigPath(grant.hermesHome);
  const declare = (key: string): string =>
    manifestPath !== undefined
      ? `declare it under permissions.${key} in ${manifestPath} and approve it with '${
        approveCommand(provider)
      }', or grant it under memory.permissions.${provider}.${key} in ${config}`
      : `grant it under memory.permissions.${provider}.${key} in ${config}`;
  const never = (path: string | undefined): string | undefined =>
    path === undefined ? undefined : forbiddenGrantPath(path, {
      hermesHome: grant.hermesHome,
      hermesRoot: getDefaultHermesRoot(),
      frameworkDir: localFrameworkDir(),
      provider,
      bundled: grant.bundled === true,
      access: kind === "write" ? "write" : "read",
      userHome: getUserHome(),
    });
  const what = (verb: string): string =>
    `Memory provider '${provider}' may not ${verb}`;
  let message: string;
  switch (kind) {
    case "read":
    case "all": {
      const why = never(target);
      message = why !== undefined
        ? `${what(`read ${target}`)}: ${why}; no grant can add it`
        : `${what(`read ${target ?? "that path"}`)}: ${declare("read")}`;
      break;
    }
    case "write": {
      const why = never(target);
      const only = grant.dataDir !== undefined
        ? `its sandbox writes only ${grant.dataDir} unless granted more; `
        : "";
      message = why !== undefined
        ? `${what(`write ${target}`)}: ${why}; no grant can add it`
        : `${what(`write ${target ?? "that path"}`)}: ${only}${
          declare("write")
        }`;
      break;
    }
    case "env":
      message = target === undefined
        ? `${
          what("list the environment")
        }: read the variables it declares under permissions.env one at a time, with getSecret()`
        : `${what(`read the environment variable ${target}`)}: ${
          declare("env")
        }`;
      break;
    case "net":
      message = `${what(`connect to ${target ?? "that host"}`)}: ${
        declare("net")
      }`;
      break;
    case "run":
      message = `${
        what(`run programs${target ? ` (${target})` : ""}`)
      }: memory providers never get run access`;
      break;
    case "ffi":
      message = `${
        what(`load native libraries${target ? ` (${target})` : ""}`)
      }: memory providers never get ffi access`;
      break;
    case "sys":
      message = `${
        what(`read system information${target ? ` (${target})` : ""}`)
      }: memory providers never get sys access`;
      break;
    case "import":
      message = `${
        what(`import remote modules${target ? ` from ${target}` : ""}`)
      }: list the provider under memory.packages in ${config} or vendor the module into its directory`;
      break;
    default:
      return error;
  }
  return new ProviderPermissionError(
    provider,
    kind,
    target,
    message,
    error.message,
  );
}
