/**
 * A provider's own dependencies, the Deno way.
 *
 * @module
 */

import { join } from "../_util/path.ts";
import {
  type DiscoveryOptions,
  locateProvider,
  type ProviderCandidate,
} from "./plugin_discovery.ts";
import type { ExternalDependency } from "./plugin_manifest.ts";
import { grantForCandidate } from "./provider_permissions.ts";
import { errorText } from "../_util/error_text.ts";
import { unlessMissing } from "../io/atomic_write.ts";

/**
 * One dependency a provider declares.
 *
 * @category Plugins: discovery, loading, permissions
 */
export interface ProviderDependency {
  /** The key in `imports` (or the provider's name for a package provider). */
  name: string;
  /** The module specifier (`npm:…`, `jsr:…` or `https:…`). */
  specifier: string;
}

/** Readiness of one dependency. */
interface DependencyState extends ProviderDependency {
  /** Whether it is in the module cache (`null`: could not be checked). */
  cached: boolean | null;
}

/** What {@linkcode providerDependencyStatus} reports. */
export interface DependencyStatus {
  provider: string;
  /** Whether every declared dependency is cached and allowed. */
  ready: boolean;
  summary: string;
  /** Details, one per line: missing packages, commands to run. */
  details: string[];
  dependencies: DependencyState[];
  /** External tools from `plugin.yaml`, never checked automatically. */
  external: ExternalDependency[];
}

/**
 * What {@linkcode prepareProviderDependencies} did.
 *
 * @category Plugins: discovery, loading, permissions
 */
export interface PrepareResult {
  /** The provider's name. */
  provider: string;
  /** The dependencies now cached. */
  cached: ProviderDependency[];
  /** Lines for the user (what was cached, tools to install by hand). */
  messages: string[];
}

/**
 * Preparing a provider's dependencies failed.
 *
 * @category Errors callers catch
 */
export class DependencyInstallError extends Error {
  /** The provider's name. */
  readonly provider: string;

  /** Creates the error; `message` says what failed and what to do. */
  constructor(provider: string, message: string) {
    super(message);
    this.name = "DependencyInstallError";
    this.provider = provider;
  }
}

/**
 * Options of the dependency functions.
 *
 * @category Plugins: discovery, loading, permissions
 */
export interface DependencyOptions extends DiscoveryOptions {
  /**
   * The `deno` executable to run.
   *
   * @default {Deno.execPath()}
   */
  denoPath?: string;
}

const REMOTE_SPECIFIER_REGEXP = /^(?:npm:|jsr:|https:\/\/)/;

/**
 * Reads the dependencies a provider declares: the `npm:`, `jsr:` and
 * `https:` `imports` of its `deno.json(c)`, or a package provider's specifier.
 *
 * @throws {SyntaxError} When `deno.json` is not valid JSON.
 */
export async function declaredDependencies(
  candidate: ProviderCandidate,
): Promise<ProviderDependency[]> {
  if (candidate.source === "package") {
    return REMOTE_SPECIFIER_REGEXP.test(candidate.specifier)
      ? [{ name: candidate.name, specifier: candidate.specifier }]
      : [];
  }
  if (candidate.dir === undefined) return [];
  let text: string | undefined;
  for (const file of ["deno.json", "deno.jsonc"]) {
    text ??= await unlessMissing(Deno.readTextFile(join(candidate.dir, file)));
  }
  if (text === undefined) return [];
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw new SyntaxError(
      `Invalid JSON in the deno.json of memory provider '${candidate.name}' (${candidate.dir}): ${
        errorText(error)
      }`,
    );
  }
  const imports = (parsed as Record<string, unknown> | null)?.imports;
  if (imports === null || typeof imports !== "object") return [];
  const result: ProviderDependency[] = [];
  for (const [name, value] of Object.entries(imports)) {
    if (typeof value === "string" && REMOTE_SPECIFIER_REGEXP.test(value)) {
      result.push({ name, specifier: value });
    }
  }
  return result;
}

async function lockFlags(candidate: ProviderCandidate): Promise<string[]> {
  if (candidate.dir === undefined) return ["--no-lock"];
  const lock = join(candidate.dir, "deno.lock");
  return await Deno.stat(lock).then(
    () => [`--lock=${lock}`, "--frozen"],
    () => ["--no-lock"],
  );
}

interface DenoRun {
  code: number;
  output: string;
}

async function runDenoInstall(
  denoPath: string,
  specifiers: string[],
  extra: string[],
  cwd: string,
): Promise<DenoRun> {
  const command = new Deno.Command(denoPath, {
    args: [
      "install",
      "--quiet",
      "--no-config",
      "--node-modules-dir=none",
      ...extra,
      "--entrypoint",
      ...specifiers,
    ],
    cwd,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
    env: { NO_COLOR: "1" },
  });
  const { code, stdout, stderr } = await command.output();
  const decoder = new TextDecoder();
  const output = (decoder.decode(stdout) + decoder.decode(stderr))
    .split("\n")
    .filter((line) =>
      line.trim() !== "" && !/^\s*(Stack backtrace:|\d+: <unknown>)/.test(line)
    )
    .join("\n");
  return { code, output };
}

/**
 * Reports whether a provider's declared dependencies are in the module
 * cache, without downloading or installing anything.
 *
 * @throws {SyntaxError} When its `deno.json` is not valid JSON.
 */
export async function providerDependencyStatus(
  name: string,
  options: DependencyOptions = {},
): Promise<DependencyStatus | null> {
  const resolved = await locateProvider(name, options);
  if (resolved === null) return null;
  const { candidate, hermesHome, config } = resolved;
  const declared = await declaredDependencies(candidate);
  const external = candidate.manifest.externalDependencies;
  const details: string[] = [];
  // The grant matters only for npm packages (a review is not free).
  const needsNpm = declared.some((d) => d.specifier.startsWith("npm:"));
  const npmDenied = needsNpm &&
    !grantForCandidate(candidate, { hermesHome, config }).npm;
  if (npmDenied) {
    details.push(
      `It declares npm packages but may not use them: set permissions.npm: true in its plugin.yaml or grant memory.permissions.${name}.npm: true in config.yaml`,
    );
  }
  const dependencies: DependencyState[] = [];
  if (declared.length > 0) {
    const denoPath = options.denoPath ?? Deno.execPath();
    const flags = ["--cached-only", ...await lockFlags(candidate)];
    const cwd = candidate.dir ?? hermesHome;
    let all: DenoRun | undefined;
    try {
      all = await runDenoInstall(
        denoPath,
        declared.map((d) => d.specifier),
        flags,
        cwd,
      );
    } catch (error) {
      details.push(
        `Cannot check the module cache: ${errorText(error)}`,
      );
    }
    for (const dep of declared) {
      let cached: boolean | null = null;
      if (all?.code === 0) cached = true;
      else if (all !== undefined) {
        const one = await runDenoInstall(denoPath, [dep.specifier], flags, cwd);
        cached = one.code === 0;
      }
      dependencies.push({ ...dep, cached });
      if (cached === false) details.push(`Not cached: ${dep.specifier}`);
    }
  }
  for (const tool of external) {
    details.push(
      `Needs ${tool.name}${tool.check ? ` (check: ${tool.check})` : ""}${
        tool.install ? ` (install: ${tool.install})` : ""
      }`,
    );
  }
  const missing = dependencies.filter((d) => d.cached !== true);
  const ready = missing.length === 0 && !npmDenied;
  if (missing.length > 0) {
    details.push(`Run 'hermes memory setup ${name}' to cache them`);
  }
  const counted = `${declared.length} ${
    declared.length === 1 ? "dependency" : "dependencies"
  }`;
  const summary = declared.length === 0
    ? "no declared dependencies"
    : ready
    ? `${counted} cached`
    : `${missing.length} of ${counted} not ready`;
  return { provider: name, ready, summary, details, dependencies, external };
}

/**
 * Caches a provider's declared dependencies (`deno install --entrypoint
 * --no-config`), so a host running with `--cached-only` can load them.
 *
 * @throws {DependencyInstallError} When the provider is not found, may not
 * use npm but declares npm packages, or the install fails.
 *
 * @category Plugins: discovery, loading, permissions
 */
export async function prepareProviderDependencies(
  name: string,
  options: DependencyOptions = {},
): Promise<PrepareResult> {
  const resolved = await locateProvider(name, options);
  if (resolved === null) {
    throw new DependencyInstallError(
      name,
      `Memory provider '${name}' not found: run 'hermes memory list' to see the installed providers`,
    );
  }
  const { candidate, hermesHome, config } = resolved;
  let declared: ProviderDependency[];
  try {
    declared = await declaredDependencies(candidate);
  } catch (error) {
    throw new DependencyInstallError(
      name,
      errorText(error),
    );
  }
  const grant = grantForCandidate(candidate, { hermesHome, config });
  if (declared.some((d) => d.specifier.startsWith("npm:")) && !grant.npm) {
    throw new DependencyInstallError(
      name,
      `Memory provider '${name}' declares npm packages in its deno.json but may not use npm: set permissions.npm: true in its plugin.yaml, or grant memory.permissions.${name}.npm: true in config.yaml`,
    );
  }
  const messages: string[] = [];
  if (declared.length > 0) {
    const denoPath = options.denoPath ?? Deno.execPath();
    const run = await runDenoInstall(
      denoPath,
      declared.map((d) => d.specifier),
      await lockFlags(candidate),
      candidate.dir ?? hermesHome,
    );
    if (run.code !== 0) {
      throw new DependencyInstallError(
        name,
        `Cannot cache the dependencies of memory provider '${name}': ${
          run.output || `deno install exited with code ${run.code}`
        }`,
      );
    }
    messages.push(
      `Cached ${declared.map((d) => d.specifier).join(", ")} for '${name}'`,
    );
  }
  for (const tool of candidate.manifest.externalDependencies) {
    messages.push(
      `Memory provider '${name}' also needs ${tool.name}${
        tool.install ? `: install it with '${tool.install}'` : ""
      }${tool.check ? ` (check with '${tool.check}')` : ""}`,
    );
  }
  return { provider: name, cached: declared, messages };
}
