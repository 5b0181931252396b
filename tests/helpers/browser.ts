// A headless Chromium for the browser tests, on any machine the README's test
// command runs on: the system's `chromium` when one is on the PATH, else the
// Chromium that the npm package @sparticuz/chromium (pinned in
// tests/deno.lock, so `deno task test` caches it like any other package)
// ships brotli-compressed. That one is unpacked once per machine into
// `<cache>/hermes-memory/chromium-<version>/` (the cache folder tools/deno
// installs Deno into; tools/test_home.ts passes it on as
// HERMES_TEST_CACHE_DIR) and reused by later runs. The unpacking runs in a
// child process (the package unpacks into $TMPDIR, a variable this process
// must not change under the tests running beside it) into a folder of its
// own, renamed into place when complete, so a killed run or two runs at
// once never leave a half-written browser behind.
//
//   deno run -A tests/helpers/browser.ts DIR   # unpack into DIR (used below)
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import chromium from "npm:@sparticuz/chromium@153.0.0";
import puppeteer, { type Browser } from "npm:puppeteer-core@25.16.0";

const PACKAGE = "npm:@sparticuz/chromium@153.0.0";
const VERSION = PACKAGE.split("@").at(-1)!;
const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const SYSTEM_BROWSERS = ["chromium", "chromium-browser", "google-chrome"];

/** A launched browser that `await using` closes. */
export type TestBrowser = Browser & AsyncDisposable;

/** The first of {@linkcode SYSTEM_BROWSERS} on the PATH. */
function systemBrowser(): string | undefined {
  const path = Deno.env.get("PATH") ?? "";
  for (const name of SYSTEM_BROWSERS) {
    for (const dir of path.split(":").filter(Boolean)) {
      try {
        const info = Deno.statSync(join(dir, name));
        if (info.isFile && (info.mode ?? 0) & 0o111) return join(dir, name);
      } catch {
        // Not in this folder.
      }
    }
  }
  return undefined;
}

function cacheDir(): string {
  const given = Deno.env.get("HERMES_TEST_CACHE_DIR");
  if (given) return given;
  const xdg = Deno.env.get("XDG_CACHE_HOME") ||
    join(Deno.env.get("HOME") ?? "/tmp", ".cache");
  return join(xdg, "hermes-memory");
}

/** The unpacked npm Chromium's executable, unpacking it on first use. */
async function npmChromium(): Promise<string> {
  const dir = join(cacheDir(), `chromium-${VERSION}`);
  const executable = join(dir, "chromium");
  try {
    await Deno.stat(executable);
    return executable;
  } catch {
    // Not unpacked yet.
  }
  await Deno.mkdir(cacheDir(), { recursive: true });
  const staging = await Deno.makeTempDir({
    dir: cacheDir(),
    prefix: `.chromium-${VERSION}-`,
  });
  try {
    const unpack = await new Deno.Command(Deno.execPath(), {
      args: [
        "run",
        "--quiet",
        "--no-prompt",
        "--cached-only",
        `--lock=${join(ROOT, "tests", "deno.lock")}`,
        "--allow-read",
        "--allow-write",
        "--allow-env",
        "--allow-sys",
        fileURLToPath(import.meta.url),
        staging,
      ],
      cwd: ROOT,
      env: { TMPDIR: staging },
      stdin: "null",
    }).output();
    if (!unpack.success) {
      throw new Error(
        `unpacking ${PACKAGE} into ${staging} failed (exit code ${unpack.code}): ${
          new TextDecoder().decode(unpack.stderr).trim()
        }`,
      );
    }
    try {
      await Deno.rename(staging, dir);
    } catch (e) {
      // Another run finished first: use its copy.
      try {
        await Deno.stat(executable);
      } catch {
        throw e;
      }
    }
  } finally {
    await Deno.remove(staging, { recursive: true }).catch(() => {});
  }
  return executable;
}

/**
 * Starts a headless Chromium for a test: the system's when one is on the
 * PATH, else the one pinned in tests/deno.lock (unpacked once per machine).
 * `await using browser = await launchBrowser()` closes it.
 */
export async function launchBrowser(): Promise<TestBrowser> {
  const system = systemBrowser();
  const browser = system !== undefined
    ? await puppeteer.launch({
      executablePath: system,
      headless: true,
      args: ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"],
    })
    : await puppeteer.launch({
      executablePath: await npmChromium(),
      headless: "shell",
      args: [...chromium.args, "--disable-dev-shm-usage"],
    });
  return Object.assign(browser, {
    async [Symbol.asyncDispose]() {
      await browser.close();
    },
  });
}

if (import.meta.main) {
  // In the child started by npmChromium(): $TMPDIR is the staging folder.
  const executable = await chromium.executablePath();
  if (executable !== join(Deno.args[0]!, "chromium")) {
    throw new Error(
      `${PACKAGE} unpacked into ${executable}, not ${Deno.args[0]}`,
    );
  }
}
