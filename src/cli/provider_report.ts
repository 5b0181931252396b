/**
 * What the CLI reports about provider plugins: the discovered list (for
 * `status` and `list`) and the details of the active provider (for
 * `status`): its config, availability, settings with `env_var`s,
 * dependency readiness and sandbox grant.
 *
 * @module
 */

import { errorText } from "../_util/error_text.ts";
import { join } from "node:path";
import type { CliIo } from "./cli_io.ts";
import {
  closeProvider,
  discoverProviders,
  loadProvider,
  locateProvider,
  providerDependencies,
  sandboxGrant,
} from "./_plugins.ts";
import { getHermesHome } from "../profile/hermes_home.ts";
import { loadEnvFile } from "../profile/env_file.ts";
import { getConfigValue } from "../config/config.ts";
import type {
  ConfigField,
  HermesConfig,
  MemoryProvider,
} from "../core/memory_provider.ts";
import { isRecord } from "../_util/is_record.ts";
import { closestName } from "./suggest.ts";

/** One discovered provider plugin. */
export interface PluginReport {
  /** The provider's name. */
  name: string;
  /** The `description` of its `plugin.yaml` (`""` when absent). */
  description: string;
  /** Where it was found: `bundled`, `user`, `project` or `package`. */
  source: string;
  /** Whether its availability probe passed (`null`: not probed). */
  available: boolean | null;
  /** Whether it is `memory.provider`. */
  active: boolean;
}

/** One schema field of the active provider that names an `env_var`. */
interface ProviderFieldReport {
  /** The field key. */
  key: string;
  /** Whether it is a secret. */
  secret: boolean;
  /** Its environment variable, if any. */
  envVar?: string;
  /** Whether the variable has a non-empty value. */
  set: boolean;
  /** Where it is set: `environment` or `.env`. */
  setIn?: "environment" | ".env";
  /** Where the provider's status hook found it set (its own file, …). */
  source?: string;
  /** Where to obtain a credential. */
  url?: string;
}

/** Dependency readiness of the active provider. */
interface DependencyReport {
  /** Whether everything it declares is ready. */
  ready: boolean;
  /** One line. */
  summary: string;
  /** Details, one per line (missing packages, install commands). */
  details: string[];
}

/** The effective sandbox grant of the active provider. */
interface SandboxReport {
  /** `worker` (permission-confined) or `none`. */
  mode: string;
  /** Readable paths. */
  read: string[];
  /** Writable paths. */
  write: string[];
  /** Readable environment variables. */
  env: string[];
  /** Reachable hosts. */
  net: string[];
  /** npm packages it may load. */
  npm: string[];
  /** What its manifest asks for that the user has not approved (`env X`). */
  notApproved: string[];
  /** The command that approves it (when `notApproved` is not empty). */
  approve?: string;
}

/** The active provider, as `hermes memory status` shows it. */
export interface ProviderReport {
  /** The provider's name. */
  name: string;
  /** Whether a plugin with that name was found. */
  installed: boolean;
  /**
   * The installed provider whose name is closest (at most two edits) when
   * none has this name: the likely typo's fix.
   */
  suggestion?: string;
  /** Where it was found. */
  source?: string;
  /** Its directory. */
  directory?: string;
  /** Where a user plugin would go: `$HERMES_HOME/plugins`. */
  userPluginDir: string;
  /** The result of `isAvailable()`. */
  available?: boolean;
  /** `unavailableReason()` when not available. */
  unavailableReason?: string;
  /**
   * `"settings"` when availability came from the provider's status hook
   * (judged from its settings; the provider was not started), else
   * `"provider"`.
   */
  availableFrom?: "provider" | "settings";
  /** Why it could not be loaded. */
  loadError?: string;
  /** `memory.<name>`, or the provider's `getStatusConfig()` view of it. */
  config: Record<string, unknown>;
  /** Why `getStatusConfig()` failed (then `config` is the raw section). */
  statusConfigError?: string;
  /** Schema fields with their `env_var` state. */
  fields: ProviderFieldReport[];
  /** Dependency readiness. */
  dependencies?: DependencyReport;
  /** The sandbox grant. */
  sandbox?: SandboxReport;
}

/**
 * Lists the discovered provider plugins with an active marker.
 *
 * @param active The active provider's name, or `null`.
 * @returns One report per plugin, in discovery order.
 *
 * @example Gathering the report
 * ```ts ignore
 * import { listPluginReports } from "./provider_report.ts";
 * const plugins = await listPluginReports("honcho");
 * ```
 */
export async function listPluginReports(
  active: string | null,
): Promise<PluginReport[]> {
  const found = await discoverProviders();
  return found.map((p) => ({
    name: p.name,
    description: p.description,
    source: p.source,
    available: p.available,
    active: p.name === active,
  }));
}

/**
 * Tells where an environment variable is set: the CLI's environment first,
 * then `$HERMES_HOME/.env`.
 *
 * @param name The variable.
 * @param io The CLI's environment.
 * @param dotenv The parsed `.env`.
 * @returns `environment`, `.env` or `undefined` when unset or empty.
 */
function envVarSource(
  name: string,
  io: CliIo,
  dotenv: Record<string, string>,
): "environment" | ".env" | undefined {
  if ((io.env(name) ?? "") !== "") return "environment";
  if ((dotenv[name] ?? "") !== "") return ".env";
  return undefined;
}

/**
 * Gathers everything `status` shows about the active provider. Never
 * throws for a broken provider: the failure is part of the report.
 *
 * @param name The active provider.
 * @param config The loaded `config.yaml`.
 * @param io The CLI's environment.
 * @returns The report.
 *
 * @example Gathering the report
 * ```ts ignore
 * import { collectProviderReport } from "./provider_report.ts";
 * import { memoryCliIo } from "@hermes/memory/cli";
 * const report = await collectProviderReport("honcho", {}, memoryCliIo());
 * ```
 */
export async function collectProviderReport(
  name: string,
  config: HermesConfig,
  io: CliIo,
  options: { start?: boolean } = {},
): Promise<ProviderReport> {
  const home = getHermesHome();
  const rawSection = getConfigValue(config, `memory.${name}`);
  const section = isRecord(rawSection) ? { ...rawSection } : {};
  const report: ProviderReport = {
    name,
    installed: false,
    userPluginDir: join(home, "plugins"),
    config: section,
    fields: [],
  };
  const location = await locateProvider(name);
  if (location === null) {
    const names = await discoverProviders().then(
      (found) => found.map((p) => p.name),
      () => [] as string[],
    );
    const close = closestName(name, names);
    if (close !== undefined) report.suggestion = close;
    return report;
  }
  report.installed = true;
  report.source = location.source;
  report.directory = location.dir;
  if (location.source === "project") {
    // A cloned repository's ./.hermes/plugins/ never runs on a status
    // command, even when memory.provider names it.
    report.loadError =
      "not started: a project plugin (./.hermes/plugins/) never runs on a status command; it runs when an agent session uses it";
    report.dependencies = await providerDependencies(name);
    report.sandbox = await sandboxGrant(name, config);
    return report;
  }

  // Read from the manifest and config alone: worked out while the
  // provider's worker starts (on its own thread).
  const dependencies = providerDependencies(name);
  const sandbox = sandboxGrant(name, config);
  if (options.start === false) {
    // The caller knows availability from the provider's status hook.
    report.dependencies = await dependencies;
    report.sandbox = await sandbox;
    return report;
  }
  sandbox.catch(() => {}); // Awaited (and so reported) below.
  let provider: MemoryProvider | null = null;
  try {
    provider = await loadProvider(name, { inspection: true });
    if (provider === null) {
      report.loadError =
        "the plugin did not register a provider (see the warning above)";
    } else {
      if (typeof provider.getStatusConfig === "function") {
        try {
          const view = await provider.getStatusConfig(section);
          if (isRecord(view)) report.config = view;
        } catch (error) {
          report.statusConfigError = errorText(error);
        }
      }
      report.available = Boolean(await provider.isAvailable());
      report.availableFrom = "provider";
      if (!report.available) {
        report.unavailableReason = String(
          await provider.unavailableReason() ?? "",
        );
      }
      const schema: ConfigField[] = await provider.getConfigSchema() ?? [];
      const dotenv = await loadEnvFile(join(home, ".env"));
      for (const field of schema) {
        const envVar = typeof field.env_var === "string" && field.env_var
          ? field.env_var
          : undefined;
        const setIn = envVar ? envVarSource(envVar, io, dotenv) : undefined;
        report.fields.push({
          key: field.key,
          secret: field.secret === true,
          envVar,
          set: setIn !== undefined,
          setIn,
          url: typeof field.url === "string" && field.url
            ? field.url
            : undefined,
        });
      }
    }
  } catch (error) {
    report.loadError = errorText(error);
  } finally {
    await closeProvider(provider);
  }
  report.dependencies = await dependencies;
  report.sandbox = await sandbox;
  return report;
}
