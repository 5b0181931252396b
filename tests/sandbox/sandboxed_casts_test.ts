// The void hooks of a sandboxed provider (syncTurn, queuePrefetch,
// onTurnStart, onMemoryWrite, onMemoryEvict, onDelegation, onSessionEnd)
// are posted one-way ("casts"): ordering against calls, failure logging,
// context capture at post time, draining at shutdown, and hung casts.
import assert from "node:assert/strict";
import { join } from "node:path";
import {
  withHermesHome,
  withSecretScope,
} from "../../src/profile/context_scope.ts";
import { MemoryManager } from "../../src/manager/memory_manager.ts";
import type { MemoryProvider } from "../../src/core/memory_provider.ts";
import { findMemoryProvider } from "../../src/plugins/plugin_discovery.ts";
import { loadMemoryProvider } from "../../src/plugins/provider_loader.ts";
import { grantForCandidate } from "../../src/plugins/provider_permissions.ts";
import { SandboxedMemoryProvider } from "../../src/sandbox/sandboxed_provider.ts";
import type { SandboxStartOptions } from "../../src/sandbox/sandbox_launch.ts";
import { ProviderCallTimeoutError } from "../../src/sandbox/worker_protocol.ts";
import { REDACTED } from "../../src/core/redact.ts";
import {
  captureLogs,
  type TempHome,
  tempHome,
  writeProvider,
} from "../helpers/plugin_fixtures.ts";

// Every hook records what it saw; prefetch returns the record. The user
// text steers syncTurn: "slow…" sleeps first, "throw" throws, "hang" never
// settles, "file:<line>" appends <line> to $HERMES_HOME/casts/turns.txt (its
// data directory) after a
// pause.
const CASTS_SOURCE = `import {
  currentSecretScope,
  getHermesHome,
  getSecret,
  MemoryProvider,
  type ToolSchema,
} from "@hermes/memory";
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
export class Casts extends MemoryProvider {
  #seen: Record<string, unknown>[] = [];
  get name(): string { return "casts"; }
  isAvailable(): boolean { return true; }
  initialize(): void {}
  getToolSchemas(): ToolSchema[] { return []; }
  #record(hook: string, text: string): void {
    const scope = currentSecretScope();
    this.#seen.push({
      hook,
      text,
      home: getHermesHome(),
      key: getSecret("CASTS_KEY") ?? null,
      scope: scope === undefined ? null : Object.keys(scope),
    });
  }
  override async syncTurn(user: string, assistant: string): Promise<void> {
    if (user === "throw") throw new Error("sync exploded");
    if (user === "hang") return await new Promise<void>(() => {});
    if (user.startsWith("file:")) {
      await sleep(20);
      await Deno.writeTextFile(getHermesHome() + "/casts/turns.txt", user.slice(5) + "\\n", { append: true });
      return;
    }
    if (user.startsWith("slow")) await sleep(40);
    this.#record("syncTurn", user + "/" + assistant);
  }
  override queuePrefetch(query: string): void {
    if (query === "throw") throw new Error("warm exploded");
    this.#record("queuePrefetch", query);
  }
  override async onTurnStart(turn: number, message: string): Promise<void> {
    await sleep(10);
    this.#record("onTurnStart", turn + ":" + message);
  }
  override onMemoryWrite(action: string, target: string, content: string): void {
    this.#record("onMemoryWrite", action + ":" + target + ":" + content);
  }
  override onMemoryEvict(content: string): void {
    this.#record("onMemoryEvict", content);
  }
  override onDelegation(task: string, result: string): void {
    this.#record("onDelegation", task + "=>" + result);
  }
  override onSessionEnd(messages: unknown[]): void {
    if (messages.length === 0) throw new Error("end exploded");
    this.#record("onSessionEnd", String(messages.length));
  }
  override prefetch(): string {
    return JSON.stringify(this.#seen.map((s) => s.text));
  }
  override handleToolCall(): string {
    return JSON.stringify(this.#seen);
  }
}
`;

async function castsHome(): Promise<TempHome> {
  const h = await tempHome();
  await writeProvider(h.plugins, "casts", {
    "mod.ts": CASTS_SOURCE,
    "plugin.yaml": "name: casts\npermissions:\n  env: [CASTS_KEY]\n",
  });
  return h;
}

/** The user's approval of what casts asks for ('hermes memory setup casts'). */
const APPROVED = { memory: { permissions: { casts: { env: ["CASTS_KEY"] } } } };

async function start(
  h: TempHome,
  options: Partial<SandboxStartOptions> = {},
): Promise<SandboxedMemoryProvider> {
  const candidate = await findMemoryProvider("casts", {
    hermesHome: h.home,
    bundledDir: h.outside,
    config: {},
  });
  assert.ok(candidate, "casts not found");
  const provider = await SandboxedMemoryProvider.start(candidate, {
    grant: grantForCandidate(candidate, {
      hermesHome: h.home,
      config: APPROVED,
    }),
    ...options,
  });
  assert.ok(provider, "casts offered no provider");
  return provider;
}

/** Whether `promise` settles within a few microtasks (no message round trip). */
async function settlesAtOnce(promise: unknown): Promise<boolean> {
  let settled = false;
  Promise.resolve(promise).then(() => settled = true, () => settled = true);
  for (let i = 0; i < 5; i++) await Promise.resolve();
  return settled;
}

const texts = async (p: MemoryProvider): Promise<string[]> =>
  JSON.parse(await p.prefetch("q", {}));

Deno.test("casts resolve once posted and run in arrival order before later calls", async () => {
  await using h = await castsHome();
  await using provider = await start(h);
  // slow-1 sleeps 40 ms in the worker; the host does not wait for it.
  assert.equal(
    await settlesAtOnce(provider.syncTurn("slow-1", "a", { sessionId: "s" })),
    true,
  );
  await provider.queuePrefetch("q-1", { sessionId: "s" });
  await provider.syncTurn("fast-2", "b", { sessionId: "s" });
  await provider.onTurnStart(3, "hello", {});
  await provider.onMemoryWrite("add", "memory", "fact", {});
  await provider.onMemoryEvict("old fact", "memory", {});
  await provider.onDelegation("task", "done", {});
  await provider.onSessionEnd([{ role: "user", content: "x" }]);
  // prefetch is a call: it starts only after every cast posted before it.
  assert.deepEqual(await texts(provider), [
    "slow-1/a",
    "q-1",
    "fast-2/b",
    "3:hello",
    "add:memory:fact",
    "old fact",
    "task=>done",
    "1",
  ]);
  // Calls still run concurrently with each other.
  const [a, b] = await Promise.all([texts(provider), texts(provider)]);
  assert.deepEqual(a, b);
});

Deno.test("a throwing cast is logged once, as the manager logs that hook, and the next call works", async () => {
  await using h = await castsHome();
  await using provider = await start(h);
  using logs = captureLogs();
  await provider.syncTurn("throw", "", {});
  await provider.queuePrefetch("throw", {});
  await provider.onSessionEnd([]);
  await provider.syncTurn("after", "ok", {});
  assert.deepEqual(await texts(provider), ["after/ok"]);
  const warn = logs.at("warn");
  assert.equal(warn.length, 2, warn.join("\n"));
  assert.equal(
    warn[0],
    "Memory provider 'casts' syncTurn failed: sync exploded",
  );
  // onSessionEnd failures carry the stack, as in the manager.
  assert.match(
    warn[1] ?? "",
    /^Memory provider 'casts' onSessionEnd failed: end exploded\nError: end exploded\n\s+at /,
  );
  assert.deepEqual(
    logs.at("debug").filter((l) => l.includes("failed")),
    ["Memory provider 'casts' queuePrefetch failed: warm exploded"],
  );
  assert.ok(
    !logs.lines.some((l) => l.includes("unhandled")),
    logs.lines.join("\n"),
  );
});

Deno.test("through a MemoryManager a failing cast logs the same line as the in-process provider", async () => {
  await using h = await castsHome();
  const lines: Record<string, string[]> = {};
  for (const sandbox of ["none", "worker"] as const) {
    const provider = await loadMemoryProvider("casts", {
      hermesHome: h.home,
      bundledDir: h.outside,
      config: APPROVED,
      hostCheck: false,
      sandbox,
    });
    assert.ok(provider);
    const manager = new MemoryManager({ config: {} });
    assert.equal(await manager.addProvider(provider), true);
    using logs = captureLogs();
    manager.syncAll("throw", "reply", { sessionId: "s" });
    manager.queuePrefetchAll("throw", { sessionId: "s" });
    assert.equal(await manager.flushPending(5000), true);
    lines[sandbox] = logs.lines.filter((l) => l.includes("failed"));
    await manager.shutdownAll();
  }
  assert.deepEqual(lines.worker, [
    "warn Memory provider 'casts' syncTurn failed: sync exploded",
    "debug Memory provider 'casts' queuePrefetch failed: warm exploded",
  ]);
  assert.deepEqual(lines.worker, lines.none);
});

Deno.test("a cast runs under the home override and secret scope of its caller at post time", async () => {
  await using h = await castsHome();
  await using provider = await start(h);
  const other = join(h.home, "profiles", "coder");
  // The worker is still sleeping in slow-0 when the host leaves the scope.
  await provider.syncTurn("slow-0", "", {});
  withHermesHome(
    other,
    () =>
      withSecretScope({ CASTS_KEY: "k-1", OPENAI_API_KEY: "sk-x" }, () => {
        provider.syncTurn("scoped", "", {});
        provider.queuePrefetch("scoped-warm", {});
      }),
  );
  await provider.syncTurn("unscoped", "", {});
  const seen = JSON.parse(
    await provider.handleToolCall("x", {}, {}),
  ) as Record<string, unknown>[];
  assert.deepEqual(seen.map((s) => [s.text, s.home, s.key, s.scope]), [
    ["slow-0/", h.home, null, null],
    ["scoped/", other, "k-1", ["CASTS_KEY"]],
    ["scoped-warm", other, "k-1", ["CASTS_KEY"]],
    ["unscoped/", h.home, null, null],
  ]);
});

Deno.test("shutdown() and MemoryManager.flushPending() wait for the casts still queued in the worker", async () => {
  await using h = await castsHome();
  const turns = join(h.home, "casts", "turns.txt");
  const provider = await start(h);
  for (let i = 1; i <= 5; i++) await provider.syncTurn(`file:${i}`, "", {});
  await provider.shutdown();
  assert.equal(provider.stopped, "it was shut down");
  assert.equal(await Deno.readTextFile(turns), "1\n2\n3\n4\n5\n");

  await Deno.remove(turns);
  const managed = await start(h);
  const manager = new MemoryManager({ config: {} });
  assert.equal(await manager.addProvider(managed), true);
  manager.syncAll("file:a", "", { sessionId: "s" });
  manager.syncAll("file:b", "", { sessionId: "s" });
  assert.equal(await manager.flushPending(5000), true);
  // Read directly: flushPending alone guarantees the writes have run.
  assert.equal(await Deno.readTextFile(turns), "a\nb\n");
  manager.syncAll("file:c", "", { sessionId: "s" });
  manager.syncAll("file:d", "", { sessionId: "s" });
  await manager.shutdownAll();
  assert.equal(managed.stopped, "it was shut down");
  assert.equal(await Deno.readTextFile(turns), "a\nb\nc\nd\n");
});

Deno.test("a hung cast never blocks the host: later calls time out and shutdown stays bounded", async () => {
  await using h = await castsHome();
  using logs = captureLogs();
  const provider = await start(h, {
    callTimeoutMs: 200,
    castTimeoutMs: 60_000,
    shutdownTimeoutMs: 300,
  });
  assert.equal(await settlesAtOnce(provider.syncTurn("hang", "", {})), true);
  let started = performance.now();
  await assert.rejects(
    async () => await provider.prefetch("q", {}),
    (error: unknown) =>
      error instanceof ProviderCallTimeoutError && error.method === "prefetch",
  );
  const waited = performance.now() - started;
  assert.ok(waited >= 150 && waited < 5000, `prefetch took ${waited} ms`);
  // More casts are still posted at once.
  assert.equal(await settlesAtOnce(provider.syncTurn("later", "", {})), true);
  assert.equal((await provider.drain(50)).drained, false);
  started = performance.now();
  await provider.shutdown();
  const took = performance.now() - started;
  assert.ok(took < 3000, `shutdown took ${took} ms`);
  assert.equal(provider.stopped, "it was shut down");
  // Nothing accepted is dropped: both turns wait on disk for the next start.
  const kept = join(h.home, "pending_writes", "casts.json");
  assert.deepEqual(logs.at("warn"), [
    `Memory provider 'casts' did not finish its queued hooks within 300 ms and was stopped: 2 accepted write(s) it did not report durable are kept in ${kept} and handed over when it next starts`,
  ]);
  const file = JSON.parse(await Deno.readTextFile(kept));
  assert.deepEqual(file.writes.map((w: { args: string[] }) => w.args[0]), [
    "hang",
    "later",
  ]);
  assert.equal((await Deno.stat(kept)).mode! & 0o777, 0o600);
  await assert.rejects(async () => await provider.syncTurn("gone", "", {}), {
    name: "ProviderWorkerStoppedError",
  });
});

Deno.test("a hung cast is abandoned after castTimeoutMs and the worker serves the next messages", async () => {
  await using h = await castsHome();
  using logs = captureLogs();
  await using provider = await start(h, {
    callTimeoutMs: 10_000,
    castTimeoutMs: 100,
  });
  await provider.syncTurn("hang", "", {});
  await provider.syncTurn("next", "", {});
  assert.deepEqual(await texts(provider), ["next/"]);
  assert.deepEqual(logs.at("warn"), [
    "Memory provider 'casts' syncTurn failed: Memory provider 'casts' did not finish syncTurn() within 100 ms: the call was abandoned; check the provider's service or raise its timeout",
  ]);
  assert.equal((await provider.drain(5000)).drained, true);
});

Deno.test("drain() after the worker is gone: drained when every cast was confirmed, else the count of casts it may have lost", async () => {
  await using h = await castsHome();
  const quiet = await start(h);
  await quiet.syncTurn("one", "", {});
  assert.deepEqual(await quiet.drain(5000), { drained: true });
  quiet.terminate();
  assert.deepEqual(await quiet.drain(5000), { drained: true, pending: 0 });
  const busy = await start(h);
  await busy.syncTurn("slow-1", "", {});
  await busy.syncTurn("slow-2", "", {});
  busy.terminate();
  assert.deepEqual(await busy.drain(5000), { drained: false, pending: 2 });
});

// Records whether each syncTurn got a transcript; `bare` declares its
// syncTurn takes none, `full` keeps the contract's default.
const transcriptSource = (name: string, declares: boolean) =>
  `import {
  MemoryProvider,
  type SyncTurnOptions,
  type ToolSchema,
} from "@hermes/memory";
export class Turns extends MemoryProvider {
  ${declares ? "override readonly syncTurnTakesMessages: boolean = false;" : ""}
  #seen: unknown[] = [];
  get name(): string { return "${name}"; }
  isAvailable(): boolean { return true; }
  initialize(): void {}
  getToolSchemas(): ToolSchema[] { return []; }
  override syncTurn(_u: string, _a: string, options: SyncTurnOptions): void {
    this.#seen.push("messages" in options ? options.messages : "none");
  }
  override prefetch(): string { return JSON.stringify(this.#seen); }
}
`;

Deno.test("a sandboxed provider whose syncTurn takes no transcript is sent none; one that takes it gets it redacted", async () => {
  await using h = await tempHome();
  for (const [name, declares] of [["bare", true], ["full", false]] as const) {
    await writeProvider(h.plugins, name, {
      "mod.ts": transcriptSource(name, declares),
      "plugin.yaml": `name: ${name}\n`,
    });
  }
  const secret = "sk-proj-9f8e7d6c5b4a39281706";
  const messages = [{ role: "user", content: `key ${secret}` }];
  const seen: Record<string, unknown> = {};
  for (const name of ["bare", "full"]) {
    const provider = await loadMemoryProvider(name, {
      hermesHome: h.home,
      bundledDir: h.outside,
      config: {},
      hostCheck: false,
    });
    assert.ok(provider instanceof SandboxedMemoryProvider);
    // The proxy learned the declaration at load.
    assert.equal(provider.syncTurnTakesMessages, name === "full");
    const manager = new MemoryManager({ config: {} });
    assert.equal(await manager.addProvider(provider), true);
    manager.syncAll("u", "a", { sessionId: "s", messages });
    assert.equal(await manager.flushPending(5000), true);
    // The worker passes a cast's arguments on as they came over the pipe.
    seen[name] = JSON.parse(await provider.prefetch("q", {}));
    await manager.shutdownAll();
  }
  assert.deepEqual(seen, {
    bare: ["none"],
    full: [[{ role: "user", content: `key ${REDACTED}` }]],
  });
});
