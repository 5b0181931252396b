// A library host as a Deno developer writes one, run in a child process
// started with only --allow-read --allow-write --allow-env --allow-run (no
// unstable flag, no --allow-net) and a deno.json without "unstable": it
// imports @hermes/memory, loads the configured provider from config.yaml,
// and serves the built-in memory beside it. Prints one JSON line.
//
//   deno run --allow-read --allow-write --allow-env --allow-run \
//     --config=<deno.json> library_host.ts <mode> [args…]
//
// Modes:
//   turns <user> <reply> …  one synced turn per pair, then shutdownAll()
//   tool <name>             calls a provider tool, then the memory tool
//   gateway <cap> <turns> <home>…  one manager per profile home, every
//                           provider under a live cap; each profile
//                           syncs <turns> turns in round-robin
import {
  BuiltinMemoryProvider,
  loadConfig,
  MemoryManager,
  setLogger,
  withHermesHome,
} from "@hermes/memory";
import { liveProviderCount, loadMemoryProvider } from "@hermes/memory/plugins";

const [mode, ...rest] = Deno.args as [string, ...string[]];
const warnings: string[] = [];
setLogger({
  log(level, message) {
    if (level === "warn" || level === "error") warnings.push(message);
  },
});

async function openProfile(hermesHome?: string, maxLiveProviders?: number) {
  const config = await loadConfig(hermesHome ? { hermesHome } : {});
  const manager = new MemoryManager({ config });
  const builtin = new BuiltinMemoryProvider({ config, hermesHome });
  await manager.addProvider(builtin);
  const name = (config.memory as { provider?: string } | undefined)?.provider;
  const external = name
    ? await loadMemoryProvider(name, {
      config,
      hermesHome,
      heapLimitMb: 64,
      unresponsiveAfterMs: 1000,
      ...(maxLiveProviders ? { maxLiveProviders } : {}) as Record<
        string,
        never
      >,
    })
    : null;
  if (external) await manager.addProvider(external);
  await manager.initializeAll("session-1", { platform: "cli" });
  return { manager, builtin, external };
}

const out: Record<string, unknown> = {};
if (mode === "gateway") {
  const [cap, turns, ...homes] = rest as [string, string, ...string[]];
  const profiles = [];
  for (const home of homes) {
    profiles.push(
      await withHermesHome(home, () => openProfile(home, Number(cap))),
    );
  }
  let maxLive = liveProviderCount();
  for (let turn = 1; turn <= Number(turns); turn++) {
    for (const [i, p] of profiles.entries()) {
      await withHermesHome(homes[i]!, async () => {
        await p.manager.onTurnStart(turn, `p${i} turn ${turn}`, {});
        p.manager.syncAll(`p${i} turn ${turn}`, `p${i} reply ${turn}`, {
          sessionId: "session-1",
        });
        await p.manager.flushPending();
      });
      maxLive = Math.max(maxLive, liveProviderCount());
    }
  }
  out.maxLive = maxLive;
  out.loaded = profiles.map((p) => p.external?.name ?? null);
  for (const [i, p] of profiles.entries()) {
    await withHermesHome(homes[i]!, () => p.manager.shutdownAll());
  }
  out.drain = profiles.map((p) => p.manager.shutdownDrainState);
} else {
  const { manager, builtin, external } = await openProfile();
  out.loaded = external?.name ?? null;
  if (mode === "turns") {
    for (let i = 0; i + 1 < rest.length; i += 2) {
      manager.syncAll(rest[i]!, rest[i + 1]!, { sessionId: "session-1" });
    }
  } else if (mode === "tool") {
    out.tool = await manager.handleToolCall(rest[0]!, {});
  }
  out.memory = JSON.parse(
    await builtin.handleMemoryTool({
      action: "add",
      target: "memory",
      content: "the kite is red",
    }),
  ).success;
  await manager.shutdownAll();
  out.drain = manager.shutdownDrainState;
}
out.warnings = warnings;
console.log(JSON.stringify(out));
