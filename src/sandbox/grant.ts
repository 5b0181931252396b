// What a sandbox worker is given: a provider's grant, its Deno permissions, and
// the paths no grant may ever reach.

import { denoCacheDir, hermesCacheDir, readProcessEnv } from "../core/env.ts";
import {
  basename,
  dirname,
  fileURLToPath,
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
    // deno-lint-ignore no-control-regex
    const entry = list.find((e) => /[,\u0000-\u001f\u007f]/.test(e.value));
    if (entry !== undefined) {
      throw new TypeError(
        `Memory provider '${grant.provider}' cannot be started: its ${key} grant ${
          JSON.stringify(entry.value)
        } (from ${entry.from}) holds a comma or a control character, which Deno would read as more than one grant; remove it`,
      );
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
export const FLOOR: ReadonlyArray<[FloorPlace, string, string]> = `
hermes | .env* | a profile's secrets file: the host hands a provider the variables it declares
hermes | config.yaml* | a profile's config.yaml: the host hands a provider its own sections
hermes | auth.* gateway.json* active_profile* .hermes_history* state.db* | Hermes' logins, gateway, session database and history
hermes | plugins | the providers' code: each provider reads only its own and none may change any (changed code would run unconfined on the host)
hermes | memories | the built-in memory (MEMORY.md, USER.md)
hermes | SOUL.md* | the agent's persona prompt
hermes | skills | skills: prompts and scripts the agent runs
hermes | hooks | hook handlers the agent runs
hermes | bin | executables Hermes runs
hermes | cron | scheduled jobs the agent runs
hermes | hermes-agent | Hermes Agent's own code
hermes | sessions logs cache *_cache sandboxes checkpoints pairing platforms workspace | Hermes' sessions, logs, caches and workspaces
user | .ssh | SSH keys
user | .gnupg .password-store | keys and passwords
user | .aws .config/gcloud .azure .kube .docker .netrc .git-credentials .npmrc .pgpass | login and cloud credentials
user | .bash* .zsh* .zlog* .zprofile* .profile* .login .logout .cshrc .tcshrc .config/fish .xprofile .xsession* .xinitrc .pam_environment .config/environment.d .inputrc .*_history | a shell start-up file (code your shell runs), logout file or history
user | .gitconfig* .config/git .config/systemd .local/share/systemd .config/autostart .local/bin .deno .cache/deno | code your system runs on its own (git settings, user services, login programs, your PATH, Deno's installs and cache)
system | proc sys dev/fd dev/std* var/spool/cron | the kernel's view of processes (their files and memory) and the crontabs
hermes | honcho.json | Honcho's credentials: only the bundled honcho provider reads them
user | .honcho | Honcho's credentials: only the bundled honcho provider reads them
`.trim().split("\n").map((row) =>
  row.split(" | ") as [FloorPlace, string, string]
);

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

const FRAMEWORK_URL = new URL("../../", import.meta.url);
/** The framework's own directory when it runs from local files. */
const FRAMEWORK = FRAMEWORK_URL.protocol === "file:"
  ? fileURLToPath(FRAMEWORK_URL).replace(/[\\/]$/, "")
  : undefined;

/**
 * What runs next, as paths no grant reaches: the launcher's records and
 * pinned Deno (the `hermes-memory` cache), Deno's module cache (`DENO_DIR`)
 * and install root, the running Deno's install folder (an npm install's
 * prefix), and the framework's code (as given and its real path).
 */
export function runtimeFloor(
  framework?: string,
): [string | undefined, string][] {
  const exe = Deno.execPath();
  const code = "the framework's code";
  return [
    [
      hermesCacheDir(),
      "the launcher's records and the pinned Deno (what runs next)",
    ],
    [denoCacheDir(), "Deno's module cache (code the host runs)"],
    [
      readProcessEnv("DENO_INSTALL_ROOT"),
      "Deno's installed programs (the hermes command)",
    ],
    [
      /^(.*?)[\\/]node_modules[\\/]/.exec(exe)?.[1] ?? dirname(exe),
      "the Deno that runs Hermes",
    ],
    [framework, code],
    [framework && realPathOf(framework), code],
  ];
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
  /** The framework's own directory (default: where this module is, if local). */
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

/** Whether `child` is `parent` or inside it (both normalized, absolute). */
export function insidePath(parent: string, child: string): boolean {
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

/** Why `target` meets a floor form under `base`: it is a match, is inside one, or holds one. */
function formReason(
  target: string,
  base: string,
  form: string,
  what: string,
): string | undefined {
  if (!insidePath(base, target)) {
    return insidePath(target, base)
      ? `it holds ${join(base, form)}, ${what}`
      : undefined;
  }
  const have = relative(base, target).split(sep).filter((p) => p !== "");
  const want = form === "" ? [] : form.split("/");
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
  const honcho = context.provider === "honcho" && context.bundled === true;
  const guards: [string, string, string][] = [];
  const bases: Record<FloorPlace, string[]> = {
    hermes: [...new Set([home, root])],
    user: context.userHome === undefined ? [] : [context.userHome],
    system: Deno.build.os === "windows" ? [] : ["/"],
  };
  for (const [place, forms, what] of FLOOR) {
    if (honcho && what.startsWith("Honcho's")) continue;
    for (const base of bases[place]) {
      for (const form of forms.split(" ")) guards.push([base, form, what]);
    }
  }
  for (const [dir, what] of runtimeFloor(context.frameworkDir ?? FRAMEWORK)) {
    if (dir) guards.push([normalize(dir), "", what]);
  }
  for (const [base, form, what] of guards) {
    const why = formReason(target, base, form, what);
    if (why !== undefined) return why;
  }
  // Other profiles live under <root>/profiles/; only the profile's own
  // home (when it is one of them) may be reached inside it.
  const profiles = join(root, "profiles");
  if (target === profiles) return `it holds the other profiles (${profiles})`;
  if (insidePath(profiles, target)) {
    if (
      !(insidePath(profiles, home) && home !== profiles &&
        insidePath(home, target))
    ) {
      return `it belongs to another profile (under ${profiles})`;
    }
  } else if (insidePath(target, profiles)) {
    return `it holds the other profiles (${profiles})`;
  } else if (
    home !== root && insidePath(root, target) && !insidePath(home, target)
  ) {
    // A named profile reaching into the default one.
    const fallback = honcho && !write &&
      target === join(root, "honcho.json");
    if (!fallback) {
      return `it belongs to the default profile (${root}), not to the active profile ${home}`;
    }
  }
  if (context.provider !== undefined && insidePath(home, target)) {
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
        return target === written
          ? why
          : `${why} (${written} leads to ${target})`;
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
