// What a sandbox worker is given: a provider's grant, its Deno permissions, and
// the paths no grant may ever reach.

import { denoCacheDir, readProcessEnv } from "../core/env.ts";
import { launcherCacheDir } from "../launcher/launch_cache.ts";
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

/** Where a floor form is found: in each Hermes home (the profile's and `$HERMES_ROOT`), the user's home, or from `/`. */
export type FloorPlace = "hermes" | "user" | "system";

/**
 * The floor, by form: each row's forms (space-separated paths relative to
 * its place; `*` stands for any part of one name, so backups, locks and logs
 * of a file are covered) are never granted, to read or to write, nor is a
 * directory holding one. The one table of this fact: setup, status, the
 * launcher, the dashboard and the start of every provider check it, and
 * `docs/permissions.md` prints it. What runs next (the launcher, Deno, the
 * framework) is added by {@linkcode runtimeFloor}.
 */
export const FLOOR: ReadonlyArray<[FloorPlace, string, string]> = [
  [
    "hermes",
    ".env*",
    "a profile's secrets file: the host hands a provider the variables it declares",
  ],
  [
    "hermes",
    "config.yaml*",
    "a profile's config.yaml: the host hands a provider its own sections",
  ],
  [
    "hermes",
    "auth.* gateway.json* active_profile* .hermes_history* state.db*",
    "Hermes' logins, gateway, session database and history",
  ],
  [
    "hermes",
    "plugins",
    "the providers' code: each provider reads only its own and none may change any (changed code would run unconfined on the host)",
  ],
  ["hermes", "memories", "the built-in memory (MEMORY.md, USER.md)"],
  ["hermes", "SOUL.md*", "the agent's persona prompt"],
  ["hermes", "skills", "skills: prompts and scripts the agent runs"],
  ["hermes", "hooks", "hook handlers the agent runs"],
  ["hermes", "bin", "executables Hermes runs"],
  ["hermes", "cron", "scheduled jobs the agent runs"],
  ["hermes", "hermes-agent", "Hermes Agent's own code"],
  [
    "hermes",
    "sessions logs cache *_cache sandboxes checkpoints pairing platforms workspace",
    "Hermes' sessions, logs, caches and workspaces",
  ],
  ["user", ".ssh", "SSH keys"],
  ["user", ".gnupg .password-store", "keys and passwords"],
  [
    "user",
    ".aws .config/gcloud .azure .kube .docker .netrc .git-credentials .npmrc .pgpass",
    "login and cloud credentials",
  ],
  [
    "user",
    ".bash* .zsh* .zlog* .zprofile* .profile* .login .logout .cshrc .tcshrc .config/fish .xprofile .xsession* .xinitrc .pam_environment .config/environment.d .inputrc .*_history",
    "a shell start-up file (code your shell runs), logout file or history",
  ],
  [
    "user",
    ".gitconfig* .config/git .config/systemd .local/share/systemd .config/autostart .local/bin .deno .cache/deno",
    "code your system runs on its own (git settings, user services, login programs, your PATH, Deno's installs and cache)",
  ],
  [
    "system",
    "proc sys dev/fd dev/std* var/spool/cron",
    "the kernel's view of processes (their files and memory) and the crontabs",
  ],
];

/** Why a provider cannot be named `name` (its data directory would be one of Hermes' own), or `undefined`. */
export function hermesAreaOf(name: string): string | undefined {
  for (const [place, forms] of FLOOR) {
    if (place !== "hermes") continue;
    const hit = forms.split(" ").find((f) => globMatch(f, name.toLowerCase()));
    if (hit !== undefined) return hit;
  }
  return undefined;
}

function globMatch(form: string, name: string): boolean {
  if (!form.includes("*")) return form.toLowerCase() === name;
  const [head = "", tail = ""] = form.toLowerCase().split("*");
  return name.startsWith(head) && name.endsWith(tail) &&
    name.length >= head.length + tail.length;
}

let runtime: [string, string][] | undefined;

/**
 * What runs next, as paths no grant reaches: the launcher's records and
 * pinned Deno (the `hermes-memory` cache), Deno's module cache (`DENO_DIR`)
 * and install root, the running Deno's install folder, and the framework's
 * code (as given and its real path). Computed once per process.
 */
export function runtimeFloor(frameworkDir?: string): [string, string][] {
  if (runtime === undefined) {
    const found: [string | undefined, string][] = [];
    const launcher = launcherCacheDir();
    found.push([
      launcher && dirname(launcher),
      "the launcher's records and the pinned Deno (what runs next)",
    ]);
    found.push([denoCacheDir(), "Deno's module cache (code the host runs)"]);
    const root = readProcessEnv("DENO_INSTALL_ROOT");
    found.push([root, "Deno's installed programs (the hermes command)"]);
    try {
      const exe = Deno.execPath();
      const prefix = /^(.*?)[\\/]node_modules[\\/]/.exec(exe)?.[1];
      found.push([prefix ?? dirname(exe), "the Deno that runs Hermes"]);
    } catch {
      // Not allowed to ask: the launcher (which may) checks it.
    }
    runtime = found.filter((e): e is [string, string] => !!e[0]);
  }
  const code: [string, string][] = [];
  if (frameworkDir !== undefined) {
    const real = realPathOf(frameworkDir) ?? frameworkDir;
    for (const dir of new Set([frameworkDir, real])) {
      code.push([dir, "the framework's code"]);
    }
  }
  return [...runtime, ...code];
}

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
  /** The access asked for (default `"read"`). */
  access?: "read" | "write";
  /** Checked right before a start: a path this process may not resolve is refused. */
  starting?: boolean;
  /** The user's home, for the secrets kept outside Hermes. */
  userHome?: string;
  /** The providers installed besides this one (their data directories may not exist yet). */
  otherProviders?: readonly string[];
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

/** Whether `child` is `parent` or inside it (both normalized, absolute). */
function inside(parent: string, child: string): boolean {
  if (child === parent) return true;
  const prefix = parent.endsWith(sep) ? parent : `${parent}${sep}`;
  return child.startsWith(prefix);
}

/** Paths this process found leading elsewhere, and where (handed from the launcher to the CLI, which may not read them). */
const links = new Map<string, string>();

/** The variable carrying {@linkcode foundLinks} from the launcher to the CLI. */
export const LINKS_ENV = "HERMES_GRANT_LINKS";

/** The links this process resolved (for the launcher's record). */
export function foundLinks(): Record<string, string> {
  return Object.fromEntries(links);
}

/**
 * Where a path leads: the real path of its longest existing prefix plus
 * the rest, as this process resolves it with its own access; `undefined`
 * when it may not resolve the path itself (then the launcher's answer, if
 * it handed one). A missing path under a parent this process may not read
 * is taken as written (nothing is there yet; the launcher reads all).
 */
export function realPathOf(path: string): string | undefined {
  let head = normalize(path);
  const tail: string[] = [];
  for (;;) {
    try {
      const real = join(Deno.realPathSync(head), ...tail.toReversed());
      if (real !== normalize(path)) links.set(normalize(path), real);
      return real;
    } catch (error) {
      if (!(error instanceof Deno.errors.NotFound)) {
        if (tail.length > 0) return normalize(path);
        const [link, to] = handedLink(normalize(path)) ?? [];
        return link && to && join(to, relative(link, normalize(path)));
      }
      const parent = dirname(head);
      if (parent === head) return normalize(path);
      tail.push(basename(head));
      head = parent;
    }
  }
}

/** Where the floor forms of `place` are rooted. */
function bases(place: FloorPlace, home: string, root: string, user?: string) {
  if (place === "hermes") return [...new Set([home, root])];
  if (place === "user") return user === undefined ? [] : [user];
  return Deno.build.os === "windows" ? [] : ["/"];
}

/** Why `target` meets a floor form under `base`: it is a match, is inside one, or holds one. */
function formReason(
  target: string,
  base: string,
  form: string,
  what: string,
): string | undefined {
  if (!inside(base, target)) {
    return inside(target, base)
      ? `it holds ${join(base, form)}, ${what}`
      : undefined;
  }
  const have = relative(base, target).split(sep).filter((p) => p !== "");
  const want = form.split("/");
  for (let i = 0; i < want.length; i++) {
    if (i === have.length) return `it holds ${join(base, form)}, ${what}`;
    if (!globMatch(want[i] as string, (have[i] as string).toLowerCase())) {
      return undefined;
    }
  }
  const hit = join(base, ...have.slice(0, want.length));
  return hit === target
    ? `it is ${hit}, ${what}`
    : `it is inside ${hit}, ${what}`;
}

function floorReason(
  target: string,
  home: string,
  root: string,
  context: ForbiddenContext,
): string | undefined {
  const write = context.access === "write";
  const guards: [string, string, string][] = [];
  for (const [place, forms, what] of FLOOR) {
    for (const base of bases(place, home, root, context.userHome)) {
      for (const form of forms.split(" ")) guards.push([base, form, what]);
    }
  }
  for (const [dir, what] of runtimeFloor(context.frameworkDir)) {
    guards.push([normalize(dir), ".", what]);
  }
  const honcho = context.provider === "honcho" && context.bundled === true;
  if (!honcho) {
    const what =
      "Honcho's credentials: only the bundled honcho provider reads them";
    for (const base of new Set([home, root])) {
      guards.push([base, "honcho.json", what]);
    }
    if (context.userHome !== undefined) {
      guards.push([context.userHome, ".honcho", what]);
    }
  }
  for (const [base, form, what] of guards) {
    const why = form === "."
      ? guardReason(target, base, what)
      : formReason(target, base, form, what);
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
  const pairs = new Set([[home, root].join("\0")]);
  pairs.add([realPathOf(home) ?? home, realPathOf(root) ?? root].join("\0"));
  const written = normalize(path);
  const real = realPathOf(written);
  if (real === undefined && context.starting) {
    return `this process may not read ${written} to see where it leads`;
  }
  for (const target of new Set([written, real ?? written])) {
    for (const pair of pairs) {
      const [h = home, r = root] = pair.split("\0");
      const why = floorReason(target, h, r, context);
      if (why !== undefined) {
        return target === written ? why : `${why} (${linkOn(written, target)})`;
      }
    }
  }
  return undefined;
}

/** The launcher's answer for `path` or its nearest parent: `[link, where it leads]`. */
function handedLink(path: string): [string, string] | undefined {
  let handed: Record<string, string> = {};
  try {
    handed = JSON.parse(readProcessEnv(LINKS_ENV) ?? "{}");
  } catch { /* not ours */ }
  for (let at = path;; at = dirname(at)) {
    const to = handed[at];
    if (typeof to === "string") return [at, to];
    if (dirname(at) === at) return undefined;
  }
}

/** Names the symbolic link on the way from `written` to `real`, as far as this process may look. */
function linkOn(written: string, real: string): string {
  const parts = written.split(sep);
  let link = handedLink(written);
  for (let i = 2; i <= parts.length && link === undefined; i++) {
    const prefix = parts.slice(0, i).join(sep);
    try {
      if (Deno.lstatSync(prefix).isSymlink) {
        link = [prefix, realPathOf(prefix) ?? Deno.readLinkSync(prefix)];
      }
    } catch {
      break;
    }
  }
  const [from, to] = link ?? [written, real];
  return from === written
    ? `${written} leads to ${to}`
    : `${from} leads to ${to}, so ${written} leads to ${real}`;
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
