import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { join } from "node:path";
import { createHash } from "node:crypto";
import {
  ArchiveMemoryProvider,
  register,
} from "../../plugins/memory/archive/mod.ts";
import { MemoryProvider } from "../../src/core/memory_provider.ts";
import { withHermesHome } from "../../src/profile/context_scope.ts";
import { setLogger } from "../../src/core/log.ts";
import { syntheticTranscript } from "../fixtures/archive_transcript.ts";

const posix = Deno.build.os !== "windows";
const child = fileURLToPath(
  new URL("../fixtures/archive_checkpoint_child.ts", import.meta.url),
);

async function withTempHome(
  fn: (home: string) => Promise<void>,
): Promise<void> {
  const home = await Deno.makeTempDir({ prefix: "hermes_archive_" });
  try {
    await fn(home);
  } finally {
    await Deno.remove(home, { recursive: true });
  }
}

async function provider(
  home: string,
  session = "s1",
): Promise<ArchiveMemoryProvider> {
  const p = new ArchiveMemoryProvider();
  await p.initialize(session, { hermesHome: home, platform: "cli" });
  return p;
}

function expectedKey(role: string, content: string, n = 0): string {
  const digest = createHash("sha256").update(`${role}\u0000${content}`).digest(
    "hex",
  );
  return `${digest}:${n}`;
}

function assertUniqueKeys(keys: string[]): void {
  assert.equal(new Set(keys).size, keys.length, "duplicate archive keys");
}

Deno.test("ArchiveMemoryProvider advertises checkpoint API v2 and registers itself", () => {
  const p = new ArchiveMemoryProvider();
  assert.equal(p.preCompressCheckpointApiVersion, 2);
  assert.equal(p.name, "archive");
  assert.equal(p.isAvailable(), true);
  assert.deepEqual(p.getToolSchemas(), []);
  let registered: unknown;
  register({ registerMemoryProvider: (x) => (registered = x) });
  assert.ok(registered instanceof ArchiveMemoryProvider);
  assert.ok(registered instanceof MemoryProvider);
});

Deno.test("ArchiveMemoryProvider.onPreCompress() archives only user and assistant text", async () => {
  await withTempHome(async (home) => {
    const p = await provider(home);
    const note = await p.onPreCompress([
      { role: "system", content: "sys" },
      { role: "user", content: "What is the weather?" },
      { role: "assistant", content: "", tool_calls: [{ id: "1" }] },
      { role: "tool", tool_call_id: "1", content: "sunny" },
      { role: "assistant", content: "Checking...", tool_calls: [{ id: "2" }] },
      { role: "assistant", content: "Sunny.", _compressed_summary: true },
      { role: "assistant", content: "It is sunny." },
    ], { requireCheckpoint: true });
    const path = join(home, "archive", "s1", "transcript.jsonl");
    assert.equal(p.archivePath(), path);
    assert.equal(
      note,
      `Transcript archived before compression: 3 messages in ${path}`,
    );
    const archived = await p.readArchive();
    assert.deepEqual(archived.map((m) => [m.role, m.content]), [
      ["user", "What is the weather?"],
      ["assistant", "Checking..."],
      ["assistant", "It is sunny."],
    ]);
    assert.equal(
      archived[0]!.key,
      expectedKey("user", "What is the weather?"),
    );
    // Raw lines are JSON with the documented fields.
    const lines = (await Deno.readTextFile(path)).split("\n");
    assert.equal(lines.at(-1), "");
    const first = JSON.parse(lines[0]!);
    assert.deepEqual(Object.keys(first).sort(), [
      "archived_at",
      "content",
      "key",
      "role",
    ]);
    if (posix) {
      assert.equal((await Deno.stat(path)).mode! & 0o777, 0o600);
      assert.equal(
        (await Deno.stat(join(home, "archive", "s1"))).mode! & 0o777,
        0o700,
      );
    }
  });
});

Deno.test("ArchiveMemoryProvider.onPreCompress() is idempotent across retries and growth", async (t) => {
  await withTempHome(async (home) => {
    const p = await provider(home);
    const base = syntheticTranscript(50, 100);
    await t.step("a retry of the same transcript adds nothing", async () => {
      await p.onPreCompress(base, { requireCheckpoint: true });
      const size = (await Deno.stat(p.archivePath())).size;
      await p.onPreCompress(base, { requireCheckpoint: true });
      assert.equal((await Deno.stat(p.archivePath())).size, size);
      assert.equal((await p.readArchive()).length, 50);
    });
    await t.step(
      "a grown transcript appends only the new messages",
      async () => {
        await p.onPreCompress(syntheticTranscript(80, 100), {
          requireCheckpoint: true,
        });
        const archived = await p.readArchive();
        assert.equal(archived.length, 80);
        assertUniqueKeys(archived.map((m) => m.key));
        assert.deepEqual(
          archived.map((m) => m.content),
          syntheticTranscript(80, 100).filter((m) =>
            m.role !== "system" &&
            m.role !== "tool"
          ).map((m) => m.content),
        );
      },
    );
    await t.step(
      "a fresh instance (another process) sees the same archive",
      async () => {
        const again = await provider(home);
        await again.onPreCompress(syntheticTranscript(81, 100), {
          requireCheckpoint: true,
        });
        const archived = await again.readArchive();
        assert.equal(archived.length, 81);
        assertUniqueKeys(archived.map((m) => m.key));
      },
    );
    await t.step(
      "a compressed transcript (old turns summarized) adds only new turns",
      async () => {
        const tail = syntheticTranscript(90, 100).slice(-12);
        await p.onPreCompress([
          { role: "user", content: "summary", _compressed_summary: true },
          ...tail,
        ], { requireCheckpoint: true });
        const archived = await p.readArchive();
        assert.equal(archived.length, 90);
        assertUniqueKeys(archived.map((m) => m.key));
      },
    );
  });
});

Deno.test("ArchiveMemoryProvider keeps repeated identical messages", async () => {
  await withTempHome(async (home) => {
    const p = await provider(home);
    const turns = [
      { role: "user", content: "yes" },
      { role: "assistant", content: "ok" },
      { role: "user", content: "yes" },
    ];
    await p.onPreCompress(turns, {});
    await p.onPreCompress([...turns, { role: "assistant", content: "ok" }], {});
    const archived = await p.readArchive();
    assert.deepEqual(archived.map((m) => m.key), [
      expectedKey("user", "yes", 0),
      expectedKey("assistant", "ok", 0),
      expectedKey("user", "yes", 1),
      expectedKey("assistant", "ok", 1),
    ]);
  });
});

Deno.test("ArchiveMemoryProvider archives short messages repeated after a compaction again, keyed across the whole archive", async (t) => {
  const summary = {
    role: "user",
    content: "summary",
    _compressed_summary: true,
  };
  const window1 = [
    { role: "user", content: "deploy the app" },
    { role: "assistant", content: "Done." },
    { role: "user", content: "yes" },
    { role: "assistant", content: "Done." },
  ];
  const cases: [string, unknown[], unknown[]][] = [
    // Hermes keeps nothing of window 1 but the summary.
    ["nothing kept", [summary], []],
    // The compressor keeps the first exchange (head) and the last (tail).
    ["head and tail kept", [window1[0], window1[1], summary], [
      window1[2],
      window1[3],
    ]],
  ];
  for (const [label, before, kept] of cases) {
    await t.step(label, async () => {
      await withTempHome(async (home) => {
        const p = await provider(home);
        await p.onPreCompress(window1, { requireCheckpoint: true });
        const window2 = [
          { role: "user", content: "and the docs" },
          { role: "assistant", content: "Done." },
          { role: "user", content: "yes" },
          { role: "assistant", content: "Done." },
        ];
        const transcript = [...before, ...kept, ...window2];
        await p.onPreCompress(transcript as never, { requireCheckpoint: true });
        // A retry of the same checkpoint adds nothing.
        await p.onPreCompress(transcript as never, { requireCheckpoint: true });
        const archived = await p.readArchive();
        // Before this fix, keys restarted per window: "yes" and both "Done."
        // of window 2 were taken as archived (and compressed away): 5, not 8.
        assert.deepEqual(
          archived.map((m) => m.content),
          [
            "deploy the app",
            "Done.",
            "yes",
            "Done.",
            "and the docs",
            "Done.",
            "yes",
            "Done.",
          ],
        );
        assert.deepEqual(archived.slice(5).map((m) => m.key), [
          expectedKey("assistant", "Done.", 2),
          expectedKey("user", "yes", 1),
          expectedKey("assistant", "Done.", 3),
        ]);
        assertUniqueKeys(archived.map((m) => m.key));
        // A fresh process (index rebuilt from the file) agrees.
        const again = await provider(home);
        await again.onPreCompress(transcript as never, {
          requireCheckpoint: true,
        });
        assert.equal((await again.readArchive()).length, 8);
      });
    });
  }
});

Deno.test("ArchiveMemoryProvider.onPreCompress() throws when it cannot commit, then succeeds on retry", async () => {
  await withTempHome(async (home) => {
    const blocked = join(home, "archive");
    await Deno.writeTextFile(blocked, "not a directory");
    const p = await provider(home);
    const messages = [{ role: "user", content: "keep me" }];
    await assert.rejects(
      () => p.onPreCompress(messages, { requireCheckpoint: true }),
      (error: Error) => {
        assert.match(error.message, /^Archive checkpoint to .* failed: /);
        return true;
      },
    );
    await Deno.remove(blocked);
    await p.onPreCompress(messages, { requireCheckpoint: true });
    assert.equal((await p.readArchive()).length, 1);
  });
});

Deno.test("ArchiveMemoryProvider tolerates a torn last line and repairs it", async () => {
  await withTempHome(async (home) => {
    const p = await provider(home);
    const messages = syntheticTranscript(4, 50);
    await p.onPreCompress(messages.slice(0, 3), {});
    const path = p.archivePath();
    const whole = await Deno.readTextFile(path);
    // Simulate a crash in the middle of appending the next line.
    await Deno.writeTextFile(path, '{"key":"abc:0","role":"user","cont', {
      append: true,
    });
    const fresh = await provider(home);
    assert.equal((await fresh.readArchive()).length, 2);
    await fresh.onPreCompress(messages, {});
    const text = await Deno.readTextFile(path);
    assert.ok(text.startsWith(whole));
    assert.ok(text.endsWith("\n"));
    for (const line of text.trimEnd().split("\n")) JSON.parse(line);
    const archived = await fresh.readArchive();
    assert.equal(archived.length, 4);
    assertUniqueKeys(archived.map((m) => m.key));
  });
});

Deno.test("ArchiveMemoryProvider skips an unreadable middle line with a warning", async () => {
  await withTempHome(async (home) => {
    const p = await provider(home);
    await p.onPreCompress([{ role: "user", content: "one" }], {});
    await Deno.writeTextFile(p.archivePath(), "garbage\n", { append: true });
    const lines: string[] = [];
    const previous = setLogger({ log: (l, m) => lines.push(`${l} ${m}`) });
    try {
      const archived = await (await provider(home)).readArchive();
      assert.equal(archived.length, 1);
      assert.match(lines[0]!, /^warn Skipped 1 unreadable line/);
    } finally {
      setLogger(previous);
    }
  });
});

Deno.test("ArchiveMemoryProvider follows session switches and sanitizes the segment", async () => {
  await withTempHome(async (home) => {
    const p = await provider(home, "../evil/x");
    assert.equal(
      p.archivePath(),
      join(home, "archive", "__evil_x", "transcript.jsonl"),
    );
    p.onSessionSwitch("s2", { reason: "compression" });
    await p.onPreCompress([{ role: "user", content: "hi" }], {});
    assert.equal(
      (await p.readArchive({ sessionId: "s2" })).length,
      1,
    );
    assert.deepEqual(await p.readArchive({ sessionId: "other" }), []);
    const none = new ArchiveMemoryProvider({ hermesHome: home });
    assert.equal(
      none.archivePath(),
      join(home, "archive", "no-session", "transcript.jsonl"),
    );
  });
});

Deno.test("ArchiveMemoryProvider uses the context HERMES_HOME when not initialized with one", async () => {
  await withTempHome(async (home) => {
    const p = new ArchiveMemoryProvider({ sessionId: "ctx" });
    await withHermesHome(home, async () => {
      await p.onPreCompress([{ role: "user", content: "hi" }], {});
    });
    await Deno.stat(join(home, "archive", "ctx", "transcript.jsonl"));
  });
});

Deno.test("ArchiveMemoryProvider serializes concurrent checkpoints without duplicates", async () => {
  await withTempHome(async (home) => {
    const a = await provider(home);
    const b = await provider(home);
    const messages = syntheticTranscript(300, 200);
    await Promise.all([
      a.onPreCompress(messages.slice(0, 200), {}),
      b.onPreCompress(messages, {}),
      a.onPreCompress(messages, {}),
      b.onPreCompress(messages.slice(0, 250), {}),
    ]);
    const archived = await a.readArchive();
    assert.equal(archived.length, 300);
    assertUniqueKeys(archived.map((m) => m.key));
  });
});

Deno.test({
  name:
    "ArchiveMemoryProvider leaves a readable archive when killed mid-checkpoint",
  ignore: !posix,
  fn: async () => {
    await withTempHome(async (home) => {
      const session = "killed";
      let torn = 0;
      for (let round = 0; round < 3; round++) {
        const proc = new Deno.Command(Deno.execPath(), {
          args: [
            "run",
            "--no-prompt",
            "--allow-read",
            "--allow-write",
            "--allow-env",
            child,
            home,
            session,
          ],
          stdin: "null",
          stdout: "piped",
          stderr: "null",
        }).spawn();
        const reader = proc.stdout.getReader();
        const decoder = new TextDecoder();
        let seen = "";
        // Let it commit a few checkpoints, then kill it at a moment that
        // varies per round (most rounds land inside a big append).
        while ((seen.match(/checkpoint/g) ?? []).length < 2 + round) {
          const { value, done } = await reader.read();
          if (done) break;
          seen += decoder.decode(value);
        }
        await new Promise((r) => setTimeout(r, 5 + round * 7));
        proc.kill("SIGKILL");
        await reader.cancel();
        const status = await proc.status;
        assert.equal(status.signal, "SIGKILL");

        const path = join(home, "archive", session, "transcript.jsonl");
        const bytes = await Deno.readFile(path);
        if (bytes.length > 0 && bytes[bytes.length - 1] !== 0x0a) torn++;

        const reader2 = await provider(home, session);
        const archived = await reader2.readArchive();
        assert.ok(archived.length >= 800, `only ${archived.length} archived`);
        assertUniqueKeys(archived.map((m) => m.key));
        // What survived is exactly a prefix of the transcript, in order.
        const expected = syntheticTranscript(archived.length).filter((m) =>
          m.role === "user" || m.role === "assistant"
        );
        assert.deepEqual(
          archived.map((m) => m.content),
          expected.map((m) => m.content),
        );

        // Checkpointing again completes the archive with no duplicates.
        const full = archived.length + 500;
        await reader2.onPreCompress(syntheticTranscript(full), {
          requireCheckpoint: true,
        });
        const after = await reader2.readArchive();
        assert.equal(after.length, full);
        assertUniqueKeys(after.map((m) => m.key));
        const text = await Deno.readTextFile(path);
        assert.ok(text.endsWith("\n"));
        assert.equal(text.trimEnd().split("\n").length, full);
      }
      // Informational: how many kills tore a line (repaired above).
      console.log(`torn tails observed: ${torn}/3`);
    });
  },
});
