import assert from "node:assert/strict";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { discoverMemoryProviders } from "../../src/plugins/provider_listing.ts";
import {
  loadMemoryProvider,
  probeMemoryProvider,
} from "../../src/plugins/provider_loader.ts";
import {
  getSkill,
  listSkills,
  readSkill,
} from "../../src/plugins/provider_skills.ts";
import { SandboxedMemoryProvider } from "../../src/sandbox/sandboxed_provider.ts";
import { findMemoryProvider } from "../../src/plugins/plugin_discovery.ts";
import {
  captureLogs,
  installFixture,
  simpleProviderSource,
  type TempHome,
  tempHome,
  writeProvider,
} from "../helpers/plugin_fixtures.ts";

function base(h: TempHome, config: Record<string, unknown> = {}) {
  return {
    hermesHome: h.home,
    bundledDir: h.outside,
    config,
    hostCheck: false,
  };
}

Deno.test("loadMemoryProvider() never looks up the built-in sentinels", async () => {
  await using h = await tempHome();
  await writeProvider(h.plugins, "none", {
    "mod.ts": simpleProviderSource("none"),
  });
  using logs = captureLogs();
  for (const name of ["", "none", " Default ", "builtin", "built-in"]) {
    assert.equal(await loadMemoryProvider(name, base(h)), null);
  }
  assert.deepEqual(logs.at("warn"), []);
});

Deno.test("loadMemoryProvider() returns null quietly for an unknown provider", async () => {
  await using h = await tempHome();
  using logs = captureLogs();
  assert.equal(await loadMemoryProvider("nope", base(h)), null);
  assert.deepEqual(logs.at("warn"), []);
  assert.deepEqual(logs.at("debug"), [
    "Memory provider 'nope' not found in any plugin source",
  ]);
});

Deno.test("loadMemoryProvider() runs a provider in a worker by default and in-process with sandbox none", async () => {
  await using h = await tempHome();
  await installFixture(h.plugins, "notes");
  await using sandboxed = await loadMemoryProvider(
    "notes",
    base(h),
  ) as SandboxedMemoryProvider;
  assert.ok(sandboxed instanceof SandboxedMemoryProvider);
  assert.equal(sandboxed.name, "notes");
  assert.equal(sandboxed.candidate.source, "user");
  const direct = await loadMemoryProvider("notes", {
    ...base(h),
    sandbox: "none",
  });
  assert.ok(direct);
  assert.equal(direct.constructor.name, "NotesProvider");
  assert.equal(direct.name, "notes");
});

Deno.test("loadMemoryProvider() honours plugins.disabled with a warning saying what to do", async () => {
  await using h = await tempHome();
  await installFixture(h.plugins, "notes");
  using logs = captureLogs();
  assert.equal(
    await loadMemoryProvider(
      "notes",
      base(h, { plugins: { disabled: ["notes"] } }),
    ),
    null,
  );
  assert.deepEqual(logs.at("warn"), [
    `Memory provider 'notes' is disabled by plugins.disabled in ${
      join(h.home, "config.yaml")
    }: run 'hermes plugins enable notes' or change memory.provider`,
  ]);
});

Deno.test("loadMemoryProvider() warns in the Hermes shapes when a load fails or yields nothing", async (t) => {
  await using h = await tempHome();
  await writeProvider(h.plugins, "kaput", {
    "mod.ts": "// MemoryProvider\nthrow new Error('kaput at import');",
  });
  await writeProvider(h.plugins, "hollow", {
    "mod.ts": "// MemoryProvider\nexport const x = 1;",
  });
  for (const sandbox of ["worker", "none"] as const) {
    await t.step(sandbox, async () => {
      using logs = captureLogs();
      assert.equal(
        await loadMemoryProvider("kaput", { ...base(h), sandbox }),
        null,
      );
      assert.equal(
        await loadMemoryProvider("hollow", { ...base(h), sandbox }),
        null,
      );
      const warnings = logs.at("warn");
      assert.equal(warnings.length, 2, warnings.join("\n"));
      assert.match(
        warnings[0] ?? "",
        /^Failed to load memory provider 'kaput': (Uncaught )?(Error: )?kaput at import/,
      );
      assert.equal(
        warnings[1],
        "Memory provider 'hollow' loaded but no provider instance found",
      );
    });
  }
});

Deno.test("loadMemoryProvider() takes the first constructible subclass when there is no register()", async () => {
  await using h = await tempHome();
  await installFixture(h.plugins, "subclass_only");
  await using provider = await loadMemoryProvider(
    "subclass_only",
    base(h),
  ) as SandboxedMemoryProvider;
  assert.equal(provider.name, "subclass_only");
  assert.equal(provider.preCompressCheckpointApiVersion, 2);
});

Deno.test("loadMemoryProvider() starts a provider whose grant the host itself lacks: its own process holds it", async () => {
  await using h = await tempHome();
  await writeProvider(h.plugins, "netty", {
    "mod.ts": simpleProviderSource("netty"),
    "plugin.yaml": "permissions: {net: [api.example.com]}",
  });
  using logs = captureLogs();
  const approved = {
    memory: { permissions: { netty: { net: ["api.example.com"] } } },
  };
  // The test runner may reach 127.0.0.1 and localhost only.
  const provider = await loadMemoryProvider("netty", base(h, approved));
  assert.ok(provider);
  await provider.shutdown();
  assert.deepEqual(logs.at("warn"), []);
});

Deno.test("loadMemoryProvider() on the worker transport refuses when the host itself lacks part of the grant", async () => {
  await using h = await tempHome();
  await writeProvider(h.plugins, "netty", {
    "mod.ts": simpleProviderSource("netty"),
    "plugin.yaml": "permissions: {net: [api.example.com]}",
  });
  using logs = captureLogs();
  const approved = {
    memory: { permissions: { netty: { net: ["api.example.com"] } } },
  };
  assert.equal(
    await loadMemoryProvider("netty", {
      ...base(h, approved),
      transport: "worker",
    }),
    null,
  );
  assert.deepEqual(logs.at("warn"), [
    "Failed to load memory provider 'netty': its sandbox needs --allow-net=api.example.com, which the hermes process itself lacks (a worker cannot get more than its host): add them to the deno command ('hermes memory permissions' prints the flags)",
  ]);
});

Deno.test("loadMemoryProvider() registers skills only for the active provider and prunes on a switch", async () => {
  await using h = await tempHome();
  await installFixture(h.plugins, "notes");
  await installFixture(h.plugins, "subclass_only");
  const inactive = await loadMemoryProvider(
    "notes",
    base(h, { memory: { provider: "other" } }),
  );
  await inactive?.shutdown();
  assert.deepEqual(listSkills({ hermesHome: h.home }), []);
  const active = await loadMemoryProvider(
    "notes",
    base(h, { memory: { provider: "notes" } }),
  );
  await active?.shutdown();
  assert.equal(
    getSkill("notes:maintenance", { hermesHome: h.home })?.description,
    "Tidy the notes store",
  );
  assert.match(
    await readSkill("notes:maintenance", { hermesHome: h.home }),
    /# Notes maintenance/,
  );
  const next = await loadMemoryProvider(
    "subclass_only",
    base(h, { memory: { provider: "subclass_only" } }),
  );
  await next?.shutdown();
  assert.equal(
    getSkill("notes:maintenance", { hermesHome: h.home }),
    undefined,
  );
});

Deno.test("loadMemoryProvider() reads config.yaml when no config is given", async () => {
  await using h = await tempHome();
  await installFixture(h.plugins, "notes");
  await Deno.writeTextFile(
    join(h.home, "config.yaml"),
    "memory:\n  provider: notes\n",
  );
  const provider = await loadMemoryProvider("notes", {
    hermesHome: h.home,
    bundledDir: h.outside,
    hostCheck: false,
  });
  await provider?.shutdown();
  assert.ok(getSkill("notes:maintenance", { hermesHome: h.home }));
});

Deno.test("loadMemoryProvider() loads a package provider from memory.packages", async () => {
  await using h = await tempHome();
  const dir = await writeProvider(join(h.outside, "packages"), "pkg", {
    "mod.ts": `import { MemoryProvider } from "@hermes/memory";
class Pkg extends MemoryProvider {
  get name() { return "pkg"; }
  isAvailable() { return true; }
  initialize() {}
  getToolSchemas() { return []; }
}
export default new Pkg();
`,
  });
  const specifier = pathToFileURL(join(dir, "mod.ts")).href;
  await using provider = await loadMemoryProvider(
    "pkg",
    base(h, { memory: { packages: { pkg: specifier } } }),
  ) as SandboxedMemoryProvider;
  assert.equal(provider.name, "pkg");
  assert.equal(provider.candidate.source, "package");
  assert.ok(provider.grant.read.some((e) => e.value === dir));
});

Deno.test("probeMemoryProvider() asks isAvailable() in the sandbox and registers no skills", async () => {
  await using h = await tempHome();
  await installFixture(h.plugins, "notes");
  await installFixture(h.plugins, "subclass_only");
  const options = base(h, { memory: { provider: "notes" } });
  const notes = await findMemoryProvider("notes", options);
  assert.ok(notes);
  assert.equal(await probeMemoryProvider(notes, options), false); // no NOTES_API_KEY
  const listed = await discoverMemoryProviders({ ...options, probe: true });
  assert.deepEqual(listed.map((p) => [p.name, p.available]), [
    ["notes", false],
    ["subclass_only", true],
  ]);
  assert.deepEqual(listSkills({ hermesHome: h.home }), []);
});

Deno.test("a sandboxed provider serves a MemoryManager turn like an in-process one", async () => {
  const { MemoryManager } = await import("../../src/manager/memory_manager.ts");
  const { withSecretScope } = await import(
    "../../src/profile/context_scope.ts"
  );
  await using h = await tempHome();
  await installFixture(h.plugins, "notes");
  const provider = await loadMemoryProvider("notes", base(h));
  assert.ok(provider);
  const manager = new MemoryManager({ config: {} });
  assert.equal(await manager.addProvider(provider), true);
  await withSecretScope({ NOTES_API_KEY: "k" }, async () => {
    await manager.initializeAll("s1", { hermesHome: h.home, platform: "cli" });
    manager.syncAll("the kite is red", "noted", { sessionId: "s1" });
    assert.equal(await manager.flushPending(5000), true);
    const recalled = await manager.prefetchAll("kite", { sessionId: "s1" });
    assert.match(recalled, /the kite is red/);
    assert.match(await manager.describeRecall(), /Notes — recalled 1 memory/);
  });
  assert.deepEqual((await manager.getAllToolSchemas()).map((s) => s.name), [
    "notes_search",
  ]);
  await manager.shutdownAll();
  assert.equal(
    (provider as SandboxedMemoryProvider).stopped,
    "it was shut down",
  );
});

Deno.test("discovery, probing, loading and the provider CLI leave the plugins tree untouched", async () => {
  const { snapshotTree, diffTrees } = await import("../helpers/plugin_tree.ts");
  const { loadProviderCli } = await import("../../src/plugins/provider_cli.ts");
  await using h = await tempHome();
  await installFixture(h.plugins, "notes");
  await installFixture(h.plugins, "subclass_only");
  const before = await snapshotTree(h.plugins);
  const options = base(h, { memory: { provider: "notes" } });
  await discoverMemoryProviders(options);
  const provider = await loadMemoryProvider("notes", options);
  await provider?.syncTurn("x", "y", { sessionId: "s" });
  await provider?.shutdown();
  await loadProviderCli("notes", options);
  assert.deepEqual(diffTrees(before, await snapshotTree(h.plugins)), []);
});

Deno.test("loadMemoryProvider() refuses a grant path with a comma instead of letting Deno split it into two grants", async () => {
  await using h = await tempHome();
  await writeProvider(h.plugins, "comma", {
    "mod.ts": simpleProviderSource("comma"),
    "plugin.yaml": 'permissions: {read: ["/tmp/x,/"]}',
  });
  using logs = captureLogs();
  assert.equal(await loadMemoryProvider("comma", base(h)), null);
  const warnings = logs.at("warn");
  assert.equal(warnings.length, 1, warnings.join("\n"));
  assert.match(
    warnings[0]!,
    /^Skipping memory provider 'comma' \(user\): Invalid .*plugin\.yaml: 'permissions\.read\[0\]' is '\/tmp\/x,\/': it contains a comma, which Deno reads as a list separator/,
  );
});
