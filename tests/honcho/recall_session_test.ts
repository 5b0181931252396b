// The provider's parts on their own interfaces, with a fake client and a
// fake clock: the recall scheduler's cadences, liveness and prewarm
// (recall.ts), the session's set-up throttle and epochs (session.ts), and
// the records a turn becomes (write_hooks.ts).
import assert from "node:assert/strict";
import { setLogger } from "@hermes/memory";
import type { HonchoClient } from "../../plugins/memory/honcho/client/client.ts";
import {
  type HonchoConfig,
  loadHonchoConfig,
} from "../../plugins/memory/honcho/config/config.ts";
import { HonchoError } from "../../plugins/memory/honcho/client/errors.ts";
import { NoticeBoard } from "../../plugins/memory/honcho/notices.ts";
import { HonchoRecall } from "../../plugins/memory/honcho/recall/recall.ts";
import { HonchoSession } from "../../plugins/memory/honcho/session/session.ts";
import { turnRecords } from "../../plugins/memory/honcho/session/write_hooks.ts";
import {
  type HonchoRuntime,
  TaskGroup,
} from "../../plugins/memory/honcho/_runtime.ts";
import { scrubberOf } from "../../plugins/memory/honcho/_util.ts";

/** What the fake client was asked, with the turn it was asked on. */
interface Call {
  route: "session" | "peerConfig" | "sessionContext" | "peerContext" | "chat";
  turn: number;
  query?: string;
}

interface Rig {
  config: HonchoConfig;
  calls: Call[];
  clock: { now: number };
  turn: { value: number };
  tasks: TaskGroup;
  session: HonchoSession;
  recall: HonchoRecall;
  /** Makes the next `n` session set-ups fail with a 503. */
  failSetUp(n: number): void;
  /** Makes chat answers hang until aborted. */
  hangChat(): void;
  controller: AbortController;
}

async function rig(
  settings: Record<string, unknown>,
  options: { queryRewriter?: (q: string) => string } = {},
): Promise<Rig> {
  const home = await Deno.makeTempDir({ prefix: "honcho_parts_" });
  const path = `${home}/honcho.json`;
  await Deno.writeTextFile(
    path,
    JSON.stringify({
      baseUrl: "http://127.0.0.1:9",
      peerName: "alice",
      aiPeer: "hermes",
      sessionStrategy: "per-session",
      ...settings,
    }),
  );
  const config = await loadHonchoConfig({ hermesHome: home, configPath: path });
  await Deno.remove(home, { recursive: true });
  const calls: Call[] = [];
  const clock = { now: 1_000_000 };
  const turn = { value: 0 };
  let setUpFailures = 0;
  let hang = false;
  const client = {
    getOrCreateSession: () => {
      calls.push({ route: "session", turn: turn.value });
      if (setUpFailures > 0) {
        setUpFailures--;
        return Promise.reject(
          new HonchoError("server_error", "Honcho is down", { status: 503 }),
        );
      }
      return Promise.resolve({});
    },
    getSessionPeerConfig: () => {
      calls.push({ route: "peerConfig", turn: turn.value });
      return Promise.resolve({ observeMe: null, observeOthers: null });
    },
    // Set-up gives peers without settings theirs (not counted here).
    setSessionPeerConfig: () => Promise.resolve(),
    getSessionContext: () => {
      calls.push({ route: "sessionContext", turn: turn.value });
      return Promise.resolve({
        id: "s1",
        messages: [],
        summary: null,
        peerRepresentation: "Alice likes tea.",
        peerCard: null,
      });
    },
    getPeerContext: () => {
      calls.push({ route: "peerContext", turn: turn.value });
      return Promise.resolve({
        peerId: "hermes",
        targetId: "hermes",
        representation: null,
        peerCard: null,
      });
    },
    peerChat: (_peer: string, query: string, o: { signal?: AbortSignal }) => {
      calls.push({ route: "chat", turn: turn.value, query });
      if (!hang) return Promise.resolve(`Answer on turn ${turn.value}.`);
      return new Promise((_resolve, reject) => {
        if (o.signal?.aborted) reject(o.signal.reason);
        o.signal?.addEventListener("abort", () => reject(o.signal!.reason));
      });
    },
  } as unknown as HonchoClient;
  const controller = new AbortController();
  const tasks = new TaskGroup();
  const rt: HonchoRuntime = {
    config,
    client,
    notices: new NoticeBoard("cli"),
    signal: controller.signal,
    tasks,
    now: () => clock.now,
    stopped: () => controller.signal.aborted,
    timeoutMs: 30_000,
    scrub: scrubberOf(undefined),
  };
  const session: HonchoSession = new HonchoSession(rt, {
    sessionId: "s1",
    initOptions: {},
    initRetryDelayMs: 5_000,
    onReady: (stale) => recall.sessionReady(stale),
  });
  const recall = new HonchoRecall(rt, session, {
    turn: () => turn.value,
    queryRewriter: options.queryRewriter,
  });
  return {
    config,
    calls,
    clock,
    turn,
    tasks,
    session,
    recall,
    controller,
    failSetUp: (n) => setUpFailures = n,
    hangChat: () => hang = true,
  };
}

async function settle(r: Rig): Promise<void> {
  assert.equal(await r.tasks.settle(5_000, Date.now), true);
}

function turnsOf(r: Rig, route: Call["route"]): number[] {
  return r.calls.filter((c) => c.route === route).map((c) => c.turn);
}

/** Lets background tasks run up to their first request. */
function tick(): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, 20));
}

/** One turn the way the provider drives recall: start, prefetch, queue. */
async function turn(r: Rig, n: number, query = `Question ${n}?`) {
  r.turn.value = n;
  r.recall.startTurn();
  const injected = await r.recall.prefetch(query);
  r.recall.queuePrefetch(query);
  await settle(r);
  return injected;
}

Deno.test("HonchoRecall refreshes the base layer every contextCadence and asks the dialectic every dialecticCadence turns", async () => {
  const r = await rig({ contextCadence: 2, dialecticCadence: 3 });
  try {
    r.session.name();
    await r.session.ensure(r.controller.signal);
    await settle(r);
    // Set-up prewarms the dialectic once, before any turn.
    assert.deepEqual(turnsOf(r, "chat"), [0]);
    const injected: string[] = [];
    for (let n = 1; n <= 9; n++) injected.push(await turn(r, n));
    // Turn 1 fetches the first base layer inside prefetch; then every 2nd.
    assert.deepEqual(turnsOf(r, "sessionContext"), [1, 3, 5, 7, 9]);
    assert.deepEqual(turnsOf(r, "peerContext"), [1, 3, 5, 7, 9]);
    // The prewarm counts as turn 0: then every 3rd turn.
    assert.deepEqual(turnsOf(r, "chat"), [0, 3, 6, 9]);
    // Turn 1 injects the prewarmed answer; later turns each ready answer once.
    assert.match(injected[0]!, /Answer on turn 0\./);
    assert.match(injected[0]!, /Alice likes tea\./);
    assert.match(injected[3]!, /Answer on turn 3\./);
    assert.doesNotMatch(injected[4]!, /Answer on turn/);
    const snapshot = r.recall.liveness();
    assert.equal(snapshot.lastDialecticTurn, 9);
    assert.equal(snapshot.effectiveCadence, 3);
    assert.equal(snapshot.threadAlive, false);
  } finally {
    r.controller.abort();
  }
});

Deno.test("HonchoRecall: a dialectic still running after twice the request timeout (fake clock) no longer blocks a new one", async () => {
  const r = await rig({ dialecticCadence: 1, timeout: 3 });
  try {
    r.session.name();
    r.hangChat();
    await r.session.ensure(r.controller.signal);
    await tick();
    // The prewarm hangs; queued prefetches do not start a second one.
    r.turn.value = 1;
    r.recall.queuePrefetch("What next?");
    await tick();
    assert.deepEqual(turnsOf(r, "chat"), [0]);
    const started = r.recall.liveness();
    assert.equal(started.threadAlive, true);
    assert.equal(started.threadAgeSeconds, 0);
    r.clock.now += 5_999;
    r.turn.value = 2;
    r.recall.queuePrefetch("What next?");
    await tick();
    assert.deepEqual(turnsOf(r, "chat"), [0]);
    assert.equal(r.recall.liveness().threadAgeSeconds, 5.999);
    // 2 x timeout (3 s) has passed: the stuck run counts as dead.
    r.clock.now += 1;
    r.turn.value = 3;
    r.recall.queuePrefetch("What next?");
    await tick();
    assert.deepEqual(turnsOf(r, "chat"), [0, 3]);
    assert.equal(r.recall.liveness().threadAgeSeconds, 0);
  } finally {
    r.controller.abort();
    await settle(r);
  }
});

Deno.test("HonchoRecall.sessionReady prewarms unless the epoch changed or a query rewriter waits for a real question", async (t) => {
  await t.step("fresh epoch: one prewarm", async () => {
    const r = await rig({});
    r.session.name();
    await r.session.named();
    r.recall.sessionReady(false);
    r.recall.sessionReady(false);
    await settle(r);
    assert.deepEqual(turnsOf(r, "chat"), [0], "one prewarm, on turn 0");
  });
  await t.step("stale epoch: none", async () => {
    const r = await rig({});
    r.session.name();
    await r.session.named();
    r.recall.sessionReady(true);
    await settle(r);
    assert.deepEqual(turnsOf(r, "chat"), []);
  });
  await t.step("queryRewrite with a rewriter: none", async () => {
    const r = await rig({ queryRewrite: true }, { queryRewriter: (q) => q });
    r.session.name();
    await r.session.named();
    r.recall.sessionReady(false);
    await settle(r);
    assert.deepEqual(turnsOf(r, "chat"), []);
  });
});

Deno.test("HonchoSession.kick retries a failed set-up only after initRetryDelayMs (fake clock); ensure() does at once", async () => {
  const previous = setLogger({ log: () => {} });
  const r = await rig({});
  try {
    r.session.name();
    r.failSetUp(2);
    r.session.kick(true);
    await settle(r);
    assert.equal(r.session.ready, false);
    assert.equal(turnsOf(r, "session").length, 1);
    r.clock.now += 4_999;
    r.session.kick();
    await settle(r);
    assert.equal(turnsOf(r, "session").length, 1, "throttled");
    r.clock.now += 1;
    r.session.kick();
    await settle(r);
    assert.equal(turnsOf(r, "session").length, 2, "retried after 5 s");
    assert.equal(r.session.ready, false);
    // A caller that needs the session now (a tool call) is not throttled.
    await r.session.ensure(r.controller.signal);
    assert.equal(turnsOf(r, "session").length, 3);
    assert.equal(r.session.ready, true);
    r.session.kick(true);
    await settle(r);
    assert.equal(turnsOf(r, "session").length, 3, "ready: no more set-up");
  } finally {
    setLogger(previous);
    r.controller.abort();
  }
});

Deno.test("HonchoSession.switchTo starts a new epoch at once and reports whether the Honcho session moved", async () => {
  const r = await rig({});
  try {
    await r.session.name();
    await r.session.ensure(r.controller.signal);
    const before = r.session.epoch;
    const moving = r.session.switchTo("s2");
    assert.notEqual(r.session.epoch, before, "new epoch before naming ends");
    assert.equal(await moving, true);
    assert.equal(r.session.identity?.sessionId, "s2");
    assert.equal(r.session.ready, false);
    const again = r.session.epoch;
    assert.equal(await r.session.switchTo("s2"), false);
    assert.notEqual(r.session.epoch, again);
  } finally {
    r.controller.abort();
    await settle(r);
  }
});

Deno.test("turnRecords(): user peer, another human author (joined first), a bot's a2a session, stable ids", async () => {
  const r = await rig({
    a2aSessions: true,
    userPeerAliases: { "tg-99": "bob" },
  });
  r.controller.abort();
  const identity = {
    sessionKey: "s1",
    sessionId: "s1",
    userPeerId: "alice",
    aiPeerId: "hermes",
    runtimeIds: ["tg-1"],
  };
  const texts = { userText: "Hi", aiText: "Hello" };
  const owner = turnRecords(r.config, identity, {
    ...texts,
    author: { id: "tg-1", name: undefined, isBot: false },
  });
  assert.deepEqual(owner.records.map((m) => [m.session, m.peer, m.content]), [
    ["s1", "alice", "Hi"],
    ["s1", "hermes", "Hello"],
  ]);
  assert.equal(owner.join, undefined);
  assert.equal(owner.records[0]!.id, undefined, "a random id by default");
  const bob = turnRecords(r.config, identity, {
    ...texts,
    author: { id: "tg-99", name: "Bob", isBot: false },
    turnId: "turn-7",
  });
  assert.deepEqual(bob.join, { session: "s1", peer: "bob", create: false });
  assert.equal(bob.records[0]!.peer, "bob");
  const again = turnRecords(r.config, identity, {
    ...texts,
    author: { id: "tg-99", name: "Bob", isBot: false },
    turnId: "turn-7",
  });
  assert.deepEqual(
    again.records.map((m) => m.id),
    bob.records.map((m) => m.id),
    "the same turn id gives the same outbox ids",
  );
  const bot = turnRecords(r.config, identity, {
    ...texts,
    author: { id: "bot:helper", name: "Helper", isBot: true },
  });
  assert.match(bot.join!.session, /^s1-bot-hermes-helper-[0-9a-f]{8}$/);
  assert.equal(bot.join!.create, true);
  assert.deepEqual(
    bot.records.map((m) => [m.peer, m.session === bot.join!.session]),
    [["bot-helper", true], ["hermes", true]],
  );
  const self = turnRecords(r.config, identity, {
    ...texts,
    author: { id: "hermes", name: undefined, isBot: true },
  });
  assert.deepEqual(self.records, [], "the AI peer talking to itself");
});
