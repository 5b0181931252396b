// Honcho identity: session naming for every strategy (plugins/memory/honcho/SPEC.md §3), id sanitising,
// the 100-character rule, a2a keys, peer naming and aliases (plugins/memory/honcho/SPEC.md §4),
// observation presets (plugins/memory/honcho/SPEC.md §5), and the CLI naming a directory's session
// as the provider does (plus the `map` sanitiser's own rule).
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import {
  a2aSessionKey,
  enforceSessionIdLimit,
  gitTopLevel,
  honchoSessionId,
  resolveSessionKey,
  resolveSessionName,
  type SessionNamingConfig,
  slugify,
} from "../../plugins/memory/honcho/session/naming.ts";
import {
  normalizeRuntimeIds,
  prefixedPeerId,
  resolveAiPeerId,
  resolveAuthorPeerId,
  resolveUserPeerId,
} from "../../plugins/memory/honcho/session/peers.ts";
import { isHonchoError } from "../../plugins/memory/honcho/client/errors.ts";
import { sanitizeId } from "../../plugins/memory/honcho/_util.ts";
import {
  cliSessionName,
  findGitRoot,
  sanitizeMapName,
} from "../../plugins/memory/honcho/cli/_session_name.ts";
import {
  mergeServerObservation,
  normalizeObservationMode,
  OBSERVATION_PRESETS,
  resolveObservation,
  resolveReadPerspective,
} from "../../plugins/memory/honcho/session/observation.ts";

const BASE: SessionNamingConfig = {
  sessionStrategy: "per-directory",
  sessions: {},
  sessionPeerPrefix: false,
  sessionAiPeerPrefix: false,
  peerName: undefined,
  aiPeer: "hermes",
  workspaceId: "hermes",
};

const noGit = (): Promise<string | undefined> => Promise.resolve(undefined);

function sha8(text: string): string {
  return createHash("sha256").update(text).digest("hex").slice(0, 8);
}

Deno.test("sanitizeId() and slugify()", () => {
  assert.equal(sanitizeId("agent:main:telegram"), "agent-main-telegram");
  assert.equal(sanitizeId("a..b"), "a--b");
  assert.equal(sanitizeId("-keep_me-"), "-keep_me-");
  assert.equal(slugify("a::b  c"), "a-b-c");
  assert.equal(slugify("--x--"), "x");
  assert.equal(slugify("!!!"), "");
});

Deno.test("resolveSessionName() per strategy and precedence", async (t) => {
  const cases: {
    name: string;
    config?: Partial<SessionNamingConfig>;
    options: Parameters<typeof resolveSessionName>[1];
    expected: string;
  }[] = [
    {
      name: "gateway key wins over everything, slugged, no peer prefix",
      config: {
        sessionStrategy: "per-session",
        sessions: { "/w/app": "mapped" },
        sessionPeerPrefix: true,
        peerName: "ada",
      },
      options: {
        gatewaySessionKey: "agent:main:telegram:dm:42",
        sessionId: "sid",
        cwd: "/w/app",
        sessionTitle: "T",
      },
      expected: "agent-main-telegram-dm-42",
    },
    {
      name: "an empty gateway slug is ignored",
      options: { gatewaySessionKey: ":::", cwd: "/w/app" },
      expected: "app",
    },
    {
      name: "per-session uses the session id verbatim, with the peer prefix",
      config: {
        sessionStrategy: "per-session",
        sessionPeerPrefix: true,
        peerName: "ada",
      },
      options: { sessionId: "20260309_175514_9797dd", cwd: "/w/app" },
      expected: "ada-20260309_175514_9797dd",
    },
    {
      name: "per-session without an id falls back to the directory",
      config: { sessionStrategy: "per-session" },
      options: { cwd: "/w/app" },
      expected: "app",
    },
    {
      name: "the sessions map beats titles, verbatim",
      config: {
        sessions: { "/w/app": "My Session" },
        sessionPeerPrefix: true,
        peerName: "ada",
      },
      options: { cwd: "/w/app", sessionTitle: "Other" },
      expected: "My Session",
    },
    {
      name: "an explicit title is slugged and prefixed",
      config: { sessionPeerPrefix: true, peerName: "ada" },
      options: {
        cwd: "/w/app",
        sessionTitle: "Fix the login bug!",
        sessionTitleSource: "user",
      },
      expected: "ada-Fix-the-login-bug",
    },
    {
      name: "a title with no source counts as explicit",
      options: { cwd: "/w/app", sessionTitle: "Plan" },
      expected: "Plan",
    },
    {
      name: "derived titles are ignored",
      options: {
        cwd: "/w/app",
        sessionTitle: "Auto",
        sessionTitleSource: "derived",
      },
      expected: "app",
    },
    {
      name: "LLM titles are ignored",
      options: {
        cwd: "/w/app",
        sessionTitle: "Auto",
        sessionTitleSource: "llm",
      },
      expected: "app",
    },
    {
      name: "per-repo uses the repository folder",
      config: {
        sessionStrategy: "per-repo",
        sessionPeerPrefix: true,
        peerName: "ada",
      },
      options: {
        cwd: "/w/repo/src/deep",
        gitTopLevel: () => Promise.resolve("/w/repo"),
      },
      expected: "ada-repo",
    },
    {
      name: "per-repo outside a repository uses the directory",
      config: { sessionStrategy: "per-repo" },
      options: { cwd: "/w/plain", gitTopLevel: noGit },
      expected: "plain",
    },
    {
      name: "per-directory",
      options: { cwd: "/home/ada/projects/web" },
      expected: "web",
    },
    {
      name: "peer prefix needs a peer name",
      config: { sessionPeerPrefix: true },
      options: { cwd: "/w/app" },
      expected: "app",
    },
    {
      name: "global uses the workspace",
      config: { sessionStrategy: "global", workspaceId: "team" },
      options: { cwd: "/w/app" },
      expected: "team",
    },
    {
      name: "unknown strategies behave like global",
      config: { sessionStrategy: "per-planet" },
      options: { cwd: "/w/app" },
      expected: "hermes",
    },
    {
      name: "AI peer prefix comes last",
      config: { sessionAiPeerPrefix: true, aiPeer: "hermes.coder" },
      options: { gatewaySessionKey: "tg:1" },
      expected: "hermes-coder-tg-1",
    },
  ];
  for (const item of cases) {
    await t.step(item.name, async () => {
      assert.equal(
        await resolveSessionName({ ...BASE, ...item.config }, item.options),
        item.expected,
      );
    });
  }
});

Deno.test("resolveSessionKey() falls back to the session id, then hermes-default", async () => {
  assert.equal(
    await resolveSessionKey(BASE, { cwd: "/", sessionId: "sid" }),
    "sid",
  );
  assert.equal(await resolveSessionKey(BASE, { cwd: "/" }), "hermes-default");
  assert.equal(
    await resolveSessionKey(BASE, { cwd: "/w/x", sessionId: "sid" }),
    "x",
  );
});

Deno.test("the 100-character rule keeps 91 characters and a hash of the original", async () => {
  const key = `agent:main:discord:group:${"9".repeat(120)}`;
  const name = await resolveSessionName(BASE, { gatewaySessionKey: key });
  assert.equal(name.length, 100);
  assert.equal(name, `${slugify(key).slice(0, 91)}-${sha8(key)}`);
  // A cut that ends in "-" drops it before the hash.
  const dashy = `${"a".repeat(90)}-${"b".repeat(20)}`;
  assert.equal(
    enforceSessionIdLimit(dashy),
    `${"a".repeat(90)}-${sha8(dashy)}`,
  );
  // As in Hermes, only gateway keys (and AI-prefixed names) are cut: titles
  // and per-session ids keep their length; the Honcho id is cut instead.
  const title = await resolveSessionName(BASE, {
    sessionTitle: "t".repeat(150),
  });
  assert.equal(title.length, 150);
  assert.equal(honchoSessionId(title), `${"t".repeat(91)}-${sha8(title)}`);
  const longId = await resolveSessionName({
    ...BASE,
    sessionStrategy: "per-session",
  }, { sessionId: "x:".repeat(60) });
  assert.equal(longId, "x:".repeat(60));
  assert.equal(honchoSessionId(longId).length, 100);
  assert.match(honchoSessionId(longId), /^[A-Za-z0-9_-]+$/);
  // With the AI prefix, the limit is applied again.
  const prefixed = await resolveSessionName({
    ...BASE,
    sessionAiPeerPrefix: true,
    aiPeer: "bot",
  }, {
    gatewaySessionKey: key,
  });
  assert.equal(prefixed.length, 100);
  assert.ok(prefixed.startsWith("bot-agent-main"));
  assert.equal(enforceSessionIdLimit("x".repeat(100)), "x".repeat(100));
});

Deno.test("a2aSessionKey() names bot-to-bot sessions", () => {
  const key = a2aSessionKey("chat-1", {
    prefix: "a2a",
    ident: "bot:7",
    aiPeer: "hermes.main",
  });
  assert.equal(key, `chat-1:a2a:hermes-main:bot-7-${sha8("bot:7")}`);
  assert.equal(
    a2aSessionKey("s".repeat(120), { prefix: "a2a", ident: "b", aiPeer: "h" })
      .length,
    100,
  );
});

Deno.test("peer naming: AI peer, user peer ladder, aliases, prefixes, authors", async (t) => {
  const config = {
    pinUserPeer: false,
    peerName: undefined,
    userPeerAliases: {},
    runtimePeerPrefix: "",
  };
  await t.step("AI peer", () => {
    assert.equal(resolveAiPeerId({ aiPeer: "hermes_coder" }), "hermes_coder");
    assert.equal(resolveAiPeerId({ aiPeer: "" }), "hermes-assistant");
  });
  await t.step("runtime ids are trimmed, deduplicated, blanks dropped", () => {
    assert.deepEqual(normalizeRuntimeIds([" 1 ", "1", "", null, "2"]), [
      "1",
      "2",
    ]);
  });
  await t.step("pinning collapses runtime users to peerName", () => {
    assert.equal(
      resolveUserPeerId({ ...config, pinUserPeer: true, peerName: "Ada L" }, {
        runtimeIds: ["42"],
      }),
      "Ada-L",
    );
    assert.equal(
      resolveUserPeerId({ ...config, pinUserPeer: true }, {
        runtimeIds: ["42"],
      }),
      "42",
    );
  });
  await t.step("aliases: primary, then alternative id", () => {
    const aliases = { "alt-7": "ada", "99": "bob" };
    assert.equal(
      resolveUserPeerId({ ...config, userPeerAliases: aliases }, {
        runtimeIds: ["42", "alt-7"],
      }),
      "ada",
    );
    assert.equal(
      resolveUserPeerId({ ...config, userPeerAliases: aliases }, {
        runtimeIds: ["99", "alt-7"],
      }),
      "bob",
    );
  });
  await t.step(
    "runtime prefix generates ids, hashing unsafe or colliding ones",
    () => {
      assert.equal(
        resolveUserPeerId({ ...config, runtimePeerPrefix: "tg_" }, {
          runtimeIds: ["42"],
        }),
        "tg_42",
      );
      assert.equal(
        resolveUserPeerId({ ...config, runtimePeerPrefix: "tg:" }, {
          runtimeIds: ["42"],
        }),
        `tg-42-${sha8("tg:42")}`,
      );
      const hash = createHash("sha256").update("tg_42").digest("hex");
      assert.equal(
        prefixedPeerId("tg_", "42", new Set(["tg_42"])),
        `tg_42-${hash.slice(0, 8)}`,
      );
      assert.equal(
        prefixedPeerId(
          "tg_",
          "42",
          new Set(["tg_42", `tg_42-${hash.slice(0, 8)}`]),
        ),
        `tg_42-${hash.slice(0, 12)}`,
      );
      // A configured peerName is reserved.
      assert.equal(
        resolveUserPeerId({
          ...config,
          runtimePeerPrefix: "a",
          peerName: "ada",
        }, { runtimeIds: ["da"] }),
        `ada-${sha8("ada")}`,
      );
    },
  );
  await t.step("plain runtime id, then peerName, then an error", () => {
    assert.equal(
      resolveUserPeerId(config, { runtimeIds: ["user@example.com"] }),
      "user-example-com",
    );
    assert.equal(resolveUserPeerId({ ...config, peerName: "ada" }, {}), "ada");
    assert.throws(
      () => resolveUserPeerId(config, { runtimeIds: [" "] }),
      (e: unknown) => isHonchoError(e, "no_peer"),
    );
  });
  await t.step(
    "turn authors follow aliases and prefixes but not pinning",
    () => {
      const authors = {
        ...config,
        pinUserPeer: true,
        peerName: "ada",
        userPeerAliases: { "5": "eve" },
        runtimePeerPrefix: "dc_",
      };
      assert.equal(resolveAuthorPeerId(authors, "5"), "eve");
      assert.equal(resolveAuthorPeerId(authors, "6"), "dc_6");
      assert.equal(resolveAuthorPeerId(authors, "  "), undefined);
    },
  );
});

Deno.test("observation presets and overrides map to session peer config", () => {
  assert.deepEqual(OBSERVATION_PRESETS.directional, {
    user: { observeMe: true, observeOthers: true },
    ai: { observeMe: true, observeOthers: true },
  });
  assert.deepEqual(OBSERVATION_PRESETS.unified, {
    user: { observeMe: true, observeOthers: false },
    ai: { observeMe: false, observeOthers: true },
  });
  assert.deepEqual(
    resolveObservation("directional", { ai: { observeOthers: false } }),
    {
      user: { observeMe: true, observeOthers: true },
      ai: { observeMe: true, observeOthers: false },
    },
  );
  assert.equal(normalizeObservationMode(" Separate "), "directional");
  assert.equal(normalizeObservationMode("shared"), "unified");
  assert.deepEqual(
    mergeServerObservation({ observeMe: false, observeOthers: true }, {
      observeMe: true,
      observeOthers: null,
    }),
    { observeMe: true, observeOthers: true },
  );
  assert.deepEqual(
    resolveReadPerspective({
      targetPeerId: "hermes",
      aiPeerId: "hermes",
      aiObservesOthers: false,
    }),
    { observer: "hermes", target: "hermes" },
  );
});

Deno.test("gitTopLevel() finds the repository top, and nothing outside one", async () => {
  const repo = fileURLToPath(new URL("../..", import.meta.url)).replace(
    /[\\/]$/,
    "",
  );
  const top = await gitTopLevel(fileURLToPath(new URL("..", import.meta.url)));
  if (top !== undefined) {
    assert.equal(await Deno.realPath(top), await Deno.realPath(repo));
  }
  const outside = await Deno.makeTempDir();
  try {
    assert.equal(await gitTopLevel(outside), undefined);
    assert.equal(await gitTopLevel(`${outside}/missing`), undefined);
  } finally {
    await Deno.remove(outside, { recursive: true });
  }
});

Deno.test("cliSessionName() names the session as the provider does, with the rule that picked it", async () => {
  const root = await Deno.realPath(
    await Deno.makeTempDir({ prefix: "honcho-cli-session-" }),
  );
  try {
    const repo = join(root, "my repo");
    const dirs = [
      join(root, "My  Project"),
      join(root, ".hidden"),
      join(root, "x".repeat(120)),
      repo,
      join(repo, "sub dir"),
    ];
    for (const dir of dirs) await Deno.mkdir(dir, { recursive: true });
    await Deno.mkdir(join(repo, ".git"));
    assert.equal(await findGitRoot(join(repo, "sub dir")), repo);
    assert.equal(await findGitRoot(dirs[0]!), undefined);
    const gitTopLevel = (cwd: string): Promise<string | undefined> =>
      Promise.resolve(cwd.startsWith(repo) ? repo : undefined);

    const configs: SessionNamingConfig[] = [];
    for (
      const sessionStrategy of [
        "per-directory",
        "per-session",
        "per-repo",
        "global",
      ] as const
    ) {
      configs.push({ ...BASE, sessionStrategy });
      configs.push({
        ...BASE,
        sessionStrategy,
        sessionPeerPrefix: true,
        peerName: "alice",
        sessionAiPeerPrefix: true,
        aiPeer: "Sage Bot",
      });
    }
    configs.push({ ...BASE, sessions: { [dirs[1]!]: "mapped name" } });
    for (const config of configs) {
      for (const dir of dirs) {
        const expected = await resolveSessionKey(config, {
          cwd: dir,
          gitTopLevel,
        });
        const named = await cliSessionName(config, `${dir}/`);
        const what = `${config.sessionStrategy} ${dir}`;
        assert.equal(named.key, expected, what);
        assert.equal(named.sessionId, honchoSessionId(expected), what);
        assert.ok(named.sessionId.length <= 100, what);
        assert.equal(
          named.reason,
          Object.hasOwn(config.sessions, dir)
            ? "mapped"
            : config.sessionStrategy,
          what,
        );
      }
    }

    const plain = await cliSessionName(BASE, dirs[0]!);
    assert.deepEqual(plain, {
      key: "My  Project",
      sessionId: "My--Project",
      reason: "per-directory",
    });
    const hidden = await cliSessionName(BASE, dirs[1]!);
    assert.equal(hidden.sessionId, "-hidden");
    const inRepo = await cliSessionName(
      { ...BASE, sessionStrategy: "per-repo" },
      dirs[4]!,
    );
    assert.deepEqual(inRepo, {
      key: "my repo",
      sessionId: "my-repo",
      reason: "per-repo",
    });
    const mapped = await cliSessionName(
      { ...BASE, sessions: { [dirs[1]!]: "mapped name" } },
      dirs[1]!,
    );
    assert.deepEqual(mapped, {
      key: "mapped name",
      sessionId: "mapped-name",
      reason: "mapped",
    });
    const global = await cliSessionName(
      { ...BASE, sessionStrategy: "global", workspaceId: "team" },
      dirs[0]!,
    );
    assert.deepEqual(global, {
      key: "team",
      sessionId: "team",
      reason: "global",
    });
    const top = await cliSessionName(BASE, "/");
    assert.equal(top.sessionId, "hermes-default");
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("sanitizeMapName() turns each invalid character into '-' and strips outer '-'", () => {
  assert.equal(sanitizeMapName("my project!"), "my-project");
  assert.equal(sanitizeMapName("  a  b  "), "a--b");
  assert.equal(sanitizeMapName("--x:y--"), "x-y");
  assert.equal(sanitizeMapName("!!!"), "");
});
