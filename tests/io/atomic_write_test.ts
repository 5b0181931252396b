import assert from "node:assert/strict";
import { join } from "node:path";
import {
  atomicJsonWrite,
  atomicWriteText,
  readJsonOrEmpty,
} from "../../src/io/atomic_write.ts";

const POSIX = Deno.build.os !== "windows";

async function withTempDir(fn: (dir: string) => Promise<void>): Promise<void> {
  const dir = await Deno.makeTempDir();
  try {
    await fn(dir);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

Deno.test("atomicWriteText() creates a file and replaces its content", async () => {
  await withTempDir(async (dir) => {
    const path = join(dir, "a.txt");
    await atomicWriteText(path, "one");
    assert.equal(await Deno.readTextFile(path), "one");
    await atomicWriteText(path, "two");
    assert.equal(await Deno.readTextFile(path), "two");
    // No temp files are left behind.
    const names = [];
    for await (const entry of Deno.readDir(dir)) names.push(entry.name);
    assert.deepEqual(names, ["a.txt"]);
  });
});

Deno.test({
  name: "atomicWriteText() keeps the mode of an existing file",
  ignore: !POSIX,
  fn: async () => {
    await withTempDir(async (dir) => {
      const path = join(dir, "a.txt");
      await Deno.writeTextFile(path, "old");
      await Deno.chmod(path, 0o640);
      await atomicWriteText(path, "new");
      assert.equal((await Deno.stat(path)).mode! & 0o777, 0o640);
    });
  },
});

Deno.test({
  name: "atomicWriteText() applies mode 0600 when asked, also to a new file",
  ignore: !POSIX,
  fn: async () => {
    await withTempDir(async (dir) => {
      const fresh = join(dir, "fresh.json");
      await atomicWriteText(fresh, "{}", { mode: 0o600 });
      assert.equal((await Deno.stat(fresh)).mode! & 0o777, 0o600);
      const old = join(dir, "old.json");
      await Deno.writeTextFile(old, "{}", { mode: 0o644 });
      await Deno.chmod(old, 0o644);
      await atomicWriteText(old, "{}", { mode: 0o600 });
      assert.equal((await Deno.stat(old)).mode! & 0o777, 0o600);
    });
  },
});

Deno.test({
  name: "atomicWriteText() writes through a symlink and keeps the link",
  ignore: !POSIX,
  fn: async () => {
    await withTempDir(async (dir) => {
      const real = join(dir, "real.json");
      const link = join(dir, "link.json");
      await Deno.writeTextFile(real, "old");
      await Deno.symlink("real.json", link);
      await atomicWriteText(link, "new");
      assert.ok((await Deno.lstat(link)).isSymlink);
      assert.equal(await Deno.readTextFile(real), "new");

      const dangling = join(dir, "dangling.json");
      await Deno.symlink("target.json", dangling);
      await atomicWriteText(dangling, "created");
      assert.ok((await Deno.lstat(dangling)).isSymlink);
      assert.equal(
        await Deno.readTextFile(join(dir, "target.json")),
        "created",
      );
    });
  },
});

Deno.test("atomicWriteText() fails on a missing directory and leaves nothing", async () => {
  await withTempDir(async (dir) => {
    await assert.rejects(
      atomicWriteText(join(dir, "missing", "a.txt"), "x"),
      Deno.errors.NotFound,
    );
    const names = [];
    for await (const entry of Deno.readDir(dir)) names.push(entry.name);
    assert.deepEqual(names, []);
  });
});

Deno.test("atomicJsonWrite() writes indented UTF-8 JSON with a trailing newline", async () => {
  await withTempDir(async (dir) => {
    const path = join(dir, "honcho.json");
    await atomicJsonWrite(path, { peerName: "Zoë", hosts: { a: 1 } });
    assert.equal(
      await Deno.readTextFile(path),
      '{\n  "peerName": "Zoë",\n  "hosts": {\n    "a": 1\n  }\n}\n',
    );
  });
});

Deno.test("atomicJsonWrite() rejects a value with no JSON form", async () => {
  await withTempDir(async (dir) => {
    await assert.rejects(
      atomicJsonWrite(join(dir, "x.json"), undefined),
      TypeError,
    );
  });
});

Deno.test("readJsonOrEmpty() returns {} for missing, malformed and non-object files", async () => {
  await withTempDir(async (dir) => {
    assert.deepEqual(await readJsonOrEmpty(join(dir, "missing.json")), {});
    const cases = ["{broken", "[1,2]", "null", '"text"', "42", ""];
    for (const [i, text] of cases.entries()) {
      const path = join(dir, `c${i}.json`);
      await Deno.writeTextFile(path, text);
      assert.deepEqual(await readJsonOrEmpty(path), {}, text);
    }
    assert.deepEqual(await readJsonOrEmpty(dir), {});
  });
});

Deno.test("readJsonOrEmpty() reads an object, tolerating a byte-order mark", async () => {
  await withTempDir(async (dir) => {
    const path = join(dir, "bom.json");
    await Deno.writeTextFile(path, '\uFEFF{"apiKey": "k", "n": [1]}');
    assert.deepEqual(await readJsonOrEmpty(path), { apiKey: "k", n: [1] });
  });
});
