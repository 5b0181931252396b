// The hostile provider against what its grant may never reach, through a
// library host (loadMemoryProvider in a child process, HOME set so that
// ~/.hermes is the default profile and ~/.hermes/profiles/other lives
// inside it, as Hermes lays them out). Each attack asserts the exact error
// the host gets and the one warning it logs, and that the target is
// unchanged afterwards.
import assert from "node:assert/strict";
import { join } from "node:path";
import {
  type AttackLine,
  type HostileWorld,
  hostileWorld,
  runHostileHost,
  SECRETS,
} from "../helpers/hostile.ts";

function never(path: string, why: string): string {
  return `Memory provider 'intruder' may not read ${path}: ${why}; no grant can add it`;
}

function neverWrite(path: string, why: string): string {
  return `Memory provider 'intruder' may not write ${path}: ${why}; no grant can add it`;
}

function assertDenied(line: AttackLine | undefined, message: string): void {
  assert.ok(line, "the attack did not run");
  assert.deepEqual(line.error, { name: "ProviderPermissionError", message });
  // The first denial of a target is also logged once, even when the
  // provider swallows it.
  assert.deepEqual(line.warnings, [message]);
  assert.equal(line.after, "undefined", "the intruder should still answer");
}

async function snapshot(paths: string[]): Promise<string[]> {
  return await Promise.all(paths.map((p) => Deno.readTextFile(p)));
}

Deno.test("a default-profile provider cannot read or write another profile living inside its home", async () => {
  await using w = await hostileWorld("memory:\n  provider: intruder\n");
  const otherFiles = [
    join(w.other, ".env"),
    join(w.other, "memories", "MEMORY.md"),
    join(w.other, "config.yaml"),
  ];
  const before = await snapshot(otherFiles);
  const run = await runHostileHost(w, [
    { attack: "readFile", path: join(w.other, ".env") },
    { attack: "readFile", path: join(w.other, "memories", "MEMORY.md") },
    { attack: "writeFile", path: join(w.other, "config.yaml") },
    { attack: "writeFile", path: join(w.other, "memories", "MEMORY.md") },
  ]);
  assert.equal(run.code, 0, run.stderr);
  const why = `it belongs to another profile (under ${
    join(w.home, "profiles")
  })`;
  assertDenied(run.lines[0], never(join(w.other, ".env"), why));
  assertDenied(
    run.lines[1],
    never(join(w.other, "memories", "MEMORY.md"), why),
  );
  assertDenied(run.lines[2], neverWrite(join(w.other, "config.yaml"), why));
  assertDenied(
    run.lines[3],
    neverWrite(join(w.other, "memories", "MEMORY.md"), why),
  );
  assert.deepEqual(await snapshot(otherFiles), before);
  assert.ok(!run.stdout.includes(SECRETS.other));
});

Deno.test("a provider never reads its own profile's .env or config.yaml, nor rewrites config.yaml to widen its grant", async () => {
  const config = "memory:\n  provider: intruder\n";
  await using w = await hostileWorld(config);
  const env = join(w.home, ".env");
  const yaml = join(w.home, "config.yaml");
  const before = await snapshot([env, yaml]);
  const run = await runHostileHost(w, [
    { attack: "readFile", path: env },
    { attack: "readFile", path: yaml },
    {
      attack: "writeFile",
      path: yaml,
      text:
        "memory:\n  provider: intruder\n  permissions:\n    intruder:\n      read: [/]\n",
    },
    // A second load reads config.yaml again: the grant did not widen.
    { attack: "readFile", path: "/etc/hostname", fresh: true },
  ]);
  assert.equal(run.code, 0, run.stderr);
  assertDenied(
    run.lines[0],
    never(
      env,
      `it is ${env}, a profile's secrets file: the host hands a provider the variables it declares`,
    ),
  );
  const yamlWhy =
    `it is ${yaml}, a profile's config.yaml: the host hands a provider its own sections`;
  assertDenied(run.lines[1], never(yaml, yamlWhy));
  assertDenied(run.lines[2], neverWrite(yaml, yamlWhy));
  assert.equal(run.lines[3]?.error?.name, "ProviderPermissionError");
  assert.deepEqual(await snapshot([env, yaml]), before);
  assert.ok(!run.stdout.includes(SECRETS.home));
});

Deno.test("a provider cannot rewrite its own plugin.yaml or add a cli.ts: its code directory is read-only", async () => {
  await using w = await hostileWorld("memory:\n  provider: intruder\n");
  const manifest = join(w.intruderDir, "plugin.yaml");
  const cli = join(w.intruderDir, "cli.ts");
  const before = await snapshot([manifest]);
  const run = await runHostileHost(w, [
    {
      attack: "writeFile",
      path: manifest,
      text: "permissions:\n  read: [/]\n  net: [evil.example]\n",
    },
    {
      attack: "writeFile",
      path: cli,
      text: "export function registerCli() { Deno.exit(1); }",
    },
    { attack: "readFile", path: join(w.plugins, "notes", "mod.ts") },
    // Its own code stays readable.
    { attack: "readFile", path: join(w.intruderDir, "plugin.yaml") },
  ]);
  assert.equal(run.code, 0, run.stderr);
  const why = `it is inside ${
    join(w.home, "plugins")
  }, the providers' code: each provider reads only its own and none may change any (changed code would run unconfined on the host)`;
  assertDenied(run.lines[0], neverWrite(manifest, why));
  assertDenied(run.lines[1], neverWrite(cli, why));
  assertDenied(run.lines[2], never(join(w.plugins, "notes", "mod.ts"), why));
  assert.equal(run.lines[3]?.result, before[0]);
  assert.deepEqual(await snapshot([manifest]), before);
  await assert.rejects(Deno.stat(cli), Deno.errors.NotFound);
});

Deno.test("the built-in memory files are the host's: no grant reaches MEMORY.md", async () => {
  const config = "memory:\n  provider: intruder\n";
  await using w = await hostileWorld(config);
  const memories = join(w.home, "memories");
  const memory = join(memories, "MEMORY.md");
  await Deno.writeTextFile(
    join(w.home, "config.yaml"),
    `memory:\n  provider: intruder\n  permissions:\n    intruder:\n      read: [${memory}]\n      write: [${memories}]\n`,
  );
  const run = await runHostileHost(w, [
    { attack: "readFile", path: memory },
    { attack: "writeFile", path: memory },
  ]);
  const why =
    `it is inside ${memories}, the built-in memory (MEMORY.md, USER.md)`;
  assertDenied(run.lines[0], never(memory, why));
  assertDenied(run.lines[1], neverWrite(memory, why));
  const configPath = join(w.home, "config.yaml");
  assert.deepEqual(
    run.loadWarnings.filter((l) => l.startsWith("Ignoring")),
    [
      `Ignoring '${memory}' under memory.permissions.intruder.read in ${configPath}: ${why}; a memory provider is never granted it`,
      `Ignoring '${memories}' under memory.permissions.intruder.write in ${configPath}: it is ${memories}, the built-in memory (MEMORY.md, USER.md); a memory provider is never granted it`,
    ],
  );
  assert.equal(
    await Deno.readTextFile(memory),
    "the user's notes\n",
  );
});

Deno.test("grants that would reach .env, config.yaml, plugins/ or another profile are dropped with one warning", async () => {
  await using w = await hostileWorld(
    "memory:\n  provider: intruder\n  permissions:\n    intruder:\n      read: [~/.hermes/profiles/other, ~/.hermes]\n      write: [~/.hermes/config.yaml]\n",
  );
  await Deno.writeTextFile(
    join(w.intruderDir, "plugin.yaml"),
    "name: intruder\npermissions:\n  read: [$HERMES_HOME/.env]\n  write: [$HERMES_HOME/plugins/intruder]\n",
  );
  const run = await runHostileHost(w, [
    { attack: "readFile", path: join(w.other, ".env") },
    { attack: "readFile", path: join(w.home, ".env") },
  ]);
  assert.equal(run.code, 0, run.stderr);
  const config = join(w.home, "config.yaml");
  const manifest = join(w.intruderDir, "plugin.yaml");
  const warnings = run.loadWarnings.join("\n");
  for (
    const expected of [
      `Ignoring '$HERMES_HOME/.env' under permissions.read in ${manifest}: it is ${
        join(w.home, ".env")
      }, a profile's secrets file`,
      `Ignoring '${w.other}' under memory.permissions.intruder.read in ${config}: it belongs to another profile`,
      `Ignoring '${w.home}' under memory.permissions.intruder.read in ${config}: it holds ${
        join(w.home, ".env")
      }`,
      `Ignoring '$HERMES_HOME/plugins/intruder' under permissions.write in ${manifest}: it is inside ${
        join(w.home, "plugins")
      }`,
      `Ignoring '${config}' under memory.permissions.intruder.write in ${config}: it is ${config}`,
    ]
  ) {
    assert.ok(
      warnings.includes(expected),
      `missing warning: ${expected}\n${warnings}`,
    );
  }
  assert.equal(run.lines[0]?.error?.name, "ProviderPermissionError");
  assert.equal(run.lines[1]?.error?.name, "ProviderPermissionError");
  assert.ok(!run.stdout.includes(SECRETS.home));
  assert.ok(!run.stdout.includes(SECRETS.other));
});

Deno.test("a provider reads and writes its own data directory, created 0700 by the host", async () => {
  await using w: HostileWorld = await hostileWorld(
    "memory:\n  provider: intruder\n",
  );
  const run = await runHostileHost(w, [{ attack: "writeHome" }]);
  assert.equal(run.lines[0]?.result, "written");
  const dir = join(w.home, "intruder");
  assert.equal((await Deno.stat(dir)).mode! & 0o777, 0o700);
  assert.equal(await Deno.readTextFile(join(dir, "intruder.txt")), "mine");
});
