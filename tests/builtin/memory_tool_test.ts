import assert from "node:assert/strict";
import { MemoryStore } from "../../src/builtin/memory_store.ts";
import {
  handleMemoryToolCall,
  MEMORY_TOOL_NAME,
  memoryToolSchema,
} from "../../src/builtin/memory_tool.ts";

const NOTE = "Write saved. This update is complete — do not repeat it.";

async function withStore(
  fn: (store: MemoryStore, home: string) => Promise<void>,
  options: ConstructorParameters<typeof MemoryStore>[0] = {},
): Promise<void> {
  const home = await Deno.makeTempDir({ prefix: "hermes_tool_" });
  try {
    const store = new MemoryStore({ hermesHome: home, ...options });
    await store.loadFromDisk();
    await fn(store, home);
  } finally {
    await Deno.remove(home, { recursive: true });
  }
}

type Props = Record<string, { enum?: string[]; description?: string }>;

Deno.test("memoryToolSchema() offers add/replace/remove on both targets with only target required", () => {
  const schema = memoryToolSchema();
  assert.ok(schema);
  assert.equal(schema.name, MEMORY_TOOL_NAME);
  const params = schema.parameters as { properties: Props; required: string[] };
  assert.deepEqual(params.required, ["target"]);
  assert.deepEqual(params.properties.action?.enum, [
    "add",
    "replace",
    "remove",
  ]);
  assert.deepEqual(params.properties.target?.enum, ["memory", "user"]);
  assert.deepEqual(Object.keys(params.properties), [
    "action",
    "target",
    "content",
    "old_text",
    "operations",
  ]);
  assert.match(String(schema.description), /TARGETS: 'user' = who the user is/);
});

Deno.test("memoryToolSchema() narrows to the one enabled target and disappears with none", () => {
  const memoryOnly = memoryToolSchema({ userProfileEnabled: false });
  const target =
    (memoryOnly?.parameters as { properties: Props }).properties.target;
  assert.deepEqual(target?.enum, ["memory"]);
  assert.equal(
    target?.description,
    "The enabled built-in store: 'memory' for personal notes.",
  );
  assert.doesNotMatch(String(memoryOnly?.description), /TARGETS:/);
  const userOnly = memoryToolSchema({ memoryEnabled: false });
  assert.deepEqual(
    (userOnly?.parameters as { properties: Props }).properties.target?.enum,
    ["user"],
  );
  assert.match(String(userOnly?.description), /target='user'/);
  assert.equal(
    memoryToolSchema({ memoryEnabled: false, userProfileEnabled: false }),
    null,
  );
});

Deno.test("handleMemoryToolCall() returns Hermes' exact JSON for a successful add", async () => {
  await withStore(async (store) => {
    assert.equal(
      await handleMemoryToolCall(store, {
        action: "add",
        target: "user",
        content: "Name: Zoë",
      }),
      `{"success": true, "done": true, "target": "user", "usage": "0% — 9/1,375 chars", "entry_count": 1, "message": "Entry added.", "note": "${NOTE}"}`,
    );
  });
});

Deno.test("handleMemoryToolCall() checks arguments in Hermes' order", async (t) => {
  await withStore(async (store) => {
    await store.add("memory", "Project uses Deno");
    const cases: [
      string,
      Record<string, unknown>,
      string,
      MemoryStore | null,
    ][] = [
      [
        "no store",
        { action: "add", content: "x" },
        '{"error": "Memory is not available. It may be disabled in config or this environment.", "success": false}',
        null,
      ],
      [
        "invalid target",
        { action: "add", target: "notes", content: "x" },
        `{"error": "Invalid target 'notes'. Use 'memory' or 'user'.", "success": false}`,
        store,
      ],
      [
        "operations not a list",
        { target: "memory", operations: "add x" },
        '{"error": "operations must be a list of {action, content?, old_text?} objects.", "success": false}',
        store,
      ],
      [
        "add without content",
        { action: "add", target: "memory" },
        `{"error": "Content is required for 'add' action.", "success": false}`,
        store,
      ],
      [
        "remove without old_text",
        { action: "remove", target: "memory" },
        `{"success": false, "error": "'remove' needs old_text -- a short unique substring of the entry to remove. None was provided. Reissue the remove with old_text set to part of one of the current_entries below.", "current_entries": ["Project uses Deno"], "usage": "17/2,200"}`,
        store,
      ],
      [
        "replace without old_text",
        { action: "replace", target: "memory", content: "x" },
        `{"success": false, "error": "'replace' needs old_text -- a short unique substring of the entry to replace. None was provided. Reissue the replace with old_text set to part of one of the current_entries below.", "current_entries": ["Project uses Deno"], "usage": "17/2,200"}`,
        store,
      ],
      [
        "replace without content",
        { action: "replace", target: "memory", old_text: "Deno" },
        `{"error": "content is required for 'replace' action.", "success": false}`,
        store,
      ],
      [
        "unknown action",
        { action: "read", target: "memory" },
        `{"error": "Unknown action 'read'. Use: add, replace, remove", "success": false}`,
        store,
      ],
      [
        "missing action",
        { target: "memory" },
        `{"error": "Unknown action ''. Use: add, replace, remove", "success": false}`,
        store,
      ],
      [
        "whitespace content passes the tool check and is refused by the store",
        { action: "add", target: "memory", content: "   " },
        '{"success": false, "error": "Content cannot be empty."}',
        store,
      ],
    ];
    for (const [name, args, expected, s] of cases) {
      await t.step(name, async () => {
        assert.equal(await handleMemoryToolCall(s, args), expected);
      });
    }
    assert.deepEqual(store.entries("memory"), ["Project uses Deno"]);
  });
});

Deno.test("handleMemoryToolCall() defaults a missing or null target to memory, as Hermes 0.19.0 does", async () => {
  await withStore(async (store) => {
    const a = JSON.parse(
      await handleMemoryToolCall(store, { action: "add", content: "one" }),
    );
    assert.equal(a.target, "memory");
    const b = JSON.parse(
      await handleMemoryToolCall(store, {
        action: "add",
        target: null,
        content: "two",
      }),
    );
    assert.equal(b.target, "memory");
    assert.deepEqual(store.entries("memory"), ["one", "two"]);
  });
});

Deno.test("handleMemoryToolCall() ignores new_text, as Hermes does", async () => {
  await withStore(async (store) => {
    assert.equal(
      await handleMemoryToolCall(store, {
        action: "add",
        target: "user",
        new_text: "Likes tea",
      }),
      `{"error": "Content is required for 'add' action.", "success": false}`,
    );
    assert.deepEqual(store.entries("user"), []);
  });
});

Deno.test("handleMemoryToolCall() refuses non-string arguments by name and stores nothing", async () => {
  await withStore(async (store) => {
    for (
      const [args, name] of [
        [{ action: "add", target: "memory", content: { a: 1 } }, "content"],
        [{ action: "add", target: "memory", content: 12345 }, "content"],
        [{ action: "remove", target: "memory", old_text: true }, "old_text"],
        [{ action: ["add"], target: "memory", content: "x" }, "action"],
        [{ action: "add", target: ["memory"], content: "x" }, "target"],
        [
          { target: "memory", operations: [{ action: "add", content: 5 }] },
          "operations[0].content",
        ],
      ] as const
    ) {
      const out = JSON.parse(await handleMemoryToolCall(store, args));
      assert.equal(out.success, false);
      assert.match(
        out.error,
        new RegExp(`^'${name.replace(/[[\]]/g, "\\$&")}' must be a string`),
      );
    }
    // Falsy values keep Hermes' own answers.
    assert.equal(
      await handleMemoryToolCall(store, {
        action: "add",
        target: "memory",
        content: 0,
      }),
      `{"error": "Content is required for 'add' action.", "success": false}`,
    );
    assert.deepEqual(store.entries("memory"), []);
    assert.equal(
      await Deno.stat(store.paths().memory).then(() => true, () => false),
      false,
    );
  });
});

Deno.test("handleMemoryToolCall() runs a batch and returns the plural previous-text maps", async () => {
  await withStore(async (store) => {
    await store.add("memory", "Node 18");
    const out = await handleMemoryToolCall(store, {
      target: "memory",
      operations: [
        { action: "add", content: "Uses pnpm" },
        { action: "replace", old_text: "Node", content: "Node 22" },
        { action: "remove", old_text: "pnpm" },
      ],
    });
    assert.equal(
      out,
      `{"success": true, "done": true, "target": "memory", "usage": "0% — 7/2,200 chars", "entry_count": 1, "message": "Applied 3 operation(s).", "replaced_entries": {"2": "Node 18"}, "removed_entries": {"3": "Uses pnpm"}, "note": "${NOTE}"}`,
    );
  });
});

Deno.test("handleMemoryToolCall() treats an empty operations list as absent", async () => {
  await withStore(async (store) => {
    const out = await handleMemoryToolCall(store, {
      action: "add",
      target: "memory",
      content: "single op",
      operations: [],
    });
    assert.equal(JSON.parse(out).message, "Entry added.");
  });
});

Deno.test("handleMemoryToolCall() refuses writes to a disabled target", async () => {
  await withStore(async (store) => {
    assert.equal(
      await handleMemoryToolCall(store, {
        action: "add",
        target: "user",
        content: "x",
      }),
      '{"success": false, "error": "Built-in USER.md writes are disabled in memory config.", "target": "user"}',
    );
    assert.equal(
      JSON.parse(
        await handleMemoryToolCall(store, { action: "add", content: "x" }),
      ).success,
      true,
    );
  }, { userProfileEnabled: false });
});

Deno.test("handleMemoryToolCall() turns a write failure into an error result", async () => {
  await withStore(async (store, home) => {
    // A dangling symlink into a missing directory reads as a missing file,
    // but the atomic write through it cannot create its temp file.
    await Deno.mkdir(`${home}/memories`, { recursive: true });
    await Deno.symlink(
      `${home}/missing/MEMORY.md`,
      `${home}/memories/MEMORY.md`,
    );
    const out = JSON.parse(
      await handleMemoryToolCall(store, {
        action: "add",
        target: "memory",
        content: "x",
      }),
    );
    assert.equal(out.success, false);
    assert.match(
      out.error,
      /^Failed to write memory file .*memories\/MEMORY\.md: /,
    );
    assert.deepEqual(Object.keys(out), ["error", "success"]);
  });
});

Deno.test("handleMemoryToolCall() refuses an entry that is not text and stores nothing", async () => {
  await withStore(async (store, home) => {
    for (
      const args of [
        { action: "add", target: "memory", content: { a: 1 } },
        { action: "add", target: "user", content: 12345 },
        { action: "replace", target: "memory", old_text: ["x"], content: "y" },
        {
          target: "memory",
          operations: [{ action: "add", content: "fine" }, {
            action: "add",
            content: 7,
          }],
        },
      ]
    ) {
      const out = JSON.parse(await handleMemoryToolCall(store, args));
      assert.equal(out.success, false, JSON.stringify(args));
      assert.match(
        out.error,
        /'(content|old_text|operations\[1\]\.content)' must be a string \(got (an object|a number|an array)/,
      );
    }
    assert.deepEqual(store.sanitizedEntries("memory"), []);
    assert.deepEqual(store.sanitizedEntries("user"), []);
    for (const file of ["MEMORY.md", "USER.md"]) {
      const text = await Deno.readTextFile(`${home}/memories/${file}`).catch(
        () => "",
      );
      assert.equal(text.trim(), "");
    }
  });
});
