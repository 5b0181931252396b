// `hermes memory status [--json] [--probe|--no-probe]`: the built-in store,
// the settings files, the active provider and the installed plugins.

import { terminalSafeDeep } from "../../core/terminal_text.ts";
import type { CliIo } from "../cli_io.ts";
import type { HermesCommand } from "../hermes_command.ts";
import {
  columns,
  displayValue,
  ioAction,
  shortDescription,
  type Style,
  styleFor,
  writeJson,
} from "../format.ts";
import type { ProviderReport } from "../provider_report.ts";
import {
  activeProviderName,
  listPluginReports,
  locateProvider,
  type PluginReport,
} from "../_provider_list.ts";
import { getHermesHome } from "../../profile/hermes_home.ts";
import { listKeptWrites } from "../../sandbox/kept_writes.ts";
import { getConfigPath, getConfigValue } from "../../config/config.ts";
import { withProviderScanCache } from "../../plugins/plugin_discovery.ts";
import { readStoreUsage, type StoreUsage } from "../../builtin/memory_files.ts";
import {
  formatThousands,
  memoryFileName,
  usagePercent,
} from "../../builtin/memory_format.ts";
import type { HermesConfig, MemoryTarget } from "../../core/memory_provider.ts";
import type {
  ProviderConnectionStatus,
  ProviderStatusDescription,
} from "../_plugins.ts";
import {
  checkConfigYaml,
  checkEnvFile,
  fileLocation,
  providerFileReport,
  type SettingsFileReport,
  withoutDuplicateWarnings,
} from "../settings_files.ts";
import { lazyImport } from "../../_util/lazy_import.ts";

const STATUS_PROBE_TIMEOUT_MS = 1_500;

/** One built-in memory file: its usage, named and described. */
interface BuiltinFileReport extends Omit<StoreUsage, "entryCount"> {
  target: MemoryTarget;
  file: string;
  description: string;
  percent: number;
  entries: number;
}

/** Everything `hermes memory status` shows; `--json` prints it as is. */
interface StatusReport {
  hermesHome: string;
  configPath: string;
  builtin: {
    memoryEnabled: boolean;
    userProfileEnabled: boolean;
    /** Whether the `memory` tool is offered on the CLI platform. */
    memoryToolEnabled: boolean;
    directory: string;
    files: BuiltinFileReport[];
  };
  /** `config.yaml`, `.env` and the active provider's own files. */
  files: SettingsFileReport[];
  /** `memory.provider` as written (`""` when unset). */
  providerSetting: string;
  provider: StatusProviderReport | null;
  /** Accepted writes a provider has not made durable yet, kept on disk by the host. */
  waitingWrites: Awaited<ReturnType<typeof listKeptWrites>>;
  plugins: PluginReport[];
}

/** The active provider plus its status hook's report (`null`: no hook, no probe). */
interface StatusProviderReport extends ProviderReport {
  settings: ProviderStatusDescription["settings"] | null;
  connection: ProviderConnectionStatus | null;
  statusHookError?: string;
}

/**
 * Collects a report with the warnings about its broken settings files held
 * back (the report names them), then prints it as JSON or text.
 */
export async function printReport<T extends { files: SettingsFileReport[] }>(
  io: CliIo,
  json: boolean | undefined,
  collect: () => Promise<T>,
  render: (report: T) => string,
): Promise<T> {
  const report = await withoutDuplicateWarnings(
    collect,
    (r) => r.files.filter((f) => f.error).map((f) => f.path),
  );
  if (json) writeJson(io, report);
  else io.stdout(render(report));
  return report;
}

// Loaded with a provider only: a built-in-only status loads no sandbox code.
const runtime = () =>
  lazyImport<typeof import("../_plugins.ts")>(
    "../_plugins.ts",
    import.meta.url,
  );
const providerReport = () =>
  lazyImport<typeof import("../provider_report.ts")>(
    "../provider_report.ts",
    import.meta.url,
  );

/**
 * What status and doctor start from: the settings files, `config.yaml`,
 * the active provider and what its status hook reports (its own files
 * added to `files`).
 */
export async function readProfile(
  io: CliIo,
  hook: { probe: boolean; probeTimeoutMs: number; detail: "status" | "doctor" },
  yaml?: Awaited<ReturnType<typeof checkConfigYaml>>,
) {
  const home = getHermesHome();
  const { report: yamlFile, config } = yaml ?? await checkConfigYaml(home);
  const files: SettingsFileReport[] = [yamlFile, await checkEnvFile(home)];
  const name = activeProviderName(config);
  const installed = name !== null && await locateProvider(name) !== null;
  const status: {
    description: ProviderStatusDescription | null;
    error?: string;
  } = installed
    ? await (await runtime()).describeProviderStatus(name, {
      hermesHome: home,
      config,
      env: (variable) => io.env(variable),
      ...hook,
    })
    : { description: null };
  for (const file of status.description?.files ?? []) {
    files.push(await providerFileReport(file));
  }
  return { home, config, yamlFile, files, name, installed, status };
}

function memoryToolEnabled(config: HermesConfig): boolean {
  for (const key of ["agent.disabled_toolsets", "disabled_toolsets"]) {
    const list = getConfigValue(config, key);
    if (Array.isArray(list) && list.includes("memory")) return false;
  }
  return true;
}

/**
 * Gathers the status of the active profile (a broken settings file is part
 * of the report). `startProvider` starts its sandbox even when its status
 * hook tells availability from its settings (for its schema fields).
 */
export async function collectStatus(
  io: CliIo,
  options: { probe?: boolean; startProvider?: boolean } = {},
): Promise<StatusReport> {
  const yaml = await checkConfigYaml(getHermesHome());
  // Without a provider the list is the one scan: no cache to open. With one,
  // its modules load while the settings files are read.
  if (activeProviderName(yaml.config) === null) {
    return await gatherStatus(io, options, yaml);
  }
  runtime().catch(() => {});
  providerReport().catch(() => {});
  return await withProviderScanCache(() => gatherStatus(io, options, yaml));
}

async function gatherStatus(
  io: CliIo,
  options: { probe?: boolean; startProvider?: boolean },
  yaml: Awaited<ReturnType<typeof checkConfigYaml>>,
): Promise<StatusReport> {
  const { home, config, files, name: active, status: hook } = await readProfile(
    io,
    {
      probe: options.probe !== false,
      probeTimeoutMs: STATUS_PROBE_TIMEOUT_MS,
      detail: "status",
    },
    yaml,
  );
  const usage = await readStoreUsage(home, config);
  const builtinFiles = (["memory", "user"] as const).map((target) => {
    const { entryCount, ...u } = usage[target];
    return {
      target,
      file: memoryFileName(target),
      description: target === "user" ? "user profile" : "agent notes",
      ...u,
      percent: usagePercent(u.chars, u.limit),
      entries: entryCount,
    };
  });
  const raw = getConfigValue(config, "memory.provider");
  const plugins = await listPluginReports(active);
  let provider: StatusProviderReport | null = null;
  if (active !== null) {
    // The provider's sandbox (the slowest part of status) is not started
    // when its hook can tell availability from the settings, unless asked
    // (--json wants its schema fields); it is when unavailable (its
    // settings list says what to set).
    const known = options.startProvider !== true &&
      hook.description?.available === true;
    const { collectProviderReport } = await providerReport();
    const base = await collectProviderReport(active, config, io, {
      start: !known,
    });
    if (known && base.installed && base.loadError === undefined) {
      base.available = true;
      base.availableFrom = "settings";
    }
    provider = withStatusHook(base, hook.description, hook.error);
  }
  // The list decides from manifests; the active provider was asked itself.
  for (const plugin of plugins) {
    if (plugin.active && provider?.available !== undefined) {
      plugin.available = provider.available;
    }
  }
  const memoryDir = builtinFiles[0]?.path.replace(/[\\/][^\\/]*$/, "") ??
    "";
  return {
    hermesHome: home,
    configPath: getConfigPath(home),
    builtin: {
      memoryEnabled: builtinFiles[0]?.enabled ?? true,
      userProfileEnabled: builtinFiles[1]?.enabled ?? true,
      memoryToolEnabled: memoryToolEnabled(config) &&
        builtinFiles.some((f) => f.enabled),
      directory: memoryDir,
      files: builtinFiles,
    },
    files,
    providerSetting: typeof raw === "string" ? raw.trim() : "",
    provider,
    waitingWrites: await listKeptWrites(home),
    plugins,
  };
}

/**
 * Adds what a provider's status hook reported: its settings, its connection,
 * and the set state of its schema fields (set in its own file counts).
 */
function withStatusHook(
  base: ProviderReport,
  description: ProviderStatusDescription | null,
  error: string | undefined,
): StatusProviderReport {
  const report: StatusProviderReport = {
    ...base,
    settings: description?.settings ?? null,
    connection: description?.connection ?? null,
  };
  if (error !== undefined) report.statusHookError = error;
  const settings = description?.settings;
  if (settings) {
    for (const field of report.fields) {
      const setting = settings[field.key];
      if (setting?.set && !field.set) {
        field.set = true;
        field.source = setting.source;
      }
    }
  }
  return report;
}

function mark(style: Style, ok: boolean): string {
  return ok ? style.green("\u2713") : style.red("\u2717");
}

function fileLine(file: BuiltinFileReport, style: Style): string[] {
  const usage = `${formatThousands(file.chars)}/${
    formatThousands(file.limit)
  } chars (${file.percent}%)`;
  const state = !file.exists
    ? "not created yet"
    : !file.readable
    ? style.red("unreadable")
    : `${file.entries} ${file.entries === 1 ? "entry" : "entries"}`;
  return [
    file.file,
    file.enabled ? file.description : `${file.description} (disabled)`,
    state,
    usage,
    file.exists ? `${formatThousands(file.bytes)} bytes` : "",
  ];
}

function renderStatus(report: StatusReport, style: Style): string {
  const b = report.builtin;
  let out = `${style.bold("Memory status")}\n${"\u2500".repeat(40)}\n`;
  out += columns([
    ["Home:", report.hermesHome],
    ["Config:", report.configPath],
    ["Built-in:", "always active (MEMORY.md / USER.md)"],
  ], 2);
  out += columns([
    ["memory.memory_enabled:", String(b.memoryEnabled)],
    ["memory.user_profile_enabled:", String(b.userProfileEnabled)],
    [
      "memory tool (cli):",
      b.memoryToolEnabled ? "enabled" : style.yellow("disabled"),
    ],
  ], 4);
  out += columns(b.files.map((f) => fileLine(f, style)), 4);
  out += `    Files in: ${b.directory}/\n`;
  out += renderSettingsFiles(report.files, style);

  const p = report.provider;
  const yaml = report.files.find((f) => f.file === "config.yaml");
  if (p === null && yaml?.error) {
    out += `  Provider:  ${style.yellow("unknown")} \u2014 config.yaml ${
      yaml.error.line === null ? "cannot be read" : "does not parse"
    } (see Settings files)\n`;
  } else if (p === null) {
    out += `  Provider:  (none \u2014 built-in only)\n`;
    if (report.providerSetting !== "") {
      out += `             memory.provider is '${report.providerSetting}'\n`;
    }
  } else {
    out += `  Provider:  ${style.bold(p.name)}\n`;
    out += renderProvider(p, style);
  }
  for (const w of report.waitingWrites) {
    out += `  Waiting:   ${
      style.yellow(`${w.count} accepted write(s)`)
    } for '${w.provider}' not durable yet, kept in ${w.path} (${w.reason}); handed over when it next starts\n`;
  }

  out += "\n  Installed plugins:\n";
  if (report.plugins.length === 0) {
    out += "    (none found)\n";
  } else {
    out += columns(
      report.plugins.map((plugin) => [
        `\u2022 ${plugin.name}`,
        plugin.description ? `(${shortDescription(plugin.description)})` : "",
        `[${plugin.source}${
          plugin.available === null
            ? ""
            : plugin.available
            ? ", available"
            : ", unavailable"
        }]`,
        plugin.active ? "\u2190 active" : "",
      ]),
      4,
    );
  }
  return out;
}

function renderSettingsFiles(
  files: readonly SettingsFileReport[],
  style: Style,
): string {
  const [yes, no] = [mark(style, true), mark(style, false)];
  const shown = files.filter((f) => f.exists || f.error);
  if (shown.length === 0) return "";
  let out = "  Settings files:\n";
  for (const f of shown) {
    if (f.error) {
      out += `    ${no} ${fileLocation(f)}: ${
        style.red(f.error.message)
      }\n      fix: ${f.error.fix}\n`;
    } else {
      out += `    ${yes} ${f.path}\n`;
    }
  }
  return out;
}

function renderConnection(
  c: ProviderConnectionStatus,
  style: Style,
): string {
  const [yes, no] = [mark(style, true), mark(style, false)];
  if (c.ok) {
    return `  Connection: ok ${yes} (${c.url}, ${c.elapsedMs} ms)\n`;
  }
  const head = c.attempted
    ? `${style.red("failed")} ${no}`
    : `${style.yellow("not tested")}`;
  return `  Connection: ${head}${c.url ? ` (${c.url})` : ""} \u2014 ${
    c.error ?? "unknown"
  }\n    fix: ${c.fix ?? "run 'hermes memory doctor'"}\n`;
}

function renderProviderSettings(p: StatusProviderReport): string {
  if (p.settings === null) return "";
  const entries = Object.entries(p.settings);
  const set = entries.filter(([, s]) => s.set);
  let out =
    `  Settings (${set.length} of ${entries.length} set; --json lists all):\n`;
  if (set.length === 0) return `${out}    (all at their defaults)\n`;
  out += columns(
    set.map(([key, s]) => [key, displayValue(s.value), s.source]),
    4,
  );
  return out;
}

function renderProvider(p: StatusProviderReport, style: Style): string {
  const [yes, no] = [mark(style, true), mark(style, false)];
  let out = "";
  const configEntries = Object.entries(p.config);
  if (configEntries.length > 0) {
    out += `\n  ${p.name} config (${
      p.statusConfigError ? "raw " : ""
    }memory.${p.name}):\n`;
    for (const [key, value] of configEntries) {
      out += `    ${key}: ${displayValue(value)}\n`;
    }
    if (p.statusConfigError) {
      out += `    ${
        style.yellow("status_config_error")
      }: ${p.statusConfigError}\n`;
    }
  }
  out += "\n";
  if (p.python) {
    out += `  Plugin:    ${style.yellow("a Python provider")} ${no}\n`;
    return out + `  ${p.python.what}: ${p.python.fix}.\n`;
  }
  if (!p.installed) {
    out += `  Plugin:    ${style.red("NOT installed")} ${no}\n`;
    out +=
      `  Install the '${p.name}' memory plugin into ${p.userPluginDir}/${p.name}/, or run 'hermes memory setup' to pick an installed one.\n`;
    return out;
  }
  out += `  Plugin:    installed ${yes} (${p.source}: ${p.directory ?? "?"})\n`;
  if (p.loadError) {
    out += `  Status:    ${
      style.red("failed to load")
    } ${no} \u2014 ${p.loadError}\n`;
  } else if (p.available) {
    out += `  Status:    available ${yes}${
      p.availableFrom === "settings"
        ? " (by its settings; 'hermes memory doctor' also starts it)"
        : ""
    }\n`;
  } else {
    out += `  Status:    not available ${no}${
      p.unavailableReason ? ` \u2014 ${p.unavailableReason}` : ""
    }\n`;
    const withEnv = p.fields.filter((f) => f.envVar);
    if (withEnv.length > 0) {
      out += "  Settings:\n";
      out += columns(
        withEnv.map((f) => [
          f.set ? yes : no,
          f.envVar ?? "",
          f.set ? `set (${f.setIn})` : "unset",
          !f.set && f.url ? `\u2192 ${f.url}` : "",
        ]),
        4,
      );
      out +=
        "  Note: hermes reads $HERMES_HOME/.env itself; service managers (systemd, launchd,\n" +
        "  Docker) do not inherit it, so set these variables in the service definition.\n";
    }
  }
  out += renderProviderSettings(p);
  if (p.connection) out += renderConnection(p.connection, style);
  else if (p.settings !== null && p.available) {
    out +=
      "  Connection: not checked ('hermes memory status --probe' or 'hermes memory doctor' checks it)\n";
  }
  if (p.statusHookError) {
    out += `  ${style.yellow("status hook failed")}: ${p.statusHookError}\n`;
  }
  const deps = p.dependencies;
  if (deps) {
    out += `  Dependencies: ${
      deps.ready ? `ready ${yes}` : `${style.yellow("not ready")} ${no}`
    }${deps.summary ? ` \u2014 ${deps.summary}` : ""}\n`;
    for (const line of deps.details) out += `    ${line}\n`;
  }
  const sandbox = p.sandbox;
  if (sandbox) {
    out += `  Sandbox:   ${sandbox.mode}\n`;
    out += columns(
      [
        ...(["read", "write", "env", "net", "npm"] as const).map((key) => [
          `${key}:`,
          sandbox[key].map((v) =>
            key === "net" && sandbox.netFromSettings?.includes(v)
              ? `${v} (your settings name it)`
              : v
          ).join(", ") || "(none)",
        ]),
        ...(sandbox.notApproved.length > 0
          ? [[
            "not approved:",
            `${sandbox.notApproved.join(", ")} (${
              style.yellow(`run '${sandbox.approve}' to review`)
            })`,
          ] as [string, string]]
          : []),
      ],
      4,
    );
  }
  return out;
}

export function registerMemoryStatus(memory: HermesCommand): HermesCommand {
  const command = memory.command("status")
    .summary("Show built-in memory, the active provider and plugins")
    .description(
      "Show the built-in memory flags and files (size and usage of MEMORY.md and\n" +
        "USER.md), the settings files (with the line and column of one that does\n" +
        "not parse), the active provider (config, availability, its settings from\n" +
        "wherever it keeps them, its connection, dependencies, sandbox grant) and\n" +
        "the installed provider plugins.",
    )
    .option("--json", "Print the report as JSON (no colour)", false)
    .option(
      "--probe",
      `Also test the provider's connection (waits at most ${
        STATUS_PROBE_TIMEOUT_MS / 1000
      } s; --json does unless --no-probe)`,
    )
    .option("--no-probe", "Do not test the connection (for --json)")
    .example("hermes memory status")
    .example("hermes memory status --json")
    .example("hermes memory status --probe");
  return ioAction(command, runMemoryStatus);
}

/**
 * The text report does not probe by default, to start fast; `--json` does
 * unless `--no-probe`. Exits 1 when a settings file does not parse (each
 * broken file is repeated on standard error).
 */
export async function runMemoryStatus(
  io: CliIo,
  opts: { json?: boolean; probe?: boolean },
): Promise<number> {
  const report = await printReport(
    io,
    opts.json,
    () =>
      collectStatus(io, {
        probe: opts.probe ?? opts.json === true,
        startProvider: opts.json === true,
      }),
    // Provider text escaped before the CLI's own styles are added.
    (r) => renderStatus(terminalSafeDeep(r), styleFor(io, "stdout")),
  );
  const broken = report.files.filter((f) => f.error);
  for (const file of broken) {
    io.stderr(
      `error: ${
        fileLocation(file)
      }: ${file.error?.message}; ${file.error?.fix}\n`,
    );
  }
  return broken.length > 0 ? 1 : 0;
}
