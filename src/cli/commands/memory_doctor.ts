// `hermes memory doctor [--json]`: one line per problem with its fix (settings
// files parse and modes, leftover temporary files, the sandbox grant against
// the configuration, the provider and its connection, its outbox, the
// checkpoint gate); exits 1 when anything is wrong.

import type { CliIo } from "../cli_io.ts";
import type { HermesCommand } from "../hermes_command.ts";
import { ioAction, styleFor } from "../format.ts";
import { memoryFilePaths } from "../../builtin/memory_files.ts";
import {
  CHECKPOINT_REMEDIATION,
  isCheckpointGateArmed,
} from "../../context/compression_gate.ts";
import { PRE_COMPRESS_CHECKPOINT_API_VERSION } from "../../core/memory_provider.ts";
import {
  closeProvider,
  loadProvider,
  type ProviderConnectionStatus,
  type ProviderProblem,
  sandboxGrant,
} from "../_plugins.ts";
import {
  fileLocation,
  orphanedTempFiles,
  type SettingsFileReport,
} from "../settings_files.ts";
import { printReport, readProfile } from "./memory_status.ts";
import { pythonProvider } from "../_provider_list.ts";
import { listKeptWrites } from "../../sandbox/kept_writes.ts";
import { errorText } from "../../_util/error_text.ts";

const DOCTOR_PROBE_TIMEOUT_MS = 3_000;

/** A problem: `check` is `file.parse`, `grant.net`, `provider.load`, …, or a provider's own (`outbox.stalled`). */
interface DoctorProblem extends ProviderProblem {
  /** The file (with `:line:column` when known) or config key concerned. */
  where: string;
}

/** Everything `hermes memory doctor --json` prints. */
interface DoctorReport {
  hermesHome: string;
  provider: string | null;
  ok: boolean;
  problems: DoctorProblem[];
  files: SettingsFileReport[];
  /** Leftovers of interrupted atomic writes. */
  orphanedTempFiles: string[];
  grant: {
    needs: string[];
    granted: string[];
    missing: string[];
    /** Granted because the user's own settings name the server (honcho.json `baseUrl`). */
    fromSettings: string[];
  } | null;
  connection: ProviderConnectionStatus | null;
  outbox: Record<string, unknown> | null;
  /** The pre-compress checkpoint gate (`providerApiVersion` `null`: not loaded). */
  checkpoint: {
    required: boolean;
    providerApiVersion: number | null;
    ok: boolean;
  };
}

type AddProblem = (
  check: string,
  where: string,
  message: string,
  fix: string,
) => void;

function within(path: string, dir: string): boolean {
  const base = dir.replace(/\/+$/, "");
  return path === base || path.startsWith(`${base}/`);
}

/** Whether `host[:port]` is covered by a grant entry. */
function granted(needed: string, grant: readonly string[]): boolean {
  const bare = needed.replace(/:\d+$/, "");
  return grant.includes(needed) || grant.includes(bare);
}

/** Runs every check on the active profile. */
export async function collectDoctor(io: CliIo): Promise<DoctorReport> {
  const { home, config, yamlFile, files, name, installed, status: hook } =
    await readProfile(io, {
      probe: true,
      probeTimeoutMs: DOCTOR_PROBE_TIMEOUT_MS,
      detail: "doctor",
    });
  const problems: DoctorProblem[] = [];
  const add: AddProblem = (check, where, message, fix) => {
    problems.push({ check, where, message, fix });
  };
  const report: DoctorReport = {
    hermesHome: home,
    provider: name,
    ok: true,
    problems,
    files,
    orphanedTempFiles: [],
    grant: null,
    connection: null,
    outbox: null,
    checkpoint: {
      required: isCheckpointGateArmed(config),
      providerApiVersion: null,
      ok: true,
    },
  };

  // Files: parse, then modes.
  for (const file of files) {
    if (file.error) {
      add(
        "file.parse",
        fileLocation(file),
        file.error.message.startsWith("cannot be read")
          ? file.error.message
          : `does not parse: ${file.error.message}`,
        file.error.fix,
      );
    }
    const mode = file.exists && file.secret ? file.mode : null;
    if (mode !== null && (Number.parseInt(mode, 8) & 0o077) !== 0) {
      add(
        "file.mode",
        file.path,
        `holds secrets but is mode ${mode}, so other users can read it`,
        `chmod 600 ${file.path}`,
      );
    }
  }
  const memory = memoryFilePaths(home);
  report.orphanedTempFiles = await orphanedTempFiles([
    ...files.map((f) => f.path),
    memory.memory,
    memory.user,
  ]);
  for (const path of report.orphanedTempFiles) {
    add(
      "file.orphaned_temp",
      path,
      "was left by an interrupted write",
      `remove it: rm '${path}'`,
    );
  }

  const needs = hook.description?.needs?.net ?? [];
  const writeNeeds = hook.description?.needs?.write ?? [];
  const python = name !== null && !installed ? pythonProvider(name) : undefined;
  if (name !== null && !installed) {
    add(
      "provider.missing",
      `${yamlFile.path} memory.provider`,
      python?.what ?? `memory provider '${name}' is not installed`,
      python?.fix ??
        "pick an installed one with 'hermes memory setup' (see 'hermes memory list')",
    );
  } else if (name !== null) {
    if (hook.error !== undefined) {
      add(
        "provider.load",
        `${name} cli.ts`,
        `its status hook failed: ${hook.error}`,
        `fix the provider's cli.ts, then run 'hermes memory doctor' again`,
      );
    }
    report.connection = hook.description?.connection ?? null;
    const outbox = hook.description?.extra?.outbox;
    report.outbox = outbox !== null && typeof outbox === "object"
      ? outbox as Record<string, unknown>
      : null;
    for (const problem of hook.description?.problems ?? []) {
      problems.push({ ...problem, where: name });
    }
  }

  // The grant against what the configuration needs.
  let netMissing: string[] = [];
  if (name !== null && installed) {
    const grant = await sandboxGrant(name, config);
    const have = grant?.net ?? [];
    netMissing = needs.filter((host) => !granted(host, have));
    report.grant = {
      needs,
      granted: have,
      missing: netMissing,
      fromSettings: grant?.netFromSettings ?? [],
    };
    for (const path of writeNeeds) {
      if ((grant?.write ?? []).some((dir) => within(path, dir))) continue;
      add(
        "grant.write",
        `${yamlFile.path} memory.permissions.${name}.write`,
        `lacks ${path}, which the ${name} settings write to (such as a log file), so every write there fails`,
        `add '- ${path}' under memory.permissions.${name}.write in config.yaml, or turn off the setting that writes it ('hermes memory status' lists the settings)`,
      );
    }
    for (const host of netMissing) {
      add(
        "grant.net",
        `${yamlFile.path} memory.permissions.${name}.net`,
        `lacks ${host}, the server ${name} is configured for, so the provider cannot reach it`,
        `add '- ${host}' under memory.permissions.${name}.net in config.yaml (or re-run 'hermes memory setup ${name}', which adds it)`,
      );
    }
  }

  // The connection: not a separate problem when the grant already is.
  const c = report.connection;
  if (c !== null && !c.ok) {
    const url = c.url && URL.canParse(c.url) ? new URL(c.url) : undefined;
    if (!netMissing.includes(url?.host ?? "")) {
      add(
        "provider.connection",
        c.url ?? String(name),
        c.url && c.error?.startsWith(`${c.url} `)
          ? c.error.slice(c.url.length + 1)
          : c.error ?? "the connection failed",
        c.fix ?? `run 'hermes memory setup ${name}'`,
      );
    }
  }

  for (const w of await listKeptWrites(home)) {
    add(
      "provider.waiting_writes",
      w.path,
      `${w.count} accepted memory write(s) for '${w.provider}' are not durable yet: ${w.reason}`,
      `fix what stops '${w.provider}' (the reason above); its next start in an agent session hands them over`,
    );
  }

  // Availability and the checkpoint gate need the provider itself.
  if (name !== null && installed) {
    await checkProvider(name, report, add);
  } else if (report.checkpoint.required) {
    report.checkpoint.ok = false;
    add(
      "checkpoint.gate",
      `${yamlFile.path} compression.checkpoint_required`,
      "is true but no memory provider is active, so every compression is refused",
      CHECKPOINT_REMEDIATION,
    );
  }
  report.ok = problems.length === 0;
  return report;
}

async function checkProvider(
  name: string,
  report: DoctorReport,
  add: AddProblem,
) {
  let provider = null;
  try {
    provider = await loadProvider(name, { inspection: true });
    if (provider === null) {
      add(
        "provider.load",
        name,
        "the plugin registered no provider",
        `fix the plugin, then run 'hermes memory doctor' again`,
      );
      return;
    }
    report.checkpoint.providerApiVersion =
      provider.preCompressCheckpointApiVersion;
    if (!(await provider.isAvailable())) {
      const reason = String(await provider.unavailableReason() ?? "").trim();
      const fileBroken = report.problems.some((p) => p.check === "file.parse");
      if (!fileBroken) {
        add(
          "provider.unavailable",
          name,
          `is not available${reason ? `: ${reason}` : ""}`,
          `run 'hermes memory setup ${name}'`,
        );
      }
    }
  } catch (error) {
    add(
      "provider.load",
      name,
      `cannot be loaded: ${errorText(error)}`,
      "run 'hermes memory status' for the details, fix the plugin or its grant",
    );
  } finally {
    await closeProvider(provider);
  }
  if (
    report.checkpoint.required &&
    (report.checkpoint.providerApiVersion ?? 0) <
      PRE_COMPRESS_CHECKPOINT_API_VERSION
  ) {
    report.checkpoint.ok = false;
    add(
      "checkpoint.gate",
      "compression.checkpoint_required",
      `is true but '${name}' does not implement checkpoint API v${PRE_COMPRESS_CHECKPOINT_API_VERSION}, so every compression is refused`,
      CHECKPOINT_REMEDIATION,
    );
  }
}

function renderDoctor(report: DoctorReport, io: CliIo): string {
  const style = styleFor(io, "stdout");
  let out = `Memory doctor: ${report.hermesHome} (provider: ${
    report.provider ?? "built-in only"
  })\n`;
  for (const p of report.problems) {
    out += `${
      style.red("\u2717")
    } ${p.where}: ${p.message} \u2014 fix: ${p.fix}\n`;
  }
  const checked =
    "files, modes, temporary files, grant, connection, outbox, checkpoint gate";
  out += report.ok
    ? `${style.green("\u2713")} No problems found (checked ${checked}).\n`
    : `${report.problems.length} problem${
      report.problems.length === 1 ? "" : "s"
    } found (checked ${checked}).\n`;
  return out;
}

export function registerMemoryDoctor(memory: HermesCommand): HermesCommand {
  const command = memory.command("doctor")
    .summary("Check the profile's memory setup; one line per problem")
    .description(
      "Check the profile's memory setup and print one line per problem with its fix:\n" +
        "settings files (parse, mode 0600 for secrets, leftover temporary files), the\n" +
        "sandbox grant against what the configuration needs, the provider (loads,\n" +
        "available, connection and credentials), its queued and refused data, and the\n" +
        "pre-compress checkpoint gate. Exits 1 when anything is wrong.",
    )
    .option("--json", "Print the report as JSON (no colour)", false)
    .example("hermes memory doctor")
    .example("hermes memory doctor --json");
  return ioAction(command, async (io, opts: { json: boolean }) => {
    const report = await printReport(io, opts.json, () => collectDoctor(io), (
      r,
    ) => renderDoctor(r, io));
    return report.ok ? 0 : 1;
  });
}
