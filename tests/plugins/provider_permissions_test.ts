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
import {
  type ForbiddenContext,
  forbiddenGrantPath,
} from "../../src/sandbox/grant.ts";
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

Deno.test("grantForCandidate() grants its code read-only, its data directory, the approved part of the request and the user's own grants, with one notice for the rest", () => {
  using logs = captureLogs();
  const manifest = emptyPluginManifest();
  manifest.permissions = {
    read: ["/etc/notes.conf", "$HERMES_HOME/notes.json"],
    write: ["$HERMES_HOME/notes.log"],
    env: ["NOTES_KEY", "NOTES_REGION"],
    net: ["api.notes.example"],
    npm: false,
  };
  const config = {
    memory: {
      permissions: {
        // Approved with 'hermes memory setup notes' before the update that
        // added NOTES_REGION and api.notes.example; plus the user's own.
        notes: {
          read: ["/etc/notes.conf", "$HERMES_HOME/notes.json", "~/notes"],
          write: ["$HERMES_HOME/notes.log", "/var/log/notes.log"],
          env: ["NOTES_KEY", "EXTRA"],
          net: ["https://notes.lan:8000"],
        },
        other: { net: ["not-for-us.example"] },
      },
    },
  };
  const grant = grantForCandidate(candidate({ manifest }), {
    hermesHome: "/srv/h",
    config,
  });
  assert.equal(grant.dataDir, "/srv/h/notes");
  assert.deepEqual(grant.read, [
    { value: "/srv/h/plugins/notes", from: "provider-dir" },
    { value: "/srv/h/notes", from: "data-dir" },
    { value: "/etc/notes.conf", from: "plugin.yaml" },
    { value: "/srv/h/notes.json", from: "plugin.yaml" },
    { value: join(getUserHome() ?? "", "notes"), from: "config.yaml" },
  ]);
  assert.deepEqual(grant.write, [
    { value: "/srv/h/notes", from: "data-dir" },
    { value: "/srv/h/notes.log", from: "plugin.yaml" },
    { value: "/var/log/notes.log", from: "config.yaml" },
  ]);
  assert.deepEqual(grant.env.map((e) => e.value), ["NOTES_KEY", "EXTRA"]);
  assert.deepEqual(grant.net, [{
    value: "notes.lan:8000",
    from: "config.yaml",
  }]);
  assert.deepEqual(grant.import, []);
  assert.equal(grant.npm, false);
  grantForCandidate(candidate({ manifest }), { hermesHome: "/srv/h", config });
  assert.deepEqual(logs.at("warn"), [
    "Memory provider 'notes' asks for more than you approved (env NOTES_REGION; net api.notes.example, in /srv/h/plugins/notes/plugin.yaml); it runs without it. To review and approve: hermes memory setup notes",
  ]);
});

Deno.test("grantForCandidate() grants a bundled provider what its manifest declares, with no approval", () => {
  using logs = captureLogs();
  const manifest = emptyPluginManifest();
  manifest.permissions.env = ["HONCHO_API_KEY"];
  manifest.permissions.net = ["api.honcho.dev"];
  const grant = grantForCandidate(
    candidate({
      name: "honcho",
      source: "bundled",
      dir: "/fw/plugins/memory/honcho",
      manifest,
    }),
    { hermesHome: "/srv/h", config: {} },
  );
  assert.deepEqual(grant.env.map((e) => e.value), ["HONCHO_API_KEY"]);
  assert.deepEqual(grant.net.map((e) => e.value), ["api.honcho.dev"]);
  assert.deepEqual(logs.at("warn"), []);
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
    config: {
      memory: { permissions: { notes: { env: ["A", "B"], net: ["h:1"] } } },
    },
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
    config: { memory: { permissions: { notes: { net: ["example.com"] } } } },
  });
  // The test runner has --allow-read/--allow-write but only loopback net.
  assert.deepEqual(missingHostPermissions(grant), ["--allow-net=example.com"]);
});

Deno.test("providerPermissions() finds the provider and reads config.yaml for the user's grant", async () => {
  await using h = await tempHome();
  await installFixture(h.plugins, "notes");
  await writeProvider(h.home, ".", {
    "config.yaml":
      "memory:\n  provider: notes\n  permissions:\n    notes:\n      net: [notes.lan]\n      env: [NOTES_API_KEY]\n",
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
  const honcho = { ...fallback, provider: "honcho", bundled: true };
  const notes = { ...fallback, provider: "notes", userHome: "/u" };
  const cases: [ForbiddenContext, string, RegExp | undefined][] = [
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
    [
      fallback,
      "/u/.hermes/honcho.json",
      /^it is \/u\/\.hermes\/honcho\.json, Honcho's credentials/,
    ],
    [honcho, "/u/.hermes/honcho.json", undefined],
    [
      fallback,
      "/u/.hermes/memories/MEMORY.md",
      /^it is inside \/u\/\.hermes\/memories, the built-in memory/,
    ],
    [
      fallback,
      "/u/.hermes/hooks",
      /^it is \/u\/\.hermes\/hooks, hook handlers/,
    ],
    [
      fallback,
      "/u/.hermes/skills/x/SKILL.md",
      /^it is inside \/u\/\.hermes\/skills/,
    ],
    [fallback, "/u/.hermes/bin/x", /^it is inside \/u\/\.hermes\/bin/],
    [fallback, "/u/.hermes/cron", /^it is \/u\/\.hermes\/cron/],
    [
      fallback,
      "/u/.hermes/SOUL.md",
      /^it is \/u\/\.hermes\/SOUL\.md, the agent's persona/,
    ],
    [notes, "/u/.hermes/notes/db", undefined],
    [
      notes,
      "/u/.hermes/archive/s1",
      /^it is inside \/u\/\.hermes\/archive, another provider's data directory/,
    ],
    [notes, "/u/.hermes/notes.db", undefined],
    [notes, "/u/.ssh/id_rsa", /^it is inside \/u\/\.ssh, SSH keys/],
    [notes, "/u/.bashrc", /^it is \/u\/\.bashrc, a shell start-up file/],
    [notes, "/u/.honcho/config.json", /Honcho's credentials/],
    [notes, "/", /^it holds /],
    [named, "/u/.hermes/profiles/work/honcho", undefined],
    [
      named,
      "/u/.hermes/profiles/work/.env",
      /^it is \/u\/\.hermes\/profiles\/work\/\.env/,
    ],
    [named, "/u/.hermes/profiles/other", /^it belongs to another profile/],
    // A named profile never reaches into the default one; the bundled
    // honcho provider alone reads its shared settings file.
    [named, "/u/.hermes/honcho.json", /Honcho's credentials/],
    [
      { ...named, provider: "honcho", bundled: true },
      "/u/.hermes/honcho.json",
      undefined,
    ],
    [
      { ...named, provider: "honcho", bundled: true, access: "write" },
      "/u/.hermes/honcho.json",
      /^it belongs to the default profile/,
    ],
    [
      named,
      "/u/.hermes/memories",
      /^it is \/u\/\.hermes\/memories, the built-in memory/,
    ],
    [
      named,
      "/u/.hermes/notes.txt",
      /^it belongs to the default profile \(\/u\/\.hermes\), not to the active profile/,
    ],
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
  using logs = captureLogs();
  const grant = grantForCandidate(candidate({ manifest }), {
    hermesHome: join(root, "profiles", "work"),
    config: { memory: { permissions: { notes: manifest.permissions } } },
  });
  // The default profile's files are not the named profile's to grant.
  assert.deepEqual(
    grant.read.filter((e) => e.from === "plugin.yaml").map((e) => e.value),
    [join(root, "profiles", "work", "notes.json")],
  );
  assert.deepEqual(logs.at("warn"), [
    `Ignoring '$HERMES_ROOT/notes.json' under permissions.read in /srv/h/plugins/notes/plugin.yaml: it belongs to the default profile (${root}), not to the active profile ${
      join(root, "profiles", "work")
    }; a memory provider is never granted it`,
    `Ignoring '$HERMES_ROOT/notes.json' under memory.permissions.notes.read in ${
      join(root, "profiles", "work", "config.yaml")
    }: it belongs to the default profile (${root}), not to the active profile ${
      join(root, "profiles", "work")
    }; a memory provider is never granted it`,
  ]);
});

Deno.test("dataDirProblem() refuses names whose data directory Hermes itself uses", () => {
  assert.equal(dataDirProblem("notes", "/h"), undefined);
  assert.equal(
    dataDirProblem("memories", "/h"),
    "its data directory would be /h/memories, which Hermes itself uses: rename the provider",
  );
  assert.equal(
    dataDirProblem("config.yaml", "/h"),
    "its data directory would be /h/config.yaml, which Hermes itself uses: rename the provider",
  );
  // No data directory in the grant, so no flag for it either.
  const grant = grantForCandidate(candidate({ name: "plugins" }), {
    hermesHome: "/h",
    config: {},
  });
  assert.equal(grant.dataDir, undefined);
  assert.deepEqual(grant.write, []);
});
