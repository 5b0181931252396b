import assert from "node:assert/strict";
import { join } from "node:path";
import {
  emptyPluginManifest,
  expandPermissionPath,
  normalizeNetHost,
  parsePermissionBlock,
  parsePluginManifest as parseManifestAsync,
  parsePluginManifestSync as parsePluginManifest,
  PluginManifestError,
  readPluginManifest,
} from "../../src/plugins/plugin_manifest.ts";
import { loadYamlModule } from "../../src/config/yaml_module.ts";
import { getUserHome } from "../../src/profile/hermes_home.ts";
import { tempHome } from "../helpers/plugin_fixtures.ts";

Deno.test("parsePluginManifest() loads the full YAML parser only for text outside the simple subset", async () => {
  // A fresh process: nothing has loaded yaml yet.
  const code = `
    import { parsePluginManifestSync, YamlParserNotLoaded } from "./src/plugins/plugin_manifest.ts";
    const simple = parsePluginManifestSync("name: a\\nhooks: [prefetch]\\n", "p.yaml");
    let needed = false;
    try { parsePluginManifestSync("name: a # note\\n", "p.yaml"); }
    catch (e) { needed = e instanceof YamlParserNotLoaded; }
    console.log(JSON.stringify({ name: simple.name, needed }));
  `;
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["eval", "--no-prompt", code],
    cwd: new URL("../..", import.meta.url).pathname,
    stdout: "piped",
    stderr: "piped",
  }).output();
  const text = new TextDecoder().decode(out.stdout);
  assert.equal(out.code, 0, new TextDecoder().decode(out.stderr));
  assert.deepEqual(JSON.parse(text), { name: "a", needed: true });
  // The async form loads it itself.
  assert.equal(
    (await parseManifestAsync("name: a # note\n", "p.yaml")).name,
    "a",
  );
});

// The synchronous parser below needs the full parser loaded.
await loadYamlModule();

Deno.test("parsePluginManifest() reads the Hermes keys and the permissions block", () => {
  const m = parsePluginManifest(
    `\uFEFFname: honcho
version: 1.0
description: " Honcho memory "
provides_hooks: [on_session_end]
requires_env: [HONCHO_API_KEY]
external_dependencies:
  - {name: honcho-cli, install: "pipx install honcho", check: "honcho --version"}
permissions:
  read: [~/.honcho/config.json, $HERMES_HOME/honcho.json]
  write: [$HERMES_HOME/honcho.log/]
  env: [HONCHO_API_KEY, HONCHO_URL]
  net: [api.honcho.dev, "https://self.example.com:8443/v3"]
  npm: true
availability:
  env: [HONCHO_API_KEY]
  files: [$HERMES_ROOT/honcho.json]
`,
    "plugin.yaml",
  );
  assert.equal(m.name, "honcho");
  assert.equal(m.version, "1");
  assert.equal(m.description, "Honcho memory");
  assert.deepEqual(m.hooks, ["on_session_end"]);
  assert.deepEqual(m.requiresEnv, ["HONCHO_API_KEY"]);
  assert.deepEqual(m.externalDependencies, [{
    name: "honcho-cli",
    install: "pipx install honcho",
    check: "honcho --version",
  }]);
  assert.deepEqual(m.permissions, {
    read: [
      join(getUserHome() ?? "", ".honcho/config.json"),
      "$HERMES_HOME/honcho.json",
    ],
    write: ["$HERMES_HOME/honcho.log"],
    env: ["HONCHO_API_KEY", "HONCHO_URL"],
    net: ["api.honcho.dev", "self.example.com:8443"],
    npm: true,
  });
  assert.deepEqual(m.availability, {
    env: ["HONCHO_API_KEY"],
    files: ["$HERMES_ROOT/honcho.json"],
  });
});

Deno.test("parsePluginManifest() gives an empty manifest for an empty file", () => {
  assert.deepEqual(
    parsePluginManifest("", "plugin.yaml"),
    emptyPluginManifest(),
  );
});

Deno.test("parsePluginManifest() names the file, line and column of broken YAML", () => {
  assert.throws(
    () => parsePluginManifest("name: [unclosed\n", "/p/plugin.yaml"),
    (error: unknown) => {
      assert.ok(error instanceof PluginManifestError);
      assert.equal(error.path, "/p/plugin.yaml");
      assert.match(
        error.message,
        /^Invalid YAML in \/p\/plugin\.yaml at line \d+, column \d+: /,
      );
      return true;
    },
  );
});

Deno.test("parsePluginManifest() rejects each kind of bad permission with the key and a fix", async (t) => {
  const cases: [string, RegExp][] = [
    [
      "permissions: [read]",
      /'permissions' must be a mapping with read, write, env, net and npm, not a list/,
    ],
    [
      "permissions: {run: [echo]}",
      /'permissions\.run' is not a permission: use read, write, env, net, npm or why/,
    ],
    ["permissions: {read: notes.txt}", /'permissions\.read' must be a list/],
    [
      "permissions: {read: [notes.txt]}",
      /'permissions\.read\[0\]' is 'notes\.txt': use an absolute path, or one starting with ~\/, \$HERMES_HOME\/ or \$HERMES_ROOT\//,
    ],
    [
      'permissions: {env: ["A B"]}',
      /'permissions\.env\[0\]' is 'A B': use a variable name/,
    ],
    [
      'permissions: {net: ["*"]}',
      /'permissions\.net\[0\]' is '\*': use a host/,
    ],
    ['permissions: {npm: "yes"}', /'permissions\.npm' must be true or false/],
    [
      "permissions: {write: [$HERMES_HOME/../other/.env]}",
      /'permissions\.write\[0\]' is '\$HERMES_HOME\/\.\.\/other\/\.env': it has a '\.\.' segment: write the path it means/,
    ],
    [
      'permissions: {read: ["~/x,/"]}',
      /'permissions\.read\[0\]' is '~\/x,\/': it contains a comma, which Deno reads as a list separator/,
    ],
    [
      'permissions: {write: ["/srv/notes/\\e[2J"]}',
      /'permissions\.write\[0\]' is '\/srv\/notes\/\\x1b\[2J': it contains a control character/,
    ],
    [
      "permissions: {read: [/a/../b]}",
      /'permissions\.read\[0\]' is '\/a\/\.\.\/b': it has a '\.\.' segment/,
    ],
    [
      "permissions: {env: [A], why: {B: because}}",
      /'permissions\.why' names 'B', which is not listed under read, write, env or net/,
    ],
    [
      "availability: {when: [x]}",
      /'availability\.when' is not known: use env or files/,
    ],
    [
      "availability: {env: [not-a-name]}",
      /'availability\.env\[0\]' is 'not-a-name': use a variable name/,
    ],
    ["- a list", /the top level must be a mapping/],
    ["description: {a: 1}", /'description' must be text/],
  ];
  for (const [text, pattern] of cases) {
    await t.step(text, () => {
      assert.throws(() => parsePluginManifest(text, "plugin.yaml"), pattern);
    });
  }
});

Deno.test("normalizeNetHost() keeps host[:port], reduces URLs and refuses wildcards", () => {
  assert.equal(normalizeNetHost("API.Honcho.dev"), "api.honcho.dev");
  assert.equal(normalizeNetHost("127.0.0.1:8000"), "127.0.0.1:8000");
  assert.equal(normalizeNetHost("[::1]:8000"), "[::1]:8000");
  assert.equal(normalizeNetHost("http://localhost:9/x?y"), "localhost:9");
  assert.equal(normalizeNetHost("host:99999"), undefined);
  assert.equal(normalizeNetHost("*.example.com"), undefined);
  assert.equal(normalizeNetHost(""), undefined);
});

Deno.test("expandPermissionPath() expands ~ and refuses relative paths", () => {
  assert.equal(expandPermissionPath("~"), getUserHome());
  assert.equal(expandPermissionPath("/a/./b"), "/a/b");
  assert.equal(expandPermissionPath("/a/../b"), undefined);
  assert.equal(expandPermissionPath("/a,/"), undefined);
  assert.equal(expandPermissionPath("./x"), undefined);
});

Deno.test("parsePermissionBlock() names the config key it was given", () => {
  assert.throws(
    () =>
      parsePermissionBlock({ net: ["ok.example", "x y"] }, {
        where: "/h/config.yaml",
        keyPrefix: "memory.permissions.honcho",
      }),
    /Invalid \/h\/config\.yaml: 'memory\.permissions\.honcho\.net\[1\]' is 'x y'/,
  );
});

Deno.test("readPluginManifest() treats a missing plugin.yaml as empty and reads a present one", async () => {
  await using h = await tempHome();
  assert.deepEqual(await readPluginManifest(h.home), emptyPluginManifest());
  await Deno.writeTextFile(join(h.home, "plugin.yaml"), "description: Hi\n");
  assert.equal((await readPluginManifest(h.home)).description, "Hi");
});
