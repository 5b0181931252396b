// An npm cache for a test's own DENO_DIR that holds only the versions the
// repository's lockfiles pin, with registry metadata that lists only them.
// A test that plays a user without a lockfile (the framework run from a URL,
// installed from JSR, imported by a library host, a provider's own npm
// packages) resolves npm packages from cached metadata; the real metadata
// names the newest releases, which a run online would download and a run
// offline would fail on. Through this view it resolves to the pinned
// versions, already cached, so it fetches nothing. The metadata is written
// here from each cached package's package.json and the lock's integrity:
// nothing is fetched, and the test tasks' locked installs (`deno task deps`,
// `deps:test`, `deps:fixtures`, all --frozen) are all a test run needs.
// The versions' files are hard links to the shared cache (DENO_DIR of
// run_command.ts; copies across file systems): Deno refuses to load npm
// modules whose real path lies outside its own cache.
import { join } from "node:path";
import { DENO_DIR } from "./run_command.ts";

const ROOT = new URL("../..", import.meta.url).pathname;

/** Every lockfile of the repository: the CLI's, the tests', the fixtures'. */
export const REPO_LOCKS: readonly string[] = [
  join(ROOT, "deno.lock"),
  join(ROOT, "tests", "deno.lock"),
  join(ROOT, "tests", "fixtures", "npm_fixtures.lock"),
];

/** Recreates the tree `from` at `to`, its files hard-linked (or copied). */
async function linkTree(from: string, to: string): Promise<void> {
  await Deno.mkdir(to, { recursive: true });
  for await (const e of Deno.readDir(from)) {
    const [a, b] = [join(from, e.name), join(to, e.name)];
    if (e.isDirectory) await linkTree(a, b);
    else if (e.isSymlink) await Deno.symlink(await Deno.readLink(a), b);
    else await Deno.link(a, b).catch(() => Deno.copyFile(a, b));
  }
}

function compareVersions(a: string, b: string): number {
  const parts = (v: string) => v.split(/[.+-]/).map((p) => Number(p) || 0);
  const [x, y] = [parts(a), parts(b)];
  for (let i = 0; i < Math.max(x.length, y.length); i++) {
    if ((x[i] ?? 0) !== (y[i] ?? 0)) return (x[i] ?? 0) - (y[i] ?? 0);
  }
  return 0;
}

interface LockEntry {
  integrity?: string;
  tarball?: string;
  dependencies?: string[];
  optionalDependencies?: string[];
  os?: string[];
  cpu?: string[];
  scripts?: boolean;
}

/** `name@version` (or `alias@npm:name@version`) of a lock's dependency list, as a requirement map. */
function lockDependencies(list: string[] = []): Record<string, string> {
  const out: Record<string, string> = {};
  for (const dep of list) {
    // A name alone when the lock holds one version of it.
    const at = dep.indexOf("@", 1);
    if (at < 0) out[dep] = "*";
    else out[dep.slice(0, at)] = dep.slice(at + 1).split("_")[0]!;
  }
  return out;
}

/** The registry metadata of one version, as Deno caches it. */
type VersionInfo = Record<string, unknown> & {
  peerDependencies?: Record<string, string>;
};

/** The registry metadata of one pinned version. */
async function versionInfo(
  name: string,
  version: string,
  entry: LockEntry,
  folder: string,
): Promise<VersionInfo> {
  const base = name.slice(name.indexOf("/") + 1);
  const info: VersionInfo = {
    version,
    dist: {
      tarball: entry.tarball ??
        `https://registry.npmjs.org/${name}/-/${base}-${version}.tgz`,
      integrity: entry.integrity,
    },
  };
  if (entry.scripts) info.hasInstallScript = true;
  let pkg: Record<string, unknown> | undefined;
  try {
    pkg = JSON.parse(await Deno.readTextFile(join(folder, "package.json")));
  } catch {
    // Not cached (an optional package of another platform): the lock's
    // resolved versions stand for the requirements.
  }
  const fields = [
    "dependencies",
    "optionalDependencies",
    "peerDependencies",
    "peerDependenciesMeta",
    "bin",
    "os",
    "cpu",
  ];
  if (pkg !== undefined) {
    for (const f of fields) if (pkg[f] !== undefined) info[f] = pkg[f];
  } else {
    info.dependencies = lockDependencies(entry.dependencies);
    info.optionalDependencies = lockDependencies(entry.optionalDependencies);
    if (entry.os) info.os = entry.os;
    if (entry.cpu) info.cpu = entry.cpu;
  }
  return info;
}

/**
 * Fills `<denoDir>/npm/registry.npmjs.org` from the shared npm cache: every
 * version `lockPaths` pin (hard links) and, for each package, metadata that
 * lists only those versions (its `latest` tag the newest of them). Packages
 * no lock names are left out, so nothing past the locks resolves.
 */
export async function lockedNpmCache(
  denoDir: string,
  ...lockPaths: string[]
): Promise<void> {
  const pinned = new Map<string, Map<string, LockEntry>>();
  for (const path of lockPaths) {
    const lock = JSON.parse(await Deno.readTextFile(path));
    for (const [key, entry] of Object.entries(lock.npm ?? {})) {
      const at = key.indexOf("@", 1);
      const name = key.slice(0, at);
      const version = key.slice(at + 1).split("_")[0]!;
      const versions = pinned.get(name) ?? new Map<string, LockEntry>();
      versions.set(version, entry as LockEntry);
      pinned.set(name, versions);
    }
  }
  const shared = join(DENO_DIR, "npm", "registry.npmjs.org");
  const target = join(denoDir, "npm", "registry.npmjs.org");
  const peers = new Set<string>();
  await Promise.all([...pinned].map(async ([name, versions]) => {
    const to = join(target, name);
    await Deno.mkdir(to, { recursive: true });
    const meta: Record<string, unknown> = {};
    for (const [version, entry] of versions) {
      const folder = join(shared, name, version);
      const info = await versionInfo(name, version, entry, folder);
      for (const peer of Object.keys(info.peerDependencies ?? {})) {
        peers.add(peer);
      }
      meta[version] = info;
      await linkTree(folder, join(to, version)).catch((e) => {
        if (!(e instanceof Deno.errors.NotFound)) throw e;
      });
    }
    const newest = [...versions.keys()].sort(compareVersions).at(-1)!;
    await Deno.writeTextFile(
      join(to, "registry.json"),
      JSON.stringify({
        name,
        "dist-tags": { latest: newest },
        versions: meta,
        "_deno.packumentFormat": "full",
      }),
    );
  }));
  // Optional peers no lock pins (`@types/node` of `@inquirer/core`): Deno
  // reads their metadata all the same; a package with no versions leaves
  // them unresolved, as the locked install did.
  for (const name of peers) {
    if (pinned.has(name)) continue;
    await Deno.mkdir(join(target, name), { recursive: true });
    await Deno.writeTextFile(
      join(target, name, "registry.json"),
      JSON.stringify({
        name,
        "dist-tags": {},
        versions: {},
        "_deno.packumentFormat": "full",
      }),
    );
  }
}

let shared: Promise<string> | undefined;

/**
 * A Deno cache for child processes of this test file that resolve npm
 * packages without the repository's lock: {@linkcode lockedNpmCache} of
 * every repository lock, made once per process and removed at its end.
 */
export function lockedDenoDir(): Promise<string> {
  shared ??= (async () => {
    const dir = await Deno.makeTempDir({ prefix: "hermes-locked-deno-" });
    globalThis.addEventListener("unload", () => {
      try {
        Deno.removeSync(dir, { recursive: true });
      } catch {
        // Already gone.
      }
    });
    await lockedNpmCache(dir, ...REPO_LOCKS);
    return dir;
  })();
  return shared;
}

/**
 * A `deno` for code that takes a Deno path (`denoPath` of the provider
 * dependency functions): this Deno on {@linkcode lockedDenoDir}.
 */
export async function lockedDeno(): Promise<string> {
  const dir = await lockedDenoDir();
  const script = join(dir, "deno");
  const quote = (s: string) => `'${s.replaceAll("'", "'\\''")}'`;
  await Deno.writeTextFile(
    script,
    `#!/bin/sh\nDENO_DIR=${quote(dir)} exec ${quote(Deno.execPath())} "$@"\n`,
    { mode: 0o755 },
  );
  return script;
}
