// The module graph stands on its own: imported by an http URL, by a local
// path or from JSR, with no deno.json and no import map in the user's
// project, and with --cached-only after one `deno cache` of the user's
// entry file (the sandbox's entry modules and the bundled providers
// included). `deno install -g jsr:@hermes/memory/launcher` installs a
// working `hermes` from the local JSR registry. The URL and path cases run
// the README's own `deno cache` / `deno run` lines (its flags are the one
// place they are written), with the source's flags inserted.
import assert from "node:assert/strict";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { startHonchoTestServer } from "../honcho_server.ts";
import { REPO } from "../helpers/plugin_fixtures.ts";
import {
  readmeLibraryExample,
  runReadmeCommands,
} from "../helpers/readme_example.ts";
import { serveCheckout, serveJsrRegistry } from "../helpers/serve_checkout.ts";
import { runDeno } from "../helpers/deno_child.ts";
import { lockedNpmCache } from "../helpers/locked_npm_cache.ts";
import { honchoUser } from "../helpers/honcho_user.ts";
import { type CommandResult, runCommand } from "../helpers/run_command.ts";

/**
 * The README's `deno cache` and `deno run --cached-only` lines, with the
 * example importing `specifier`, the locked npm versions and `flags`.
 */
async function cacheThenRun(
  project: string,
  specifier: string,
  home: string,
  flags: string[],
): Promise<CommandResult & { line: string }> {
  await Deno.mkdir(project, { recursive: true });
  await Deno.writeTextFile(
    join(project, "main.ts"),
    await readmeLibraryExample(specifier),
  );
  // The locked npm versions (a copy: a run may add to it).
  await Deno.copyFile(join(REPO, "deno.lock"), join(project, "deno.lock"));
  return await runReadmeCommands(project, {
    env: { HOME: home },
    flags: ["--no-config", "--lock=deno.lock", ...flags],
    args: ["the kite is red", "noted, red kite"],
  });
}

for (const via of ["http URL", "local path"] as const) {
  Deno.test(`by ${via}, no import map: deno cache once, then --cached-only runs the example with honcho in its sandbox`, async () => {
    await using checkout = serveCheckout();
    await using honcho = await startHonchoTestServer({ apiKey: "hch-graph-7" });
    await using user = await honchoUser(honcho.url, "hch-graph-7");
    const specifier = via === "http URL"
      ? `${checkout.url}/mod.ts`
      : pathToFileURL(join(REPO, "mod.ts")).href;
    const extra = via === "http URL" ? [`--allow-import=${checkout.host}`] : [];
    const run = await cacheThenRun(
      join(user.userHome, "agent"),
      specifier,
      user.userHome,
      extra,
    );
    assert.equal(run.code, 0, `${run.line}\n${run.err}`);
    const result = JSON.parse(run.out.trim().split("\n").at(-1)!);
    assert.equal(result.provider, "honcho", run.err);
    assert.equal(result.drain.notDurable, 0);
    const contents = honcho.state.messages.map((m) => m.content);
    assert.equal(contents.filter((c) => c === "the kite is red").length, 1);
    if (via === "http URL") {
      // Everything the sandbox loads was fetched by `deno cache`.
      for (
        const path of [
          "/src/provider/worker_bootstrap.ts",
          "/plugins/memory/honcho/mod.ts",
        ]
      ) {
        assert.equal(checkout.requests.get(path), 1, path);
      }
    }
    honcho.assertNoViolations();
  });
}

Deno.test("deno install -g jsr:@hermes/memory/launcher from a JSR registry installs a hermes that runs", async () => {
  await using registry = await serveJsrRegistry();
  const root = await Deno.realPath(
    await Deno.makeTempDir({ prefix: "hermes-jsr-install-" }),
  );
  try {
    const user = join(root, "user");
    const home = join(user, ".hermes");
    await Deno.mkdir(home, { recursive: true });
    await Deno.writeTextFile(join(home, "config.yaml"), "memory: {}\n");
    const installRoot = join(root, "install");
    // A JSR install has no lockfile: its npm packages resolve from the
    // registry metadata, here cut down to the locked versions (already
    // cached), so the test fetches nothing the lock does not pin.
    const denoDir = join(root, "deno-dir");
    await lockedNpmCache(denoDir, join(REPO, "deno.lock"));
    const env = {
      HOME: user,
      JSR_URL: registry.jsrUrl,
      DENO_INSTALL_ROOT: installRoot,
      DENO_DIR: denoDir,
    };
    // The README's line "3. From JSR".
    const install = await runDeno([
      "install",
      "-g",
      "-f",
      "--name",
      "hermes",
      "--no-prompt",
      "--allow-read",
      "--allow-write",
      "--allow-env",
      "--allow-run",
      "jsr:@hermes/memory/launcher",
    ], { cwd: root, env });
    assert.equal(install.code, 0, install.stderr);
    const status = await runCommand(
      join(installRoot, "bin", "hermes"),
      ["memory", "status", "--json"],
      { cwd: root, env },
    );
    assert.equal(status.code, 0, status.err);
    const report = JSON.parse(status.out);
    assert.equal(report.hermesHome, home);
    assert.deepEqual(
      report.plugins.map((p: { name: string }) => p.name),
      ["archive", "honcho"],
    );
    assert.ok(
      registry.requests.has(`${registry.packagePath}src/launcher/main.ts`),
    );
    assert.ok(registry.requests.has(`${registry.packagePath}src/cli/main.ts`));
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});
