// Pins what the Honcho settings table derives, recorded from the code before
// the table existed (tests/fixtures/honcho/settings_snapshot.json): the
// desktop schema, the provider contract's getConfigSchema() fields, the
// status rows, and the values and sources the resolver gives three homes
// (empty, a full host block over root values, environment only).
// Regenerate only on purpose: HONCHO_SNAPSHOT_UPDATE=1 deno test … -A.
import assert from "node:assert/strict";
import { resolveHonchoConfig } from "../../plugins/memory/honcho/config/config.ts";
import {
  getHonchoConfigFields,
  HONCHO_CONFIG_SCHEMA,
  HONCHO_TUNING_DEFAULTS,
} from "../../plugins/memory/honcho/config/schema.ts";
import { SETTING_ROWS } from "../../plugins/memory/honcho/cli/_settings_view.ts";
import { withSecretScope } from "@hermes/memory";
import { HONCHO_ENV_VARS } from "../helpers/honcho_cli.ts";

const FIXTURE = new URL(
  "../fixtures/honcho/settings_snapshot.json",
  import.meta.url,
);

const HOMES: Record<
  string,
  { raw?: Record<string, unknown>; env: Record<string, string> }
> = {
  empty: { raw: {}, env: {} },
  full: {
    raw: {
      baseUrl: "http://127.0.0.1:9",
      timeout: "12.5",
      contextTokens: 900,
      logging: false,
      sessions: { "/w": "work", "/x": 3 },
      hosts: {
        hermes: {
          apiKey: "hk-123456789",
          environment: "local",
          workspace: "ws",
          aiPeer: "bot",
          peerName: "alice",
          enabled: "false",
          pinPeerName: 1,
          userPeerAliases: { " u1 ": "p1", u2: "" },
          runtimePeerPrefix: " rt- ",
          saveMessages: 0,
          writeFrequency: "3",
          dialecticReasoningLevel: "medium",
          dialecticDynamic: false,
          dialecticMaxChars: "800",
          dialecticDepth: 7,
          dialecticDepthLevels: ["high", "bogus"],
          reasoningHeuristic: 0,
          reasoningLevelCap: "MAX",
          messageMaxChars: 500,
          dialecticMaxInputChars: 2000,
          recallMode: "auto",
          recallSync: true,
          initOnSessionStart: 1,
          injectionFrequency: "first-turn",
          contextCadence: 2,
          dialecticCadence: "4",
          queryRewrite: true,
          firstTurnBaseWait: -1,
          firstTurnDialecticWait: "1.5",
          observationMode: "unified",
          observation: { user: { observeMe: false } },
          sessionStrategy: "per-repo",
          sessionPeerPrefix: 1,
          sessionAiPeerPrefix: "",
          a2aSessions: false,
          injection: { sessionStart: ["summary", " peerCard ", "x"] },
          oauth: { refresh_token: "r" },
        },
      },
    },
    env: {},
  },
  envOnly: {
    env: {
      HONCHO_API_KEY: "env-key-9999",
      HONCHO_BASE_URL: "http://localhost:8000",
      HONCHO_ENVIRONMENT: "local",
      HONCHO_TIMEOUT: "7",
      HONCHO_LOGGING: "yes",
    },
  },
};

async function current(): Promise<Record<string, unknown>> {
  const userHome = Deno.env.get("HOME") ?? "";
  const resolved: Record<string, unknown> = {};
  for (const [name, home] of Object.entries(HOMES)) {
    const blank = Object.fromEntries(HONCHO_ENV_VARS.map((n) => [n, ""]));
    const config = await withSecretScope(
      { ...blank, ...home.env },
      () =>
        resolveHonchoConfig(
          {
            path: "/nowhere/honcho.json",
            exists: home.raw !== undefined,
            raw: home.raw ?? {},
          },
          { hermesHome: "/nowhere", profile: "default" },
        ),
    );
    const values: Record<string, unknown> = {};
    for (const key of Object.keys(config.sources).sort()) {
      const value = (config as unknown as Record<string, unknown>)[key];
      values[key] = {
        // The one path under the (test) home: recorded as ~.
        value: typeof value === "string" && value.startsWith(`${userHome}/`)
          ? `~${value.slice(userHome.length)}`
          : value ?? null,
        source: config.sources[key as keyof typeof config.sources],
      };
    }
    resolved[name] = values;
  }
  return JSON.parse(JSON.stringify({
    schema: HONCHO_CONFIG_SCHEMA,
    configFields: getHonchoConfigFields(),
    tuningDefaults: HONCHO_TUNING_DEFAULTS,
    statusRows: SETTING_ROWS,
    resolved,
  }));
}

Deno.test("the settings table derives today's schema, fields, status rows and resolved values", async () => {
  const now = await current();
  if (Deno.env.get("HONCHO_SNAPSHOT_UPDATE") === "1") {
    await Deno.writeTextFile(FIXTURE, JSON.stringify(now, null, 2) + "\n");
  }
  const recorded = JSON.parse(await Deno.readTextFile(FIXTURE));
  // Order matters (the desktop and status print in it): compare as text.
  assert.equal(JSON.stringify(now.schema), JSON.stringify(recorded.schema));
  assert.equal(
    JSON.stringify(now.configFields),
    JSON.stringify(recorded.configFields),
  );
  assert.equal(
    JSON.stringify(now.statusRows),
    JSON.stringify(recorded.statusRows),
  );
  assert.deepEqual(now, recorded);
});
