// Runs a command (the test suite) with HOME in a fresh temporary directory
// and HERMES_HOME unset (so the default profile is <that>/.hermes), removed
// afterwards, so no test can read or change
// the user's real ~/.hermes or ~/.honcho. The Deno cache is pinned to where
// it was (DENO_DIR), so `--cached-only` still finds every module. Exits
// with the command's exit code.
//
//   deno run --allow-all tools/test_home.ts deno test …
import { join } from "node:path";

const [command, ...args] = Deno.args;
if (command === undefined) {
  console.error(
    "usage: deno run --allow-all tools/test_home.ts COMMAND [ARGS…]",
  );
  Deno.exit(2);
}
const realHome = Deno.env.get("HOME") ?? "/root";
const denoDir = Deno.env.get("DENO_DIR") ||
  join(Deno.env.get("XDG_CACHE_HOME") || join(realHome, ".cache"), "deno");
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
    args,
    clearEnv: true,
    env: { ...env, HOME: home, HERMES_TEST_HOME: home, DENO_DIR: denoDir },
    stdin: "inherit",
    stdout: "inherit",
    stderr: "inherit",
  }).spawn();
  code = (await child.status).code;
} finally {
  Deno.removeSync(home, { recursive: true });
}
Deno.exit(code);
