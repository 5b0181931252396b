// Two profiles served by one process (a multiplexing gateway): each
// provider instance is initialized and driven inside its own
// withHermesHome + withSecretScope, and their sessions, peers, API keys and
// outboxes never cross, including in background work.
import assert from "node:assert/strict";
import {
  setMultiplexActive,
  withHermesHome,
  withSecretScope,
} from "@hermes/memory";
import {
  type HonchoTestServer,
  startHonchoTestServer,
} from "../honcho_server.ts";
import {
  FAST,
  removeHome,
  ROUTES,
} from "../fixtures/honcho_provider_harness.ts";
import { HonchoMemoryProvider } from "../../plugins/memory/honcho/mod.ts";

interface Profile {
  name: "a" | "b";
  key: string;
  home: string;
  server: HonchoTestServer;
  provider: HonchoMemoryProvider;
  run<T>(fn: () => T): T;
}

Deno.test("HonchoMemoryProvider serves two profiles in one process without crossing sessions, peers, keys or outboxes", async () => {
  await using serverA = await startHonchoTestServer({
    apiKey: "key-for-alice-profile",
  });
  await using serverB = await startHonchoTestServer({
    apiKey: "key-for-bob-profile",
  });
  // Non-local host names (so the real key is sent, not the local
  // placeholder), routed to the two test servers by one shared fetch.
  const seen: { host: string; auth: string | null }[] = [];
  const targets: Record<string, string> = {
    "honcho-a.test": serverA.url,
    "honcho-b.test": serverB.url,
  };
  const routedFetch = (input: string, init: RequestInit): Promise<Response> => {
    const url = new URL(input);
    seen.push({
      host: url.hostname,
      auth: new Headers(init.headers).get("authorization"),
    });
    const target = new URL(targets[url.hostname]!);
    url.protocol = target.protocol;
    url.host = target.host;
    return fetch(url.href, init);
  };
  const profiles: Profile[] = [];
  for (
    const [name, key, server, peer] of [
      ["a", "key-for-alice-profile", serverA, "alice"],
      ["b", "key-for-bob-profile", serverB, "bob"],
    ] as const
  ) {
    const home = await Deno.makeTempDir({ prefix: `honcho_profile_${name}_` });
    await Deno.writeTextFile(
      `${home}/honcho.json`,
      JSON.stringify({
        baseUrl: `http://honcho-${name}.test`,
        workspace: `ws-${name}`,
        peerName: peer,
        aiPeer: `hermes-${name}`,
        sessionStrategy: "per-session",
        dialecticCadence: 1,
      }),
    );
    const provider = new HonchoMemoryProvider({
      ...FAST,
      transport: { ...FAST.transport, fetch: routedFetch },
    });
    profiles.push({
      name,
      key,
      home,
      server,
      provider,
      run: <T>(fn: () => T): T =>
        withHermesHome(
          home,
          () => withSecretScope({ HONCHO_API_KEY: key }, fn),
        ),
    });
  }
  setMultiplexActive(true);
  try {
    // Same Hermes session id on purpose: the profiles still never meet.
    for (const p of profiles) {
      await p.run(() =>
        p.provider.initialize("shared-session", { platform: "telegram" })
      );
    }
    for (let turn = 1; turn <= 4; turn++) {
      // Interleave: both prefetch, then both sync, then both queue.
      const queries = profiles.map((p) =>
        `Turn ${turn} from ${p.name}: tea or coffee?`
      );
      await Promise.all(
        profiles.map((p) =>
          p.run(() =>
            p.provider.onTurnStart(turn, queries[profiles.indexOf(p)]!, {})
          )
        ),
      );
      const injected = await Promise.all(
        profiles.map((p, i) =>
          p.run(() => p.provider.prefetch(queries[i]!, {}))
        ),
      );
      await Promise.all(
        profiles.map((p, i) =>
          p.run(() =>
            p.provider.syncTurn(queries[i]!, `Reply ${turn} for ${p.name}`, {})
          )
        ),
      );
      await Promise.all(
        profiles.map((p, i) =>
          p.run(() => p.provider.queuePrefetch(queries[i]!, {}))
        ),
      );
      await Promise.all(profiles.map((p) => p.provider.idle()));
      if (turn > 1) {
        assert.match(injected[0]!, /hermes-a on alice/);
        assert.match(injected[1]!, /hermes-b on bob/);
      }
      assert.doesNotMatch(injected[0]!, /\bbob\b|hermes-b/);
      assert.doesNotMatch(injected[1]!, /\balice\b|hermes-a/);
    }
    // A checkpoint and a memory write from each profile, too.
    for (const p of profiles) {
      await p.run(() =>
        p.provider.onPreCompress([
          { role: "user", content: `Checkpointed note for ${p.name}` },
        ], { requireCheckpoint: true })
      );
      await p.run(() =>
        p.provider.onMemoryWrite("add", "user", `Fact about ${p.name}`)
      );
      await p.provider.idle();
    }
    for (const p of profiles) {
      const other = profiles.find((o) => o !== p)!;
      const state = p.server.state;
      assert.deepEqual(state.workspaces.map((w) => w.id), [`ws-${p.name}`]);
      assert.deepEqual(state.sessions.map((s) => s.id), ["shared-session"]);
      assert.deepEqual(
        state.peers.map((x) => x.id).sort(),
        [p.name === "a" ? "alice" : "bob", `hermes-${p.name}`].sort(),
      );
      assert.equal(state.messages.length, 9);
      assert.ok(
        state.messages.every((m) =>
          m.content.includes(` ${p.name}`) ||
          m.content.endsWith(`for ${p.name}`)
        ),
      );
      assert.ok(
        state.messages.every((m) => !m.content.includes(` ${other.name}:`)),
      );
      assert.deepEqual(state.conclusions.map((c) => c.content), [
        `Fact about ${p.name}`,
      ]);
      // Every request of this profile carried this profile's key; none was refused.
      const requests = seen.filter((s) => s.host === `honcho-${p.name}.test`);
      assert.ok(requests.length > 10);
      assert.ok(requests.every((s) => s.auth === `Bearer ${p.key}`));
      assert.equal(p.server.requests.filter((r) => r.status === 401).length, 0);
      assert.deepEqual(p.server.violations, []);
      // Each outbox lives in its own profile home.
      assert.ok(p.provider.outbox!.path.startsWith(p.home));
      assert.equal((await p.provider.outbox!.stats()).pending, 0);
    }
    assert.equal(serverA.requestCount(ROUTES.messages) > 0, true);
  } finally {
    for (const p of profiles) await p.run(() => p.provider.shutdown());
    setMultiplexActive(false);
    for (const p of profiles) await removeHome(p.home);
  }
});
