// config.yaml's YAML side, loaded only to parse a text the launcher did not
// hand over, to hand one over, or to save: PyYAML's reading rules, and saves
// that merge onto the file under a lock, comments kept.

import { dirname } from "../_util/path.ts";
import type {
  Document,
  Node as YamlNode,
  Pair,
  YAMLMap,
} from "npm:yaml@^2.9.1";
import { loadYamlModule, type YamlModule } from "./yaml_module.ts";
import { atomicWriteText } from "../io/atomic_write.ts";
import { withTolerantProcessEnv } from "../core/env.ts";
import { withFileLock } from "../io/file_lock.ts";
import type { HermesConfig } from "../core/memory_provider.ts";
import { pythonYamlTags } from "./yaml_schema.ts";
import {
  lineColumn,
  pythonYamlProblem,
  pythonYamlToJS,
} from "./yaml_python.ts";
import { isPlainObject } from "../_util/is_record.ts";
import { redactForEgress } from "../core/redact.ts";
import { sha256Hex } from "../_util/sha256.ts";
import { ConfigError, readConfigText } from "./config_file.ts";

// PyYAML's safe_load: YAML 1.1 resolved by PyYAML's own rules (see
// yaml_schema.ts), `<<` merges, a repeated key keeps its last value.
const YAML_OPTIONS = {
  version: "1.1",
  uniqueKeys: false,
  merge: true,
  customTags: pythonYamlTags,
} as const;
const STRINGIFY_OPTIONS = { lineWidth: 0 } as const;

/** `config.yaml`'s text as `loadConfig()` returns it. */
export async function parseConfigText(
  path: string,
  text: string,
): Promise<HermesConfig> {
  const doc = parseConfigDocument(await loadYamlModule(), path, text);
  if (doc.contents === null) return {};
  const value = pythonYamlToJS(doc);
  if (value === null || value === undefined) return {};
  return value as HermesConfig;
}

/**
 * What the launcher hands on: none when JSON would not keep it exactly, or
 * when it holds anything that looks like a secret (the launch record is
 * written to disk, and secrets stay only where the user put them).
 */
export async function handConfig(
  text: string,
  config: HermesConfig,
): Promise<string | undefined> {
  if (!isJsonExact(config)) return undefined;
  if (JSON.stringify(redactForEgress(config)) !== JSON.stringify(config)) {
    return undefined;
  }
  const handed = JSON.stringify({ sha256: await sha256Hex(text), config });
  // Windows caps one variable at 32,767 characters.
  return handed.length <= 30_000 ? handed : undefined;
}

function isJsonExact(value: unknown): boolean {
  if (value === null || typeof value === "string") return true;
  if (typeof value === "boolean") return true;
  if (typeof value === "number") {
    return Number.isFinite(value) && !Object.is(value, -0);
  }
  if (Array.isArray(value)) return value.every(isJsonExact);
  return isPlainObject(value) && Object.values(value).every(isJsonExact);
}

/** Saves `config` to the file at `path` (see `saveConfig()`). */
export async function saveConfigFile(
  path: string,
  config: HermesConfig | ((current: HermesConfig) => HermesConfig),
  merge: boolean,
): Promise<void> {
  await Deno.mkdir(dirname(path), { recursive: true });
  const yaml = await loadYamlModule();
  await withFileLock(`${path}.lock`, async () => {
    const text = await readConfigText(path);
    const doc = text === undefined
      ? new yaml.Document({}, YAML_OPTIONS)
      : parseConfigDocument(yaml, path, text);
    if (doc.contents === null) doc.contents = doc.createNode({});
    const root = doc.contents;
    if (!yaml.isMap(root)) {
      throw notAMapping(path);
    }
    const values = typeof config === "function"
      ? config((pythonYamlToJS(doc) ?? {}) as HermesConfig)
      : config;
    applyToMap(yaml, doc, root, values, !merge);
    await atomicWriteText(path, doc.toString(STRINGIFY_OPTIONS));
  });
}

function parseConfigDocument(
  yaml: YamlModule,
  path: string,
  text: string,
): Document {
  // Hermes opens config.yaml as utf-8-sig: a BOM is not part of the text.
  const source = text.replace(/^\uFEFF/, "");
  const doc = withTolerantProcessEnv(() =>
    yaml.parseDocument(source, YAML_OPTIONS)
  );
  // An unknown tag (`!python/object:…`) is only a warning to the package;
  // PyYAML's safe_load refuses it.
  const problem = doc.errors[0] ??
    doc.warnings.find((w) => w.code === "TAG_RESOLVE_FAILED");
  if (problem !== undefined) {
    const position = problem.linePos?.[0];
    const reason = problem.message.split("\n", 1)[0]!
      .replace(/ at line \d+, column \d+:?$/, "");
    throw parseError(path, reason, position?.line, position?.col, problem);
  }
  const python = pythonYamlProblem(doc, source);
  if (python !== undefined) {
    const { line, column } = lineColumn(source, python.offset);
    throw parseError(path, python.message, line, column);
  }
  if (doc.contents !== null && !yaml.isMap(doc.contents)) {
    throw notAMapping(path);
  }
  return doc as Document;
}

function parseError(
  path: string,
  reason: string,
  line: number | undefined,
  column: number | undefined,
  cause?: unknown,
): ConfigError {
  const where = line !== undefined ? ` at line ${line}, column ${column}` : "";
  return new ConfigError(
    `Cannot parse ${path}${where}: ${reason}; fix the YAML there (the file was left unchanged)`,
    { path, line, column, cause },
  );
}

function notAMapping(path: string): ConfigError {
  return new ConfigError(
    `Cannot use ${path}: its top level must be a mapping of keys to values; fix the file or move it aside`,
    { path },
  );
}

function applyToMap(
  yaml: YamlModule,
  doc: Document,
  map: YAMLMap,
  values: Record<string, unknown>,
  prune: boolean,
): void {
  for (const [key, value] of Object.entries(values)) {
    if (value === undefined) continue;
    const pair = findPair(yaml, map, key);
    if (pair === undefined) {
      map.add(doc.createPair(key, value));
      continue;
    }
    const existing = pair.value;
    if (isPlainObject(value) && yaml.isMap(existing)) {
      applyToMap(yaml, doc, existing, value, prune);
    } else if (
      !(yaml.isScalar(existing) && sameScalar(existing.value, value))
    ) {
      const node = doc.createNode(value) as YamlNode;
      if (existing !== null && typeof existing === "object") {
        const old = existing as YamlNode;
        node.comment = old.comment;
        node.commentBefore = old.commentBefore;
        node.spaceBefore = old.spaceBefore;
      }
      pair.value = node;
    }
  }
  if (prune) {
    map.items = map.items.filter((pair) => {
      const key = keyText(yaml, pair);
      return key !== undefined && values[key] !== undefined &&
        Object.hasOwn(values, key);
    });
  }
}

function findPair(
  yaml: YamlModule,
  map: YAMLMap,
  key: string,
): Pair | undefined {
  let found: Pair | undefined;
  for (const pair of map.items) {
    if (keyText(yaml, pair) === key) found = pair;
  }
  return found;
}

function keyText(yaml: YamlModule, pair: Pair): string | undefined {
  const key = pair.key;
  if (yaml.isScalar(key)) return String(key.value);
  if (key === null || typeof key !== "object") return String(key);
  return undefined;
}

function sameScalar(current: unknown, next: unknown): boolean {
  if (current instanceof Date && next instanceof Date) {
    return current.getTime() === next.getTime();
  }
  return current === next;
}
