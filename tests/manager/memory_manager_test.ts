import assert from "node:assert/strict";
import { mkdtemp, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { getHermesHome } from "../../src/profile/hermes_home.ts";
import {
  withHermesHome,
  withSecretScope,
} from "../../src/profile/context_scope.ts";
import { type LogLevel, setLogger } from "../../src/core/log.ts";
import { MemoryManager } from "../../src/manager/memory_manager.ts";
import {
  type ChatMessage,
  type InitializeOptions,
  type MaybePromise,
  MemoryProvider,
  recallStatus,
  type ToolSchema,
} from "../../src/core/memory_provider.ts";
import { REDACTED } from "../../src/core/redact.ts";
import { getSecret } from "../../src/profile/secret_scope.ts";

// -- helpers -----------------------------------------------------------------

type Impl = Partial<Record<string, (...args: unknown[]) => unknown>>;

/** A provider that records every call and runs optional overrides. */
class Fake extends MemoryProvider {
  readonly calls: Array<[string, ...unknown[]]> = [];
  readonly #name: string;
  readonly #impl: Impl;

  constructor(name: string, impl: Impl = {}) {
    super();
    this.#name = name;
    this.#impl = impl;
  }

  #run(method: string, args: unknown[], fallback: unknown): unknown {
    this.calls.push([method, ...args]);
    const fn = this.#impl[method];
    return fn ? fn.apply(this, args) : fallback;
  }

  /** The calls of one method, without the method name. */
  callsOf(method: string): unknown[][] {
    return this.calls.filter((c) => c[0] === method).map((c) => c.slice(1));
  }

  get name(): string {
    return this.#name;
  }
  isAvailable(): boolean {
    return true;
  }
  initialize(
    sessionId: string,
    options: InitializeOptions,
  ): MaybePromise<void> {
    return this.#run(
      "initialize",
      [sessionId, options],
      undefined,
    ) as MaybePromise<void>;
  }
  getToolSchemas(): ToolSchema[] {
    return this.#run("getToolSchemas", [], []) as ToolSchema[];
  }
  override systemPromptBlock(): string {
    return this.#run("systemPromptBlock", [], "") as string;
  }
  override prefetch(query: string, options: unknown): string {
    return this.#run("prefetch", [query, options], "") as string;
  }
  override queuePrefetch(query: string, options: unknown): MaybePromise<void> {
    return this.#run(
      "queuePrefetch",
      [query, options],
      undefined,
    ) as MaybePromise<void>;
  }
  override recallStatus(): null {
    return this.#run("recallStatus", [], null) as null;
  }
  override syncTurn(
    user: string,
    assistant: string,
    options: unknown,
  ): MaybePromise<void> {
    return this.#run(
      "syncTurn",
      [user, assistant, options],
      undefined,
    ) as MaybePromise<void>;
  }
  override handleToolCall(
    tool: string,
    args: Record<string, unknown>,
    options: unknown,
  ): string {
    return this.#run("handleToolCall", [tool, args, options], "{}") as string;
  }
  override shutdown(): MaybePromise<void> {
    return this.#run("shutdown", [], undefined) as MaybePromise<void>;
  }
  override onTurnStart(
    turn: number,
    message: string,
    options: unknown,
  ): MaybePromise<void> {
    return this.#run(
      "onTurnStart",
      [turn, message, options],
      undefined,
    ) as MaybePromise<void>;
  }
  override onSessionEnd(messages: ChatMessage[]): MaybePromise<void> {
    return this.#run("onSessionEnd", [messages], undefined) as MaybePromise<
      void
    >;
  }
  override onSessionSwitch(id: string, options: unknown): void | boolean {
    return this.#run("onSessionSwitch", [id, options], undefined) as
      | void
      | boolean;
  }
  override onPreCompress(messages: ChatMessage[], options: unknown): string {
    return this.#run("onPreCompress", [messages, options], "") as string;
  }
  override onDelegation(
    task: string,
    result: string,
    options: unknown,
  ): MaybePromise<void> {
    return this.#run(
      "onDelegation",
      [task, result, options],
      undefined,
    ) as MaybePromise<void>;
  }
  override onMemoryWrite(
    action: string,
    target: string,
    content: string,
    metadata?: unknown,
  ): MaybePromise<void> {
    return this.#run(
      "onMemoryWrite",
      [action, target, content, metadata],
      undefined,
    ) as MaybePromise<void>;
  }
  override onMemoryEvict(
    content: string,
    target: string,
    options: unknown,
  ): MaybePromise<void> {
    return this.#run(
      "onMemoryEvict",
      [content, target, options],
      undefined,
    ) as MaybePromise<void>;
  }
}

function withVersion(provider: Fake, version: unknown): Fake {
  Object.defineProperty(provider, "preCompressCheckpointApiVersion", {
    value: version,
  });
  return provider;
}

function captureLogs(): {
  lines: Array<[LogLevel, string]>;
  text(level?: LogLevel): string[];
  [Symbol.dispose](): void;
} {
  const lines: Array<[LogLevel, string]> = [];
  const previous = setLogger({
    log: (level, message) => lines.push([level, message]),
  });
  return {
    lines,
    text: (level) =>
      lines.filter(([l]) => level === undefined || l === level).map(([, m]) =>
        m
      ),
    [Symbol.dispose]: () => void setLogger(previous),
  };
}

function boom(): never {
  throw new Error("boom");
}

const never = (): Promise<never> => new Promise<never>(() => {});
const delay = (ms: number): Promise<void> =>
  new Promise((r) => setTimeout(r, ms));

interface Deferred<T> {
  promise: Promise<T>;
  resolve(value: T): void;
}
function deferred<T>(): Deferred<T> {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => resolve = r);
  return { promise, resolve };
}

async function managerWith(
  providers: MemoryProvider[],
  options: ConstructorParameters<typeof MemoryManager>[0] = {},
): Promise<MemoryManager> {
  const manager = new MemoryManager({
    externalPrefetchTimeoutMs: 40,
    shutdownDrainTimeoutMs: 60,
    ...options,
  });
  for (const p of providers) await manager.addProvider(p);
  return manager;
}

const SECRET = "sk-proj-9f8e7d6c5b4a39281706";

// -- construction and registration -------------------------------------------

Deno.test("MemoryManager rejects a non-positive timeout option", () => {
  for (const bad of [0, -1, Number.NaN, Infinity]) {
    assert.throws(
      () => new MemoryManager({ externalPrefetchTimeoutMs: bad }),
      (e: unknown) =>
        e instanceof RangeError &&
        e.message.includes("'externalPrefetchTimeoutMs'") &&
        /^[A-Z]/.test(e.message) && !e.message.endsWith("."),
    );
  }
  assert.throws(
    () => new MemoryManager({ shutdownDrainTimeoutMs: 0 }),
    RangeError,
  );
});

Deno.test("MemoryManager.addProvider() accepts builtin plus one external and rejects a second external", async () => {
  using logs = captureLogs();
  const builtin = new Fake("builtin");
  const honcho = new Fake("honcho");
  const mem0 = new Fake("mem0", {
    getToolSchemas: () => [{ name: "mem0_search" }],
  });
  const manager = await managerWith([]);
  assert.equal(await manager.addProvider(builtin), true);
  assert.equal(await manager.addProvider(honcho), true);
  assert.equal(await manager.addProvider(mem0), false);
  assert.deepEqual(manager.providers, [builtin, honcho]);
  assert.equal(manager.hasTool("mem0_search"), false);
  assert.ok(
    logs.text("warn").includes(
      "Rejected memory provider 'mem0' — external provider 'honcho' is already registered. Only one external memory provider is allowed at a time. Configure which one via memory.provider in config.yaml.",
    ),
  );
  assert.equal(await manager.addProvider(new Fake("builtin")), true);
});

Deno.test("MemoryManager.addProvider() leaves the manager untouched when the schema load fails", async () => {
  const manager = await managerWith([new Fake("builtin")]);
  const broken = new Fake("broken", { getToolSchemas: boom });
  await assert.rejects(() => manager.addProvider(broken), /boom/);
  for (const garbage of [null, { name: "x" }, "tools", 3]) {
    const odd = new Fake("odd", { getToolSchemas: () => garbage });
    await assert.rejects(() => manager.addProvider(odd), TypeError);
  }
  assert.deepEqual(manager.providers.map((p) => p.name), ["builtin"]);
  assert.equal(await manager.addProvider(new Fake("honcho")), true);
});

Deno.test("MemoryManager.addProvider() rejects values that are not providers", async () => {
  const manager = new MemoryManager();
  await assert.rejects(
    () => manager.addProvider(null as unknown as MemoryProvider),
    TypeError,
  );
  await assert.rejects(
    () => manager.addProvider({} as MemoryProvider),
    TypeError,
  );
});

Deno.test("MemoryManager.addProvider() routes tools, refusing reserved names and conflicts", async () => {
  using logs = captureLogs();
  const builtin = new Fake("builtin", {
    getToolSchemas: () => [{ name: "shared_tool" }],
  });
  const honcho = new Fake("honcho", {
    getToolSchemas: () => [
      { name: "memory" },
      { name: "clarify" },
      {
        type: "function",
        function: { name: "honcho_profile", parameters: {} },
      },
      { name: "shared_tool" },
      { description: "nameless" },
      null,
      "junk",
    ],
  });
  const manager = await managerWith([builtin, honcho]);
  assert.deepEqual([...manager.getAllToolNames()].sort(), [
    "honcho_profile",
    "shared_tool",
  ]);
  assert.equal(manager.hasTool("memory"), false);
  assert.equal(manager.hasTool("honcho_profile"), true);
  const warns = logs.text("warn");
  assert.ok(
    warns.includes(
      "Memory provider 'honcho' tool 'memory' shadows a reserved core tool name; registration ignored. Core tools always win — rename the provider's tool to something unique.",
    ),
  );
  assert.ok(
    warns.includes(
      "Memory tool name conflict: 'shared_tool' already registered by builtin, ignoring from honcho",
    ),
  );
  // The first owner keeps the tool.
  await manager.handleToolCall("shared_tool", {});
  assert.equal(builtin.callsOf("handleToolCall").length, 1);
  assert.equal(honcho.callsOf("handleToolCall").length, 0);
});

Deno.test("MemoryManager.providers, getProvider() and getAllToolNames() return copies", async () => {
  const builtin = new Fake("builtin");
  const manager = await managerWith([builtin]);
  manager.providers.push(new Fake("x"));
  manager.getAllToolNames().add("y");
  assert.deepEqual(manager.providers, [builtin]);
  assert.equal(manager.hasTool("y"), false);
  assert.equal(manager.getProvider("builtin"), builtin);
  assert.equal(manager.getProvider("missing"), null);
});

// -- tools -------------------------------------------------------------------

Deno.test("MemoryManager.handleToolCall() returns a JSON error for an unrouted tool", async () => {
  const manager = await managerWith([new Fake("builtin")]);
  const out = await manager.handleToolCall("nope", {});
  assert.deepEqual(JSON.parse(out), {
    error: "No memory provider handles tool 'nope'",
  });
});

Deno.test("MemoryManager.handleToolCall() redacts arguments without mutating them", async () => {
  const honcho = new Fake("honcho", {
    getToolSchemas: () => [{ name: "honcho_search" }],
    handleToolCall: () => '{"ok": true}',
  });
  const manager = await managerWith([honcho]);
  const args = { query: `key ${SECRET}`, limit: 3 };
  assert.equal(
    await manager.handleToolCall("honcho_search", args, { sessionId: "s" }),
    '{"ok": true}',
  );
  const [tool, seen, options] = honcho.callsOf("handleToolCall")[0]!;
  assert.equal(tool, "honcho_search");
  assert.deepEqual(seen, { query: `key ${REDACTED}`, limit: 3 });
  assert.deepEqual(options, { sessionId: "s" });
  assert.equal(args.query, `key ${SECRET}`);
});

Deno.test("MemoryManager.handleToolCall() turns a provider failure into a JSON error and logs it", async () => {
  using logs = captureLogs();
  const honcho = new Fake("honcho", {
    getToolSchemas: () => [{ name: "honcho_search" }, { name: "honcho_null" }, {
      name: "honcho_async",
    }],
    handleToolCall: (tool: unknown) => {
      if (tool === "honcho_null") return null;
      if (tool === "honcho_async") {
        return Promise.reject(new Error("network down"));
      }
      throw new Error("boom");
    },
  });
  const manager = await managerWith([honcho]);
  assert.deepEqual(
    JSON.parse(await manager.handleToolCall("honcho_search", {})),
    {
      error: "Memory tool 'honcho_search' failed: boom",
    },
  );
  assert.deepEqual(
    JSON.parse(await manager.handleToolCall("honcho_async", {})),
    {
      error: "Memory tool 'honcho_async' failed: network down",
    },
  );
  const garbage = JSON.parse(await manager.handleToolCall("honcho_null", {}));
  assert.match(garbage.error, /^Memory tool 'honcho_null' failed: /);
  assert.ok(
    logs.text("error").includes(
      "Memory provider 'honcho' handleToolCall(honcho_search) failed: boom",
    ),
  );
});

Deno.test("MemoryManager.getAllToolSchemas() dedupes, unwraps and survives failing providers", async () => {
  using logs = captureLogs();
  let fail = false;
  const builtin = new Fake("builtin", {
    getToolSchemas: () => fail ? boom() : [{ name: "a" }, { name: "memory" }],
  });
  const honcho = new Fake("honcho", {
    getToolSchemas: () => [
      { type: "function", function: { name: "b" } },
      { name: "a", description: "second" },
      { description: "nameless" },
    ],
  });
  const manager = await managerWith([builtin, honcho]);
  assert.deepEqual(await manager.getAllToolSchemas(), [{ name: "a" }, {
    name: "b",
  }]);
  assert.ok(
    logs.text("warn").some((m) =>
      m.startsWith(
        "Memory provider 'honcho' returned a tool schema with no resolvable name",
      )
    ),
  );
  fail = true;
  assert.deepEqual(await manager.getAllToolSchemas(), [{ name: "b" }, {
    name: "a",
    description: "second",
  }]);
  assert.ok(
    logs.text("warn").includes(
      "Memory provider 'builtin' getToolSchemas() failed: boom",
    ),
  );
});

Deno.test("MemoryManager.getAllToolSchemas() warns about a provider returning a non-array", async () => {
  using logs = captureLogs();
  let value: unknown = [];
  const honcho = new Fake("honcho", { getToolSchemas: () => value });
  const manager = await managerWith([honcho]);
  value = null;
  assert.deepEqual(await manager.getAllToolSchemas(), []);
  assert.ok(
    logs.text("warn").some((m) =>
      m.startsWith("Memory provider 'honcho' getToolSchemas() failed: ")
    ),
  );
});

// -- system prompt, prefetch, recall -------------------------------------------

Deno.test("MemoryManager.buildSystemPrompt() joins non-blank blocks and isolates failures", async () => {
  using logs = captureLogs();
  const manager = await managerWith([
    new Fake("builtin", { systemPromptBlock: () => "Block A" }),
    new Fake("honcho", { systemPromptBlock: boom }),
  ]);
  assert.equal(await manager.buildSystemPrompt(), "Block A");
  assert.ok(
    logs.text("warn").includes(
      "Memory provider 'honcho' systemPromptBlock() failed: boom",
    ),
  );
  const two = await managerWith([
    new Fake("builtin", { systemPromptBlock: () => "A" }),
    new Fake("honcho", { systemPromptBlock: () => Promise.resolve("B") }),
  ]);
  assert.equal(await two.buildSystemPrompt(), "A\n\nB");
  const blanks = await managerWith([
    new Fake("builtin", { systemPromptBlock: () => "  \n" }),
    new Fake("honcho", { systemPromptBlock: () => 42 }),
  ]);
  assert.equal(await blanks.buildSystemPrompt(), "");
});

Deno.test("MemoryManager.prefetchAll() merges results in order and skips blanks", async () => {
  const manager = await managerWith([
    new Fake("builtin", { prefetch: () => "from builtin" }),
    new Fake("honcho", { prefetch: () => Promise.resolve("from honcho") }),
  ]);
  assert.equal(
    await manager.prefetchAll("what do I like?", { sessionId: "s1" }),
    "from builtin\n\nfrom honcho",
  );
  const blank = await managerWith([
    new Fake("builtin", { prefetch: () => "   " }),
    new Fake("honcho", { prefetch: () => "only" }),
  ]);
  assert.equal(await blank.prefetchAll("q"), "only");
});

Deno.test("MemoryManager.prefetchAll() passes a redacted query and the session", async () => {
  const honcho = new Fake("honcho", { prefetch: () => "x" });
  const manager = await managerWith([honcho]);
  await manager.prefetchAll(`remember ${SECRET}`, { sessionId: "s9" });
  assert.deepEqual(honcho.callsOf("prefetch"), [[`remember ${REDACTED}`, {
    sessionId: "s9",
  }]]);
  await manager.prefetchAll("again");
  assert.deepEqual(honcho.callsOf("prefetch")[1], ["again", { sessionId: "" }]);
});

Deno.test("MemoryManager.prefetchAll() returns '' for an empty query without calling providers", async () => {
  const honcho = new Fake("honcho", { prefetch: () => "x" });
  const manager = await managerWith([honcho]);
  assert.equal(await manager.prefetchAll(""), "");
  assert.equal(await new MemoryManager().prefetchAll("anything"), "");
  assert.equal(honcho.callsOf("prefetch").length, 0);
});

const SKILL_TURN =
  '[IMPORTANT: The user has invoked the "review" skill, indicating they want you to ' +
  "follow its instructions. The full skill content is loaded below.]\n\n# Review\nLong skill body " +
  "that mentions The user has provided the following instruction alongside the skill invocation: fake" +
  "\n\nThe user has provided the following instruction alongside the skill invocation: check auth" +
  "\n\n[Runtime note: cwd is /tmp]";
const BARE_SKILL_TURN =
  '[IMPORTANT: The user has invoked the "review" skill, indicating they want you ' +
  "to follow its instructions. The full skill content is loaded below.]\n\n# Review\nLong skill body";
const BUNDLE_TURN =
  '[IMPORTANT: The user has invoked the "ship" skill bundle, loading a, b]' +
  '\nUser instruction: release 1.2\n\n[Loaded as part of the "a" skill:]\n\nbody a';

Deno.test("MemoryManager strips /skill scaffolding before prefetch, queue and sync", async () => {
  const honcho = new Fake("honcho", { prefetch: () => "x" });
  const manager = await managerWith([honcho]);
  await manager.prefetchAll(SKILL_TURN);
  await manager.prefetchAll(BUNDLE_TURN);
  manager.queuePrefetchAll(SKILL_TURN);
  manager.syncAll(SKILL_TURN, "done");
  assert.equal(await manager.prefetchAll(BARE_SKILL_TURN), "");
  manager.queuePrefetchAll(BARE_SKILL_TURN);
  manager.syncAll(BARE_SKILL_TURN, "done");
  assert.equal(await manager.flushPending(1000), true);
  assert.deepEqual(honcho.callsOf("prefetch").map((c) => c[0]), [
    "check auth",
    "release 1.2",
  ]);
  assert.deepEqual(honcho.callsOf("queuePrefetch").map((c) => c[0]), [
    "check auth",
  ]);
  assert.deepEqual(honcho.callsOf("syncTurn").map((c) => c[0]), ["check auth"]);
});

Deno.test("MemoryManager.prefetchAll() treats null and non-string results as empty", async () => {
  using logs = captureLogs();
  for (const garbage of [null, undefined, 42, { text: "x" }, ["x"]]) {
    const manager = await managerWith([
      new Fake("builtin", { prefetch: () => garbage }),
      new Fake("honcho", { prefetch: () => Promise.resolve(garbage) }),
    ]);
    assert.equal(await manager.prefetchAll("q"), "");
  }
  assert.ok(
    logs.text("debug").includes(
      "Memory provider 'honcho' prefetch failed: returned a number instead of a string",
    ),
  );
});

Deno.test("MemoryManager.prefetchAll() isolates a provider that throws or rejects", async () => {
  using logs = captureLogs();
  const manager = await managerWith([
    new Fake("builtin", { prefetch: boom }),
    new Fake("honcho", { prefetch: () => Promise.reject(new Error("down")) }),
  ]);
  assert.equal(await manager.prefetchAll("q"), "");
  assert.deepEqual(
    logs.text("debug").filter((m) => m.includes("prefetch failed")),
    [
      "Memory provider 'builtin' prefetch failed: boom",
      "Memory provider 'honcho' prefetch failed: down",
    ],
  );
  const mixed = await managerWith([
    new Fake("builtin", { prefetch: boom }),
    new Fake("honcho", { prefetch: () => "survivor" }),
  ]);
  assert.equal(await mixed.prefetchAll("q"), "survivor");
});

Deno.test("MemoryManager.prefetchAll() bounds a hung external provider and skips it while stuck", async () => {
  using logs = captureLogs();
  const stuck = deferred<string>();
  let calls = 0;
  const honcho = new Fake("honcho", {
    prefetch: () => ++calls === 1 ? stuck.promise : Promise.resolve("fresh"),
  });
  const builtin = new Fake("builtin", { prefetch: () => "local" });
  const manager = await managerWith([builtin, honcho], {
    externalPrefetchTimeoutMs: 150,
  });
  let started = performance.now();
  assert.equal(await manager.prefetchAll("q1"), "local");
  assert.ok(performance.now() - started >= 140);
  assert.ok(
    logs.text("warn").includes(
      "Memory provider 'honcho' prefetch timed out after 0.1s; skipping it until the stuck call returns",
    ),
  );
  // While stuck, later turns skip the provider without waiting.
  started = performance.now();
  assert.equal(await manager.prefetchAll("q2"), "local");
  assert.ok(performance.now() - started < 75);
  assert.equal(calls, 1);
  // Once the stuck call returns, the provider is asked again.
  stuck.resolve("late");
  await delay(0);
  assert.equal(await manager.prefetchAll("q3"), "local\n\nfresh");
  assert.equal(calls, 2);
});

Deno.test("MemoryManager.prefetchAll() with a never-settling provider leaves no timer behind", async () => {
  const manager = await managerWith([new Fake("honcho", { prefetch: never })], {
    externalPrefetchTimeoutMs: 10,
  });
  assert.equal(await manager.prefetchAll("q"), "");
  assert.equal(await manager.prefetchAll("q"), "");
  // The sanitizers fail this test if a timer is still pending here.
});

Deno.test("MemoryManager.prefetchAll() starts no timer when providers answer synchronously", async () => {
  const manager = await managerWith([
    new Fake("builtin", { prefetch: () => "a" }),
    new Fake("honcho", { prefetch: () => "b" }),
  ]);
  const original = globalThis.setTimeout;
  let timers = 0;
  globalThis.setTimeout = ((...args: Parameters<typeof setTimeout>) => {
    timers++;
    return original(...args);
  }) as typeof setTimeout;
  try {
    assert.equal(await manager.prefetchAll("q"), "a\n\nb");
  } finally {
    globalThis.setTimeout = original;
  }
  assert.equal(timers, 0);
});

Deno.test("MemoryManager.prefetchAll() does not bound the builtin provider", async () => {
  const manager = await managerWith([
    new Fake("builtin", {
      prefetch: async () => (await delay(60), "slow builtin"),
    }),
  ], { externalPrefetchTimeoutMs: 10 });
  assert.equal(await manager.prefetchAll("q"), "slow builtin");
});

Deno.test("MemoryManager.prefetchAll() spills oversized external recall with the policy snapshotted at registration", async () => {
  const dir = await mkdtemp(join(tmpdir(), "hermes-spill-"));
  try {
    const config = {
      memory: { prefetch_spill_enabled: true },
      hooks: {
        output_spill: {
          max_chars: 40,
          preview_head: 5,
          preview_tail: 5,
          directory: dir,
        },
      },
    };
    const big = "x".repeat(100);
    const manager = await managerWith([
      new Fake("builtin", { prefetch: () => "b".repeat(100) }),
      new Fake("honcho", { prefetch: () => big }),
    ], { config });
    config.memory.prefetch_spill_enabled = false; // after registration: ignored
    const out = await manager.prefetchAll("q", { sessionId: "sess" });
    const [builtinPart, honchoPart] = out.split("\n\n");
    assert.equal(builtinPart, "b".repeat(100));
    assert.match(
      honchoPart!,
      /^\[honcho memory prefetch output truncated — 100 chars; full content saved to /,
    );
    assert.deepEqual((await readdir(join(dir, "sess"))).length, 1);
    const small = await managerWith([
      new Fake("honcho", { prefetch: () => "small" }),
    ], { config });
    assert.equal(await small.prefetchAll("q"), "small");
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

Deno.test("MemoryManager.describeRecall() renders the exact indicator strings", async () => {
  const manager = await managerWith([
    new Fake("builtin", { recallStatus: () => recallStatus("Built-in", 1) }),
    new Fake("honcho", {
      recallStatus: () => Promise.resolve(recallStatus("Honcho", 3)),
    }),
  ]);
  assert.equal(
    await manager.describeRecall(),
    "🧠 Built-in — recalled 1 memory  🧠 Honcho — recalled 3 memories",
  );
  for (
    const [count, detail] of [[0, "recalled relevant memory"], [
      -2,
      "recalled relevant memory",
    ]] as const
  ) {
    const m = await managerWith([
      new Fake("honcho", {
        recallStatus: () => recallStatus("Hindsight", count, { glyph: "◆" }),
      }),
    ]);
    assert.equal(await m.describeRecall(), `◆ Hindsight — ${detail}`);
  }
});

Deno.test("MemoryManager.describeRecall() skips null, garbage and failing statuses", async () => {
  using logs = captureLogs();
  const manager = await managerWith([
    new Fake("builtin", { recallStatus: () => null }),
    new Fake("honcho", { recallStatus: boom }),
  ]);
  assert.equal(await manager.describeRecall(), "");
  assert.ok(
    logs.text("debug").includes(
      "Memory provider 'honcho' recallStatus() failed: boom",
    ),
  );
  const garbage = await managerWith([
    new Fake("builtin", { recallStatus: () => "3 memories" }),
    new Fake("honcho", {
      recallStatus: () => ({ providerLabel: "H", count: 2 }),
    }),
  ]);
  assert.equal(await garbage.describeRecall(), "🧠 H — recalled 2 memories");
});

Deno.test("MemoryManager.describeRecall() bounds a hung external provider and skips it while stuck", async () => {
  using logs = captureLogs();
  const honcho = new Fake("honcho", { recallStatus: never });
  const builtin = new Fake("builtin", {
    recallStatus: () => recallStatus("Built-in", 2),
  });
  const manager = await managerWith([builtin, honcho], {
    externalPrefetchTimeoutMs: 40,
  });
  assert.equal(
    await manager.describeRecall(),
    "🧠 Built-in — recalled 2 memories",
  );
  assert.ok(
    logs.text("warn").some((l) =>
      l.startsWith("Memory provider 'honcho' recallStatus() timed out")
    ),
  );
  const started = performance.now();
  assert.equal(
    await manager.describeRecall(),
    "🧠 Built-in — recalled 2 memories",
  );
  assert.ok(performance.now() - started < 30);
  assert.equal(honcho.callsOf("recallStatus").length, 1);
});

// -- turn start ----------------------------------------------------------------

Deno.test("MemoryManager.onTurnStart() redacts the message and forwards the options", async () => {
  const builtin = new Fake("builtin");
  const honcho = new Fake("honcho", { onTurnStart: boom });
  using logs = captureLogs();
  const manager = await managerWith([honcho, builtin]);
  await manager.onTurnStart(3, `use ${SECRET}`, { model: "m", authorId: null });
  assert.deepEqual(builtin.callsOf("onTurnStart"), [[3, `use ${REDACTED}`, {
    model: "m",
    authorId: null,
  }]]);
  assert.ok(
    logs.text("debug").includes(
      "Memory provider 'honcho' onTurnStart failed: boom",
    ),
  );
});

Deno.test("MemoryManager.onTurnStart() bounds a hung external provider", async () => {
  using _logs = captureLogs();
  const honcho = new Fake("honcho", { onTurnStart: never });
  const manager = await managerWith([honcho], {
    externalPrefetchTimeoutMs: 100,
  });
  await manager.onTurnStart(1, "hi");
  const started = performance.now();
  await manager.onTurnStart(2, "hi");
  assert.ok(performance.now() - started < 50);
  assert.equal(honcho.callsOf("onTurnStart").length, 1);
});

// -- background queue ----------------------------------------------------------

Deno.test("MemoryManager.syncAll() never runs inside the caller's turn", async () => {
  const honcho = new Fake("honcho");
  const manager = await managerWith([honcho]);
  manager.syncAll("u", "a");
  manager.queuePrefetchAll("u");
  assert.equal(honcho.calls.filter((c) => c[0] !== "getToolSchemas").length, 0);
  await Promise.resolve();
  await Promise.resolve();
  assert.equal(honcho.callsOf("syncTurn").length, 0);
  assert.equal(await manager.flushPending(), true);
  assert.equal(honcho.callsOf("syncTurn").length, 1);
  assert.equal(honcho.callsOf("queuePrefetch").length, 1);
});

Deno.test("MemoryManager.syncAll() runs turns in FIFO order with queued prefetches", async () => {
  const order: string[] = [];
  const honcho = new Fake("honcho", {
    syncTurn: async (user: unknown) => {
      await delay(user === "turn 1" ? 20 : 0);
      order.push(`sync ${user}`);
    },
    queuePrefetch: (query: unknown) => void order.push(`prefetch ${query}`),
  });
  const manager = await managerWith([honcho]);
  manager.syncAll("turn 1", "a1");
  manager.queuePrefetchAll("turn 1");
  manager.syncAll("turn 2", "a2");
  manager.queuePrefetchAll("turn 2");
  assert.equal(await manager.flushPending(1000), true);
  assert.deepEqual(order, [
    "sync turn 1",
    "prefetch turn 1",
    "sync turn 2",
    "prefetch turn 2",
  ]);
});

Deno.test("MemoryManager.syncAll() passes messages and turnAuthor only when given", async () => {
  const honcho = new Fake("honcho");
  const manager = await managerWith([honcho]);
  const messages: ChatMessage[] = [{ role: "user", content: "u" }];
  manager.syncAll("u1", "a1", {
    sessionId: "s",
    messages,
    turnAuthor: { id: "42", name: "Ann" },
  });
  manager.syncAll("u2", "a2", { messages: null, turnAuthor: null });
  manager.syncAll("u3", "a3");
  await manager.flushPending(1000);
  assert.deepEqual(honcho.callsOf("syncTurn"), [
    ["u1", "a1", {
      sessionId: "s",
      messages,
      turnAuthor: { id: "42", name: "Ann" },
    }],
    ["u2", "a2", { sessionId: "" }],
    ["u3", "a3", { sessionId: "" }],
  ]);
});

Deno.test("MemoryManager.syncAll() gives the transcript only to providers whose syncTurn takes it, and reads it only for them", async () => {
  class NoTranscript extends Fake {
    override readonly syncTurnTakesMessages: boolean = false;
  }
  const messages: ChatMessage[] = [
    { role: "user", content: `key ${SECRET}` },
    { role: "assistant", content: "ok" },
  ];
  // Counts every read of the transcript's messages (the redaction walks them).
  let reads = 0;
  const watched = new Proxy(messages, {
    get(target, key, receiver) {
      if (typeof key === "string" && /^\d+$/.test(key)) reads++;
      return Reflect.get(target, key, receiver);
    },
  });
  const honcho = new NoTranscript("honcho");
  const builtin = new NoTranscript("builtin");
  const alone = await managerWith([builtin, honcho]);
  alone.syncAll("u1", "a1", { sessionId: "s", messages: watched });
  await alone.flushPending(1000);
  assert.deepEqual(honcho.callsOf("syncTurn"), [["u1", "a1", {
    sessionId: "s",
  }]]);
  assert.equal(reads, 0, "a transcript no provider takes was read (redacted)");

  // A provider that takes it (the default) still gets it, redacted; the other does not.
  const takes = new Fake("builtin");
  const other = new NoTranscript("honcho");
  const mixed = await managerWith([takes, other]);
  mixed.syncAll("u2", "a2", { sessionId: "s", messages: watched });
  await mixed.flushPending(1000);
  assert.deepEqual(takes.callsOf("syncTurn"), [["u2", "a2", {
    sessionId: "s",
    messages: [
      { role: "user", content: `key ${REDACTED}` },
      { role: "assistant", content: "ok" },
    ],
  }]]);
  assert.deepEqual(other.callsOf("syncTurn"), [["u2", "a2", {
    sessionId: "s",
  }]]);
});

Deno.test("MemoryManager.syncAll() redacts the whole hand-off without touching the caller's transcript", async () => {
  const honcho = new Fake("honcho");
  const manager = await managerWith([honcho]);
  const password = "Tr0ub4dor-3x";
  const messages: ChatMessage[] = [
    { role: "tool", content: `DB_PASSWORD=${password}` },
    { role: "assistant", content: `set to ${password}` },
  ];
  const before = structuredClone(messages);
  manager.syncAll(`my password is ${password}`, `noted ${SECRET}`, {
    messages,
  });
  await manager.flushPending(1000);
  const [user, assistant, options] = honcho.callsOf("syncTurn")[0]! as [
    string,
    string,
    { messages: ChatMessage[] },
  ];
  assert.equal(user, `my password is ${REDACTED}`);
  assert.equal(assistant, `noted ${REDACTED}`);
  assert.deepEqual(options.messages, [
    { role: "tool", content: `DB_PASSWORD=${REDACTED}` },
    { role: "assistant", content: `set to ${REDACTED}` },
  ]);
  assert.deepEqual(messages, before);
});

Deno.test("MemoryManager.syncAll() is skipped without providers or user text", async () => {
  const empty = new MemoryManager();
  empty.syncAll("u", "a");
  assert.equal(await empty.flushPending(0), true);
  const honcho = new Fake("honcho");
  const manager = await managerWith([honcho]);
  manager.syncAll("", "a");
  manager.queuePrefetchAll("");
  assert.equal(await manager.flushPending(0), true);
  assert.equal(honcho.callsOf("syncTurn").length, 0);
});

Deno.test("MemoryManager.syncAll() isolates provider failures with a warning", async () => {
  using logs = captureLogs();
  const builtin = new Fake("builtin", { syncTurn: boom });
  const honcho = new Fake("honcho", {
    syncTurn: () => Promise.reject(new Error("429")),
    queuePrefetch: boom,
  });
  const manager = await managerWith([builtin, honcho]);
  manager.syncAll("u", "a");
  manager.queuePrefetchAll("u");
  manager.syncAll("u2", "a2");
  assert.equal(await manager.flushPending(1000), true);
  assert.equal(builtin.callsOf("syncTurn").length, 2);
  assert.equal(honcho.callsOf("syncTurn").length, 2);
  assert.ok(
    logs.text("warn").includes(
      "Memory provider 'builtin' syncTurn failed: boom",
    ),
  );
  assert.ok(
    logs.text("warn").includes("Memory provider 'honcho' syncTurn failed: 429"),
  );
  assert.ok(
    logs.text("debug").includes(
      "Memory provider 'honcho' queuePrefetch failed: boom",
    ),
  );
});

Deno.test("MemoryManager background tasks keep the submitter's profile home and secret scope", async () => {
  const seen: Array<[string, string | undefined]> = [];
  const honcho = new Fake("honcho", {
    syncTurn: async () => {
      await delay(1);
      seen.push([getHermesHome(), getSecret("HONCHO_API_KEY")]);
    },
    queuePrefetch: () =>
      void seen.push([getHermesHome(), getSecret("HONCHO_API_KEY")]),
  });
  const manager = await managerWith([honcho]);
  withHermesHome(
    "/a",
    () =>
      withSecretScope({ HONCHO_API_KEY: "alice-key" }, () => {
        manager.syncAll("u", "a");
      }),
  );
  withHermesHome(
    "/b",
    () =>
      withSecretScope({ HONCHO_API_KEY: "bob-key" }, () => {
        manager.queuePrefetchAll("u");
        manager.syncAll("u", "a");
      }),
  );
  assert.equal(await manager.flushPending(1000), true);
  assert.deepEqual(seen, [["/a", "alice-key"], ["/b", "bob-key"], [
    "/b",
    "bob-key",
  ]]);
});

Deno.test("MemoryManager.flushPending() returns false on timeout behind a hung write", async () => {
  const honcho = new Fake("honcho", { syncTurn: never });
  const manager = await managerWith([honcho]);
  assert.equal(await manager.flushPending(5), true);
  manager.syncAll("u", "a");
  assert.equal(await manager.flushPending(20), false);
  using _logs = captureLogs();
  await manager.shutdownAll();
});

// -- shutdown ------------------------------------------------------------------

Deno.test("MemoryManager.shutdownAll() drains queued work, then shuts providers down in reverse order", async () => {
  const order: string[] = [];
  const builtin = new Fake("builtin", {
    shutdown: () => void order.push("builtin"),
  });
  const honcho = new Fake("honcho", {
    syncTurn: async () => {
      await delay(5);
      order.push("sync");
    },
    shutdown: () => void order.push("honcho"),
  });
  const manager = await managerWith([builtin, honcho]);
  assert.deepEqual(manager.shutdownDrainState, {
    status: "not_started",
    abandonedWrites: 0,
    abandonedPrefetches: 0,
    activeTasks: 0,
    notDurable: 0,
    undrainedProviders: [],
  });
  manager.syncAll("u", "a");
  await manager.shutdownAll();
  assert.deepEqual(order, ["sync", "honcho", "builtin"]);
  assert.deepEqual(manager.shutdownDrainState, {
    status: "drained",
    abandonedWrites: 0,
    abandonedPrefetches: 0,
    activeTasks: 0,
    notDurable: 0,
    undrainedProviders: [],
  });
});

Deno.test("MemoryManager.shutdownAll() reports writes a provider's drain() says are not durable", async () => {
  using logs = captureLogs();
  const drains: (number | undefined)[] = [];
  const honcho = new Fake("honcho");
  Object.assign(honcho, {
    drain: (ms?: number) => {
      drains.push(ms);
      return { drained: false, pending: 7 };
    },
  });
  const manager = await managerWith([new Fake("builtin"), honcho], {
    shutdownDrainTimeoutMs: 200,
  });
  manager.syncAll("u", "a");
  assert.equal(await manager.flushPending(100), false);
  await manager.shutdownAll();
  assert.deepEqual(manager.shutdownDrainState, {
    status: "timed_out",
    abandonedWrites: 0,
    abandonedPrefetches: 0,
    activeTasks: 0,
    notDurable: 7,
    undrainedProviders: ["honcho"],
  });
  assert.equal(drains.length, 2);
  assert.ok(drains.every((ms) => typeof ms === "number" && ms <= 200));
  assert.match(
    logs.text("warn").join("\n"),
    /'honcho' did not report every accepted write durable within 0\.20s \(7 item\(s\) not durable\)/,
  );
  assert.equal(honcho.callsOf("shutdown").length, 1);
});

Deno.test("MemoryManager.flushPending() bounds a provider drain() that never settles", async () => {
  const honcho = new Fake("honcho");
  Object.assign(honcho, { drain: () => new Promise(() => {}) });
  const manager = await managerWith([new Fake("builtin"), honcho]);
  assert.equal(await manager.flushPending(30), false);
  Object.assign(honcho, { drain: () => ({ drained: true, pending: 0 }) });
  assert.equal(await manager.flushPending(30), true);
  await manager.shutdownAll();
  assert.equal(manager.shutdownDrainState.status, "drained");
});

Deno.test("MemoryManager.shutdownAll() with nothing queued reports drained", async () => {
  const manager = await managerWith([new Fake("builtin")]);
  await manager.shutdownAll();
  assert.equal(manager.shutdownDrainState.status, "drained");
});

Deno.test("MemoryManager.shutdownAll() times out on a hung write and reports what it abandoned", async () => {
  using logs = captureLogs();
  const honcho = new Fake("honcho", { syncTurn: never });
  const manager = await managerWith([new Fake("builtin"), honcho], {
    shutdownDrainTimeoutMs: 30,
  });
  manager.syncAll("u1", "a1");
  manager.syncAll("u2", "a2");
  manager.queuePrefetchAll("u2");
  manager.syncAll("u3", "a3");
  const shutdown = manager.shutdownAll();
  assert.deepEqual(manager.shutdownDrainState, {
    status: "draining",
    abandonedWrites: 0,
    abandonedPrefetches: 0,
    activeTasks: 4,
    notDurable: 0,
    undrainedProviders: [],
  });
  await shutdown;
  assert.deepEqual(manager.shutdownDrainState, {
    status: "timed_out",
    abandonedWrites: 2,
    abandonedPrefetches: 1,
    activeTasks: 1,
    notDurable: 0,
    undrainedProviders: [],
  });
  assert.ok(
    logs.text("warn").includes(
      "Memory shutdown drain timed out after 0.03s; abandoning 2 queued memory write(s) and 1 queued prefetch(es); 1 active task(s) remain detached",
    ),
  );
  assert.equal(honcho.callsOf("shutdown").length, 1);
  assert.equal(honcho.callsOf("syncTurn").length, 1);
});

Deno.test("MemoryManager.shutdownAll() rejects later work, is idempotent and bounds a hung shutdown()", async () => {
  using logs = captureLogs();
  const builtin = new Fake("builtin", { shutdown: boom });
  const honcho = new Fake("honcho", { shutdown: never });
  const manager = await managerWith([builtin, honcho], {
    shutdownDrainTimeoutMs: 20,
  });
  const first = manager.shutdownAll();
  assert.equal(manager.shutdownAll(), first);
  await first;
  assert.equal(builtin.callsOf("shutdown").length, 1);
  assert.ok(
    logs.text("warn").includes(
      "Memory provider 'builtin' shutdown failed: boom",
    ),
  );
  assert.ok(
    logs.text("warn").includes(
      "Memory provider 'honcho' shutdown failed: it did not finish within the 20 ms shutdown budget; raise shutdownDrainTimeoutMs to wait longer",
    ),
  );
  manager.syncAll("late", "a");
  manager.queuePrefetchAll("late");
  assert.ok(
    logs.text("warn").includes(
      "Memory manager is shutting down; rejecting late write task",
    ),
  );
  assert.ok(
    logs.text("warn").includes(
      "Memory manager is shutting down; rejecting late prefetch task",
    ),
  );
  assert.equal(await manager.flushPending(0), true);
  assert.equal(honcho.callsOf("syncTurn").length, 0);
});

Deno.test("MemoryManager.shutdownAll() keeps queue, drain() and shutdown() within one shutdownDrainTimeoutMs budget", async () => {
  using logs = captureLogs();
  // Long enough that the old nested bounds (the drain, then each provider's
  // shutdown, each given the whole budget: 3 × 600 ms) break the bound
  // below, short enough to keep the test quick.
  const budget = 600;
  const drains: number[] = [];
  const builtin = new Fake("builtin", { shutdown: never });
  const honcho = new Fake("honcho", {
    syncTurn: () => delay(150),
    shutdown: never,
  });
  Object.assign(honcho, {
    drain: (ms: number) => {
      drains.push(ms);
      return never();
    },
  });
  const manager = await managerWith([builtin, honcho], {
    shutdownDrainTimeoutMs: budget,
  });
  manager.syncAll("u", "a");
  const started = performance.now();
  await manager.shutdownAll();
  const elapsed = performance.now() - started;
  // A correctness bound (one budget, generous slack), not a speed figure.
  assert.ok(
    elapsed < budget + 1000,
    `shutdownAll() took ${Math.round(elapsed)} ms with a ${budget} ms budget`,
  );
  // The drain got what the queued write left of the budget, not all of it.
  assert.equal(drains.length, 1);
  assert.ok(
    drains[0]! <= budget - 100,
    `drain(${drains[0]}) after a 150 ms write`,
  );
  assert.deepEqual(manager.shutdownDrainState, {
    status: "timed_out",
    abandonedWrites: 0,
    abandonedPrefetches: 0,
    activeTasks: 0,
    notDurable: 0,
    undrainedProviders: ["honcho"],
  });
  // Both shutdowns were still called, in reverse order, and named as late.
  assert.equal(honcho.callsOf("shutdown").length, 1);
  assert.equal(builtin.callsOf("shutdown").length, 1);
  const warnings = logs.text("warn").join("\n");
  assert.match(
    warnings,
    /'honcho' did not report every accepted write durable/,
  );
  assert.match(warnings, /Memory provider 'honcho' shutdown failed: /);
  assert.match(warnings, /Memory provider 'builtin' shutdown failed: /);
});

// -- session hooks ---------------------------------------------------------------

Deno.test("MemoryManager.initializeAll() injects hermesHome and keeps failing providers", async () => {
  using logs = captureLogs();
  const builtin = new Fake("builtin", { initialize: boom });
  const honcho = new Fake("honcho");
  const manager = await managerWith([builtin, honcho]);
  await withHermesHome(
    "/profiles/coder",
    () => manager.initializeAll("s1", { platform: "cli" }),
  );
  assert.deepEqual(honcho.callsOf("initialize"), [["s1", {
    platform: "cli",
    hermesHome: "/profiles/coder",
  }]]);
  assert.ok(
    logs.text("warn").includes(
      "Memory provider 'builtin' initialize failed: boom",
    ),
  );
  assert.equal(manager.providers.length, 2);
  await manager.initializeAll("s2", { hermesHome: "/explicit" });
  assert.deepEqual(honcho.callsOf("initialize")[1], ["s2", {
    hermesHome: "/explicit",
  }]);
});

Deno.test("MemoryManager.onSessionEnd() hands every provider a redacted copy", async () => {
  using logs = captureLogs();
  const builtin = new Fake("builtin", { onSessionEnd: boom });
  const honcho = new Fake("honcho");
  const manager = await managerWith([builtin, honcho]);
  const messages: ChatMessage[] = [{ role: "user", content: `key ${SECRET}` }];
  await manager.onSessionEnd(messages);
  await manager.onSessionEnd(null);
  assert.deepEqual(honcho.callsOf("onSessionEnd"), [[[{
    role: "user",
    content: `key ${REDACTED}`,
  }]], [[]]]);
  assert.equal(messages[0]!.content, `key ${SECRET}`);
  assert.ok(
    logs.text("warn").some((m) =>
      m.startsWith(
        "Memory provider 'builtin' onSessionEnd failed: boom\nError: boom",
      )
    ),
  );
});

Deno.test("MemoryManager.onSessionSwitch() forwards options and rewound only when true", async () => {
  const honcho = new Fake("honcho");
  const manager = await managerWith([honcho]);
  assert.equal(await manager.onSessionSwitch(""), true);
  assert.equal(
    await manager.onSessionSwitch("s2", {
      parentSessionId: "s1",
      reason: "resume",
    }),
    true,
  );
  assert.equal(await manager.onSessionSwitch("s2", { rewound: true }), true);
  assert.equal(
    await manager.onSessionSwitch("s3", { rewound: false, reset: true }),
    true,
  );
  assert.deepEqual(honcho.callsOf("onSessionSwitch"), [
    ["s2", { parentSessionId: "s1", reason: "resume", reset: false }],
    ["s2", { parentSessionId: "", reset: false, rewound: true }],
    ["s3", { parentSessionId: "", reset: true }],
  ]);
});

Deno.test("MemoryManager.onSessionSwitch() reports failures and retries only the failed providers", async () => {
  using _logs = captureLogs();
  let honchoOk = false;
  const builtin = new Fake("builtin");
  const honcho = new Fake("honcho", { onSessionSwitch: () => honchoOk });
  const mem = new Fake("builtin", { onSessionSwitch: boom });
  const manager = await managerWith([builtin, honcho]);
  assert.equal(await manager.retryPendingSessionSwitch(), true);
  assert.equal(
    await manager.onSessionSwitch("s2", {
      parentSessionId: "s1",
      reason: "compression",
    }),
    false,
  );
  assert.equal(manager.hasPendingSessionSwitch, true);
  assert.equal(await manager.retryPendingSessionSwitch(), false);
  honchoOk = true;
  assert.equal(await manager.retryPendingSessionSwitch(), true);
  assert.equal(manager.hasPendingSessionSwitch, false);
  assert.equal(builtin.callsOf("onSessionSwitch").length, 1);
  assert.deepEqual(honcho.callsOf("onSessionSwitch").map((c) => c[0]), [
    "s2",
    "s2",
    "s2",
  ]);
  assert.deepEqual(honcho.callsOf("onSessionSwitch")[2]![1], {
    parentSessionId: "s1",
    reason: "compression",
    reset: false,
  });
  const throwing = await managerWith([mem]);
  assert.equal(await throwing.onSessionSwitch("x"), false);
});

Deno.test("MemoryManager.commitSessionBoundary() runs end then switch on the background queue", async () => {
  const order: string[] = [];
  const honcho = new Fake("honcho", {
    syncTurn: async () => {
      await delay(5);
      order.push("sync");
    },
    onSessionEnd: async (messages: unknown) => {
      await delay(5);
      order.push(`end ${(messages as unknown[]).length}`);
    },
    onSessionSwitch: (id: unknown, options: unknown) =>
      void order.push(`switch ${id} ${JSON.stringify(options)}`),
  });
  const manager = await managerWith([honcho]);
  const messages: ChatMessage[] = [{ role: "user", content: "u" }];
  manager.syncAll("u", "a");
  manager.commitSessionBoundary(messages, {
    newSessionId: "s2",
    parentSessionId: "s1",
  });
  messages.push({ role: "user", content: "after" });
  assert.deepEqual(order, []);
  await manager.flushPending(1000);
  assert.deepEqual(order, [
    "sync",
    "end 1",
    'switch s2 {"parentSessionId":"s1","reset":true,"reason":"new_session"}',
  ]);
  const empty = new MemoryManager();
  empty.commitSessionBoundary(messages, { newSessionId: "x" });
  assert.equal(await empty.flushPending(0), true);
});

Deno.test("MemoryManager.onDelegation() redacts task and result", async () => {
  using logs = captureLogs();
  const builtin = new Fake("builtin", { onDelegation: boom });
  const honcho = new Fake("honcho");
  const manager = await managerWith([builtin, honcho]);
  await manager.onDelegation(`use ${SECRET}`, "done", {
    childSessionId: "c1",
    depth: 2,
  });
  await manager.onDelegation("t", "r");
  assert.deepEqual(honcho.callsOf("onDelegation"), [
    [`use ${REDACTED}`, "done", { childSessionId: "c1", depth: 2 }],
    ["t", "r", { childSessionId: "" }],
  ]);
  assert.ok(
    logs.text("debug").includes(
      "Memory provider 'builtin' onDelegation failed: boom",
    ),
  );
});

// -- pre-compress checkpoint -----------------------------------------------------

const RAW: ChatMessage[] = [
  { role: "system", content: "sys" },
  { role: "user", content: `key ${SECRET}` },
];
const EVIDENCE: ChatMessage[] = [{ role: "user", content: `key ${SECRET}` }];

Deno.test("MemoryManager.onPreCompress() gives v1 the raw list and v2 the evidence with requireCheckpoint", async () => {
  const v1 = new Fake("builtin", { onPreCompress: () => "v1 notes" });
  const v2 = withVersion(
    new Fake("archive", { onPreCompress: () => "v2 notes" }),
    2,
  );
  const manager = await managerWith([v1, v2]);
  const out = await manager.onPreCompress(RAW, {
    evidenceMessages: EVIDENCE,
    requireCheckpoint: true,
  });
  assert.equal(out, "v1 notes\n\nv2 notes");
  assert.deepEqual(v1.callsOf("onPreCompress"), [[[
    { role: "system", content: "sys" },
    { role: "user", content: `key ${REDACTED}` },
  ], {}]]);
  assert.deepEqual(v2.callsOf("onPreCompress"), [[[{
    role: "user",
    content: `key ${REDACTED}`,
  }], {
    requireCheckpoint: true,
  }]]);
  assert.equal(RAW[1]!.content, `key ${SECRET}`);
  await manager.onPreCompress(RAW);
  assert.deepEqual(v2.callsOf("onPreCompress")[1]![1], {
    requireCheckpoint: false,
  });
  assert.equal((v2.callsOf("onPreCompress")[1]![0] as unknown[]).length, 2);
});

Deno.test("MemoryManager.onPreCompress() requires a v2 provider in strict mode", async () => {
  const manager = await managerWith([
    new Fake("builtin", { onPreCompress: () => "notes" }),
    withVersion(new Fake("odd"), "two"),
  ]);
  await assert.rejects(
    () => manager.onPreCompress(RAW, { requireCheckpoint: true }),
    (e: unknown) =>
      e instanceof Error &&
      e.message ===
        "No active memory provider completed pre-compress checkpoint API v2",
  );
  assert.equal(await manager.onPreCompress(RAW), "notes");
  assert.equal(await manager.supportsPreCompressCheckpoint(), false);
  assert.equal(await manager.supportsPreCompressCheckpoint(1), true);
  assert.equal(
    await new MemoryManager().supportsPreCompressCheckpoint(),
    false,
  );
});

Deno.test("MemoryManager.onPreCompress() re-throws a checkpoint failure only in strict mode", async () => {
  using logs = captureLogs();
  const v2 = withVersion(
    new Fake("archive", {
      onPreCompress: () => Promise.reject(new Error("disk full")),
    }),
    "2",
  );
  const v1 = new Fake("builtin", { onPreCompress: boom });
  const manager = await managerWith([v1, v2]);
  assert.equal(await manager.supportsPreCompressCheckpoint(), true);
  await assert.rejects(
    () => manager.onPreCompress(RAW, { requireCheckpoint: true }),
    /disk full/,
  );
  assert.equal(await manager.onPreCompress(RAW), "");
  assert.ok(
    logs.text("debug").includes(
      "Memory provider 'builtin' onPreCompress failed: boom",
    ),
  );
  assert.ok(
    logs.text("debug").includes(
      "Memory provider 'archive' onPreCompress failed: disk full",
    ),
  );
  const v3 = withVersion(new Fake("future", { onPreCompress: () => "ok" }), 3);
  const strictV3 = await managerWith([v3]);
  assert.equal(
    await strictV3.onPreCompress(RAW, {
      requireCheckpoint: true,
      checkpointApiVersion: 3,
    }),
    "ok",
  );
  await assert.rejects(
    () =>
      managerWith([withVersion(new Fake("x"), 2)]).then((m) =>
        m.onPreCompress(RAW, {
          requireCheckpoint: true,
          checkpointApiVersion: 3,
        })
      ),
    /checkpoint API v3$/,
  );
});

// -- memory write mirroring --------------------------------------------------------

const PROVENANCE = () => ({
  write_origin: "assistant_tool",
  session_id: "s1",
  platform: "cli",
  tool_name: "memory",
  previous_content: "forged",
});

Deno.test("MemoryManager.notifyMemoryToolWrite() mirrors only committed writes", async () => {
  const builtin = new Fake("builtin");
  const honcho = new Fake("honcho");
  const manager = await managerWith([builtin, honcho]);
  const args = { action: "add", target: "user", content: "likes tea" };
  for (
    const result of [
      "not json",
      JSON.stringify({ success: false, error: "nope" }),
      JSON.stringify({ success: true, staged: true }),
      JSON.stringify({ success: "true" }),
      JSON.stringify({ message: "no success key" }),
      JSON.stringify([1]),
      null,
    ]
  ) {
    await manager.notifyMemoryToolWrite(result, args);
  }
  assert.equal(honcho.callsOf("onMemoryWrite").length, 0);
  await manager.notifyMemoryToolWrite(JSON.stringify({ success: true }), args, {
    buildMetadata: PROVENANCE,
  });
  await manager.notifyMemoryToolWrite({ success: true }, {
    action: "add",
    content: "no target",
  });
  assert.deepEqual(honcho.callsOf("onMemoryWrite"), [
    ["add", "user", "likes tea", {
      write_origin: "assistant_tool",
      session_id: "s1",
      platform: "cli",
      tool_name: "memory",
    }],
    ["add", "memory", "no target", {}],
  ]);
  assert.equal(builtin.callsOf("onMemoryWrite").length, 0);
});

Deno.test("MemoryManager.notifyMemoryToolWrite() takes previous_content only from the committed result", async () => {
  const honcho = new Fake("honcho");
  const manager = await managerWith([honcho]);
  await manager.notifyMemoryToolWrite(
    { success: true, replaced_entry: "old full entry" },
    {
      action: "replace",
      target: "memory",
      old_text: "old",
      new_text: "new entry",
      previous_content: "args",
    },
    { buildMetadata: PROVENANCE },
  );
  await manager.notifyMemoryToolWrite(
    { success: true },
    { action: "remove", old_text: "gone" },
    { buildMetadata: PROVENANCE },
  );
  await manager.notifyMemoryToolWrite({ success: true, removed_entry: "" }, {
    action: "remove",
    old_text: "x",
  });
  const calls = honcho.callsOf("onMemoryWrite");
  assert.deepEqual(calls[0], ["replace", "memory", "new entry", {
    write_origin: "assistant_tool",
    session_id: "s1",
    platform: "cli",
    tool_name: "memory",
    old_text: "old",
    previous_content: "old full entry",
  }]);
  assert.equal(
    (calls[1]![3] as Record<string, unknown>).previous_content,
    undefined,
  );
  assert.equal((calls[1]![3] as Record<string, unknown>).old_text, "gone");
  assert.deepEqual(calls[2], ["remove", "memory", "", { old_text: "x" }]);
});

Deno.test("MemoryManager.notifyMemoryToolWrite() mirrors a batch in order with per-op previous content", async () => {
  const honcho = new Fake("honcho");
  const manager = await managerWith([new Fake("builtin"), honcho]);
  await manager.notifyMemoryToolWrite(
    JSON.stringify({
      success: true,
      replaced_entries: { "2": "added text" },
      removed_entries: { "4": "replaced text" },
    }),
    {
      target: "user",
      operations: [
        { action: "add", content: "added text" },
        { action: "replace", old_text: "added", content: "replaced text" },
        { action: "read" },
        { action: "remove", old_text: "replaced" },
        "junk",
      ],
    },
  );
  assert.deepEqual(honcho.callsOf("onMemoryWrite"), [
    ["add", "user", "added text", {}],
    ["replace", "user", "replaced text", {
      old_text: "added",
      previous_content: "added text",
    }],
    ["remove", "user", "", {
      old_text: "replaced",
      previous_content: "replaced text",
    }],
  ]);
});

Deno.test("MemoryManager.notifyMemoryToolWrite() isolates failures and gives each call its own metadata", async () => {
  using logs = captureLogs();
  const seen: Record<string, unknown>[] = [];
  let n = 0;
  const honcho = new Fake("honcho", {
    onMemoryWrite: (
      _a: unknown,
      _t: unknown,
      _c: unknown,
      metadata: unknown,
    ) => {
      seen.push(metadata as Record<string, unknown>);
      (metadata as Record<string, unknown>).mutated = true;
      if (++n === 1) throw new Error("boom");
    },
  });
  const manager = await managerWith([honcho]);
  let built = 0;
  await manager.notifyMemoryToolWrite({ success: true }, {
    operations: [{ action: "add", content: `k ${SECRET}` }, {
      action: "add",
      content: "b",
    }],
  }, { buildMetadata: () => ({ n: ++built }) });
  assert.equal(seen.length, 2);
  assert.deepEqual(honcho.callsOf("onMemoryWrite").map((c) => c[2]), [
    `k ${REDACTED}`,
    "b",
  ]);
  assert.equal(built, 2);
  assert.equal(seen[0]!.n, 1);
  assert.equal(seen[1]!.n, 2);
  assert.ok(
    logs.text("debug").includes(
      "Memory provider 'honcho' onMemoryWrite failed: boom",
    ),
  );
});

Deno.test("MemoryManager.notifyMemoryToolWrite() fans terminal failures out as evictions", async () => {
  const honcho = new Fake("honcho");
  const builtin = new Fake("builtin");
  const manager = await managerWith([builtin, honcho]);
  const terminal = {
    success: false,
    done: true,
    error: "Memory consolidation failed 4 times this turn.",
  };
  await manager.notifyMemoryToolWrite(terminal, {
    action: "add",
    target: "user",
    content: "fact",
  }, {
    buildMetadata: PROVENANCE,
  });
  await manager.notifyMemoryToolWrite(terminal, {
    action: "replace",
    old_text: "a",
    content: "b",
  });
  await manager.notifyMemoryToolWrite(terminal, {
    action: "remove",
    old_text: "a",
  });
  await manager.notifyMemoryToolWrite({ success: false, error: "x" }, {
    action: "add",
    content: "c",
  });
  await manager.notifyMemoryToolWrite({
    success: false,
    done: false,
    error: "x",
  }, { action: "add", content: "c" });
  assert.deepEqual(honcho.callsOf("onMemoryEvict"), [
    ["fact", "user", {
      metadata: {
        write_origin: "assistant_tool",
        session_id: "s1",
        platform: "cli",
        tool_name: "memory",
        eviction_reason: terminal.error,
      },
    }],
    ["b", "memory", {
      metadata: { old_text: "a", eviction_reason: terminal.error },
    }],
  ]);
  assert.equal(honcho.callsOf("onMemoryWrite").length, 0);
  assert.equal(builtin.callsOf("onMemoryEvict").length, 0);
});

// -- duck-typed providers -------------------------------------------------------------

Deno.test("MemoryManager uses contract defaults for hooks a duck-typed provider lacks", async () => {
  const synced: string[] = [];
  const minimal = {
    name: "minimal",
    isAvailable: () => true,
    initialize: () => {},
    getToolSchemas: () => [],
    syncTurn: (user: string) => void synced.push(user),
  } as unknown as MemoryProvider;
  using logs = captureLogs();
  const manager = await managerWith([minimal]);
  await manager.initializeAll("s");
  assert.equal(await manager.prefetchAll("q"), "");
  assert.equal(await manager.buildSystemPrompt(), "");
  assert.equal(await manager.describeRecall(), "");
  await manager.onTurnStart(1, "q");
  manager.syncAll("u", "a");
  manager.queuePrefetchAll("u");
  assert.equal(await manager.onSessionSwitch("s2"), true);
  await manager.shutdownAll();
  assert.deepEqual(synced, ["u"]);
  assert.deepEqual(logs.text("warn"), []);
  assert.deepEqual(logs.text("debug"), []);
});
