// A full disk never strands what is queued (issue 27 item 6): a 3,000-turn
// import into a 512 KiB profile home (a tmpfs mounted for the test; root
// only) while the Honcho test server answers normally, then
// `hermes honcho outbox flush`: nothing may stay queued, nothing may be
// stored twice, and the home must be writable again afterwards.
import assert from "node:assert/strict";
import { join } from "node:path";
import {
  HERMES_MAIN,
  hermesWithWorker,
  runFlags,
  testUser,
} from "../helpers/honcho_cli.ts";
import { denoDir } from "../helpers/deno_child.ts";
import { HonchoOutbox } from "../../plugins/memory/honcho/outbox/outbox.ts";
import { startHonchoTestServer } from "../honcho_server.ts";
import {
  makeProfile,
  serverSettled,
} from "../fixtures/honcho_provider_harness.ts";

const TURNS = 3_000;

async function mount(dir: string): Promise<string | undefined> {
  if (Deno.build.os !== "linux") return "tmpfs mounts need Linux";
  try {
    const out = await new Deno.Command("mount", {
      args: ["-t", "tmpfs", "-o", "size=512k", "tmpfs", dir],
      stdout: "null",
      stderr: "piped",
    }).output();
    if (out.success) return undefined;
    return `mount -t tmpfs failed (needs root): ${
      new TextDecoder().decode(out.stderr).trim()
    }`;
  } catch (error) {
    return `cannot run mount: ${error}`;
  }
}

async function umount(dir: string): Promise<void> {
  await new Deno.Command("umount", { args: [dir] }).output().catch(() => {});
}

// Decided once: the test needs a small filesystem of its own.
const probeDir = await Deno.makeTempDir({ prefix: "hermes-tmpfs-probe-" });
const cannot = await mount(probeDir);
if (cannot === undefined) await umount(probeDir);
await Deno.remove(probeDir).catch(() => {});

Deno.test({
  name: cannot === undefined
    ? "a 3,000-turn import fills a 512 KiB home; outbox flush then empties the outbox"
    : `a 3,000-turn import into a 512 KiB home (skipped: ${cannot})`,
  ignore: cannot !== undefined,
  async fn() {
    await using server = await startHonchoTestServer();
    await using user = await testUser();
    const home = user.root;
    assert.equal(await mount(home), undefined);
    try {
      const host = new URL(server.url).host;
      await Deno.writeTextFile(
        join(home, "config.yaml"),
        `memory:\n  provider: honcho\n  permissions:\n    honcho:\n      net: ["${host}"]\n`,
      );
      await makeProfile(server, {
        home,
        config: { recallMode: "tools", timeout: 2 },
      });
      const file = join(user.cwd, "chat.jsonl");
      const filler = "x".repeat(120);
      await Deno.writeTextFile(
        file,
        Array.from({ length: TURNS }, (_, i) =>
          [
            JSON.stringify({
              role: "user",
              content: `Question ${i + 1} ${filler}`,
            }),
            JSON.stringify({
              role: "assistant",
              content: `Answer ${i + 1} ${filler}`,
            }),
          ].join("\n")).join("\n") + "\n",
      );
      // The import may report that the disk refused turns (or still be
      // retrying them when it is stopped); what it queued must be
      // deliverable either way.
      const flags = runFlags(user).filter((f) => !f.startsWith("--allow-net"));
      const child = new Deno.Command(Deno.execPath(), {
        args: [
          ...flags,
          "--allow-net=127.0.0.1",
          HERMES_MAIN,
          "memory",
          "import",
          file,
        ],
        cwd: user.cwd,
        clearEnv: true,
        env: {
          HOME: user.home,
          PATH: "/usr/bin:/bin",
          DENO_DIR: denoDir(),
          NO_COLOR: "1",
        },
        stdout: "null",
        stderr: "null",
      }).spawn();
      const stop = setTimeout(() => child.kill("SIGTERM"), 120_000);
      await child.status;
      clearTimeout(stop);
      await serverSettled(server);
      const flush = await hermesWithWorker(user, ["honcho", "outbox", "flush"]);
      await serverSettled(server);
      const pending = await new HonchoOutbox({
        workspace: "ws",
        hermesHome: home,
      })
        .pending();
      // Before the fix: about 200 messages stayed queued, and every flush
      // failed to record its deliveries.
      assert.equal(pending.length, 0, `${flush.out}\n${flush.err}`);
      const seen = new Map<string, number>();
      for (const m of server.state.messages) {
        seen.set(m.content, (seen.get(m.content) ?? 0) + 1);
      }
      assert.ok(seen.size > 0, "nothing reached the server");
      assert.deepEqual([...seen.values()].filter((n) => n > 1), []);
      // The home takes writes again (the reserve did not eat the space).
      await Deno.writeTextFile(join(home, "probe.txt"), "x".repeat(8 * 1024));
      server.assertNoViolations();
    } finally {
      await umount(home);
    }
  },
});
