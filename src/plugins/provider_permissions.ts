/**
 * The effective sandbox grant of a memory provider: the manifest asks, the
 * user approves, a floor no approval lifts.
 *
 * @module
 */

import { join, resolve } from "../_util/path.ts";
import { getConfigPath, getConfigValue } from "../config/config.ts";
import { isRecord } from "../_util/is_record.ts";
import {
  getDefaultHermesRoot,
  getHermesHome,
  getUserHome,
} from "../profile/hermes_home.ts";
import type { HermesConfig } from "../core/memory_provider.ts";
import {
  candidateModuleDir,
  type DiscoveryOptions,
  locateProvider,
  type ProviderCandidate,
  warnOnce,
} from "./plugin_discovery.ts";
import {
  type ManifestPermissions,
  parsePermissionBlock,
} from "./plugin_manifest.ts";
import { errorText } from "../_util/error_text.ts";
import {
  approveCommand,
  denoRunFlags,
  forbiddenGrantEnv,
  forbiddenGrantPath,
  type GrantEntry,
  type GrantOrigin,
  hermesAreaOf,
  insidePath,
  type ProviderGrant,
  realPathOf,
  type SandboxTarget,
  workerPermissions,
} from "../sandbox/grant.ts";
import { expandGrantPath } from "../sandbox/grant_path.ts";
import { terminalSafe } from "../core/terminal_text.ts";
import { BUNDLED_MANIFESTS } from "./bundled_manifests.ts";
import { grantKey } from "../sandbox/deno_denial.ts";

export type { GrantEntry, GrantOrigin, ProviderGrant, SandboxTarget };
export { approveCommand, denoRunFlags, workerPermissions };

/**
 * Why a provider cannot have `$HERMES_HOME/<name>/` as its data directory,
 * or `undefined` when it can.
 */
export function dataDirProblem(
  name: string,
  hermesHome: string,
): string | undefined {
  const dir = join(resolve(hermesHome), name);
  if (hermesAreaOf(name) !== undefined) {
    return `its data directory would be ${dir}, which Hermes itself uses: rename the provider`;
  }
  const why = forbiddenGrantPath(dir, {
    hermesHome,
    hermesRoot: getDefaultHermesRoot(),
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

function add(list: GrantEntry[], value: string, from: GrantOrigin): void {
  if (!list.some((e) => e.value === value)) list.push({ value, from });
}

/**
 * Reads the user's grant `memory.permissions.<name>` from a config. An
 * invalid block is ignored with a warning naming the key.
 */
export function userGrantFromConfig(
  name: string,
  config: HermesConfig,
  hermesHome: string,
): ManifestPermissions {
  const all = getConfigValue(config, "memory.permissions");
  const block = isRecord(all) ? all[name] : undefined;
  try {
    return parsePermissionBlock(block, {
      where: getConfigPath(hermesHome),
      keyPrefix: `memory.permissions.${name}`,
    });
  } catch (error) {
    warnOnce(`${errorText(error)}; the grant is ignored until it is fixed`);
    return { read: [], write: [], env: [], net: [], npm: false };
  }
}

/** One entry a provider's manifest asks for. */
export interface RequestedEntry {
  key: "read" | "write" | "env" | "net" | "npm";
  /** The path, variable or host (`"npm:"` packages for `npm`). */
  value: string;
  /** Why the manifest says it needs it (`permissions.why`). */
  why?: string;
  /** Whether the user approved it (always, for a bundled provider). */
  approved: boolean;
  /** A path with `~`, `$HERMES_HOME` and `$HERMES_ROOT` expanded, as the screen shows it. */
  path?: string;
  /** Why the floor refuses it whatever the user says (never approved, never granted). */
  refused?: string;
}

/** A provider's request beside what the user approved. */
export interface GrantReview {
  /** The effective grant: the baseline plus the approved part. */
  grant: ProviderGrant;
  manifestPath: string;
  /** Whether the provider is bundled (approved as its manifest declares). */
  bundled: boolean;
  requested: RequestedEntry[];
  /** One message per entry the floor refuses (file, entry and why). */
  refused: string[];
}

const reviewedProviders = new Set<string>();
const pendingApprovals = new Map<string, RequestedEntry[]>();

/**
 * Approves entries for this process only, until {@linkcode forgetPendingApproval}:
 * setup writes the approval to `config.yaml` only once it succeeds.
 */
export function approvePending(name: string, entries: RequestedEntry[]): void {
  pendingApprovals.set(name, entries);
}

/**
 * Drops what {@linkcode approvePending} approved, and lets the provider's
 * notice show again ({@linkcode markGrantReviewed}).
 */
export function forgetPendingApproval(name: string): void {
  pendingApprovals.delete(name);
  reviewedProviders.delete(name);
}

/** Silences a provider's "asks for more than you approved" notice (setup shows the request itself). */
export function markGrantReviewed(name: string): void {
  reviewedProviders.add(name);
}

/**
 * Computes the effective grant of a discovered provider (from `review` when
 * the caller has it). Logs the floor's refusals once each, and, when the
 * manifest asks for more than the user approved, one notice naming the
 * command that approves the rest.
 */
export function grantForCandidate(
  candidate: ProviderCandidate,
  options: GrantOptions = {},
  review: GrantReview = reviewGrant(candidate, options),
): ProviderGrant {
  reportRefused(review);
  const pending = review.requested.filter((e) => !e.approved && !e.refused);
  if (pending.length > 0 && !reviewedProviders.has(candidate.name)) {
    warnOnce(
      `Memory provider '${candidate.name}' asks for more than you approved (${
        describeEntries(pending)
      }, in ${review.manifestPath}); it runs without it. To review and approve: ${
        approveCommand(candidate.name)
      }`,
    );
  }
  return review.grant;
}

/** Logs the floor's refusals of a review, each once per process. */
export function reportRefused(review: GrantReview): void {
  for (const message of review.refused) warnOnce(message);
}

/** One line per kind: `read ~/a, ~/b; env X`. */
export function describeEntries(entries: RequestedEntry[]): string {
  const parts: string[] = [];
  for (const key of ["read", "write", "env", "net", "npm"] as const) {
    const values = entries.filter((e) => e.key === key).map((e) =>
      e.path ?? e.value
    );
    if (values.length > 0) parts.push(`${key} ${values.join(", ")}`);
  }
  return parts.join("; ");
}

/**
 * The provider's request beside the user's approval, and the effective
 * grant: the baseline (code read, data read and write), plus the approved
 * (or, bundled or `approveAll`, all) manifest entries and the user's own,
 * each past the floor.
 */
export function reviewGrant(
  candidate: ProviderCandidate,
  options: GrantOptions & { approveAll?: boolean } = {},
): GrantReview {
  const hermesHome = resolve(options.hermesHome ?? getHermesHome());
  const hermesRoot = getDefaultHermesRoot();
  const user = userGrantFromConfig(
    candidate.name,
    options.config ?? {},
    hermesHome,
  );
  const bundled = candidate.source === "bundled";
  const approveAll = bundled || options.approveAll === true;
  const manifest = candidate.manifest.permissions;
  const manifestPath = candidate.dir !== undefined
    ? join(candidate.dir, "plugin.yaml")
    : `the manifest of memory provider '${candidate.name}'`;
  const grant: ProviderGrant = {
    provider: candidate.name,
    hermesHome,
    ...(bundled ? { bundled } : {}),
    read: [],
    write: [],
    env: [],
    net: [],
    import: [],
    npm: false,
  };
  const requested: RequestedEntry[] = [];
  const refused: string[] = [];
  const request = (
    key: RequestedEntry["key"],
    value: string,
    approvedList: readonly string[] | boolean,
    shown: Pick<RequestedEntry, "path" | "refused"> = {},
  ): boolean => {
    const approved = !shown.refused && (approveAll ||
      (typeof approvedList === "boolean"
        ? approvedList
        : approvedList.includes(value)) ||
      (pendingApprovals.get(candidate.name) ?? []).some((e) =>
        e.key === key && e.value === value
      ));
    const why = manifest.why?.[value];
    requested.push({
      key,
      value,
      approved,
      ...(why !== undefined ? { why } : {}),
      ...shown,
    });
    return approved;
  };
  if (manifest.npm && request("npm", "npm: packages", user.npm)) {
    grant.npm = true;
  }
  if (user.npm) grant.npm = true;
  const moduleDir = candidateModuleDir(candidate);
  if (moduleDir !== undefined) add(grant.read, moduleDir, "provider-dir");
  if (dataDirProblem(candidate.name, hermesHome) === undefined) {
    const dataDir = join(hermesHome, candidate.name);
    grant.dataDir = dataDir;
    const real = join(realPathOf(hermesHome) ?? hermesHome, candidate.name);
    for (const path of new Set([dataDir, real])) {
      add(grant.read, path, "data-dir");
      add(grant.write, path, "data-dir");
    }
  }
  const homes = { hermesHome, hermesRoot };
  const otherProviders = installedProviderNames(hermesHome).filter((n) =>
    n !== candidate.name
  );
  const where = (from: GrantOrigin, key: string): string =>
    from === "config.yaml"
      ? grantKey(candidate.name, key, hermesHome)
      : `permissions.${key} in ${manifestPath}`;
  const refuse = (entry: string, from: GrantOrigin, key: string, why: string) =>
    refused.push(
      `Ignoring '${terminalSafe(entry)}' under ${
        where(from, key)
      }: ${why}; a memory provider is never granted it`,
    );
  const paths = (
    list: GrantEntry[],
    entries: string[],
    from: GrantOrigin,
    key: "read" | "write",
  ): void => {
    for (const entry of entries) {
      const path = expandGrantPath(entry, homes);
      if (
        moduleDir !== undefined && key === "read" && insidePath(moduleDir, path)
      ) {
        continue;
      }
      const why = forbiddenGrantPath(path, {
        ...homes,
        provider: candidate.name,
        bundled,
        access: key,
        userHome: getUserHome(),
        otherProviders,
      });
      if (why !== undefined) {
        refuse(entry, from, key, why);
        if (from === "plugin.yaml") {
          request(key, entry, false, { path, refused: why });
        }
        continue;
      }
      if (
        from === "plugin.yaml" && !request(key, entry, user[key], { path })
      ) continue;
      add(list, path, from);
      const real = realPathOf(path);
      if (real !== undefined && real !== path) add(list, real, from);
    }
  };
  paths(grant.read, manifest.read, "plugin.yaml", "read");
  paths(grant.read, user.read, "config.yaml", "read");
  paths(grant.write, manifest.write, "plugin.yaml", "write");
  paths(grant.write, user.write, "config.yaml", "write");
  const names = (entries: string[], from: GrantOrigin): void => {
    for (const name of entries) {
      const why = forbiddenGrantEnv(name, {
        provider: candidate.name,
        bundled,
      });
      if (why !== undefined) {
        refuse(name, from, "env", why);
        if (from === "plugin.yaml") {
          request("env", name, false, { refused: why });
        }
        continue;
      }
      if (from === "plugin.yaml" && !request("env", name, user.env)) continue;
      add(grant.env, name, from);
    }
  };
  names(manifest.env, "plugin.yaml");
  names(user.env, "config.yaml");
  for (const host of manifest.net) {
    if (request("net", host, user.net)) add(grant.net, host, "plugin.yaml");
  }
  for (const host of user.net) add(grant.net, host, "config.yaml");
  if (bundled) {
    const files = manifest.read.map((entry) => expandGrantPath(entry, homes));
    for (const host of settingsHosts(candidate.name, files, options.config)) {
      add(grant.net, host, "settings");
    }
  }
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
  return { grant, manifestPath, bundled, requested, refused };
}

/**
 * The hosts of the server addresses a user wrote for a bundled provider:
 * `baseUrl` / `base_url` (root, `endpoint`, host blocks) in the JSON
 * settings files its manifest reads (honcho.json), and `base_url` in
 * config.yaml's section of its name. Writing the address is the user's
 * consent to reach it, so a home Hermes made connects with no setup step.
 */
function settingsHosts(
  name: string,
  files: string[],
  config: HermesConfig = {},
): string[] {
  const section = getConfigValue(config, name);
  const urls: unknown[] = isRecord(section) ? [section.base_url] : [];
  for (const file of files.filter((f) => f.endsWith(".json"))) {
    let raw: unknown;
    try {
      raw = JSON.parse(Deno.readTextFileSync(file));
    } catch {
      continue; // Missing or unusable: the provider reports that itself.
    }
    if (!isRecord(raw)) continue;
    const hosts = isRecord(raw.hosts) ? Object.values(raw.hosts) : [];
    for (const block of [raw, raw.endpoint, ...hosts]) {
      if (isRecord(block)) urls.push(block.baseUrl, block.base_url);
    }
  }
  const hosts = new Set<string>();
  for (const url of urls) {
    const parsed = typeof url === "string" ? URL.parse(url) : null;
    if (parsed?.host && /^https?:$/.test(parsed.protocol)) {
      hosts.add(parsed.host);
    }
  }
  return [...hosts];
}

/** The bundled providers and those in the profile's `plugins/`. */
function installedProviderNames(hermesHome: string): string[] {
  const names = Object.keys(BUNDLED_MANIFESTS);
  try {
    for (const entry of Deno.readDirSync(join(hermesHome, "plugins"))) {
      names.push(entry.name);
    }
  } catch {
    // No plugins/ (or not readable here): the bundled names remain.
  }
  return names;
}

/**
 * The effective grant of a provider by name, as `hermes memory status` and
 * `permissions` show it.
 *
 * @returns The grant, or `null` when the provider is not found.
 *
 * @category Plugins: discovery, loading, permissions
 */
export async function providerPermissions(
  name: string,
  options: DiscoveryOptions & {
    /** The grant once the user approves the whole request (for setup). */
    approveAll?: boolean;
  } = {},
): Promise<ProviderGrant | null> {
  const found = await locateProvider(name, options);
  if (found === null) return null;
  const { candidate, hermesHome, config } = found;
  if (options.approveAll) {
    return reviewGrant(candidate, { hermesHome, config, approveAll: true })
      .grant;
  }
  return grantForCandidate(candidate, { hermesHome, config });
}

function hostHas(descriptor: Deno.PermissionDescriptor): boolean {
  try {
    return Deno.permissions.querySync(descriptor).state === "granted";
  } catch {
    return false;
  }
}

/** The parts of a grant the host does not hold: a worker with them fails to start, so the loader names them. */
export function missingHostPermissions(grant: ProviderGrant): string[] {
  const missing: string[] = [];
  for (
    const [name, field] of [
      ["read", "path"],
      ["write", "path"],
      ["env", "variable"],
      ["net", "host"],
      ["import", "host"],
    ] as const
  ) {
    for (const e of grant[name]) {
      const descriptor = {
        name,
        [field]: e.value,
      } as Deno.PermissionDescriptor;
      if (!hostHas(descriptor)) missing.push(`--allow-${name}=${e.value}`);
    }
  }
  return missing;
}
