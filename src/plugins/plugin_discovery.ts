/**
 * Discovery of memory-provider plugins: finds them by name, never imports
 * them.
 *
 * @module
 */

import type { AsyncLocalStorage } from "node:async_hooks";
import {
  dirname,
  fileURLToPath,
  isInside,
  join,
  pathToFileURL,
  resolve,
} from "../_util/path.ts";
import {
  getConfigPath,
  getConfigValue,
  loadConfig,
  loadConfigOrEmpty,
} from "../config/config.ts";
import { isTruthyEnvValue, readProcessEnv } from "../core/env.ts";
import { getHermesHome } from "../profile/hermes_home.ts";
import { log } from "../core/log.ts";
import type { HermesConfig } from "../core/memory_provider.ts";
import {
  emptyPluginManifest,
  parsePluginManifestSync,
  type PluginManifest,
  pluginManifestFromValue,
  readManifestText,
  YamlParserNotLoaded,
} from "./plugin_manifest.ts";
import {
  BUNDLED_MANIFEST_SOURCES,
  BUNDLED_MANIFESTS,
} from "./bundled_manifests.ts";
import { resolveAgentCwd } from "../profile/runtime_cwd.ts";
import { errorText } from "../_util/error_text.ts";
import { denoDenial } from "../sandbox/deno_denial.ts";
import { loadYamlModule } from "../config/yaml_module.ts";

/**
 * Where a provider was found.
 *
 * @category Plugins: discovery, loading, permissions
 */
export type ProviderSource = "bundled" | "user" | "project" | "package";

/**
 * A provider found by discovery, not loaded.
 *
 * @category Plugins: discovery, loading, permissions
 */
export interface ProviderCandidate {
  /** The provider's name (its directory name, or its `memory.packages` key). */
  name: string;
  /** Where it was found. */
  source: ProviderSource;
  /** Its directory with symlinks resolved; absent for packages. */
  dir?: string;
  /** What to import: the `file:` URL of `mod.ts`, or the package specifier. */
  specifier: string;
  /** Its `plugin.yaml` (empty for packages). */
  manifest: PluginManifest;
}

/**
 * Options shared by the discovery functions.
 *
 * @category Plugins: discovery, loading, permissions
 */
export interface DiscoveryOptions {
  /**
   * The profile home whose `plugins/` and `config.yaml` are used.
   *
   * @default {getHermesHome()}
   */
  hermesHome?: string;
  /** The loaded `config.yaml`; read from `hermesHome` when omitted. */
  config?: HermesConfig;
  /**
   * The directory of bundled providers.
   *
   * @default {"<framework>/plugins/memory"}
   */
  bundledDir?: string;
  /**
   * The directory whose `.hermes/plugins/` holds project providers.
   *
   * @default {resolveAgentCwd()}
   */
  projectDir?: string;
}

/**
 * One entry of {@linkcode discoverMemoryProviders}.
 *
 * @category Plugins: discovery, loading, permissions
 */
export interface DiscoveredProvider {
  /** The provider's name. */
  name: string;
  /** The `description` of its `plugin.yaml` (`""` when absent). */
  description: string;
  /** Where it was found. */
  source: ProviderSource;
  /** Its directory; absent for packages. */
  dir?: string;
  /**
   * Whether it is configured: from its manifest alone, or with
   * `probe: true` from `isAvailable()` in its sandbox (`null`: a custom
   * probe could not tell).
   */
  available: boolean | null;
}

/** The values of `memory.provider` that mean "built-in memory only". */
const BUILTIN_SENTINELS: ReadonlySet<string> = new Set([
  "",
  "default",
  "builtin",
  "built-in",
  "none",
]);

const PROVIDER_NAME_REGEXP = /^[A-Za-z0-9][A-Za-z0-9_.-]*$/;
const PACKAGE_SPECIFIER_REGEXP = /^(?:jsr:|npm:|https:\/\/|file:\/\/)/;
const MOD_TEXT_LIMIT = 1 << 20;
const warned = new Set<string>();

/** Warns once per distinct message (a load or discovery repeats them). */
export function warnOnce(message: string): void {
  if (warned.has(message)) return;
  warned.add(message);
  log("warn", message);
}

/** Tells whether a `memory.provider` value means "built-in memory only" (`""`, `default`, `none`, …). */
export function isBuiltinSentinel(value: unknown): boolean {
  return value === undefined || value === null ||
    (typeof value === "string" &&
      BUILTIN_SENTINELS.has(value.trim().toLowerCase()));
}

/** Tells whether a name can be a provider's: `[A-Za-z0-9._-]`, starting alphanumeric, no `..`. */
export function isValidProviderName(name: string): boolean {
  return PROVIDER_NAME_REGEXP.test(name) && !name.includes("..");
}

/** The bundled providers' directory; `undefined` for a framework run from a URL. */
export function bundledProvidersDir(): string | undefined {
  const url = new URL("../../plugins/memory/", import.meta.url);
  if (url.protocol !== "file:") return undefined;
  return fileURLToPath(url).replace(/[\\/]$/, "");
}

// Directory scanning uses synchronous file calls: discovery reads a few
// small files per provider, and Deno's async file ops cost several times
// more per call (500 providers: ~20 ms sync against ~100 ms async).

function realPathOrUndefined(path: string): string | undefined {
  try {
    return Deno.realPathSync(path);
  } catch {
    return undefined;
  }
}

/** Reads the provider heuristic file; `undefined` when absent. */
function readModText(path: string): string | undefined {
  let bytes: Uint8Array;
  try {
    bytes = Deno.readFileSync(path);
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return undefined;
    throw error;
  }
  return new TextDecoder().decode(bytes.subarray(0, MOD_TEXT_LIMIT));
}

/** The manifest in `dir` (the embedded copy for an unchanged bundled one). */
function readManifestSync(dir: string, bundledName?: string): PluginManifest {
  const path = join(dir, "plugin.yaml");
  const text = readManifestText(path);
  if (text === undefined) return emptyPluginManifest();
  if (
    bundledName !== undefined &&
    Object.hasOwn(BUNDLED_MANIFEST_SOURCES, bundledName) &&
    BUNDLED_MANIFEST_SOURCES[bundledName] === text
  ) {
    return pluginManifestFromValue(BUNDLED_MANIFESTS[bundledName], path);
  }
  return parsePluginManifestSync(text, path);
}

function scanDirectorySource(
  root: string,
  source: Exclude<ProviderSource, "package">,
  seen: Set<string>,
): ProviderCandidate[] {
  let rootReal: string;
  let entries: Deno.DirEntry[];
  try {
    rootReal = Deno.realPathSync(root);
    entries = [...Deno.readDirSync(rootReal)];
  } catch (error) {
    if (!(error instanceof Deno.errors.NotFound)) {
      warnOnce(`Skipping unreadable plugin directory ${root}: ${why(error)}`);
    }
    return [];
  }
  entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  const result: ProviderCandidate[] = [];
  for (const entry of entries) {
    if (seen.has(entry.name)) continue;
    const candidate = inspectProviderDirectory(rootReal, root, entry, source);
    if (candidate === undefined) continue;
    seen.add(candidate.name);
    result.push(candidate);
  }
  return result;
}

function inspectProviderDirectory(
  rootReal: string,
  root: string,
  entry: Deno.DirEntry,
  source: Exclude<ProviderSource, "package">,
): ProviderCandidate | undefined {
  const name = entry.name;
  if (name.startsWith("_") || name.startsWith(".")) return undefined;
  const path = join(root, name);
  if (!entry.isDirectory && !entry.isSymlink) return undefined;
  if (!isValidProviderName(name)) {
    warnOnce(
      `Skipping memory provider directory ${path}: the name '${name}' may use only letters, digits, '.', '_' and '-'; rename the directory`,
    );
    return undefined;
  }
  let dir = join(rootReal, name);
  if (entry.isSymlink) {
    const target = realPathOrUndefined(dir);
    if (target === undefined) {
      warnOnce(
        `Skipping memory provider '${name}': ${path} is a broken symlink; remove it or point it at a directory inside ${root}`,
      );
      return undefined;
    }
    if (!isInside(rootReal, target)) {
      warnOnce(
        `Skipping memory provider '${name}': ${path} is a symlink to ${target}, outside ${root}; move the provider into ${root} instead`,
      );
      return undefined;
    }
    try {
      if (!Deno.statSync(target).isDirectory) return undefined;
    } catch {
      return undefined;
    }
    dir = target;
  }
  const modPath = join(dir, "mod.ts");
  let text: string | undefined;
  try {
    const escape = topLevelEscape(dir);
    if (escape !== undefined) {
      warnOnce(
        `Skipping memory provider '${name}': ${escape.path} is a symlink to ${escape.target}, outside ${path}; replace it with a copy`,
      );
      return undefined;
    }
    text = readModText(modPath);
  } catch (error) {
    warnOnce(
      `Skipping unreadable plugin directory ${path} (memory provider '${name}'): ${
        why(error)
      }`,
    );
    return undefined;
  }
  if (text === undefined) return undefined;
  if (
    source !== "bundled" &&
    !text.includes("registerMemoryProvider") &&
    !text.includes("MemoryProvider")
  ) {
    return undefined;
  }
  let manifest: PluginManifest;
  try {
    manifest = readManifestSync(dir, source === "bundled" ? name : undefined);
  } catch (error) {
    if (error instanceof YamlParserNotLoaded) throw error;
    warnOnce(
      `Skipping memory provider '${name}' (${source}): ${
        errorText(error)
      }; fix or remove the file`,
    );
    return undefined;
  }
  if (manifest.name !== undefined && manifest.name !== name) {
    log(
      "debug",
      `Memory provider directory ${path} has name '${manifest.name}' in plugin.yaml; the directory name '${name}' is used`,
    );
  }
  return {
    name,
    source,
    dir,
    specifier: pathToFileURL(modPath).href,
    manifest,
  };
}

/** The first top-level symlink of `dir` that resolves outside it. */
function topLevelEscape(dir: string): EscapingSymlink | undefined {
  for (const entry of Deno.readDirSync(dir)) {
    if (!entry.isSymlink) continue;
    const path = join(dir, entry.name);
    const target = realPathOrUndefined(path);
    if (target === undefined) return { path, target: "(broken)" };
    if (!isInside(dir, target)) return { path, target };
  }
  return undefined;
}

/** A symlink found under a provider directory that resolves outside it. */
interface EscapingSymlink {
  path: string;
  target: string;
}

/** Options of {@linkcode findEscapingSymlink}. */
interface FindEscapingSymlinkOptions {
  /**
   * Walk subdirectories too (at most 5000 entries).
   *
   * @default {true}
   */
  deep?: boolean;
}

/** A symlink under `dir` leading outside it (Deno checks the path as written, so it would escape the grant). */
export async function findEscapingSymlink(
  dir: string,
  options: FindEscapingSymlinkOptions = {},
): Promise<EscapingSymlink | undefined> {
  const deep = options.deep ?? true;
  const queue = [dir];
  let budget = 5000;
  while (queue.length > 0 && budget > 0) {
    const current = queue.shift() as string;
    for await (const entry of Deno.readDir(current)) {
      if (--budget <= 0) break;
      const path = join(current, entry.name);
      if (entry.isSymlink) {
        const target = realPathOrUndefined(path);
        if (target === undefined) return { path, target: "(broken)" };
        if (!isInside(dir, target)) return { path, target };
      } else if (deep && entry.isDirectory) {
        queue.push(path);
      }
    }
  }
  return undefined;
}

function packageCandidates(
  config: HermesConfig,
  hermesHome: string,
  seen: Set<string>,
): ProviderCandidate[] {
  const packages = getConfigValue(config, "memory.packages");
  if (packages === undefined || packages === null) return [];
  const where = getConfigPath(hermesHome);
  if (typeof packages !== "object" || Array.isArray(packages)) {
    warnOnce(
      `Ignoring memory.packages in ${where}: it must map provider names to jsr:, npm: or https: module specifiers`,
    );
    return [];
  }
  const result: ProviderCandidate[] = [];
  for (const name of Object.keys(packages).sort()) {
    const specifier = (packages as Record<string, unknown>)[name];
    if (!isValidProviderName(name)) {
      warnOnce(
        `Skipping memory.packages.${name} in ${where}: the name may use only letters, digits, '.', '_' and '-'`,
      );
      continue;
    }
    if (
      typeof specifier !== "string" ||
      !PACKAGE_SPECIFIER_REGEXP.test(specifier.trim())
    ) {
      warnOnce(
        `Skipping memory.packages.${name} in ${where}: use a jsr:, npm: or https:// module specifier, not ${
          JSON.stringify(specifier)
        }`,
      );
      continue;
    }
    if (seen.has(name)) continue;
    seen.add(name);
    result.push({
      name,
      source: "package",
      specifier: specifier.trim(),
      manifest: emptyPluginManifest(),
    });
  }
  return result;
}

// A read this run's flags deny is not fixed by the directory's mode.
function why(error: unknown): string {
  const denial = denoDenial(error);
  return denial !== undefined
    ? `this run lacks ${denial.flag}`
    : `${errorText(error)}; check its permissions`;
}

/** The bundled providers of a framework loaded from a remote URL. */
function remoteBundledCandidates(seen: Set<string>): ProviderCandidate[] {
  return Object.entries(BUNDLED_MANIFESTS).sort().map(([name, raw]) => {
    const base = new URL(`../../plugins/memory/${name}/`, import.meta.url);
    seen.add(name);
    return {
      name,
      source: "bundled",
      specifier: new URL("mod.ts", base).href,
      manifest: pluginManifestFromValue(raw, new URL("plugin.yaml", base).href),
    };
  });
}

// `memory status` asks for the providers a dozen times: in this scope one
// scan per home, project and config answers them (nothing installs meanwhile).
// Created on first use: `node:async_hooks` costs a start that opens none.
let scans:
  | AsyncLocalStorage<Map<string, Promise<ProviderCandidate[]>>>
  | undefined;

/** Runs a read-only `fn` with the provider scans cached. */
export async function withProviderScanCache<T>(
  fn: () => Promise<T>,
): Promise<T> {
  const { AsyncLocalStorage } = await import("node:async_hooks");
  scans ??= new AsyncLocalStorage();
  return await scans.run(new Map(), fn);
}

/** Every provider of the four sources in precedence order, first of each name; nothing imported. */
export async function scanMemoryProviders(
  options: DiscoveryOptions = {},
): Promise<ProviderCandidate[]> {
  const cache = scans?.getStore();
  let key: string | undefined;
  try {
    key = cache && JSON.stringify([
      resolve(options.hermesHome ?? getHermesHome()),
      options.bundledDir ?? null,
      projectPluginsDir(options) ?? null,
      options.config ?? null,
    ]);
  } catch {
    // A config JSON cannot hold: scan.
  }
  if (cache === undefined || key === undefined) return await scanFresh(options);
  const scan = cache.get(key) ?? scanFresh(options);
  cache.set(key, scan);
  return [...await scan];
}

async function scanFresh(
  options: DiscoveryOptions,
): Promise<ProviderCandidate[]> {
  try {
    return await scanOnce(options);
  } catch (error) {
    // A manifest outside the simple subset: load the full parser, rescan.
    if (!(error instanceof YamlParserNotLoaded)) throw error;
    await loadYamlModule();
    return await scanOnce(options);
  }
}

/** `<project>/.hermes/plugins` while `HERMES_ENABLE_PROJECT_PLUGINS` is on. */
function projectPluginsDir(options: DiscoveryOptions): string | undefined {
  return isTruthyEnvValue(readProcessEnv("HERMES_ENABLE_PROJECT_PLUGINS"))
    ? join(options.projectDir ?? resolveAgentCwd(), ".hermes", "plugins")
    : undefined;
}

async function scanOnce(
  options: DiscoveryOptions,
): Promise<ProviderCandidate[]> {
  const hermesHome = resolve(options.hermesHome ?? getHermesHome());
  const seen = new Set<string>();
  const bundled = options.bundledDir ?? bundledProvidersDir();
  const result = bundled === undefined
    ? remoteBundledCandidates(seen)
    : scanDirectorySource(bundled, "bundled", seen);
  const user = join(hermesHome, "plugins");
  result.push(...scanDirectorySource(user, "user", seen));
  const project = projectPluginsDir(options);
  if (project !== undefined) {
    result.push(...scanDirectorySource(project, "project", seen));
  }
  const config = options.config ??
    await loadConfigOrEmpty(hermesHome, (why) =>
      warnOnce(
        `Ignoring memory.packages: ${why}; fix ${getConfigPath(hermesHome)}`,
      ));
  result.push(...packageCandidates(config, hermesHome, seen));
  return result;
}

/** The names of all discovered providers, sorted (no import, no availability check). */
export async function listMemoryProviderNames(
  options: DiscoveryOptions = {},
): Promise<string[]> {
  return (await scanMemoryProviders(options)).map((c) => c.name).sort();
}

/** Finds one provider by name, with the precedence of the sources. */
export async function findMemoryProvider(
  name: string,
  options: DiscoveryOptions = {},
): Promise<ProviderCandidate | null> {
  const wanted = name.trim();
  if (isBuiltinSentinel(wanted) || !isValidProviderName(wanted)) return null;
  const candidates = await scanMemoryProviders(options);
  return candidates.find((c) => c.name === wanted) ?? null;
}

/** The directory of a file-based candidate's module; `undefined` for remote packages. */
export function candidateModuleDir(
  candidate: ProviderCandidate,
): string | undefined {
  if (candidate.dir !== undefined) return candidate.dir;
  if (candidate.specifier.startsWith("file://")) {
    return dirname(fileURLToPath(candidate.specifier));
  }
  return undefined;
}

/** Finds a provider for a command, with the home and `config.yaml` resolved once for reuse. */
export async function locateProvider(
  name: string,
  options: DiscoveryOptions = {},
): Promise<
  | { candidate: ProviderCandidate; hermesHome: string; config: HermesConfig }
  | null
> {
  const hermesHome = resolve(options.hermesHome ?? getHermesHome());
  const config = options.config ?? await loadConfig({ hermesHome });
  const candidate = await findMemoryProvider(name, {
    ...options,
    hermesHome,
    config,
  });
  return candidate === null ? null : { candidate, hermesHome, config };
}
