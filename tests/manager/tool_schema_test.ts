import assert from "node:assert/strict";
import { type LogLevel, setLogger } from "../../src/core/log.ts";
import {
  injectMemoryProviderTools,
  memoryProviderToolsEnabled,
  memoryProviderToolsExposed,
  normalizeToolSchema,
  RESERVED_CORE_TOOL_NAMES,
  toolError,
} from "../../src/manager/tool_schema.ts";

Deno.test("normalizeToolSchema() returns bare schemas unchanged and unwraps the OpenAI form", () => {
  const bare = {
    name: "notes_search",
    description: "d",
    parameters: { type: "object" },
  };
  assert.equal(normalizeToolSchema(bare), bare);
  assert.equal(normalizeToolSchema({ type: "function", function: bare }), bare);
});

Deno.test("normalizeToolSchema() rejects non-objects and nameless schemas", () => {
  for (
    const bad of [
      null,
      undefined,
      "notes",
      42,
      [{ name: "x" }],
      {},
      { name: "" },
      { name: 7 },
      { type: "function", function: { description: "no name" } },
      { type: "function", function: "x" },
    ]
  ) {
    assert.equal(normalizeToolSchema(bad), null, JSON.stringify(bad));
  }
});

Deno.test('toolError() builds the Hermes {"error": …} JSON string', () => {
  assert.equal(
    toolError("No memory provider handles tool 'x'"),
    '{"error": "No memory provider handles tool \'x\'"}',
  );
  assert.deepEqual(JSON.parse(toolError('quote " and \\ newline\n')), {
    error: 'quote " and \\ newline\n',
  });
});

Deno.test("RESERVED_CORE_TOOL_NAMES covers the host's core tools", () => {
  for (
    const name of [
      "clarify",
      "delegate_task",
      "memory",
      "terminal",
      "web_search",
      "read_file",
      "todo",
      "session_search",
      "execute_code",
      "cronjob",
      "send_message",
    ]
  ) {
    assert.ok(RESERVED_CORE_TOOL_NAMES.has(name), name);
  }
  assert.equal(RESERVED_CORE_TOOL_NAMES.has("honcho_profile"), false);
});

Deno.test("memoryProviderToolsEnabled() applies Hermes' gate in order", async (t) => {
  await t.step("disabled memory toolset hides, whatever else is set", () => {
    for (const enabled of [null, ["memory"], ["all"]]) {
      assert.equal(
        memoryProviderToolsEnabled(enabled, {
          disabledToolsets: ["memory"],
          memoryToolPresent: true,
        }),
        false,
      );
    }
  });
  await t.step("built-in memory tool present or no filter shows", () => {
    assert.equal(memoryProviderToolsEnabled(null), true);
    assert.equal(memoryProviderToolsEnabled(undefined), true);
    assert.equal(
      memoryProviderToolsEnabled([], { memoryToolPresent: true }),
      true,
    );
    assert.equal(
      memoryProviderToolsEnabled(["web"], { memoryToolPresent: true }),
      true,
    );
  });
  await t.step("an empty filter hides", () => {
    assert.equal(memoryProviderToolsEnabled([]), false);
  });
  await t.step("a filter naming memory shows", () => {
    assert.equal(memoryProviderToolsEnabled(["web", "memory"]), true);
  });
  await t.step("composites show only when they resolve to memory", () => {
    const table: Record<string, string[]> = {
      "hermes-acp": ["read_file", "memory"],
      "web": ["web_search"],
    };
    const resolveToolset = (name: string): string[] => table[name] ?? [];
    assert.equal(
      memoryProviderToolsEnabled(["web", "hermes-acp"], { resolveToolset }),
      true,
    );
    assert.equal(
      memoryProviderToolsEnabled(["web"], { resolveToolset }),
      false,
    );
    assert.equal(memoryProviderToolsEnabled(["all"]), true);
    assert.equal(memoryProviderToolsEnabled(["*"]), true);
    assert.equal(memoryProviderToolsEnabled(["hermes-acp"]), false);
    assert.equal(
      memoryProviderToolsEnabled(["hermes-acp"], {
        resolveToolset: () => {
          throw new Error("no table");
        },
      }),
      false,
    );
  });
});

function captureLogs(): {
  lines: Array<[LogLevel, string]>;
  [Symbol.dispose](): void;
} {
  const lines: Array<[LogLevel, string]> = [];
  const previous = setLogger({ log: (l, m) => lines.push([l, m]) });
  return { lines, [Symbol.dispose]: () => void setLogger(previous) };
}

Deno.test("injectMemoryProviderTools() appends wrapped schemas once and records their names", async () => {
  using logs = captureLogs();
  const manager = {
    providers: [{ name: "builtin" }, { name: "honcho" }],
    getAllToolSchemas: () =>
      Promise.resolve([
        { name: "honcho_profile", parameters: { type: "object" } },
        { name: "web_search" },
        { description: "nameless" } as unknown as { name: string },
      ]),
  };
  const surface = {
    tools: [{ type: "function", function: { name: "web_search" } }] as Record<
      string,
      unknown
    >[],
  } as {
    tools: Record<string, unknown>[];
    validToolNames?: Set<string>;
  };
  assert.equal(await injectMemoryProviderTools(surface, manager), 1);
  assert.deepEqual(surface.tools[1], {
    type: "function",
    function: { name: "honcho_profile", parameters: { type: "object" } },
  });
  assert.deepEqual([...surface.validToolNames!], ["honcho_profile"]);
  assert.equal(await injectMemoryProviderTools(surface, manager), 0);
  assert.equal(surface.tools.length, 2);
  assert.equal(logs.lines.filter(([l]) => l === "warn").length, 2);
  assert.equal(await injectMemoryProviderTools(surface, null), 0);
});

Deno.test("injectMemoryProviderTools() adds nothing when the memory toolset is gated off", async () => {
  using logs = captureLogs();
  let asked = 0;
  const manager = {
    providers: [{ name: "builtin" }, { name: "honcho" }],
    getAllToolSchemas: () => {
      asked++;
      return [{ name: "honcho_profile" }];
    },
  };
  const surface = {
    tools: [] as Record<string, unknown>[],
    enabledToolsets: ["web"],
  };
  assert.equal(memoryProviderToolsExposed(surface), false);
  assert.equal(await injectMemoryProviderTools(surface, manager), 0);
  assert.equal(surface.tools.length, 0);
  assert.equal(asked, 0);
  assert.deepEqual(logs.lines.map(([l]) => l), ["info"]);
  assert.match(logs.lines[0]![1], /honcho.*'memory' toolset is gated off/);
  // The built-in memory tool on the surface opens the gate.
  surface.tools.push({ type: "function", function: { name: "memory" } });
  assert.equal(memoryProviderToolsExposed(surface), true);
  assert.equal(await injectMemoryProviderTools(surface, manager), 1);
  // Builtin only: gated silently.
  logs.lines.length = 0;
  const quiet = { tools: [], enabledToolsets: [] };
  const builtinOnly = {
    providers: [{ name: "builtin" }],
    getAllToolSchemas: () => [],
  };
  assert.equal(await injectMemoryProviderTools(quiet, builtinOnly), 0);
  assert.deepEqual(logs.lines, []);
});

Deno.test("injectMemoryProviderTools() takes a MemoryManager", async () => {
  const { MemoryManager } = await import("../../src/manager/memory_manager.ts");
  const { MemoryProvider } = await import("../../src/core/memory_provider.ts");
  class Notes extends MemoryProvider {
    get name(): string {
      return "notes";
    }
    isAvailable(): boolean {
      return true;
    }
    initialize(): void {}
    getToolSchemas(): { name: string }[] {
      return [{ name: "notes_search" }, { name: "memory" }];
    }
  }
  using _logs = captureLogs();
  const manager = new MemoryManager();
  await manager.addProvider(new Notes());
  const surface = { tools: [] as Record<string, unknown>[] };
  assert.equal(await injectMemoryProviderTools(surface, manager), 1);
  assert.deepEqual(surface.tools.map((t) => t.function), [{
    name: "notes_search",
  }]);
});
