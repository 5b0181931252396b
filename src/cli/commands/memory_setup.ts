/** `hermes memory setup [provider] [--set key=value]… [--yes] [--json]`: picks the memory provider, approves its grant and walks its setup fields. @module */

import { didYouMean } from "../suggest.ts";
import { errorText } from "../../_util/error_text.ts";
import { join } from "../../_util/path.ts";
import { type CliIo, PromptCancelled, redirectIo } from "../cli_io.ts";
import type { HermesCommand } from "../hermes_command.ts";
import { USAGE_EXIT_CODE } from "../hermes_command.ts";
import { styleFor, writeJson } from "../format.ts";
import { LAUNCHER_HINT } from "../permission_problem.ts";
import {
  convertFieldValue,
  fieldDefault,
  parseSetAssignment,
  type SetAssignment,
  setupHint,
  SetupValueError,
  walkSetupFields,
} from "../setup_wizard.ts";
import {
  closeProvider,
  DependencyInstallError,
  type HostSetup,
  isBuiltinSentinel,
  loadHostSaveConfig,
  loadHostSetup,
  loadProvider,
  missingProviderGrant,
  prepareDependencies,
  providerSchema,
  providerStatusNow,
} from "../_plugins.ts";
import {
  discoverProviders,
  locateProvider,
  readActiveProvider,
} from "../_provider_list.ts";
import { getHermesHome } from "../../profile/hermes_home.ts";
import {
  getConfigPath,
  getConfigValue,
  loadConfig,
  saveConfig,
} from "../../config/config.ts";
import { loadEnvFile, saveEnvValue } from "../../profile/env_file.ts";
import { maskSecret } from "../../core/mask.ts";
import type {
  ConfigField,
  HermesConfig,
  MemoryProvider,
} from "../../core/memory_provider.ts";
import { isRecord } from "../../_util/is_record.ts";
import { setLogger } from "../../core/log.ts";
import { terminalSafe } from "../../core/terminal_text.ts";
import { forgetPendingApproval } from "../../plugins/provider_permissions.ts";
import { approveRequest } from "../_setup_approval.ts";
import { fieldEnvVar } from "../provider_report.ts";
import {
  diffSnapshots,
  renderChanges,
  type SettingsChange,
  snapshotFiles,
  type TrackedFile,
} from "../setup_changes.ts";

interface MemorySetupOptions {
  /** The picker is shown when absent. */
  provider?: string;
  set?: string[];
  yes?: boolean;
  /** Approves the provider's request only when its digest is this (the dashboard's approval of what it showed); `yes` no longer approves. */
  approve?: string;
  /** With `yes`: the change summary as JSON on stdout, messages on stderr. */
  json?: boolean;
}

/** What `hermes memory setup --yes --json` prints. */
export interface SetupJsonReport {
  /** `"builtin"` for built-in only; `null` when no provider was reached. */
  provider: string | null;
  exitCode: number;
  /** Every key changed, file by file (plus `memory.provider` always). */
  changes: SettingsChange[];
}

interface Tracking {
  home: string;
  files: TrackedFile[];
  before: Map<string, Record<string, unknown> | undefined>;
  provider: string | null;
  /** Writes what the user approved, once setup has succeeded. */
  saveApproval?: () => Promise<void>;
  /** A data folder this run's provider load created. */
  newDataDir?: string;
}

async function trackProvider(
  tracking: Tracking,
  name: string,
  io: CliIo,
): Promise<void> {
  tracking.provider = name;
  const description = await providerStatusNow(name, io, false, {});
  const extra: TrackedFile[] = (description?.files ?? [])
    .filter((file) => !tracking.files.some((f) => f.path === file.path))
    .map(({ path, format }) => ({ path, format }));
  const snapshot = await snapshotFiles(extra);
  for (const [path, keys] of snapshot) tracking.before.set(path, keys);
  tracking.files.push(...extra);
}

const BUILTIN_CHOICE = "\u0000builtin";

/** Thrown inside the wizard when setup must stop with an exit code. */
class SetupStop extends Error {
  constructor(message: string, readonly exitCode: number) {
    super(message);
  }
}

function setupFailed(name: string, error: unknown): SetupStop {
  return new SetupStop(
    `Memory setup failed: ${
      errorText(error)
    }\nFix the problem above, then run 'hermes memory setup ${name}' again.`,
    1,
  );
}

/** Runs `hermes memory setup` in the active profile: `0` saved, `1` cancelled or failed, `2` usage. */
export async function runMemorySetup(
  options: MemorySetupOptions,
  io: CliIo,
): Promise<number> {
  if (options.json && !options.yes) {
    io.stderr(
      "error: --json needs --yes: the wizard asks questions on the terminal; add --yes (and --set key=value) to set up without questions\n",
    );
    io.stderr("hint: run 'hermes memory setup --help' for usage\n");
    return USAGE_EXIT_CODE;
  }
  const home = getHermesHome();
  const files: TrackedFile[] = [
    { path: getConfigPath(home), format: "yaml" },
    { path: join(home, ".env"), format: "env" },
  ];
  const tracking: Tracking = {
    home,
    files,
    before: await snapshotFiles(files),
    provider: null,
  };
  const out = options.json
    ? redirectIo(io, {
      stdout: (text) => io.stderr(text),
      stderr: (text) => io.stderr(text),
      stdoutLike: "stderr",
    })
    : io;
  let code: number;
  try {
    code = await guardedSetup(options, out, tracking);
    if (code === 0 && tracking.saveApproval) await tracking.saveApproval();
  } finally {
    if (tracking.provider !== null) forgetPendingApproval(tracking.provider);
  }
  if (code !== 0 && tracking.newDataDir !== undefined) {
    // Not recursive: a folder the provider wrote into stays.
    await Deno.remove(tracking.newDataDir).catch(() => {});
  }
  const changes = diffSnapshots(
    tracking.files,
    tracking.before,
    await snapshotFiles(tracking.files),
    home,
  );
  if (options.json) {
    const { provider } = tracking;
    writeJson(
      io,
      { provider, exitCode: code, changes } satisfies SetupJsonReport,
    );
  } else if (
    code === 0 || changes.some((change) => change.change !== "unchanged")
  ) {
    io.stdout(renderChanges(changes));
  }
  return code;
}

async function guardedSetup(
  options: MemorySetupOptions,
  io: CliIo,
  tracking: Tracking,
): Promise<number> {
  try {
    return await setup(options, io, tracking);
  } catch (error) {
    if (error instanceof PromptCancelled) {
      io.stdout("\nCancelled. No changes saved.\n");
      return 1;
    }
    if (error instanceof SetupValueError) {
      io.stderr(`error: ${error.message}\n`);
      io.stderr("hint: run 'hermes memory setup --help' for usage\n");
      return USAGE_EXIT_CODE;
    }
    if (error instanceof SetupStop) {
      io.stderr(`${terminalSafe(error.message)}\n`);
      return error.exitCode;
    }
    throw error;
  }
}

async function setup(
  options: MemorySetupOptions,
  io: CliIo,
  tracking: Tracking,
): Promise<number> {
  const assignments = (options.set ?? []).map(parseSetAssignment);
  const interactive = io.stdinIsTerminal && !options.yes;

  let name = options.provider?.trim();
  // Built-in memory asks nothing, so it needs no terminal.
  const builtin = !!name && isBuiltinSentinel(name);
  if (
    !builtin && !io.stdinIsTerminal && !options.yes && assignments.length === 0
  ) {
    throw new SetupStop(
      "error: standard input is not a terminal, so setup cannot ask questions; re-run with --yes " +
        "(keeps current values and defaults) and --set key=value for each setting, " +
        "e.g. hermes memory setup <provider> --yes --set key=value",
      USAGE_EXIT_CODE,
    );
  }
  if (name === undefined || name === "") {
    if (!interactive) {
      throw new SetupStop(
        "error: name the provider to set up without questions: hermes memory setup <provider> --yes " +
          "(see 'hermes memory list'), or 'hermes memory off' for built-in memory only",
        USAGE_EXIT_CODE,
      );
    }
    name = await pickProvider(io);
  }

  if (name === BUILTIN_CHOICE || isBuiltinSentinel(name)) {
    tracking.provider = "builtin";
    if (assignments.length > 0) {
      throw new SetupValueError(
        "Cannot use --set with built-in memory: it has no provider settings (see memory.* in config.yaml)",
      );
    }
    await saveConfig({ memory: { provider: "" } });
    io.stdout(
      `${
        interactive ? "\n" : ""
      }Memory provider: built-in only (MEMORY.md / USER.md). Saved memory.provider: "" to ${getConfigPath()}.\n`,
    );
    io.stdout("Start a new session for the change to take effect.\n");
    return 0;
  }

  const location = await locateProvider(name);
  if (location === null) {
    const names = (await discoverProviders()).map((p) => p.name);
    throw new SetupStop(
      `error: memory provider '${name}' was not found${
        didYouMean(name, names)
      }; installed: ${
        names.length > 0 ? names.join(", ") : "(none)"
      }. Put a provider plugin in ${
        join(getHermesHome(), "plugins", name)
      }/ or run 'hermes memory list'`,
      USAGE_EXIT_CODE,
    );
  }
  await trackProvider(tracking, name, io);
  tracking.saveApproval = await approveRequest(
    name,
    options.approve ?? options.yes === true,
    interactive,
    io,
  );
  const missing = await missingProviderGrant(name);
  if (missing.length > 0) {
    // A permission problem, not a broken plugin: a sandbox gets no more than this process holds.
    throw new SetupStop(
      `error: permission denied: memory provider '${name}' needs ${
        missing.join(" ")
      }, which this run lacks\nhint: ${LAUNCHER_HINT}`,
      1,
    );
  }
  let provider: MemoryProvider | null;
  // Loading creates the data folder; a cancelled or failed run removes it when still empty.
  const dataDir = join(tracking.home, name);
  if (!await Deno.lstat(dataDir).then(() => true, () => false)) {
    tracking.newDataDir = dataDir;
  }
  const cannotLoad = async (why: string) =>
    new SetupStop(
      `error: memory provider '${name}' (${location.dir}) ${why} nothing was changed${
        name === await readActiveProvider()
          ? ` (memory.provider stays '${name}')`
          : ""
      }. Fix the plugin and run 'hermes memory setup ${name}' again`,
      1,
    );
  try {
    provider = await loadProvider(name);
  } catch (error) {
    throw await cannotLoad(`cannot load right now: ${errorText(error)};`);
  }
  if (provider === null) {
    throw await cannotLoad("could not be loaded; see the warning above,");
  }

  try {
    const prepared = await prepareDependencies(name).catch((error) => {
      if (!(error instanceof DependencyInstallError)) throw error;
      throw setupFailed(name, error);
    });
    for (const message of prepared.messages) io.stdout(`${message}\n`);
    if (interactive && assignments.length === 0) {
      const owned = await runOwnedSetup(name, provider, io);
      if (owned !== undefined) return owned;
    }
    if (!interactive) {
      const applied = await runAppliedSetup(name, provider, assignments, io);
      if (applied !== undefined) return applied;
    }
    return await walkSchema(name, provider, assignments, interactive, io);
  } finally {
    await closeProvider(provider);
  }
}

/** The provider's `applySetup(home, values, io)` with the converted `--set` values; `undefined` when it has none. */
async function runAppliedSetup(
  name: string,
  provider: MemoryProvider,
  assignments: SetAssignment[],
  io: CliIo,
): Promise<number | undefined> {
  const apply = await loadHostHook(
    name,
    "applySetup",
    "saving its settings the generic way",
    io,
  );
  if (!apply) return undefined;
  const schema: ConfigField[] = await provider.getConfigSchema() ?? [];
  const values = convertAssignments(name, schema, assignments);
  const code = await apply(getHermesHome(), values, io);
  return typeof code === "number" ? code : 0;
}

/** The `postSetup(home, config, io)` of its `cli.ts`, else the provider's `postSetup`; `undefined` when it has neither. */
async function runOwnedSetup(
  name: string,
  provider: MemoryProvider,
  io: CliIo,
): Promise<number | undefined> {
  const hostSetup = await loadHostHook(
    name,
    "postSetup",
    "asking for its settings instead",
    io,
  ) ?? null;
  if (hostSetup === null && typeof provider.postSetup !== "function") {
    return undefined;
  }
  const config = await loadConfig();
  if (!isRecord(config.memory)) config.memory = {};
  try {
    if (hostSetup !== null) {
      const code = await hostSetup(getHermesHome(), config, io);
      return typeof code === "number" ? code : 0;
    }
    await provider.postSetup?.(getHermesHome(), config);
    return 0;
  } catch (error) {
    if (error instanceof PromptCancelled) throw error;
    throw setupFailed(name, error);
  }
}

/** Loads a host-side hook of the provider's cli.ts; a failure is a warning. */
async function loadHostHook(
  name: string,
  hook: "postSetup" | "applySetup",
  fallback: string,
  io: CliIo,
): Promise<HostSetup | null | undefined> {
  try {
    return await loadHostSetup(name, hook);
  } catch (error) {
    io.stderr(
      `warning: cannot load the setup of provider '${name}' from its cli.ts (${
        errorText(error)
      }); ${fallback}\n`,
    );
    return undefined;
  }
}

/** Why a provider cannot load right now, or its setup hint. */
async function probeProvider(
  name: string,
): Promise<{ hint: string } | { error: string }> {
  const loaded = await providerSchema(name, { inspection: true });
  return "error" in loaded ? loaded : { hint: setupHint(loaded.schema) };
}

async function pickProvider(io: CliIo): Promise<string> {
  const [discovered, active] = await Promise.all([
    discoverProviders(),
    readActiveProvider(),
  ]);
  // The loader's warnings become the reason shown in the list, not lines above it.
  const reasons = new Map<string, string>();
  const previous = setLogger({
    log(level, message) {
      const failed = /^Failed to load memory provider '([^']+)': (.*)$/s.exec(
        message,
      );
      if (level === "warn" && failed) {
        reasons.set(failed[1]!, failed[2]!.split("\n", 1)[0]!);
      } else previous.log(level, message);
    },
  });
  let probes;
  try {
    probes = await Promise.all(discovered.map((p) => probeProvider(p.name)));
  } finally {
    setLogger(previous);
  }
  const choices: { value: string; name: string; description?: string }[] =
    discovered.map((p, index) => {
      const probe = probes[index]!;
      const marker = p.name === active ? ", active" : "";
      return {
        value: p.name,
        name: "hint" in probe
          ? `${p.name}  (${probe.hint}${marker})`
          : `${p.name}  (cannot load right now${marker}: ${
            reasons.get(p.name) ?? probe.error
          })`,
        description: terminalSafe(p.description, { singleLine: true }) ||
          undefined,
      };
    });
  if (active !== null && !discovered.some((p) => p.name === active)) {
    choices.push({
      value: active,
      name: `${active}  (active, not installed)`,
      description: `memory.provider names '${active}', which is not installed`,
    });
  }
  choices.push({
    value: BUILTIN_CHOICE,
    name: "Built-in only \u2014 MEMORY.md / USER.md (default)",
    description: "No external provider; the built-in store is always on",
  });
  if (active !== null) {
    io.stdout(
      `Current memory provider: ${active} (preselected; Enter keeps it)\n`,
    );
  }
  return await io.prompts.select({
    message: "Select a memory provider",
    choices,
    default: active ?? BUILTIN_CHOICE,
  });
}

async function walkSchema(
  name: string,
  provider: MemoryProvider,
  assignments: SetAssignment[],
  interactive: boolean,
  io: CliIo,
): Promise<number> {
  const home = getHermesHome();
  const style = styleFor(io, "stdout");
  const schema: ConfigField[] = await provider.getConfigSchema() ?? [];
  const given = convertAssignments(name, schema, assignments);
  const config = await loadConfig();
  const existing = getConfigValue(config, `memory.${name}`);
  const providerConfig: Record<string, unknown> = isRecord(existing)
    ? { ...existing }
    : {};
  const envPath = join(home, ".env");
  const dotenv = await loadEnvFile(envPath);
  const currentEnv = (envVar: string | undefined): string =>
    envVar === undefined ? "" : io.env(envVar) || dotenv[envVar] || "";
  const unstorable = schema.find((field) =>
    field.secret === true && given[field.key] && !fieldEnvVar(field)
  );
  if (unstorable) {
    throw new SetupValueError(
      `Cannot store secret '${unstorable.key}' of provider '${name}': its schema names no env_var; set the provider's variable in ${envPath} by hand`,
    );
  }

  if (interactive && schema.length > 0) {
    io.stdout(`\n${style.bold(`Configuring ${name}`)}\n`);
  }
  const { answered, missing } = await walkSetupFields({
    fields: schema,
    values: providerConfig,
    given,
    interactive,
    current: (field, values) =>
      field.secret === true
        ? currentEnv(fieldEnvVar(field))
        : providerConfig[field.key] ?? fieldDefault(field, values),
  }, io);
  // A required setting may also come from its environment variable.
  const lacking = missing.filter((f) =>
    f.secret === true || currentEnv(fieldEnvVar(f)) === ""
  ).map((f) =>
    f.secret === true && fieldEnvVar(f) ? `${f.key} (${fieldEnvVar(f)})` : f.key
  );
  if (lacking.length > 0) {
    throw new SetupStop(
      `error: cannot finish setup of '${name}' without: ${
        lacking.join(", ")
      }; give each with --set key=value (nothing was saved)`,
      1,
    );
  }

  // Without questions only what --set names changes (no default is pinned).
  const changed: Record<string, unknown> = {};
  const envQueue = new Map<string, { value: string; secret: boolean }>();
  for (const field of schema) {
    if (!Object.hasOwn(answered, field.key)) continue;
    const value = answered[field.key];
    const envVar = fieldEnvVar(field);
    if (field.secret === true) {
      if (envVar !== undefined) {
        envQueue.set(envVar, { value: String(value), secret: true });
      } else {
        io.stderr(
          `warning: '${field.key}' was not saved: provider '${name}' names no env_var for it\n`,
        );
      }
      continue;
    }
    changed[field.key] = value;
    if (envVar !== undefined && !envQueue.has(envVar)) {
      envQueue.set(envVar, { value: String(value), secret: false });
    }
  }
  const toSave = interactive ? { ...providerConfig, ...changed } : changed;
  const memorySection: HermesConfig = { provider: name };
  if (Object.keys(toSave).length > 0) memorySection[name] = toSave;
  await saveConfig({ memory: memorySection });
  io.stdout(
    `${interactive ? "\n" : ""}Memory provider set to '${name}' in ${
      getConfigPath(home)
    }.\n`,
  );
  if (Object.keys(toSave).length > 0) {
    try {
      const hostSave = await loadHostSaveConfig(name);
      if (hostSave !== null) await hostSave(toSave, home);
      else await provider.saveConfig(toSave, home);
    } catch (error) {
      io.stderr(
        `warning: provider '${name}' could not save its own config: ${
          errorText(error)
        }\n`,
      );
    }
  }
  for (const [envName, entry] of envQueue) {
    try {
      await saveEnvValue(envName, entry.value, { hermesHome: home });
      io.stdout(
        `  Saved ${envName} to ${envPath} (${
          entry.secret ? maskSecret(entry.value) : entry.value
        })\n`,
      );
    } catch (error) {
      if (!(error instanceof RangeError)) throw error;
      io.stderr(`Skipping ${envName}: ${error.message}\n`);
    }
  }
  await testProviderConnection(name, io);
  io.stdout("Start a new session to use it.\n");
  return 0;
}

/** The `--set` values checked against the schema and converted (a secret kept as typed). */
function convertAssignments(
  name: string,
  schema: readonly ConfigField[],
  assignments: readonly SetAssignment[],
): Record<string, unknown> {
  const values: Record<string, unknown> = {};
  for (const a of assignments) {
    const field = schema.find((f) => f.key === a.key);
    if (field === undefined) {
      throw new SetupValueError(
        `Unknown setting '${a.key}' for memory provider '${name}'; its settings are: ${
          schema.length > 0 ? schema.map((f) => f.key).join(", ") : "(none)"
        }`,
      );
    }
    values[a.key] = field.secret === true
      ? a.value
      : a.value === ""
      ? undefined
      : convertFieldValue(field, a.value);
  }
  return values;
}

/** Ends a generic setup with the provider's status-hook probe, when it has one. */
async function testProviderConnection(
  name: string,
  io: CliIo,
): Promise<void> {
  const description = await providerStatusNow(name, io, true);
  const c = description?.connection;
  if (!c) return;
  if (c.ok) {
    io.stdout(`Connection OK: ${c.url} (${c.elapsedMs} ms)\n`);
  } else {
    io.stderr(
      `warning: connection test ${
        c.attempted ? "failed" : "not run"
      }: ${c.error}; the settings are saved. Fix: ${c.fix}\n`,
    );
  }
}

export function registerMemorySetup(memory: HermesCommand): HermesCommand {
  const command = memory.command("setup")
    .argument("[provider]", "Provider to set up (picker when omitted)")
    .summary("Pick the memory provider and enter its settings")
    .description(
      "Pick the memory provider and enter its settings. On a terminal: an arrow-key\n" +
        "picker (the active provider preselected, also when it cannot load right\n" +
        "now; built-in only is last), then the provider's settings; secrets are read\n" +
        "without echo and saved only to $HERMES_HOME/.env. Ctrl-C saves nothing.\n" +
        "Without a terminal, give --yes and/or --set. Ends with a connection test\n" +
        "when the provider has one, and the list of keys changed in which file.",
    )
    .option(
      "--set <key=value>",
      "Set one provider setting without asking (repeatable)",
      (value: string, previous: string[]) => [...previous, value],
      [] as string[],
    )
    .option(
      "-y, --yes",
      "Ask nothing: use --set values, then current values and defaults",
      false,
    )
    .option(
      "--json",
      "With --yes: print the changed keys as JSON (messages go to stderr)",
      false,
    )
    .example("hermes memory setup")
    .example("hermes memory setup honcho")
    .example("hermes memory setup honcho --yes --set workspace=team")
    .example("hermes memory setup builtin");
  command.action((provider: string | undefined, opts: MemorySetupOptions) =>
    runMemorySetup({ ...opts, provider }, command.context.io)
  );
  return command;
}
