import assert from "node:assert/strict";
import { join } from "node:path";
import { setLogger } from "../../src/core/log.ts";
import { codePointLength } from "../../src/_util/python_text.ts";
import {
  applyRecallSpill,
  prefetchSpillSource,
  readOutputSpillSettings,
  recallCeilingChars,
  recallSpillPolicyFromConfig,
  resolveSpillDirectory,
  spillOutput,
  spillSessionSegment,
} from "../../src/context/prefetch_spill.ts";
import { withHermesHome } from "../../src/profile/context_scope.ts";

const posix = Deno.build.os !== "windows";

async function withTempHome(
  fn: (home: string) => Promise<void>,
): Promise<void> {
  const home = await Deno.makeTempDir({ prefix: "hermes_spill_" });
  try {
    await fn(home);
  } finally {
    await Deno.remove(home, { recursive: true });
  }
}

function captureLogs(): { lines: string[]; restore: () => void } {
  const lines: string[] = [];
  const previous = setLogger({
    log: (level, message) => lines.push(`${level} ${message}`),
  });
  return { lines, restore: () => setLogger(previous) };
}

function parseSavedPath(preview: string): string {
  const match = /full content saved to (.+)\]$/m.exec(preview);
  assert.ok(match, `no saved path in: ${preview.slice(0, 200)}`);
  return match[1]!;
}

Deno.test("readOutputSpillSettings() applies the documented defaults", () => {
  assert.deepEqual({ ...readOutputSpillSettings({}) }, {
    enabled: true,
    maxChars: 10000,
    previewHead: 500,
    previewTail: 500,
    directory: null,
  });
});

Deno.test("readOutputSpillSettings() falls back on invalid values and never throws", async (t) => {
  await t.step("out-of-range and wrong-typed values", () => {
    const s = readOutputSpillSettings({
      hooks: {
        output_spill: {
          enabled: "maybe",
          max_chars: 0,
          preview_head: -1,
          preview_tail: 2.5,
          directory: "   ",
        },
      },
    });
    assert.equal(s.enabled, true);
    assert.equal(s.maxChars, 10000);
    assert.equal(s.previewHead, 500);
    // Python's int(2.5) is 2.
    assert.equal(s.previewTail, 2);
    assert.equal(s.directory, null);
  });
  await t.step("valid values, including strings YAML may produce", () => {
    const s = readOutputSpillSettings({
      hooks: {
        output_spill: {
          enabled: false,
          max_chars: " 2500 ",
          preview_head: 0,
          preview_tail: 10,
          directory: "/var/spill",
        },
      },
    });
    assert.deepEqual({ ...s }, {
      enabled: false,
      maxChars: 2500,
      previewHead: 0,
      previewTail: 10,
      directory: "/var/spill",
    });
  });
  await t.step(
    "enabled is Python truthiness: a quoted 'false' is on, '' and null are off",
    () => {
      const read = (enabled: unknown) =>
        readOutputSpillSettings({ hooks: { output_spill: { enabled } } })
          .enabled;
      assert.equal(read("false"), true);
      assert.equal(read(""), false);
      assert.equal(read(null), false);
      assert.equal(read(0), false);
      assert.equal(
        readOutputSpillSettings({ hooks: { output_spill: {} } }).enabled,
        true,
      );
    },
  );
  await t.step("malformed sections", () => {
    for (
      const config of [
        { hooks: null },
        { hooks: [] },
        { hooks: { output_spill: "on" } },
        { hooks: { output_spill: [1, 2] } },
        { hooks: { output_spill: { max_chars: -3, preview_tail: "x" } } },
      ]
    ) {
      const s = readOutputSpillSettings(config as Record<string, unknown>);
      assert.equal(s.maxChars, 10000);
      assert.equal(s.previewTail, 500);
    }
  });
});

Deno.test("resolveSpillDirectory() defaults under HERMES_HOME and resolves relative paths there", () => {
  const home = "/srv/hermes";
  assert.equal(
    resolveSpillDirectory(readOutputSpillSettings({}), { hermesHome: home }),
    "/srv/hermes/hook_outputs",
  );
  const rel = readOutputSpillSettings({
    hooks: { output_spill: { directory: "spills" } },
  });
  assert.equal(
    resolveSpillDirectory(rel, { hermesHome: home }),
    "/srv/hermes/spills",
  );
  const abs = readOutputSpillSettings({
    hooks: { output_spill: { directory: "/data/spill/" } },
  });
  assert.equal(resolveSpillDirectory(abs, { hermesHome: home }), "/data/spill");
  withHermesHome("/srv/other", () => {
    assert.equal(
      resolveSpillDirectory(readOutputSpillSettings({})),
      "/srv/other/hook_outputs",
    );
  });
});

Deno.test("recallSpillPolicyFromConfig() is opt-in and snapshots the config", () => {
  const off = recallSpillPolicyFromConfig({}, { hermesHome: "/h" });
  assert.equal(off.spillEnabled, false);
  assert.equal(off.ceilingChars, 100000);
  assert.equal(off.directory, "/h/hook_outputs");

  const config = {
    memory: { prefetch_spill_enabled: true },
    hooks: { output_spill: { max_chars: 20000 } },
  };
  const on = recallSpillPolicyFromConfig(config, { hermesHome: "/h" });
  assert.equal(on.spillEnabled, true);
  assert.equal(on.ceilingChars, 200000);
  // Later edits do not change the snapshot.
  config.memory.prefetch_spill_enabled = false;
  config.hooks.output_spill.max_chars = 5;
  assert.equal(on.spillEnabled, true);
  assert.equal(on.settings.maxChars, 20000);
  assert.ok(Object.isFrozen(on));

  const hooksOff = recallSpillPolicyFromConfig({
    memory: { prefetch_spill_enabled: true },
    hooks: { output_spill: { enabled: false } },
  }, { hermesHome: "/h" });
  assert.equal(hooksOff.spillEnabled, false);
});

Deno.test("recallCeilingChars() is 10 x max_chars with a 100000 minimum", () => {
  assert.equal(recallCeilingChars(1), 100000);
  assert.equal(recallCeilingChars(10000), 100000);
  assert.equal(recallCeilingChars(12345), 123450);
});

Deno.test("spillSessionSegment() replaces path separators and parent references", () => {
  assert.equal(spillSessionSegment(""), "no-session");
  assert.equal(spillSessionSegment(undefined), "no-session");
  assert.equal(spillSessionSegment("abc-123"), "abc-123");
  assert.equal(spillSessionSegment("a/b\\c"), "a_b_c");
  assert.equal(spillSessionSegment("../../etc"), "____etc");
  assert.equal(spillSessionSegment(".."), "_");
  assert.equal(spillSessionSegment("."), "_");
});

Deno.test("applyRecallSpill() passes empty and small recall through unchanged", async () => {
  await withTempHome(async (home) => {
    for (const spill of [true, false]) {
      const policy = recallSpillPolicyFromConfig({
        memory: { prefetch_spill_enabled: spill },
      }, { hermesHome: home });
      const source = prefetchSpillSource("honcho");
      assert.equal(await applyRecallSpill(policy, "", { source }), "");
      const exact = "x".repeat(10000);
      assert.equal(await applyRecallSpill(policy, exact, { source }), exact);
      const unicode = "🧠 recall\n".repeat(900);
      assert.equal(
        await applyRecallSpill(policy, unicode, { source }),
        unicode,
      );
    }
    // Nothing was written.
    assert.deepEqual([...Deno.readDirSync(home)], []);
  });
});

Deno.test("applyRecallSpill() spills a 5 MB recall to a private file and returns the exact preview", async () => {
  await withTempHome(async (home) => {
    const policy = recallSpillPolicyFromConfig({
      memory: { prefetch_spill_enabled: true },
    }, { hermesHome: home });
    const line = "memory entry: the user prefers tea over coffee.\n";
    const text = line.repeat(Math.ceil(5_000_000 / line.length));
    const started = performance.now();
    const out = await applyRecallSpill(policy, text, {
      source: prefetchSpillSource("honcho"),
      sessionId: "sess/1",
    });
    const elapsed = performance.now() - started;
    const path = parseSavedPath(out);
    const dir = join(home, "hook_outputs", "sess_1");
    assert.match(path, /\/hook_outputs\/sess_1\/[0-9a-f]{32}\.txt$/);
    assert.equal(path, join(dir, path.split("/").pop()!));
    const total = text.length.toLocaleString("en-US");
    assert.equal(
      out,
      [
        `[honcho memory prefetch output truncated — ${total} chars; full content saved to ${path}]`,
        "--- head ---",
        text.slice(0, 500),
        "--- tail ---",
        text.slice(-500),
      ].join("\n"),
    );
    // The full text is saved, newline-terminated (not doubled).
    assert.equal(await Deno.readTextFile(path), text);
    if (posix) {
      assert.equal((await Deno.stat(path)).mode! & 0o777, 0o600);
      assert.equal((await Deno.stat(dir)).mode! & 0o777, 0o700);
      assert.equal(
        (await Deno.stat(join(home, "hook_outputs"))).mode! & 0o777,
        0o700,
      );
    }
    assert.ok(elapsed < 5000, `spilling 5 MB took ${elapsed} ms`);
  });
});

Deno.test("spillOutput() adds the trailing newline and honours preview sizes", async (t) => {
  await withTempHome(async (home) => {
    const settings = (spill: Record<string, unknown>) =>
      readOutputSpillSettings({ hooks: { output_spill: spill } });
    await t.step(
      "no newline at the end: one is added to the file",
      async () => {
        const out = await spillOutput("abcdefghijkl", {
          settings: settings({
            max_chars: 5,
            preview_head: 2,
            preview_tail: 3,
          }),
          source: "tool",
          hermesHome: home,
        });
        const path = parseSavedPath(out);
        assert.equal(await Deno.readTextFile(path), "abcdefghijkl\n");
        assert.equal(
          out,
          `[tool output truncated — 12 chars; full content saved to ${path}]\n--- head ---\nab\n--- tail ---\njkl`,
        );
        assert.match(path, /\/no-session\//);
      },
    );
    await t.step("head 0 omits the head part", async () => {
      const out = await spillOutput("abcdefghijkl", {
        settings: settings({ max_chars: 5, preview_head: 0, preview_tail: 3 }),
        source: "tool",
        hermesHome: home,
      });
      assert.deepEqual(out.split("\n").slice(1), ["--- tail ---", "jkl"]);
    });
    await t.step("tail 0 omits the tail part", async () => {
      const out = await spillOutput("abcdefghijkl", {
        settings: settings({ max_chars: 5, preview_head: 2, preview_tail: 0 }),
        source: "tool",
        hermesHome: home,
      });
      assert.deepEqual(out.split("\n").slice(1), ["--- head ---", "ab"]);
    });
    await t.step("text not longer than the head has no tail part", async () => {
      const out = await spillOutput("abcdefghijkl", {
        settings: settings({ max_chars: 5, preview_head: 20, preview_tail: 3 }),
        source: "tool",
        hermesHome: home,
      });
      assert.deepEqual(out.split("\n").slice(1), [
        "--- head ---",
        "abcdefghijkl",
      ]);
    });
    await t.step("disabled spilling returns the text unchanged", async () => {
      const text = "z".repeat(50);
      assert.equal(
        await spillOutput(text, {
          settings: settings({ enabled: false, max_chars: 5 }),
          source: "tool",
          hermesHome: home,
        }),
        text,
      );
    });
    await t.step(
      "counts characters, not UTF-16 units, and never splits a pair",
      async () => {
        const text = "🧠".repeat(8);
        assert.equal(codePointLength(text), 8);
        const out = await spillOutput(text, {
          settings: settings({
            max_chars: 6,
            preview_head: 3,
            preview_tail: 2,
          }),
          source: "tool",
          hermesHome: home,
        });
        assert.match(out, /— 8 chars;/);
        assert.deepEqual(out.split("\n").slice(1), [
          "--- head ---",
          "🧠🧠🧠",
          "--- tail ---",
          "🧠🧠",
        ]);
        // Seven pairs = 14 UTF-16 units but only 7 chars: not over 10.
        const seven = "🧠".repeat(7);
        assert.equal(
          await spillOutput(seven, {
            settings: settings({ max_chars: 10 }),
            source: "tool",
            hermesHome: home,
          }),
          seven,
        );
      },
    );
    await t.step("thousands separators in the header", async () => {
      const out = await spillOutput("q".repeat(1234567), {
        settings: settings({ max_chars: 10, preview_head: 1, preview_tail: 1 }),
        source: "tool",
        hermesHome: home,
      });
      assert.match(out, /^\[tool output truncated — 1,234,567 chars; /);
    });
  });
});

Deno.test({
  name: "spillOutput() refuses a spill directory that is a symbolic link",
  ignore: !posix,
  fn: async () => {
    await withTempHome(async (home) => {
      const target = join(home, "elsewhere");
      await Deno.mkdir(target);
      const link = join(home, "spill-link");
      await Deno.symlink(target, link);
      const logs = captureLogs();
      try {
        const out = await spillOutput("y".repeat(40), {
          settings: readOutputSpillSettings({
            hooks: {
              output_spill: {
                max_chars: 10,
                preview_head: 3,
                preview_tail: 3,
                directory: link,
              },
            },
          }),
          source: "honcho memory prefetch",
          sessionId: "s1",
          hermesHome: home,
        });
        assert.equal(
          out,
          "[honcho memory prefetch output truncated — 40 chars; full content unavailable — spill write failed]\n--- head ---\nyyy\n--- tail ---\nyyy",
        );
        assert.deepEqual([...Deno.readDirSync(target)], []);
        assert.equal(logs.lines.length, 1);
        assert.match(logs.lines[0]!, /^warn .*symbolic link/);
      } finally {
        logs.restore();
      }
    });
  },
});

Deno.test({
  name: "spillOutput() refuses a session directory that is a symbolic link",
  ignore: !posix,
  fn: async () => {
    await withTempHome(async (home) => {
      const spill = join(home, "hook_outputs");
      await Deno.mkdir(spill, { mode: 0o700 });
      const target = join(home, "victim");
      await Deno.mkdir(target);
      await Deno.symlink(target, join(spill, "s1"));
      const logs = captureLogs();
      try {
        const out = await spillOutput("y".repeat(40), {
          settings: readOutputSpillSettings({
            hooks: { output_spill: { max_chars: 10 } },
          }),
          source: "tool",
          sessionId: "s1",
          hermesHome: home,
        });
        assert.match(out, /full content unavailable — spill write failed\]/);
        assert.deepEqual([...Deno.readDirSync(target)], []);
      } finally {
        logs.restore();
      }
    });
  },
});

Deno.test({
  name: "spillOutput() makes an existing session directory private",
  ignore: !posix,
  fn: async () => {
    await withTempHome(async (home) => {
      const session = join(home, "hook_outputs", "s1");
      await Deno.mkdir(session, { recursive: true });
      await Deno.chmod(session, 0o755);
      const out = await spillOutput("y".repeat(40), {
        settings: readOutputSpillSettings({
          hooks: { output_spill: { max_chars: 10 } },
        }),
        source: "tool",
        sessionId: "s1",
        hermesHome: home,
      });
      const path = parseSavedPath(out);
      assert.equal(path.startsWith(session), true, out);
      assert.equal((await Deno.stat(session)).mode! & 0o777, 0o700);
      assert.equal((await Deno.stat(path)).mode! & 0o777, 0o600);
    });
  },
});

Deno.test("spillOutput() reports a failed write in the header when the directory is a file", async () => {
  await withTempHome(async (home) => {
    const file = join(home, "not-a-dir");
    await Deno.writeTextFile(file, "x");
    const logs = captureLogs();
    try {
      const out = await spillOutput("w".repeat(30), {
        settings: readOutputSpillSettings({
          hooks: { output_spill: { max_chars: 10, directory: file } },
        }),
        source: "tool",
        hermesHome: home,
      });
      assert.match(
        out,
        /^\[tool output truncated — 30 chars; full content unavailable — spill write failed\]/,
      );
      assert.equal(logs.lines.filter((l) => l.startsWith("warn")).length, 1);
    } finally {
      logs.restore();
    }
  });
});

Deno.test("spillOutput() creates each file exclusively with a fresh name", async () => {
  await withTempHome(async (home) => {
    const settings = readOutputSpillSettings({
      hooks: { output_spill: { max_chars: 3 } },
    });
    const paths = new Set<string>();
    for (let i = 0; i < 5; i++) {
      const out = await spillOutput(`spill number ${i}`, {
        settings,
        source: "tool",
        sessionId: "same",
        hermesHome: home,
      });
      paths.add(parseSavedPath(out));
    }
    assert.equal(paths.size, 5);
    for (const path of paths) {
      assert.match(await Deno.readTextFile(path), /^spill number \d\n$/);
    }
  });
});

Deno.test("applyRecallSpill() keeps the runaway ceiling when spilling is off", async (t) => {
  await withTempHome(async (home) => {
    const policy = recallSpillPolicyFromConfig({}, { hermesHome: home });
    const source = prefetchSpillSource("honcho");
    await t.step("recall within the ceiling stays whole", async () => {
      const text = "r".repeat(100000);
      assert.equal(await applyRecallSpill(policy, text, { source }), text);
    });
    await t.step("a runaway recall is cut with a marker", async () => {
      const logs = captureLogs();
      try {
        const text = "r".repeat(250000);
        const out = await applyRecallSpill(policy, text, { source });
        assert.equal(
          out,
          `${
            "r".repeat(100000)
          }\n[honcho memory prefetch output truncated at the runaway-recall ceiling — kept 100,000 of 250,000 chars]`,
        );
        assert.match(logs.lines[0]!, /^warn .*runaway-recall ceiling/);
      } finally {
        logs.restore();
      }
    });
    await t.step(
      "the cut moves back to a line break near the end",
      async () => {
        const entry = `${"e".repeat(99)}\n`; // 100 chars per entry
        const text = entry.repeat(1500) + "tail";
        const logs = captureLogs();
        try {
          const out = await applyRecallSpill(policy, text, { source });
          const [kept, marker] = [
            out.slice(0, out.lastIndexOf("\n")),
            out.slice(out.lastIndexOf("\n") + 1),
          ];
          assert.equal(kept, entry.repeat(1000).slice(0, -1));
          assert.equal(
            marker,
            "[honcho memory prefetch output truncated at the runaway-recall ceiling — kept 99,999 of 150,004 chars]",
          );
        } finally {
          logs.restore();
        }
      },
    );
    await t.step("a larger max_chars raises the ceiling", async () => {
      const big = recallSpillPolicyFromConfig({
        hooks: { output_spill: { max_chars: 30000 } },
      }, { hermesHome: home });
      const text = "r".repeat(250000);
      assert.equal(await applyRecallSpill(big, text, { source }), text);
    });
    assert.deepEqual([...Deno.readDirSync(home)], []);
  });
});
