/**
 * The profile's `config.yaml`: loading as PyYAML's `safe_load` reads it
 * (YAML 1.1; what PyYAML refuses is a {@linkcode ConfigError} naming file, line
 * and column, and such a file is never overwritten), and saving that merges
 * onto what is on disk, keeps the user's comments, and spells every value so
 * PyYAML reads it back the same.
 *
 * @module
 */

import { dirname, join } from "../_util/path.ts";
import type {
  Document,
  Node as YamlNode,
  Pair,
  YAMLMap,
} from "npm:yaml@^2.9.1";
import { loadYamlModule, type YamlModule } from "./yaml_module.ts";
import { atomicWriteText } from "../io/atomic_write.ts";
import { readProcessEnv, withTolerantProcessEnv } from "../core/env.ts";
import { withFileLock } from "../io/file_lock.ts";
import { getHermesHome } from "../profile/hermes_home.ts";
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

// PyYAML's safe_load: YAML 1.1 resolved by PyYAML's own rules (see
// yaml_schema.ts), `<<` merges, a repeated key keeps its last value.
const YAML_OPTIONS = {
  version: "1.1",
  uniqueKeys: false,
  merge: true,
  customTags: pythonYamlTags,
} as const;
const STRINGIFY_OPTIONS = { lineWidth: 0 } as const;

/** Options of {@linkcode ConfigError}. */
interface ConfigErrorOptions {
  /** The config file. */
  path: string;
  /** The 1-based line of the problem, when known. */
  line?: number;
  /** The 1-based column of the problem, when known. */
  column?: number;
  /** The underlying error. */
  cause?: unknown;
}

/**
 * A `config.yaml` that cannot be used: it does not parse, or its top level
 * is not a mapping. Carries the file and, when known, the line and column.
 *
 * @category Errors callers catch
 */
export class ConfigError extends Error {
  /** The config file. */
  readonly path: string;
  /** The 1-based line of the problem, when known. */
  readonly line?: number;
  /** The 1-based column of the problem, when known. */
  readonly column?: number;

  /**
   * Creates the error.
   *
   * @param message What is wrong and what to do.
   * @param options Where it is wrong.
   */
  constructor(message: string, options: ConfigErrorOptions) {
    super(message, { cause: options.cause });
    this.name = "ConfigError";
    this.path = options.path;
    this.line = options.line;
    this.column = options.column;
  }
}

/**
 * Options of {@linkcode loadConfig}.
 *
 * @category Config
 */
export interface LoadConfigOptions {
  /**
   * The profile home whose `config.yaml` is read.
   *
   * @default {getHermesHome()}
   */
  hermesHome?: string;
}

/**
 * Options of {@linkcode saveConfig}.
 *
 * @category Config
 */
export interface SaveConfigOptions {
  /**
   * Merge `config` onto the file on disk, keeping keys and sections it does
   * not mention. When `false`, keys absent from `config` are removed
   * (comments of the keys that remain are still kept).
   *
   * @default {true}
   */
  mergeExisting?: boolean;
  /**
   * The profile home whose `config.yaml` is written.
   *
   * @default {getHermesHome()}
   */
  hermesHome?: string;
}

/**
 * Where a profile's `config.yaml` is.
 *
 * @param hermesHome The profile home; defaults to the active one.
 * @returns `<hermesHome>/config.yaml`.
 *
 * @example The config file of a profile
 * ```ts
 * import { getConfigPath } from "@hermes/memory";
 * import assert from "node:assert/strict";
 * assert.equal(getConfigPath("/srv/hermes"), "/srv/hermes/config.yaml");
 * ```
 *
 * @category Config
 */
export function getConfigPath(hermesHome?: string): string {
  return join(hermesHome ?? getHermesHome(), "config.yaml");
}

/**
 * Loads the profile's `config.yaml`.
 *
 * @param options Which profile home to read.
 * @returns The config as plain data; `{}` when the file is missing or holds
 * no document.
 * @throws {ConfigError} When the file does not parse (naming the file, line
 * and column) or its top level is not a mapping.
 *
 * @example Reading the active memory provider
 * ```ts
 * import { getConfigValue, loadConfig } from "@hermes/memory";
 * import assert from "node:assert/strict";
 * const home = await Deno.makeTempDir();
 * await Deno.writeTextFile(`${home}/config.yaml`, "memory:\n  provider: honcho\n");
 * const config = await loadConfig({ hermesHome: home });
 * assert.equal(getConfigValue(config, "memory.provider"), "honcho");
 * await Deno.remove(home, { recursive: true });
 * ```
 *
 * @category Config
 */
export async function loadConfig(
  options: LoadConfigOptions = {},
): Promise<HermesConfig> {
  const path = getConfigPath(options.hermesHome);
  const text = await readConfigText(path);
  if (text === undefined) return {};
  return await handedConfig(text) ?? await parseConfigText(path, text);
}

/** `config.yaml`'s text as {@linkcode loadConfig} returns it. */
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
 * Carries the launcher's parse of `config.yaml` to the CLI with the SHA-256
 * of the text it parsed, so a CLI that reads the same text loads no `yaml`.
 */
export const PARSED_CONFIG_ENV = "HERMES_PARSED_CONFIG";

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

async function handedConfig(text: string): Promise<HermesConfig | undefined> {
  const handed = readProcessEnv(PARSED_CONFIG_ENV);
  if (!handed) return undefined;
  try {
    const { sha256, config } = JSON.parse(handed);
    if (sha256 === await sha256Hex(text) && isPlainObject(config)) {
      return config as HermesConfig;
    }
  } catch {
    // Not ours: parse the YAML.
  }
  return undefined;
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

/**
 * Saves `config` to the profile's `config.yaml`: by default merged onto
 * the file on disk, so sections the caller never loaded survive, and with
 * the comments of unchanged keys kept. Mappings merge key by key; any other
 * value (scalars, lists) replaces what was there; `undefined` values are
 * skipped. The file is replaced atomically under a cross-process lock,
 * keeping its mode; the home directory is created if missing.
 *
 * @param config The config (or the part of it to write), or a function
 * that computes it from the file as it is once the lock is held (for a
 * value that depends on what is there, such as a list that gains one
 * entry, so a concurrent writer's change is never undone).
 * @param options Merge or replace, and which profile home.
 * @throws {ConfigError} When the file on disk does not parse or is not a
 * mapping; it is then left untouched.
 *
 * @example Switching the memory provider
 * ```ts
 * import { loadConfig, saveConfig } from "@hermes/memory";
 * import assert from "node:assert/strict";
 * const home = await Deno.makeTempDir();
 * await Deno.writeTextFile(`${home}/config.yaml`, "# mine\nmodel: gpt\n");
 * await saveConfig({ memory: { provider: "honcho" } }, { hermesHome: home });
 * assert.deepEqual(await loadConfig({ hermesHome: home }), {
 *   model: "gpt",
 *   memory: { provider: "honcho" },
 * });
 * await Deno.remove(home, { recursive: true });
 * ```
 *
 * @category Config
 */
export async function saveConfig(
  config: HermesConfig | ((current: HermesConfig) => HermesConfig),
  options: SaveConfigOptions = {},
): Promise<void> {
  const merge = options.mergeExisting ?? true;
  const path = getConfigPath(options.hermesHome);
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

/**
 * Reads a value by dotted key (`"memory.provider"`).
 *
 * @param config The config.
 * @param dottedKey Keys joined with `.`.
 * @returns The value, or `undefined` when any part of the path is missing
 * or not a mapping.
 *
 * @example Reading a dotted key
 * ```ts
 * import { getConfigValue } from "@hermes/memory";
 * import assert from "node:assert/strict";
 * const config = { memory: { provider: "honcho" } };
 * assert.equal(getConfigValue(config, "memory.provider"), "honcho");
 * assert.equal(getConfigValue(config, "memory.provider.x"), undefined);
 * ```
 *
 * @category Config
 */
export function getConfigValue(
  config: HermesConfig,
  dottedKey: string,
): unknown {
  let current: unknown = config;
  for (const part of dottedKey.split(".")) {
    if (!isPlainObject(current) || !Object.hasOwn(current, part)) {
      return undefined;
    }
    current = current[part];
  }
  return current;
}

/**
 * Sets a value by dotted key, creating missing sections.
 *
 * @throws {RangeError} When the key has an empty part.
 * @throws {TypeError} When a section on the path holds a non-mapping value.
 */
export function setConfigValue(
  config: HermesConfig,
  dottedKey: string,
  value: unknown,
): void {
  const parts = dottedKey.split(".");
  if (parts.some((part) => part === "")) {
    throw new RangeError(
      `Cannot use config key '${dottedKey}': write keys joined by single dots, like memory.provider`,
    );
  }
  let current: Record<string, unknown> = config;
  for (const [index, part] of parts.slice(0, -1).entries()) {
    const next = current[part];
    if (next === undefined) {
      current[part] = {};
    } else if (!isPlainObject(next)) {
      const at = parts.slice(0, index + 1).join(".");
      throw new TypeError(
        `Cannot set config key '${dottedKey}': '${at}' holds a ${
          Array.isArray(next) ? "list" : typeof next
        }, not a section; remove or rename it first`,
      );
    }
    current = current[part] as Record<string, unknown>;
  }
  current[parts.at(-1)!] = value;
}

async function readConfigText(path: string): Promise<string | undefined> {
  try {
    return await Deno.readTextFile(path);
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return undefined;
    throw error;
  }
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
