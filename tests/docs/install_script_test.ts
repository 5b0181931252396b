// tools/install.sh and tools/deno beyond the README's own run of them
// (readme_commands_test): install.sh can be run again, names the PATH line
// only while the folder is not on the PATH, and never replaces a real `deno`
// that Deno's own installer put in ~/.deno/bin; tools/deno on a machine
// without npm says what it needs.
import assert from "node:assert/strict";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { freshMachine } from "../helpers/readme_blocks.ts";
import { runCommand } from "../helpers/run_command.ts";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));

function install(home: string, path = "/usr/bin:/bin") {
  return runCommand(join(ROOT, "tools", "install.sh"), [], {
    cwd: "/",
    env: { HOME: home, PATH: path },
  });
}

Deno.test("tools/install.sh runs again cleanly and stops naming the PATH line once the folder is on the PATH", async () => {
  await using machine = await freshMachine(ROOT, "hermes-install-");
  const home = machine.home;
  const bin = join(home, ".deno", "bin");
  const first = await install(home);
  assert.equal(first.code, 0, first.err);
  assert.match(
    first.out,
    new RegExp(`^Installed hermes and deno [\\d.]+ in ${bin}$`, "m"),
  );
  assert.match(
    first.out,
    /^Add it to your PATH \(e\.g\. in ~\/\.profile\): export PATH=/m,
  );
  assert.equal(
    await Deno.realPath(join(bin, "deno")),
    await Deno.realPath(Deno.execPath()),
  );
  const again = await install(home, `${bin}:/usr/bin:/bin`);
  assert.equal(again.code, 0, again.err);
  assert.doesNotMatch(again.out, /Add it to your PATH/);
  const version = await runCommand(join(bin, "hermes"), ["--version"], {
    cwd: "/",
    env: { HOME: home, PATH: `${bin}:/usr/bin:/bin` },
  });
  assert.equal(version.code, 0, version.err);
  assert.match(version.out, /^@hermes\/memory /);
});

Deno.test("tools/install.sh keeps a real deno already in ~/.deno/bin", async () => {
  await using machine = await freshMachine(ROOT, "hermes-install-");
  const home = machine.home;
  const bin = join(home, ".deno", "bin");
  await Deno.mkdir(bin, { recursive: true });
  const mine = "#!/bin/sh\necho 'deno 2.9.9 (users own)'\n";
  await Deno.writeTextFile(join(bin, "deno"), mine, { mode: 0o755 });
  const run = await install(home);
  assert.equal(run.code, 0, run.err);
  assert.equal(await Deno.readTextFile(join(bin, "deno")), mine);
  assert.equal((await Deno.lstat(join(bin, "deno"))).isSymlink, false);
  assert.match(
    run.err,
    new RegExp(
      `keeping the deno already in ${bin} \\(deno 2\\.9\\.9 \\(users own\\)\\); hermes runs with it`,
    ),
  );
});

Deno.test("tools/deno without npm says what it needs and creates nothing", async () => {
  const scratch = await Deno.makeTempDir({ prefix: "hermes-no-npm-" });
  try {
    // A PATH with the usual tools but no npm (and no deno).
    const bin = join(scratch, "bin");
    await Deno.mkdir(bin);
    for (const tool of ["mkdir", "env"]) {
      await Deno.symlink(`/usr/bin/${tool}`, join(bin, tool));
    }
    const home = join(scratch, "home");
    await Deno.mkdir(home);
    const run = await runCommand("/usr/bin/bash", [
      join(ROOT, "tools", "deno"),
      "--version",
    ], { cwd: ROOT, env: { HOME: home, PATH: bin } });
    assert.equal(run.code, 127);
    assert.match(
      run.err,
      /^tools\/deno: deno@[\d.]+ is not installed yet, and installing it needs npm, which is not on the PATH: install Node\.js with npm, then run this again\n$/,
    );
    assert.deepEqual([...Deno.readDirSync(home)], []);
  } finally {
    await Deno.remove(scratch, { recursive: true });
  }
});
