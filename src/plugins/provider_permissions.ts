/**
 * The effective sandbox grant of a memory provider: least privilege.
 *
 * A sandboxed provider gets exactly:
 *
 * - read: its own code directory (read-only: code it could rewrite would
 *   run unconfined on the next start), its data directory
 *   `$HERMES_HOME/<name>/`, the paths its `plugin.yaml` declares under
 *   `permissions.read`, and those the user granted under
 *   `memory.permissions.<name>.read` in `config.yaml`;
 * - write: its data directory, plus `permissions.write` and the user's
 *   `memory.permissions.<name>.write`;
 * - env: the names declared under `permissions.env`, plus the user's grant;
 * - net: the hosts declared under `permissions.net`, plus the user's grant
 *   (for example a self-hosted server);
 * - import: the host a package provider is served from (`jsr.io` or the
 *   `https:` host of its specifier), or, for a bundled provider of a
 *   framework loaded from a remote URL, the framework's host; else nothing;
 * - run, ffi and sys: never.
 *
 * Never, whoever asks: the profile's `.env` and `config.yaml`, `plugins/`,
 * other profiles, the framework's files (see `forbiddenGrantPath`); such
 * an entry is dropped with one warning naming the file and key. The rest of
 * `HERMES_HOME` (the built-in `MEMORY.md` / `USER.md`, sessions, other
 * providers' data) is the host's: a provider reaches it only by declaring
 * or being granted the exact path. User grants come only from
 * `config.yaml`, which no provider can write.
 *
 * `npm` (may the provider import `npm:` packages) comes from
 * `permissions.npm` or the user's grant. Without it the provider's process
 * runs with `--no-npm`; with it, with `--cached-only` (packages are cached by
 * `hermes memory setup`). The loader's source check refuses early.
 *
 * @module
 */

import { join, resolve } from "node:path";
import { getConfigPath } from "../config/config.ts";
import { getDefaultHermesRoot, getHermesHome } from "../profile/hermes_home.ts";
import { log } from "../core/log.ts";
import type { HermesConfig } from "../core/memory_provider.ts";
import {
  candidateModuleDir,
  type DiscoveryOptions,
  findMemoryProvider,
  type ProviderCandidate,
} from "./plugin_discovery.ts";
import {
  type ManifestPermissions,
  parsePermissionBlock,
} from "./plugin_manifest.ts";
import { loadConfig } from "../config/config.ts";
import { errorText } from "../_util/error_text.ts";
import {
  expandGrantPath,
  forbiddenGrantPath,
  type GrantEntry,
  type GrantOrigin,
  processPermissionFlags,
  type ProviderGrant,
  type SandboxTarget,
  workerPermissions,
} from "../sandbox/grant.ts";
import { localFrameworkDir } from "../sandbox/denial.ts";

export type { GrantEntry, GrantOrigin, ProviderGrant, SandboxTarget };
export { workerPermissions };

/**
 * Names a provider may not have because its data directory
 * `$HERMES_HOME/<name>/` would be one Hermes itself uses.
 */
const RESERVED_PROVIDER_NAMES: ReadonlySet<string> = new Set([
  "plugins",
  "profiles",
  "memories",
  "skills",
  "sessions",
  "logs",
  "cron",
  "hooks",
  "cache",
  "bin",
  "sandboxes",
  "checkpoints",
  "pairing",
  "platforms",
  "workspace",
  "image_cache",
  "audio_cache",
  "document_cache",
]);

/**
 * Why a provider cannot have `$HERMES_HOME/<name>/` as its data directory,
 * or `undefined` when it can.
 *
 * @param name The provider's name.
 * @param hermesHome The profile home.
 * @returns The reason, or `undefined`.
 *
 * @example
 * ```ts
 * import { dataDirProblem } from "./provider_permissions.ts";
 * import assert from "node:assert/strict";
 * assert.equal(dataDirProblem("honcho", "/h"), undefined);
 * assert.match(dataDirProblem("plugins", "/h") ?? "", /Hermes itself uses/);
 * ```
 */
export function dataDirProblem(
  name: string,
  hermesHome: string,
): string | undefined {
  const dir = join(resolve(hermesHome), name);
  if (RESERVED_PROVIDER_NAMES.has(name.toLowerCase())) {
    return `its data directory would be ${dir}, which Hermes itself uses: rename the provider`;
  }
  const why = forbiddenGrantPath(dir, {
    hermesHome,
    hermesRoot: getDefaultHermesRoot(),
    frameworkDir: localFrameworkDir(),
  });
  return why === undefined
    ? undefined
    : `its data directory would be ${dir}, and ${why}: rename the provider`;
}

/** Options of {@linkcode grantForCandidate}. */
interface GrantOptions {
  /**
   * The profile home.
   *
   * @default {getHermesHome()}
   */
  hermesHome?: string;
  /** The loaded `config.yaml` (for `memory.permissions.<name>`). */
  config?: HermesConfig;
}

const warnedUserGrants = new Set<string>();

function warnOnce(message: string): void {
  if (warnedUserGrants.has(message)) return;
  warnedUserGrants.add(message);
  log("warn", message);
}

function add(list: GrantEntry[], value: string, from: GrantOrigin): void {
  if (!list.some((e) => e.value === value)) list.push({ value, from });
}

function realPathSyncOr(path: string): string {
  try {
    return Deno.realPathSync(path);
  } catch {
    return path;
  }
}

/**
 * Reads the user's grant `memory.permissions.<name>` from a config. An
 * invalid block is ignored with a warning naming the key.
 *
 * @param name The provider's name.
 * @param config The loaded `config.yaml`.
 * @param hermesHome The profile home (for the file named in warnings).
 * @returns The user's grant (empty when none).
 *
 * @example
 * ```ts
 * import { userGrantFromConfig } from "./provider_permissions.ts";
 * import assert from "node:assert/strict";
 * const config = { memory: { permissions: { honcho: { net: ["honcho.internal:8000"] } } } };
 * assert.deepEqual(userGrantFromConfig("honcho", config, "/srv/h").net, ["honcho.internal:8000"]);
 * ```
 */
export function userGrantFromConfig(
  name: string,
  config: HermesConfig,
  hermesHome: string,
): ManifestPermissions {
  const memory = config.memory as Record<string, unknown> | undefined;
  const all = memory !== null && typeof memory === "object"
    ? memory.permissions as Record<string, unknown> | undefined
    : undefined;
  const block = all !== null && typeof all === "object" && !Array.isArray(all)
    ? all[name]
    : undefined;
  try {
    return parsePermissionBlock(block, {
      where: getConfigPath(hermesHome),
      keyPrefix: `memory.permissions.${name}`,
    });
  } catch (error) {
    const message = `${
      errorText(error)
    }; the grant is ignored until it is fixed`;
    if (!warnedUserGrants.has(message)) {
      warnedUserGrants.add(message);
      log("warn", message);
    }
    return { read: [], write: [], env: [], net: [], npm: false };
  }
}

/**
 * Computes the effective grant of a discovered provider.
 *
 * @param candidate The provider (from discovery).
 * @param options Home and config.
 * @returns The grant.
 *
 * @example
 * ```ts
 * import { emptyPluginManifest } from "./plugin_manifest.ts";
 * import { grantForCandidate } from "./provider_permissions.ts";
 * import assert from "node:assert/strict";
 * const grant = grantForCandidate(
 *   { name: "notes", source: "user", dir: "/srv/h/plugins/notes", specifier: "file:///srv/h/plugins/notes/mod.ts", manifest: emptyPluginManifest() },
 *   { hermesHome: "/srv/h", config: {} },
 * );
 * assert.deepEqual(grant.write.map((e) => e.value), ["/srv/h/notes"]);
 * ```
 */
export function grantForCandidate(
  candidate: ProviderCandidate,
  options: GrantOptions = {},
): ProviderGrant {
  const hermesHome = resolve(options.hermesHome ?? getHermesHome());
  const hermesRoot = getDefaultHermesRoot();
  const configPath = getConfigPath(hermesHome);
  const user = userGrantFromConfig(
    candidate.name,
    options.config ?? {},
    hermesHome,
  );
  const manifest = candidate.manifest.permissions;
  const manifestPath = candidate.dir !== undefined
    ? join(candidate.dir, "plugin.yaml")
    : `the manifest of memory provider '${candidate.name}'`;
  const grant: ProviderGrant = {
    provider: candidate.name,
    hermesHome,
    read: [],
    write: [],
    env: [],
    net: [],
    import: [],
    npm: manifest.npm || user.npm,
  };
  const moduleDir = candidateModuleDir(candidate);
  if (moduleDir !== undefined) add(grant.read, moduleDir, "provider-dir");
  if (dataDirProblem(candidate.name, hermesHome) === undefined) {
    const dataDir = join(hermesHome, candidate.name);
    grant.dataDir = dataDir;
    const real = join(realPathSyncOr(hermesHome), candidate.name);
    for (const path of new Set([dataDir, real])) {
      add(grant.read, path, "data-dir");
      add(grant.write, path, "data-dir");
    }
  }
  const homes = { hermesHome, hermesRoot };
  const forbidden = { ...homes, frameworkDir: localFrameworkDir() };
  const paths = (
    list: GrantEntry[],
    entries: string[],
    from: GrantOrigin,
    key: string,
  ): void => {
    for (const entry of entries) {
      const path = expandGrantPath(entry, homes);
      if (
        moduleDir !== undefined && key === "read" && isInside(moduleDir, path)
      ) {
        continue;
      }
      const why = forbiddenGrantPath(path, forbidden);
      if (why !== undefined) {
        const where = from === "config.yaml"
          ? `memory.permissions.${candidate.name}.${key} in ${configPath}`
          : `permissions.${key} in ${manifestPath}`;
        warnOnce(
          `Ignoring '${entry}' under ${where}: ${why}; a memory provider is never granted it`,
        );
        continue;
      }
      add(list, path, from);
    }
  };
  paths(grant.read, manifest.read, "plugin.yaml", "read");
  paths(grant.read, user.read, "config.yaml", "read");
  paths(grant.write, manifest.write, "plugin.yaml", "write");
  paths(grant.write, user.write, "config.yaml", "write");
  for (const name of manifest.env) add(grant.env, name, "plugin.yaml");
  for (const name of user.env) add(grant.env, name, "config.yaml");
  for (const host of manifest.net) add(grant.net, host, "plugin.yaml");
  for (const host of user.net) add(grant.net, host, "config.yaml");
  const specifier = candidate.specifier;
  if (candidate.source === "package") {
    if (specifier.startsWith("jsr:")) {
      add(grant.import, "jsr.io", "package");
    } else if (specifier.startsWith("https://")) {
      add(grant.import, new URL(specifier).host, "package");
    } else if (specifier.startsWith("npm:")) {
      grant.npm = true;
    }
  } else if (/^https?:\/\//.test(specifier)) {
    // A bundled provider of a framework loaded from a remote URL.
    add(grant.import, new URL(specifier).host, "framework");
  }
  return grant;
}

function isInside(parent: string, child: string): boolean {
  return child === parent || child.startsWith(`${parent}/`);
}

/**
 * The effective grant of a provider by name, as `hermes memory status` and
 * `hermes memory permissions` show it.
 *
 * @param name The provider's name.
 * @param options Home, config and discovery directories.
 * @returns The grant, or `null` when the provider is not found.
 *
 * @example
 * ```ts ignore
 * import { providerPermissions } from "@hermes/memory";
 * const grant = await providerPermissions("honcho");
 * console.log(grant?.net.map((e) => e.value));
 * ```
 */
export async function providerPermissions(
  name: string,
  options: DiscoveryOptions = {},
): Promise<ProviderGrant | null> {
  const hermesHome = resolve(options.hermesHome ?? getHermesHome());
  const config = options.config ?? await loadConfig({ hermesHome });
  const candidate = await findMemoryProvider(name, {
    ...options,
    hermesHome,
    config,
  });
  if (candidate === null) return null;
  return grantForCandidate(candidate, { hermesHome, config });
}

/**
 * The `deno run` permission flags of a grant: what a provider's sandbox
 * process is started with (and what a host running the worker transport
 * must hold, since a worker never gets more than its parent). Empty lists
 * are left out; a value holding a `,` or a control character is refused.
 *
 * @param grant The grant.
 * @returns Flags such as `--allow-read=/h,/h/plugins/x`.
 * @throws {TypeError} When a value holds a `,` or a control character.
 *
 * @example
 * ```ts
 * import { denoRunFlags } from "@hermes/memory";
 * import assert from "node:assert/strict";
 * const flags = denoRunFlags({ provider: "x", hermesHome: "/h", read: [{ value: "/h", from: "data-dir" }], write: [{ value: "/h", from: "data-dir" }], env: [{ value: "X_KEY", from: "plugin.yaml" }], net: [], import: [], npm: false });
 * assert.deepEqual(flags, ["--allow-read=/h", "--allow-write=/h", "--allow-env=X_KEY"]);
 * ```
 */
export function denoRunFlags(grant: ProviderGrant): string[] {
  return processPermissionFlags(grant);
}

function hostHas(descriptor: Deno.PermissionDescriptor): boolean {
  try {
    return Deno.permissions.querySync(descriptor).state === "granted";
  } catch {
    return false;
  }
}

/**
 * The parts of a grant the host process itself does not hold. Creating a
 * worker with any of them would fail (`Can't escalate parent thread
 * permissions`), so the loader checks first and names them.
 *
 * @param grant The grant.
 * @returns Flags the host lacks, such as `--allow-read=/root/.honcho/config.json`.
 *
 * @example
 * ```ts no-assert
 * import { missingHostPermissions } from "./provider_permissions.ts";
 * import { type ProviderGrant } from "@hermes/memory";
 * declare const grant: ProviderGrant;
 * const missing = missingHostPermissions(grant);
 * ```
 */
export function missingHostPermissions(grant: ProviderGrant): string[] {
  const missing: string[] = [];
  for (const e of grant.read) {
    if (!hostHas({ name: "read", path: e.value })) {
      missing.push(`--allow-read=${e.value}`);
    }
  }
  for (const e of grant.write) {
    if (!hostHas({ name: "write", path: e.value })) {
      missing.push(`--allow-write=${e.value}`);
    }
  }
  for (const e of grant.env) {
    if (!hostHas({ name: "env", variable: e.value })) {
      missing.push(`--allow-env=${e.value}`);
    }
  }
  for (const e of grant.net) {
    if (!hostHas({ name: "net", host: e.value })) {
      missing.push(`--allow-net=${e.value}`);
    }
  }
  for (const e of grant.import) {
    if (!hostHas({ name: "import", host: e.value })) {
      missing.push(`--allow-import=${e.value}`);
    }
  }
  return missing;
}
