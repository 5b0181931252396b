/**
 * Observation presets and read perspective (plugins/memory/honcho/SPEC.md §5):
 * each session peer has `observeMe` and `observeOthers` (Honcho's
 * `SessionPeerConfig`); `observationMode` presets all four, `observation`
 * overrides single flags.
 * @module
 */

import type { SessionPeerConfig } from "../client/wire.ts";
import { isRecord } from "../_util.ts";

export type ObservationMode = "directional" | "unified";

export interface PeerObservation {
  /** Honcho builds this peer's representation from its own messages. */
  observeMe: boolean;
  /** This peer observes the other peers' messages. */
  observeOthers: boolean;
}

/** The `observation` object of `honcho.json` (an absent flag keeps the preset). */
export interface ObservationOverrides {
  user?: Partial<PeerObservation>;
  ai?: Partial<PeerObservation>;
}

export interface SessionObservation {
  user: PeerObservation;
  ai: PeerObservation;
}

/** `directional`: full mutual observation; `unified`: the AI observes the user, not itself. */
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

/** An `observationMode` as Hermes reads it: exact names or aliases, anything else `directional`. */
export function normalizeObservationMode(value: unknown): ObservationMode {
  if (typeof value !== "string" || !Object.hasOwn(MODE_ALIASES, value)) {
    return "directional";
  }
  return MODE_ALIASES[value] as ObservationMode;
}

/** Reads an `observation` object; values that are not booleans are ignored. */
export function parseObservationOverrides(
  value: unknown,
): ObservationOverrides | undefined {
  if (!isRecord(value)) return undefined;
  const out: ObservationOverrides = {};
  for (const side of ["user", "ai"] as const) {
    const raw = value[side];
    if (!isRecord(raw)) continue;
    const peer: Partial<PeerObservation> = {};
    const me = raw.observeMe;
    const others = raw.observeOthers;
    if (typeof me === "boolean") peer.observeMe = me;
    if (typeof others === "boolean") peer.observeOthers = others;
    out[side] = peer;
  }
  return out;
}

/** Both peers' switches: the preset of `mode` with `overrides` applied. */
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

/** Session init's "sync back" (plugins/memory/honcho/SPEC.md §5): each non-null server value wins. */
export function mergeServerObservation(
  local: PeerObservation,
  server: SessionPeerConfig | undefined,
): PeerObservation {
  return {
    observeMe: server?.observeMe ?? local.observeMe,
    observeOthers: server?.observeOthers ?? local.observeOthers,
  };
}

/**
 * Who reads about `targetPeerId` (plugins/memory/honcho/SPEC.md §5): the AI
 * about itself or, when it observes others, about the target; else the target
 * from its own perspective (`target` undefined).
 */
export function resolveReadPerspective(
  options: {
    targetPeerId: string;
    aiPeerId: string;
    aiObservesOthers: boolean;
  },
): { observer: string; target: string | undefined } {
  const { targetPeerId, aiPeerId, aiObservesOthers } = options;
  if (targetPeerId === aiPeerId) {
    return { observer: aiPeerId, target: aiPeerId };
  }
  if (aiObservesOthers) return { observer: aiPeerId, target: targetPeerId };
  return { observer: targetPeerId, target: undefined };
}
