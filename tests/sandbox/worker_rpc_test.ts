import assert from "node:assert/strict";
import {
  ProviderWorkerStoppedError,
  WorkerRpc,
} from "../../src/sandbox/worker_rpc.ts";
import {
  ProviderCallTimeoutError,
  reviveError,
  serializeError,
  type WorkerMessage,
} from "../../src/sandbox/worker_protocol.ts";

/**
 * Speaks the bootstrap's side of the handshake: takes the port from the
 * host's `connect` message; the script's `postMessage` and `onmessage` then
 * use that port, as the real bootstrap does.
 */
const PORT_SHIM = `
let __port = null;
const __early = [];
const postMessage = (m) => __port ? __port.postMessage(m) : __early.push(m);
let onmessage = null;
self.onmessage = (e) => {
  if (e.data && e.data.t === "connect" && !__port) {
    __port = e.ports[0];
    __port.onmessage = (ev) => onmessage && onmessage(ev);
    for (const m of __early.splice(0)) __port.postMessage(m);
  }
};
`;

/** A worker from inline source (no permissions). */
function scripted(source: string): Worker {
  return new Worker(
    `data:application/javascript,${encodeURIComponent(PORT_SHIM + source)}`,
    {
      type: "module",
      deno: { permissions: "none" },
    },
  );
}

const ECHO = `
postMessage({ t: "ready" });
onmessage = (e) => {
  const m = e.data;
  if (m.t === "ping") return postMessage({ t: "pong", id: m.id });
  if (m.method === "slow") {
    setTimeout(() => postMessage({ t: "result", id: m.id, ok: true, value: "slow" }), 100);
    return;
  }
  if (m.method === "late") {
    setTimeout(() => postMessage({ t: "result", id: m.id, ok: true, value: "late" }), 200);
    return;
  }
  if (m.method === "never") return;
  if (m.t === "cast") return postMessage({ t: "log", level: "info", message: "cast " + m.method });
  if (m.method === "fail") {
    return postMessage({ t: "result", id: m.id, ok: false, error: { name: "NotCapable", message: "denied" } });
  }
  if (m.method === "log") postMessage({ t: "log", level: "info", message: "hello" });
  postMessage({ t: "result", id: m.id, ok: true, value: m.args });
};
`;

const ctx = { hermesHome: "/h", multiplex: false };

// Deno 2.9 sometimes never starts the first worker of a `deno test
// --parallel` thread, while a second one starts at once. The loader replaces
// such a worker (SandboxedMemoryProvider, `startTimeoutMs`); these tests drive
// WorkerRpc directly, so they first start one throwaway worker here.
Deno.test("(warm-up) a worker starts in this test thread", async () => {
  for (let attempt = 1; attempt <= 3; attempt++) {
    const rpc = new WorkerRpc(scripted(ECHO), { provider: "warm-up" });
    try {
      await rpc.ready(5000);
      return;
    } catch {
      // Try a new worker.
    } finally {
      rpc.terminate("warm-up over");
    }
  }
  assert.fail("no worker started in three attempts");
});

Deno.test("WorkerRpc matches replies to requests by id, out of order", async () => {
  const rpc = new WorkerRpc(scripted(ECHO), { provider: "p" });
  try {
    await rpc.ready(30_000);
    const slow = rpc.request({
      t: "call",
      method: "slow",
      args: [],
      context: ctx,
    }, { timeoutMs: 5000, label: "slow" });
    const fast = rpc.request({
      t: "call",
      method: "fast",
      args: [1, "a"],
      context: ctx,
    }, { timeoutMs: 5000, label: "fast" });
    assert.deepEqual(await fast, [1, "a"]);
    assert.equal(await slow, "slow");
  } finally {
    rpc.terminate("test over");
  }
});

Deno.test("WorkerRpc rejects after the timeout and ignores the late reply", async () => {
  const rpc = new WorkerRpc(scripted(ECHO), { provider: "p" });
  try {
    await rpc.ready(30_000);
    await assert.rejects(
      rpc.request({ t: "call", method: "late", args: [], context: ctx }, {
        timeoutMs: 50,
        label: "late",
      }),
      (error: unknown) =>
        error instanceof ProviderCallTimeoutError && error.provider === "p" &&
        error.method === "late",
    );
    await new Promise((r) => setTimeout(r, 250));
    assert.deepEqual(
      await rpc.request({ t: "call", method: "x", args: [2], context: ctx }, {
        timeoutMs: 5000,
        label: "x",
      }),
      [2],
    );
    assert.equal(rpc.stopped, undefined);
  } finally {
    rpc.terminate("test over");
  }
});

Deno.test("WorkerRpc revives remote errors with their name and forwards events", async () => {
  const events: WorkerMessage[] = [];
  const rpc = new WorkerRpc(scripted(ECHO), {
    provider: "p",
    onEvent: (m) => events.push(m),
  });
  try {
    await rpc.ready(30_000);
    await assert.rejects(
      rpc.request({ t: "call", method: "fail", args: [], context: ctx }, {
        timeoutMs: 5000,
        label: "fail",
      }),
      { name: "NotCapable", message: "denied" },
    );
    await rpc.request({ t: "call", method: "log", args: [], context: ctx }, {
      timeoutMs: 5000,
      label: "log",
    });
    assert.deepEqual(events, [{ t: "log", level: "info", message: "hello" }]);
  } finally {
    rpc.terminate("test over");
  }
});

Deno.test("WorkerRpc names arguments that cannot cross the boundary", async () => {
  const rpc = new WorkerRpc(scripted(ECHO), { provider: "p" });
  try {
    await rpc.ready(30_000);
    await assert.rejects(
      rpc.request({ t: "call", method: "x", args: [() => 1], context: ctx }, {
        timeoutMs: 5000,
        label: "prefetch",
      }),
      /^TypeError: Cannot pass the arguments of prefetch\(\) to memory provider 'p': /,
    );
  } finally {
    rpc.terminate("test over");
  }
});

Deno.test("WorkerRpc terminates a worker that stops answering pings while spinning, and fails every call", async () => {
  // Spins (for at most 20 s, so the test process gets its CPU back) on the
  // first message: the host's CPU time grows while the ping is unanswered.
  const stopped: string[] = [];
  const rpc = new WorkerRpc(
    scripted(
      `postMessage({ t: "ready" }); onmessage = () => { const end = Date.now() + 20000; while (Date.now() < end) {} };`,
    ),
    {
      provider: "p",
      unresponsiveAfterMs: 100,
      heartbeatMs: 20,
      onStopped: (reason) => stopped.push(reason),
    },
  );
  await rpc.ready(30_000);
  const started = performance.now();
  await assert.rejects(
    rpc.request({ t: "call", method: "x", args: [], context: ctx }, {
      timeoutMs: 10_000,
      label: "x",
    }),
    (error: unknown) =>
      error instanceof ProviderWorkerStoppedError &&
      /stopped responding while this process used 100 ms of CPU time/.test(
        error.message,
      ),
  );
  assert.ok(performance.now() - started < 5000);
  assert.equal(stopped.length, 1);
  await assert.rejects(
    rpc.request({ t: "call", method: "x", args: [], context: ctx }, {
      timeoutMs: 10_000,
      label: "x",
    }),
    ProviderWorkerStoppedError,
  );
});

Deno.test("WorkerRpc times out each call at its own deadline, whatever the order they were sent in", async () => {
  const rpc = new WorkerRpc(scripted(ECHO), { provider: "p" });
  try {
    await rpc.ready(30_000);
    const started = performance.now();
    const settled: string[] = [];
    const call = (label: string, timeoutMs: number) =>
      rpc.request({ t: "call", method: "never", args: [], context: ctx }, {
        timeoutMs,
        label,
      }).catch((error: unknown) => {
        assert.ok(error instanceof ProviderCallTimeoutError);
        settled.push(`${label}@${Math.round(performance.now() - started)}`);
      });
    // The long timeout is armed first; the short one must still fire on time.
    const long = call("long", 600);
    const unbounded = rpc.request({
      t: "call",
      method: "never",
      args: [],
      context: ctx,
    }, { timeoutMs: Infinity, label: "unbounded" });
    const short = call("short", 50);
    assert.deepEqual(
      await rpc.request({ t: "call", method: "x", args: [1], context: ctx }, {
        timeoutMs: 5000,
        label: "x",
      }),
      [1],
    );
    await short;
    assert.equal(settled.length, 1);
    assert.match(settled[0] ?? "", /^short@/);
    assert.ok(Number(settled[0]?.split("@")[1]) < 600, settled.join());
    await long;
    assert.match(settled[1] ?? "", /^long@/);
    assert.ok(Number(settled[1]?.split("@")[1]) >= 590, settled.join());
    rpc.terminate("test over");
    await assert.rejects(unbounded, ProviderWorkerStoppedError);
  } finally {
    rpc.terminate("test over");
  }
});

Deno.test("WorkerRpc.cast() posts without waiting and throws once the worker is gone", async () => {
  const events: WorkerMessage[] = [];
  const rpc = new WorkerRpc(scripted(ECHO), {
    provider: "p",
    onEvent: (m) => events.push(m),
  });
  try {
    await rpc.ready(30_000);
    const cast = {
      t: "cast" as const,
      method: "syncTurn",
      args: ["u", "a", {}],
      context: ctx,
    };
    assert.equal(rpc.cast(cast), undefined);
    assert.throws(
      () => rpc.cast({ ...cast, args: [() => 1] }),
      /^TypeError: Cannot pass the arguments of syncTurn\(\) to memory provider 'p': /,
    );
    // Messages are handled in order: the cast's event precedes this reply.
    await rpc.request({ t: "call", method: "x", args: [], context: ctx }, {
      timeoutMs: 5000,
      label: "x",
    });
    assert.deepEqual(events, [{
      t: "log",
      level: "info",
      message: "cast syncTurn",
    }]);
    rpc.terminate("test over");
    assert.throws(() => rpc.cast(cast), {
      name: "ProviderWorkerStoppedError",
      message: "Memory provider 'p' is not running: test over",
    });
  } finally {
    rpc.terminate("test over");
  }
});

Deno.test("WorkerRpc.ready() fails when the worker never starts", async () => {
  const rpc = new WorkerRpc(scripted(`onmessage = () => {};`), {
    provider: "p",
  });
  await assert.rejects(
    rpc.ready(50),
    {
      message:
        "Memory provider 'p' is not running: its sandbox worker did not start within 50 ms",
    },
  );
});

Deno.test("WorkerRpc stops when the worker's module throws", async () => {
  // Deno prints a worker's uncaught module error on the process's stderr
  // whatever the host does with the error event, so the scenario runs in a
  // child whose stderr is captured and checked instead of printed.
  const script = `
    import { WorkerRpc } from ${
    JSON.stringify(
      new URL("../../src/sandbox/worker_rpc.ts", import.meta.url).href,
    )
  };
    const source = ${
    JSON.stringify(PORT_SHIM + 'throw new Error("bad bootstrap");')
  };
    const worker = new Worker(
      "data:application/javascript," + encodeURIComponent(source),
      { type: "module", deno: { permissions: "none" } },
    );
    const rpc = new WorkerRpc(worker, { provider: "p" });
    try {
      await rpc.ready(30_000);
      console.log("ready?!");
    } catch (error) {
      console.log(error.message);
    } finally {
      rpc.terminate("test over");
    }
  `;
  const output = await new Deno.Command(Deno.execPath(), {
    args: [
      "eval",
      "--no-prompt",
      `--config=${new URL("../../deno.json", import.meta.url).pathname}`,
      script,
    ],
    env: { NO_COLOR: "1" },
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
  const out = new TextDecoder().decode(output.stdout);
  const err = new TextDecoder().decode(output.stderr);
  assert.equal(output.code, 0, err);
  assert.match(
    out,
    /^Memory provider 'p' is not running: its sandbox worker failed: .*bad bootstrap\n$/,
  );
  // The error Deno itself prints for the worker: expected, and only it.
  assert.match(err, /^error: Uncaught \(in worker ""\) .*Error: bad bootstrap/);
});

Deno.test("serializeError() and reviveError() keep name, message and stack", () => {
  const original = new RangeError("out of range");
  const revived = reviveError(serializeError(original));
  assert.equal(revived.name, "RangeError");
  assert.equal(revived.message, "out of range");
  assert.equal(revived.stack, original.stack);
  assert.deepEqual(serializeError("plain"), {
    name: "Error",
    message: "plain",
  });
});

// A worker whose answer to every call is the message named by the call's
// first argument: what a compromised bootstrap could post on its port.
const MALFORMED = `
postMessage({ t: "ready" });
const make = {
  null: () => null,
  number: () => 42,
  array: () => [1, 2],
  noType: () => ({ id: 1 }),
  unknownType: () => ({ t: "become-host" }),
  forgedError: (id) => ({ t: "result", id, ok: false, error: null }),
  badError: (id) => ({ t: "result", id, ok: false, error: { name: 7, message: "x" } }),
  neverSent: (id) => ({ t: "result", id: id + 1000, ok: true, value: "forged" }),
  noId: () => ({ t: "result", ok: true, value: 1 }),
  hugeResult: (id) => ({ t: "result", id, ok: true, value: "x".repeat(33 * 1024 * 1024) }),
  badLog: () => ({ t: "log", level: "shout", message: "hi" }),
  badSkill: () => ({ t: "skill", skill: { name: 1 } }),
  badCallback: () => ({ t: "callback", name: "warningCallback", args: "not a list" }),
  badOutput: () => ({ t: "io", stream: "tty", text: "hi" }),
  badPrompt: () => ({ t: "ask", ask: 1, kind: "exec", options: {} }),
  global: () => "global",
};
onmessage = (e) => {
  const m = e.data;
  if (m.t === "ping") return postMessage({ t: "pong", id: m.id });
  const kind = m.args?.[0];
  if (kind === "global") { self.postMessage({ t: "result", id: m.id, ok: true, value: "via global" }); return; }
  postMessage(make[kind](m.id));
};
`;

Deno.test("WorkerRpc stops a worker that sends a malformed message, with one warning, and rejects its calls", async (t) => {
  const cases: [string, string][] = [
    ["null", "null"],
    ["number", "number"],
    ["array", "an array"],
    ["noType", "a message without a type"],
    ["unknownType", "an unknown message type 'become-host'"],
    ["forgedError", "a result that is neither a value nor an error"],
    ["badError", "a result that is neither a value nor an error"],
    ["neverSent", "a result for request 1001, never sent"],
    ["noId", "a result without a request id"],
    ["hugeResult", "a result over 33554432 bytes"],
    ["badLog", "a log line without a level"],
    ["badSkill", "a malformed skill registration"],
    ["badCallback", "a malformed callback"],
    ["badOutput", "malformed output"],
    ["badPrompt", "a malformed prompt"],
    [
      "global",
      "a message on its global scope (provider code calling postMessage)",
    ],
  ];
  for (const [kind, problem] of cases) {
    await t.step(kind, async () => {
      const stopped: string[] = [];
      const events: WorkerMessage[] = [];
      const rpc = new WorkerRpc(scripted(MALFORMED), {
        provider: "p",
        onStopped: (reason) => stopped.push(reason),
        onEvent: (m) => events.push(m),
      });
      const reason =
        `its sandbox worker sent ${problem}, which the sandbox protocol does not allow, and was stopped`;
      try {
        await rpc.ready(30_000);
        await assert.rejects(
          rpc.request(
            { t: "call", method: "x", args: [kind], context: ctx },
            { timeoutMs: 10_000, label: "x" },
          ),
          {
            name: "ProviderWorkerStoppedError",
            message: `Memory provider 'p' is not running: ${reason}`,
          },
        );
        assert.deepEqual(stopped, [reason]);
        assert.deepEqual(events, []);
        assert.equal(rpc.stopped, reason);
        await assert.rejects(
          rpc.request({ t: "call", method: "x", args: [], context: ctx }, {
            timeoutMs: 1000,
            label: "x",
          }),
          { name: "ProviderWorkerStoppedError" },
        );
      } finally {
        rpc.terminate("test over");
      }
    });
  }
});

Deno.test("WorkerRpc cuts a log line longer than 16384 characters instead of stopping", async () => {
  const events: WorkerMessage[] = [];
  const rpc = new WorkerRpc(
    scripted(`postMessage({ t: "ready" });
onmessage = (e) => {
  if (e.data.t === "ping") return postMessage({ t: "pong", id: e.data.id });
  postMessage({ t: "log", level: "info", message: "y".repeat(20000) });
  postMessage({ t: "result", id: e.data.id, ok: true, value: 1 });
};`),
    { provider: "p", onEvent: (m) => events.push(m) },
  );
  try {
    await rpc.ready(30_000);
    assert.equal(
      await rpc.request({ t: "call", method: "x", args: [], context: ctx }, {
        timeoutMs: 5000,
        label: "x",
      }),
      1,
    );
    const message = (events[0] as { message: string }).message;
    assert.equal(
      message,
      `${"y".repeat(16384)}… (cut at 16384 characters)`,
    );
  } finally {
    rpc.terminate("test over");
  }
});
