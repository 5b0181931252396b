// Replays tests/fixtures/hermes_vectors/honcho_config.json (224 homes run
// through Hermes Agent's plugins/memory/honcho/client.py
// HonchoClientConfig.from_global_config) against loadHonchoConfig(): the
// profile, host key, config path and every resolved setting must be what
// Hermes resolves, unless the case is listed in deviations.json.
import assert from "node:assert/strict";
import { join } from "node:path";
import {
  decodeTagged,
  type Deviation,
  deviationsFor,
  loadFixture,
  placeholders,
  pyTruthy,
  rulesFor,
  runHonchoRunner,
  sameValue,
  Tally,
} from "./_vectors.ts";

interface Case {
  id: string;
  input: Record<string, unknown>;
  output: {
    active_profile_name: unknown;
    profile_host_key: unknown;
    resolve_active_host: unknown;
    resolve_config_path: unknown;
    config: Record<string, unknown>;
    logs: { level: string; message: string }[];
  };
}

interface Ours {
  id: string;
  profile: string;
  profileHostKey: string;
  configPath: string;
  config?: Record<string, unknown>;
  error?: string;
  warnings: number;
}

// How each of Hermes' HonchoClientConfig fields is compared with ours.
// Python keeps some raw values that every consumer only tests for
// truthiness (`enabled`, `save_messages`, the prefix flags) or uses as
// text (`api_key`, ids): those compare by that use.
const text = (v: unknown) =>
  v === null || v === undefined
    ? undefined
    : typeof v === "string"
    ? v
    : typeof v === "boolean"
    ? (v ? "True" : "False")
    : String(v);
// Every consumer tests these for truthiness: "" is no key, no peer name.
const textOrNone = (v: unknown) => pyTruthy(v) ? text(v) : undefined;
const FIELDS: [
  string,
  (ours: Record<string, unknown>) => unknown,
  (
    py: unknown,
  ) => unknown,
][] = [
  ["host", (o) => o.hostKey, text],
  ["workspace_id", (o) => o.workspaceId, text],
  ["api_key", (o) => o.apiKey, textOrNone],
  // The SDK's own default for a missing environment is production.
  ["environment", (o) => o.environment, (v) => v ?? "production"],
  ["base_url", (o) => o.baseUrl, text],
  ["timeout", (o) => o.timeout, (v) => v ?? undefined],
  ["peer_name", (o) => o.peerName, textOrNone],
  ["ai_peer", (o) => o.aiPeer, text],
  ["pin_peer_name", (o) => o.pinUserPeer, (v) => v],
  ["user_peer_aliases", (o) => o.userPeerAliases, (v) => v],
  ["runtime_peer_prefix", (o) => o.runtimePeerPrefix, (v) => v],
  ["enabled", (o) => o.enabled, pyTruthy],
  ["save_messages", (o) => o.saveMessages, pyTruthy],
  ["write_frequency", (o) => o.writeFrequency, (v) => v],
  ["context_tokens", (o) => o.contextTokens, (v) => v ?? undefined],
  ["dialectic_reasoning_level", (o) => o.dialecticReasoningLevel, (v) => v],
  ["dialectic_dynamic", (o) => o.dialecticDynamic, (v) => v],
  ["dialectic_max_chars", (o) => o.dialecticMaxChars, (v) => v],
  ["dialectic_depth", (o) => o.dialecticDepth, (v) => v],
  [
    "dialectic_depth_levels",
    (o) => o.dialecticDepthLevels,
    (v) => v ?? undefined,
  ],
  ["reasoning_heuristic", (o) => o.reasoningHeuristic, (v) => v],
  ["reasoning_level_cap", (o) => o.reasoningLevelCap, (v) => v],
  ["message_max_chars", (o) => o.messageMaxChars, (v) => v],
  ["dialectic_max_input_chars", (o) => o.dialecticMaxInputChars, (v) => v],
  ["recall_mode", (o) => o.recallMode, (v) => v],
  ["recall_sync", (o) => o.recallSync, (v) => v],
  ["init_on_session_start", (o) => o.initOnSessionStart, (v) => v],
  // The provider only ever asks `== "first-turn"`.
  [
    "injection_frequency",
    (o) => o.injectionFrequency,
    (v) => v === "first-turn" ? "first-turn" : "every-turn",
  ],
  ["context_cadence", (o) => o.contextCadence, (v) => v],
  ["dialectic_cadence", (o) => o.dialecticCadence, (v) => v],
  ["query_rewrite", (o) => o.queryRewrite, (v) => v],
  ["first_turn_base_wait", (o) => o.firstTurnBaseWait, (v) => v],
  ["first_turn_dialectic_wait", (o) => o.firstTurnDialecticWait, (v) => v],
  ["observation_mode", (o) => o.observationMode, (v) => v],
  ["user_observe_me", (o) => flags(o).user.observeMe, pyTruthy],
  ["user_observe_others", (o) => flags(o).user.observeOthers, pyTruthy],
  ["ai_observe_me", (o) => flags(o).ai.observeMe, pyTruthy],
  ["ai_observe_others", (o) => flags(o).ai.observeOthers, pyTruthy],
  ["session_strategy", (o) => o.sessionStrategy, (v) => v],
  ["session_peer_prefix", (o) => o.sessionPeerPrefix, pyTruthy],
  ["a2a_sessions", (o) => o.a2aSessions, (v) => v],
  ["session_ai_peer_prefix", (o) => o.sessionAiPeerPrefix, pyTruthy],
  ["sessions", (o) => o.sessions, (v) => v],
  ["raw", (o) => o.raw, (v) => v],
  ["explicitly_configured", (o) => o.explicitlyConfigured, (v) => v],
  ["config_path", (o) => o.configPath, (v) => v],
  ["hermes_home", (o) => o.hermesHome, (v) => v],
];

type Flags = Record<
  "user" | "ai",
  Record<"observeMe" | "observeOthers", unknown>
>;
function flags(o: Record<string, unknown>): Flags {
  return o.observationFlags as Flags;
}

function show(v: unknown): string {
  return JSON.stringify(
    v,
    (_k, x) =>
      typeof x === "bigint" ? `${x}n` : x === undefined ? "<undefined>" : x,
  );
}

const same = sameValue;

// What a listed deviation promises instead of Hermes' values.
function checkDeviation(d: Deviation, c: Case, ours: Ours): string | null {
  switch (d.id) {
    case "honcho-unusable-file":
      // Hermes raises out of from_global_config; we warn and use env only.
      if (!("$exception" in c.output.config)) return "Python did not raise";
      if (ours.error) return `we threw: ${ours.error}`;
      if (ours.warnings === 0) return "no warning was logged";
      if (ours.config?.envOnly !== true) return "not env-only";
      return null;
    case "honcho-sessions-not-object":
      if (JSON.stringify(ours.config?.sessions) !== "{}") {
        return "sessions should be ignored";
      }
      return ours.warnings > 0 ? null : "no warning was logged";
    case "honcho-invalid-reasoning-level": {
      const level = ours.config?.dialecticReasoningLevel;
      return ["minimal", "low", "medium", "high", "max"].includes(
          String(level),
        )
        ? null
        : `level ${level} is not a valid one`;
    }
    default:
      return null;
  }
}

Deno.test("Honcho settings: every recorded home resolves as Hermes resolves it", async () => {
  const fixture = await loadFixture<Case>("honcho_config.json");
  const deviations = await deviationsFor("honcho_config");
  const rules = new Set(await rulesFor("honcho_config"));
  const used = new Set<string>();
  const { root, results } = await runHonchoRunner(
    "config",
    "honcho_config.json",
  );
  const tally = new Tally("honcho_config");
  try {
    for (const [i, c] of fixture.cases.entries()) {
      const ours = results[i] as unknown as Ours;
      const caseRoot = join(root, String(i));
      const home = join(caseRoot, "home");
      // The recorder replaced the HERMES_HOME value as set (a trailing
      // slash included) by <HERMES_HOME>, when one was set.
      const hh = c.input.hermes_home as string | null;
      const mapping: Record<string, string> = {
        [home]: "<HOME>",
        [caseRoot]: "<ROOT>",
      };
      if (hh !== null && hh.trim() !== "") {
        mapping[hh.replaceAll("<HOME>", home).replaceAll("<ROOT>", caseRoot)] =
          "<HERMES_HOME>";
      }
      const ph = placeholders(mapping);
      const fix = (v: unknown): unknown =>
        typeof v === "string"
          ? ph(v)
          : Array.isArray(v)
          ? v.map(fix)
          : v !== null && typeof v === "object"
          ? Object.fromEntries(
            Object.entries(v).map(([k, x]) => [k, fix(x)]),
          )
          : v;
      const failures: string[] = [];
      const py = c.output;
      const check = (what: string, a: unknown, b: unknown) => {
        if (!same(fix(a), decodeTagged(b))) {
          failures.push(
            `${what}: ours ${show(fix(a))} python ${show(decodeTagged(b))}`,
          );
        }
      };
      check("active_profile_name", ours.profile, py.active_profile_name);
      check("profile_host_key", ours.profileHostKey, py.profile_host_key);
      check("resolve_config_path", ours.configPath, py.resolve_config_path);
      if ("$exception" in py.config) {
        failures.push(
          `Python raised ${show(py.config.$exception)}; ours ${
            ours.error ?? "resolved"
          }`,
        );
      } else if (ours.config === undefined) {
        failures.push(`we threw ${ours.error}`);
      } else {
        check(
          "resolve_active_host",
          ours.config.hostKey,
          py.resolve_active_host,
        );
        const cfg = decodeTagged(py.config) as Record<string, unknown>;
        for (const [field, get, effective] of FIELDS) {
          // Fields the recorded version does not have (0.19.0: recallSync,
          // a2aSessions, sessionAiPeerPrefix; the deviation
          // honcho-newer-keys lists what they do here).
          if (!(field in cfg)) continue;
          const a = fix(get(ours.config));
          const b = effective(cfg[field]);
          if (!same(a ?? undefined, b ?? undefined)) {
            failures.push(
              `${field}: ours ${show(a)} python ${show(b)} (raw ${
                show(cfg[field])
              })`,
            );
          }
        }
      }
      // Non-boolean observation values go to the SDK's validation in
      // Hermes; such a case must be listed (honcho-observation-non-boolean).
      if (
        !("$exception" in py.config) &&
        [
          "user_observe_me",
          "user_observe_others",
          "ai_observe_me",
          "ai_observe_others",
        ]
          .some((f) => typeof decodeTagged(py.config[f]) !== "boolean")
      ) failures.push("non-boolean observation value");
      // Rule "honcho-log-wording": our warnings are our own sentences; a
      // case where Hermes warns must warn here too (and vice versa).
      const pyWarned = py.logs.some((l) => l.level === "WARNING");
      if (pyWarned !== ours.warnings > 0) {
        failures.push(
          `warnings: ours ${ours.warnings}, python ${show(py.logs)}`,
        );
      } else if (pyWarned) used.add("honcho-log-wording");
      const deviation = deviations.get(c.id);
      const problem = deviation && checkDeviation(deviation, c, ours);
      if (problem) {
        tally.failures.push(`${c.id} [${deviation!.id}]: ${problem}`);
      } else tally.add(c.id, failures, deviation, pyWarned);
    }
  } finally {
    await Deno.remove(root, { recursive: true });
  }
  console.log(tally.report());
  for (const rule of rules) {
    assert.ok(used.has(rule), `rule deviation ${rule} is never needed`);
  }
  assert.equal(
    tally.failures.length,
    0,
    `${tally.failures.length} cases differ:\n${
      tally.failures.slice(0, 60).join("\n")
    }`,
  );
});
