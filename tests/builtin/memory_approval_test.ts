import assert from "node:assert/strict";
import {
  approvePendingMemoryWrites,
  listPendingMemoryWrites,
  rejectPendingMemoryWrites,
} from "../../src/builtin/memory_approval.ts";
import { MemoryStore } from "../../src/builtin/memory_store.ts";
import {
  handleMemoryToolCall,
  pendingMemoryDir,
} from "../../src/builtin/memory_tool.ts";

async function withStore(
  fn: (store: MemoryStore, home: string) => Promise<void>,
): Promise<void> {
  const home = await Deno.makeTempDir({ prefix: "hermes_approval_" });
  try {
    const store = MemoryStore.fromConfig({ memory: { write_approval: "on" } }, {
      hermesHome: home,
    });
    await store.loadFromDisk();
    await fn(store, home);
  } finally {
    await Deno.remove(home, { recursive: true });
  }
}

async function exists(path: string): Promise<boolean> {
  try {
    await Deno.lstat(path);
    return true;
  } catch {
    return false;
  }
}

Deno.test("handleMemoryToolCall() stages writes when write_approval is on and nobody can be asked", async () => {
  await withStore(async (store, home) => {
    const out = await handleMemoryToolCall(store, {
      action: "add",
      target: "user",
      content: "Name: Ada",
    });
    const parsed = JSON.parse(out);
    assert.match(parsed.pending_id, /^[0-9a-f]{8}$/);
    assert.equal(
      out,
      `{"success": true, "staged": true, "pending_id": "${parsed.pending_id}", "message": "Staged for approval (memory.write_approval is on). Not yet saved — review with /memory pending."}`,
    );
    assert.equal(await exists(`${home}/memories/USER.md`), false);
    const [record] = await listPendingMemoryWrites(home);
    assert.ok(record);
    assert.equal(record.id, parsed.pending_id);
    assert.equal(record.subsystem, "memory");
    assert.equal(record.action, "add");
    assert.equal(record.summary, "add to user profile: Name: Ada");
    assert.equal(record.origin, "foreground");
    assert.deepEqual(record.payload, {
      action: "add",
      target: "user",
      content: "Name: Ada",
    });
    const info = await Deno.stat(`${pendingMemoryDir(home)}/${record.id}.json`);
    if (Deno.build.os !== "windows") {
      assert.equal((info.mode ?? 0) & 0o777, 0o600);
    }
  });
});

Deno.test("handleMemoryToolCall() never stages a write that fails validation", async () => {
  await withStore(async (store, home) => {
    const out = await handleMemoryToolCall(store, {
      action: "add",
      target: "memory",
    });
    assert.equal(
      out,
      `{"error": "Content is required for 'add' action.", "success": false}`,
    );
    assert.deepEqual(await listPendingMemoryWrites(home), []);
  });
});

Deno.test("handleMemoryToolCall() asks inline when it can, and a denial saves nothing", async () => {
  await withStore(async (store) => {
    const asked: string[] = [];
    const denied = await handleMemoryToolCall(
      store,
      { action: "add", target: "memory", content: "Uses Deno" },
      { approve: (summary) => (asked.push(summary), false) },
    );
    assert.equal(
      denied,
      '{"error": "Memory write denied by user. The change was not saved.", "success": false}',
    );
    assert.deepEqual(asked, ["add to memory: Uses Deno"]);
    const allowed = JSON.parse(
      await handleMemoryToolCall(
        store,
        { action: "add", target: "memory", content: "Uses Deno" },
        { approve: () => Promise.resolve(true) },
      ),
    );
    assert.equal(allowed.message, "Entry added.");
  });
});

Deno.test("approvePendingMemoryWrites() replays staged writes in order and deletes their records", async () => {
  await withStore(async (store, home) => {
    await handleMemoryToolCall(store, {
      action: "add",
      target: "memory",
      content: "one",
    });
    await handleMemoryToolCall(store, {
      target: "memory",
      operations: [{ action: "add", content: "two" }, {
        action: "add",
        content: "three",
      }],
    });
    const pending = await listPendingMemoryWrites(home);
    assert.deepEqual(pending.map((p) => [p.action, p.summary]), [
      ["add", "add to memory: one"],
      ["batch", "apply 2 op(s) to memory"],
    ]);
    const outcomes = await approvePendingMemoryWrites(store, "all");
    assert.deepEqual(outcomes.map((o) => o.applied), [true, true]);
    assert.equal(
      JSON.parse(outcomes[1]?.result ?? "{}").message,
      "Applied 2 operation(s).",
    );
    assert.equal(
      await Deno.readTextFile(`${home}/memories/MEMORY.md`),
      "one\n§\ntwo\n§\nthree",
    );
    assert.deepEqual(await listPendingMemoryWrites(home), []);
  });
});

Deno.test("approvePendingMemoryWrites() refuses a staged replace whose reviewed entry changed", async () => {
  await withStore(async (store, home) => {
    await handleMemoryToolCall(
      store,
      { action: "add", target: "memory", content: "Editor: vim" },
      { approve: () => true },
    );
    const staged = JSON.parse(
      await handleMemoryToolCall(store, {
        action: "replace",
        target: "memory",
        old_text: "Editor",
        content: "Editor: helix",
      }),
    );
    const [record] = await listPendingMemoryWrites(home);
    assert.equal(record?.matched_entry, "Editor: vim");
    // Someone changes the entry before the review.
    await store.replace("memory", "vim", "Editor: emacs");
    const [outcome] = await approvePendingMemoryWrites(
      store,
      staged.pending_id,
    );
    assert.equal(outcome?.applied, false);
    assert.equal(
      outcome?.result,
      `{"success": false, "error": "Entry changed since it was staged, so this write was not applied: 'Editor: vim' is no longer in memory as reviewed. Recreate the change against the current entry or reject it; the pending record has been preserved."}`,
    );
    assert.deepEqual(store.entries("memory"), ["Editor: emacs"]);
    assert.equal((await listPendingMemoryWrites(home)).length, 1);
    assert.deepEqual(
      await rejectPendingMemoryWrites(staged.pending_id, { hermesHome: home }),
      [
        staged.pending_id,
      ],
    );
    assert.deepEqual(await listPendingMemoryWrites(home), []);
  });
});

Deno.test("approvePendingMemoryWrites() applies a pinned remove to exactly the reviewed entry", async () => {
  await withStore(async (store, home) => {
    await store.add("memory", "Deploy: make ship");
    await handleMemoryToolCall(store, {
      action: "remove",
      target: "memory",
      old_text: "Deploy",
    });
    // A second entry now also contains "Deploy"; the pin keeps the removal exact.
    await store.add("memory", "Deploy window: Fridays");
    const [outcome] = await approvePendingMemoryWrites(store, "all");
    assert.equal(outcome?.applied, true);
    assert.equal(
      JSON.parse(outcome?.result ?? "{}").removed_entry,
      "Deploy: make ship",
    );
    assert.deepEqual(store.entries("memory"), ["Deploy window: Fridays"]);
    assert.deepEqual(await listPendingMemoryWrites(home), []);
  });
});

Deno.test("listPendingMemoryWrites() skips malformed records", async () => {
  await withStore(async (_store, home) => {
    await Deno.mkdir(pendingMemoryDir(home), { recursive: true });
    await Deno.writeTextFile(`${pendingMemoryDir(home)}/bad.json`, "{not json");
    await Deno.writeTextFile(
      `${pendingMemoryDir(home)}/other.json`,
      '{"id": "x", "subsystem": "skills", "payload": {}}',
    );
    assert.deepEqual(await listPendingMemoryWrites(home), []);
  });
});
