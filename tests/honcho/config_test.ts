// Honcho configuration: honcho.json resolution, host blocks, the lookup rules
// for falsy values, every behaviour key's default and clamping, env-only
// mode, broken files, saving, and connection settings.
import assert from "node:assert/strict";
import { join } from "node:path";
import { type LogLevel, setLogger, withSecretScope } from "@hermes/memory";
import {
  cleanBaseUrl,
  isLocalHonchoUrl,
  resolveHonchoConnection,
} from "../../plugins/memory/honcho/client/connection.ts";
import {
  type HonchoConfig,
  isHonchoUsable,
  loadHonchoConfig,
} from "../../plugins/memory/honcho/config/config.ts";
import {
  hostKeyForProfile,
  resolveHostKey,
} from "../../plugins/memory/honcho/config/paths.ts";
import {
  parseHonchoConfigText,
  readHonchoConfigFile,
  saveHonchoConfig,
} from "../../plugins/memory/honcho/config/file.ts";
import {
  getHonchoConfigFields,
  HONCHO_CONFIG_SCHEMA,
} from "../../plugins/memory/honcho/config/schema.ts";
import { isHonchoError } from "../../plugins/memory/honcho/client/errors.ts";
import { withHome } from "../helpers/test_home.ts";

const HONCHO_ENV = [
  "HONCHO_API_KEY",
  "HONCHO_BASE_URL",
  "HONCHO_URL",
  "HONCHO_ENVIRONMENT",
  "HONCHO_TIMEOUT",
  "HERMES_HONCHO_HOST",
  "HONCHO_LOGGING",
  "HONCHO_INJECTION_LOG",
];

/** Runs `fn` with the Honcho variables blanked except those given. */
function withEnv<T>(
  env: Record<string, string>,
  fn: () => Promise<T>,
): Promise<T> {
  const scope: Record<string, string> = Object.fromEntries(
    HONCHO_ENV.map((name) => [name, ""]),
  );
  return withSecretScope({ ...scope, ...env }, fn);
}

function captureLogs(): {
  lines: { level: LogLevel; message: string }[];
  restore: () => void;
} {
  const lines: { level: LogLevel; message: string }[] = [];
  const previous = setLogger({
    log: (level, message) => lines.push({ level, message }),
  });
  return { lines, restore: () => setLogger(previous) };
}

/** Writes `file` as honcho.json in a fresh home and loads it for `profile`. */
function load(
  file: unknown,
  options: { env?: Record<string, string>; profile?: string } = {},
): Promise<HonchoConfig> {
  return withHome(async (home) => {
    const path = join(home, "honcho.json");
    if (file !== undefined) {
      await Deno.writeTextFile(
        path,
        typeof file === "string" ? file : JSON.stringify(file),
      );
    }
    return await withEnv(
      options.env ?? {},
      () =>
        loadHonchoConfig({
          hermesHome: home,
          profile: options.profile ?? "default",
          configPath: path,
        }),
    );
  });
}

Deno.test("loadHonchoConfig() gives every behaviour key its default", async () => {
  const config = await load({});
  assert.equal(config.envOnly, false);
  assert.equal(config.hostKey, "hermes");
  assert.equal(config.workspaceId, "hermes");
  assert.equal(config.aiPeer, "hermes");
  assert.equal(config.apiKey, undefined);
  assert.equal(config.enabled, false);
  const expected: Partial<HonchoConfig> = {
    environment: "production",
    peerName: undefined,
    timeout: undefined,
    pinUserPeer: false,
    userPeerAliases: {},
    runtimePeerPrefix: "",
    saveMessages: true,
    writeFrequency: "async",
    contextTokens: undefined,
    dialecticReasoningLevel: "low",
    dialecticDynamic: true,
    dialecticMaxChars: 600,
    dialecticDepth: 1,
    dialecticDepthLevels: undefined,
    reasoningHeuristic: true,
    reasoningLevelCap: "high",
    messageMaxChars: 25000,
    dialecticMaxInputChars: 10000,
    recallMode: "hybrid",
    recallSync: false,
    initOnSessionStart: false,
    injectionFrequency: "every-turn",
    contextCadence: 1,
    dialecticCadence: 1,
    queryRewrite: false,
    firstTurnBaseWait: 3,
    firstTurnDialecticWait: 2,
    observationMode: "directional",
    observation: undefined,
    sessionStrategy: "per-directory",
    sessionPeerPrefix: false,
    sessionAiPeerPrefix: false,
    a2aSessions: true,
    sessions: {},
    injectionSessionStart: undefined,
    logging: false,
    injectionLogPath: undefined,
    oauth: undefined,
  };
  for (const [key, value] of Object.entries(expected)) {
    assert.deepEqual(config[key as keyof HonchoConfig], value, key);
    assert.equal(
      config.sources[key as keyof typeof config.sources],
      "default",
      `${key} source`,
    );
  }
  assert.deepEqual(config.observationFlags, {
    user: { observeMe: true, observeOthers: true },
    ai: { observeMe: true, observeOthers: true },
  });
});

Deno.test("loadHonchoConfig() precedence: host block, then root, then environment, then default", async () => {
  const file = {
    apiKey: "root-key",
    workspace: "root-ws",
    peerName: "root-peer",
    hosts: { hermes: { apiKey: "host-key", workspace: "host-ws" } },
  };
  const config = await load(file, { env: { HONCHO_API_KEY: "env-key" } });
  assert.equal(config.apiKey, "host-key");
  assert.equal(config.sources.apiKey, "host");
  assert.equal(config.apiKeyInFile, true);
  assert.equal(config.workspaceId, "host-ws");
  assert.equal(config.peerName, "root-peer");
  assert.equal(config.sources.peerName, "root");
  assert.equal(config.enabled, true);
  assert.equal(config.explicitlyConfigured, true);
  assert.equal(config.observationMode, "unified"); // explicitly configured, no key: migration guard

  const rootOnly = await load({ apiKey: "root-key" }, {
    env: { HONCHO_API_KEY: "env-key" },
  });
  assert.equal(rootOnly.apiKey, "root-key");
  assert.equal(rootOnly.sources.apiKey, "root");
  const envOnlyKey = await load({ workspace: "w" }, {
    env: { HONCHO_API_KEY: "env-key" },
  });
  assert.equal(envOnlyKey.apiKey, "env-key");
  assert.equal(envOnlyKey.sources.apiKey, "env");
  assert.equal(envOnlyKey.apiKeyInFile, false);
});

Deno.test("resolveHostKey() and host blocks", async (t) => {
  await t.step("profile names", async () => {
    assert.equal(hostKeyForProfile("coder"), "hermes_coder");
    assert.equal(hostKeyForProfile("default"), "hermes");
    assert.equal(hostKeyForProfile("custom"), "hermes");
    assert.equal(hostKeyForProfile(undefined), "hermes");
    assert.equal(hostKeyForProfile("my.work!"), "hermes_my_work");
    assert.equal(hostKeyForProfile("..."), "hermes_profile");
    // Python's str.isalnum() keeps letters of any script.
    assert.equal(hostKeyForProfile("café"), "hermes_café");
    assert.equal(hostKeyForProfile("日本"), "hermes_日本");
    assert.equal(hostKeyForProfile("default", { defaultHost: "desk" }), "desk");
    await withEnv({}, () => {
      assert.equal(
        resolveHostKey({
          profile: "coder",
          rawConfig: { defaultHost: "desk" },
        }),
        "hermes_coder",
      );
      assert.equal(
        resolveHostKey({
          profile: "default",
          rawConfig: { defaultHost: "desk" },
        }),
        "desk",
      );
      return Promise.resolve();
    });
  });
  await t.step("HERMES_HONCHO_HOST wins", async () => {
    await withEnv({ HERMES_HONCHO_HOST: "  shared  " }, () => {
      assert.equal(resolveHostKey({ profile: "coder" }), "shared");
      return Promise.resolve();
    });
    const config = await load({
      hosts: { shared: { workspace: "from-env-host" } },
    }, {
      env: { HERMES_HONCHO_HOST: "shared" },
      profile: "coder",
    });
    assert.equal(config.hostKey, "shared");
    assert.equal(config.workspaceId, "from-env-host");
  });
  await t.step(
    "a named profile reads its own block; aiPeer and workspace default to the host key",
    async () => {
      const config = await load({
        hosts: {
          hermes: { workspace: "w", aiPeer: "main" },
          hermes_coder: { peerName: "ada" },
        },
      }, {
        profile: "coder",
      });
      assert.equal(config.hostKey, "hermes_coder");
      assert.equal(config.aiPeer, "hermes_coder");
      assert.equal(config.workspaceId, "hermes_coder");
      assert.equal(config.peerName, "ada");
    },
  );
  await t.step("legacy dot host key", async () => {
    const config = await load({
      hosts: { "hermes.coder": { aiPeer: "coder" } },
    }, { profile: "coder" });
    assert.equal(config.hostBlockKey, "hermes.coder");
    assert.equal(config.aiPeer, "coder");
  });
  await t.step("defaultHost renames the default host", async () => {
    const config = await load({
      defaultHost: "desk",
      hosts: { desk: { recallMode: "tools" } },
    });
    assert.equal(config.hostKey, "desk");
    assert.equal(config.defaultHost, "desk");
    assert.equal(config.recallMode, "tools");
  });
  await t.step(
    "a named profile does not inherit the default host's key (silently, as in Hermes 0.19.0)",
    async () => {
      const config = await load({
        hosts: {
          hermes: { apiKey: "main-key" },
          hermes_coder: { aiPeer: "c" },
        },
      }, {
        profile: "coder",
      });
      assert.equal(config.apiKey, undefined);
    },
  );
});

Deno.test("lookup rules for falsy values", async (t) => {
  await t.step("pick: a falsy host value falls through to root", async () => {
    const config = await load({
      workspace: "root-ws",
      recallMode: "tools",
      hosts: { hermes: { workspace: "", recallMode: null, writeFrequency: 0 } },
      writeFrequency: "turn",
    });
    assert.equal(config.workspaceId, "root-ws");
    assert.equal(config.recallMode, "tools");
    assert.equal(config.writeFrequency, "turn");
  });
  await t.step("pick_set: a false host value is kept", async () => {
    const config = await load({
      saveMessages: true,
      sessionPeerPrefix: true,
      hosts: { hermes: { saveMessages: false, sessionPeerPrefix: false } },
    });
    assert.equal(config.saveMessages, false);
    assert.equal(config.sources.saveMessages, "host");
    assert.equal(config.sessionPeerPrefix, false);
    const rootOff = await load({
      saveMessages: 0,
      hosts: { hermes: { saveMessages: null } },
    });
    assert.equal(rootOff.saveMessages, false);
    assert.equal(rootOff.sources.saveMessages, "root");
  });
  await t.step(
    "flag: first non-null of host keys, then root keys; legacy alias",
    async () => {
      const config = await load({
        pinUserPeer: true,
        recallSync: "yes",
        hosts: {
          hermes: {
            pinPeerName: false,
            dialecticDynamic: "off",
            queryRewrite: 1,
          },
        },
      });
      assert.equal(config.pinUserPeer, false);
      assert.equal(config.recallSync, true);
      // Hermes' bool(): any non-empty text is true, "off" included.
      assert.equal(config.dialecticDynamic, true);
      assert.equal(config.queryRewrite, true);
      const strings = await load({
        dialecticDynamic: "",
        reasoningHeuristic: "false",
        hosts: { hermes: { initOnSessionStart: "0" } },
      });
      assert.equal(strings.dialecticDynamic, false);
      assert.equal(strings.reasoningHeuristic, true);
      assert.equal(strings.initOnSessionStart, true);
      const garbage = await load({
        hosts: { hermes: { a2aSessions: "maybe" } },
      });
      assert.equal(garbage.a2aSessions, true);
    },
  );
  await t.step("parsed: values the cast rejects are skipped", async () => {
    const config = await load({
      dialecticMaxChars: 900,
      contextTokens: 800,
      hosts: { hermes: { dialecticMaxChars: "lots", contextTokens: "many" } },
    });
    assert.equal(config.dialecticMaxChars, 900);
    assert.equal(config.sources.dialecticMaxChars, "root");
    assert.equal(config.contextTokens, 800);
  });
  await t.step(
    "present/string: a key present in the host block wins even when null",
    async () => {
      const config = await load({
        runtimePeerPrefix: "tg_",
        hosts: { hermes: { runtimePeerPrefix: null } },
      });
      assert.equal(config.runtimePeerPrefix, "");
      const trimmed = await load({
        hosts: { hermes: { runtimePeerPrefix: "  dc_ " } },
      });
      assert.equal(trimmed.runtimePeerPrefix, "dc_");
    },
  );
  await t.step(
    "string_map: a host map replaces the root map; entries trimmed, empties dropped",
    async () => {
      const config = await load({
        userPeerAliases: { "1": "root-one", "2": "root-two" },
        hosts: {
          hermes: {
            userPeerAliases: { " 1 ": " ada ", "": "x", "3": "  ", "4": 42 },
          },
        },
      });
      assert.deepEqual(config.userPeerAliases, { "1": "ada", "4": "42" });
      const notObject = await load({ userPeerAliases: ["a"] });
      assert.deepEqual(notObject.userPeerAliases, {});
    },
  );
});

Deno.test("behaviour keys are read as Hermes reads them (int(), exact names, no clamps)", async (t) => {
  const cases: [
    string,
    Record<string, unknown>,
    keyof HonchoConfig,
    unknown,
  ][] = [
    ["depth below 1", { dialecticDepth: 0 }, "dialecticDepth", 1],
    ["depth above 3", { dialecticDepth: 9 }, "dialecticDepth", 3],
    ["depth as text", { dialecticDepth: "2" }, "dialecticDepth", 2],
    ["depth unparseable", { dialecticDepth: "deep" }, "dialecticDepth", 1],
    [
      "write frequency number text",
      { writeFrequency: "3" },
      "writeFrequency",
      3,
    ],
    [
      "write frequency word",
      { writeFrequency: "Session" },
      "writeFrequency",
      "Session",
    ],
    [
      "context tokens 0 kept (the budget then caps nothing)",
      { contextTokens: 0 },
      "contextTokens",
      0,
    ],
    ["context tokens text", { contextTokens: "1200" }, "contextTokens", 1200],
    ["recall mode alias", { recallMode: "auto" }, "recallMode", "hybrid"],
    ["recall mode invalid", { recallMode: "psychic" }, "recallMode", "hybrid"],
    ["recall mode case", { recallMode: "Context" }, "recallMode", "hybrid"],
    [
      "observation alias shared",
      { observationMode: "shared" },
      "observationMode",
      "unified",
    ],
    [
      "observation alias cross",
      { observationMode: "cross" },
      "observationMode",
      "directional",
    ],
    [
      "observation invalid",
      { observationMode: "x" },
      "observationMode",
      "directional",
    ],
    [
      "reasoning level invalid",
      { dialecticReasoningLevel: "extreme" },
      "dialecticReasoningLevel",
      "low",
    ],
    [
      "reasoning level not exact",
      { dialecticReasoningLevel: "MEDIUM" },
      "dialecticReasoningLevel",
      "low",
    ],
    [
      "level cap invalid",
      { reasoningLevelCap: "ultra" },
      "reasoningLevelCap",
      "high",
    ],
    ["level cap ok", { reasoningLevelCap: "max" }, "reasoningLevelCap", "max"],
    [
      "message max above the cloud limit (a self-host may allow it)",
      { messageMaxChars: 99999 },
      "messageMaxChars",
      99999,
    ],
    ["message max small", { messageMaxChars: 5 }, "messageMaxChars", 5],
    ["message max negative", { messageMaxChars: -5 }, "messageMaxChars", -5],
    ["message max float", { messageMaxChars: 1.9 }, "messageMaxChars", 1],
    [
      "message max text float",
      { messageMaxChars: "1.5" },
      "messageMaxChars",
      25000,
    ],
    [
      "dialectic input above the cloud limit",
      { dialecticMaxInputChars: 50000 },
      "dialecticMaxInputChars",
      50000,
    ],
    ["context cadence 0", { contextCadence: 0 }, "contextCadence", 0],
    [
      "dialectic cadence text",
      { dialecticCadence: "4" },
      "dialecticCadence",
      4,
    ],
    [
      "first turn wait negative",
      { firstTurnBaseWait: -2 },
      "firstTurnBaseWait",
      0,
    ],
    [
      "first turn wait text",
      { firstTurnDialecticWait: "1.5" },
      "firstTurnDialecticWait",
      1.5,
    ],
    [
      "injection frequency",
      { injectionFrequency: "first-turn" },
      "injectionFrequency",
      "first-turn",
    ],
    [
      "injection frequency invalid",
      { injectionFrequency: "hourly" },
      "injectionFrequency",
      "every-turn",
    ],
    [
      "strategy kept as given",
      { sessionStrategy: "per-repo" },
      "sessionStrategy",
      "per-repo",
    ],
    [
      "timeout zero skipped",
      { timeout: 0, requestTimeout: "12.5" },
      "timeout",
      12.5,
    ],
  ];
  for (const [name, hostBlock, key, value] of cases) {
    await t.step(name, async () => {
      const config = await load({ hosts: { hermes: hostBlock } });
      assert.deepEqual(config[key], value);
    });
  }
  await t.step(
    "dialecticDepthLevels: invalid → low, truncated and padded to the depth",
    async () => {
      const config = await load({
        hosts: {
          hermes: { dialecticDepth: 3, dialecticDepthLevels: ["max", "bogus"] },
        },
      });
      assert.deepEqual(config.dialecticDepthLevels, ["max", "low", "low"]);
      const cut = await load({
        dialecticDepthLevels: ["minimal", "medium", "high"],
      });
      assert.deepEqual(cut.dialecticDepthLevels, ["minimal"]);
      const notList = await load({
        hosts: { hermes: { dialecticDepthLevels: "high" } },
        dialecticDepthLevels: ["high"],
      });
      assert.deepEqual(notList.dialecticDepthLevels, ["high"]);
    },
  );
  await t.step("timeout from HONCHO_TIMEOUT", async () => {
    const config = await load({}, { env: { HONCHO_TIMEOUT: "45" } });
    assert.equal(config.timeout, 45);
    assert.equal(config.sources.timeout, "env");
  });
  await t.step("observation object overrides the preset", async () => {
    const config = await load({
      hosts: {
        hermes: {
          observationMode: "unified",
          observation: {
            ai: { observeMe: true },
            user: { observeOthers: true, observe_me: false },
          },
        },
      },
    });
    assert.deepEqual(config.observationFlags, {
      user: { observeMe: true, observeOthers: true },
      ai: { observeMe: true, observeOthers: true },
    });
  });
  await t.step("sessions is read from the root only", async () => {
    const config = await load({
      sessions: { "/work/a": " alpha " },
      hosts: { hermes: { sessions: { "/x": "y" } } },
    });
    assert.deepEqual(config.sessions, { "/work/a": "alpha" });
  });
  await t.step("injection.sessionStart", async () => {
    const config = await load({
      hosts: {
        hermes: {
          injection: { sessionStart: ["summary", "peerCard", "bogus"] },
        },
      },
    });
    assert.deepEqual(config.injectionSessionStart, ["summary", "peerCard"]);
    const none = await load({ injection: { sessionStart: [] } });
    assert.deepEqual(none.injectionSessionStart, []);
  });
  await t.step("logging and the injection log", async () => {
    const fromFile = await load({ hosts: { hermes: { logging: "on" } } });
    assert.equal(fromFile.logging, true);
    assert.match(
      fromFile.injectionLogPath ?? "",
      /\.honcho[\\/]injection\.log$/,
    );
    const fromEnv = await load({}, { env: { HONCHO_LOGGING: "1" } });
    assert.equal(fromEnv.logging, true);
    const relocated = await load({}, {
      env: { HONCHO_INJECTION_LOG: "/tmp/inj.log" },
    });
    assert.equal(relocated.logging, true);
    assert.equal(relocated.injectionLogPath, "/tmp/inj.log");
    const fileWins = await load({ logging: false }, {
      env: { HONCHO_LOGGING: "1" },
    });
    assert.equal(fileWins.logging, false);
  });
  await t.step(
    "enabled: explicit value, else whether a key or URL is set",
    async () => {
      assert.equal(
        (await load({ apiKey: "k", enabled: false })).enabled,
        false,
      );
      assert.equal(
        (await load({ baseUrl: "http://localhost:8000" })).enabled,
        true,
      );
      assert.equal(
        (await load({ hosts: { hermes: { enabled: true } } })).enabled,
        true,
      );
    },
  );
});

Deno.test("baseUrl sources; HONCHO_URL is not one; a URL with a control character is refused with a warning", async () => {
  assert.equal(
    (await load({
      hosts: { hermes: { base_url: "http://h1" } },
      baseUrl: "http://r",
    })).baseUrl,
    "http://h1",
  );
  assert.equal(
    (await load({ endpoint: { baseUrl: "http://e" }, baseUrl: "http://r" }))
      .baseUrl,
    "http://e",
  );
  const env = await load({}, {
    env: { HONCHO_URL: "http://u", HONCHO_BASE_URL: "" },
  });
  // Hermes 0.19.0 has no HONCHO_URL.
  assert.equal(env.baseUrl, undefined);
  const fromEnv = await load({}, { env: { HONCHO_BASE_URL: "http://b" } });
  assert.equal(fromEnv.baseUrl, "http://b");
  assert.equal(fromEnv.sources.baseUrl, "env");
  assert.equal(
    (await load({ baseUrl: "http://hönchö.local" })).baseUrl,
    "http://hönchö.local",
  );
  const logs = captureLogs();
  try {
    // The first URL given is dropped when it holds a control character;
    // the next one is not tried.
    const config = await load({
      baseUrl: "http://honcho.local\u001b[0m",
      base_url: "http://fallback",
    });
    assert.equal(config.baseUrl, undefined);
    assert.ok(
      logs.lines.some((l) =>
        l.level === "warn" && /control character/.test(l.message)
      ),
    );
  } finally {
    logs.restore();
  }
});

Deno.test("env-only mode when honcho.json is missing", async () => {
  const config = await load(undefined, {
    env: {
      HONCHO_API_KEY: "env-key",
      HONCHO_ENVIRONMENT: "local",
      HONCHO_TIMEOUT: "7",
    },
    profile: "coder",
  });
  assert.equal(config.envOnly, true);
  assert.equal(config.configFileExists, false);
  assert.equal(config.workspaceId, "hermes");
  assert.equal(config.aiPeer, "hermes_coder");
  assert.equal(config.environment, "local");
  assert.equal(config.sources.environment, "env");
  assert.equal(config.timeout, 7);
  assert.equal(config.enabled, true);
  assert.equal(isHonchoUsable(config), true);
  // HONCHO_ENVIRONMENT is read only in env-only mode.
  const withFile = await load({}, { env: { HONCHO_ENVIRONMENT: "local" } });
  assert.equal(withFile.environment, "production");
  assert.equal(isHonchoUsable(withFile), false);
});

Deno.test("a broken honcho.json: warning with file, line and column; env-only; saves refused, file untouched", async () => {
  await withHome(async (home) => {
    const path = join(home, "honcho.json");
    const broken =
      '{\n  "apiKey": "sk-file-secret",\n  "workspace": "w",,\n}\n';
    await Deno.writeTextFile(path, broken);
    const logs = captureLogs();
    try {
      const config = await withEnv(
        { HONCHO_API_KEY: "env-key" },
        () =>
          loadHonchoConfig({
            hermesHome: home,
            profile: "default",
            configPath: path,
          }),
      );
      assert.equal(config.envOnly, true);
      assert.equal(config.apiKey, "env-key");
      assert.equal(config.workspaceId, "hermes");
      assert.deepEqual(config.raw, {});
      assert.equal(config.configError?.line, 3);
      assert.equal(config.configError?.column, 20);
      const warning = logs.lines.find((l) => l.level === "warn");
      assert.ok(warning, "a warning was logged");
      assert.ok(warning.message.includes(path));
      assert.match(warning.message, /line 3, column 20/);
      assert.ok(!warning.message.includes("sk-file-secret"));
    } finally {
      logs.restore();
    }
    const error = await saveHonchoConfig({ recallMode: "tools" }, home, {
      hostBlock: true,
    }).catch((e) => e);
    assert.ok(isHonchoError(error, "config"));
    assert.ok(error.message.includes(path));
    assert.match(
      error.message,
      /^Refusing to save Honcho config: .* line 3, column 20/,
    );
    assert.equal(error.line, 3);
    assert.equal(await Deno.readTextFile(path), broken);
  });
});

Deno.test("parseHonchoConfigText() locates errors where V8 names a position; a BOM is an error, as in Hermes 0.19.0", () => {
  assert.match(
    parseHonchoConfigText("\uFEFF{}").error?.message ?? "",
    /byte-order mark/,
  );
  const cases: [string, number | undefined, number | undefined][] = [
    ['{"a": 1', 1, 8],
    ['{\n"a": tru\n}', undefined, undefined],
    ['{"a": "x"}\n]', 2, 1],
    ['{"a": 1,\n}', 2, 1],
    ["", 1, 1],
  ];
  for (const [text, line, column] of cases) {
    const { error } = parseHonchoConfigText(text);
    assert.ok(error, text);
    assert.deepEqual([error.line, error.column], [line, column], text);
  }
  assert.equal(
    parseHonchoConfigText("null").error?.message,
    "the top level is not a JSON object",
  );
});

Deno.test("saveHonchoConfig() merges shallowly, touches only the given keys, writes 0600", async () => {
  await withHome(async (home) => {
    const path = join(home, "honcho.json");
    await Deno.writeTextFile(
      path,
      JSON.stringify({
        apiKey: "k",
        sessions: { "/a": "a" },
        hosts: { hermes: { aiPeer: "h" }, other: { x: 1 } },
      }),
    );
    await withEnv({}, async () => {
      assert.equal(
        await saveHonchoConfig({
          baseUrl: "http://localhost:8000",
          apiKey: undefined,
        }, home),
        path,
      );
      await saveHonchoConfig({ recallMode: "tools" }, home, {
        hostBlock: true,
        profile: "default",
      });
      await saveHonchoConfig({ enabled: true }, home, {
        hostBlock: "hermes_coder",
      });
    });
    const saved = JSON.parse(await Deno.readTextFile(path));
    assert.deepEqual(saved, {
      sessions: { "/a": "a" },
      baseUrl: "http://localhost:8000",
      hosts: {
        hermes: { aiPeer: "h", recallMode: "tools" },
        other: { x: 1 },
        hermes_coder: { enabled: true },
      },
    });
    if (Deno.build.os !== "windows") {
      assert.equal((await Deno.stat(path)).mode! & 0o777, 0o600);
    }
    const reread = await readHonchoConfigFile(path);
    assert.equal(reread.exists, true);
    assert.equal(reread.error, undefined);
  });
  await withHome(async (home) => {
    const fresh = join(home, "nested", "profile");
    await saveHonchoConfig({ workspace: "w" }, fresh);
    assert.deepEqual(
      JSON.parse(await Deno.readTextFile(join(fresh, "honcho.json"))),
      { workspace: "w" },
    );
  });
});

Deno.test("resolveHonchoConnection(): base URL cleaning, local key placeholder, timeout, headers", () => {
  const base = {
    apiKey: undefined,
    apiKeyInFile: false,
    baseUrl: undefined,
    environment: "production",
    timeout: undefined,
    workspaceId: "w",
  };
  assert.throws(
    () => resolveHonchoConnection(base),
    (e: unknown) => isHonchoError(e, "config"),
  );
  const cloud = resolveHonchoConnection({ ...base, apiKey: "k" }, {
    hermesVersion: "1.2.3",
    platform: "linux",
  });
  assert.deepEqual(cloud, {
    baseUrl: "https://api.honcho.dev",
    apiKey: "k",
    timeoutMs: 30_000,
    workspaceId: "w",
    headers: {
      "X-Honcho-Host": "hermes/1.2.3 (linux)",
      "X-Honcho-Plugin": "hermes-plugin-honcho/1.0.0",
    },
  });
  const local = resolveHonchoConnection({
    ...base,
    apiKey: "env-key",
    baseUrl: "http://localhost:8000/v3/",
  });
  assert.equal(local.baseUrl, "http://localhost:8000");
  assert.equal(local.apiKey, "local");
  const localWithFileKey = resolveHonchoConnection({
    ...base,
    apiKey: "jwt",
    apiKeyInFile: true,
    baseUrl: "http://10.0.0.5:8000",
  });
  assert.equal(localWithFileKey.apiKey, "jwt");
  const remote = resolveHonchoConnection({
    ...base,
    apiKey: "env-key",
    baseUrl: "https://honcho.example.com/",
  });
  assert.equal(remote.apiKey, "env-key");
  const yaml = resolveHonchoConnection({ ...base, apiKey: "k" }, {
    hermesConfig: {
      honcho: { base_url: "https://yaml.example/v2", request_timeout: 12 },
    },
  });
  assert.equal(yaml.baseUrl, "https://yaml.example");
  assert.equal(yaml.timeoutMs, 12_000);
  assert.equal(
    resolveHonchoConnection({ ...base, apiKey: "k", timeout: 2.5 }).timeoutMs,
    2_500,
  );
  assert.equal(
    resolveHonchoConnection({ ...base, apiKey: "k", environment: "local" })
      .apiKey,
    "local",
  );
  assert.equal(
    resolveHonchoConnection({ ...base, baseUrl: "http://h" }, {})
      .headers["X-Honcho-Host"]!.startsWith("hermes ("),
    true,
  );
});

Deno.test("isLocalHonchoUrl() and cleanBaseUrl()", () => {
  const local = [
    "http://localhost:8000",
    "http://api.localhost",
    "http://127.0.0.1",
    "http://127.8.9.1",
    "http://[::1]:8000",
    "http://10.1.2.3",
    "http://172.16.0.1",
    "http://172.31.255.255",
    "http://192.168.0.10",
    "http://169.254.1.1",
    "http://100.64.0.1",
    "http://100.127.255.254",
    "http://[fd12:3456::1]",
    "http://[fe80::1]",
    "http://[::ffff:192.168.1.1]",
  ];
  const remote = [
    "https://api.honcho.dev",
    "http://172.32.0.1",
    "http://100.128.0.1",
    "http://8.8.8.8",
    "http://[2001:db8::1]",
    "not a url",
  ];
  for (const url of local) assert.equal(isLocalHonchoUrl(url), true, url);
  for (const url of remote) assert.equal(isLocalHonchoUrl(url), false, url);
  assert.equal(cleanBaseUrl("http://h:8000/v3"), "http://h:8000");
  assert.equal(cleanBaseUrl("http://h/api/v12//"), "http://h/api");
  assert.equal(cleanBaseUrl("http://h/v3x"), "http://h/v3x");
});

Deno.test("config_schema: every field is a known honcho.json key, secrets go to .env", async () => {
  const config = await load({});
  const known = new Set([
    ...Object.keys(config.sources),
    "workspace",
    "pinUserPeer",
  ]);
  for (const field of HONCHO_CONFIG_SCHEMA.fields) {
    assert.ok(known.has(field.key), field.key);
  }
  const fields = getHonchoConfigFields();
  const apiKey = fields.find((f) => f.key === "apiKey")!;
  assert.equal(apiKey.secret, true);
  assert.equal(apiKey.env_var, "HONCHO_API_KEY");
  assert.deepEqual(fields.find((f) => f.key === "recallMode")?.choices, [
    "hybrid",
    "context",
    "tools",
  ]);
  assert.ok(
    fields.every((f) => !f.secret || f.env_var),
    "every secret names its env var",
  );
});

Deno.test("resolveHonchoConfigPath() chain: profile file, default profile file, global file", async () => {
  await withHome(async (userHome) => {
    const script = `
      import { loadHonchoConfig } from ${
      JSON.stringify(
        new URL("../../plugins/memory/honcho/config/config.ts", import.meta.url)
          .href,
      )
    };
      import { resolveHonchoConfigPath } from ${
      JSON.stringify(
        new URL("../../plugins/memory/honcho/config/paths.ts", import.meta.url)
          .href,
      )
    };
      const root = Deno.env.get("HOME") + "/.hermes";
      const profile = root + "/profiles/coder";
      const out = [];
      out.push(await resolveHonchoConfigPath({ hermesHome: profile }));
      await Deno.mkdir(Deno.env.get("HOME") + "/.honcho", { recursive: true });
      await Deno.writeTextFile(Deno.env.get("HOME") + "/.honcho/config.json", "{}");
      out.push(await resolveHonchoConfigPath({ hermesHome: profile }));
      await Deno.mkdir(root, { recursive: true });
      await Deno.writeTextFile(root + "/honcho.json", JSON.stringify({ hosts: { hermes_coder: { aiPeer: "c" } } }));
      out.push(await resolveHonchoConfigPath({ hermesHome: profile }));
      const shared = await loadHonchoConfig({ hermesHome: profile });
      out.push(shared.hostKey, shared.aiPeer, shared.writePath);
      await Deno.mkdir(profile, { recursive: true });
      await Deno.writeTextFile(profile + "/honcho.json", "{}");
      out.push(await resolveHonchoConfigPath({ hermesHome: profile }));
      console.log(JSON.stringify(out));
    `;
    const scriptPath = join(userHome, "child.ts");
    await Deno.writeTextFile(scriptPath, script);
    const output = await new Deno.Command(Deno.execPath(), {
      args: [
        "run",
        "--quiet",
        "--no-prompt",
        "--frozen",
        `--config=${new URL("../../deno.json", import.meta.url).pathname}`,
        "--allow-read",
        "--allow-write",
        "--allow-env",
        scriptPath,
      ],
      env: {
        HOME: userHome,
        HERMES_HOME: "",
        HERMES_HONCHO_HOST: "",
        HERMES_DATA_DIR_SUFFIX: "",
      },
      stdout: "piped",
      stderr: "piped",
    }).output();
    const stderr = new TextDecoder().decode(output.stderr);
    assert.equal(output.code, 0, stderr);
    const [missing, global, shared, hostKey, aiPeer, writePath, local] = JSON
      .parse(
        new TextDecoder().decode(output.stdout),
      );
    const profile = join(userHome, ".hermes", "profiles", "coder");
    assert.equal(missing, join(userHome, ".honcho", "config.json"));
    assert.equal(global, join(userHome, ".honcho", "config.json"));
    assert.equal(shared, join(userHome, ".hermes", "honcho.json"));
    assert.equal(hostKey, "hermes_coder");
    assert.equal(aiPeer, "c");
    assert.equal(writePath, join(profile, "honcho.json"));
    assert.equal(local, join(profile, "honcho.json"));
  });
});
