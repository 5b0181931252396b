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

const ATOMIC_WRITE_URL =
  new URL("../../src/io/atomic_write.ts", import.meta.url)
    .href;

function tempFilesOf(dir: string, name: string): string[] {
  return [...Deno.readDirSync(dir)].map((e) => e.name).filter((n) =>
    n.startsWith(`.${name}.tmp`)
  );
}

Deno.test({
  name:
    "atomicWriteText() after 15 SIGKILLs mid-write: the file is always whole and the next write removes every leftover temp file",
  ignore: !POSIX,
  fn: async () => {
    await withTempDir(async (dir) => {
      const target = join(dir, "settings.json");
      const script = join(dir, "writer.ts");
      // Each write is ~2 MB of JSON, so a kill lands mid-write.
      await Deno.writeTextFile(
        script,
        `import { atomicJsonWrite } from ${JSON.stringify(ATOMIC_WRITE_URL)};
const path = Deno.args[0];
const big = "x".repeat(2 * 1024 * 1024);
for (let i = 0; ; i++) await atomicJsonWrite(path, { i, big }, { mode: 0o600 });
`,
      );
      await atomicJsonWrite(target, { i: -1 });
      let orphansSeen = 0;
      for (let kill = 0; kill < 15; kill++) {
        const child = new Deno.Command(Deno.execPath(), {
          args: [
            "run",
            "--no-config",
            "--no-prompt",
            `--allow-read=${dir}`,
            `--allow-write=${dir}`,
            script,
            target,
          ],
          stdout: "null",
          stderr: "null",
        }).spawn();
        const before = new Set(tempFilesOf(dir, "settings.json"));
        const deadline = Date.now() + 20_000;
        // Kill as soon as this child has a temp file open.
        while (
          Date.now() < deadline &&
          tempFilesOf(dir, "settings.json").every((n) => before.has(n))
        ) await new Promise((r) => setTimeout(r, 1));
        child.kill("SIGKILL");
        assert.equal((await child.status).signal, "SIGKILL");
        // The file is always a whole version.
        const value = JSON.parse(await Deno.readTextFile(target));
        assert.equal(typeof value.i, "number");
        orphansSeen = Math.max(
          orphansSeen,
          tempFilesOf(dir, "settings.json").length,
        );
      }
      // The children cleaned up after each other while alive; at least one
      // leftover exists now (the last child was killed mid-write).
      assert.ok(orphansSeen >= 1, "no kill landed mid-write");
      await atomicJsonWrite(target, { i: "done" });
      assert.deepEqual(tempFilesOf(dir, "settings.json"), []);
      assert.deepEqual(await readJsonOrEmpty(target), { i: "done" });
    });
  },
});

Deno.test({
  name:
    "atomicWriteText() keeps the temp file of a write still running and removes leftovers of killed ones",
  ignore: !POSIX,
  fn: async () => {
    await withTempDir(async (dir) => {
      const target = join(dir, "a.txt");
      // A write in progress elsewhere holds the lock on its temp file.
      const live = join(dir, ".a.txt.tmp.4242.0123abcd");
      const handle = await Deno.open(live, { write: true, create: true });
      await handle.lock(true);
      // Leftovers of killed writers hold no lock (this and earlier versions).
      await Deno.writeTextFile(
        join(dir, ".a.txt.tmp.4243.89abcdef"),
        "partial",
      );
      await Deno.writeTextFile(join(dir, ".a.txt.tmp-89abcdef"), "partial");
      // Files of other targets are never touched.
      await Deno.writeTextFile(join(dir, ".b.txt.tmp.1.0123abcd"), "partial");
      await atomicWriteText(target, "whole");
      handle.close();
      const names = [...Deno.readDirSync(dir)].map((e) => e.name).sort();
      assert.deepEqual(names, [
        ".a.txt.tmp.4242.0123abcd",
        ".b.txt.tmp.1.0123abcd",
        "a.txt",
      ]);
      assert.equal(await Deno.readTextFile(target), "whole");
    });
  },
});
