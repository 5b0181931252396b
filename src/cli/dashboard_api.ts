// What `hermes memory dashboard` shows and changes, each through the code the
// matching command uses: discovery and manifests (nothing started), setup's
// field rules, approval request (`shownRequest`) and `runMemorySetup`,
// `collectDoctor`, `readMemoryConfig` / `saveConfig` for the built-in
// settings, and the active provider's own tools in its sandbox.

import { type CliIo, redirectIo } from "./cli_io.ts";
import {
  isBuiltinSentinel,
  providerSchema,
  providerStatusNow,
} from "./_plugins.ts";
import {
  listPluginReports,
  locateProvider,
  readActiveProvider,
} from "./_provider_list.ts";
import { envVarSource, fieldEnvVar } from "./provider_report.ts";
import {
  fieldApplies,
  fieldChoices,
  fieldDefault,
  fieldLabel,
  fieldType,
} from "./setup_wizard.ts";
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
import {
  availabilityFile,
  readDotenvForAvailability,
} from "../plugins/provider_availability.ts";
import { shownRequest } from "./_setup_approval.ts";
import { getHermesHome } from "../profile/hermes_home.ts";
import {
  diffSnapshots,
  renderChanges,
  snapshotFiles,
} from "./setup_changes.ts";
import {
  getConfigPath,
  getConfigValue,
  loadConfig,
  saveConfig,
} from "../config/config.ts";
import {
  type MemoryConfig,
  readMemoryConfig,
} from "../builtin/memory_files.ts";
import { listBuiltinEntries } from "./builtin_entries.ts";
import { isRecord } from "../_util/is_record.ts";
import { maskSecret } from "../core/mask.ts";
import type { ProviderConnectionStatus } from "../plugins/provider_cli.ts";

/**
 * Every discovered provider with its readiness from its manifest, whether
 * its declared variables are set (environment or `.env`; names only) and
 * the settings file that makes it configured. No provider code runs.
 */
export async function dashboardProviders(io: CliIo) {
  const home = getHermesHome();
  // A broken config.yaml: status shows why.
  const active = await readActiveProvider();
  const dotenv = await readDotenvForAvailability(home);
  const isSet = (name: string) => envVarSource(name, io, dotenv) !== undefined;
  const providers = [];
  for (const plugin of await listPluginReports(active)) {
    const variables: { name: string; required: boolean; set: boolean }[] = [];
    const dir = (await locateProvider(plugin.name))?.dir;
    let file: string | undefined;
    if (dir !== undefined) {
      try {
        const manifest = await readPluginManifest(dir);
        file = await availabilityFile(manifest, home);
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
      file: file ?? null,
    });
  }
  return { active, providers };
}

/**
 * A provider's configuration panel: its config schema (loaded in its
 * sandbox, as setup does) and the values in effect from its status hook.
 */
export async function dashboardSchema(name: string, io: CliIo) {
  if (await locateProvider(name) === null) {
    return { error: `memory provider '${name}' was not found` };
  }
  const loaded = await providerSchema(name);
  if ("error" in loaded) return loaded;
  const { schema } = loaded;
  const home = getHermesHome();
  const config = await loadConfig().catch(() => ({}));
  const section = getConfigValue(config, `memory.${name}`);
  const own = isRecord(section) ? section : {};
  const description = await providerStatusNow(name, io, false, config);
  const dotenv = await readDotenvForAvailability(home);
  const effective: Record<string, unknown> = { ...own };
  for (const [key, s] of Object.entries(description?.settings ?? {})) {
    if (s.set && !(key in effective)) effective[key] = s.value;
  }
  const fields = schema.map((field) => {
    const envVar = fieldEnvVar(field) ?? null;
    const status = description?.settings[field.key];
    let current: unknown = null;
    let source: string | null = null;
    if (field.secret === true) {
      const from = envVar ? envVarSource(envVar, io, dotenv) : undefined;
      if (envVar && from) {
        current = maskSecret(
          (from === "environment" ? io.env(envVar) : dotenv[envVar]) ?? "",
        );
        source = from;
      }
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
      // The provider's own default (its status hook) when the schema has none.
      default: field.secret === true ? null : fieldDefault(field, effective) ??
        (status?.set ? null : status?.value) ??
        null,
      secret: field.secret === true,
      required: field.required === true,
      envVar,
      url: typeof field.url === "string" ? field.url : null,
      current,
      source,
      applies: fieldApplies(field, effective),
    };
  });
  // What setup would ask to approve, shown before Save (null: nothing).
  const request = await shownRequest(name);
  return { provider: name, fields, request: request ?? null };
}

/**
 * Saves through `hermes memory setup NAME --yes --set key=value …` (the same
 * function: secrets to `.env`, the rest through the provider's own save),
 * then runs the provider's connection test. `shown` is the digest of the
 * request the page showed (`null`: none): a different request now refuses
 * the save; `approve` approves exactly that one (else setup's default No).
 */
export async function dashboardSetup(
  name: string,
  values: Record<string, string>,
  approval: { shown: string | null; approve: boolean },
  io: CliIo,
) {
  const request = await shownRequest(name);
  if ((request?.digest ?? null) !== approval.shown) {
    return {
      refused: request
        ? `Not saved: memory provider '${name}' asks for permissions this page did not show you; reload the page, review them and save again.\n${request.text}`
        : `Not saved: the request this page showed for '${name}' is no longer asked; reload the page and save again.`,
    };
  }
  let out = "";
  let messages = "";
  const terminal = { stdinIsTerminal: false, stderrIsTerminal: false };
  const capture = redirectIo({ ...io, ...terminal }, {
    stdout: (text) => void (out += text),
    stderr: (text) => void (messages += text),
    stdoutLike: "stderr",
  });
  const set = Object.entries(values).map(([key, value]) => `${key}=${value}`);
  const exitCode = await runMemorySetup({
    provider: name,
    set,
    yes: true,
    json: true,
    approve: approval.approve && approval.shown !== null ? approval.shown : "",
  }, capture);
  let changes: SetupJsonReport["changes"] = [];
  try {
    changes = (JSON.parse(out) as SetupJsonReport).changes;
  } catch {
    // Setup stopped before its report: the messages say why.
  }
  // Saved or not is what changed on disk, whatever the connection test said.
  const saved = changes.some((c) => c.change !== "unchanged");
  let connection: ProviderConnectionStatus | null = null;
  if ((exitCode === 0 || saved) && !isBuiltinSentinel(name)) {
    connection = (await providerStatusNow(name, io, true))?.connection ?? null;
  }
  return {
    exitCode,
    saved,
    changes,
    summary: renderChanges(changes).trim(),
    messages,
    connection,
  };
}

// Hermes' keys under `memory:`, each with what `readMemoryConfig` reads it into.
const BUILTIN_SETTINGS = {
  memory_enabled: "memoryEnabled",
  user_profile_enabled: "userProfileEnabled",
  memory_char_limit: "memoryCharLimit",
  user_char_limit: "userCharLimit",
  write_approval: "writeApproval",
} as const;

/** The built-in store's files and its settings under `memory:` in `config.yaml`, as Hermes reads them. */
export async function dashboardBuiltin() {
  const config = await loadConfig();
  const read = readMemoryConfig(config);
  const keys = Object.entries(BUILTIN_SETTINGS);
  const settings = Object.fromEntries(keys.map(([k, f]) => [k, read[f]]));
  return { files: await listBuiltinEntries({ config }), settings };
}

/** Saves built-in settings into `config.yaml` (merged, as `hermes memory setup` and `off` save) and says what changed. */
export async function dashboardBuiltinSave(values: Record<string, unknown>) {
  const known = BUILTIN_SETTINGS as Record<string, keyof MemoryConfig>;
  for (const [key, value] of Object.entries(values)) {
    if (!Object.hasOwn(known, key)) {
      const all = Object.keys(known).join(", ");
      return {
        error: `memory.${key} is not a built-in setting; they are ${all}`,
      };
    }
    // A flag takes true or false; a limit, whole characters (at least 1).
    const flag = typeof readMemoryConfig({})[known[key]!] === "boolean";
    if (
      flag
        ? typeof value !== "boolean"
        : !Number.isSafeInteger(value) || (value as number) < 1
    ) {
      const want = flag
        ? "true or false"
        : "a whole number of characters, at least 1";
      return {
        error: `memory.${key} must be ${want}, not ${JSON.stringify(value)}`,
      };
    }
  }
  const home = getHermesHome();
  const files = [{ path: getConfigPath(home), format: "yaml" as const }];
  const before = await snapshotFiles(files);
  await saveConfig({ memory: values });
  const after = await snapshotFiles(files);
  // Setup's diff (it always lists memory.provider), only what changed.
  const changes = diffSnapshots(files, before, after, home)
    .filter((c) => c.change !== "unchanged");
  return { summary: renderChanges(changes).trim() };
}

/**
 * The findings of `hermes memory doctor` (its checks cover status's: files,
 * provider, connection), each once, and a passing connection test
 * (`problem: false`).
 */
export async function dashboardHealth(io: CliIo) {
  const quiet: CliIo = { ...io, stdout: () => {}, stderr: () => {} };
  const doctor = await collectDoctor(quiet);
  const c = doctor.connection;
  const findings = doctor.problems.map(({ where, message, fix }) => ({
    problem: true,
    where,
    message,
    fix: fix as string | null,
  }));
  if (c?.ok) {
    const where = c.url ?? `provider ${doctor.provider}`;
    const message = `connected in ${c.elapsedMs ?? "?"} ms`;
    findings.unshift({ problem: false, where, message, fix: null });
  }
  return { provider: doctor.provider, connection: c, findings };
}

/**
 * The active provider's memory, opened once for the page's read-mostly
 * views (Honcho's peer card, representation and search), in its sandbox.
 */
export class DashboardProviderView {
  #io: CliIo;
  #memory: Promise<AgentMemory> | null = null;

  constructor(io: CliIo) {
    this.#io = io;
  }

  /** The tool's parsed result (`{ result }` when not an object, or `{ error }`). */
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
    let value: unknown = text;
    try {
      value = JSON.parse(text);
    } catch {
      // Plain text: the result itself.
    }
    const result = isRecord(value) ? value : { result: value };
    if (typeof result.error === "string" && memory.external !== null) {
      // The tool's error rarely says why: the status probe does.
      const c = (await providerStatusNow(memory.external, this.#io, true))
        ?.connection;
      result.cause = c && !c.ok ? c.error : null;
      result.fix = c && !c.ok
        ? c.fix
        : `run 'hermes memory doctor' for the cause`;
    }
    return result;
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
