import assert from "node:assert/strict";
import { join } from "node:path";
import { findMemoryProvider } from "../../src/plugins/plugin_discovery.ts";
import {
  declaredDependencies,
  DependencyInstallError,
  prepareProviderDependencies,
  providerDependencyStatus,
} from "../../src/plugins/provider_deps.ts";
import {
  installFixture,
  REPO,
  runChild,
  simpleProviderSource,
  tempHome,
  writeProvider,
} from "../helpers/plugin_fixtures.ts";
import { diffTrees, snapshotTree } from "../helpers/plugin_tree.ts";
import { lockedDeno, lockedDenoDir } from "../helpers/locked_npm_cache.ts";

Deno.test("declaredDependencies() reads remote imports of the provider's deno.json, or a package's specifier", async () => {
  await using h = await tempHome();
  await writeProvider(h.plugins, "deps", {
    "mod.ts": simpleProviderSource("deps"),
    "deno.json": JSON.stringify({
      imports: {
        ms: "npm:ms@2.1.3",
        local: "./lib.ts",
        std: "jsr:@std/path@1",
      },
    }),
  });
  const options = {
    hermesHome: h.home,
    bundledDir: h.outside,
    config: { memory: { packages: { pkg: "npm:pkg@1.0.0" } } },
  };
  const deps = await findMemoryProvider("deps", options);
  assert.ok(deps);
  assert.deepEqual(await declaredDependencies(deps), [
    { name: "ms", specifier: "npm:ms@2.1.3" },
    { name: "std", specifier: "jsr:@std/path@1" },
  ]);
  const pkg = await findMemoryProvider("pkg", options);
  assert.ok(pkg);
  assert.deepEqual(await declaredDependencies(pkg), [{
    name: "pkg",
    specifier: "npm:pkg@1.0.0",
  }]);
});

Deno.test("providerDependencyStatus() reports a missing package without downloading it", async () => {
  await using h = await tempHome();
  await writeProvider(h.plugins, "needy", {
    "mod.ts": simpleProviderSource("needy"),
    "plugin.yaml": "permissions: {npm: true}",
    "deno.json": JSON.stringify({
      imports: { zz: "npm:hermes-memory-never-cached-zz@0.0.1" },
    }),
  });
  const status = await providerDependencyStatus("needy", {
    hermesHome: h.home,
    bundledDir: h.outside,
    config: { memory: { permissions: { needy: { npm: true } } } },
  });
  assert.deepEqual(status, {
    provider: "needy",
    ready: false,
    summary: "1 of 1 dependency not ready",
    details: [
      "Not cached: npm:hermes-memory-never-cached-zz@0.0.1",
      "Run 'hermes memory setup needy' to cache them",
    ],
    dependencies: [{
      name: "zz",
      specifier: "npm:hermes-memory-never-cached-zz@0.0.1",
      cached: false,
    }],
    external: [],
  });
});

Deno.test("providerDependencyStatus() lists external tools without running their checks", async () => {
  await using h = await tempHome();
  const marker = join(h.outside, "ran");
  await writeProvider(h.plugins, "tooly", {
    "mod.ts": simpleProviderSource("tooly"),
    "plugin.yaml":
      `external_dependencies:\n  - {name: touchy, install: "apt install touchy", check: "touch ${marker}"}\n`,
  });
  const status = await providerDependencyStatus("tooly", {
    hermesHome: h.home,
    bundledDir: h.outside,
    config: {},
  });
  assert.equal(status?.ready, true);
  assert.equal(status?.summary, "no declared dependencies");
  assert.deepEqual(status?.details, [
    `Needs touchy (check: touch ${marker}) (install: apt install touchy)`,
  ]);
  await assert.rejects(Deno.stat(marker), Deno.errors.NotFound);
});

Deno.test("prepareProviderDependencies() refuses npm packages the provider may not use", async () => {
  await using h = await tempHome();
  await writeProvider(h.plugins, "sly", {
    "mod.ts": simpleProviderSource("sly"),
    "deno.json": JSON.stringify({ imports: { ms: "npm:ms@2.1.3" } }),
  });
  await assert.rejects(
    prepareProviderDependencies("sly", {
      hermesHome: h.home,
      bundledDir: h.outside,
      config: {},
    }),
    (error: unknown) =>
      error instanceof DependencyInstallError &&
      error.message ===
        "Memory provider 'sly' declares npm packages in its deno.json but may not use npm: set permissions.npm: true in its plugin.yaml, or grant memory.permissions.sly.npm: true in config.yaml",
  );
  await assert.rejects(
    prepareProviderDependencies("absent", {
      hermesHome: h.home,
      bundledDir: h.outside,
      config: {},
    }),
    /Memory provider 'absent' not found: run 'hermes memory list'/,
  );
});

Deno.test("prepareProviderDependencies() verifies a provider's own deno.lock and never rewrites it", async () => {
  await using h = await tempHome();
  await writeProvider(h.plugins, "locked", {
    "mod.ts": simpleProviderSource("locked"),
    "plugin.yaml": "permissions: {npm: true}",
    "deno.json": JSON.stringify({ imports: { ms: "npm:ms@2.1.3" } }),
    "deno.lock": JSON.stringify({ version: "5" }),
  });
  const before = await snapshotTree(h.plugins);
  await assert.rejects(
    prepareProviderDependencies("locked", {
      hermesHome: h.home,
      bundledDir: h.outside,
      config: { memory: { permissions: { locked: { npm: true } } } },
      // Resolves from the pinned versions' metadata, offline too.
      denoPath: await lockedDeno(),
    }),
    /Cannot cache the dependencies of memory provider 'locked': .*lockfile is out of date/s,
  );
  assert.deepEqual(diffTrees(before, await snapshotTree(h.plugins)), []);
});

Deno.test("two providers pin different versions of one npm package and each loads its own under --cached-only", async () => {
  await using h = await tempHome();
  await installFixture(h.plugins, "ms_new");
  await installFixture(h.plugins, "ms_old");
  // Both approved with 'hermes memory setup' (their manifests ask for npm).
  const config = {
    memory: {
      permissions: { ms_new: { npm: true }, ms_old: { npm: true } },
    },
  };
  // The provider installs run lockless: on the pinned versions' metadata.
  const options = {
    hermesHome: h.home,
    bundledDir: h.outside,
    config,
    denoPath: await lockedDeno(),
  };
  const before = await snapshotTree(h.plugins);
  for (const name of ["ms_new", "ms_old"]) {
    const result = await prepareProviderDependencies(name, options);
    assert.equal(result.cached.length, 1);
    const status = await providerDependencyStatus(name, options);
    assert.equal(status?.ready, true, JSON.stringify(status));
    assert.equal(status?.summary, "1 dependency cached");
  }
  // The product's host flags: no prompts, no npm downloads.
  const run = await runChild(
    h.outside,
    `
import { loadMemoryProvider } from "${REPO}/src/plugins/provider_loader.ts";
const out = {};
for (const name of ["ms_new", "ms_old"]) {
  const p = await loadMemoryProvider(name, { hermesHome: ${
      JSON.stringify(h.home)
    }, bundledDir: ${JSON.stringify(h.outside)}, config: ${
      JSON.stringify(config)
    } });
  out[name] = await p.prefetch("", {});
  await p.shutdown();
}
console.log(JSON.stringify(out));
`,
    {
      flags: [
        "--no-prompt",
        "--cached-only",
        "--no-lock",
        "--allow-read",
        "--allow-write",
        "--allow-env",
        "--allow-run",
      ],
      env: { DENO_DIR: await lockedDenoDir() },
    },
  );
  assert.equal(run.code, 0, run.stderr);
  // ms 2.1 understands weeks; ms 2.0 does not.
  assert.deepEqual(JSON.parse(run.stdout), {
    ms_new: "604800000",
    ms_old: "undefined",
  });
  assert.deepEqual(diffTrees(before, await snapshotTree(h.plugins)), []);
});
