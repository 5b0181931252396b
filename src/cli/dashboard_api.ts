/**
 * What `hermes memory dashboard` shows and changes, each through the
 * function the matching command uses: providers from discovery and their
 * manifests (nothing started, nothing installed), the configuration panel
 * from the provider's config schema with the setup command's field rules,
 * saving through `runMemorySetup` (the `--yes --set` path), status and
 * doctor from `collectStatus` / `collectDoctor`, built-in entries through
 * the `memory` tool's handler, Honcho's peer card, representation and
 * search through its own tools in its sandbox.
 *
 * @module
 */

import { join } from "node:path";
import type { CliIo } from "./cli_io.ts";
import {
  closeProvider,
  describeProviderStatus,
  isBuiltinSentinel,
  loadProvider,
  locateProvider,
} from "./_plugins.ts";
import { listPluginReports } from "./provider_report.ts";
import {
  fieldApplies,
  fieldChoices,
  fieldDefault,
  fieldLabel,
  fieldType,
} from "./setup_wizard.ts";
import { collectStatus } from "./commands/memory_status.ts";
import { collectDoctor } from "./commands/memory_doctor.ts";
import {
  runMemorySetup,
  type SetupJsonReport,
} from "./commands/memory_setup.ts";
import {
  type AgentMemory,
  callProviderTool,
  openAgentMemory,
} from "./_agent_memory.ts";
import { readPluginManifest } from "../plugins/plugin_manifest.ts";
import { readDotenvForAvailability } from "../plugins/provider_availability.ts";
import { getHermesHome } from "../profile/hermes_home.ts";
import { renderChanges } from "./setup_changes.ts";
import { getConfigValue, loadConfig } from "../config/config.ts";
import { isRecord } from "../_util/is_record.ts";
import { maskSecret } from "../core/mask.ts";
import { errorText } from "../_util/error_text.ts";
import type { ConfigField } from "../core/memory_provider.ts";
import type { ProviderConnectionStatus } from "../plugins/provider_cli.ts";

/** One discovered provider on the page. */
export interface DashboardProvider {
  /** Its name. */
  name: string;
  /** Its `plugin.yaml` description. */
  description: string;
  /** `bundled`, `user`, `project` or `package`. */
  source: string;
  /** Whether it is `memory.provider`. */
  active: boolean;
  /** Readiness from the manifest and the declared variables. */
  ready: boolean | null;
  /** The variables its manifest declares, each with whether it is set. */
  variables: { name: string; required: boolean; set: boolean }[];
}

/**
 * Every discovered provider with its source and readiness, decided from
 * its manifest and whether its declared variables are set (in the
 * environment or `.env`; names only). No provider code runs.
 *
 * @param io The CLI's environment.
 * @returns The providers and the active one.
 */
export async function dashboardProviders(
  io: CliIo,
): Promise<{ active: string | null; providers: DashboardProvider[] }> {
  const home = getHermesHome();
  let active: string | null = null;
  try {
    const raw = getConfigValue(await loadConfig(), "memory.provider");
    const name = typeof raw === "string" ? raw.trim() : "";
    active = name === "" || isBuiltinSentinel(name) ? null : name;
  } catch {
    // A broken config.yaml: status shows why.
  }
  const dotenv = await readDotenvForAvailability(home);
  const isSet = (name: string) =>
    (io.env(name) ?? "") !== "" || (dotenv[name] ?? "") !== "";
  const providers: DashboardProvider[] = [];
  for (const plugin of await listPluginReports(active)) {
    const variables: DashboardProvider["variables"] = [];
    const dir = (await locateProvider(plugin.name))?.dir;
    if (dir !== undefined) {
      try {
        const manifest = await readPluginManifest(dir);
        for (const name of manifest.requiresEnv) {
          variables.push({ name, required: true, set: isSet(name) });
        }
        for (const name of manifest.availability.env) {
          if (variables.some((v) => v.name === name)) continue;
          variables.push({ name, required: false, set: isSet(name) });
        }
      } catch {
        // Discovery already judged the manifest.
      }
    }
    providers.push({
      name: plugin.name,
      description: plugin.description,
      source: plugin.source,
      active: plugin.active,
      ready: plugin.available,
      variables,
    });
  }
  return { active, providers };
}

/** One field of the configuration panel. */
export interface DashboardField {
  /** The setting's key (what `--set key=value` names). */
  key: string;
  /** The label setup asks with. */
  label: string;
  /** The schema's description. */
  description: string;
  /** `string`, `number`, `boolean`, … as setup converts it. */
  type: string;
  /** The choices a picker offers, if any. */
  choices: { value: string; label: string }[] | null;
  /** The default setup pre-fills. */
  default: unknown;
  /** Whether it is a secret (written to `.env`, never shown). */
  secret: boolean;
  /** Whether setup refuses to finish without it. */
  required: boolean;
  /** Its environment variable, if any. */
  envVar: string | null;
  /** Where to obtain a credential. */
  url: string | null;
  /** The value in effect (a secret only as `...last4`, or `null`). */
  current: unknown;
  /** Where the value in effect comes from. */
  source: string | null;
  /** Whether the field applies with the values in effect (`when`). */
  applies: boolean;
}

/**
 * The configuration panel of a provider: its config schema (loaded in its
 * sandbox, as `hermes memory setup NAME` loads it) with the setup command's
 * labels, choices and defaults, and the values in effect from the
 * provider's status hook (secrets masked).
 *
 * @param name The provider.
 * @param io The CLI's environment.
 * @returns The fields, or an error when the provider cannot load.
 */
export async function dashboardSchema(
  name: string,
  io: CliIo,
): Promise<{ provider: string; fields: DashboardField[] } | { error: string }> {
  if (await locateProvider(name) === null) {
    return { error: `memory provider '${name}' was not found` };
  }
  let schema: ConfigField[] = [];
  let provider = null;
  try {
    provider = await loadProvider(name);
    if (provider === null) {
      return { error: "the plugin registered no provider" };
    }
    schema = await provider.getConfigSchema() ?? [];
  } catch (error) {
    return { error: errorText(error).split("\n", 1)[0] ?? "" };
  } finally {
    await closeProvider(provider);
  }
  const home = getHermesHome();
  const config = await loadConfig().catch(() => ({}));
  const section = getConfigValue(config, `memory.${name}`);
  const own = isRecord(section) ? section : {};
  const { description } = await describeProviderStatus(name, {
    hermesHome: home,
    config,
    env: (variable) => io.env(variable),
    probe: false,
    probeTimeoutMs: 0,
    detail: "status",
  });
  const dotenv = await readDotenvForAvailability(home);
  const effective: Record<string, unknown> = { ...own };
  for (const [key, s] of Object.entries(description?.settings ?? {})) {
    if (s.set && !(key in effective)) effective[key] = s.value;
  }
  const fields = schema.map((field): DashboardField => {
    const envVar = typeof field.env_var === "string" && field.env_var
      ? field.env_var
      : null;
    const status = description?.settings[field.key];
    let current: unknown = null;
    let source: string | null = null;
    if (field.secret === true) {
      const value = envVar ? (io.env(envVar) || dotenv[envVar] || "") : "";
      current = value !== "" ? maskSecret(value) : null;
      source = value === ""
        ? null
        : io.env(envVar as string)
        ? "environment"
        : ".env";
    } else if (status?.set) {
      current = status.value;
      source = status.source;
    } else if (field.key in own) {
      current = own[field.key];
      source = `config.yaml memory.${name}`;
    }
    const choices = fieldChoices(field);
    return {
      key: field.key,
      label: fieldLabel(field),
      description: field.description ?? "",
      type: fieldType(field),
      choices: choices === undefined
        ? null
        : choices.map((c) => ({ value: String(c.value), label: c.label })),
      default: field.secret === true
        ? null
        : fieldDefault(field, effective) ?? null,
      secret: field.secret === true,
      required: field.required === true,
      envVar,
      url: typeof field.url === "string" ? field.url : null,
      current,
      source,
      applies: fieldApplies(field, effective),
    };
  });
  return { provider: name, fields };
}

/** What saving the configuration panel did. */
export interface DashboardSetupResult {
  /** The setup command's exit code (`0`: saved). */
  exitCode: number;
  /** Its change summary (secrets masked by setup). */
  changes: SetupJsonReport["changes"];
  /** The same summary as `hermes memory setup` prints it. */
  summary: string;
  /** What setup printed (its messages, warnings and connection test). */
  messages: string;
  /** The connection test after saving, when the provider has one. */
  connection: ProviderConnectionStatus | null;
}

/**
 * Saves a provider's settings through `hermes memory setup NAME --yes
 * --set key=value …` (the same function, so secrets go to `.env`, the rest
 * through the provider's own save, and whatever setup adds on the way),
 * then runs the provider's connection test.
 *
 * @param name The provider.
 * @param values The settings to change, as text (`""` clears a setting).
 * @param io The CLI's environment.
 * @returns The exit code, changes, messages and connection.
 */
export async function dashboardSetup(
  name: string,
  values: Record<string, string>,
  io: CliIo,
): Promise<DashboardSetupResult> {
  let out = "";
  let messages = "";
  const capture: CliIo = {
    stdout: (text) => {
      out += text;
    },
    stderr: (text) => {
      messages += text;
    },
    stdinIsTerminal: false,
    stdoutIsTerminal: false,
    stderrIsTerminal: false,
    env: (variable) => io.env(variable),
    get prompts() {
      return io.prompts;
    },
  };
  const set = Object.entries(values).map(([key, value]) => `${key}=${value}`);
  const exitCode = await runMemorySetup(
    { provider: name, set, yes: true, json: true },
    capture,
  );
  let changes: SetupJsonReport["changes"] = [];
  try {
    changes = (JSON.parse(out) as SetupJsonReport).changes;
  } catch {
    // Setup stopped before its report: the messages say why.
  }
  let connection: ProviderConnectionStatus | null = null;
  if (exitCode === 0) {
    const config = await loadConfig().catch(() => ({}));
    const { description } = await describeProviderStatus(name, {
      hermesHome: getHermesHome(),
      config,
      env: (variable) => io.env(variable),
      probe: true,
      probeTimeoutMs: 5_000,
      detail: "status",
    });
    connection = description?.connection ?? null;
  }
  return {
    exitCode,
    changes,
    summary: renderChanges(changes).trim(),
    messages,
    connection,
  };
}

/** One finding of status or doctor, with its fix. */
export interface DashboardFinding {
  /** `status` or `doctor`. */
  from: "status" | "doctor";
  /** Whether it is a problem (`false`: a passing check). */
  problem: boolean;
  /** What was checked, or where. */
  where: string;
  /** What was found. */
  message: string;
  /** What to do (`null` when nothing is to be done). */
  fix: string | null;
}

/**
 * The findings of `hermes memory status` and `hermes memory doctor`, from
 * their own collectors, each with its fix.
 *
 * @param io The CLI's environment.
 * @returns The active provider, its connection and the findings.
 */
export async function dashboardHealth(io: CliIo): Promise<{
  provider: string | null;
  connection: ProviderConnectionStatus | null;
  findings: DashboardFinding[];
}> {
  const warnings: string[] = [];
  const quiet: CliIo = {
    ...io,
    stdout: () => {},
    stderr: (text) => {
      warnings.push(text);
    },
  };
  const [status, doctor] = await Promise.all([
    collectStatus(quiet, { probe: true }),
    collectDoctor(quiet),
  ]);
  const findings: DashboardFinding[] = [];
  for (const file of status.files) {
    if (file.error) {
      findings.push({
        from: "status",
        problem: true,
        where: file.path,
        message: file.error.message,
        fix: file.error.fix,
      });
    }
  }
  const p = status.provider;
  if (p !== null) {
    if (p.loadError) {
      findings.push({
        from: "status",
        problem: true,
        where: `provider ${p.name}`,
        message: `cannot load: ${p.loadError}`,
        fix: `run 'hermes memory doctor', then 'hermes memory setup ${p.name}'`,
      });
    } else if (p.available === false) {
      findings.push({
        from: "status",
        problem: true,
        where: `provider ${p.name}`,
        message: `not available${
          p.unavailableReason ? `: ${p.unavailableReason}` : ""
        }`,
        fix:
          `configure it: 'hermes memory setup ${p.name}' (or the panel above)`,
      });
    }
    if (p.connection?.attempted) {
      findings.push({
        from: "status",
        problem: !p.connection.ok,
        where: p.connection.url ?? `provider ${p.name}`,
        message: p.connection.ok
          ? `connected in ${p.connection.elapsedMs ?? "?"} ms`
          : p.connection.error ?? "connection failed",
        fix: p.connection.fix,
      });
    }
  }
  for (const problem of doctor.problems) {
    findings.push({
      from: "doctor",
      problem: true,
      where: problem.where,
      message: problem.message,
      fix: problem.fix,
    });
  }
  return {
    provider: status.provider?.name ?? null,
    connection: doctor.connection ?? status.provider?.connection ?? null,
    findings,
  };
}

/**
 * The active provider's memory, opened once for the page's read-mostly
 * views (Honcho's peer card, representation and search), in its sandbox.
 */
export class DashboardProviderView {
  #io: CliIo;
  #memory: Promise<AgentMemory> | null = null;

  /**
   * Creates the view; nothing is opened until a view is asked for.
   *
   * @param io Where warnings go.
   */
  constructor(io: CliIo) {
    this.#io = io;
  }

  /**
   * Runs one of the active provider's tools.
   *
   * @param tool The tool's name.
   * @param args Its arguments.
   * @returns The tool's parsed result (`{ result }` or `{ error }`).
   */
  async call(
    tool: string,
    args: Record<string, unknown>,
  ): Promise<Record<string, unknown>> {
    // Read-mostly: loaded for inspection (a provider may skip its side
    // effects then).
    this.#memory ??= openAgentMemory(this.#io, {
      sessionId: "dashboard",
      inspection: true,
    });
    const memory = await this.#memory;
    if (!memory.manager.hasTool(tool)) {
      return {
        error: memory.external === null
          ? "no external provider is active"
          : `provider '${memory.external}' has no tool '${tool}'`,
      };
    }
    const text = await callProviderTool(memory, tool, args);
    try {
      const value = JSON.parse(text) as unknown;
      return isRecord(value) ? value : { result: value };
    } catch {
      return { result: text };
    }
  }

  /** Forgets the opened provider (after its settings changed). */
  async reset(): Promise<void> {
    const memory = this.#memory;
    this.#memory = null;
    if (memory !== null) {
      await memory.then((m) => m.manager.shutdownAll()).catch(() => {});
    }
  }
}

/** The path of the profile's `.env` (for the page's notes). */
export function envFilePath(): string {
  return join(getHermesHome(), ".env");
}
