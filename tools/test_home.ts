// Runs a command (the test suite) with HOME in a fresh temporary directory
// and HERMES_HOME unset (so the default profile is <that>/.hermes), removed
// afterwards, so no test can read or change
// the user's real ~/.hermes or ~/.honcho. The Deno cache is pinned to where
// it was (DENO_DIR), so `--cached-only` still finds every module. Exits
// with the command's exit code. `deno test`, `check` and `bench` get
// `--lock=tests/deno.lock`, and the tests HERMES_TEST_CACHE_DIR (the real
// `<cache>/hermes-memory`, where the unpacked test browser is kept).
//
//   deno run --allow-all tools/test_home.ts deno test …
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const [command, ...args] = Deno.args;

/**
 * `deno test`, `check` and `bench` resolve against tests/deno.lock (the
 * test-only packages are pinned there; deno.lock holds only what `hermes`
 * needs) unless the command names a lockfile itself.
 */
function withTestLock(args: string[]): string[] {
  const [sub, ...rest] = args;
  if (!["test", "check", "bench"].includes(sub ?? "")) return args;
  if (rest.some((a) => a === "--no-lock" || a.startsWith("--lock"))) {
    return args;
  }
  const lock = fileURLToPath(new URL("../tests/deno.lock", import.meta.url));
  return [sub!, `--lock=${lock}`, ...rest];
}
if (command === undefined) {
  console.error(
    "usage: deno run --allow-all tools/test_home.ts COMMAND [ARGS…]",
  );
  Deno.exit(2);
}
const realHome = Deno.env.get("HOME") ?? "/root";
const cache = Deno.env.get("XDG_CACHE_HOME") || join(realHome, ".cache");
const denoDir = Deno.env.get("DENO_DIR") || join(cache, "deno");
const home = Deno.realPathSync(
  Deno.makeTempDirSync({ prefix: "hermes-test-home-" }),
);
Deno.mkdirSync(join(home, ".hermes"));
let code = 1;
try {
  // An inherited HERMES_HOME would point at a real profile: it is dropped;
  // tests that need one set their own.
  const env = Deno.env.toObject();
  delete env.HERMES_HOME;
  // `deno` is this Deno: it need not be on PATH (./tools/deno runs it).
  const program = command === "deno" ? Deno.execPath() : command;
  const child = new Deno.Command(program, {
    args: command === "deno" ? withTestLock(args) : args,
    clearEnv: true,
    env: {
      ...env,
      HOME: home,
      HERMES_TEST_HOME: home,
      DENO_DIR: denoDir,
      // Where tests keep what outlives a run (the unpacked test browser).
      HERMES_TEST_CACHE_DIR: env.HERMES_TEST_CACHE_DIR ??
        join(cache, "hermes-memory"),
    },
    stdin: "inherit",
    stdout: "inherit",
    stderr: "inherit",
  }).spawn();
  code = (await child.status).code;
} finally {
  Deno.removeSync(home, { recursive: true });
}
Deno.exit(code);
