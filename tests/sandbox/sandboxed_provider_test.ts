import assert from "node:assert/strict";
import { join } from "node:path";
import { setLogger } from "../../src/core/log.ts";
import {
  withHermesHome,
  withSecretScope,
} from "../../src/profile/context_scope.ts";
import { findMemoryProvider } from "../../src/plugins/plugin_discovery.ts";
import { grantForCandidate } from "../../src/plugins/provider_permissions.ts";
import { SandboxedMemoryProvider } from "../../src/sandbox/sandboxed_provider.ts";
import type { SandboxStartOptions } from "../../src/sandbox/sandbox_launch.ts";
import {
  explainDenial,
  ProviderPermissionError,
} from "../../src/sandbox/denial.ts";
import { setMultiplexActive } from "../../src/profile/secret_scope.ts";
import { ProviderWorkerStoppedError } from "../../src/sandbox/worker_rpc.ts";
import { ProviderCallTimeoutError } from "../../src/sandbox/worker_protocol.ts";
import {
  approvalOf,
  captureLogs,
  installFixture,
  REPO,
  runChild,
  type TempHome,
  tempHome,
  writeProvider,
} from "../helpers/plugin_fixtures.ts";

async function start(
  h: TempHome,
  name: string,
  options: Partial<SandboxStartOptions> = {},
): Promise<SandboxedMemoryProvider> {
  // Installed and approved as 'hermes memory setup <name>' records it.
  const config = {
    memory: {
      permissions: { [name]: await approvalOf(join(h.plugins, name)) },
    },
  };
  const candidate = await findMemoryProvider(name, {
    hermesHome: h.home,
    bundledDir: h.outside,
    config,
  });
  assert.ok(candidate, `fixture ${name} not found`);
  const provider = await SandboxedMemoryProvider.start(candidate, {
    grant: grantForCandidate(candidate, { hermesHome: h.home, config }),
    ...options,
  });
  assert.ok(provider, `fixture ${name} offered no provider`);
  return provider;
}

Deno.test("SandboxedMemoryProvider carries every call across the worker and back", async () => {
  await using h = await tempHome();
  await installFixture(h.plugins, "notes");
  await using provider = await start(h, "notes");
  assert.equal(provider.name, "notes");
  assert.equal(provider.preCompressCheckpointApiVersion, 1);
  assert.deepEqual(await provider.getToolSchemas(), [
    { name: "notes_search", description: "Search notes" },
  ]);
  assert.equal(provider.postSetup, undefined);
  assert.equal(provider.getStatusConfig, undefined);
  await provider.syncTurn("remember the red kite", "noted", {
    sessionId: "s1",
  });
  assert.equal(
    await provider.prefetch("red kite", { sessionId: "s1" }),
    JSON.stringify({
      user: "remember the red kite",
      assistant: "noted",
      session: "s1",
    }),
  );
  assert.deepEqual(await provider.recallStatus(), {
    providerLabel: "Notes",
    count: 1,
    glyph: "🧠",
  });
  assert.equal(await provider.systemPromptBlock(), "");
  assert.equal(await provider.unavailableReason(), "");
  assert.deepEqual(await provider.identitySignature(), {});
  assert.deepEqual(await provider.getConfigSchema(), []);
  assert.deepEqual(await provider.backupPaths(), []);
  assert.equal(
    await provider.onPreCompress([{ role: "user", content: "x" }], {}),
    "",
  );
  assert.equal(
    await provider.onSessionSwitch("s2", { reset: true }),
    undefined,
  );
  await provider.onTurnStart(1, "hi", { model: "m" });
  await provider.onSessionEnd([]);
  await provider.onDelegation("t", "r", {});
  await provider.onMemoryWrite("add", "memory", "fact", {
    write_origin: "tool",
  });
  await provider.onMemoryEvict("fact", "memory", {});
  await provider.saveConfig({ a: 1 }, h.home);
  assert.equal(
    await provider.handleToolCall("notes_search", { q: "x" }, {}),
    JSON.stringify({ tool: "notes_search", args: { q: "x" } }),
  );
  // The turn really landed in HERMES_HOME, written by the worker.
  assert.match(
    await Deno.readTextFile(join(h.home, "notes", "turns.jsonl")),
    /red kite/,
  );
});

Deno.test("SandboxedMemoryProvider passes the caller's secret scope, limited to declared names", async () => {
  await using h = await tempHome();
  await installFixture(h.plugins, "notes");
  await using provider = await start(h, "notes");
  const scope = { NOTES_API_KEY: "k-123", OPENAI_API_KEY: "sk-other" };
  assert.equal(await provider.isAvailable(), false);
  assert.equal(
    await withSecretScope(scope, () => provider.isAvailable()),
    true,
  );
  const ask = (name: string) =>
    withSecretScope(
      scope,
      () => provider.handleToolCall("notes_secret", { name }, {}),
    );
  assert.equal(await ask("NOTES_API_KEY"), JSON.stringify({ value: "k-123" }));
  assert.equal(await ask("OPENAI_API_KEY"), JSON.stringify({ value: null }));
});

Deno.test("SandboxedMemoryProvider fails closed for secrets when the host multiplexes profiles", async () => {
  await using h = await tempHome();
  await installFixture(h.plugins, "notes");
  await using provider = await start(h, "notes");
  setMultiplexActive(true);
  try {
    await assert.rejects(
      async () =>
        await provider.handleToolCall(
          "notes_secret",
          { name: "NOTES_API_KEY" },
          {},
        ),
      (error: Error) => error.name === "UnscopedSecretError",
    );
  } finally {
    setMultiplexActive(false);
  }
});

Deno.test("SandboxedMemoryProvider runs each call under the caller's home override", async () => {
  await using h = await tempHome();
  await installFixture(h.plugins, "notes");
  await using provider = await start(h, "notes");
  assert.equal(
    await provider.handleToolCall("notes_home", {}, {}),
    JSON.stringify({ home: h.home }),
  );
  const other = join(h.home, "profiles", "coder");
  assert.equal(
    await withHermesHome(
      other,
      () => provider.handleToolCall("notes_home", {}, {}),
    ),
    JSON.stringify({ home: other }),
  );
});

Deno.test("SandboxedMemoryProvider calls initialize callbacks back on the host", async () => {
  await using h = await tempHome();
  await installFixture(h.plugins, "notes");
  await using provider = await start(h, "notes");
  const warnings: string[] = [];
  await provider.initialize("s1", {
    hermesHome: h.home,
    platform: "cli",
    warningCallback: (m) => warnings.push(m),
  });
  for (let i = 0; i < 50 && warnings.length === 0; i++) {
    await new Promise((r) => setTimeout(r, 5));
  }
  assert.deepEqual(warnings, [`notes initialized in ${h.home}`]);
});

Deno.test("SandboxedMemoryProvider exposes optional methods and the checkpoint version the provider has", async () => {
  await using h = await tempHome();
  await installFixture(h.plugins, "subclass_only");
  await using provider = await start(h, "subclass_only");
  assert.equal(provider.name, "subclass_only");
  assert.equal(provider.preCompressCheckpointApiVersion, 2);
  assert.deepEqual(await provider.getStatusConfig?.({ a: 1, b: 2 }), {
    shown: 2,
  });
  assert.equal(provider.postSetup, undefined);
});

Deno.test("SandboxedMemoryProvider rejects a hung call after the timeout and keeps serving others", async () => {
  await using h = await tempHome();
  await installFixture(h.plugins, "hang");
  await using provider = await start(h, "hang", { callTimeoutMs: 150 });
  const started = performance.now();
  await assert.rejects(
    async () => await provider.prefetch("q", {}),
    (error: unknown) => {
      assert.ok(error instanceof ProviderCallTimeoutError);
      assert.equal(
        error.message,
        "Memory provider 'hang' did not finish prefetch() within 150 ms: the call was abandoned; check the provider's service or raise its timeout",
      );
      return true;
    },
  );
  assert.ok(performance.now() - started < 5000);
  assert.equal(await provider.systemPromptBlock(), "still here");
  assert.equal(provider.stopped, undefined);
});

Deno.test("SandboxedMemoryProvider.shutdown() ends the worker; later calls reject at once", async () => {
  await using h = await tempHome();
  await installFixture(h.plugins, "notes");
  const provider = await start(h, "notes");
  await provider.shutdown();
  await provider.shutdown();
  assert.equal(provider.stopped, "it was shut down");
  await assert.rejects(
    async () => await provider.prefetch("x", {}),
    (error: unknown) =>
      error instanceof ProviderWorkerStoppedError &&
      error.message ===
        "Memory provider 'notes' is not running: it was shut down",
  );
});

Deno.test("SandboxedMemoryProvider routes the provider's console output to the host logger", async () => {
  await using h = await tempHome();
  await writeProvider(h.plugins, "chatty", {
    "mod.ts":
      `import { MemoryProvider, log, type ToolSchema } from "@hermes/memory";
export class Chatty extends MemoryProvider {
  get name(): string { return "chatty"; }
  isAvailable(): boolean { console.log("checking", { deep: 1 }); log("warn", "framework line"); return true; }
  initialize(): void {}
  getToolSchemas(): ToolSchema[] { return []; }
  override systemPromptBlock(): string { return (() => 1) as unknown as string; }
}`,
  });
  using logs = captureLogs();
  await using provider = await start(h, "chatty");
  assert.equal(await provider.isAvailable(), true);
  assert.deepEqual(logs.lines, [
    "info Memory provider 'chatty': checking { deep: 1 }",
    "warn framework line",
  ]);
  await assert.rejects(
    async () => await provider.systemPromptBlock(),
    /Memory provider 'chatty' returned a value that cannot leave its sandbox: .*; return plain data/,
  );
});

Deno.test("SandboxedMemoryProvider.start() returns null for a module without a provider", async () => {
  await using h = await tempHome();
  await writeProvider(h.plugins, "empty", {
    "mod.ts": "// MemoryProvider\nexport const x = 1;",
  });
  const candidate = await findMemoryProvider("empty", {
    hermesHome: h.home,
    bundledDir: h.outside,
    config: {},
  });
  assert.ok(candidate);
  const provider = await SandboxedMemoryProvider.start(candidate, {
    grant: grantForCandidate(candidate, { hermesHome: h.home }),
  });
  assert.equal(provider, null);
});

Deno.test("explainDenial() leaves other errors untouched", () => {
  const grant = {
    provider: "p",
    hermesHome: "/h",
    read: [],
    write: [],
    env: [],
    net: [],
    import: [],
    npm: false,
  };
  const plain = new Error("boom");
  assert.equal(explainDenial("p", grant, undefined, plain), plain);
  const denial = explainDenial(
    "p",
    grant,
    undefined,
    new Error(
      'Requires env access to "X", run again with the --allow-env flag',
    ),
  );
  assert.ok(denial instanceof ProviderPermissionError);
  assert.equal(denial.permission, "env");
  assert.equal(denial.target, "X");
  assert.equal(
    denial.message,
    "Memory provider 'p' may not read the environment variable X: grant it under memory.permissions.p.env in /h/config.yaml",
  );
});

Deno.test("SandboxedMemoryProvider kills a busy-looping sandbox process, restarts it a bounded number of times, then keeps the write on disk", async () => {
  // Runs in a library host started with only --allow-read, --allow-write,
  // --allow-env and --allow-run. syncTurn is posted one-way, so it returns
  // at once; the next call is what notices the stuck sandbox. Each new
  // process is handed the turn again and spins again: after 5 ends in a row
  // with no write made durable the host stops restarting, keeps the turns
  // on disk and fails fast.
  await using h = await tempHome();
  await installFixture(h.plugins, "hang");
  const source = `
import { loadMemoryProvider } from "${REPO}/src/plugins/provider_loader.ts";
const p = await loadMemoryProvider("hang", {
  hermesHome: ${JSON.stringify(h.home)}, bundledDir: ${
    JSON.stringify(h.outside)
  },
  config: {}, callTimeoutMs: 60000, unresponsiveAfterMs: 300, hostCheck: false,
});
const out = {};
try { await p.syncTurn("spin", "", {}); out.cast = "posted"; } catch (e) { out.cast = e.message; }
const started = performance.now();
try { await p.systemPromptBlock(); } catch (e) { out.first = e.message; }
try { await p.systemPromptBlock(); } catch (e) { out.second = e.message; }
out.ms = Math.round(performance.now() - started);
try { await p.syncTurn("again", "", {}); out.third = "posted"; } catch (e) { out.third = e.message; }
out.drain = await p.drain(30000);
try { await p.systemPromptBlock(); } catch (e) { out.fourth = e.message; }
await p.shutdown();
console.log(JSON.stringify(out));
Deno.exit(0);
`;
  const run = await runChild(h.outside, source, {
    flags: [
      "--no-prompt",
      "--frozen",
      "--allow-read",
      "--allow-write",
      "--allow-env",
      "--allow-run",
    ],
  });
  assert.equal(run.code, 0, run.stderr);
  const out = JSON.parse(run.stdout);
  const spun =
    "its sandbox process stopped responding for 300 ms of CPU time (a busy loop?) and was killed";
  const gaveUp =
    `Memory provider 'hang' is not running: it ended 5 times in a row before it reported a write durable (last: ${spun})`;
  assert.equal(out.cast, "posted");
  assert.ok(out.first.endsWith(spun), out.first);
  assert.ok(out.second.endsWith(spun), out.second);
  assert.equal(out.third, "posted");
  assert.equal(out.fourth, gaveUp);
  assert.deepEqual(out.drain, { drained: false, pending: 2 });
  assert.ok(out.ms < 30_000, `took ${out.ms} ms`);
  assert.match(
    run.stderr,
    /hermes: warn: Memory provider 'hang' stopped: its sandbox process stopped responding/,
  );
  const kept = JSON.parse(
    await Deno.readTextFile(join(h.home, "pending_writes", "hang.json")),
  );
  assert.deepEqual(kept.writes.map((w: { args: string[] }) => w.args[0]), [
    "spin",
    "again",
  ]);
});

Deno.test("SandboxedMemoryProvider.start() replaces a worker that does not start in time, quietly (worker transport)", async () => {
  await using h = await tempHome();
  await installFixture(h.plugins, "notes");
  const lines: string[] = [];
  const previous = setLogger({
    log: (level, message) => lines.push(`${level} ${message}`),
  });
  try {
    // No worker starts within 1 ms, so the first one is always replaced.
    await using provider = await start(h, "notes", {
      startTimeoutMs: 1,
      transport: "worker",
    });
    assert.equal(provider.name, "notes");
    assert.deepEqual(await provider.getToolSchemas(), [
      { name: "notes_search", description: "Search notes" },
    ]);
  } finally {
    setLogger(previous);
  }
  assert.ok(
    lines.some((line) =>
      line.startsWith(
        "debug Memory provider 'notes': its sandbox worker did not start within 1 ms; starting a new one",
      )
    ),
    lines.join("\n"),
  );
  assert.deepEqual(lines.filter((line) => line.startsWith("warn")), []);
});
