// The host flags a provider sandbox depends on, checked in child processes
// started with the exact flags under test.
import assert from "node:assert/strict";
import { join } from "node:path";
import {
  installFixture,
  REPO,
  runChild,
  runChildOnTerminal,
  tempHome,
} from "../helpers/plugin_fixtures.ts";

const REPORT = `
import { checkHostSafety } from "${REPO}/src/sandbox/host_safety.ts";
const r = await checkHostSafety();
console.log(JSON.stringify({ prompt: r.prompt, npm: r.npm, workerOptions: r.workerOptions,
  problems: r.problems, warnings: r.warnings, commandLine: r.commandLine !== null }));
`;

async function report(
  flags: string[],
  config?: { unstable: string[] } | null,
): Promise<Record<string, unknown>> {
  await using h = await tempHome();
  let configPath: string | null | undefined = undefined;
  if (config === null) configPath = null;
  else if (config !== undefined) {
    configPath = join(h.outside, "deno.json");
    await Deno.writeTextFile(configPath, JSON.stringify(config));
  }
  const run = await runChild(h.outside, REPORT, { flags, config: configPath });
  assert.equal(run.code, 0, run.stderr);
  return JSON.parse(run.stdout);
}

Deno.test("checkHostSafety() passes the product flags read from the command line", async () => {
  const r = await report(["-A", "--no-prompt", "--cached-only", "--frozen"]);
  assert.deepEqual(r, {
    prompt: "no-prompt",
    npm: "cached-only",
    workerOptions: "enabled",
    problems: [],
    warnings: [],
    commandLine: true,
  });
});

Deno.test("checkHostSafety() warns when npm downloads are open", async () => {
  const r = await report(["-A", "--no-prompt", "--frozen"]);
  assert.equal(r.npm, "open");
  assert.deepEqual(r.warnings, [
    "Deno runs without --cached-only, so a sandboxed memory provider can download and load any npm package at run time: add --cached-only to the deno command (run 'hermes memory setup' to cache a provider's packages first)",
  ]);
});

Deno.test("checkHostSafety() cannot tell the npm mode when the command line is unreadable, and probes no registry", async () => {
  const scoped = ["--allow-read", "--allow-env", "--no-prompt", "--frozen"];
  const cached = await report([...scoped, "--cached-only"]);
  assert.equal(cached.commandLine, false);
  assert.equal(cached.npm, "unknown");
  // Without a terminal nothing can prompt.
  assert.equal(cached.prompt, "no-terminal");
});

Deno.test("checkHostSafety() finds the worker-options setting in the deno.json above the main module", async () => {
  const scoped = [
    "--allow-read",
    "--allow-env",
    "--no-prompt",
    "--cached-only",
    "--frozen",
  ];
  const enabled = await report(scoped, { unstable: ["worker-options"] });
  const aboutWorkers = (r: Record<string, unknown>) =>
    (r.warnings as string[]).filter((w) => /worker permissions/i.test(w));
  assert.equal(enabled.workerOptions, "enabled");
  assert.deepEqual(aboutWorkers(enabled), []);
  // Without it the setting may still come from a flag the process cannot see.
  const unknown = await report(scoped, { unstable: [] });
  assert.equal(unknown.workerOptions, "unknown");
  assert.deepEqual(aboutWorkers(unknown), [
    'Cannot confirm that worker permissions are enabled: make sure deno.json has "unstable": ["worker-options"] or deno runs with --unstable-worker-options, else Deno exits with code 70',
  ]);
});

Deno.test("checkHostSafety() reports worker options as a problem when deno.json is not used", async () => {
  const r = await report([
    "-A",
    "--no-prompt",
    "--cached-only",
    "--no-config",
    "--frozen",
  ], null);
  assert.equal(r.workerOptions, "disabled");
  assert.deepEqual(r.problems, [
    'Worker permissions are not enabled, and Deno would exit with code 70 on the first sandboxed load: add "unstable": ["worker-options"] to deno.json or run deno with --unstable-worker-options',
  ]);
});

function intruderScript(
  home: string,
  outside: string,
  transport: "process" | "worker" = "worker",
): string {
  return `
import { loadMemoryProvider } from "${REPO}/src/plugins/provider_loader.ts";
import { setLogger } from "${REPO}/src/core/log.ts";
setLogger({ log: (level, message) => console.log("LOG " + level + " " + message) });
const p = await loadMemoryProvider("intruder", { hermesHome: ${
    JSON.stringify(home)
  }, bundledDir: ${
    JSON.stringify(outside)
  }, config: {}, transport: "${transport}" });
if (p === null) { console.log("NOT LOADED"); Deno.exit(0); }
try {
  console.log("RESULT " + await p.handleToolCall("intrude", { attack: "readFile", path: "/etc/hostname" }, {}));
} catch (e) {
  console.log("ERROR " + e.message);
}
await p.shutdown();
Deno.exit(0);
`;
}

Deno.test("a sandboxed read on a terminal is denied without a prompt under --no-prompt", async () => {
  await using h = await tempHome();
  await installFixture(h.plugins, "intruder");
  const run = await runChildOnTerminal(
    h.outside,
    intruderScript(h.home, h.outside),
    ["-A", "--no-prompt", "--cached-only", "--frozen"],
  );
  assert.equal(run.prompted, false, run.output);
  assert.match(
    run.output,
    /ERROR Memory provider 'intruder' may not read \/etc\/hostname: declare it under permissions\.read/,
  );
});

Deno.test("loadMemoryProvider() refuses a sandboxed load on a terminal without --no-prompt", async () => {
  await using h = await tempHome();
  await installFixture(h.plugins, "intruder");
  const run = await runChildOnTerminal(
    h.outside,
    intruderScript(h.home, h.outside),
    ["-A", "--cached-only", "--frozen"],
  );
  assert.equal(run.prompted, false, run.output);
  assert.match(
    run.output,
    /LOG warn Failed to load memory provider 'intruder': Deno runs without --no-prompt on a terminal, so a sandboxed memory provider could ask for \(and be given\) any permission: add --no-prompt to the deno command or set DENO_NO_PROMPT=1\nNOT LOADED/,
  );
});

Deno.test("a provider's sandbox process never prompts, whatever the host's flags: the denied read is denied", async () => {
  // The library host has no --no-prompt and sits on a terminal; the
  // provider's own process gets --no-prompt.
  await using h = await tempHome();
  await installFixture(h.plugins, "intruder");
  const run = await runChildOnTerminal(
    h.outside,
    intruderScript(h.home, h.outside, "process"),
    ["--allow-read", "--allow-write", "--allow-env", "--allow-run"],
  );
  assert.equal(run.prompted, false, run.output);
  assert.doesNotMatch(run.output, /Cannot confirm/);
  assert.match(
    run.output,
    /ERROR Memory provider 'intruder' may not read \/etc\/hostname: declare it under permissions\.read/,
  );
});

Deno.test("the worker prompt hole is real when --no-prompt cannot be confirmed (canary)", async () => {
  // Without --allow-all the command line is unreadable, so the loader can
  // only warn; a provider's denied read then prompts, and "y" grants it.
  // If this starts failing, Deno closed the hole: relax the docs.
  await using h = await tempHome();
  await installFixture(h.plugins, "intruder");
  const run = await runChildOnTerminal(
    h.outside,
    intruderScript(h.home, h.outside),
    [
      "--allow-read",
      "--allow-write",
      "--allow-env",
      "--cached-only",
      "--frozen",
    ],
  );
  assert.match(
    run.output,
    /LOG warn Cannot confirm that Deno runs with --no-prompt on this terminal/,
  );
  assert.equal(run.prompted, true, run.output);
  assert.match(run.output, /RESULT \{"result":/);
});

const SNEAKY = (
  home: string,
  outside: string,
  pkg: string,
  transport: "process" | "worker",
) => `
import { loadMemoryProvider } from "${REPO}/src/plugins/provider_loader.ts";
const p = await loadMemoryProvider("npm_sneaky", { hermesHome: ${
  JSON.stringify(home)
}, bundledDir: ${
  JSON.stringify(outside)
}, config: {}, hostCheck: false, transport: "${transport}" });
try { console.log("RESULT " + await p.prefetch(${JSON.stringify(pkg)}, {})); }
catch (e) { console.log("ERROR " + e.message.split("\\n").join(" | ")); }
await p.shutdown();
`;

Deno.test("a provider's process gets --cached-only: a runtime npm: import the source check cannot see is refused, whatever the host's flags", async () => {
  await using h = await tempHome();
  await installFixture(h.plugins, "npm_sneaky");
  const pkg = "hermes-memory-never-cached-zz@0.0.1";
  // The host itself runs without --cached-only.
  const run = await runChild(
    h.outside,
    SNEAKY(h.home, h.outside, pkg, "process"),
    {
      flags: [
        "--frozen",
        "--allow-read",
        "--allow-write",
        "--allow-env",
        "--allow-run",
      ],
    },
  );
  assert.equal(run.code, 0, run.stderr);
  assert.match(
    run.stdout,
    /ERROR .*npm package not found in cache: "hermes-memory-never-cached-zz", --cached-only is specified\./,
  );
});

Deno.test("on the worker transport, without --cached-only the same import reaches the npm registry (canary)", async () => {
  await using h = await tempHome();
  await installFixture(h.plugins, "npm_sneaky");
  // An uppercase name can never be published, so nothing is installed.
  const run = await runChild(
    h.outside,
    SNEAKY(
      h.home,
      h.outside,
      "HERMES-MEMORY-NEVER-PUBLISHED@0.0.1",
      "worker",
    ),
    {
      flags: [
        "--no-prompt",
        "--frozen",
        "--allow-read",
        "--allow-write",
        "--allow-env",
      ],
    },
  );
  assert.equal(run.code, 0, run.stderr);
  assert.match(
    run.stdout,
    /ERROR npm package 'HERMES-MEMORY-NEVER-PUBLISHED' does not exist|ERROR .*(registry|dns|network|connect)/i,
  );
});
