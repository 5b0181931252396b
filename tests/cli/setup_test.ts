// `hermes memory setup` with user plugins written into a scratch home:
// the interactive wizard (scripted answers), the non-interactive form
// (--yes/--set), a provider that owns its setup (postSetup), and the
// provider command tree (`hermes <provider> …`) of the active provider only.
import assert from "node:assert/strict";
import { join } from "node:path";
import {
  CANCEL_PROMPT,
  main,
  memoryCliIo,
  type MemoryCliIoOptions,
  type RecordedPrompt,
  type ScriptedAnswer,
} from "../../src/cli/mod.ts";
import { loadConfig } from "../../src/config/config.ts";
import { hermesRunPlan } from "../../src/cli/run_plan.ts";
import { loadEnvFile } from "../../src/profile/env_file.ts";
import { KEYS, type PtySession, spawnPty } from "../helpers/pty.ts";
import { withHome } from "../helpers/test_home.ts";

/** A provider with a schema exercising choices, when, default_from, secrets and types. */
export const WIZARD_MOD = `
import { getSecret, MemoryProvider, type ConfigField, type ToolSchema } from "@hermes/memory";

export class WizardProvider extends MemoryProvider {
  get name(): string { return "wizard"; }
  isAvailable(): boolean { return Boolean(getSecret("WIZ_API_KEY")); }
  override unavailableReason(): string { return "WIZ_API_KEY is not set"; }
  initialize(): void {}
  getToolSchemas(): ToolSchema[] { return []; }
  override getConfigSchema(): ConfigField[] {
    return [
      { key: "mode", description: "Where the service runs", choices: ["cloud", "local"], default: "cloud" },
      { key: "api_key", description: "API key", secret: true, required: true, env_var: "WIZ_API_KEY", url: "https://wizard.example/keys", when: { mode: "cloud" } },
      { key: "base_url", description: "Server URL", env_var: "WIZ_BASE_URL", default_from: { field: "mode", map: { cloud: "https://api.wizard.example", local: "http://localhost:9000" } } },
      { key: "workspace", description: "Workspace", default: "hermes" },
      { key: "top_k", description: "Results per recall", type: "integer", default: 5, minimum: 1 },
    ];
  }
  override async saveConfig(values: Record<string, unknown>, hermesHome: string): Promise<void> {
    await Deno.writeTextFile(hermesHome + "/wizard/wizard.json", JSON.stringify(values));
  }
  override getStatusConfig(config: Record<string, unknown>): Record<string, unknown> {
    return { ...config, view: "status" };
  }
}
`;

const WIZARD_YAML = `name: wizard
description: Test provider with a setup schema. Second sentence.
permissions:
  env: [WIZ_API_KEY, WIZ_BASE_URL]
`;

const WIZARD_CLI = `
import type { HermesCommand } from "@hermes/memory/cli";
export function registerCli(command: HermesCommand): void {
  command.command("ping").description("Say pong").action(() => {
    command.context.io.stdout("pong from wizard\\n");
    return 0;
  });
}
`;

const OWNER_MOD = `
import { MemoryProvider, type ConfigField, type HermesConfig, type ToolSchema } from "@hermes/memory";

export class OwnerProvider extends MemoryProvider {
  get name(): string { return "owner"; }
  isAvailable(): boolean { return true; }
  initialize(): void {}
  getToolSchemas(): ToolSchema[] { return []; }
  override getConfigSchema(): ConfigField[] { return [{ key: "never_asked" }]; }
  async postSetup(hermesHome: string, config: HermesConfig): Promise<void> {
    await Deno.writeTextFile(hermesHome + "/owner/owner.json", JSON.stringify({ memory: config.memory }));
  }
}
`;

const HOST_OWNER_MOD = `
import { MemoryProvider, type ToolSchema } from "@hermes/memory";
export class HostOwnerProvider extends MemoryProvider {
  get name(): string { return "hostowner"; }
  isAvailable(): boolean { return true; }
  initialize(): void {}
  getToolSchemas(): ToolSchema[] { return []; }
}
`;

/**
 * A cli.ts with its own setup wizard: it gets the terminal through io (a
 * user provider's cli.ts runs in its sandbox, so it writes into its own
 * data directory).
 */
const HOST_OWNER_CLI = `
import type { HermesConfig } from "@hermes/memory";
import type { CliIo, HermesCommand } from "@hermes/memory/cli";
export function registerCli(_command: HermesCommand): void {}
export async function postSetup(hermesHome: string, config: HermesConfig, io: CliIo): Promise<number> {
  const color = await io.prompts.input({ message: "Favourite colour" });
  await Deno.writeTextFile(hermesHome + "/hostowner/host.json", JSON.stringify({ color, memory: config.memory }));
  io.stdout("host setup done\\n");
  return 0;
}
`;

/** Writes the fixture user plugins into `<home>/plugins/`. */
/** A temporary profile home with the fixture plugins. */
function withPluginsHome<T>(fn: (home: string) => Promise<T>): Promise<T> {
  return withHome(fn, writeFixturePlugins);
}

export async function writeFixturePlugins(home: string): Promise<void> {
  const wizard = join(home, "plugins", "wizard");
  await Deno.mkdir(wizard, { recursive: true });
  await Deno.writeTextFile(join(wizard, "mod.ts"), WIZARD_MOD);
  await Deno.writeTextFile(join(wizard, "plugin.yaml"), WIZARD_YAML);
  await Deno.writeTextFile(join(wizard, "cli.ts"), WIZARD_CLI);
  const owner = join(home, "plugins", "owner");
  await Deno.mkdir(owner, { recursive: true });
  await Deno.writeTextFile(join(owner, "mod.ts"), OWNER_MOD);
  await Deno.writeTextFile(
    join(owner, "plugin.yaml"),
    "name: owner\ndescription: Owns its setup\n",
  );
  const hostOwner = join(home, "plugins", "hostowner");
  await Deno.mkdir(hostOwner, { recursive: true });
  await Deno.writeTextFile(join(hostOwner, "mod.ts"), HOST_OWNER_MOD);
  await Deno.writeTextFile(join(hostOwner, "cli.ts"), HOST_OWNER_CLI);
}

async function run(
  home: string,
  args: string[],
  options: MemoryCliIoOptions = {},
): Promise<
  {
    code: number;
    out: string;
    err: string;
    asked: readonly RecordedPrompt[];
    left: number;
  }
> {
  const io = memoryCliIo({
    ...options,
    env: { HERMES_HOME: home, ...(options.env ?? {}) },
  });
  const code = await main(args, io);
  return {
    code,
    out: io.out,
    err: io.err,
    asked: io.asked,
    left: io.remainingAnswers,
  };
}

function interactive(answers: ScriptedAnswer[]): MemoryCliIoOptions {
  return { stdinIsTerminal: true, stdoutIsTerminal: true, answers };
}

function exists(path: string): boolean {
  try {
    Deno.lstatSync(path);
    return true;
  } catch {
    return false;
  }
}

function errors(err: string): string {
  return err.split("\n").filter((l) =>
    l !== "" && !l.startsWith("hermes: warn:")
  ).join("\n");
}

Deno.test("memory setup: the picker lists providers with hints, built-in last and preselected", async () => {
  await withPluginsHome(async (home) => {
    const { code, asked } = await run(
      home,
      ["memory", "setup"],
      interactive([undefined]), // Enter on the preselected entry
    );
    assert.equal(code, 0);
    const picker = asked[0] as RecordedPrompt;
    assert.equal(picker.kind, "select");
    assert.equal(picker.message, "Select a memory provider");
    const names = (picker.choices ?? []).map((c) => c.name);
    assert.ok(names.includes("wizard  (API key / local)"), names.join("|"));
    assert.ok(names.includes("owner  (local)"), names.join("|"));
    assert.equal(
      names.at(-1),
      "Built-in only \u2014 MEMORY.md / USER.md (default)",
    );
    assert.equal(picker.default, picker.choices?.at(-1)?.value);
    assert.deepEqual(await loadConfig({ hermesHome: home }), {
      memory: { provider: "" },
    });
  });
});

Deno.test("memory setup: walking the schema honours when, default_from, choices and types", async () => {
  await withPluginsHome(async (home) => {
    const { code, out, err, asked, left } = await run(
      home,
      ["memory", "setup"],
      interactive([
        "wizard", // picker
        true, // approve what its manifest asks for
        "local", // mode
        undefined, // base_url: keep the default from mode
        "team", // workspace
        "7", // top_k
      ]),
    );
    assert.equal(errors(err), "");
    assert.equal(code, 0);
    assert.equal(left, 0);
    // api_key is only for mode=cloud: never asked.
    assert.deepEqual(asked.map((a) => a.kind), [
      "select",
      "confirm",
      "select",
      "input",
      "input",
      "input",
    ]);
    assert.equal(asked[1]?.message, "Approve this for 'wizard'?");
    assert.equal(asked[3]?.default, "http://localhost:9000");
    assert.equal(asked[4]?.default, "hermes");
    assert.equal(asked[5]?.default, "5");
    assert.match(
      out,
      /Memory provider 'wizard' \(.*plugin\.yaml\) asks for:\n {2}- read the environment variable WIZ_API_KEY \(the manifest gives no reason\)\n/,
    );
    const config = await loadConfig({ hermesHome: home });
    assert.deepEqual(config.memory, {
      provider: "wizard",
      permissions: { wizard: { env: ["WIZ_API_KEY", "WIZ_BASE_URL"] } },
      wizard: {
        mode: "local",
        base_url: "http://localhost:9000",
        workspace: "team",
        top_k: 7,
      },
    });
    // The provider's own saveConfig got the same non-secret values.
    assert.deepEqual(
      JSON.parse(await Deno.readTextFile(join(home, "wizard", "wizard.json"))),
      (config.memory as Record<string, unknown>).wizard,
    );
    // A non-secret field with env_var also goes to .env.
    assert.deepEqual(await loadEnvFile(join(home, ".env")), {
      WIZ_BASE_URL: "http://localhost:9000",
    });
    assert.match(out, /Memory provider set to 'wizard'/);
    assert.match(out, /Start a new session to use it\./);
  });
});

Deno.test("memory setup: declining the approval saves none of it, and says how to approve later", async () => {
  await withPluginsHome(async (home) => {
    const { code, out, asked } = await run(
      home,
      ["memory", "setup", "wizard"],
      interactive([false, "local", undefined, undefined, undefined]),
    );
    assert.equal(code, 0);
    assert.equal(asked[0]?.message, "Approve this for 'wizard'?");
    assert.equal(asked[0]?.default, false);
    assert.match(
      out,
      /Not approved: 'wizard' runs without it\. Approve later with 'hermes memory setup wizard'\.\n/,
    );
    const memory = (await loadConfig({ hermesHome: home })).memory as Record<
      string,
      unknown
    >;
    assert.equal(memory.provider, "wizard");
    assert.equal(memory.permissions, undefined);
  });
});

Deno.test("memory setup: a secret goes only to .env and is shown masked", async () => {
  await withPluginsHome(async (home) => {
    const secret = "sk-wizard-0123456789abcd";
    const { code, out, asked } = await run(
      home,
      ["memory", "setup"],
      interactive([
        "wizard",
        true,
        "cloud",
        secret,
        undefined,
        undefined,
        undefined,
      ]),
    );
    assert.equal(code, 0);
    const password = asked.find((a) => a.kind === "password");
    assert.equal(password?.message, "api_key \u2014 API key");
    assert.match(out, /Get one at https:\/\/wizard\.example\/keys/);
    assert.ok(!out.includes(secret), "the secret is never printed");
    assert.match(out, /Saved WIZ_API_KEY to .*\.env \(\.\.\.abcd\)/);
    const env = await loadEnvFile(join(home, ".env"));
    assert.equal(env.WIZ_API_KEY, secret);
    const configText = await Deno.readTextFile(join(home, "config.yaml"));
    assert.ok(!configText.includes(secret), "no secret in config.yaml");
    assert.ok(
      !(await Deno.readTextFile(join(home, "wizard", "wizard.json"))).includes(
        secret,
      ),
    );
    assert.equal((await Deno.stat(join(home, ".env"))).mode! & 0o777, 0o600);
  });
});

Deno.test("memory setup: an existing secret is shown as ...last4 and Enter keeps it", async () => {
  await withPluginsHome(async (home) => {
    await Deno.writeTextFile(join(home, ".env"), "WIZ_API_KEY=old-key-9876\n");
    const { code, asked } = await run(
      home,
      ["memory", "setup", "wizard"],
      interactive([true, "cloud", "", undefined, undefined, undefined]),
    );
    assert.equal(code, 0);
    const password = asked.find((a) => a.kind === "password");
    assert.equal(
      password?.message,
      "api_key \u2014 API key [...9876; Enter keeps it]",
    );
    assert.equal(
      (await loadEnvFile(join(home, ".env"))).WIZ_API_KEY,
      "old-key-9876",
    );
  });
});

Deno.test("memory setup: cancelling at any question saves nothing", async (t) => {
  // The picker, the approval, a choice, the secret, a text field.
  for (const at of [0, 1, 2, 3, 5]) {
    await t.step(`cancel at question ${at + 1}`, async () => {
      await withPluginsHome(async (home) => {
        const answers: ScriptedAnswer[] = [
          "wizard",
          true,
          "cloud",
          "sk-secret-value-1234",
          undefined,
          undefined,
        ];
        answers[at] = CANCEL_PROMPT;
        const { code, out } = await run(
          home,
          ["memory", "setup"],
          interactive(answers.slice(0, at + 1)),
        );
        assert.equal(code, 1);
        assert.match(out, /Cancelled\. No changes saved\.\n$/);
        assert.equal(exists(join(home, "config.yaml")), false);
        assert.equal(exists(join(home, ".env")), false);
        assert.equal(exists(join(home, "wizard", "wizard.json")), false);
      });
    });
  }
});

Deno.test("memory setup PROVIDER --yes --set: no questions, typed values, secrets to .env", async () => {
  await withPluginsHome(async (home) => {
    const { code, out, err, asked } = await run(home, [
      "memory",
      "setup",
      "wizard",
      "--yes",
      "--set",
      "api_key=sk-from-flags-4321",
      "--set",
      "top_k=9",
    ]);
    assert.equal(errors(err), "");
    assert.equal(code, 0);
    assert.deepEqual(asked, []);
    // Only what --set names is written: no default is pinned.
    const config = await loadConfig({ hermesHome: home });
    assert.deepEqual(config.memory, {
      provider: "wizard",
      wizard: { top_k: 9 },
      // --yes approves what the manifest asks for, and says so.
      permissions: { wizard: { env: ["WIZ_API_KEY", "WIZ_BASE_URL"] } },
    });
    assert.match(
      out,
      /Approved for 'wizard': env WIZ_API_KEY, WIZ_BASE_URL\. Saved under memory\.permissions\.wizard in .*config\.yaml\.\n/,
    );
    assert.deepEqual(
      JSON.parse(await Deno.readTextFile(join(home, "wizard", "wizard.json"))),
      { top_k: 9 },
    );
    const env = await loadEnvFile(join(home, ".env"));
    assert.equal(env.WIZ_API_KEY, "sk-from-flags-4321");
    assert.deepEqual(Object.keys(env), ["WIZ_API_KEY"]);
    assert.match(out, /\(\.\.\.4321\)/);
  });
});

Deno.test("memory setup PROVIDER --yes on a configured home changes only what --set names", async () => {
  await withPluginsHome(async (home) => {
    await Deno.writeTextFile(
      join(home, "config.yaml"),
      "# mine\nmemory:\n  provider: wizard\n  wizard:\n    mode: local\n    workspace: team\n",
    );
    await Deno.writeTextFile(join(home, ".env"), "WIZ_BASE_URL=http://wiz:9\n");
    const { code, err } = await run(home, [
      "memory",
      "setup",
      "wizard",
      "--yes",
      "--set",
      "top_k=2",
    ]);
    // mode local: no API key is needed (its `when` is mode cloud).
    assert.equal(code, 0, err);
    const config = await loadConfig({ hermesHome: home });
    assert.deepEqual(config.memory, {
      provider: "wizard",
      wizard: { mode: "local", workspace: "team", top_k: 2 },
      permissions: { wizard: { env: ["WIZ_API_KEY", "WIZ_BASE_URL"] } },
    });
    assert.match(await Deno.readTextFile(join(home, "config.yaml")), /^# mine/);
    assert.deepEqual(await loadEnvFile(join(home, ".env")), {
      WIZ_BASE_URL: "http://wiz:9",
    });
  });
});

Deno.test("memory setup non-interactive refuses bad input and saves nothing", async (t) => {
  const cases: [string[], number, RegExp][] = [
    [
      ["memory", "setup", "wizard", "--yes"],
      1,
      /cannot finish setup of 'wizard' without: api_key \(WIZ_API_KEY\)/,
    ],
    [
      ["memory", "setup", "wizard", "--yes", "--set", "colour=red"],
      2,
      /Unknown setting 'colour' for memory provider 'wizard'; its settings are: mode, api_key, base_url, workspace, top_k/,
    ],
    [
      [
        "memory",
        "setup",
        "wizard",
        "--set",
        "top_k=lots",
        "--set",
        "api_key=k",
      ],
      2,
      /Cannot use 'lots' for top_k: it must be a whole number/,
    ],
    [
      [
        "memory",
        "setup",
        "wizard",
        "--set",
        "mode=space",
        "--set",
        "api_key=k",
      ],
      2,
      /Cannot use 'space' for mode: choose one of cloud, local/,
    ],
    [
      ["memory", "setup", "wizard", "--set", "novalue"],
      2,
      /Cannot use --set 'novalue': write it as key=value/,
    ],
    [
      ["memory", "setup", "wizard"],
      2,
      /standard input is not a terminal.*--yes/,
    ],
    [["memory", "setup", "--yes"], 2, /name the provider/],
    [
      ["memory", "setup", "nosuch", "--yes"],
      2,
      /memory provider 'nosuch' was not found; installed: .*wizard/,
    ],
  ];
  for (const [args, code, message] of cases) {
    await t.step(args.slice(2).join(" "), async () => {
      await withPluginsHome(async (home) => {
        const result = await run(home, args);
        assert.equal(result.code, code, result.err);
        assert.match(result.err, message);
        assert.equal(exists(join(home, "config.yaml")), false);
        assert.equal(exists(join(home, ".env")), false);
      });
    });
  }
});

Deno.test("memory setup builtin sets memory.provider to ''", async () => {
  await withPluginsHome(async (home) => {
    await Deno.writeTextFile(
      join(home, "config.yaml"),
      "memory:\n  provider: wizard\n",
    );
    const { code } = await run(home, ["memory", "setup", "builtin"]);
    assert.equal(code, 0);
    assert.deepEqual(await loadConfig({ hermesHome: home }), {
      memory: { provider: "" },
    });
  });
});

Deno.test("memory setup PROVIDER with postSetup lets the provider own setup", async () => {
  await withPluginsHome(async (home) => {
    await Deno.writeTextFile(join(home, "config.yaml"), "memory: null\n");
    const { code, asked } = await run(
      home,
      ["memory", "setup", "owner"],
      interactive([]),
    );
    assert.equal(code, 0);
    assert.deepEqual(asked, []);
    // The memory block was normalized to a mapping before the hook ran.
    assert.deepEqual(
      JSON.parse(await Deno.readTextFile(join(home, "owner", "owner.json"))),
      { memory: {} },
    );
    // The CLI itself wrote nothing: the provider owns config and activation.
    assert.equal(
      await Deno.readTextFile(join(home, "config.yaml")),
      "memory: null\n",
    );
  });
});

Deno.test("memory setup PROVIDER runs a host-side postSetup from cli.ts with the terminal", async (t) => {
  await t.step("answered", async () => {
    await withPluginsHome(async (home) => {
      const { code, out, asked } = await run(
        home,
        ["memory", "setup", "hostowner"],
        interactive(["blue"]),
      );
      assert.equal(code, 0);
      // Asked through the bridge: marked as the provider's.
      assert.deepEqual(asked.map((a) => a.message), [
        "[hostowner] Favourite colour",
      ]);
      assert.match(out, /host setup done/);
      assert.deepEqual(
        JSON.parse(
          await Deno.readTextFile(join(home, "hostowner", "host.json")),
        ),
        { color: "blue", memory: {} },
      );
    });
  });
  await t.step("cancelled", async () => {
    await withPluginsHome(async (home) => {
      const { code, out } = await run(
        home,
        ["memory", "setup", "hostowner"],
        interactive([CANCEL_PROMPT]),
      );
      assert.equal(code, 1);
      assert.match(out, /Cancelled\. No changes saved\.\n$/);
      assert.equal(exists(join(home, "hostowner", "host.json")), false);
    });
  });
  await t.step("non-interactive --yes skips it", async () => {
    await withPluginsHome(async (home) => {
      const { code } = await run(home, [
        "memory",
        "setup",
        "hostowner",
        "--yes",
      ]);
      assert.equal(code, 0);
      assert.equal(exists(join(home, "hostowner", "host.json")), false);
      assert.equal(
        (await loadConfig({ hermesHome: home })).memory &&
          ((await loadConfig({ hermesHome: home })).memory as Record<
            string,
            unknown
          >).provider,
        "hostowner",
      );
    });
  });
});

Deno.test("memory status shows the active provider's settings, status config and grant", async () => {
  await withPluginsHome(async (home) => {
    await Deno.writeTextFile(
      join(home, "config.yaml"),
      "memory:\n  provider: wizard\n  wizard:\n    workspace: team\n",
    );
    await Deno.writeTextFile(join(home, ".env"), "WIZ_BASE_URL=http://x\n");
    const { code, out } = await run(home, ["memory", "status"]);
    assert.equal(code, 0);
    assert.match(out, /^ {2}Provider: {2}wizard$/m);
    assert.match(
      out,
      /^ {2}wizard config \(memory\.wizard\):\n {4}workspace: team\n {4}view: status$/m,
    );
    assert.match(
      out,
      /Plugin: {4}installed \u2713 \(user: .*plugins\/wizard\)/,
    );
    assert.match(
      out,
      /Status: {4}not available \u2717 \u2014 WIZ_API_KEY is not set/,
    );
    assert.match(
      out,
      /\u2717 +WIZ_API_KEY +unset +\u2192 https:\/\/wizard\.example\/keys/,
    );
    assert.match(out, /\u2713 +WIZ_BASE_URL +set \(\.env\)/);
    assert.match(out, /service managers/);
    assert.match(
      out,
      /Dependencies: ready \u2713 \u2014 no declared dependencies/,
    );
    assert.match(out, /Sandbox: {3}process\n {4}read: +.*plugins\/wizard/);
    // Installed but never approved: it runs without what it asks for.
    assert.match(out, /\n {4}env: +\(none\)\n/);
    assert.match(
      out,
      /not approved: +env WIZ_API_KEY, env WIZ_BASE_URL \(run 'hermes memory setup wizard' to review\)/,
    );
    assert.match(
      out,
      /\u2022 wizard +\(Test provider with a setup schema\) +\[user, unavailable\] +\u2190 active/,
    );

    const json = JSON.parse(
      (await run(home, ["memory", "status", "--json"])).out,
    );
    assert.equal(json.provider.name, "wizard");
    assert.equal(json.provider.available, false);
    assert.deepEqual(
      json.provider.fields.map((f: { envVar?: string; set: boolean }) => [
        f.envVar,
        f.set,
      ]),
      [[undefined, false], ["WIZ_API_KEY", false], ["WIZ_BASE_URL", true], [
        undefined,
        false,
      ], [undefined, false]],
    );
    assert.deepEqual(json.provider.sandbox.env, []);
    assert.deepEqual(json.provider.sandbox.notApproved, [
      "env WIZ_API_KEY",
      "env WIZ_BASE_URL",
    ]);
    // Once approved (what 'hermes memory setup wizard' records): granted.
    await Deno.writeTextFile(
      join(home, "config.yaml"),
      "memory:\n  provider: wizard\n  wizard:\n    workspace: team\n  permissions:\n    wizard:\n      env: [WIZ_API_KEY, WIZ_BASE_URL]\n",
    );
    const approved = await run(home, ["memory", "status"]);
    assert.match(approved.out, /env: +WIZ_API_KEY, WIZ_BASE_URL/);
    assert.ok(!approved.out.includes("not approved"), approved.out);
  });
});

Deno.test("hermes <provider> commands exist only while that provider is active", async () => {
  await withPluginsHome(async (home) => {
    const inactive = await run(home, ["wizard", "ping"]);
    assert.equal(inactive.code, 2);
    assert.equal(
      inactive.err,
      `error: 'wizard' commands are available only while memory.provider is 'wizard'; memory.provider is not set in ${
        join(home, "config.yaml")
      } (built-in memory only)\n` +
        "hint: turn it on with 'hermes memory setup wizard'\n",
    );
    const rootHelp = await run(home, ["--help"]);
    assert.doesNotMatch(rootHelp.out, /wizard/);

    await Deno.writeTextFile(
      join(home, "config.yaml"),
      "memory:\n  provider: wizard\n",
    );
    const ping = await run(home, ["wizard", "ping"]);
    assert.equal(ping.code, 0, ping.err);
    assert.equal(ping.out, "pong from wizard\n");
    const help = await run(home, ["--help"]);
    assert.match(help.out, /^ {2}wizard +Test provider with a setup schema$/m);
    const sub = await run(home, ["wizard", "--help"]);
    assert.match(sub.out, /^ {2}ping +Say pong$/m);
    const bad = await run(home, ["wizard", "ping", "--loud"]);
    assert.equal(bad.code, 2);
    assert.equal(
      bad.err,
      "error: unknown option '--loud'\nhint: run 'hermes wizard ping --help' for usage\n",
    );
  });
});

// ------------------------------------------------- real terminal (pty)

const ROOT = new URL("../..", import.meta.url).pathname;
const DENO_DIR = Deno.env.get("DENO_DIR") ??
  join(Deno.env.get("HOME") ?? "/root", ".cache", "deno");

/** The flags the launcher gives `hermes memory setup` for this home. */
async function permissionFlags(home: string): Promise<string[]> {
  const plan = await hermesRunPlan({
    hermesHome: home,
    args: ["memory", "setup"],
  });
  return plan.flags;
}

async function spawnSetup(home: string): Promise<PtySession> {
  const flags = await permissionFlags(home);
  return spawnPty(
    [Deno.execPath(), "run", ...flags, "src/cli/main.ts", "memory", "setup"],
    {
      cwd: ROOT,
      env: {
        HOME: home,
        HERMES_HOME: home,
        PATH: "/usr/bin:/bin",
        TERM: "xterm-256color",
        DENO_DIR,
      },
    },
  );
}

/** Moves the picker's cursor up until `label` is highlighted. */
async function pickUp(term: PtySession, label: string): Promise<void> {
  for (let i = 0; i < 8; i++) {
    await term.send(KEYS.up);
    try {
      await term.expect(`\u276f ${label}`, 1500);
      return;
    } catch {
      // Not there yet: keep moving.
    }
  }
  throw new Error(`Could not highlight ${label}:\n${term.text}`);
}

Deno.test("memory setup in a real terminal: arrows, masked secret, defaults, Enter", async () => {
  await withPluginsHome(async (home) => {
    const secret = "sk-pty-secret-7788";
    await using term = await spawnSetup(home);
    await term.expect("Select a memory provider");
    await term.expect("\u276f Built-in only");
    await pickUp(term, "wizard");
    await term.send(KEYS.enter);
    // The approval: what the manifest asks for, in plain words, then asked.
    await term.expect("asks for:");
    await term.expect("- read the environment variable WIZ_API_KEY");
    await term.expect("Approve this for 'wizard'?");
    await term.send(`y${KEYS.enter}`);
    await term.expect("mode \u2014 Where the service runs");
    await term.expect("\u276f cloud");
    await term.send(KEYS.enter);
    await term.expect("Get one at https://wizard.example/keys");
    await term.expect("api_key \u2014 API key");
    await term.send(secret);
    await term.send(KEYS.enter);
    await term.expect("base_url \u2014 Server URL");
    await term.send(KEYS.enter);
    await term.expect("workspace \u2014 Workspace");
    await term.send(`pty${KEYS.enter}`);
    await term.expect("top_k \u2014 Results per recall");
    await term.send(KEYS.enter);
    await term.expect("Start a new session to use it.");
    assert.equal(await term.exit(), 0, term.text);
    assert.ok(!term.raw.includes(secret), "the secret was echoed");
    assert.match(term.text, /Saved WIZ_API_KEY to .*\(\.\.\.7788\)/);
    assert.match(
      term.text,
      /Approved for 'wizard': env WIZ_API_KEY, WIZ_BASE_URL\. Saved under memory\.permissions\.wizard/,
    );
    const config = await loadConfig({ hermesHome: home });
    assert.deepEqual(config.memory, {
      provider: "wizard",
      permissions: { wizard: { env: ["WIZ_API_KEY", "WIZ_BASE_URL"] } },
      wizard: {
        mode: "cloud",
        base_url: "https://api.wizard.example",
        workspace: "pty",
        top_k: 5,
      },
    });
    assert.equal((await loadEnvFile(join(home, ".env"))).WIZ_API_KEY, secret);
  });
});

Deno.test("memory setup in a real terminal: Ctrl-C at the secret saves nothing", async () => {
  await withPluginsHome(async (home) => {
    await using term = await spawnSetup(home);
    await term.expect("\u276f Built-in only");
    await pickUp(term, "wizard");
    await term.send(KEYS.enter);
    await term.expect("Approve this for 'wizard'?");
    await term.send(`y${KEYS.enter}`);
    await term.expect("\u276f cloud");
    await term.send(KEYS.enter);
    await term.expect("api_key \u2014 API key");
    await term.send("half-typed");
    await term.send(KEYS.ctrlC);
    await term.expect("Cancelled. No changes saved.");
    assert.equal(await term.exit(), 1);
    assert.equal(exists(join(home, "config.yaml")), false);
    assert.equal(exists(join(home, ".env")), false);
    assert.equal(exists(join(home, "wizard", "wizard.json")), false);
  });
});
