// Every settings write is a locked read-merge-write: saveHonchoConfig (the
// provider's saveConfig, `hermes memory setup`), the `hermes honcho …`
// commands (writeHonchoFile), saveConfig (config.yaml) and saveEnvValue
// (.env), in one process and across processes, and a SIGKILL mid-write
// leaves a whole file and no temporary file after the next write.
import assert from "node:assert/strict";
import { join } from "node:path";
import { loadConfig } from "@hermes/memory";
import { loadEnvFile } from "../../src/profile/env_file.ts";
import { saveHonchoConfig } from "../../plugins/memory/honcho/config/file.ts";
import { spawnRepoScript } from "../helpers/deno_child.ts";
import { withHome } from "../helpers/test_home.ts";

const ROOT = new URL("../..", import.meta.url);
const url = (path: string): string => new URL(path, ROOT).href;

async function readJson(path: string): Promise<Record<string, unknown>> {
  return JSON.parse(await Deno.readTextFile(path));
}

/** Runs `source` in `count` child processes at once; fails on a non-zero exit. */
async function runChildren(
  home: string,
  source: string,
  count: number,
): Promise<void> {
  const script = join(home, `writer_${crypto.randomUUID().slice(0, 8)}.ts`);
  await Deno.writeTextFile(script, source);
  const outputs = await Promise.all(
    Array.from(
      { length: count },
      (_, n) => spawnRepoScript(script, [home, String(n)]).output(),
    ),
  );
  for (const output of outputs) {
    assert.equal(output.code, 0, new TextDecoder().decode(output.stderr));
  }
}

Deno.test("saveHonchoConfig(): 50 concurrent saves of distinct keys in one process keep all 50", async () => {
  await withHome(async (home) => {
    await Deno.writeTextFile(
      join(home, "honcho.json"),
      JSON.stringify({
        workspace: "mine",
        hosts: { hermes: { aiPeer: "me" } },
      }),
    );
    await Promise.all(
      Array.from(
        { length: 50 },
        (_, i) =>
          i % 2 === 0
            ? saveHonchoConfig({ [`root${i}`]: i }, home)
            : saveHonchoConfig({ [`host${i}`]: i }, home, {
              hostBlock: "hermes",
            }),
      ),
    );
    const saved = await readJson(join(home, "honcho.json"));
    const host = (saved.hosts as Record<string, Record<string, unknown>>)
      .hermes!;
    for (let i = 0; i < 50; i++) {
      if (i % 2 === 0) assert.equal(saved[`root${i}`], i, `root${i}`);
      else assert.equal(host[`host${i}`], i, `host${i}`);
    }
    assert.equal(saved.workspace, "mine");
    assert.equal(host.aiPeer, "me");
    assert.equal(
      (await Deno.stat(join(home, "honcho.json"))).mode! & 0o777,
      0o600,
    );
  });
});

Deno.test("honcho.json: two processes saving 60 keys each (saveHonchoConfig beside the `hermes honcho` commands' writer) keep all 120", async () => {
  await withHome(async (home) => {
    await runChildren(
      home,
      `import { saveHonchoConfig } from ${
        JSON.stringify(url("plugins/memory/honcho/config/file.ts"))
      };
import { writeHonchoFile } from ${
        JSON.stringify(url("plugins/memory/honcho/cli/_common.ts"))
      };
const [home, n] = Deno.args;
const none = { configPath: home + "/honcho.json", configFileExists: false, configError: undefined, raw: {} };
for (let i = 0; i < 60; i++) {
  if (n === "0") await saveHonchoConfig({ ["a" + i]: i }, home, { hostBlock: "hermes" });
  else await writeHonchoFile(none, home, { host: { ["b" + i]: i }, hostKey: "hermes" });
}
`,
      2,
    );
    const host = (await readJson(join(home, "honcho.json"))).hosts as Record<
      string,
      Record<string, unknown>
    >;
    const keys = Object.keys(host.hermes!);
    assert.equal(keys.length, 120, `kept ${keys.length} of 120`);
  });
});

Deno.test("config.yaml and .env: two processes saving 40 keys each keep all 80", async () => {
  await withHome(async (home) => {
    await runChildren(
      home,
      `import { saveConfig, saveEnvValue } from ${
        JSON.stringify(url("mod.ts"))
      };
const [home, n] = Deno.args;
for (let i = 0; i < 40; i++) {
  await saveConfig({ memory: { ["k" + n + "_" + i]: i } }, { hermesHome: home });
  await saveEnvValue("K" + n + "_" + i, String(i), { hermesHome: home });
}
`,
      2,
    );
    const config = await loadConfig({ hermesHome: home });
    assert.equal(Object.keys(config.memory as object).length, 80);
    const env = await loadEnvFile(join(home, ".env"));
    assert.equal(Object.keys(env).length, 80);
    assert.equal((await Deno.stat(join(home, ".env"))).mode! & 0o777, 0o600);
  });
});

Deno.test({
  name:
    "saveHonchoConfig() killed 10 times mid-save: honcho.json always parses, no save that finished is lost, no temp file stays",
  ignore: Deno.build.os === "windows",
  fn: async () => {
    await withHome(async (home) => {
      const script = join(home, "saver.ts");
      await Deno.writeTextFile(
        script,
        `import { saveHonchoConfig } from ${
          JSON.stringify(url("plugins/memory/honcho/config/file.ts"))
        };
const [home, n] = Deno.args;
const pad = "p".repeat(512 * 1024);
await saveHonchoConfig({ ["done" + n]: true, pad }, home);
console.log("saved");
for (let i = 0; ; i++) await saveHonchoConfig({ ["loop" + n]: i, pad }, home);
`,
      );
      const tempFiles = (): string[] =>
        [...Deno.readDirSync(home)].map((e) => e.name).filter((name) =>
          name.startsWith(".honcho.json.tmp")
        );
      for (let n = 0; n < 10; n++) {
        const child = spawnRepoScript(script, [home, String(n)], {
          stderr: "null",
        });
        const reader = child.stdout.getReader();
        await reader.read(); // "saved"
        reader.releaseLock();
        const deadline = Date.now() + 10_000;
        while (tempFiles().length === 0 && Date.now() < deadline) {
          await new Promise((r) => setTimeout(r, 1));
        }
        child.kill("SIGKILL");
        await child.status;
        await child.stdout.cancel();
        const saved = await readJson(join(home, "honcho.json"));
        for (let done = 0; done <= n; done++) {
          assert.equal(
            saved[`done${done}`],
            true,
            `done${done} after kill ${n}`,
          );
        }
      }
      await saveHonchoConfig({ last: true }, home);
      assert.deepEqual(tempFiles(), []);
      const saved = await readJson(join(home, "honcho.json"));
      assert.equal(saved.last, true);
      assert.equal(
        Object.keys(saved).filter((k) => k.startsWith("done")).length,
        10,
      );
    });
  },
});
