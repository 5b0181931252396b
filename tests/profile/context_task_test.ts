import assert from "node:assert/strict";
import { join } from "node:path";
import {
  activeContextTasks,
  contextBound,
  drainContextTasks,
  spawnContextTask,
} from "../../src/profile/context_task.ts";
import {
  withHermesHome,
  withSecretScope,
  withSessionCwd,
} from "../../src/profile/context_scope.ts";
import { getHermesHome } from "../../src/profile/hermes_home.ts";
import {
  getSecret,
  setMultiplexActive,
  UnscopedSecretError,
} from "../../src/profile/secret_scope.ts";
import { resolveAgentCwd } from "../../src/profile/runtime_cwd.ts";
import { type LogLevel, setLogger } from "../../src/core/log.ts";

interface Seen {
  turn: number;
  via: string;
  home: string;
  secret: string | undefined;
  cwd: string;
}

function observe(turn: number, via: string): Seen {
  return {
    turn,
    via,
    home: getHermesHome(),
    secret: getSecret("MEMORY_API_KEY"),
    cwd: resolveAgentCwd(),
  };
}

function tick(ms = 0): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

Deno.test("spawnContextTask() runs later, in the caller's home, secret scope and session cwd", async () => {
  const dir = await Deno.realPath(await Deno.makeTempDir());
  try {
    let ran = false;
    const task = withHermesHome(
      join(dir, "alice"),
      () =>
        withSecretScope(
          { MEMORY_API_KEY: "alice-key" },
          () =>
            withSessionCwd(dir, () =>
              spawnContextTask(() => {
                ran = true;
                return observe(0, "task");
              }, { name: "sync" })),
        ),
    );
    assert.equal(ran, false, "the task must not run synchronously");
    assert.equal(task.name, "sync");
    assert.equal(task.settled, false);
    assert.deepEqual(activeContextTasks(), [task]);
    const seen = await task.done;
    assert.deepEqual(seen, {
      turn: 0,
      via: "task",
      home: join(dir, "alice"),
      secret: "alice-key",
      cwd: dir,
    });
    await tick();
    assert.equal(task.settled, true);
    assert.deepEqual(activeContextTasks(), []);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("spawnContextTask() logs a failure by name and never leaves it unhandled", async () => {
  const lines: string[] = [];
  const previous = setLogger({
    log: (level: LogLevel, message: string) =>
      lines.push(`${level} ${message}`),
  });
  try {
    const sync = spawnContextTask(() => {
      throw new Error("boom");
    }, { name: "sync-throws" });
    const async = spawnContextTask(() => Promise.reject(new Error("later")), {
      name: "sync-rejects",
    });
    assert.equal(await drainContextTasks(1000), true);
    await assert.rejects(sync.done, /boom/);
    await assert.rejects(async.done, /later/);
    assert.deepEqual(lines.sort(), [
      "warn Background task 'sync-rejects' failed: later",
      "warn Background task 'sync-throws' failed: boom",
    ]);
  } finally {
    setLogger(previous);
  }
});

Deno.test("spawnContextTask() masks secrets in the failure it logs", async () => {
  const lines: string[] = [];
  const previous = setLogger({
    log: (level: LogLevel, message: string) =>
      lines.push(`${level} ${message}`),
  });
  try {
    const task = spawnContextTask(() => {
      throw new Error("rejected key sk-proj-9f8e7d6c5b4a39281706");
    }, { name: "sync" });
    await assert.rejects(task.done);
    assert.equal(await drainContextTasks(1000), true);
    assert.deepEqual(lines, [
      "warn Background task 'sync' failed: rejected key [redacted]",
    ]);
  } finally {
    setLogger(previous);
  }
});

Deno.test("drainContextTasks() waits for tasks spawned while draining and times out on stuck ones", async () => {
  assert.equal(await drainContextTasks(0), true);
  const order: string[] = [];
  spawnContextTask(async () => {
    await tick(2);
    order.push("first");
    spawnContextTask(() => {
      order.push("second");
    }, { name: "child" });
  }, { name: "parent" });
  assert.equal(await drainContextTasks(2000), true);
  assert.deepEqual(order, ["first", "second"]);

  let release!: () => void;
  const gate = new Promise<void>((r) => release = r);
  const stuck = spawnContextTask(() => gate, { name: "stuck" });
  const started = performance.now();
  assert.equal(await drainContextTasks(20), false);
  assert.ok(performance.now() - started < 1000);
  assert.equal(stuck.settled, false);
  release();
  assert.equal(await drainContextTasks(2000), true);
  assert.equal(stuck.settled, true);
});

Deno.test("contextBound() carries the caller's context into code run by someone else", () => {
  const target = new EventTarget();
  const queue: (() => Seen)[] = [];
  withHermesHome(
    "/srv/bob",
    () =>
      withSecretScope({ MEMORY_API_KEY: "bob-key" }, () => {
        target.addEventListener(
          "ping",
          contextBound(() => queue.push(() => observe(1, "x"))),
        );
        queue.push(contextBound(() => observe(1, "queue")));
      }),
  );
  target.dispatchEvent(new Event("ping"));
  const seen = queue.map((fn) => fn());
  assert.equal(seen.length, 2);
  assert.equal(seen[0]!.home, "/srv/bob");
  assert.equal(seen[0]!.secret, "bob-key");
  // The listener queued an unbound closure: it runs in the consumer's context.
  assert.notEqual(seen[1]!.secret, "bob-key");
});

Deno.test("50 interleaved turns of different profiles never see each other's home, secrets or cwd", async () => {
  const dir = await Deno.realPath(await Deno.makeTempDir());
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen: () => {} },
    async (request) => {
      const delay = Number(new URL(request.url).searchParams.get("delay"));
      await tick(delay);
      return new Response(`served ${delay}`);
    },
  );
  const base = `http://127.0.0.1:${server.addr.port}/`;
  const profiles = Array.from({ length: 5 }, (_, i) => ({
    home: join(dir, `profile-${i}`),
    key: `secret-of-profile-${i}`,
    cwd: join(dir, `project-${i}`),
  }));
  for (const profile of profiles) await Deno.mkdir(profile.cwd);

  // A queue shared by all turns and drained by one consumer outside any turn,
  // as a provider's writer loop would be.
  const sharedQueue: (() => Seen)[] = [];
  const unboundQueue: (() => Seen)[] = [];

  setMultiplexActive(true);
  try {
    const turns = Array.from({ length: 50 }, (_, turn) => {
      const profile = profiles[turn % profiles.length]!;
      return withHermesHome(
        profile.home,
        () =>
          withSecretScope(
            { MEMORY_API_KEY: profile.key },
            () =>
              withSessionCwd(profile.cwd, async (): Promise<Seen[]> => {
                const seen: Seen[] = [observe(turn, "start")];
                await tick(turn % 3);
                seen.push(observe(turn, "after await"));
                seen.push(
                  await new Promise<Seen>((r) =>
                    setTimeout(() => r(observe(turn, "timer")), turn % 4)
                  ),
                );
                seen.push(
                  await new Promise<Seen>((r) =>
                    queueMicrotask(() => r(observe(turn, "microtask")))
                  ),
                );
                const fetched = await fetch(`${base}?delay=${(turn * 7) % 5}`)
                  .then((response) => response.text())
                  .then((body) => {
                    assert.match(body, /^served /);
                    return observe(turn, "fetch callback");
                  });
                seen.push(fetched);
                const task = spawnContextTask(async () => {
                  await tick(turn % 2);
                  const inner = await new Promise<Seen>((r) =>
                    setTimeout(() => r(observe(turn, "timer in task")), 0)
                  );
                  return [observe(turn, "task"), inner];
                }, { name: `turn-${turn}` });
                const fromTimer = await new Promise<Seen>((r) =>
                  setTimeout(() => {
                    r(
                      spawnContextTask(() => observe(turn, "task from timer"), {
                        name: "t",
                      }).done,
                    );
                  }, 1)
                );
                sharedQueue.push(
                  contextBound(() => observe(turn, "shared queue")),
                );
                unboundQueue.push(() => observe(turn, "unbound"));
                seen.push(...await task.done, fromTimer);
                return seen;
              }),
          ),
      );
    });
    const results = (await Promise.all(turns)).flat();
    assert.equal(await drainContextTasks(2000), true);
    const drained = sharedQueue.map((fn) => fn());

    const all = [...results, ...drained];
    assert.equal(all.length, 50 * 9);
    for (const seen of all) {
      const profile = profiles[seen.turn % profiles.length]!;
      assert.deepEqual(
        { home: seen.home, secret: seen.secret, cwd: seen.cwd },
        { home: profile.home, secret: profile.key, cwd: profile.cwd },
        `turn ${seen.turn} via ${seen.via}`,
      );
    }
    // Control: the same work queued without contextBound fails closed.
    for (const fn of unboundQueue) assert.throws(fn, UnscopedSecretError);
  } finally {
    setMultiplexActive(false);
    await server.shutdown();
    await Deno.remove(dir, { recursive: true });
  }
});
