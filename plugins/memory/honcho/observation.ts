/**
 * Observation presets and read perspective (plugins/memory/honcho/SPEC.md §5).
 *
 * Honcho models a conversation as peers exchanging messages. Each peer in
 * a session has two switches that map 1:1 to Honcho's `SessionPeerConfig`:
 * `observeMe` (Honcho builds this peer's representation from its own
 * messages) and `observeOthers` (this peer observes the other peers'
 * messages). `observationMode` is a preset for the four flags; the
 * `observation` object of `honcho.json` overrides single flags.
 *
 * @module
 */

import { isRecord } from "./_util.ts";

/** The two observation presets. */
export type ObservationMode = "directional" | "unified";

/** One peer's observation switches. */
export interface PeerObservation {
  /** Honcho builds this peer's representation from its own messages. */
  observeMe: boolean;
  /** This peer observes the other peers' messages. */
  observeOthers: boolean;
}

/** A partial override of one peer's switches (absent = keep the preset). */
export interface PeerObservationOverride {
  /** Overrides `observeMe` when present. */
  observeMe?: boolean;
  /** Overrides `observeOthers` when present. */
  observeOthers?: boolean;
}

/** The `observation` object of `honcho.json`. */
export interface ObservationOverrides {
  /** The user peer's overrides. */
  user?: PeerObservationOverride;
  /** The AI peer's overrides. */
  ai?: PeerObservationOverride;
}

/** The switches of both peers of a session. */
export interface SessionObservation {
  /** The user peer. */
  user: PeerObservation;
  /** The AI peer. */
  ai: PeerObservation;
}

/**
 * The presets: `directional` = full mutual observation; `unified` = one
 * observer pool (the user models itself only, the AI observes the user but
 * not itself).
 */
export const OBSERVATION_PRESETS: Readonly<
  Record<ObservationMode, Readonly<SessionObservation>>
> = Object.freeze({
  directional: Object.freeze({
    user: Object.freeze({ observeMe: true, observeOthers: true }),
    ai: Object.freeze({ observeMe: true, observeOthers: true }),
  }),
  unified: Object.freeze({
    user: Object.freeze({ observeMe: true, observeOthers: false }),
    ai: Object.freeze({ observeMe: false, observeOthers: true }),
  }),
});

const MODE_ALIASES: Readonly<Record<string, ObservationMode>> = {
  directional: "directional",
  separate: "directional",
  cross: "directional",
  unified: "unified",
  shared: "unified",
};

/**
 * Normalises an `observationMode` value as Hermes does: exactly `unified`
 * or `directional`, or the aliases `shared` → `unified`, `separate`/`cross`
 * → `directional`; anything else (`"UNIFIED"`, `" unified"`) →
 * `directional`.
 */
export function normalizeObservationMode(value: unknown): ObservationMode {
  if (typeof value !== "string" || !Object.hasOwn(MODE_ALIASES, value)) {
    return "directional";
  }
  return MODE_ALIASES[value] as ObservationMode;
}

/**
 * Reads an `observation` object from `honcho.json` into overrides, with
 * Hermes' field names (`observeMe`, `observeOthers`); values that are not
 * booleans are ignored (the preset's value stays).
 */
export function parseObservationOverrides(
  value: unknown,
): ObservationOverrides | undefined {
  if (!isRecord(value)) return undefined;
  const out: ObservationOverrides = {};
  for (const side of ["user", "ai"] as const) {
    const raw = value[side];
    if (!isRecord(raw)) continue;
    const peer: PeerObservationOverride = {};
    const me = raw.observeMe;
    const others = raw.observeOthers;
    if (typeof me === "boolean") peer.observeMe = me;
    if (typeof others === "boolean") peer.observeOthers = others;
    out[side] = peer;
  }
  return out;
}

/**
 * Resolves both peers' switches: the preset of `mode`, with each field
 * present in `overrides` replacing the preset's value.
 */
export function resolveObservation(
  mode: ObservationMode,
  overrides?: ObservationOverrides,
): SessionObservation {
  const preset = OBSERVATION_PRESETS[mode] ?? OBSERVATION_PRESETS.directional;
  const side = (name: "user" | "ai"): PeerObservation => ({
    observeMe: overrides?.[name]?.observeMe ?? preset[name].observeMe,
    observeOthers: overrides?.[name]?.observeOthers ??
      preset[name].observeOthers,
  });
  return { user: side("user"), ai: side("ai") };
}

/** A session peer configuration as the server reports it (nulls = never set). */
export interface ServerPeerObservation {
  /** The server's `observe_me`, or `null`. */
  observeMe: boolean | null;
  /** The server's `observe_others`, or `null`. */
  observeOthers: boolean | null;
}

/**
 * The "sync back" step of session init (plugins/memory/honcho/SPEC.md §5): every non-null value the
 * server reports overrides the local flag.
 */
export function mergeServerObservation(
  local: PeerObservation,
  server: ServerPeerObservation | undefined,
): PeerObservation {
  return {
    observeMe: server?.observeMe ?? local.observeMe,
    observeOthers: server?.observeOthers ?? local.observeOthers,
  };
}

/** Options of {@linkcode resolveReadPerspective}. */
export interface ReadPerspectiveOptions {
  /** The peer being asked about (already resolved from `user`/`ai` aliases and sanitised). */
  targetPeerId: string;
  /** The session's AI peer id. */
  aiPeerId: string;
  /** Whether the AI peer observes others in this session (after sync back). */
  aiObservesOthers: boolean;
}

/** Who reads about whom. */
export interface ReadPerspective {
  /** The observing peer. */
  observer: string;
  /** The observed peer, or `undefined` for the observer's own view. */
  target: string | undefined;
}

/**
 * The read perspective of plugins/memory/honcho/SPEC.md §5: asking about the AI peer → AI observes AI;
 * else when the AI observes others → AI observes the target; else the target
 * is read from its own perspective (no target).
 */
export function resolveReadPerspective(
  options: ReadPerspectiveOptions,
): ReadPerspective {
  const { targetPeerId, aiPeerId, aiObservesOthers } = options;
  if (targetPeerId === aiPeerId) {
    return { observer: aiPeerId, target: aiPeerId };
  }
  if (aiObservesOthers) return { observer: aiPeerId, target: targetPeerId };
  return { observer: targetPeerId, target: undefined };
}
