/**
 * `hermes memory status [--json] [--probe|--no-probe]`: the built-in store (flags,
 * files, usage), the settings files (with the line and column of one that
 * does not parse), the active provider (config, availability, its settings
 * from wherever it keeps them, its connection when a probe is cheap,
 * dependencies, sandbox grant) and the installed provider plugins.
 *
 * @module
 */

import { terminalSafeDeep } from "../../core/terminal_text.ts";
import type { CliIo } from "../cli_io.ts";
import type { HermesCommand } from "../hermes_command.ts";
import {
  columns,
  displayValue,
  shortDescription,
  type Style,
  styleFor,
  writeJson,
} from "../format.ts";
import {
  collectProviderReport,
  listPluginReports,
  type PluginReport,
  type ProviderReport,
} from "../provider_report.ts";
import { getHermesHome } from "../../profile/hermes_home.ts";
import { getConfigPath, getConfigValue } from "../../config/config.ts";
import { readStoreUsage } from "../../builtin/memory_files.ts";
import { formatThousands, usagePercent } from "../../builtin/memory_format.ts";
import type { HermesConfig, MemoryTarget } from "../../core/memory_provider.ts";
import {
  describeProviderStatus,
  isBuiltinSentinel,
  type ProviderConnectionStatus,
  type ProviderStatusDescription,
} from "../_plugins.ts";
import {
  checkConfigYaml,
  checkEnvFile,
  fileLocation,
  providerFileReport,
  type SettingsFileReport,
  withoutDuplicateWarnings,
} from "../settings_files.ts";

/** How long the status connection probe may take: 1.5 s. */
export const STATUS_PROBE_TIMEOUT_MS = 1_500;

/** One built-in memory file in a {@linkcode StatusReport}. */
interface BuiltinFileReport {
  /** `memory` or `user`. */
  target: MemoryTarget;
  /** `MEMORY.md` or `USER.md`. */
  file: string;
  /** `agent notes` or `user profile`. */
  description: string;
  /** The file's path. */
  path: string;
  /** Whether the file exists. */
  exists: boolean;
  /** Whether it could be read (`true` when missing). */
  readable: boolean;
  /** Whether the target is enabled in config. */
  enabled: boolean;
  /** Size on disk in bytes. */
  bytes: number;
  /** Size in characters, as the memory tool counts it. */
  chars: number;
  /** Budget in characters. */
  limit: number;
  /** `chars` as a whole percentage of `limit`. */
  percent: number;
  /** Number of entries. */
  entries: number;
}

/** Everything `hermes memory status` shows; `--json` prints it as is. */
interface StatusReport {
  /** The profile home. */
  hermesHome: string;
  /** The profile's `config.yaml`. */
  configPath: string;
  /** The built-in store. */
  builtin: {
    /** `memory.memory_enabled` (default `true`). */
    memoryEnabled: boolean;
    /** `memory.user_profile_enabled` (default `true`). */
    userProfileEnabled: boolean;
    /** Whether the `memory` tool is offered on the CLI platform. */
    memoryToolEnabled: boolean;
    /** `<home>/memories`. */
    directory: string;
    /** The two files. */
    files: BuiltinFileReport[];
  };
  /**
   * The settings files: `config.yaml`, `.env` and the active provider's
   * own (each with `error` when it does not parse).
   */
  files: SettingsFileReport[];
  /** The value of `memory.provider` as written (`""` when unset or unknown). */
  providerSetting: string;
  /**
   * The active external provider, or `null` for built-in only (or when
   * `config.yaml` does not parse, so it is unknown).
   */
  provider: StatusProviderReport | null;
  /** Every discovered provider plugin. */
  plugins: PluginReport[];
}

/**
 * The active provider in a {@linkcode StatusReport}: what the CLI found
 * out, plus what the provider reports through its status hook.
 */
export interface StatusProviderReport extends ProviderReport {
  /**
   * Its settings by key, from wherever it keeps them (`null` when its
   * `cli.ts` has no `describeStatus` hook).
   */
  settings: ProviderStatusDescription["settings"] | null;
  /** Its connection (`null`: no probe, or skipped with `--no-probe`). */
  connection: ProviderConnectionStatus | null;
  /** Why its status hook failed, when it did. */
  statusHookError?: string;
}

/** Options of {@linkcode collectStatus}. */
export interface CollectStatusOptions {
  /**
   * Let the provider probe its server (bounded by
   * {@linkcode STATUS_PROBE_TIMEOUT_MS}).
   *
   * @default {true}
   */
  probe?: boolean;
  /**
   * Start the active provider's sandbox even when its status hook can
   * tell availability from its settings (for its schema fields).
   *
   * @default {false}
   */
  startProvider?: boolean;
}

function memoryToolEnabled(config: HermesConfig): boolean {
  for (const key of ["agent.disabled_toolsets", "disabled_toolsets"]) {
    const list = getConfigValue(config, key);
    if (Array.isArray(list) && list.includes("memory")) return false;
  }
  return true;
}

/**
 * Gathers the status of the active profile.
 *
 * @param io Where environment variables are read (settings set/unset).
 * @param options Whether the provider may probe its server.
 * @returns The report (a broken settings file is part of it).
 *
 * @example Gathering the report
 * ```ts ignore
 * import { collectStatus } from "./memory_status.ts";
 * import { memoryCliIo } from "@hermes/memory/cli";
 * const report = await collectStatus(memoryCliIo());
 * ```
 */
export async function collectStatus(
  io: CliIo,
  options: CollectStatusOptions = {},
): Promise<StatusReport> {
  const home = getHermesHome();
  const { report: yamlFile, config } = await checkConfigYaml(home);
  const files: SettingsFileReport[] = [yamlFile, await checkEnvFile(home)];
  const usage = await readStoreUsage(home, config);
  const builtinFiles: BuiltinFileReport[] = (["memory", "user"] as const).map((
    target,
  ) => {
    const u = usage[target];
    return {
      target,
      file: target === "user" ? "USER.md" : "MEMORY.md",
      description: target === "user" ? "user profile" : "agent notes",
      path: u.path,
      exists: u.exists,
      readable: u.readable,
      enabled: u.enabled,
      bytes: u.bytes,
      chars: u.chars,
      limit: u.limit,
      percent: usagePercent(u.chars, u.limit),
      entries: u.entryCount,
    };
  });
  const raw = getConfigValue(config, "memory.provider");
  const setting = typeof raw === "string" ? raw.trim() : "";
  const active = setting !== "" && !isBuiltinSentinel(setting) ? setting : null;
  const plugins = await listPluginReports(active);
  let provider: StatusProviderReport | null = null;
  if (active !== null) {
    // The provider's host-side hook first: when it can tell availability
    // from the settings, the provider's sandbox is not started (the
    // slowest part of status); doctor always starts it.
    const hook = await describeProviderStatus(active, {
      hermesHome: home,
      config,
      env: (name) => io.env(name),
      probe: options.probe !== false,
      probeTimeoutMs: STATUS_PROBE_TIMEOUT_MS,
      detail: "status",
    });
    // Started anyway for --json (its schema fields are in the report) and
    // when it is unavailable (its settings list says what to set).
    const known = options.startProvider === true
      ? undefined
      : hook.description?.available === true
      ? true
      : undefined;
    const base = await collectProviderReport(active, config, io, {
      start: known === undefined,
    });
    if (known !== undefined && base.installed && base.loadError === undefined) {
      base.available = known;
      base.availableFrom = "settings";
      if (!known) {
        base.unavailableReason = hook.description?.unavailableReason ?? "";
      }
    }
    provider = withStatusHook(base, hook.description, hook.error);
    for (const file of hook.description?.files ?? []) {
      files.push(await providerFileReport(file));
    }
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
    providerSetting: setting,
    provider,
    plugins,
  };
}

/**
 * Merges what a provider's status hook reported into the CLI's report: its
 * settings, its connection, and the set state of its schema fields (a
 * value in the provider's own file counts as set).
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

/**
 * Renders a status report as text.
 *
 * @param report The report.
 * @param style Colours (plain when off).
 * @returns The text, ending with a line break.
 *
 * @example Printing the report
 * ```ts ignore
 * import { collectStatus, renderStatus } from "./memory_status.ts";
 * import { memoryCliIo } from "@hermes/memory/cli";
 * import { styleFor } from "../format.ts";
 * const io = memoryCliIo();
 * io.stdout(renderStatus(await collectStatus(io), styleFor(io, "stdout")));
 * ```
 */
export function renderStatus(report: StatusReport, style: Style): string {
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
    out += `  Provider:  ${
      style.yellow("unknown")
    } \u2014 config.yaml does not parse (see Settings files)\n`;
  } else if (p === null) {
    out += `  Provider:  (none \u2014 built-in only)\n`;
    if (report.providerSetting !== "") {
      out += `             memory.provider is '${report.providerSetting}'\n`;
    }
  } else {
    out += `  Provider:  ${style.bold(p.name)}\n`;
    out += renderProvider(p, style);
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
  const shown = files.filter((f) => f.exists || f.error);
  if (shown.length === 0) return "";
  let out = "  Settings files:\n";
  for (const f of shown) {
    if (f.error) {
      out += `    ${mark(style, false)} ${fileLocation(f)}: ${
        style.red(f.error.message)
      }\n      fix: ${f.error.fix}\n`;
    } else {
      out += `    ${mark(style, true)} ${f.path}\n`;
    }
  }
  return out;
}

function renderConnection(
  c: ProviderConnectionStatus,
  style: Style,
): string {
  if (c.ok) {
    return `  Connection: ok ${
      mark(style, true)
    } (${c.url}, ${c.elapsedMs} ms)\n`;
  }
  const head = c.attempted
    ? `${style.red("failed")} ${mark(style, false)}`
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
  if (!p.installed) {
    out += `  Plugin:    ${style.red("NOT installed")} ${mark(style, false)}\n`;
    out +=
      `  Install the '${p.name}' memory plugin into ${p.userPluginDir}/${p.name}/, or run 'hermes memory setup' to pick an installed one.\n`;
    return out;
  }
  out += `  Plugin:    installed ${mark(style, true)} (${p.source}: ${
    p.directory ?? "?"
  })\n`;
  if (p.loadError) {
    out += `  Status:    ${style.red("failed to load")} ${
      mark(style, false)
    } \u2014 ${p.loadError}\n`;
  } else if (p.available) {
    out += `  Status:    available ${mark(style, true)}${
      p.availableFrom === "settings"
        ? " (by its settings; 'hermes memory doctor' also starts it)"
        : ""
    }\n`;
  } else {
    out += `  Status:    not available ${mark(style, false)}${
      p.unavailableReason ? ` \u2014 ${p.unavailableReason}` : ""
    }\n`;
    const withEnv = p.fields.filter((f) => f.envVar);
    if (withEnv.length > 0) {
      out += "  Settings:\n";
      out += columns(
        withEnv.map((f) => [
          mark(style, f.set),
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
      deps.ready
        ? `ready ${mark(style, true)}`
        : `${style.yellow("not ready")} ${mark(style, false)}`
    }${deps.summary ? ` \u2014 ${deps.summary}` : ""}\n`;
    for (const line of deps.details) out += `    ${line}\n`;
  }
  if (p.sandbox) {
    out += `  Sandbox:   ${p.sandbox.mode}\n`;
    out += columns(
      [
        ["read:", p.sandbox.read.join(", ") || "(none)"],
        ["write:", p.sandbox.write.join(", ") || "(none)"],
        ["env:", p.sandbox.env.join(", ") || "(none)"],
        ["net:", p.sandbox.net.join(", ") || "(none)"],
        ["npm:", p.sandbox.npm.join(", ") || "(none)"],
        ...(p.sandbox.notApproved.length > 0
          ? [[
            "not approved:",
            `${p.sandbox.notApproved.join(", ")} (${
              style.yellow(`run '${p.sandbox.approve}' to review`)
            })`,
          ] as [string, string]]
          : []),
      ],
      4,
    );
  }
  return out;
}

/** Options of {@linkcode runMemoryStatus}. */
interface MemoryStatusOptions {
  /**
   * Print the report as JSON.
   *
   * @default {false}
   */
  json?: boolean;
  /**
   * Let the provider probe its server: `--probe` (the text report does not
   * probe by default, to start fast; `--json` does unless `--no-probe`).
   *
   * @default {false for text, true for --json}
   */
  probe?: boolean;
}

/**
 * Prints the status of the active profile.
 *
 * @param options Output format.
 * @param io Where to write.
 * @returns `0`, or `1` when a settings file does not parse (the report is
 * printed either way, and each broken file once more on standard error).
 *
 * @example Running the command in-process
 * ```ts ignore
 * import { memoryCliIo } from "@hermes/memory/cli";
 * import { runMemoryStatus } from "./memory_status.ts";
 * await runMemoryStatus({ json: true }, memoryCliIo());
 * ```
 */
export async function runMemoryStatus(
  options: MemoryStatusOptions,
  io: CliIo,
): Promise<number> {
  const report = await withoutDuplicateWarnings(
    () =>
      collectStatus(io, {
        probe: options.probe ?? options.json === true,
        startProvider: options.json === true,
      }),
    (r) => r.files.filter((f) => f.error).map((f) => f.path),
  );
  if (options.json) {
    writeJson(io, report);
  } else {
    // Provider text (settings, connection, errors) escaped before the
    // CLI's own styles are added.
    io.stdout(
      renderStatus(terminalSafeDeep(report), styleFor(io, "stdout")),
    );
  }
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

/**
 * Attaches `status` to the `memory` command.
 *
 * @param memory The `hermes memory` command.
 * @returns The `status` command.
 *
 * @example Attaching the subcommand
 * ```ts
 * import { createCommand, memoryCliIo } from "@hermes/memory/cli";
 * import { registerMemoryStatus } from "./memory_status.ts";
 * import assert from "node:assert/strict";
 * const memory = createCommand("memory", { io: memoryCliIo(), exitCode: 0 });
 * assert.equal(registerMemoryStatus(memory).name(), "status");
 * ```
 */
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
  command.action((opts: MemoryStatusOptions) =>
    runMemoryStatus(opts, command.context.io)
  );
  return command;
}
