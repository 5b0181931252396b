import assert from "node:assert/strict";
import {
  INDICATOR_GLYPH,
  isMemoryProvider,
  MemoryProvider,
  PRE_COMPRESS_CHECKPOINT_API_VERSION,
  recallStatus,
  type ToolSchema,
} from "../../src/core/memory_provider.ts";

/** Implements only the four abstract members, so every default shows. */
class Minimal extends MemoryProvider {
  initialized: Array<[string, unknown]> = [];
  get name(): string {
    return "minimal";
  }
  isAvailable(): boolean {
    return true;
  }
  initialize(sessionId: string, options: unknown): void {
    this.initialized.push([sessionId, options]);
  }
  getToolSchemas(): ToolSchema[] {
    return [];
  }
}

Deno.test("memory_provider module constants match the Hermes contract", () => {
  assert.equal(PRE_COMPRESS_CHECKPOINT_API_VERSION, 2);
  assert.equal(INDICATOR_GLYPH, "🧠");
});

Deno.test("MemoryProvider defaults to the legacy checkpoint API version 1", () => {
  assert.equal(new Minimal().preCompressCheckpointApiVersion, 1);
});

Deno.test("MemoryProvider optional hooks have the contract's defaults", async () => {
  const p = new Minimal();
  assert.equal(p.unavailableReason(), "");
  assert.equal(p.systemPromptBlock(), "");
  assert.equal(p.prefetch("q", { sessionId: "s" }), "");
  assert.equal(p.queuePrefetch("q", {}), undefined);
  assert.equal(p.recallStatus(), null);
  assert.equal(p.syncTurn("u", "a", { sessionId: "s" }), undefined);
  assert.equal(p.shutdown(), undefined);
  assert.equal(p.onTurnStart(1, "hi", {}), undefined);
  assert.deepEqual(p.identitySignature(), {});
  assert.equal(p.onSessionEnd([]), undefined);
  assert.equal(p.onSessionSwitch("s2", { reset: true }), undefined);
  assert.equal(p.onPreCompress([], { requireCheckpoint: false }), "");
  assert.equal(p.onDelegation("t", "r", {}), undefined);
  assert.deepEqual(p.getConfigSchema(), []);
  assert.equal(p.saveConfig({}, "/h"), undefined);
  assert.equal(p.onMemoryWrite("add", "memory", "x"), undefined);
  assert.equal(p.onMemoryEvict("x", "memory", {}), undefined);
  assert.deepEqual(p.backupPaths(), []);
  assert.equal(p.postSetup, undefined);
  assert.equal(p.getStatusConfig, undefined);
  // initializeForInspection() delegates to initialize().
  await p.initializeForInspection("s1", { platform: "cli" });
  assert.deepEqual(p.initialized, [["s1", { platform: "cli" }]]);
});

Deno.test("MemoryProvider.handleToolCall() refuses tools by default with Hermes' message", () => {
  assert.throws(
    () => new Minimal().handleToolCall("notes_search", {}, {}),
    (error: unknown) =>
      error instanceof Error &&
      error.message === "Provider minimal does not handle tool notes_search",
  );
});

Deno.test("recallStatus() builds a frozen record with the default glyph", () => {
  const status = recallStatus("Honcho", 3);
  assert.deepEqual(status, {
    providerLabel: "Honcho",
    count: 3,
    glyph: "🧠",
  });
  assert.equal(Object.isFrozen(status), true);
  assert.equal(recallStatus("Hindsight", 0, { glyph: "👁️" }).glyph, "👁️");
});

Deno.test("isMemoryProvider() accepts subclasses and duck-typed providers only", () => {
  assert.equal(isMemoryProvider(new Minimal()), true);
  assert.equal(
    isMemoryProvider({
      name: "other-copy",
      isAvailable: () => true,
      initialize: () => {},
      getToolSchemas: () => [],
    }),
    true,
  );
  for (
    const value of [
      null,
      undefined,
      "builtin",
      {},
      { name: "x", isAvailable: () => true, initialize: () => {} },
      { name: 1, isAvailable: () => 1, initialize() {}, getToolSchemas() {} },
    ]
  ) {
    assert.equal(isMemoryProvider(value), false, String(value));
  }
});
