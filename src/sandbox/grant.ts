/**
 * What a sandbox worker is given: the grant of one provider (paths,
 * variables and hosts, each with where it came from), its translation into
 * Deno worker permissions, and the paths no grant may ever reach.
 * Computing the grant from the manifest and `config.yaml` is the plugin
 * layer's job (`src/plugins/provider_permissions.ts`).
 *
 * A grant path may start with `$HERMES_HOME` (the profile home the grant is
 * computed for) or `$HERMES_ROOT` (the default profile's home, `~/.hermes`,
 * where Hermes keeps settings files shared by every profile, such as
 * `honcho.json`); {@linkcode expandGrantPath} resolves both.
 *
 * Never granted, from any source ({@linkcode forbiddenGrantPath}): the
 * profile's `.env` and `config.yaml` (and the default home's), `plugins/`
 * (every provider's code, its own included: code a provider could rewrite
 * would run unconfined on the next start), any other profile under
 * `<root>/profiles/`, the framework's own files, and any directory that
 * holds one of those.
 *
 * @module
 */

import { isAbsolute, join, normalize, relative, sep } from "node:path";

/** Why an entry is in a grant. */
export type GrantOrigin =
  | "provider-dir"
  | "data-dir"
  | "plugin.yaml"
  | "config.yaml"
  | "package"
  | "framework";

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
  /**
   * The provider's own data directory, `$HERMES_HOME/<name>` (readable and
   * writable; created by the host, mode `0700`, before the worker starts).
   * Absent in grants built by hand.
   */
  dataDir?: string;
  /** Readable paths. */
  read: GrantEntry[];
  /** Writable paths. */
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
 * `false`, import `false` unless a host is granted.
 *
 * @param grant The grant.
 * @returns The permissions object for `new Worker(…, {deno: {permissions}})`.
 *
 * @example
 * ```ts
 * import { workerPermissions } from "./grant.ts";
 * import assert from "node:assert/strict";
 * const p = workerPermissions({ provider: "x", hermesHome: "/h", read: [{ value: "/h/x", from: "data-dir" }], write: [{ value: "/h/x", from: "data-dir" }], env: [], net: [], import: [], npm: false });
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

/**
 * The `deno run` permission flags of a provider's sandbox process: exactly
 * its grant, each list joined with `,` (Deno's separator), and nothing for
 * run, ffi and sys. A value holding a `,` (which Deno would split into two
 * grants) or a control character is refused, never passed on.
 *
 * @param grant The grant.
 * @returns Flags such as `--allow-read=/h/x`, in a fixed order.
 * @throws {TypeError} When a value holds a `,` or a control character.
 *
 * @example
 * ```ts
 * import { processPermissionFlags } from "./grant.ts";
 * import assert from "node:assert/strict";
 * const flags = processPermissionFlags({ provider: "x", hermesHome: "/h", read: [{ value: "/h/x", from: "data-dir" }], write: [], env: [], net: [], import: [], npm: false });
 * assert.deepEqual(flags, ["--allow-read=/h/x"]);
 * ```
 */
export function processPermissionFlags(grant: ProviderGrant): string[] {
  const flags: string[] = [];
  const lists: [string, GrantEntry[]][] = [
    ["read", grant.read],
    ["write", grant.write],
    ["env", grant.env],
    ["net", grant.net],
    ["import", grant.import],
  ];
  for (const [key, list] of lists) {
    if (list.length === 0) continue;
    for (const entry of list) {
      const unsafe = [...entry.value].some((c) =>
        c === "," || c.charCodeAt(0) < 0x20 || c.charCodeAt(0) === 0x7f
      );
      if (unsafe) {
        throw new TypeError(
          `Memory provider '${grant.provider}' cannot be started: its ${key} grant ${
            JSON.stringify(entry.value)
          } (from ${entry.from}) holds a comma or a control character, which Deno would read as more than one grant; remove it`,
        );
      }
    }
    flags.push(`--allow-${key}=${values(list).join(",")}`);
  }
  return flags;
}

const PLACEHOLDER_REGEXP = /^\$(HERMES_HOME|HERMES_ROOT)(?=\/|$)/;

/**
 * Tells whether a grant path uses a placeholder (`$HERMES_HOME/…`,
 * `$HERMES_ROOT/…`) that {@linkcode expandGrantPath} resolves per profile.
 *
 * @param path The path as written.
 * @returns `true` for a placeholder path without `..` segments.
 */
export function isPlaceholderPath(path: string): boolean {
  if (!PLACEHOLDER_REGEXP.test(path)) return false;
  return !path.split("/").includes("..");
}

/**
 * Resolves a grant path: `$HERMES_HOME` becomes the profile home,
 * `$HERMES_ROOT` the default profile's home; other paths are returned
 * normalized.
 *
 * @param path An absolute path, or one starting with a placeholder.
 * @param homes The profile home and the default root.
 * @returns The absolute path.
 *
 * @example
 * ```ts
 * import { expandGrantPath } from "./grant.ts";
 * import assert from "node:assert/strict";
 * const homes = { hermesHome: "/u/.hermes/profiles/work", hermesRoot: "/u/.hermes" };
 * assert.equal(expandGrantPath("$HERMES_HOME/honcho.json", homes), "/u/.hermes/profiles/work/honcho.json");
 * assert.equal(expandGrantPath("$HERMES_ROOT/honcho.json", homes), "/u/.hermes/honcho.json");
 * ```
 */
export function expandGrantPath(
  path: string,
  homes: { hermesHome: string; hermesRoot: string },
): string {
  const match = PLACEHOLDER_REGEXP.exec(path);
  if (match === null) return normalize(path);
  const base = match[1] === "HERMES_HOME" ? homes.hermesHome : homes.hermesRoot;
  return normalize(join(base, path.slice(match[0].length)));
}

/** Where the paths no grant may reach are. */
export interface ForbiddenContext {
  /** The profile home. */
  hermesHome: string;
  /** The default profile's home (`~/.hermes`). */
  hermesRoot: string;
  /** The framework's own directory, when it runs from local files. */
  frameworkDir?: string;
}

function inside(parent: string, child: string): boolean {
  const rel = relative(parent, child);
  return rel === "" ||
    (rel !== ".." && !rel.startsWith(`..${sep}`) && !isAbsolute(rel));
}

/**
 * Why a path may never be granted to a provider, or `undefined` when it
 * may: it is (or is inside, or holds) a profile's `.env` or `config.yaml`,
 * `plugins/`, another profile, or the framework.
 *
 * @param path An absolute path.
 * @param context The profile home, default root and framework directory.
 * @returns Why (`it is …` or `it holds …`), or `undefined`.
 *
 * @example
 * ```ts
 * import { forbiddenGrantPath } from "./grant.ts";
 * import assert from "node:assert/strict";
 * const where = { hermesHome: "/u/.hermes", hermesRoot: "/u/.hermes" };
 * assert.match(forbiddenGrantPath("/u/.hermes/.env", where) ?? "", /secrets/);
 * assert.equal(forbiddenGrantPath("/u/.hermes/honcho.json", where), undefined);
 * ```
 */
export function forbiddenGrantPath(
  path: string,
  context: ForbiddenContext,
): string | undefined {
  const target = normalize(path);
  const home = normalize(context.hermesHome);
  const root = normalize(context.hermesRoot);
  const guarded: [string, string][] = [];
  for (const base of new Set([home, root])) {
    guarded.push([
      join(base, ".env"),
      "a profile's secrets file: the host hands a provider the variables it declares",
    ]);
    guarded.push([
      join(base, "config.yaml"),
      "a profile's config.yaml: the host hands a provider its own sections",
    ]);
    guarded.push([
      join(base, "plugins"),
      "the providers' code: each provider reads only its own and none may change any (changed code would run unconfined on the host)",
    ]);
  }
  if (context.frameworkDir !== undefined) {
    guarded.push([normalize(context.frameworkDir), "the framework's code"]);
  }
  for (const [guard, what] of guarded) {
    if (target === guard) return `it is ${guard}, ${what}`;
    if (inside(guard, target)) return `it is inside ${guard}, ${what}`;
    if (inside(target, guard)) return `it holds ${guard}, ${what}`;
  }
  // Other profiles live under <root>/profiles/; only the profile's own
  // home (when it is one of them) may be reached inside it.
  const profiles = join(root, "profiles");
  if (target === profiles) return `it holds the other profiles (${profiles})`;
  if (inside(profiles, target)) {
    if (
      !(inside(profiles, home) && home !== profiles && inside(home, target))
    ) {
      return `it belongs to another profile (under ${profiles})`;
    }
  } else if (inside(target, profiles)) {
    return `it holds the other profiles (${profiles})`;
  }
  return undefined;
}
