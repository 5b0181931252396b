import assert from "node:assert/strict";
import { loadProviderCli } from "../../src/plugins/provider_cli.ts";
import {
  captureLogs,
  installFixture,
  tempHome,
  writeProvider,
} from "../helpers/plugin_fixtures.ts";

Deno.test("loadProviderCli() imports only cli.ts of the active provider", async () => {
  await using h = await tempHome();
  await installFixture(h.plugins, "notes");
  const cli = await loadProviderCli("notes", {
    hermesHome: h.home,
    bundledDir: h.outside,
    config: { memory: { provider: "notes" } },
  });
  assert.ok(cli);
  assert.equal(cli.name, "notes");
  assert.equal(cli.help, "Local notes kept in HERMES_HOME");
  assert.equal(cli.description, "Local notes kept in HERMES_HOME");
  const added: string[] = [];
  await cli.registerCli({
    command(name: string) {
      added.push(name);
      return { description: (text: string) => added.push(text) };
    },
  });
  assert.deepEqual(added, ["stats", "Show how many turns are stored"]);
});

Deno.test("loadProviderCli() returns null for an inactive provider unless asked", async () => {
  await using h = await tempHome();
  await installFixture(h.plugins, "notes");
  const options = {
    hermesHome: h.home,
    bundledDir: h.outside,
    config: { memory: { provider: "" } },
  };
  assert.equal(await loadProviderCli("notes", options), null);
  assert.ok(
    await loadProviderCli("notes", { ...options, evenIfInactive: true }),
  );
});

Deno.test("loadProviderCli() never imports the provider's mod.ts", async () => {
  await using h = await tempHome();
  await writeProvider(h.plugins, "marked", {
    "mod.ts":
      "// MemoryProvider\n(globalThis as Record<string, unknown>).markedModImported = true;\nthrow new Error('mod.ts must not load');",
    "cli.ts": "export function registerCli(): void {}",
    "plugin.yaml": "description: ''",
  });
  const cli = await loadProviderCli("marked", {
    hermesHome: h.home,
    bundledDir: h.outside,
    config: { memory: { provider: "marked" } },
  });
  assert.equal(cli?.help, "Manage marked memory plugin");
  assert.equal(cli?.description, "");
  assert.equal(
    (globalThis as Record<string, unknown>).markedModImported,
    undefined,
  );
});

Deno.test("loadProviderCli() returns null without cli.ts, without registerCli, or when cli.ts throws", async () => {
  await using h = await tempHome();
  const modText = "// MemoryProvider\nexport {};";
  await writeProvider(h.plugins, "bare", { "mod.ts": modText });
  await writeProvider(h.plugins, "noexport", {
    "mod.ts": modText,
    "cli.ts": "export const x = 1;",
  });
  await writeProvider(h.plugins, "broken", {
    "mod.ts": modText,
    "cli.ts": "throw new Error('cli boom');",
  });
  using logs = captureLogs();
  for (const name of ["bare", "noexport", "broken"]) {
    assert.equal(
      await loadProviderCli(name, {
        hermesHome: h.home,
        bundledDir: h.outside,
        config: { memory: { provider: name } },
      }),
      null,
      name,
    );
  }
  assert.deepEqual(logs.at("warn"), []);
  assert.equal(logs.at("debug").length, 2);
  assert.match(
    logs.at("debug")[1] ?? "",
    /^Memory provider 'broken' CLI not loaded: .*cli boom/,
  );
});
