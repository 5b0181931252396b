import assert from "node:assert/strict";
import { join, resolve } from "node:path";
import {
  getDefaultHermesRoot,
  getHermesHome,
  getHermesHomeOverride,
  getProcessHermesHome,
  getProfileHome,
} from "../../src/profile/hermes_home.ts";
import { withHermesHome } from "../../src/profile/context_scope.ts";
import { runDenoChild, srcUrl } from "../helpers/deno_child.ts";

async function withTempDir(fn: (dir: string) => Promise<void>): Promise<void> {
  const dir = await Deno.makeTempDir();
  try {
    await fn(dir);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

const REPORT = `import * as h from ${
  JSON.stringify(srcUrl("profile/hermes_home.ts"))
};
const report = () => ({
  home: h.getHermesHome(),
  process: h.getProcessHermesHome(),
  root: h.getDefaultHermesRoot(),
  coder: h.getProfileHome("coder"),
});
const first = report();
const second = report();
console.log(JSON.stringify({ first, second }));
`;

Deno.test("withHermesHome() overrides the home for the call, made absolute", async () => {
  const before = getHermesHome();
  assert.equal(getHermesHomeOverride(), undefined);
  await withHermesHome("relative/profile", async () => {
    assert.equal(getHermesHome(), resolve("relative/profile"));
    assert.equal(getHermesHomeOverride(), resolve("relative/profile"));
    await new Promise((r) => setTimeout(r, 0));
    assert.equal(getHermesHome(), resolve("relative/profile"));
    withHermesHome(
      "/srv/inner",
      () => assert.equal(getHermesHome(), "/srv/inner"),
    );
    assert.equal(getHermesHome(), resolve("relative/profile"));
  });
  assert.equal(getHermesHome(), before);
});

Deno.test("getProcessHermesHome() ignores the context override", () => {
  const processHome = getProcessHermesHome();
  withHermesHome("/srv/alice", () => {
    assert.equal(getHermesHome(), "/srv/alice");
    assert.equal(getProcessHermesHome(), processHome);
  });
});

Deno.test("withHermesHome() keeps concurrent profiles apart across timers and awaits", async () => {
  const homes = Array.from({ length: 10 }, (_, i) => `/srv/hermes/p${i}`);
  const seen = await Promise.all(
    homes.map((home, i) =>
      withHermesHome(home, async () => {
        const values = new Set<string>();
        for (let step = 0; step < 5; step++) {
          await new Promise((r) => setTimeout(r, (i + step) % 3));
          values.add(getHermesHome());
          values.add(
            await new Promise<string>((r) =>
              queueMicrotask(() => r(getHermesHome()))
            ),
          );
        }
        return [...values];
      })
    ),
  );
  assert.deepEqual(seen, homes.map((home) => [home]));
});

Deno.test("getProfileHome() maps names under the default root and rejects bad names", () => {
  const root = getDefaultHermesRoot();
  assert.equal(getProfileHome("default"), root);
  assert.equal(getProfileHome(""), root);
  assert.equal(getProfileHome("coder"), join(root, "profiles", "coder"));
  for (const bad of ["../x", "a/b", ".hidden", "a..b", "-x", "a b"]) {
    assert.throws(() => getProfileHome(bad), RangeError, bad);
  }
});

Deno.test("getHermesHome() uses HERMES_HOME, trimmed, and re-reads it on every call", async () => {
  await withTempDir(async (dir) => {
    const source = `import { getHermesHome } from ${
      JSON.stringify(srcUrl("profile/hermes_home.ts"))
    };
const first = getHermesHome();
Deno.env.set("HERMES_HOME", "/srv/changed");
console.log(JSON.stringify([first, getHermesHome()]));
`;
    const result = await runDenoChild(dir, source, {
      flags: ["--allow-env", `--allow-read=${dir}`],
      env: { HERMES_HOME: `  ${dir}/home  ` },
    });
    assert.equal(result.code, 0, result.stderr);
    assert.deepEqual(JSON.parse(result.stdout), [
      join(dir, "home"),
      "/srv/changed",
    ]);
  });
});

Deno.test({
  name: "getHermesHome() falls back to ~/.hermes plus HERMES_DATA_DIR_SUFFIX",
  ignore: Deno.build.os === "windows",
  fn: async () => {
    await withTempDir(async (dir) => {
      const result = await runDenoChild(dir, REPORT, {
        flags: ["--allow-env", `--allow-read=${dir}`],
        env: { HERMES_HOME: "   ", HOME: dir, HERMES_DATA_DIR_SUFFIX: "-dev" },
      });
      assert.equal(result.code, 0, result.stderr);
      const { first, second } = JSON.parse(result.stdout);
      assert.deepEqual(first, second);
      assert.equal(first.home, join(dir, ".hermes-dev"));
      assert.equal(first.process, join(dir, ".hermes-dev"));
      assert.equal(first.coder, join(dir, ".hermes-dev", "profiles", "coder"));
      assert.equal(result.stderr, "");
    });
  },
});

Deno.test({
  name:
    "getHermesHome() warns once when active_profile names a profile HERMES_HOME does not select",
  ignore: Deno.build.os === "windows",
  fn: async () => {
    await withTempDir(async (dir) => {
      await Deno.mkdir(join(dir, ".hermes"));
      await Deno.writeTextFile(
        join(dir, ".hermes", "active_profile"),
        "coder\n",
      );
      const result = await runDenoChild(dir, REPORT, {
        flags: ["--allow-env", `--allow-read=${dir}`],
        env: { HERMES_HOME: "", HOME: dir, HERMES_DATA_DIR_SUFFIX: "" },
      });
      assert.equal(result.code, 0, result.stderr);
      assert.equal(JSON.parse(result.stdout).first.home, join(dir, ".hermes"));
      const warnings = result.stderr.split("\n").filter((l) =>
        l.includes("active_profile")
      );
      assert.equal(warnings.length, 1, result.stderr);
      assert.match(warnings[0]!, /'coder'/);
      assert.ok(
        warnings[0]!.includes(join(dir, ".hermes", "profiles", "coder")),
      );
    });
  },
});

Deno.test("getHermesHome() works with only HERMES_HOME readable", async () => {
  await withTempDir(async (dir) => {
    const result = await runDenoChild(
      dir,
      REPORT.replace(/\s+root:.*\n\s+coder:.*\n/, "\n"),
      {
        flags: ["--allow-env=HERMES_HOME"],
        env: { HERMES_HOME: join(dir, "narrow") },
      },
    );
    assert.equal(result.code, 0, result.stderr);
    assert.equal(JSON.parse(result.stdout).first.home, join(dir, "narrow"));
  });
});
