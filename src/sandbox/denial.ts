// Permission denials of a sandboxed provider, told in terms of its grant: which
// key of which file grants the access, or why nothing ever will.

import { getConfigPath } from "../config/config.ts";
import { getDefaultHermesRoot, getUserHome } from "../profile/hermes_home.ts";
import {
  approveCommand,
  forbiddenGrantPath,
  type ProviderGrant,
} from "./grant.ts";
import { denoDenial, grantKey } from "./deno_denial.ts";
import { log } from "../core/log.ts";
import { reviveError, type SerializedError } from "./worker_protocol.ts";

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

/** Why the floor refuses `path` to a grant's provider (`starting`: a path this process cannot resolve too), or `undefined`. */
export function floorOfGrant(
  grant: ProviderGrant,
  path: string,
  access: "read" | "write",
  starting = false,
): string | undefined {
  return forbiddenGrantPath(path, {
    hermesHome: grant.hermesHome,
    hermesRoot: getDefaultHermesRoot(),
    provider: grant.provider,
    bundled: grant.bundled === true,
    access,
    userHome: getUserHome(),
    starting,
  });
}

/**
 * Explains a Deno denial in terms of the provider's grant (`manifestPath`:
 * its editable `plugin.yaml`, if any); other errors come back unchanged.
 */
export function explainDenial(
  provider: string,
  grant: ProviderGrant,
  manifestPath: string | undefined,
  error: Error,
): Error {
  const denial = denoDenial(error);
  if (denial === undefined) return error;
  const { kind, target } = denial;
  const config = getConfigPath(grant.hermesHome);
  const grantIt = (key: string) =>
    `grant it under ${grantKey(provider, key, grant.hermesHome)}`;
  const declare = (key: string): string =>
    manifestPath !== undefined
      ? `declare it under permissions.${key} in ${manifestPath} and approve it with '${
        approveCommand(provider)
      }', or ${grantIt(key)}`
      : grantIt(key);
  const never = (path: string | undefined): string | undefined =>
    path && floorOfGrant(grant, path, kind === "write" ? "write" : "read");
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

/** A sandbox's denials: each error explained, each reported denial warned about once. */
export interface DenialReporter {
  explain(error: unknown): unknown;
  /** A `denied` event of the worker: one warning per distinct denial. */
  report(error: SerializedError): void;
  /** Whether this denial was already warned about. */
  reported(error: unknown): boolean;
}

/** The {@linkcode DenialReporter} of one provider's sandbox. */
export function denialReporter(
  provider: string,
  grant: ProviderGrant,
  manifestPath: string | undefined,
): DenialReporter {
  const warned = new Set<string>();
  const explain = (error: unknown): unknown =>
    error instanceof Error
      ? explainDenial(provider, grant, manifestPath, error)
      : error;
  return {
    explain,
    report(error: SerializedError): void {
      const { message } = explain(reviveError(error)) as Error;
      if (warned.has(message)) return;
      warned.add(message);
      log("warn", message);
    },
    reported: (error) => error instanceof Error && warned.has(error.message),
  };
}
