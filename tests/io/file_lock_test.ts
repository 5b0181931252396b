import assert from "node:assert/strict";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { withFileLock } from "../../src/io/file_lock.ts";

const FILE_LOCK_URL =
  new URL("../../src/io/file_lock.ts", import.meta.url).href;

async function withTempDir(fn: (dir: string) => Promise<void>): Promise<void> {
  const dir = await Deno.makeTempDir();
  try {
    await fn(dir);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

async function increment(counter: string): Promise<void> {
  const n = Number(await Deno.readTextFile(counter));
  // Yield between read and write so an unlocked race would lose updates.
  await new Promise((r) => setTimeout(r, 0));
  await Deno.writeTextFile(counter, String(n + 1));
}

Deno.test("withFileLock() serializes concurrent callers in one process", async () => {
  await withTempDir(async (dir) => {
    const counter = join(dir, "counter.txt");
    await Deno.writeTextFile(counter, "0");
    await Promise.all(
      Array.from(
        { length: 40 },
        () => withFileLock(`${counter}.lock`, () => increment(counter)),
      ),
    );
    assert.equal(await Deno.readTextFile(counter), "40");
  });
});

Deno.test("withFileLock() releases the lock when the critical section throws", async () => {
  await withTempDir(async (dir) => {
    const lock = join(dir, "sub", "x.lock");
    await assert.rejects(
      withFileLock(lock, () => Promise.reject(new Error("boom"))),
      /boom/,
    );
    assert.equal(await withFileLock(lock, () => Promise.resolve(7)), 7);
    if (Deno.build.os !== "windows") {
      assert.equal((await Deno.stat(lock)).mode! & 0o777, 0o600);
    }
  });
});

Deno.test("withFileLock() never loses an update between two processes", async () => {
  await withTempDir(async (dir) => {
    const counter = join(dir, "counter.txt");
    await Deno.writeTextFile(counter, "0");
    const script = join(dir, "worker.ts");
    await Deno.writeTextFile(
      script,
      `import { withFileLock } from ${JSON.stringify(FILE_LOCK_URL)};
const counter = Deno.args[0];
for (let i = 0; i < 50; i++) {
  await withFileLock(counter + ".lock", async () => {
    const n = Number(await Deno.readTextFile(counter));
    await new Promise((r) => setTimeout(r, 0));
    await Deno.writeTextFile(counter, String(n + 1));
  });
}
`,
    );
    const run = () =>
      new Deno.Command(Deno.execPath(), {
        args: [
          "run",
          "--no-config",
          "--no-prompt",
          `--allow-read=${dir}`,
          `--allow-write=${dir}`,
          pathToFileURL(script).href,
          counter,
        ],
        stdout: "piped",
        stderr: "piped",
      }).output();
    const results = await Promise.all([run(), run()]);
    for (const result of results) {
      assert.equal(
        result.code,
        0,
        new TextDecoder().decode(result.stderr),
      );
    }
    assert.equal(await Deno.readTextFile(counter), "100");
  });
});
