import assert from "node:assert/strict";
import { join } from "node:path";
import {
  findMemoryProvider,
  isBuiltinSentinel,
  isValidProviderName,
  listMemoryProviderNames,
  scanMemoryProviders,
  withProviderScanCache,
} from "../../src/plugins/plugin_discovery.ts";
import { discoverMemoryProviders } from "../../src/plugins/provider_listing.ts";
import {
  captureLogs,
  installFixture,
  simpleProviderSource,
  tempHome,
  writeProvider,
} from "../helpers/plugin_fixtures.ts";

/** Runs `fn` with HERMES_ENABLE_PROJECT_PLUGINS set (restored after). */
async function withProjectPlugins<T>(fn: () => Promise<T>): Promise<T> {
  const previous = Deno.env.get("HERMES_ENABLE_PROJECT_PLUGINS");
  Deno.env.set("HERMES_ENABLE_PROJECT_PLUGINS", "Yes");
  try {
    return await fn();
  } finally {
    if (previous === undefined) {
      Deno.env.delete("HERMES_ENABLE_PROJECT_PLUGINS");
    } else Deno.env.set("HERMES_ENABLE_PROJECT_PLUGINS", previous);
  }
}

Deno.test("isBuiltinSentinel() accepts the five built-in values in any case and spacing", () => {
  for (
    const v of ["", " default ", "BUILTIN", "built-in", "None", undefined, null]
  ) {
    assert.equal(isBuiltinSentinel(v), true, String(v));
  }
  assert.equal(isBuiltinSentinel("honcho"), false);
  assert.equal(isBuiltinSentinel(3), false);
});

Deno.test("isValidProviderName() refuses slashes, dot-dot and odd characters", () => {
  assert.equal(isValidProviderName("mem0.v2_x-y"), true);
  for (const bad of ["a/b", "..", "a..b", "-x", "x y", "é", ""]) {
    assert.equal(isValidProviderName(bad), false, bad);
  }
});

Deno.test("scanMemoryProviders() orders bundled, user, project, packages and the first source wins", async () => {
  await using h = await tempHome();
  const bundled = join(h.outside, "bundled");
  const project = join(h.outside, "project");
  await writeProvider(bundled, "shared", {
    "mod.ts": "// bundled needs only mod.ts",
  });
  await writeProvider(bundled, "zeta", { "mod.ts": "export {}" });
  await writeProvider(h.plugins, "shared", {
    "mod.ts": simpleProviderSource("shared"),
  });
  await writeProvider(h.plugins, "alpha", {
    "mod.ts": simpleProviderSource("alpha"),
  });
  await writeProvider(join(project, ".hermes", "plugins"), "alpha", {
    "mod.ts": simpleProviderSource("alpha"),
  });
  await writeProvider(join(project, ".hermes", "plugins"), "beta", {
    "mod.ts": simpleProviderSource("beta"),
  });
  const config = {
    memory: { packages: { alpha: "npm:alpha@1", gamma: "jsr:@x/gamma@1" } },
  };
  const found = await withProjectPlugins(() =>
    scanMemoryProviders({
      hermesHome: h.home,
      bundledDir: bundled,
      projectDir: project,
      config,
    })
  );
  assert.deepEqual(found.map((c) => `${c.source}:${c.name}`), [
    "bundled:shared",
    "bundled:zeta",
    "user:alpha",
    "project:beta",
    "package:gamma",
  ]);
  assert.equal(
    found.find((c) => c.name === "gamma")?.specifier,
    "jsr:@x/gamma@1",
  );
  assert.equal(found[0]?.dir, join(bundled, "shared"));
});

Deno.test("scanMemoryProviders() ignores project providers unless HERMES_ENABLE_PROJECT_PLUGINS is truthy", async () => {
  await using h = await tempHome();
  const project = join(h.outside, "project");
  await writeProvider(join(project, ".hermes", "plugins"), "beta", {
    "mod.ts": simpleProviderSource("beta"),
  });
  const names = await listMemoryProviderNames({
    hermesHome: h.home,
    bundledDir: join(h.outside, "none"),
    projectDir: project,
    config: {},
  });
  assert.deepEqual(names, []);
});

Deno.test("scanMemoryProviders() needs the text heuristic for user directories, never imports", async () => {
  await using h = await tempHome();
  await writeProvider(h.plugins, "plain", { "mod.ts": "export const x = 1;" });
  await writeProvider(h.plugins, "noisy", {
    "mod.ts": "throw new Error('imported!'); // MemoryProvider",
  });
  await writeProvider(h.plugins, "late", {
    "mod.ts": "// " + "x".repeat(20000) + "\n// registerMemoryProvider",
  });
  await writeProvider(h.plugins, "nomod", { "plugin.yaml": "description: x" });
  await writeProvider(h.plugins, "_private", {
    "mod.ts": simpleProviderSource("p"),
  });
  await writeProvider(h.plugins, ".hidden", {
    "mod.ts": simpleProviderSource("p"),
  });
  await Deno.writeTextFile(join(h.plugins, "file.ts"), "MemoryProvider");
  const names = await listMemoryProviderNames({
    hermesHome: h.home,
    bundledDir: join(h.outside, "none"),
    config: {},
  });
  assert.deepEqual(names, ["late", "noisy"]);
});

Deno.test("scanMemoryProviders() skips bad names, escaping symlinks and broken plugin.yaml with one warning each", async () => {
  await using h = await tempHome();
  using logs = captureLogs();
  await writeProvider(h.plugins, "good", {
    "mod.ts": simpleProviderSource("good"),
    "plugin.yaml": "description: Good one",
  });
  await writeProvider(h.plugins, "bad name", {
    "mod.ts": simpleProviderSource("x"),
  });
  await writeProvider(h.plugins, "broken", {
    "mod.ts": simpleProviderSource("broken"),
    "plugin.yaml": "permissions: {read: [relative/path]}",
  });
  const elsewhere = await writeProvider(h.outside, "elsewhere", {
    "mod.ts": simpleProviderSource("elsewhere"),
  });
  await Deno.symlink(elsewhere, join(h.plugins, "linked"));
  await writeProvider(h.plugins, "leaky", {
    "mod.ts": simpleProviderSource("leaky"),
  });
  await Deno.symlink("/etc", join(h.plugins, "leaky", "etc"));
  await writeProvider(h.plugins, "inside_target", {
    "mod.ts": simpleProviderSource("inside_target"),
  });
  await Deno.symlink(
    join(h.plugins, "inside_target"),
    join(h.plugins, "inside_link"),
  );
  const options = {
    hermesHome: h.home,
    bundledDir: join(h.outside, "none"),
    config: {},
  };
  const names = await listMemoryProviderNames(options);
  assert.deepEqual(names, ["good", "inside_link", "inside_target"]);
  const warnings = logs.at("warn");
  assert.equal(warnings.length, 4, warnings.join("\n"));
  assert.ok(
    warnings.some((w) =>
      w.includes(
        `Skipping memory provider directory ${
          join(h.plugins, "bad name")
        }: the name 'bad name' may use only letters`,
      )
    ),
  );
  assert.ok(
    warnings.some((w) =>
      w.startsWith("Skipping memory provider 'broken' (user): Invalid ") &&
      w.includes("'permissions.read[0]' is 'relative/path'")
    ),
  );
  assert.ok(
    warnings.some((w) =>
      w.includes(
        `Skipping memory provider 'linked': ${
          join(h.plugins, "linked")
        } is a symlink to ${elsewhere}, outside ${h.plugins}`,
      )
    ),
  );
  assert.ok(
    warnings.some((w) =>
      w.includes(
        `Skipping memory provider 'leaky': ${
          join(h.plugins, "leaky", "etc")
        } is a symlink to /etc`,
      )
    ),
  );
  // A second scan does not repeat the warnings.
  await listMemoryProviderNames(options);
  assert.equal(logs.at("warn").length, 4);
});

Deno.test("scanMemoryProviders() survives an unreadable provider directory", async () => {
  if (Deno.uid() === 0) return; // root reads everything: nothing to prove
  await using h = await tempHome();
  using logs = captureLogs();
  const locked = await writeProvider(h.plugins, "locked", {
    "mod.ts": "MemoryProvider",
  });
  await writeProvider(h.plugins, "open", { "mod.ts": "MemoryProvider" });
  await Deno.chmod(locked, 0o000);
  try {
    const names = await listMemoryProviderNames({
      hermesHome: h.home,
      bundledDir: join(h.outside, "none"),
      config: {},
    });
    assert.deepEqual(names, ["open"]);
    assert.match(
      logs.at("warn")[0] ?? "",
      /Skipping unreadable plugin directory/,
    );
  } finally {
    await Deno.chmod(locked, 0o755);
  }
});

Deno.test("scanMemoryProviders() warns about bad memory.packages entries and keeps the good ones", async () => {
  await using h = await tempHome();
  using logs = captureLogs();
  const found = await scanMemoryProviders({
    hermesHome: h.home,
    bundledDir: join(h.outside, "none"),
    config: {
      memory: {
        packages: {
          ok: "https://example.com/p/mod.ts",
          "../x": "npm:x@1",
          bad: "ftp://x",
          num: 3,
        },
      },
    },
  });
  assert.deepEqual(found.map((c) => c.name), ["ok"]);
  assert.equal(logs.at("warn").length, 3);
  assert.ok(
    logs.at("warn").some((w) =>
      /memory\.packages\.bad .*use a jsr:, npm: or https:\/\/ module specifier/
        .test(w)
    ),
  );
});

Deno.test("findMemoryProvider() finds the winning directory, none for packages and unknown names", async () => {
  await using h = await tempHome();
  const dir = await installFixture(h.plugins, "notes");
  const options = {
    hermesHome: h.home,
    bundledDir: join(h.outside, "none"),
    config: { memory: { packages: { pkg: "npm:pkg@1" } } },
  };
  assert.equal((await findMemoryProvider("notes", options))?.dir ?? null, dir);
  assert.equal((await findMemoryProvider("pkg", options))?.dir ?? null, null);
  assert.equal(
    (await findMemoryProvider("missing", options))?.dir ?? null,
    null,
  );
  assert.equal((await findMemoryProvider("none", options))?.dir ?? null, null);
  assert.equal(
    (await findMemoryProvider("notes", options))?.manifest.description,
    "Local notes kept in HERMES_HOME",
  );
});

Deno.test("discoverMemoryProviders() lists descriptions, sources and manifest availability, and probes only when asked", async () => {
  await using h = await tempHome();
  await installFixture(h.plugins, "notes");
  await installFixture(h.plugins, "subclass_only");
  const base = {
    hermesHome: h.home,
    bundledDir: join(h.outside, "none"),
    config: {},
  };
  let probes = 0;
  const unprobed = await discoverMemoryProviders({
    ...base,
    probeProvider: () => Promise.resolve(++probes > 0),
  });
  assert.deepEqual(
    unprobed.map((p) => [p.name, p.description, p.source, p.available]),
    [
      ["notes", "Local notes kept in HERMES_HOME", "user", true],
      ["subclass_only", "Subclass export only", "user", true],
    ],
  );
  assert.equal(probes, 0, "probed without being asked");
  const probed = await discoverMemoryProviders({
    ...base,
    probe: true,
    probeProvider: (candidate) => Promise.resolve(candidate.name === "notes"),
  });
  assert.deepEqual(probed.map((p) => p.available), [true, false]);
});

Deno.test("discoverMemoryProviders() counts a probe that throws as unavailable", async () => {
  await using h = await tempHome();
  await installFixture(h.plugins, "notes");
  const probed = await discoverMemoryProviders({
    hermesHome: h.home,
    bundledDir: join(h.outside, "none"),
    config: {},
    probe: true,
    probeProvider: () => Promise.reject(new Error("boom")),
  });
  assert.equal(probed[0]?.available, false);
});

Deno.test("withProviderScanCache() scans once per home and config; outside it every call rescans", async () => {
  await using h = await tempHome();
  const bundled = join(h.outside, "bundled");
  await writeProvider(bundled, "zeta", { "mod.ts": "export {}" });
  const options = { hermesHome: h.home, bundledDir: bundled, config: {} };
  const names = async () =>
    (await scanMemoryProviders(options)).map((c) => c.name);
  await withProviderScanCache(async () => {
    assert.deepEqual(await names(), ["zeta"]);
    await writeProvider(h.plugins, "alpha", {
      "mod.ts": simpleProviderSource("alpha"),
    });
    assert.deepEqual(await names(), ["zeta"]);
    // Another config is another scan.
    const other = await scanMemoryProviders({ ...options, config: { a: 1 } });
    assert.deepEqual(other.map((c) => c.name), ["zeta", "alpha"]);
  });
  assert.deepEqual(await names(), ["zeta", "alpha"]);
});
