import assert from "node:assert/strict";
import { AsyncLocalStorage } from "node:async_hooks";
import {
  BackgroundQueue,
  settlesWithin,
} from "../../src/manager/background_queue.ts";
import { setLogger } from "../../src/core/log.ts";

const delay = (ms: number): Promise<void> =>
  new Promise((r) => setTimeout(r, ms));

Deno.test("BackgroundQueue.submit() runs tasks in FIFO order, never inline", async () => {
  const queue = new BackgroundQueue();
  const order: string[] = [];
  queue.submit(async () => {
    await delay(10);
    order.push("slow");
  });
  queue.submit(() => void order.push("fast"));
  await Promise.resolve();
  assert.deepEqual(order, []);
  assert.equal(queue.size, 2);
  assert.equal(await queue.flush(), true);
  assert.deepEqual(order, ["slow", "fast"]);
  assert.equal(queue.size, 0);
});

Deno.test("BackgroundQueue.submit() runs each task in its submitter's async context", async () => {
  const als = new AsyncLocalStorage<string>();
  const queue = new BackgroundQueue();
  const seen: Array<string | undefined> = [];
  als.run(
    "a",
    () => queue.submit(async () => (await delay(1), seen.push(als.getStore()))),
  );
  als.run("b", () => queue.submit(() => seen.push(als.getStore())));
  queue.submit(() => seen.push(als.getStore()));
  await queue.flush();
  assert.deepEqual(seen, ["a", "b", undefined]);
});

Deno.test("BackgroundQueue keeps going after a task throws", async () => {
  const lines: string[] = [];
  const previous = setLogger({
    log: (level, message) => lines.push(`${level} ${message}`),
  });
  try {
    const queue = new BackgroundQueue();
    let ran = false;
    queue.submit(() => {
      throw new Error("boom");
    });
    queue.submit(() => Promise.reject(new Error("async boom")), "prefetch");
    queue.submit(() => void (ran = true));
    assert.equal(await queue.flush(), true);
    assert.equal(ran, true);
    assert.deepEqual(lines, [
      "debug Memory background write task failed: boom",
      "debug Memory background prefetch task failed: async boom",
    ]);
  } finally {
    setLogger(previous);
  }
});

Deno.test("BackgroundQueue.close() drains in time or abandons what never started", async () => {
  const drained = new BackgroundQueue();
  drained.submit(() => delay(5));
  assert.deepEqual(await drained.close(200), {
    drained: true,
    abandonedWrites: 0,
    abandonedPrefetches: 0,
    activeTasks: 0,
  });
  assert.equal(drained.submit(() => {}), false);

  const stuck = new BackgroundQueue();
  let later = false;
  stuck.submit(() => new Promise(() => {}));
  stuck.submit(() => void (later = true));
  stuck.submit(() => void (later = true), "prefetch");
  assert.equal(await stuck.flush(10), false);
  assert.deepEqual(await stuck.close(10), {
    drained: false,
    abandonedWrites: 1,
    abandonedPrefetches: 1,
    activeTasks: 1,
  });
  assert.equal(stuck.closed, true);
  assert.equal(await stuck.flush(), true);
  assert.equal(later, false);
});

Deno.test("settlesWithin() reports settling or timing out and clears its timer", async () => {
  assert.equal(await settlesWithin(Promise.resolve(), 50), true);
  assert.equal(await settlesWithin(Promise.reject(new Error("x")), 50), true);
  assert.equal(await settlesWithin(new Promise(() => {}), 5), false);
});
