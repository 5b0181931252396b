import assert from "node:assert/strict";
import { join } from "node:path";
import {
  decodeEnvBytes,
  ENV_NAME_DENYLIST,
  loadEnvFile,
  parseEnvText,
  saveEnvValue,
  validateEnvName,
} from "../../src/profile/env_file.ts";
import { withHermesHome } from "../../src/profile/context_scope.ts";
import { readProcessEnv } from "../../src/core/env.ts";

async function withTempDir(fn: (dir: string) => Promise<void>): Promise<void> {
  const dir = await Deno.makeTempDir();
  try {
    await fn(dir);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

Deno.test("parseEnvText() follows the Hermes .env rules", async (t) => {
  await t.step(
    "skips blanks and comments, allows export, splits at the first =",
    () => {
      assert.deepEqual(
        parseEnvText("\n# comment\n  # indented comment\nexport A=1\nB=x=y\n"),
        { A: "1", B: "x=y" },
      );
    },
  );
  await t.step(
    "keeps a byte-order mark in the first key (as Hermes 0.19.0) and reads CRLF line ends",
    () => {
      const bytes = new TextEncoder().encode("\uFEFFA=1\r\nB=2\r\n");
      assert.deepEqual(parseEnvText(decodeEnvBytes(bytes).text), {
        "\uFEFFA": "1",
        B: "2",
      });
      assert.deepEqual(parseEnvText("A=1\r\nB=2\r\n"), { A: "1", B: "2" });
    },
  );
  await t.step(
    "strips an unquoted inline comment only after whitespace",
    () => {
      assert.deepEqual(
        parseEnvText("A=abc # note\nB=abc#not-a-comment\nC=  padded  \n"),
        {
          A: "abc",
          B: "abc#not-a-comment",
          C: "padded",
        },
      );
    },
  );
  await t.step(
    "reads quoted values and ignores what follows the closing quote",
    () => {
      assert.deepEqual(
        parseEnvText(
          `A="has # hash" # comment\nB='single # quoted' trailing\nC="a\\"b\\\\c"\nD='no \\" escapes'\n`,
        ),
        {
          // python-dotenv skips a statement with text after the quote.
          A: "has # hash",
          C: 'a"b\\c',
          D: 'no \\" escapes',
        },
      );
    },
  );
  await t.step("keeps an empty value and lets a later line win", () => {
    assert.deepEqual(parseEnvText("A=\nB=1\nB=2\n"), { A: "", B: "2" });
  });
  await t.step(
    "skips lines without = or with a name python-dotenv refuses",
    () => {
      const invalid: number[] = [];
      assert.deepEqual(
        parseEnvText("JUSTTEXT\n=value\nBAD NAME=1\n1X=2\nKEY-NAME=4\nOK=3\n", {
          onInvalidLine: (line) => invalid.push(line),
        }),
        { "1X": "2", "KEY-NAME": "4", OK: "3" },
      );
      assert.deepEqual(invalid, [2, 3]);
    },
  );
  await t.step(
    "expands ${NAME} and ${NAME:-default} like python-dotenv",
    () => {
      assert.deepEqual(
        parseEnvText(
          "A=one\nB=${A}-two\nC='${HOME}'\nD=${NOPE:-dflt}\nE=$A\n",
          { lookup: (name) => name === "HOME" ? "/home/u" : undefined },
        ),
        { A: "one", B: "one-two", C: "/home/u", D: "dflt", E: "$A" },
      );
    },
  );
  await t.step("decodes double-quote escapes and multi-line values", () => {
    assert.deepEqual(
      parseEnvText('A="a\\nb\\tc"\nB="line1\nline2"\n'),
      { A: "a\nb\tc", B: "line1\nline2" },
    );
  });
});

Deno.test("loadEnvFile() returns {} for a missing file and parses an existing one", async () => {
  await withTempDir(async (dir) => {
    assert.deepEqual(await loadEnvFile(join(dir, ".env")), {});
    await Deno.writeTextFile(join(dir, ".env"), "KEY=value\n");
    assert.deepEqual(await loadEnvFile(join(dir, ".env")), { KEY: "value" });
  });
});

Deno.test("validateEnvName() rejects malformed and denied names", () => {
  validateEnvName("HONCHO_API_KEY");
  validateEnvName("_private1");
  for (const bad of ["", "1ABC", "A-B", "A B", "A=B", "ÄPI"]) {
    assert.throws(() => validateEnvName(bad), RangeError, bad);
  }
  for (
    const denied of ["LD_PRELOAD", "PYTHONPATH", "HERMES_HOME", "ld_preload"]
  ) {
    assert.throws(
      () => validateEnvName(denied),
      (error: unknown) =>
        error instanceof RangeError && error.message.includes(denied),
    );
  }
  assert.ok(ENV_NAME_DENYLIST.has("LD_PRELOAD"));
});

Deno.test("saveEnvValue() creates .env with mode 0600 and round-trips hard values", async () => {
  await withTempDir(async (dir) => {
    const home = join(dir, "profile");
    const values: Record<string, string> = {
      PLAIN: "sk-abc_123",
      SPACES: "two words # not a comment",
      QUOTES: `say "hi" and 'bye' \\ backslash`,
      EMPTY: "",
    };
    for (const [name, value] of Object.entries(values)) {
      await saveEnvValue(name, value, { hermesHome: home });
    }
    assert.deepEqual(await loadEnvFile(join(home, ".env")), values);
    if (Deno.build.os !== "windows") {
      assert.equal((await Deno.stat(join(home, ".env"))).mode! & 0o777, 0o600);
    }
  });
});

Deno.test("saveEnvValue() replaces a key in place and keeps other lines and comments", async () => {
  await withTempDir(async (home) => {
    const path = join(home, ".env");
    await Deno.writeTextFile(
      path,
      "# My keys\nexport OPENAI_API_KEY=old\nOTHER=keep # why\nOPENAI_API_KEY=dup\n",
    );
    await Deno.chmod(path, 0o644);
    await saveEnvValue("OPENAI_API_KEY", "new", { hermesHome: home });
    assert.equal(
      await Deno.readTextFile(path),
      "# My keys\nOPENAI_API_KEY=new\nOTHER=keep # why\n",
    );
    if (Deno.build.os !== "windows") {
      assert.equal((await Deno.stat(path)).mode! & 0o777, 0o600);
    }
  });
});

Deno.test("saveEnvValue() strips line breaks so a value cannot inject a variable", async () => {
  await withTempDir(async (home) => {
    await saveEnvValue("KEY", "abc\nLD_PRELOAD=/evil.so\r", {
      hermesHome: home,
    });
    const env = await loadEnvFile(join(home, ".env"));
    assert.deepEqual(Object.keys(env), ["KEY"]);
    assert.equal(env.KEY, "abcLD_PRELOAD=/evil.so");
  });
});

Deno.test("saveEnvValue() refuses a denied name and writes nothing", async () => {
  await withTempDir(async (home) => {
    await assert.rejects(
      saveEnvValue("LD_PRELOAD", "/evil.so", { hermesHome: home }),
      RangeError,
    );
    await assert.rejects(Deno.stat(join(home, ".env")), Deno.errors.NotFound);
  });
});

Deno.test("saveEnvValue() writes to the context home and never to the process environment", async () => {
  await withTempDir(async (home) => {
    const name = "HERMES_TEST_ENV_FILE_SAVE";
    await withHermesHome(home, () => saveEnvValue(name, "v1"));
    assert.deepEqual(await loadEnvFile(join(home, ".env")), { [name]: "v1" });
    assert.equal(readProcessEnv(name), undefined);
  });
});

Deno.test("saveEnvValue() keeps every key when called concurrently", async () => {
  await withTempDir(async (home) => {
    await Promise.all(
      Array.from(
        { length: 20 },
        (_, i) => saveEnvValue(`K${i}`, `v${i}`, { hermesHome: home }),
      ),
    );
    const env = await loadEnvFile(join(home, ".env"));
    assert.equal(Object.keys(env).length, 20);
    assert.equal(env.K7, "v7");
  });
});

Deno.test("saveEnvValue() refuses values Hermes would read back differently", async () => {
  await withTempDir(async (dir) => {
    for (
      const [name, value, why] of [
        ["X", "brace ${HOME}", /\$\{HOME\}/],
        ["X", "a\0b", /NUL/],
        ["HONCHO_API_KEY", "hk\u200b123", /non-ASCII/],
        ["X", "bad \ud800", /lone surrogate/],
      ] as const
    ) {
      await assert.rejects(
        () => saveEnvValue(name, value, { hermesHome: dir }),
        (error: unknown) =>
          error instanceof RangeError && why.test(error.message),
        `${name}=${JSON.stringify(value)}`,
      );
    }
    assert.equal(
      await Deno.stat(join(dir, ".env")).then(() => true, () => false),
      false,
    );
  });
});

Deno.test("saveEnvValue() replaces one statement and keeps every other byte, multi-line values included", async () => {
  await withTempDir(async (dir) => {
    const before =
      '# keep me\r\nCERT="-----BEGIN-----\nKEY=not-a-statement\n-----END-----"\r\nKEY=old\r\n  export KEY=dup # x\nZ=1';
    await Deno.writeTextFile(join(dir, ".env"), before);
    await saveEnvValue("KEY", "new value", { hermesHome: dir });
    assert.equal(
      await Deno.readTextFile(join(dir, ".env")),
      '# keep me\r\nCERT="-----BEGIN-----\nKEY=not-a-statement\n-----END-----"\r\nKEY="new value"\nZ=1',
    );
  });
});
