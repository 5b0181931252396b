/**
 * `plugin.yaml`: the metadata file of a memory-provider directory.
 *
 * @module
 */

import { isAbsolute, join, normalize } from "../_util/path.ts";
import {
  loadedYamlModule,
  loadYamlModule,
  type YamlModule,
} from "../config/yaml_module.ts";
import { withTolerantProcessEnv } from "../core/env.ts";
import { getUserHome } from "../profile/hermes_home.ts";
import { parseSimpleYaml } from "./_simple_yaml.ts";
import {
  grantPathTextProblem,
  isPlaceholderPath,
} from "../sandbox/grant_path.ts";
import { errorText } from "../_util/error_text.ts";
import { terminalSafe } from "../core/terminal_text.ts";

/**
 * The sandbox permissions a `plugin.yaml` asks for.
 *
 * @category Plugins: discovery, loading, permissions
 */
export interface ManifestPermissions {
  /**
   * Extra readable paths: absolute with `~` already expanded, or starting
   * with `$HERMES_HOME` / `$HERMES_ROOT` (resolved per profile).
   */
  read: string[];
  /** Extra writable paths, in the same forms as `read`. */
  write: string[];
  /** Readable environment variables. */
  env: string[];
  /** Reachable hosts (`host` or `host:port`). */
  net: string[];
  /** Whether the provider may import `npm:` packages. */
  npm: boolean;
  /**
   * Why it needs each entry (`permissions.why`, keyed by the entry as it
   * appears in the lists above), shown when the user is asked to approve.
   */
  why?: Record<string, string>;
}

/**
 * An external tool a provider needs (`external_dependencies`).
 *
 * @category Plugins: discovery, loading, permissions
 */
export interface ExternalDependency {
  /** The tool's name. */
  name: string;
  /** The command that installs it, shown to the user. */
  install?: string;
  /** The command that checks it is installed. */
  check?: string;
}

/**
 * When a provider counts as configured, from its manifest alone: any one
 * variable set, or any one file present. Empty lists: always.
 *
 * @category Plugins: discovery, loading, permissions
 */
export interface ManifestAvailability {
  /** Variables (environment or the profile's `.env`). */
  env: string[];
  /** Paths, in the forms of `permissions.read`. */
  files: string[];
}

/**
 * The parsed `plugin.yaml` of a provider directory.
 *
 * @category Plugins: discovery, loading, permissions
 */
export interface PluginManifest {
  /** The `name` key; the directory name stays authoritative. */
  name?: string;
  /** The `version` key, as text. */
  version?: string;
  /** The `description` key (`""` when absent). */
  description: string;
  /** The optional hooks it implements (`hooks` or `provides_hooks`). */
  hooks: string[];
  /** The environment variables it needs (`requires_env`), informational. */
  requiresEnv: string[];
  /** External tools it needs. */
  externalDependencies: ExternalDependency[];
  /** The sandbox grant it asks for. */
  permissions: ManifestPermissions;
  /** When it counts as configured (the `availability` block). */
  availability: ManifestAvailability;
}

/**
 * A `plugin.yaml` that cannot be used: broken YAML or a wrong value.
 *
 * @category Errors callers catch
 */
export class PluginManifestError extends Error {
  /** The file. */
  readonly path: string;

  /** Creates the error for a `plugin.yaml` path; `message` says what is wrong and what to do. */
  constructor(
    path: string,
    message: string,
    options: { cause?: unknown } = {},
  ) {
    super(message, { cause: options.cause });
    this.name = "PluginManifestError";
    this.path = path;
  }
}

const ENV_NAME_REGEXP = /^[A-Za-z_][A-Za-z0-9_]*$/;
const HOST_REGEXP =
  /^(?:\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9](?:[A-Za-z0-9-]{0,62})(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,62}))*\.?)(?::(\d{1,5}))?$/;
const PERMISSION_KEYS = new Set(["read", "write", "env", "net", "npm", "why"]);

/** The manifest of a directory without `plugin.yaml`. */
export function emptyPluginManifest(): PluginManifest {
  return {
    description: "",
    hooks: [],
    requiresEnv: [],
    externalDependencies: [],
    permissions: { read: [], write: [], env: [], net: [], npm: false },
    availability: { env: [], files: [] },
  };
}

/** Reduces a host, `host:port` or URL to Deno's `net` permission form, or `undefined`. */
export function normalizeNetHost(value: string): string | undefined {
  let text = value.trim();
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(text)) {
    try {
      text = new URL(text).host;
    } catch {
      return undefined;
    }
  }
  const match = HOST_REGEXP.exec(text);
  if (!match) return undefined;
  if (match[1] !== undefined && Number(match[1]) > 65535) return undefined;
  return text.toLowerCase();
}

/**
 * Expands a permission path: `~` to the user's home, absolute paths
 * normalized, `$HERMES_HOME/…` and `$HERMES_ROOT/…` kept; anything else
 * (relative, `,`, control characters, `..`) is `undefined`.
 */
export function expandPermissionPath(value: string): string | undefined {
  const text = value.trim();
  if (text === "" || grantPathTextProblem(value) !== undefined) {
    return undefined;
  }
  if (text.startsWith("$")) {
    const trimmed = text.replace(/\/+$/, "");
    return isPlaceholderPath(trimmed) ? trimmed : undefined;
  }
  if (text === "~" || text.startsWith("~/")) {
    const home = getUserHome();
    if (home === undefined) return undefined;
    return normalize(join(home, text.slice(1)));
  }
  if (!isAbsolute(text)) return undefined;
  return normalize(text);
}

/** Throws the error for a wrong value in `where`. */
function invalid(where: string, detail: string): never {
  throw new PluginManifestError(where, `Invalid ${where}: ${detail}`);
}

/** A mapping, or `undefined` for an absent value; anything else is `invalid`. */
function mapping(
  where: string,
  value: unknown,
  wrong: (what: string) => string,
): Record<string, unknown> | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== "object" || Array.isArray(value)) {
    invalid(where, wrong(describe(value)));
  }
  return value as Record<string, unknown>;
}

function stringList(where: string, key: string, value: unknown): string[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) {
    invalid(where, `'${key}' must be a list, not ${describe(value)}`);
  }
  return value.map((item, index) => {
    if (typeof item !== "string" && typeof item !== "number") {
      invalid(
        where,
        `'${key}[${index}]' must be a string, not ${describe(item)}`,
      );
    }
    return String(item);
  });
}

/** A list of entries each `normalize` accepts, deduplicated; `hint` says what a refused one should look like. */
function checkedList(
  where: string,
  key: string,
  value: unknown,
  normalize: (raw: string) => string | undefined,
  hint: (raw: string) => string,
): string[] {
  const out: string[] = [];
  for (const [index, raw] of stringList(where, key, value).entries()) {
    const entry = normalize(raw);
    if (entry === undefined) {
      invalid(
        where,
        `'${key}[${index}]' is '${terminalSafe(raw)}': ${hint(raw)}`,
      );
    }
    if (!out.includes(entry)) out.push(entry);
  }
  return out;
}

const pathList = (where: string, key: string, value: unknown) =>
  checkedList(
    where,
    key,
    value,
    expandPermissionPath,
    (raw) =>
      grantPathTextProblem(raw) ??
        "use an absolute path, or one starting with ~/, $HERMES_HOME/ or $HERMES_ROOT/",
  );

const envList = (where: string, key: string, value: unknown) =>
  checkedList(
    where,
    key,
    value,
    (raw) => ENV_NAME_REGEXP.test(raw.trim()) ? raw.trim() : undefined,
    () => "use a variable name such as MY_API_KEY",
  );

function describe(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "a list";
  if (typeof value === "object") return "a mapping";
  return `${typeof value} ${JSON.stringify(value)}`;
}

/**
 * Validates a permission block, from `plugin.yaml` or from the user's
 * `memory.permissions.<name>` in `config.yaml`.
 *
 * @throws {PluginManifestError} When a key, type or entry is wrong.
 */
export function parsePermissionBlock(
  value: unknown,
  options: { where: string; keyPrefix?: string },
): ManifestPermissions {
  const where = options.where;
  const prefix = options.keyPrefix ?? "permissions";
  const block = mapping(
    where,
    value,
    (what) =>
      `'${prefix}' must be a mapping with read, write, env, net and npm, not ${what}`,
  );
  if (block === undefined) {
    return { read: [], write: [], env: [], net: [], npm: false };
  }
  for (const key of Object.keys(block)) {
    if (!PERMISSION_KEYS.has(key)) {
      invalid(
        where,
        `'${prefix}.${key}' is not a permission: use read, write, env, net, npm or why`,
      );
    }
  }
  const result: ManifestPermissions = {
    read: pathList(where, `${prefix}.read`, block.read),
    write: pathList(where, `${prefix}.write`, block.write),
    env: envList(where, `${prefix}.env`, block.env),
    net: checkedList(
      where,
      `${prefix}.net`,
      block.net,
      normalizeNetHost,
      () => "use a host such as api.example.com, host:port or a URL",
    ),
    npm: false,
  };
  if (block.npm !== undefined && block.npm !== null) {
    if (typeof block.npm !== "boolean") {
      invalid(
        where,
        `'${prefix}.npm' must be true or false, not ${describe(block.npm)}`,
      );
    }
    result.npm = block.npm;
  }
  if (block.why !== undefined && block.why !== null) {
    result.why = parseReasons(where, `${prefix}.why`, block.why, result);
  }
  return result;
}

/** `permissions.why`: one reason per listed entry, keyed as it is listed. */
function parseReasons(
  where: string,
  key: string,
  value: unknown,
  listed: ManifestPermissions,
): Record<string, string> {
  const block = mapping(
    where,
    value,
    (what) => `'${key}' must map an entry to its reason, not ${what}`,
  )!;
  const all = [listed.read, listed.write, listed.env, listed.net].flat();
  const reasons: Record<string, string> = {};
  for (const [entry, reason] of Object.entries(block)) {
    if (typeof reason !== "string") {
      invalid(
        where,
        `'${key}.${terminalSafe(entry)}' must be a string, not ${
          describe(reason)
        }`,
      );
    }
    const normalized = [
      entry.trim(),
      expandPermissionPath(entry),
      normalizeNetHost(entry),
    ].find((form) => form !== undefined && all.includes(form));
    if (normalized === undefined) {
      invalid(
        where,
        `'${key}' names '${
          terminalSafe(entry)
        }', which is not listed under read, write, env or net`,
      );
    }
    reasons[normalized] = reason.trim();
  }
  return reasons;
}

function parseAvailability(
  value: unknown,
  path: string,
): ManifestAvailability {
  const block = mapping(
    path,
    value,
    (what) =>
      `'availability' must be a mapping with env and files, not ${what}`,
  );
  if (block === undefined) return { env: [], files: [] };
  for (const key of Object.keys(block)) {
    if (key !== "env" && key !== "files") {
      invalid(path, `'availability.${key}' is not known: use env or files`);
    }
  }
  return {
    env: envList(path, "availability.env", block.env),
    files: pathList(path, "availability.files", block.files),
  };
}

/**
 * Parses the text of a `plugin.yaml` (a leading byte-order mark is
 * ignored). An empty file is an empty manifest.
 *
 * @throws {PluginManifestError} On broken YAML, a top level that is not a
 * mapping, or a wrong value.
 */
export async function parsePluginManifest(
  text: string,
  path: string,
): Promise<PluginManifest> {
  const source = text.replace(/^\uFEFF/, "");
  // Most manifests are simple; the full parser is loaded only for the rest.
  const simple = parseSimpleYaml(source);
  const yaml = simple === undefined ? await loadYamlModule() : undefined;
  return manifestFromSource(source, path, simple, yaml);
}

/** Thrown when the full YAML parser is needed first: await `loadYamlModule()` and retry. */
export class YamlParserNotLoaded extends Error {
  /** @param path The manifest that needs it. */
  constructor(path: string) {
    super(`${path} needs the full YAML parser, which is not loaded yet`);
    this.name = "YamlParserNotLoaded";
  }
}

/**
 * {@linkcode parsePluginManifest} for synchronous callers.
 *
 * @throws {YamlParserNotLoaded} When the full parser is needed first.
 * @throws {PluginManifestError} As {@linkcode parsePluginManifest}.
 */
export function parsePluginManifestSync(
  text: string,
  path: string,
): PluginManifest {
  const source = text.replace(/^\uFEFF/, "");
  const simple = parseSimpleYaml(source);
  const yaml = simple === undefined ? loadedYamlModule() : undefined;
  if (simple === undefined && yaml === undefined) {
    throw new YamlParserNotLoaded(path);
  }
  return manifestFromSource(source, path, simple, yaml);
}

function manifestFromSource(
  source: string,
  path: string,
  simple: unknown,
  yaml: YamlModule | undefined,
): PluginManifest {
  let raw: unknown = simple;
  if (yaml !== undefined) {
    try {
      // The parser reads LOG_TOKENS / LOG_STREAM from process.env; a missing
      // env grant for them is not broken YAML.
      raw = withTolerantProcessEnv(() => yaml.parse(source));
    } catch (error) {
      const where = error instanceof yaml.YAMLParseError && error.linePos
        ? ` at line ${error.linePos[0].line}, column ${error.linePos[0].col}`
        : "";
      const detail = error instanceof Error
        ? error.message.split("\n")[0]
        : String(error);
      throw new PluginManifestError(
        path,
        `Invalid YAML in ${path}${where}: ${detail}`,
        { cause: error },
      );
    }
  }
  return pluginManifestFromValue(raw, path);
}

/**
 * Validates a parsed `plugin.yaml` document (parsed, or written in code).
 *
 * @throws {PluginManifestError} When a value is wrong.
 */
export function pluginManifestFromValue(
  raw: unknown,
  path: string,
): PluginManifest {
  const manifest = emptyPluginManifest();
  const doc = mapping(
    path,
    raw,
    (what) =>
      `the top level must be a mapping of keys such as name and description, not ${what}`,
  );
  if (doc === undefined) return manifest;
  for (const key of ["name", "version", "description"] as const) {
    const value = doc[key];
    if (value === undefined || value === null) continue;
    if (typeof value !== "string" && typeof value !== "number") {
      invalid(path, `'${key}' must be text, not ${describe(value)}`);
    }
    if (key === "description") manifest.description = String(value).trim();
    else manifest[key] = String(value);
  }
  manifest.hooks = [
    ...stringList(path, "hooks", doc.hooks),
    ...stringList(path, "provides_hooks", doc.provides_hooks),
  ];
  manifest.requiresEnv = stringList(path, "requires_env", doc.requires_env);
  const external = doc.external_dependencies;
  if (external !== undefined && external !== null) {
    if (!Array.isArray(external)) {
      invalid(
        path,
        "'external_dependencies' must be a list of {name, install, check}",
      );
    }
    manifest.externalDependencies = external.map((item, index) => {
      const entry = item as Record<string, unknown> | null;
      if (
        entry === null || typeof entry !== "object" ||
        typeof entry.name !== "string"
      ) {
        invalid(
          path,
          `'external_dependencies[${index}]' must be a mapping with a name`,
        );
      }
      const dep: ExternalDependency = { name: entry.name };
      if (typeof entry.install === "string") dep.install = entry.install;
      if (typeof entry.check === "string") dep.check = entry.check;
      return dep;
    });
  }
  manifest.permissions = parsePermissionBlock(doc.permissions, {
    where: path,
  });
  manifest.availability = parseAvailability(doc.availability, path);
  return manifest;
}

/**
 * Reads `<dir>/plugin.yaml`. A missing file gives an empty manifest.
 *
 * @throws {PluginManifestError} When the file is unreadable or invalid.
 */
export async function readPluginManifest(dir: string): Promise<PluginManifest> {
  const path = join(dir, "plugin.yaml");
  const text = readManifestText(path);
  return text === undefined
    ? emptyPluginManifest()
    : await parsePluginManifest(text, path);
}

/** The text of a `plugin.yaml`; `undefined` when it is missing. */
export function readManifestText(path: string): string | undefined {
  try {
    return Deno.readTextFileSync(path);
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return undefined;
    throw new PluginManifestError(
      path,
      `Cannot read ${path}: ${errorText(error)}`,
      { cause: error },
    );
  }
}
