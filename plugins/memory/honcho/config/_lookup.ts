// `honcho.json` lookups with Hermes' Python semantics (`_HostLookup`,
// `bool()`, `int()`, `str()`), so a home shared with Hermes resolves alike:
// `"false"` is a true flag, `"3"` and `3.9` are the integer 3.

import { log } from "../../../../src/provider/mod.ts";
import {
  pythonFloat,
  pythonInt,
  pythonStr,
  pythonStrip,
  pythonTruthy,
} from "../../../../src/provider/_bundled.ts";
import { isRecord } from "../_util.ts";

/** Where a resolved value came from (shown by `hermes honcho status`). */
export type ConfigSource = "host" | "root" | "env" | "default";

export type ReasoningLevel = "minimal" | "low" | "medium" | "high" | "max";

/** The reasoning levels, from the cheapest to the most expensive. */
export const REASONING_LEVELS: readonly ReasoningLevel[] = Object.freeze([
  "minimal",
  "low",
  "medium",
  "high",
  "max",
]);

/** How memory reaches the model. */
export type RecallMode = "hybrid" | "context" | "tools";

/** When the base context layer is injected. */
export type InjectionFrequency = "every-turn" | "first-turn";

/** A section of the session-start injection (`injection.sessionStart`). */
export type SessionStartSection =
  | "summary"
  | "peerRepresentation"
  | "peerCard"
  | "aiRepresentation"
  | "aiCard";

/** The section names accepted in `injection.sessionStart`. */
export const SESSION_START_SECTIONS: readonly SessionStartSection[] = Object
  .freeze([
    "summary",
    "peerRepresentation",
    "peerCard",
    "aiRepresentation",
    "aiCard",
  ]);

/** `async`, `turn`, `session` or every N turns; unknown strings behave like `session`. */
export type WriteFrequency = string | number;

/** `per-directory`, `per-repo`, `per-session`, `global`; unknown strings behave like `global`. */
export type SessionStrategy = string;

export interface Found<T> {
  value: T;
  source: ConfigSource;
}

// Hermes' host-block-over-root lookups (`_HostLookup` in client.py).
export class Lookup {
  readonly host: Record<string, unknown>;
  readonly root: Record<string, unknown>;

  constructor(host: Record<string, unknown>, root: Record<string, unknown>) {
    this.host = host;
    this.root = root;
  }

  /** `host.get(k) or root.get(k, default)`. */
  pick(key: string): Found<unknown> | undefined {
    return this.#hostOrRoot(key, pythonTruthy(this.host[key]));
  }

  /** A non-null host value, else the root value when the key is there (even `null`). */
  pickSet(key: string): Found<unknown> | undefined {
    return this.#hostOrRoot(key, this.host[key] != null);
  }

  /** The host value when the key is there (even `null`), else the root's. */
  present(key: string): Found<unknown> | undefined {
    return this.#hostOrRoot(key, Object.hasOwn(this.host, key));
  }

  #hostOrRoot(key: string, fromHost: boolean): Found<unknown> | undefined {
    if (fromHost) return { value: this.host[key], source: "host" };
    return Object.hasOwn(this.root, key)
      ? { value: this.root[key], source: "root" }
      : undefined;
  }

  /** host[k1], host[k2]…, root[k1], root[k2]…: Hermes' lookup order. */
  vals(keys: readonly string[]): Found<unknown>[] {
    const out: Found<unknown>[] = [];
    for (const key of keys) out.push({ value: this.host[key], source: "host" });
    for (const key of keys) out.push({ value: this.root[key], source: "root" });
    return out;
  }

  /** The first non-null of host[k], root[k] that `cast` accepts. */
  parsed<T>(
    key: string,
    cast: (value: unknown) => T | undefined,
  ): Found<T> | undefined {
    for (const found of this.vals([key])) {
      if (found.value == null) continue;
      const value = cast(found.value);
      if (value !== undefined) return { value, source: found.source };
    }
    return undefined;
  }

  /** The first array among host[k], root[k]. */
  firstList(key: string): Found<unknown[]> | undefined {
    for (const found of this.vals([key])) {
      if (Array.isArray(found.value)) {
        return { value: found.value, source: found.source };
      }
    }
    return undefined;
  }

  /** `present`, null → undefined, else `str(value).strip()`. */
  string(key: string): Found<string> | undefined {
    const found = this.present(key);
    if (!found || found.value == null) return undefined;
    return { value: pythonStrip(pythonStr(found.value)), source: found.source };
  }

  /** `present`; must be an object; `str()` of keys and values, stripped; empties dropped. */
  stringMap(key: string): Found<Record<string, string>> | undefined {
    const found = this.present(key);
    if (!found || !isRecord(found.value)) return undefined;
    return { value: toStringMap(found.value), source: found.source };
  }
}

export function toStringMap(
  value: Record<string, unknown>,
): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [rawKey, rawValue] of Object.entries(value)) {
    const key = pythonStrip(rawKey);
    const item = rawValue == null ? "" : pythonStrip(pythonStr(rawValue));
    if (key && item) out[key] = item;
  }
  return out;
}

// A level is one of the five names exactly, as Hermes compares them.
export function exactLevel(value: unknown): ReasoningLevel | undefined {
  return typeof value === "string" &&
      (REASONING_LEVELS as readonly string[]).includes(value)
    ? value as ReasoningLevel
    : undefined;
}

const warned = new Set<string>();

export function warnOnce(key: string, message: string): void {
  if (warned.has(key)) return;
  warned.add(key);
  log("warn", message);
}

// Python's `pick(k) or fallback`: a falsy value is not found.
export function orFound(
  found: Found<unknown> | undefined,
): Found<unknown> | undefined {
  return found && pythonTruthy(found.value) ? found : undefined;
}

// `str()` of a truthy scalar (Hermes' `pick(k) or default` used as text).
export function textFound(
  found: Found<unknown> | undefined,
): Found<string> | undefined {
  if (!found || !pythonTruthy(found.value) || isStructured(found.value)) {
    return undefined;
  }
  return { value: pythonStr(found.value), source: found.source };
}

export function isStructured(value: unknown): boolean {
  return value !== null && typeof value === "object";
}

// Maps a found value; a mapping to `undefined` means "not found".
export function map<T, U>(
  found: Found<T> | undefined,
  fn: (value: T) => U | undefined,
): Found<U> | undefined {
  if (!found) return undefined;
  const value = fn(found.value);
  return value === undefined ? undefined : { value, source: found.source };
}

// Python's `max(0.0, float(v))`: NaN compares false, so it gives 0.
export function nonNegativeFloat(value: unknown): number | undefined {
  const n = pythonFloat(value);
  return n === undefined ? undefined : n > 0 ? n : 0;
}

export function sectionNames(list: unknown[]): SessionStartSection[] {
  const names = list
    .filter((item): item is string => typeof item === "string")
    .map((item) => item.trim())
    .filter((item): item is SessionStartSection =>
      (SESSION_START_SECTIONS as readonly string[]).includes(item)
    );
  return [...new Set(names)];
}

/** Hermes' `writeFrequency`: `int(value)` when Python can, else the text; falsy → `async`. */
export function parseWriteFrequency(value: unknown): WriteFrequency {
  if (!pythonTruthy(value)) return "async";
  return pythonInt(value) ?? pythonStr(value);
}

/** Exactly `hybrid`, `context` or `tools`; anything else (`auto`, `"CONTEXT"`) is `hybrid`. */
export function normalizeRecallMode(value: unknown): RecallMode {
  if (value === "context" || value === "tools" || value === "hybrid") {
    return value;
  }
  return "hybrid";
}

// Hermes 0.19.0 reads root `baseUrl`, root `base_url`, then HONCHO_BASE_URL;
// the host-level and `endpoint.baseUrl` places come first here (listed in
// docs/compatibility.md). The first truthy value is dropped (with a warning)
// when it holds a control character: it would reach logs and status as
// terminal escapes and no server's address has one.
export function resolveBaseUrl(
  host: Record<string, unknown>,
  root: Record<string, unknown>,
  env: (name: string) => string | undefined,
  path: string,
): Found<string | undefined> | undefined {
  const endpoint = isRecord(root.endpoint) ? root.endpoint : {};
  const candidates: [unknown, ConfigSource, string][] = [
    [host.baseUrl, "host", "baseUrl"],
    [host.base_url, "host", "base_url"],
    [endpoint.baseUrl, "root", "endpoint.baseUrl"],
    [root.baseUrl, "root", "baseUrl"],
    [root.base_url, "root", "base_url"],
    [env("HONCHO_BASE_URL"), "env", "HONCHO_BASE_URL"],
  ];
  for (const [value, source, name] of candidates) {
    if (!pythonTruthy(value)) continue;
    if (typeof value !== "string") {
      warnOnce(
        `baseurl-type:${path}:${name}`,
        `Ignoring Honcho base URL from ${name} in ${path}: it is not text; write it as a string like "http://localhost:8000"`,
      );
      return undefined;
    }
    // deno-lint-ignore no-control-regex
    if (/[\x00-\x1f\x7f-\x9f]/.test(value)) {
      warnOnce(
        `baseurl:${path}:${name}`,
        `Ignoring Honcho base URL from ${name}${
          source === "env" ? "" : ` in ${path}`
        }: it contains a control character`,
      );
      return undefined;
    }
    return { value, source };
  }
  return undefined;
}
