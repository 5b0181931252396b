/**
 * What a sandbox worker is given: the grant of one provider (paths,
 * variables and hosts, each with where it came from) and its translation
 * into Deno worker permissions. Computing the grant from the manifest and
 * `config.yaml` is the plugin layer's job (`src/plugins/provider_permissions.ts`).
 *
 * @module
 */

/** Why an entry is in a grant. */
export type GrantOrigin =
  | "hermes-home"
  | "provider-dir"
  | "plugin.yaml"
  | "config.yaml"
  | "package";

/** One entry of a grant list, with where it came from. */
export interface GrantEntry {
  /** A path, variable name or host. */
  value: string;
  /** Why it is granted. */
  from: GrantOrigin;
}

/** The effective sandbox grant of one provider. */
export interface ProviderGrant {
  /** The provider's name. */
  provider: string;
  /** The profile home the grant was computed for. */
  hermesHome: string;
  /** Readable paths. */
  read: GrantEntry[];
  /** Writable paths (`HERMES_HOME` only). */
  write: GrantEntry[];
  /** Readable environment variables. */
  env: GrantEntry[];
  /** Reachable hosts. */
  net: GrantEntry[];
  /** Hosts remote modules may be imported from. */
  import: GrantEntry[];
  /** Whether the provider may import `npm:` packages. */
  npm: boolean;
}

/** What the sandbox loads: a discovered provider's name, code and source. */
export interface SandboxTarget {
  /** The provider's name. */
  name: string;
  /** Where it was found (`"package"` providers may export instances). */
  source: string;
  /** Its directory with symlinks resolved; absent for packages. */
  dir?: string;
  /** What to import: the `file:` URL of `mod.ts`, or the package specifier. */
  specifier: string;
}

function values(list: GrantEntry[]): string[] {
  return list.map((e) => e.value);
}

/**
 * The `deno` worker permissions of a grant: run, ffi and sys always
 * `false`, import `false` unless a package host is granted.
 *
 * @param grant The grant.
 * @returns The permissions object for `new Worker(…, {deno: {permissions}})`.
 *
 * @example
 * ```ts
 * import { workerPermissions } from "@hermes/memory";
 * import assert from "node:assert/strict";
 * const p = workerPermissions({ provider: "x", hermesHome: "/h", read: [{ value: "/h", from: "hermes-home" }], write: [{ value: "/h", from: "hermes-home" }], env: [], net: [], import: [], npm: false });
 * assert.equal(p.run, false);
 * assert.equal(p.env, false);
 * ```
 */
export function workerPermissions(
  grant: ProviderGrant,
): Deno.PermissionOptionsObject {
  const listOrFalse = (list: GrantEntry[]): string[] | false =>
    list.length > 0 ? values(list) : false;
  return {
    read: listOrFalse(grant.read),
    write: listOrFalse(grant.write),
    env: listOrFalse(grant.env),
    net: listOrFalse(grant.net),
    import: listOrFalse(grant.import),
    run: false,
    ffi: false,
    sys: false,
  };
}
