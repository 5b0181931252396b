// An npm cache for a test's own DENO_DIR in which the registry metadata lists
// only the versions a lockfile pins. A test that plays a user without a
// lockfile (the framework run from a URL or installed from JSR) resolves npm
// packages from the cached metadata, which names the newest releases as soon
// as any run fetched them; through this view it resolves to the locked
// versions, already cached, so it fetches nothing past the lock. The locked
// versions' files are hard links to the shared cache (DENO_DIR of
// run_command.ts; copies across file systems): Deno refuses to load npm
// modules whose real path lies outside its own cache. Packages the lock does
// not name are linked as whole folders.
import { join } from "node:path";
import { DENO_DIR } from "./run_command.ts";

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

/**
 * Fills `<denoDir>/npm/registry.npmjs.org` from the shared npm cache: of
 * every package `lockPath` pins, the pinned versions and metadata that lists
 * only them (its `latest` tag the newest of them).
 */
export async function lockedNpmCache(
  denoDir: string,
  lockPath: string,
): Promise<void> {
  const lock = JSON.parse(await Deno.readTextFile(lockPath));
  const pinned = new Map<string, Set<string>>();
  for (const key of Object.keys(lock.npm ?? {})) {
    const at = key.indexOf("@", 1);
    const name = key.slice(0, at);
    const version = key.slice(at + 1).split("_")[0]!;
    pinned.set(name, (pinned.get(name) ?? new Set()).add(version));
  }
  const shared = join(DENO_DIR, "npm", "registry.npmjs.org");
  const target = join(denoDir, "npm", "registry.npmjs.org");
  const packages: string[] = [];
  for await (const e of Deno.readDir(shared)) {
    if (!e.isDirectory) continue;
    if (!e.name.startsWith("@")) packages.push(e.name);
    else {
      for await (const s of Deno.readDir(join(shared, e.name))) {
        if (s.isDirectory) packages.push(`${e.name}/${s.name}`);
      }
    }
  }
  for (const name of packages) {
    const from = join(shared, name);
    const to = join(target, name);
    await Deno.mkdir(join(to, ".."), { recursive: true });
    const versions = pinned.get(name);
    if (versions === undefined) {
      await Deno.symlink(from, to);
      continue;
    }
    await Deno.mkdir(to);
    for await (const e of Deno.readDir(from)) {
      if (e.name !== "registry.json") {
        if (versions.has(e.name)) {
          await linkTree(join(from, e.name), join(to, e.name));
        }
        continue;
      }
      const meta = JSON.parse(await Deno.readTextFile(join(from, e.name)));
      for (const v of Object.keys(meta.versions ?? {})) {
        if (!versions.has(v)) delete meta.versions[v];
      }
      const newest = [...versions].sort(compareVersions).at(-1)!;
      meta["dist-tags"] = { latest: newest };
      await Deno.writeTextFile(join(to, e.name), JSON.stringify(meta));
    }
  }
}
