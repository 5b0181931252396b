/**
 * `hermes memory status [--json]`: the built-in store (flags, files, usage),
 * the active provider (config, availability, settings, dependencies,
 * sandbox grant) and the installed provider plugins.
 *
 * @module
 */

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
import {
  getConfigPath,
  getConfigValue,
  loadConfig,
} from "../../config/config.ts";
import { readStoreUsage } from "../../builtin/memory_store.ts";
import { formatThousands, usagePercent } from "../../builtin/memory_format.ts";
import type { HermesConfig, MemoryTarget } from "../../core/memory_provider.ts";
import { isBuiltinSentinel } from "../_plugins.ts";

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
  /** The value of `memory.provider` as written (`""` when unset). */
  providerSetting: string;
  /** The active external provider, or `null` for built-in only. */
  provider: ProviderReport | null;
  /** Every discovered provider plugin. */
  plugins: PluginReport[];
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
 * @returns The report.
 * @throws {ConfigError} When `config.yaml` does not parse.
 *
 * @example Gathering the report
 * ```ts ignore
 * import { collectStatus } from "./memory_status.ts";
 * import { memoryCliIo } from "@hermes/memory/cli";
 * const report = await collectStatus(memoryCliIo());
 * ```
 */
export async function collectStatus(io: CliIo): Promise<StatusReport> {
  const home = getHermesHome();
  const config = await loadConfig();
  const usage = await readStoreUsage(home, config);
  const files: BuiltinFileReport[] = (["memory", "user"] as const).map((
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
  const provider = active === null
    ? null
    : await collectProviderReport(active, config, io);
  // The list decides from manifests; the active provider was asked itself.
  for (const plugin of plugins) {
    if (plugin.active && provider?.available !== undefined) {
      plugin.available = provider.available;
    }
  }
  const memoryDir = files[0]?.path.replace(/[\\/][^\\/]*$/, "") ?? "";
  return {
    hermesHome: home,
    configPath: getConfigPath(home),
    builtin: {
      memoryEnabled: files[0]?.enabled ?? true,
      userProfileEnabled: files[1]?.enabled ?? true,
      memoryToolEnabled: memoryToolEnabled(config) &&
        files.some((f) => f.enabled),
      directory: memoryDir,
      files,
    },
    providerSetting: setting,
    provider,
    plugins,
  };
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

  const p = report.provider;
  if (p === null) {
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

function renderProvider(p: ProviderReport, style: Style): string {
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
    out += `  Status:    available ${mark(style, true)}\n`;
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
}

/**
 * Prints the status of the active profile.
 *
 * @param options Output format.
 * @param io Where to write.
 * @returns `0`.
 * @throws {ConfigError} When `config.yaml` does not parse.
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
  const report = await collectStatus(io);
  if (options.json) {
    writeJson(io, report);
  } else {
    io.stdout(renderStatus(report, styleFor(io, "stdout")));
  }
  return 0;
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
        "USER.md), the active provider (config, availability, missing settings,\n" +
        "dependencies, sandbox grant) and the installed provider plugins.",
    )
    .option("--json", "Print the report as JSON (no colour)", false)
    .example("hermes memory status")
    .example("hermes memory status --json");
  command.action((opts: MemoryStatusOptions) =>
    runMemoryStatus(opts, command.context.io)
  );
  return command;
}
