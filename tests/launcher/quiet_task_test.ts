// `deno task hermes` with a complete module cache prints nothing of its
// own: `deno task -q hermes …` leaves stderr to the command (no task echo,
// no Download lines, no notices); plain `deno task hermes …` adds exactly
// one line, deno task's own "Task hermes …" echo.
import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { runCommand } from "../helpers/run_command.ts";
import { withHome } from "../helpers/test_home.ts";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));

Deno.test("deno task -q hermes: stderr holds only the command's own output", async () => {
  await withHome(async (home) => {
    // A fresh HOME: the launcher's first start (its cache step included)
    // against the complete Deno cache, then a cached start.
    for (const attempt of ["first", "cached"]) {
      const run = await runCommand(
        Deno.execPath(),
        ["task", "-q", "hermes", "memory", "status"],
        { cwd: ROOT, env: { HOME: home, DENO_NO_UPDATE_CHECK: "1" } },
      );
      assert.equal(run.code, 0, run.err);
      // The first start's cache step finds everything cached; it explains a
      // pause only when it takes over a second (a loaded machine).
      const expected = attempt === "first" &&
          run.err === "hermes: caching the modules the CLI needs (first run)…\n"
        ? run.err
        : "";
      assert.equal(run.err, expected, `${attempt} start`);
      assert.match(run.out, /^Memory status\n/);
    }
    const bad = await runCommand(
      Deno.execPath(),
      ["task", "-q", "hermes", "memory", "status", "--nope"],
      { cwd: ROOT, env: { HOME: home, DENO_NO_UPDATE_CHECK: "1" } },
    );
    assert.equal(bad.code, 2);
    assert.equal(
      bad.err,
      "error: unknown option '--nope'\nhint: run 'hermes memory status --help' for usage\n",
    );
  });
});

Deno.test("deno task hermes without -q adds only deno task's one echo line", async () => {
  await withHome(async (home) => {
    const run = await runCommand(
      Deno.execPath(),
      ["task", "hermes", "--version"],
      { cwd: ROOT, env: { HOME: home, DENO_NO_UPDATE_CHECK: "1" } },
    );
    assert.equal(run.code, 0, run.err);
    const lines = run.err.split("\n").filter((l) => l !== "");
    assert.equal(lines.length, 1, run.err);
    assert.match(
      lines[0] ?? "",
      /^Task hermes deno run .*src\/launcher\/main\.ts/,
    );
    assert.doesNotMatch(run.err, /Download|npm notice|new release/i);
  });
});
