// A library host for the supervision tests (tests/sandbox/supervision_test.ts),
// run with only --allow-read --allow-write --allow-env --allow-run. It talks
// to the test on stdout, one line per event, so the test can SIGKILL the
// provider's process (the pid it reports) at the moment it wants:
//
//   PID <pid> TURN <k>      after syncAll of turn k returned
//   PID <pid> CHECKPOINT    just before a required checkpoint is asked
//   DONE <json>             after close(): what the host saw
//
// Modes:
//   turns <default|durable> <turns> <gap ms> <checkpoint 0|1>
//       openMemory on $HERMES_HOME; turns "Question k"/"Answer k"; then a
//       required checkpoint holding two messages no turn stored
//   die <turns>
//       loadMemoryProvider("relay") on $HERMES_HOME: turns 1–3 made durable,
//       then its code is replaced by $BROKEN_SOURCE and its process killed;
//       turns 4–<turns> are accepted while every start fails
//   gateway <cap> <rounds> <home>…
//       one manager per profile under the live cap; each round every profile
//       takes a turn at once (a burst)
import {
  loadConfig,
  MemoryManager,
  openMemory,
  withHermesHome,
} from "@hermes/memory";
import { liveProviderCount, loadMemoryProvider } from "@hermes/memory/plugins";
import { setLogger } from "@hermes/memory";

const [mode, ...rest] = Deno.args as [string, ...string[]];
const warnings: string[] = [];
setLogger({
  log(level, message) {
    if (level === "warn" || level === "error") warnings.push(message);
  },
});
const say = (line: string) => console.log(line);
const pidOf = (p: unknown) => (p as { pid?: number } | null)?.pid ?? 0;
const out: Record<string, unknown> = {};

if (mode === "turns") {
  const [durability, turnsArg, gapArg, checkpoint] = rest as string[];
  const opened = await openMemory({ sessionId: "s1" });
  const manager = opened.manager;
  const provider = manager.getProvider("honcho");
  const flushed: boolean[] = [];
  for (let turn = 1; turn <= Number(turnsArg); turn++) {
    manager.syncAll(`Question ${turn}`, `Answer ${turn}`, { sessionId: "s1" });
    say(`PID ${pidOf(provider)} TURN ${turn}`);
    if (durability === "durable") flushed.push(await manager.flushPending());
    await new Promise((resolve) => setTimeout(resolve, Number(gapArg)));
  }
  if (checkpoint === "1") {
    say(`PID ${pidOf(provider)} CHECKPOINT`);
    const messages = [
      { role: "user", content: "Extra question" },
      { role: "assistant", content: "Extra answer" },
    ];
    // A delivery the kill interrupted may still land until its request
    // timeout: Honcho then says to retry later, as an agent would.
    for (let attempt = 0; attempt < 4; attempt++) {
      try {
        await manager.onPreCompress(messages, {
          requireCheckpoint: true,
          evidenceMessages: messages,
        });
        out.checkpoint = "ok";
        break;
      } catch (error) {
        out.checkpoint = String(error);
        if (!/retry the checkpoint later/.test(out.checkpoint as string)) break;
        await new Promise((resolve) => setTimeout(resolve, 2000));
      }
    }
  }
  out.flushed = flushed;
  out.flushedAtEnd = await manager.flushPending();
  await opened.close();
  out.drain = manager.shutdownDrainState;
} else if (mode === "die" || mode === "deliver") {
  const config = await loadConfig();
  const manager = new MemoryManager({ config });
  const provider = await loadMemoryProvider("relay", { config });
  if (provider === null) throw new Error("relay did not load");
  await manager.addProvider(provider);
  await manager.initializeAll("s1", { platform: "cli" });
  if (mode === "die") {
    for (let turn = 1; turn <= Number(rest[0]); turn++) {
      manager.syncAll(`Question ${turn}`, `Answer ${turn}`, {
        sessionId: "s1",
      });
      if (turn === 3) {
        out.flushed = await manager.flushPending();
        const file = new URL(Deno.env.get("RELAY_MODULE")!, "file://");
        await Deno.writeTextFile(file, Deno.env.get("BROKEN_SOURCE")!);
        const pid = pidOf(provider);
        if (pid > 1) Deno.kill(pid, "SIGKILL");
      }
    }
    out.flushedAfter = await manager.flushPending(10_000);
    out.pending = (provider as unknown as { pendingWrites: number })
      .pendingWrites;
  }
  await manager.shutdownAll();
  out.drain = manager.shutdownDrainState;
} else if (mode === "gateway") {
  const [cap, rounds, ...homes] = rest as [string, string, ...string[]];
  const profiles = [];
  for (const home of homes) {
    profiles.push(
      await withHermesHome(home, async () => {
        const config = await loadConfig({ hermesHome: home });
        const manager = new MemoryManager({ config });
        const provider = await loadMemoryProvider("honcho", {
          config,
          hermesHome: home,
          maxLiveProviders: Number(cap),
        });
        return { manager, provider };
      }),
    );
  }
  out.liveAfterLoad = liveProviderCount();
  await Promise.all(
    profiles.map((p, i) =>
      withHermesHome(homes[i]!, async () => {
        await p.manager.addProvider(p.provider!);
        await p.manager.initializeAll("s1", { platform: "cli" });
      })
    ),
  );
  for (let round = 1; round <= Number(rounds); round++) {
    await Promise.all(
      profiles.map((p, i) =>
        withHermesHome(homes[i]!, async () => {
          p.manager.syncAll(`p${i} turn ${round}`, `p${i} reply ${round}`, {
            sessionId: "s1",
          });
          await p.manager.prefetchAll(`p${i} next ${round}`);
        })
      ),
    );
  }
  await Promise.all(
    profiles.map((p, i) =>
      withHermesHome(homes[i]!, () => p.manager.shutdownAll())
    ),
  );
  out.drain = profiles.map((p) => p.manager.shutdownDrainState);
}
out.warnings = warnings;
say(`DONE ${JSON.stringify(out)}`);
