// Imported first by the shared test helpers: a test process never reads or
// writes the user's real home. Unless the run already has a temporary home
// (tools/test_home.ts, the `test` task's wrapper, sets HOME and
// HERMES_TEST_HOME), HOME is moved to a fresh temporary directory for the
// whole process, removed when it exits, and an inherited HERMES_HOME (a
// real profile) is removed, so the default profile is <temp>/.hermes. The
// Deno cache stays where it was (DENO_DIR is pinned first), so `--cached-
// only` children still find every module. Code that falls back to
// `~/.hermes` or `~/.honcho` (the shared Honcho config, the default root of
// profiles) then finds an empty home instead of the user's settings.
import { join } from "node:path";

function pinDenoDir(): void {
  if (Deno.env.get("DENO_DIR")) return;
  const home = Deno.env.get("HOME") ?? "/root";
  const cache = Deno.env.get("XDG_CACHE_HOME") || join(home, ".cache");
  Deno.env.set("DENO_DIR", join(cache, "deno"));
}

function isolate(): string {
  const given = Deno.env.get("HERMES_TEST_HOME");
  if (given && Deno.env.get("HOME") === given) return given;
  pinDenoDir();
  const home = Deno.realPathSync(
    Deno.makeTempDirSync({ prefix: "hermes-test-home-" }),
  );
  Deno.mkdirSync(join(home, ".hermes"));
  Deno.env.set("HOME", home);
  Deno.env.delete("HERMES_HOME");
  Deno.env.set("HERMES_TEST_HOME", home);
  globalThis.addEventListener("unload", () => {
    try {
      Deno.removeSync(home, { recursive: true });
    } catch {
      // Already gone.
    }
  });
  return home;
}

/** The temporary user home this test process runs with (`HOME`). */
export const TEST_HOME: string = isolate();

/**
 * Runs `fn` with a fresh temporary directory (a profile home, its real
 * path), prepared by `setup` when given, and removes it afterwards.
 */
export async function withHome<T>(
  fn: (home: string) => Promise<T>,
  setup?: (home: string) => Promise<unknown>,
): Promise<T> {
  const home = await Deno.realPath(
    await Deno.makeTempDir({ prefix: "hermes-test-profile-" }),
  );
  try {
    await setup?.(home);
    return await fn(home);
  } finally {
    await Deno.remove(home, { recursive: true });
  }
}
