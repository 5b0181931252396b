// A gateway host serving 20 profiles in one process, against the Honcho
// test server (which enforces Honcho's limit of 10 peers with
// observe_others=true per session). Counted on the server: with each
// profile's gateway session key, every message is stored once, in that
// profile's own session; when the host gives no key and every profile
// lands in one session (the set-up), each refused profile gets one
// notice naming the setting to change and its messages stay queued.
import assert from "node:assert/strict";
import { join } from "node:path";
import {
  setMultiplexActive,
  withHermesHome,
  withSecretScope,
} from "@hermes/memory";
import { startHonchoTestServer } from "../honcho_server.ts";
import {
  captureLogs,
  FAST,
  removeHome,
} from "../fixtures/honcho_provider_harness.ts";
import { HonchoMemoryProvider } from "../../plugins/memory/honcho/mod.ts";
import { OUTBOX_ID_METADATA_KEY } from "../../plugins/memory/honcho/outbox/outbox.ts";

const PROFILES = 20;
const TURNS = 3;

interface Profile {
  name: string;
  home: string;
  provider: HonchoMemoryProvider;
  notices: string[];
  run<T>(fn: () => T): T;
}

async function gateway(
  url: string,
  root: string,
  init: (i: number) => Record<string, unknown>,
): Promise<Profile[]> {
  const profiles: Profile[] = [];
  for (let i = 0; i < PROFILES; i++) {
    const name = `p${i}`;
    const home = join(root, "profiles", name);
    await Deno.mkdir(home, { recursive: true });
    await Deno.writeTextFile(
      join(home, "honcho.json"),
      JSON.stringify({
        baseUrl: url,
        workspace: "shared",
        peerName: `user${i}`,
        aiPeer: `hermes-${name}`,
        writeFrequency: "turn",
      }),
    );
    const provider = new HonchoMemoryProvider({ ...FAST });
    const notices: string[] = [];
    const run = <T>(fn: () => T): T =>
      withHermesHome(home, () => withSecretScope({}, fn));
    profiles.push({ name, home, provider, notices, run });
    await run(() =>
      provider.initialize(`hermes-session-${i}`, {
        platform: "telegram",
        cwd: root,
        warningCallback: (message: string) => notices.push(message),
        ...init(i),
      })
    );
  }
  return profiles;
}

async function turns(profiles: Profile[]): Promise<void> {
  for (let turn = 1; turn <= TURNS; turn++) {
    await Promise.all(profiles.map((p) =>
      p.run(() =>
        p.provider.syncTurn(
          `${p.name} says ${turn}`,
          `reply ${turn} to ${p.name}`,
          {},
        )
      )
    ));
  }
  await Promise.all(profiles.map((p) => p.provider.idle(20_000)));
}

function expectOwnSessions(
  profiles: Profile[],
  stored: {
    session_id: string;
    content: string;
    metadata: Record<string, unknown>;
  }[],
  sessionOf: (i: number) => string,
): void {
  const ids = stored.map((m) => String(m.metadata[OUTBOX_ID_METADATA_KEY]));
  assert.equal(new Set(ids).size, ids.length, "a message was stored twice");
  assert.equal(stored.length, PROFILES * TURNS * 2, "messages lost");
  for (const [i, p] of profiles.entries()) {
    const mine = stored.filter((m) =>
      m.content.startsWith(`${p.name} says`) ||
      m.content.endsWith(`to ${p.name}`)
    );
    assert.equal(mine.length, TURNS * 2, p.name);
    assert.deepEqual(
      [...new Set(mine.map((m) => m.session_id))],
      [sessionOf(i)],
      p.name,
    );
  }
}

for (
  const [what, init] of [
    [
      "with their gateway session keys",
      (i: number) => ({
        gatewaySessionKey: `agent:main:telegram:dm:${1000 + i}`,
        chatType: "dm",
        chatId: String(1000 + i),
        userId: String(1000 + i),
      }),
    ],
    // The chat's identity without the key: the key Hermes' gateway builds
    // (before: all 20 in the host's working-directory session).
    [
      "giving their chats but no session key",
      (i: number) => ({
        chatType: "dm",
        chatId: String(1000 + i),
        userId: String(1000 + i),
      }),
    ],
  ] as const
) {
  Deno.test(`gateway host, 20 profiles ${what}: every message stored once, in its own session`, async () => {
    await using server = await startHonchoTestServer();
    const root = await Deno.makeTempDir({ prefix: "honcho_gateway_" });
    setMultiplexActive(true);
    const profiles = await gateway(server.url, root, init);
    try {
      await turns(profiles);
      expectOwnSessions(
        profiles,
        server.state.messages,
        (i) => `agent-main-telegram-dm-${1000 + i}`,
      );
      assert.deepEqual(server.violations, []);
    } finally {
      for (const p of profiles) await p.run(() => p.provider.shutdown());
      setMultiplexActive(false);
      await removeHome(root);
    }
  });
}

Deno.test("gateway host, 20 profiles piled into one session: one notice per refused profile naming the setting, nothing silently dropped", async () => {
  await using server = await startHonchoTestServer();
  const root = await Deno.makeTempDir({ prefix: "honcho_gateway_" });
  const logs = captureLogs();
  setMultiplexActive(true);
  // No gateway key and the per-directory default: all in one session.
  const profiles = await gateway(server.url, root, () => ({}));
  try {
    await turns(profiles);
    await turns(profiles);
    const stored = server.state.messages;
    const ids = stored.map((m) => String(m.metadata[OUTBOX_ID_METADATA_KEY]));
    assert.equal(new Set(ids).size, ids.length, "a message was stored twice");
    let queued = 0;
    const refused: Profile[] = [];
    for (const p of profiles) {
      const pending = (await p.run(() => p.provider.outbox!.stats())).pending;
      queued += pending;
      const mine = stored.filter((m) =>
        m.content.startsWith(`${p.name} says`) ||
        m.content.endsWith(`to ${p.name}`)
      ).length;
      // Every message of the profile is either stored or still queued.
      assert.equal(mine + pending, TURNS * 4, p.name);
      if (pending > 0) {
        refused.push(p);
      }
    }
    assert.equal(stored.length + queued, PROFILES * TURNS * 4);
    assert.ok(refused.length >= PROFILES - 10, `${refused.length} refused`);
    const warnings = logs.lines.filter((l) => l.level === "warn");
    for (const p of refused) {
      const about = [...p.notices, ...warnings.map((w) => w.message)].filter(
        // Honcho's wording: "… with 12 observers. Maximum allowed is 10 …".
        (m) => /observe_others|10 peers|\d+ observers/.test(m),
      ).filter((m) =>
        m.includes(`AI peer hermes-${p.name}:`) || p.notices.includes(m)
      );
      assert.equal(about.length, 1, `${p.name}: ${about.join("\n")}`);
      assert.match(about[0]!, /sessionStrategy|gatewaySessionKey/);
    }
  } finally {
    logs.restore();
    for (const p of profiles) await p.run(() => p.provider.shutdown());
    setMultiplexActive(false);
    await removeHome(root);
  }
});
