// A full disk, for real: each test mounts a small tmpfs (the suite runs as
// root on the CI machines; elsewhere the tests are skipped, saying why),
// fills it, and checks what the user sees. Settings writes fail naming the
// file and saying the previous one is kept (before: only "No space left on
// device"); an outbox that itself filled the disk still delivers every
// message once and shrinks (before: "delivered 0", because recording a
// delivery needs an append). Counted on the Honcho test server.
import assert from "node:assert/strict";
import { join } from "node:path";
import { loadConfig, saveConfig } from "@hermes/memory";
import { saveEnvValue } from "../../src/profile/env_file.ts";
import { saveHonchoConfig } from "../../plugins/memory/honcho/config/file.ts";
import { HonchoClient } from "../../plugins/memory/honcho/client/client.ts";
import {
  HonchoOutbox,
  OUTBOX_ID_METADATA_KEY,
} from "../../plugins/memory/honcho/outbox/outbox.ts";
import { startHonchoTestServer } from "../honcho_server.ts";
import { hermes, testUser } from "../helpers/honcho_cli.ts";
import { captureLogs } from "../fixtures/honcho_provider_harness.ts";

function run(cmd: string, args: string[]): boolean {
  try {
    return new Deno.Command(cmd, { args, stdout: "null", stderr: "null" })
      .outputSync().success;
  } catch {
    return false;
  }
}

/** Why the tests cannot run here, or `undefined` when a tmpfs mounts. */
const skipReason = ((): string | undefined => {
  if (Deno.build.os !== "linux") return "tmpfs mounts need Linux";
  const probe = Deno.makeTempDirSync({ prefix: "tmpfs-probe-" });
  try {
    if (!run("mount", ["-t", "tmpfs", "-o", "size=64k", "tmpfs", probe])) {
      return "this user may not mount a tmpfs (needs root)";
    }
    run("umount", [probe]);
    return undefined;
  } finally {
    Deno.removeSync(probe, { recursive: true });
  }
})();
if (skipReason) {
  console.warn(`disk_full_test.ts skipped: ${skipReason}`);
}

async function withTmpfs(
  size: string,
  fn: (dir: string) => Promise<void>,
  dir?: string,
): Promise<void> {
  const mount = dir ?? await Deno.makeTempDir({ prefix: "disk-full-" });
  await Deno.mkdir(mount, { recursive: true });
  assert.ok(
    run("mount", ["-t", "tmpfs", "-o", `size=${size}`, "tmpfs", mount]),
  );
  try {
    await fn(mount);
  } finally {
    run("umount", ["-l", mount]);
    if (dir === undefined) await Deno.remove(mount, { recursive: true });
  }
}

/** Writes filler until the disk refuses one more byte. */
async function fillDisk(dir: string): Promise<void> {
  const file = await Deno.open(join(dir, "filler"), {
    write: true,
    create: true,
    append: true,
  });
  try {
    for (const size of [65536, 4096, 512, 1]) {
      for (;;) {
        try {
          await file.write(new Uint8Array(size));
        } catch {
          break;
        }
      }
    }
  } finally {
    file.close();
  }
}

Deno.test({
  name: "disk full: settings writes name the file and keep the previous one",
  ignore: skipReason !== undefined,
  fn: () =>
    withTmpfs("256k", async (home) => {
      const honcho = join(home, "honcho.json");
      await Deno.writeTextFile(honcho, '{"workspace":"mine"}\n');
      await Deno.writeTextFile(join(home, "config.yaml"), "model: gpt\n");
      await Deno.writeTextFile(join(home, ".env"), "A=1\n");
      await fillDisk(home);
      const big = "x".repeat(8192);
      await assert.rejects(
        () => saveHonchoConfig({ note: big }, home),
        (error: Error) => {
          assert.ok(error.message.includes(honcho), error.message);
          assert.match(error.message, /no space left on device/);
          assert.match(error.message, /previous .* is kept unchanged/);
          return true;
        },
      );
      await assert.rejects(
        () => saveConfig({ note: big }, { hermesHome: home }),
        (error: Error) =>
          error.message.includes(join(home, "config.yaml")) &&
          /kept unchanged/.test(error.message),
      );
      await assert.rejects(
        () => saveEnvValue("NOTE", big, { hermesHome: home }),
        (error: Error) =>
          error.message.includes(join(home, ".env")) &&
          /kept unchanged/.test(error.message),
      );
      assert.equal(await Deno.readTextFile(honcho), '{"workspace":"mine"}\n');
      assert.deepEqual(await loadConfig({ hermesHome: home }), {
        model: "gpt",
      });
      assert.equal(await Deno.readTextFile(join(home, ".env")), "A=1\n");
      const leftovers = [...Deno.readDirSync(home)].map((e) => e.name)
        .filter((name) => name.includes(".tmp."));
      assert.deepEqual(leftovers, []);
    }),
});

Deno.test({
  name:
    "disk full: `hermes honcho mode` names honcho.json and says it was kept",
  ignore: skipReason !== undefined,
  fn: async () => {
    await using user = await testUser();
    const before = "memory:\n  provider: honcho\n";
    await withTmpfs("128k", async (root) => {
      await Deno.writeTextFile(join(root, "config.yaml"), before);
      await Deno.writeTextFile(
        join(root, "honcho.json"),
        JSON.stringify({ hosts: { hermes: { recallMode: "hybrid" } } }),
        { mode: 0o600 },
      );
      await fillDisk(root);
      await Deno.remove(join(root, "filler")).catch(() => {});
      // Leave a few bytes: not enough for the new file.
      await Deno.writeFile(
        join(root, "filler"),
        new Uint8Array(
          Math.max(0, 128 * 1024 - 8 * 1024),
        ),
      ).catch(() => {});
      await fillDisk(root);
      const result = await hermes(user, ["honcho", "mode", "tools"]);
      assert.notEqual(result.code, 0, result.out);
      assert.ok(
        result.err.includes(join(root, "honcho.json")),
        result.err,
      );
      assert.match(result.err, /no space left on device/);
      assert.match(result.err, /kept unchanged/);
      assert.match(
        await Deno.readTextFile(join(root, "honcho.json")),
        /"recallMode":"hybrid"/,
      );
    }, user.root);
  },
});

Deno.test({
  name:
    "disk full: an outbox that filled the disk still delivers every message once and shrinks",
  ignore: skipReason !== undefined,
  fn: async () => {
    await using server = await startHonchoTestServer();
    const logs = captureLogs();
    try {
      await withTmpfs("1m", async (home) => {
        const outbox = new HonchoOutbox({ workspace: "ws", hermesHome: home });
        const accepted: string[] = [];
        let full: unknown;
        for (let i = 0; full === undefined && i < 2000; i++) {
          try {
            const result = await outbox.append([{
              session: `s${i % 3}`,
              peer: "alice",
              content: `message ${i} ${"y".repeat(2000)}`,
            }]);
            accepted.push(...result.accepted);
            if (result.rejected > 0) break;
          } catch (error) {
            full = error;
          }
        }
        assert.ok(full instanceof Error, "the outbox never filled the disk");
        assert.ok(full.message.includes(outbox.path), full.message);
        assert.match(full.message, /kept/);
        await fillDisk(home);
        const queued = (await outbox.stats()).pending;
        assert.equal(queued, accepted.length);
        const client = new HonchoClient({
          workspaceId: "ws",
          baseUrl: server.url,
          sleep: () => Promise.resolve(),
        });
        const result = await outbox.deliver(client);
        assert.equal(result.pending, 0, JSON.stringify(result));
        const stored = server.state.messages.map((m) =>
          String(m.metadata[OUTBOX_ID_METADATA_KEY])
        );
        assert.equal(new Set(stored).size, stored.length, "stored twice");
        assert.deepEqual(stored.slice().sort(), accepted.slice().sort());
        // Shrunk to its header: the disk has room again.
        assert.ok((await Deno.stat(outbox.path)).size < 200);
        await outbox.append([{ session: "s0", peer: "alice", content: "ok" }]);
      });
    } finally {
      logs.restore();
    }
  },
});
