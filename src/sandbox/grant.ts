// What a sandbox worker is given: a provider's grant, its Deno permissions, and
// the paths no grant may ever reach.

import {
  basename,
  dirname,
  join,
  normalize,
  relative,
  sep,
} from "../_util/path.ts";

/**
 * Why an entry is in a grant.
 *
 * @category Plugins: discovery, loading, permissions
 */
export type GrantOrigin =
  | "provider-dir"
  | "data-dir"
  | "plugin.yaml"
  | "config.yaml"
  /** A bundled provider's server address the user wrote in its settings. */
  | "settings"
  | "package"
  | "framework";

/**
 * One entry of a grant list, with where it came from.
 *
 * @category Plugins: discovery, loading, permissions
 */
export interface GrantEntry {
  /** A path, variable name or host. */
  value: string;
  /** Why it is granted. */
  from: GrantOrigin;
}

/**
 * The effective sandbox grant of one provider.
 *
 * @category Plugins: discovery, loading, permissions
 */
export interface ProviderGrant {
  /** The provider's name. */
  provider: string;
  /** The profile home the grant was computed for. */
  hermesHome: string;
  /** The provider's own data directory `$HERMES_HOME/<name>` (made `0700` by the host); absent in hand-built grants. */
  dataDir?: string;
  /** Whether the provider is bundled with the framework. */
  bundled?: boolean;
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

/**
 * What the sandbox loads: a discovered provider's name, code and source.
 *
 * @category Plugins: discovery, loading, permissions
 */
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

const GRANT_LISTS = ["read", "write", "env", "net", "import"] as const;

/** The `deno` worker permissions of a grant (run, ffi and sys never; import only for granted hosts). */
export function workerPermissions(
  grant: ProviderGrant,
): Deno.PermissionOptionsObject {
  const permissions: Deno.PermissionOptionsObject = {
    run: false,
    ffi: false,
    sys: false,
  };
  for (const key of GRANT_LISTS) {
    const list = grant[key];
    permissions[key] = list.length > 0 ? list.map((e) => e.value) : false;
  }
  return permissions;
}

/**
 * The `deno run` permission flags of a grant (a provider's sandbox process;
 * a worker transport's host needs them too).
 *
 * @returns Flags such as `--allow-read=/h,/h/plugins/x`.
 * @throws {TypeError} When a value holds a `,` or a control character.
 *
 * @category Plugins: discovery, loading, permissions
 */
export function denoRunFlags(grant: ProviderGrant): string[] {
  const flags: string[] = [];
  for (const key of GRANT_LISTS) {
    const list = grant[key];
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
    flags.push(`--allow-${key}=${list.map((e) => e.value).join(",")}`);
  }
  return flags;
}

/**
 * The areas Hermes keeps in a profile home (code, prompts, memory, state):
 * no grant reaches them and no provider may be named after one. The one
 * table of this fact: `docs/permissions.md` prints it.
 */
export const HERMES_HOME_AREAS: ReadonlyMap<string, string> = new Map([
  [
    ".env",
    "a profile's secrets file: the host hands a provider the variables it declares",
  ],
  [
    "config.yaml",
    "a profile's config.yaml: the host hands a provider its own sections",
  ],
  [
    "plugins",
    "the providers' code: each provider reads only its own and none may change any (changed code would run unconfined on the host)",
  ],
  ["profiles", "the other profiles"],
  ["memories", "the built-in memory (MEMORY.md, USER.md)"],
  ["SOUL.md", "the agent's persona prompt"],
  ["skills", "skills: prompts and scripts the agent runs"],
  ["hooks", "hook handlers the agent runs"],
  ["bin", "executables Hermes runs"],
  ["cron", "scheduled jobs the agent runs"],
  ["sessions", "session transcripts"],
  ["state.db", "the session database"],
  ["logs", "Hermes' logs"],
  ["auth.json", "the agent's login credentials"],
  ["hermes-agent", "Hermes Agent's own code"],
  ["cache", "Hermes' caches"],
  ["sandboxes", "the terminal tool's sandboxes"],
  ["checkpoints", "file checkpoints"],
  ["pairing", "messaging pairings"],
  ["platforms", "messaging platform state"],
  ["workspace", "the agent's workspace"],
  ["image_cache", "Hermes' caches"],
  ["audio_cache", "Hermes' caches"],
  ["document_cache", "Hermes' caches"],
]);

const SHELL_FILE = "a shell start-up file (code your shell runs)";

/**
 * Places outside Hermes, relative to the user's home, that hold keys or code
 * the shell runs: no approval reaches them. `write` entries only guard
 * writing (writing a cache plants code the host later runs).
 */
export const USER_SECRET_PATHS: ReadonlyArray<
  { path: string; what: string; write?: true }
> = [
  { path: ".ssh", what: "SSH keys" },
  { path: ".gnupg", what: "GnuPG keys" },
  { path: ".aws", what: "cloud credentials" },
  { path: ".config/gcloud", what: "cloud credentials" },
  { path: ".azure", what: "cloud credentials" },
  { path: ".kube", what: "cluster credentials" },
  { path: ".docker/config.json", what: "registry credentials" },
  { path: ".netrc", what: "login credentials" },
  { path: ".git-credentials", what: "login credentials" },
  { path: ".npmrc", what: "registry credentials" },
  { path: ".pgpass", what: "database credentials" },
  { path: ".password-store", what: "passwords" },
  { path: ".bashrc", what: SHELL_FILE },
  { path: ".bash_profile", what: SHELL_FILE },
  { path: ".bash_login", what: SHELL_FILE },
  { path: ".profile", what: SHELL_FILE },
  { path: ".zshrc", what: SHELL_FILE },
  { path: ".zshenv", what: SHELL_FILE },
  { path: ".zprofile", what: SHELL_FILE },
  { path: ".config/fish", what: SHELL_FILE },
  { path: ".bash_history", what: "shell history" },
  { path: ".zsh_history", what: "shell history" },
  { path: ".config/autostart", what: "programs started at login", write: true },
  { path: ".local/bin", what: "programs on your PATH", write: true },
  {
    path: ".cache/deno",
    what: "Deno's module cache (code the host runs)",
    write: true,
  },
  { path: ".deno", what: "Deno's installed programs", write: true },
];

/** The command that shows a provider's request and records the user's approval. */
export function approveCommand(name: string): string {
  return `hermes memory setup ${name}`;
}

/** Honcho's credentials, which only the bundled `honcho` provider reads. */
const HONCHO_SECRET_ENV: ReadonlySet<string> = new Set(["HONCHO_API_KEY"]);

/** Where the paths no grant may reach are. */
export interface ForbiddenContext {
  hermesHome: string;
  hermesRoot: string;
  /** The framework's own directory, when it runs from local files. */
  frameworkDir?: string;
  /** The provider the grant is for: its own data directory is allowed, others are not. */
  provider?: string;
  /** Whether that provider is bundled with the framework. */
  bundled?: boolean;
  /** The access asked for (some places are guarded against writing only) (default `"read"`). */
  access?: "read" | "write";
  /** The user's home, for the secrets kept outside Hermes. */
  userHome?: string;
  /** The providers installed besides this one (their data directories may not exist yet). */
  otherProviders?: readonly string[];
}

/** Whether `child` is `parent` or inside it (both normalized, absolute). */
function inside(parent: string, child: string): boolean {
  if (child === parent) return true;
  const prefix = parent.endsWith(sep) ? parent : `${parent}${sep}`;
  return child.startsWith(prefix);
}

/** The path with its longest existing prefix's symlinks resolved (an unreadable prefix left as written). */
export function resolveExistingPrefix(path: string): string {
  let head = normalize(path);
  const tail: string[] = [];
  for (;;) {
    try {
      return join(Deno.realPathSync(head), ...tail.toReversed());
    } catch {
      const parent = dirname(head);
      if (parent === head) return normalize(path);
      tail.push(basename(head));
      head = parent;
    }
  }
}

function isDirectory(path: string): boolean {
  try {
    return Deno.statSync(path).isDirectory;
  } catch {
    return false;
  }
}

function guardReason(
  target: string,
  guard: string,
  what: string,
): string | undefined {
  if (target === guard) return `it is ${guard}, ${what}`;
  if (inside(guard, target)) return `it is inside ${guard}, ${what}`;
  if (inside(target, guard)) return `it holds ${guard}, ${what}`;
  return undefined;
}

function floorReason(
  target: string,
  home: string,
  root: string,
  context: ForbiddenContext,
): string | undefined {
  const write = context.access === "write";
  const guarded: [string, string][] = [];
  for (const base of new Set([home, root])) {
    for (const [area, what] of HERMES_HOME_AREAS) {
      if (area === "profiles" && base === root) continue;
      guarded.push([join(base, area), what]);
    }
  }
  if (context.frameworkDir !== undefined) {
    guarded.push([normalize(context.frameworkDir), "the framework's code"]);
  }
  const userHome = context.userHome;
  if (userHome !== undefined) {
    for (const secret of USER_SECRET_PATHS) {
      if (secret.write && !write) continue;
      guarded.push([join(userHome, secret.path), secret.what]);
    }
  }
  const honcho = context.provider === "honcho" && context.bundled === true;
  if (!honcho) {
    const what =
      "Honcho's credentials: only the bundled honcho provider reads them";
    for (const base of new Set([home, root])) {
      guarded.push([join(base, "honcho.json"), what]);
    }
    if (userHome !== undefined) guarded.push([join(userHome, ".honcho"), what]);
  }
  for (const [guard, what] of guarded) {
    const why = guardReason(target, guard, what);
    if (why !== undefined) return why;
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
  } else if (home !== root && inside(root, target) && !inside(home, target)) {
    // A named profile reaching into the default one.
    const fallback = honcho && !write &&
      target === join(root, "honcho.json");
    if (!fallback) {
      return `it belongs to the default profile (${root}), not to the active profile ${home}`;
    }
  }
  if (context.provider !== undefined && inside(home, target)) {
    const rel = relative(home, target);
    if (rel === "") return undefined; // Unreachable: the home holds .env.
    const [first = "", ...rest] = rel.split(sep);
    const own = join(home, context.provider);
    if (
      first !== context.provider &&
      (rest.length > 0 || isDirectory(join(home, first)) ||
        (context.otherProviders ?? []).includes(first))
    ) {
      return `it is ${rest.length > 0 ? "inside " : ""}${
        join(home, first)
      }, another provider's data directory or Hermes' own: a provider reaches only its own, ${own}`;
    }
  }
  return undefined;
}

/**
 * Why a path may never be granted to a provider, or `undefined` when it may
 * (the floor no approval lifts): Hermes' own files and areas, other
 * profiles, other providers' data, the framework's code, the user's keys
 * and shell files, and any directory holding one. Checked as written and
 * with symlinks resolved.
 */
export function forbiddenGrantPath(
  path: string,
  context: ForbiddenContext,
): string | undefined {
  const home = normalize(context.hermesHome);
  const root = normalize(context.hermesRoot);
  const realHome = resolveExistingPrefix(home);
  const realRoot = resolveExistingPrefix(root);
  const pairs = realHome === home && realRoot === root
    ? [[home, root]]
    : [[home, root], [realHome, realRoot]];
  const written = normalize(path);
  for (const target of new Set([written, resolveExistingPrefix(written)])) {
    for (const [h, r] of pairs) {
      const why = floorReason(target, h as string, r as string, context);
      if (why !== undefined) {
        return target === written
          ? why
          : `${why} (${written} resolves to ${target})`;
      }
    }
  }
  return undefined;
}

/** Why a variable may never be granted: Honcho's key reaches only the bundled `honcho`. */
export function forbiddenGrantEnv(
  name: string,
  context: { provider?: string; bundled?: boolean },
): string | undefined {
  if (!HONCHO_SECRET_ENV.has(name)) return undefined;
  if (context.provider === "honcho" && context.bundled === true) {
    return undefined;
  }
  return "it is Honcho's API key: only the bundled honcho provider reads it";
}
