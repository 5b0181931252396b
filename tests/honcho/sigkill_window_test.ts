// The window between `syncAll` returning and the turn being on disk,
// measured under SIGKILL of a library host (MemoryManager + the Honcho
// provider): the host runs N turns, prints SYNCED after the last syncAll
// returned, and is killed at once; a restart delivers what its outbox kept.
// Counted on the Honcho test server: lost = sent − stored, duplicates =
// stored − distinct. With `await manager.flushPending()` after each turn
// (the durable mode) nothing may be lost; by default at most the documented
// window (docs/durability.md) may be.
import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import {
  type HonchoTestServer,
  startHonchoTestServer,
} from "../honcho_server.ts";
import {
  makeProfile,
  removeHome,
  startProvider,
} from "../fixtures/honcho_provider_harness.ts";

const TURNS = 40;
/**
 * The documented bound of the default mode (docs/durability.md): a turn
 * whose syncAll returned this long before the kill is on disk. One group
 * commit (an fdatasync) plus the manager's queue hop takes milliseconds
 * idle; the bound leaves room for a loaded machine.
 */
const DEFAULT_WINDOW_MS = 1_000;

async function killedRun(
  server: HonchoTestServer,
  mode: "default" | "durable",
  gapMs = 0,
): Promise<{ lost: number; duplicates: number; windowMs: number }> {
  // A 3 s request timeout: a delivery the kill interrupts may land until
  // then (plus a 100 ms grace), so the restart's session-end flush (10 s)
  // can look it up and resend it; at the 30 s default it could not.
  const home = await makeProfile(server, {
    config: { recallMode: "tools", writeFrequency: "turn", timeout: 3 },
  });
  try {
    const child = new Deno.Command(Deno.execPath(), {
      args: [
        "run",
        "--quiet",
        "--no-prompt",
        "--frozen",
        `--config=${
          fileURLToPath(new URL("../../deno.json", import.meta.url))
        }`,
        "--allow-read",
        "--allow-write",
        "--allow-env",
        "--allow-net=127.0.0.1",
        fileURLToPath(
          new URL("../fixtures/honcho_sigkill_host.ts", import.meta.url),
        ),
        home,
        String(TURNS),
        mode,
        String(gapMs),
      ],
      env: { NO_COLOR: "1" },
      stdout: "piped",
      stderr: "piped",
    }).spawn();
    const reader = child.stdout.pipeThrough(new TextDecoderStream())
      .getReader();
    let said = "";
    while (!/SYNCED .*\n/.test(said)) {
      const { value, done } = await reader.read();
      if (done) break;
      said += value;
    }
    child.kill("SIGKILL");
    await child.status;
    reader.releaseLock();
    await child.stdout.cancel().catch(() => {});
    await child.stderr.cancel().catch(() => {});
    assert.match(said, /SYNCED/);
    // Restart on the same home: the outbox delivers what was kept.
    const provider = await startProvider(home);
    try {
      await provider.onSessionEnd([]);
    } finally {
      await provider.shutdown();
    }
    const contents = server.state.messages.map((m) => m.content);
    const distinct = new Set(contents);
    // How long before the kill the oldest lost turn's syncAll returned.
    const ages: number[] = JSON.parse(said.match(/SYNCED (.*)\n/)![1]!);
    let windowMs = 0;
    for (let turn = 1; turn <= TURNS; turn++) {
      if (
        !distinct.has(`Question ${turn}`) || !distinct.has(`Answer ${turn}`)
      ) windowMs = Math.max(windowMs, ages[turn - 1]!);
    }
    return {
      lost: TURNS * 2 - distinct.size,
      duplicates: contents.length - distinct.size,
      windowMs,
    };
  } finally {
    await removeHome(home);
  }
}

Deno.test("SIGKILL right after syncAll returns: the durable mode (await manager.flushPending()) loses nothing", async () => {
  await using server = await startHonchoTestServer();
  const { lost, duplicates } = await killedRun(server, "durable");
  assert.deepEqual({ lost, duplicates }, { lost: 0, duplicates: 0 });
});

Deno.test("SIGKILL right after syncAll returns: the default mode loses only turns handed over within the documented window", async () => {
  await using server = await startHonchoTestServer();
  // A turn every 2 ms: far faster than an agent talks to a model.
  const { lost, duplicates, windowMs } = await killedRun(
    server,
    "default",
    2,
  );
  console.log(
    `default mode: lost ${lost} of ${
      TURNS * 2
    } messages; the oldest lost turn's syncAll returned ${
      windowMs.toFixed(1)
    } ms before the kill`,
  );
  assert.equal(duplicates, 0);
  assert.ok(
    windowMs <= DEFAULT_WINDOW_MS,
    `a turn handed over ${windowMs} ms before the kill was lost`,
  );
});
