/**
 * How the framework turns `config.yaml` values into settings: ONE table of
 * coercions, each mirroring how Hermes' Python code reads the key, so a home
 * shared with Hermes behaves the same in both. Reads never throw: a value
 * Python could not use gives the documented default.
 *
 * | Family | Keys | Rule (Python) | `""` | `"false"` | `null` | absent |
 * | --- | --- | --- | --- | --- | --- | --- |
 * | flag | `memory.memory_enabled`, `memory.user_profile_enabled`, `hooks.output_spill.enabled`, `compression.checkpoint_required`, `compression.micro_compact`, `compression.codex_responses_native` | `bool(cfg.get(key, default))` ({@linkcode configFlag}) | false | **true** | false | default |
 * | switch word | `memory.write_approval` | on when the text (trimmed, any case) is `on`, `true`, `yes`, `1`, `approve`, `enabled`, or the value is `true`/`1` ({@linkcode configSwitch}) | false | false | false | false |
 * | environment switch | `HERMES_ENABLE_PROJECT_PLUGINS`, `DENO_NO_PROMPT` (environment variables, always text) | on when the text (trimmed, any case) is `1`, `true`, `yes`, `on` (`isTruthyEnvValue`) | false | false | — | false |
 * | integer | `memory.memory_char_limit`, `memory.user_char_limit`, `hooks.output_spill.max_chars`/`preview_head`/`preview_tail` | `int(value)` ({@linkcode pythonInt}): `3.9` → 3, `" 7 "` → 7, `true` → 1, `"1.5"` and `"1e3"` → default; then the key's minimum, if any ({@linkcode configInt}) | default | default | default | default |
 *
 * Flags use Python's truthiness on purpose: a quoted `"false"` turns memory
 * on in Hermes (`if cfg.get("memory_enabled")`), so it must here too.
 *
 * @module
 */

import { isRecord } from "../_util/is_record.ts";
import { pythonInt, pythonTruthy } from "../_util/python_values.ts";

/** Walks a dotted key (`"hooks.output_spill"`) through nested objects. */
export function lookupConfig(config: unknown, dottedKey: string): unknown {
  let current: unknown = config;
  for (const key of dottedKey.split(".")) {
    if (!isRecord(current)) return undefined;
    current = current[key];
  }
  return current;
}

/**
 * A flag as Hermes reads it, `bool(cfg.get(key, default))`: absent gives
 * `fallback`; any present value (`null` included) its Python truthiness.
 */
export function configFlag(value: unknown, fallback: boolean): boolean {
  return value === undefined ? fallback : pythonTruthy(value);
}

const SWITCH_WORDS = new Set(["on", "true", "yes", "1", "approve", "enabled"]);

/**
 * A switch read from words, as Hermes reads `memory.write_approval`: on for
 * `true`, `1`, or a text that (trimmed, any case) is `on`, `true`, `yes`,
 * `1`, `approve` or `enabled`; off for anything else.
 */
export function configSwitch(value: unknown): boolean {
  if (value === true) return true;
  if (typeof value === "number") return value === 1;
  return typeof value === "string" &&
    SWITCH_WORDS.has(value.trim().toLowerCase());
}

/**
 * An integer as Hermes reads one, `int(value)` ({@linkcode pythonInt}),
 * that must be at least `minimum`; anything else gives `fallback`.
 */
export function configInt(
  value: unknown,
  fallback: number,
  minimum: number = -Infinity,
): number {
  const n = value === undefined || value === null
    ? undefined
    : pythonInt(value);
  return n === undefined || !Number.isSafeInteger(n) || n < minimum
    ? fallback
    : n;
}
