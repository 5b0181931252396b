import assert from "node:assert/strict";
import { join } from "node:path";
import { getUserHome } from "../../src/profile/hermes_home.ts";
import { emptyPluginManifest } from "../../src/plugins/plugin_manifest.ts";
import type { ProviderCandidate } from "../../src/plugins/plugin_discovery.ts";
import {
  dataDirProblem,
  denoRunFlags,
  grantForCandidate,
  missingHostPermissions,
  providerPermissions,
  userGrantFromConfig,
  workerPermissions,
} from "../../src/plugins/provider_permissions.ts";
import { forbiddenGrantPath } from "../../src/sandbox/grant.ts";
import {
  captureLogs,
  installFixture,
  tempHome,
  writeProvider,
} from "../helpers/plugin_fixtures.ts";

function candidate(
  overrides: Partial<ProviderCandidate> = {},
): ProviderCandidate {
  return {
    name: "notes",
    source: "user",
    dir: "/srv/h/plugins/notes",
    specifier: "file:///srv/h/plugins/notes/mod.ts",
    manifest: emptyPluginManifest(),
    ...overrides,
  };
}

Deno.test("grantForCandidate() grants its code read-only, its data directory, declared and user-granted entries only", () => {
  const manifest = emptyPluginManifest();
  manifest.permissions = {
    read: ["/etc/honcho.json", "$HERMES_HOME/notes.json"],
    write: ["$HERMES_HOME/notes.log"],
    env: ["HONCHO_API_KEY"],
    net: ["api.honcho.dev"],
    npm: false,
  };
  const grant = grantForCandidate(candidate({ manifest }), {
    hermesHome: "/srv/h",
    config: {
      memory: {
        permissions: {
          notes: {
            net: ["https://honcho.lan:8000"],
            read: ["~/notes"],
            write: ["/var/log/notes.log"],
            env: ["EXTRA"],
          },
          other: { net: ["not-for-us.example"] },
        },
      },
    },
  });
  assert.equal(grant.dataDir, "/srv/h/notes");
  assert.deepEqual(grant.read, [
    { value: "/srv/h/plugins/notes", from: "provider-dir" },
    { value: "/srv/h/notes", from: "data-dir" },
    { value: "/etc/honcho.json", from: "plugin.yaml" },
    { value: "/srv/h/notes.json", from: "plugin.yaml" },
    { value: join(getUserHome() ?? "", "notes"), from: "config.yaml" },
  ]);
  assert.deepEqual(grant.write, [
    { value: "/srv/h/notes", from: "data-dir" },
    { value: "/srv/h/notes.log", from: "plugin.yaml" },
    { value: "/var/log/notes.log", from: "config.yaml" },
  ]);
  assert.deepEqual(grant.env.map((e) => e.value), ["HONCHO_API_KEY", "EXTRA"]);
  assert.deepEqual(grant.net, [
    { value: "api.honcho.dev", from: "plugin.yaml" },
    { value: "honcho.lan:8000", from: "config.yaml" },
  ]);
  assert.deepEqual(grant.import, []);
  assert.equal(grant.npm, false);
});

Deno.test("grantForCandidate() lets package providers import from their own host", () => {
  const https = grantForCandidate(
    candidate({
      source: "package",
      dir: undefined,
      specifier: "https://cdn.example.com/p/mod.ts",
    }),
    { hermesHome: "/h", config: {} },
  );
  assert.deepEqual(https.import, [{
    value: "cdn.example.com",
    from: "package",
  }]);
  const jsr = grantForCandidate(
    candidate({ source: "package", dir: undefined, specifier: "jsr:@x/p@1" }),
    { hermesHome: "/h", config: {} },
  );
  assert.deepEqual(jsr.import.map((e) => e.value), ["jsr.io"]);
  const npm = grantForCandidate(
    candidate({ source: "package", dir: undefined, specifier: "npm:p@1" }),
    { hermesHome: "/h", config: {} },
  );
  assert.equal(npm.npm, true);
  assert.deepEqual(npm.read.map((e) => e.value), ["/h/notes"]);
});

Deno.test("userGrantFromConfig() ignores an invalid grant with one warning naming the key", () => {
  using logs = captureLogs();
  const config = { memory: { permissions: { notes: { net: ["*"] } } } };
  const grant = userGrantFromConfig("notes", config, "/srv/h");
  assert.deepEqual(grant, {
    read: [],
    write: [],
    env: [],
    net: [],
    npm: false,
  });
  userGrantFromConfig("notes", config, "/srv/h");
  assert.deepEqual(logs.at("warn"), [
    "Invalid /srv/h/config.yaml: 'memory.permissions.notes.net[0]' is '*': use a host such as api.example.com, host:port or a URL; the grant is ignored until it is fixed",
  ]);
});

Deno.test("workerPermissions() never grants run, ffi or sys, and leaves empty lists out", () => {
  const grant = grantForCandidate(candidate(), {
    hermesHome: "/srv/h",
    config: {},
  });
  assert.deepEqual(workerPermissions(grant), {
    read: ["/srv/h/plugins/notes", "/srv/h/notes"],
    write: ["/srv/h/notes"],
    env: false,
    net: false,
    import: false,
    run: false,
    ffi: false,
    sys: false,
  });
});

Deno.test("denoRunFlags() renders the grant as the host's --allow flags", () => {
  const manifest = emptyPluginManifest();
  manifest.permissions.env = ["A", "B"];
  manifest.permissions.net = ["h:1"];
  const grant = grantForCandidate(candidate({ manifest }), {
    hermesHome: "/srv/h",
    config: {},
  });
  assert.deepEqual(denoRunFlags(grant), [
    "--allow-read=/srv/h/plugins/notes,/srv/h/notes",
    "--allow-write=/srv/h/notes",
    "--allow-env=A,B",
    "--allow-net=h:1",
  ]);
});

Deno.test("missingHostPermissions() names what the host itself lacks", () => {
  const manifest = emptyPluginManifest();
  manifest.permissions.net = ["example.com"];
  const grant = grantForCandidate(candidate({ manifest }), {
    hermesHome: "/srv/h",
    config: {},
  });
  // The test runner has --allow-read/--allow-write but only loopback net.
  assert.deepEqual(missingHostPermissions(grant), ["--allow-net=example.com"]);
});

Deno.test("providerPermissions() finds the provider and reads config.yaml for the user's grant", async () => {
  await using h = await tempHome();
  await installFixture(h.plugins, "notes");
  await writeProvider(h.home, ".", {
    "config.yaml":
      "memory:\n  provider: notes\n  permissions:\n    notes:\n      net: [notes.lan]\n",
  });
  const grant = await providerPermissions("notes", {
    hermesHome: h.home,
    bundledDir: h.outside,
  });
  assert.deepEqual(grant?.net, [{ value: "notes.lan", from: "config.yaml" }]);
  assert.deepEqual(grant?.env, [{
    value: "NOTES_API_KEY",
    from: "plugin.yaml",
  }]);
  assert.equal(
    await providerPermissions("absent", {
      hermesHome: h.home,
      bundledDir: h.outside,
    }),
    null,
  );
});

Deno.test("forbiddenGrantPath() keeps secrets, config, code and other profiles out of every grant", () => {
  const root = "/u/.hermes";
  const named = { hermesHome: "/u/.hermes/profiles/work", hermesRoot: root };
  const fallback = { hermesHome: root, hermesRoot: root };
  const cases: [typeof named, string, RegExp | undefined][] = [
    [
      fallback,
      "/u/.hermes/.env",
      /^it is \/u\/\.hermes\/\.env, a profile's secrets file/,
    ],
    [fallback, "/u/.hermes/config.yaml", /^it is \/u\/\.hermes\/config\.yaml/],
    [fallback, "/u/.hermes", /^it holds \/u\/\.hermes\/\.env/],
    [fallback, "/u", /^it holds \/u\/\.hermes\/\.env/],
    [
      fallback,
      "/u/.hermes/plugins/notes/cli.ts",
      /^it is inside \/u\/\.hermes\/plugins/,
    ],
    [
      fallback,
      "/u/.hermes/profiles/other/.env",
      /^it belongs to another profile/,
    ],
    [fallback, "/u/.hermes/profiles", /^it holds the other profiles/],
    [fallback, "/u/.hermes/honcho.json", undefined],
    [fallback, "/u/.hermes/memories/MEMORY.md", undefined],
    [named, "/u/.hermes/profiles/work/honcho", undefined],
    [
      named,
      "/u/.hermes/profiles/work/.env",
      /^it is \/u\/\.hermes\/profiles\/work\/\.env/,
    ],
    [named, "/u/.hermes/profiles/other", /^it belongs to another profile/],
    // The shared settings file of the default home is readable; its
    // secrets and config are not.
    [named, "/u/.hermes/honcho.json", undefined],
    [named, "/u/.hermes/.env", /^it is \/u\/\.hermes\/\.env/],
    [named, "/u/.hermes/config.yaml", /^it is \/u\/\.hermes\/config\.yaml/],
  ];
  for (const [where, path, expected] of cases) {
    const why = forbiddenGrantPath(path, where);
    if (expected === undefined) assert.equal(why, undefined, path);
    else assert.match(why ?? "(allowed)", expected, path);
  }
  assert.match(
    forbiddenGrantPath("/repo/src/x.ts", {
      ...fallback,
      frameworkDir: "/repo",
    }) ??
      "",
    /^it is inside \/repo, the framework's code/,
  );
});

Deno.test("$HERMES_HOME and $HERMES_ROOT resolve per profile in a grant", () => {
  const manifest = emptyPluginManifest();
  manifest.permissions.read = [
    "$HERMES_HOME/notes.json",
    "$HERMES_ROOT/notes.json",
  ];
  const root = join(getUserHome() ?? "/", ".hermes");
  const grant = grantForCandidate(candidate({ manifest }), {
    hermesHome: join(root, "profiles", "work"),
    config: {},
  });
  assert.deepEqual(
    grant.read.filter((e) => e.from === "plugin.yaml").map((e) => e.value),
    [join(root, "profiles", "work", "notes.json"), join(root, "notes.json")],
  );
});

Deno.test("dataDirProblem() refuses names whose data directory Hermes itself uses", () => {
  assert.equal(dataDirProblem("notes", "/h"), undefined);
  assert.equal(
    dataDirProblem("memories", "/h"),
    "its data directory would be /h/memories, which Hermes itself uses: rename the provider",
  );
  assert.equal(
    dataDirProblem("config.yaml", "/h"),
    "its data directory would be /h/config.yaml, and it is /h/config.yaml, a profile's config.yaml: the host hands a provider its own sections: rename the provider",
  );
  // No data directory in the grant, so no flag for it either.
  const grant = grantForCandidate(candidate({ name: "plugins" }), {
    hermesHome: "/h",
    config: {},
  });
  assert.equal(grant.dataDir, undefined);
  assert.deepEqual(grant.write, []);
});
