import assert from "node:assert/strict";
import { join } from "node:path";
import { ConfigError } from "../../src/config/config_file.ts";
import {
  getConfigPath,
  getConfigValue,
  loadConfig,
  saveConfig,
  setConfigValue,
} from "../../src/config/config.ts";
import { withHermesHome } from "../../src/profile/context_scope.ts";
import { runDenoChild, srcUrl } from "../helpers/deno_child.ts";
import { withHome } from "../helpers/test_home.ts";

const HAND_EDITED = `# Hermes config — edited by hand
model: gpt-5 # the default model

# Memory settings
memory:
  provider: builtin # switch with hermes memory setup
  memory_enabled: true
  honcho:
    workspace: hermes

# Never loaded by the memory code
terminal:
  backend: local
`;

Deno.test("loadConfig() returns {} for a missing or empty file", async () => {
  await withHome(async (home) => {
    assert.deepEqual(await loadConfig({ hermesHome: home }), {});
    await Deno.writeTextFile(join(home, "config.yaml"), "# only a comment\n");
    assert.deepEqual(await loadConfig({ hermesHome: home }), {});
  });
});

Deno.test("loadConfig() reads the context home's config.yaml as YAML 1.1", async () => {
  await withHome(async (home) => {
    await Deno.writeTextFile(
      join(home, "config.yaml"),
      "\uFEFFmemory:\n  memory_enabled: yes\n  user_profile_enabled: off\n  provider: honcho\n",
    );
    const config = await withHermesHome(home, () => loadConfig());
    assert.deepEqual(config, {
      memory: {
        memory_enabled: true,
        user_profile_enabled: false,
        provider: "honcho",
      },
    });
  });
});

Deno.test("loadConfig() reports a broken file with its path, line and column", async () => {
  await withHome(async (home) => {
    const path = join(home, "config.yaml");
    await Deno.writeTextFile(
      path,
      "memory:\n  provider: honcho\n  bad: [1, 2\nother: x\n",
    );
    const error = await loadConfig({ hermesHome: home }).then(
      () => assert.fail("expected a ConfigError"),
      (e: unknown) => e,
    );
    assert.ok(error instanceof ConfigError);
    assert.equal(error.path, path);
    assert.equal(typeof error.line, "number");
    assert.equal(typeof error.column, "number");
    assert.ok(error.message.includes(path), error.message);
    assert.ok(
      error.message.includes(`line ${error.line}, column ${error.column}`),
    );
    assert.match(error.message, /^Cannot parse /);
    assert.doesNotMatch(error.message, /\.$/);
  });
});

Deno.test("loadConfig() rejects a top level that is not a mapping", async () => {
  await withHome(async (home) => {
    await Deno.writeTextFile(join(home, "config.yaml"), "- a\n- b\n");
    await assert.rejects(loadConfig({ hermesHome: home }), ConfigError);
  });
});

Deno.test("saveConfig() keeps sections the caller never loaded, and comments", async () => {
  await withHome(async (home) => {
    const path = join(home, "config.yaml");
    await Deno.writeTextFile(path, HAND_EDITED);
    await saveConfig({ memory: { provider: "honcho" } }, { hermesHome: home });
    const text = await Deno.readTextFile(path);
    assert.deepEqual(await loadConfig({ hermesHome: home }), {
      model: "gpt-5",
      memory: {
        provider: "honcho",
        memory_enabled: true,
        honcho: { workspace: "hermes" },
      },
      terminal: { backend: "local" },
    });
    for (
      const comment of [
        "# Hermes config — edited by hand",
        "# the default model",
        "# Memory settings",
        "# switch with hermes memory setup",
        "# Never loaded by the memory code",
      ]
    ) {
      assert.ok(text.includes(comment), `lost '${comment}' in:\n${text}`);
    }
  });
});

Deno.test("saveConfig() of an unchanged config leaves the file as it was", async () => {
  await withHome(async (home) => {
    const path = join(home, "config.yaml");
    await Deno.writeTextFile(path, HAND_EDITED);
    await saveConfig(await loadConfig({ hermesHome: home }), {
      hermesHome: home,
    });
    assert.equal(await Deno.readTextFile(path), HAND_EDITED);
  });
});

Deno.test("saveConfig() with mergeExisting false removes keys the config lacks", async () => {
  await withHome(async (home) => {
    await Deno.writeTextFile(join(home, "config.yaml"), HAND_EDITED);
    const config = await loadConfig({ hermesHome: home });
    delete config.terminal;
    delete (config.memory as Record<string, unknown>).honcho;
    await saveConfig(config, { hermesHome: home, mergeExisting: false });
    assert.deepEqual(await loadConfig({ hermesHome: home }), {
      model: "gpt-5",
      memory: { provider: "builtin", memory_enabled: true },
    });
    const text = await Deno.readTextFile(join(home, "config.yaml"));
    assert.ok(text.includes("# switch with hermes memory setup"));
  });
});

Deno.test("saveConfig() replaces lists and changes scalar types faithfully", async () => {
  await withHome(async (home) => {
    await Deno.writeTextFile(
      join(home, "config.yaml"),
      'plugins:\n  disabled: [a, b]\nport: "8080" # quoted\n',
    );
    await saveConfig(
      { plugins: { disabled: ["c"] }, port: 9090, flag: "yes" },
      {
        hermesHome: home,
      },
    );
    assert.deepEqual(await loadConfig({ hermesHome: home }), {
      plugins: { disabled: ["c"] },
      port: 9090,
      flag: "yes",
    });
    assert.ok(
      (await Deno.readTextFile(join(home, "config.yaml"))).includes("# quoted"),
    );
  });
});

Deno.test("saveConfig() creates the home and the file when missing", async () => {
  await withHome(async (dir) => {
    const home = join(dir, "profiles", "new");
    await saveConfig({ memory: { provider: "" } }, { hermesHome: home });
    assert.deepEqual(await loadConfig({ hermesHome: home }), {
      memory: { provider: "" },
    });
  });
});

Deno.test("saveConfig() never overwrites a broken config.yaml", async () => {
  await withHome(async (home) => {
    const path = join(home, "config.yaml");
    const broken = "memory:\n  provider: [unterminated\n# precious notes\n";
    await Deno.writeTextFile(path, broken);
    await assert.rejects(
      saveConfig({ memory: { provider: "honcho" } }, { hermesHome: home }),
      (error: unknown) => error instanceof ConfigError && error.path === path,
    );
    assert.equal(await Deno.readTextFile(path), broken);
  });
});

Deno.test({
  name: "saveConfig() keeps the file's mode",
  ignore: Deno.build.os === "windows",
  fn: async () => {
    await withHome(async (home) => {
      const path = join(home, "config.yaml");
      await Deno.writeTextFile(path, "a: 1\n");
      await Deno.chmod(path, 0o600);
      await saveConfig({ b: 2 }, { hermesHome: home });
      assert.equal((await Deno.stat(path)).mode! & 0o777, 0o600);
    });
  },
});

Deno.test("saveConfig() loses no key when called concurrently", async () => {
  await withHome(async (home) => {
    await Promise.all(
      Array.from(
        { length: 10 },
        (_, i) => saveConfig({ [`k${i}`]: i }, { hermesHome: home }),
      ),
    );
    assert.equal(
      Object.keys(await loadConfig({ hermesHome: home })).length,
      10,
    );
  });
});

Deno.test("getConfigValue() and setConfigValue() walk dotted keys", () => {
  const config: Record<string, unknown> = {
    memory: { provider: "honcho" },
    model: "x",
  };
  assert.equal(getConfigValue(config, "memory.provider"), "honcho");
  assert.equal(getConfigValue(config, "memory.missing.deep"), undefined);
  assert.equal(getConfigValue(config, "model.length"), undefined);
  setConfigValue(config, "memory.honcho.workspace", "w");
  setConfigValue(config, "hooks.output_spill.enabled", true);
  assert.deepEqual(config, {
    memory: { provider: "honcho", honcho: { workspace: "w" } },
    model: "x",
    hooks: { output_spill: { enabled: true } },
  });
  assert.throws(() => setConfigValue(config, "model.name", "y"), TypeError);
  assert.throws(() => setConfigValue(config, "memory..x", 1), RangeError);
});

Deno.test("getConfigPath() follows the context home", () => {
  withHermesHome("/srv/alice", () => {
    assert.equal(getConfigPath(), join("/srv/alice", "config.yaml"));
  });
});

Deno.test("loadConfig() and saveConfig() work with env access to HERMES_HOME and HOME only", async () => {
  await withHome(async (home) => {
    await Deno.writeTextFile(join(home, "config.yaml"), HAND_EDITED);
    const source = `import { loadConfig, saveConfig } from ${
      JSON.stringify(srcUrl("config/config.ts"))
    };
const config = await loadConfig();
await saveConfig({ memory: { provider: "honcho" } });
console.log(JSON.stringify([config.model, (await loadConfig()).memory]));
`;
    const result = await runDenoChild(home, source, {
      flags: [
        `--allow-read=${home}`,
        `--allow-write=${home}`,
        "--allow-env=HERMES_HOME,HOME",
      ],
      env: { HERMES_HOME: home },
    });
    assert.equal(result.code, 0, result.stderr);
    assert.deepEqual(JSON.parse(result.stdout), [
      "gpt-5",
      {
        provider: "honcho",
        memory_enabled: true,
        honcho: { workspace: "hermes" },
      },
    ]);
  });
});

Deno.test("loadConfig() reads scalars as PyYAML does: y/n and 08 and 1e3 stay text, also as keys", async () => {
  await withHome(async (home) => {
    await Deno.writeTextFile(
      join(home, "config.yaml"),
      "a: y\nb: n\nc: yes\nd: 08\ne: 1e3\nf: 1.0e+3\ng: 010\nflow: {x: 1, y: 2}\non: 3\n",
    );
    assert.deepEqual(await loadConfig({ hermesHome: home }), {
      a: "y",
      b: "n",
      c: true,
      d: "08",
      e: "1e3",
      f: 1000,
      g: 8,
      flow: { x: 1, y: 2 },
      true: 3,
    });
  });
});

Deno.test("loadConfig() names file, line and column for an alias before its anchor and for a tab", async () => {
  await withHome(async (home) => {
    const path = join(home, "config.yaml");
    for (
      const [text, line, column, why] of [
        ["a: *missing\nb: &missing 1\n", 1, 4, /undefined alias 'missing'/],
        ["a: 1\nb:\t2\n", 2, 3, /'\\t'/],
        ["a: x\ty\n", 1, 5, /'\\t'/],
        ["g: <<\n", 1, 4, /merge/],
        ["a: !python/object:os.system ls\n", 1, 4, /tag/i],
      ] as const
    ) {
      await Deno.writeTextFile(path, text);
      await assert.rejects(
        () => loadConfig({ hermesHome: home }),
        (error: unknown) =>
          error instanceof ConfigError && error.path === path &&
          error.line === line && error.column === column &&
          why.test(error.message) &&
          error.message.includes(`${path} at line ${line}, column ${column}`),
        JSON.stringify(text),
      );
    }
  });
});

Deno.test("saveConfig() writes values PyYAML reads back as the same values", async () => {
  await withHome(async (home) => {
    await saveConfig({
      tiny: 1e-7,
      big: 1e21,
      y: "y",
      yes: "yes",
      tab: "a\tb",
      merge: "<<",
      nan: NaN,
    }, { hermesHome: home });
    assert.equal(
      await Deno.readTextFile(join(home, "config.yaml")),
      'tiny: 1.0e-07\nbig: 1.0e+21\ny: y\n"yes": "yes"\ntab: "a\\tb"\nmerge: "<<"\nnan: .nan\n',
    );
  });
});
