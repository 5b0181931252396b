// The launcher's read recorder: a cached grant is reused only while every
// read its computation made answers the same.
import assert from "node:assert/strict";
import { join } from "node:path";
import { recordReads, unchanged } from "../../src/launcher/input_record.ts";

async function withDir(fn: (dir: string) => Promise<void>): Promise<void> {
  const dir = await Deno.makeTempDir({ prefix: "hermes-record-" });
  try {
    await fn(dir);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

Deno.test("recordReads sees file, directory, stat and environment reads, and unchanged() any change to them", async () => {
  await withDir(async (dir) => {
    const config = join(dir, "config.yaml");
    await Deno.writeTextFile(config, "memory:\n  provider: honcho\n");
    await Deno.mkdir(join(dir, "plugins"));
    const { result, observations, digest } = await recordReads(async () => {
      const text = await Deno.readTextFile(config);
      const names = [...Deno.readDirSync(join(dir, "plugins"))].length;
      let missing = false;
      try {
        Deno.statSync(join(dir, "honcho.json"));
      } catch {
        missing = true;
      }
      return { text, names, missing, home: Deno.env.get("HOME") };
    });
    assert.equal(result.names, 0);
    assert.equal(result.missing, true);
    assert.deepEqual(observations.map((o) => o.op).sort(), [
      "env",
      "read",
      "readdir",
      "stat",
    ]);
    // Hashes only: neither the file's text nor the variable's value.
    assert.doesNotMatch(JSON.stringify(observations), /provider|honcho\n/);
    assert.ok(!JSON.stringify(observations).includes(result.home ?? "\0"));
    assert.equal(await unchanged(observations, digest), true);

    await Deno.writeTextFile(config, "memory:\n  provider: archive\n");
    assert.equal(await unchanged(observations, digest), false);
    await Deno.writeTextFile(config, "memory:\n  provider: honcho\n");
    assert.equal(await unchanged(observations, digest), true);

    await Deno.mkdir(join(dir, "plugins", "notes"));
    assert.equal(await unchanged(observations, digest), false);
    await Deno.remove(join(dir, "plugins", "notes"));

    await Deno.writeTextFile(join(dir, "honcho.json"), "{}");
    assert.equal(await unchanged(observations, digest), false);
    await Deno.remove(join(dir, "honcho.json"));
    assert.equal(await unchanged(observations, digest), true);
  });
});

Deno.test("recordReads puts the Deno namespace back, also when the computation throws", async () => {
  const before = Deno.readTextFile;
  const envGet = Deno.env.get;
  await assert.rejects(
    recordReads(() => Promise.reject(new Error("boom"))),
    /boom/,
  );
  assert.equal(Deno.readTextFile, before);
  assert.equal(Deno.env.get, envGet);
});
