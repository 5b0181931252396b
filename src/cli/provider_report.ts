// What `status` reports about the active provider: its config,
// availability, settings with `env_var`s, dependency readiness and grant.

import { errorText } from "../_util/error_text.ts";
import { join } from "../_util/path.ts";
import type { CliIo } from "./cli_io.ts";
import {
  closeProvider,
  type DependencyInfo,
  loadProvider,
  providerDependencies,
  sandboxGrant,
  type SandboxInfo,
} from "./_plugins.ts";
import {
  listProviderNames,
  locateProvider,
  pythonProvider,
} from "./_provider_list.ts";
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

/**
 * One schema field of the active provider: `set` when its variable has a
 * non-empty value, `source` where the status hook found it set, `url` where
 * to obtain a credential.
 */
interface ProviderFieldReport {
  key: string;
  secret: boolean;
  envVar?: string;
  set: boolean;
  setIn?: "environment" | ".env";
  source?: string;
  url?: string;
}

/** The active provider, as `hermes memory status` shows it. */
export interface ProviderReport {
  name: string;
  installed: boolean;
  /** What the Python provider in `plugins/<name>/` is and what to do (see {@linkcode pythonProvider}). */
  python?: { what: string; fix: string };
  /** The installed provider with the closest name (a likely typo's fix). */
  suggestion?: string;
  source?: string;
  directory?: string;
  /** `$HERMES_HOME/plugins`. */
  userPluginDir: string;
  available?: boolean;
  unavailableReason?: string;
  /** `"settings"`: judged by its status hook, the provider was not started. */
  availableFrom?: "provider" | "settings";
  loadError?: string;
  /** `memory.<name>`, or the provider's `getStatusConfig()` view of it. */
  config: Record<string, unknown>;
  /** Why `getStatusConfig()` failed (then `config` is the raw section). */
  statusConfigError?: string;
  fields: ProviderFieldReport[];
  dependencies?: DependencyInfo;
  sandbox?: SandboxInfo;
}

/** Where a variable is set: the CLI's environment first, then `.env`. */
export function envVarSource(
  name: string,
  io: CliIo,
  dotenv: Record<string, string>,
): "environment" | ".env" | undefined {
  if ((io.env(name) ?? "") !== "") return "environment";
  if ((dotenv[name] ?? "") !== "") return ".env";
  return undefined;
}

/**
 * Everything `status` shows about the active provider; a broken provider
 * is part of the report, never thrown. `start: false` when the caller knows
 * availability from the provider's status hook.
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
    report.python = pythonProvider(name);
    if (report.python) return report;
    const names = await listProviderNames().catch(() => [] as string[]);
    const close = closestName(name, names);
    if (close !== undefined) report.suggestion = close;
    return report;
  }
  report.installed = true;
  report.source = location.source;
  report.directory = location.dir;
  // Read from the manifest and config alone: worked out while the
  // provider's worker starts (on its own thread).
  const dependencies = providerDependencies(name);
  const sandbox = sandboxGrant(name, config);
  sandbox.catch(() => {}); // Awaited (and so reported) below.
  if (location.source === "project") {
    // A cloned repository's plugin never runs on a status command.
    report.loadError =
      "not started: a project plugin (./.hermes/plugins/) never runs on a status command; it runs when an agent session uses it";
  } else if (options.start !== false) {
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
          const envVar = fieldEnvVar(field);
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
  }
  report.dependencies = await dependencies;
  report.sandbox = await sandbox;
  return report;
}

/** A schema field's `env_var`, when it names one. */
export function fieldEnvVar(field: ConfigField): string | undefined {
  return typeof field.env_var === "string" && field.env_var
    ? field.env_var
    : undefined;
}
