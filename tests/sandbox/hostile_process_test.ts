// The hostile provider against the host process itself: powers Deno's
// worker permissions do not cover (signals, exit, the terminal, the
// environment, Deno's internals) and the host protocol (stray and forged
// messages, huge results). Run through a library host in a child process
// (loadMemoryProvider, `-A`: the worker sandbox is the only barrier), so a
// successful attack kills the child, not the test runner. After every
// attack the host must still run, the other provider must still work, and
// HOME and the working directory must be the host's.
import assert from "node:assert/strict";
import { join } from "node:path";
import {
  type AttackLine,
  type HostileRun,
  hostileWorld,
  runHostileHost,
} from "../helpers/hostile.ts";

function refused(line: AttackLine | undefined, message: string): void {
  assert.ok(line, "the attack did not run");
  assert.deepEqual(line.error, { name: "NotCapable", message });
  assert.deepEqual(line.warnings, []);
  assert.equal(line.after, "undefined", "the intruder should still answer");
}

function hostSurvived(run: HostileRun): void {
  assert.equal(run.code, 0, `the host died (exit ${run.code}): ${run.stderr}`);
  assert.deepEqual(run.host, {
    host: "alive",
    notes: JSON.stringify({
      user: "the kite is red",
      assistant: "noted",
      session: "s",
    }),
    homeUnchanged: true,
    cwdUnchanged: true,
  });
}

const SIGNALS =
  "Memory provider 'intruder' may not send or handle signals: signals belong to the host process, which may serve other providers and profiles";
const EXIT =
  "Memory provider 'intruder' may not end the process: its host decides when it stops; throw an error to fail a call";
const TERMINAL =
  "Memory provider 'intruder' may not use the terminal: prompts and input belong to the host; write to the log with console or log()";
const ENV =
  "Memory provider 'intruder' may not change environment variables: the environment belongs to the host process; read variables with getSecret()";

Deno.test("a provider cannot signal or end the host: Deno.kill, process.kill, Deno.exit, process.exit, signal listeners", async () => {
  await using w = await hostileWorld("memory:\n  provider: intruder\n");
  const run = await runHostileHost(w, [
    { attack: "kill" },
    { attack: "processKill" },
    { attack: "exit" },
    { attack: "processExit" },
    { attack: "signalListener" },
    { attack: "processSignal" },
  ]);
  hostSurvived(run);
  refused(run.lines[0], SIGNALS);
  refused(run.lines[1], SIGNALS);
  refused(run.lines[2], EXIT);
  refused(run.lines[3], EXIT);
  refused(run.lines[4], SIGNALS);
  refused(run.lines[5], SIGNALS);
});

Deno.test("a provider cannot use the terminal: stdin, prompt, permission prompts; its output goes to the log", async () => {
  await using w = await hostileWorld("memory:\n  provider: intruder\n");
  const run = await runHostileHost(w, [
    { attack: "stdin" },
    { attack: "processStdin" },
    { attack: "prompt" },
    { attack: "confirm" },
    { attack: "alert" },
    { attack: "permissionRequest", path: "/etc/passwd" },
    { attack: "readFile", path: "/etc/passwd" },
    { attack: "stdout" },
    { attack: "processStdout" },
  ]);
  hostSurvived(run);
  refused(run.lines[0], TERMINAL);
  refused(run.lines[1], TERMINAL);
  refused(
    run.lines[2],
    "Memory provider 'intruder' may not call prompt(): prompts belong to the host",
  );
  refused(
    run.lines[3],
    "Memory provider 'intruder' may not call confirm(): prompts belong to the host",
  );
  refused(
    run.lines[4],
    "Memory provider 'intruder' may not call alert(): prompts belong to the host",
  );
  // A request answers the current state and never prompts or grants.
  assert.equal(run.lines[5]?.result, "prompt");
  assert.equal(run.lines[6]?.error?.name, "ProviderPermissionError");
  // Writes to stdout are accepted but land in the host's log, not on the
  // terminal.
  assert.equal(run.lines[7]?.result, 25);
  assert.equal(run.lines[8]?.result, true);
  assert.ok(!run.stdout.includes("INTRUDER"), run.stdout);
  assert.ok(!run.stderr.includes("INTRUDER"), run.stderr);
});

Deno.test("a provider cannot change the host's environment or working directory, nor reach Deno's internals", async () => {
  await using w = await hostileWorld(
    "memory:\n  provider: intruder\n  permissions:\n    intruder:\n      env: [HOME]\n",
  );
  const run = await runHostileHost(w, [
    { attack: "envSet", name: "HOME" },
    { attack: "processEnvSet", name: "HOME" },
    { attack: "chdir", path: join(w.home, "intruder") },
    { attack: "internals" },
    { attack: "envGet", name: "HOME" },
  ]);
  hostSurvived(run);
  refused(run.lines[0], ENV);
  refused(run.lines[1], ENV);
  refused(
    run.lines[2],
    "Memory provider 'intruder' may not change the working directory: it belongs to the host process",
  );
  assert.equal(run.lines[3]?.result, "undefined");
  assert.equal(run.lines[4]?.result, w.userHome);
});

Deno.test("a provider cannot speak the host protocol: a line it writes to its stdout stops that provider only, with one warning", async () => {
  await using w = await hostileWorld("memory:\n  provider: intruder\n");
  const run = await runHostileHost(w, [
    { attack: "spoofHost" },
    { attack: "fdForged", settleMs: 1000 },
  ]);
  hostSurvived(run);
  assert.equal(run.lines[0]?.result, "ignored");
  const stopped =
    "its sandbox process sent a line on its output without the protocol's token (provider code writing to its stdout), which the sandbox protocol does not allow, and was stopped";
  const line = run.lines[1];
  assert.ok(line);
  // The forged line and the call's own reply travel on the same pipe, the
  // forged line first: the call fails with the stop.
  assert.deepEqual(line.error, {
    name: "ProviderWorkerStoppedError",
    message: `Memory provider 'intruder' is not running: ${stopped}`,
  });
  assert.deepEqual(line.warnings, [
    `Memory provider 'intruder' stopped: ${stopped}`,
  ]);
  // The host supervises it: the next call starts a new process, which serves it.
  assert.notEqual(line.after, "ProviderWorkerStoppedError");
  assert.ok(!run.stderr.includes("FORGED"), run.stderr);
});

Deno.test("a provider cannot capture a private port: MessagePort.prototype.postMessage patched before the first reply gets nothing", async () => {
  await using w = await hostileWorld("memory:\n  provider: intruder\n");
  const run = await runHostileHost(w, [{ attack: "capturedPort" }]);
  hostSurvived(run);
  assert.equal(run.lines[0]?.result, "none");
  assert.deepEqual(run.lines[0]?.warnings, []);
});

Deno.test("the private port capture is real on the worker transport (canary)", async () => {
  await using w = await hostileWorld("memory:\n  provider: intruder\n");
  const run = await runHostileHost(w, [{ attack: "capturedPort" }], "worker");
  hostSurvived(run);
  assert.equal(run.lines[0]?.result, "forged");
  assert.deepEqual(run.lines[0]?.warnings, [
    "FORGED: the host says all is well",
  ]);
});

Deno.test("no storage is shared between providers or profiles: the Cache API and localStorage are gone", async () => {
  await using w = await hostileWorld("memory:\n  provider: intruder\n");
  // Two loads (two sandboxes, as two profiles or two runs would have).
  const run = await runHostileHost(w, [
    { attack: "storage" },
    { attack: "storage", fresh: true },
  ]);
  hostSurvived(run);
  assert.equal(run.lines[0]?.result, "none");
  assert.equal(run.lines[1]?.result, "none");
});

Deno.test("a provider's huge result fails that call only; the provider keeps serving", async () => {
  await using w = await hostileWorld("memory:\n  provider: intruder\n");
  const run = await runHostileHost(w, [{ attack: "huge" }]);
  hostSurvived(run);
  assert.deepEqual(run.lines[0]?.error, {
    name: "DataCloneError",
    message:
      "Memory provider 'intruder' returned a value that cannot leave its sandbox: the value is larger than the 32 MiB a call may return; return plain data (strings, numbers, arrays, objects)",
  });
  assert.equal(run.lines[0]?.after, "undefined");
});
