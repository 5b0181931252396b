// The README's library example, run verbatim as a user would: the `ts`
// block saved as main.ts in an empty directory (no deno.json, no import
// map), then each line of the `sh` block beside it, in a shell, with a
// scratch HOME. `jsr:@hermes/memory` resolves through a local JSR registry
// holding exactly what `deno publish` uploads (JSR_URL). Once against a
// built-in-only home, once against a home whose provider is Honcho (the
// Honcho test server): it works, and a correctly set-up host prints no
// warning.
import assert from "node:assert/strict";
import { join } from "node:path";
import { startHonchoTestServer } from "../honcho_server.ts";
import {
  readmeLibraryExampleText,
  runReadmeCommands,
} from "../helpers/readme_example.ts";
import {
  type JsrRegistry,
  serveJsrRegistry,
} from "../helpers/serve_checkout.ts";
import { type CommandResult, runCommand } from "../helpers/run_command.ts";
import { honchoUser } from "../helpers/honcho_user.ts";
import { lockedDenoDir } from "../helpers/locked_npm_cache.ts";

// Today's worker sandbox cannot confirm --unstable-worker-options without
// --allow-all and says so once when a provider loads; the child-process
// sandbox (branch `sandbox`) needs no such flag and prints nothing. The
// one line tolerated until that lands (then delete this).
/**
 * Saves the example as main.ts in a fresh project directory and runs the
 * README's lines, verbatim; returns the last line's result.
 */
async function runReadmeExample(
  registry: JsrRegistry,
  project: string,
  env: Record<string, string>,
): Promise<CommandResult> {
  const { code } = await readmeLibraryExampleText();
  await Deno.mkdir(project, { recursive: true });
  await Deno.writeTextFile(join(project, "main.ts"), code);
  const run = await runReadmeCommands(project, {
    // No lockfile: npm packages resolve from metadata listing only the
    // pinned versions.
    env: { JSR_URL: registry.jsrUrl, DENO_DIR: await lockedDenoDir(), ...env },
  });
  assert.equal(run.code, 0, `${run.line}\n${run.err}`);
  return run;
}

function warnings(stderr: string): string[] {
  return stderr.split("\n").filter((line) => line.trim() !== "");
}

async function scratch(prefix: string): Promise<string> {
  return await Deno.realPath(await Deno.makeTempDir({ prefix }));
}

Deno.test("README library example, verbatim, from jsr: on a built-in-only home: the memory tool's add/replace/operations/remove land in USER.md and MEMORY.md and the next session's prompt", async () => {
  await using registry = await serveJsrRegistry();
  const root = await scratch("hermes-readme-");
  try {
    const user = join(root, "user");
    const home = join(user, ".hermes");
    await Deno.mkdir(home, { recursive: true });
    const project = join(root, "agent");
    const env = { HOME: user, HERMES_HOME: home };
    const first = await runReadmeExample(registry, project, env);
    assert.deepEqual(warnings(first.err), []);
    assert.equal(first.out.trim(), "(nothing remembered yet)");
    const userFile = await Deno.readTextFile(join(home, "memories", "USER.md"));
    assert.equal(userFile.trim(), "Lives in Porto");
    const memoryFile = await Deno.readTextFile(
      join(home, "memories", "MEMORY.md"),
    );
    assert.equal(memoryFile.trim(), "Project uses Deno 2.9");
    // The next session starts with what the first one remembered.
    const second = await runReadmeExample(registry, project, env);
    assert.deepEqual(warnings(second.err), []);
    assert.match(second.out, /Lives in Porto/);
    assert.match(second.out, /Project uses Deno 2\.9/);
    // The example type-checks against the published types, as an editor
    // shows it.
    const check = await runCommand(Deno.execPath(), ["check", "main.ts"], {
      cwd: project,
      env: {
        JSR_URL: registry.jsrUrl,
        DENO_DIR: await lockedDenoDir(),
        ...env,
      },
    });
    assert.equal(check.code, 0, check.err);
    // Nothing but main.ts in the project: no .hermes, no lockfile.
    assert.deepEqual(
      [...Deno.readDirSync(project)].map((e) => e.name),
      ["main.ts"],
    );
    // Loaded from the registry, as published.
    assert.ok(registry.requests.has(`${registry.packagePath}mod.ts`));
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("README library example, verbatim, from jsr: with Honcho as the provider: its sandbox loads from the registry and the turn reaches the server once", async () => {
  await using registry = await serveJsrRegistry();
  await using honcho = await startHonchoTestServer({ apiKey: "hch-readme-42" });
  await using user = await honchoUser(honcho.url, "hch-readme-42");
  const run = await runReadmeExample(
    registry,
    join(user.userHome, "agent"),
    { HOME: user.userHome },
  );
  assert.deepEqual(warnings(run.err), []);
  const contents = honcho.state.messages.map((m) => m.content);
  assert.equal(
    contents.filter((c) => c === "I moved from Lisbon to Porto").length,
    1,
    JSON.stringify(contents),
  );
  assert.equal(contents.filter((c) => c === "Noted: Porto.").length, 1);
  // The provider ran from the registry's copy, in its sandbox.
  assert.ok(
    registry.requests.has(
      `${registry.packagePath}plugins/memory/honcho/mod.ts`,
    ),
  );
  honcho.assertNoViolations();
});
