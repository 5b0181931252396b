/** The profile's settings files as `hermes memory status` and `doctor` check them: does each parse (line, column, fix), its mode, leftover temp files. @module */

import { basename, dirname, join } from "../_util/path.ts";
import { getConfigPath, loadConfig } from "../config/config.ts";
import { ConfigError } from "../config/config_file.ts";
import {
  decodeEnvBytes,
  isCredentialName,
  parseEnvText,
} from "../profile/env_file.ts";
import type { HermesConfig } from "../core/memory_provider.ts";
import type { ProviderFileStatus } from "../plugins/provider_cli.ts";
import { errorText } from "../_util/error_text.ts";
import { isTempFileOf } from "../io/atomic_write.ts";
import { type LogLevel, setLogger } from "../core/log.ts";
import { LAUNCHER_HINT, permissionDenial } from "./permission_problem.ts";

/** Where a settings file stops parsing (1-based; never the file's content), and what to do. */
export interface SettingsFileError {
  message: string;
  line: number | null;
  column: number | null;
  fix: string;
}

/** A settings file as status and doctor report it (path, role, format, exists and secret as a provider's status hook gives them for its own). */
export interface SettingsFileReport
  extends
    Pick<ProviderFileStatus, "path" | "role" | "format" | "exists" | "secret"> {
  /** The file name (`config.yaml`, `.env`, `honcho.json`). */
  file: string;
  /** Permission bits as octal text (`"0600"`); `null` when missing or unknown. */
  mode: string | null;
  /** `null` when it parses or is missing. */
  error: SettingsFileError | null;
}

function modeOf(path: string): Promise<string | null> {
  return Deno.stat(path).then(
    ({ mode }) =>
      mode === null ? null : (mode & 0o777).toString(8).padStart(4, "0"),
    () => null,
  );
}

// A file that cannot be read: this run's missing Deno flag (the launcher
// grants the home), the file's own mode, or not a file.
function readFailure(
  error: unknown,
  path: string,
  chmod: string,
): Pick<SettingsFileError, "message" | "fix"> {
  const denial = permissionDenial(error);
  if (denial !== undefined) {
    return {
      message: `cannot be read: this run lacks ${denial.flag}`,
      fix: LAUNCHER_HINT,
    };
  }
  return {
    message: `cannot be read (${errorText(error)})`,
    fix: error instanceof Deno.errors.PermissionDenied
      ? `make it readable: ${chmod} ${path}`
      : `make ${path} a readable text file`,
  };
}

/** Reads `config.yaml` and reports it; one that does not parse gives its line and column. */
export async function checkConfigYaml(
  hermesHome: string,
): Promise<{ report: SettingsFileReport; config: HermesConfig }> {
  const path = getConfigPath(hermesHome);
  const mode = await modeOf(path);
  const report: SettingsFileReport = {
    file: "config.yaml",
    path,
    role: "Hermes configuration",
    format: "yaml",
    exists: mode !== null,
    mode,
    secret: false,
    error: null,
  };
  try {
    return { report, config: await loadConfig({ hermesHome }) };
  } catch (error) {
    const where = error instanceof ConfigError ? error : undefined;
    report.exists = true;
    report.error = where === undefined
      ? { ...readFailure(error, path, "chmod u+r"), line: null, column: null }
      : {
        message: errorText(error)
          .replace(/^Cannot parse .*? at line \d+, column \d+: /, "")
          .replace(/; fix the YAML.*$/, ""),
        line: where.line ?? null,
        column: where.column ?? null,
        fix:
          "fix the YAML there (indentation, an unclosed bracket or quote), then run 'hermes memory status' again",
      };
    return { report, config: {} };
  }
}

/** Reads `$HERMES_HOME/.env` and reports it: the first statement that does not parse (Hermes skips it, so its variable is not set), and whether it holds a credential. */
export async function checkEnvFile(
  hermesHome: string,
): Promise<SettingsFileReport> {
  const path = join(hermesHome, ".env");
  const mode = await modeOf(path);
  const report: SettingsFileReport = {
    file: ".env",
    path,
    role: "secrets and environment",
    format: "env",
    exists: mode !== null,
    mode,
    secret: false,
    error: null,
  };
  const fail = (message: string, fix: string) => {
    report.error = { message, line: null, column: null, fix };
    return report;
  };
  let bytes: Uint8Array;
  try {
    bytes = await Deno.readFile(path);
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return report;
    report.exists = true;
    const { message, fix } = readFailure(error, path, "chmod 600");
    return fail(message, fix);
  }
  const decoded = decodeEnvBytes(bytes);
  if (decoded.unreadable !== undefined) {
    return fail(decoded.unreadable, `save ${path} as UTF-8`);
  }
  const bad: number[] = [];
  const values = parseEnvText(decoded.text, {
    onInvalidLine: (line) => bad.push(line),
  });
  report.secret = Object.entries(values).some(([name, value]) =>
    value !== "" && isCredentialName(name)
  );
  if (bad.length > 0) {
    report.error = {
      message:
        `the statement does not parse (an unclosed quote, text after a closing quote or a space in the name), so Hermes skips it${
          bad.length > 1 ? ` (also line ${bad.slice(1).join(", ")})` : ""
        }`,
      line: bad[0]!,
      column: 1,
      fix: "write it as NAME=value (quote a value with spaces)",
    };
  }
  return report;
}

/** A provider's file (from its status hook) as a settings-file report. */
export async function providerFileReport(
  file: ProviderFileStatus,
): Promise<SettingsFileReport> {
  return {
    file: basename(file.path),
    path: file.path,
    role: file.role,
    format: file.format,
    exists: file.exists,
    mode: file.exists ? await modeOf(file.path) : null,
    secret: file.secret,
    error: file.error
      ? {
        message: file.error.message,
        line: file.error.line ?? null,
        column: file.error.column ?? null,
        fix: file.error.fix,
      }
      : null,
  };
}

/** The spot of a broken file, as printed: `path:line:column`. */
export function fileLocation(
  report: Pick<SettingsFileReport, "path" | "error">,
): string {
  const line = report.error?.line;
  if (line === null || line === undefined) return report.path;
  return `${report.path}:${line}:${report.error?.column ?? 1}`;
}

/** Temporary files interrupted atomic writes left beside the settings files (`.<name>.tmp.<pid>.<random>`, or `.<name>.tmp-<random>` of older versions). */
export async function orphanedTempFiles(
  files: readonly string[],
): Promise<string[]> {
  const out: string[] = [];
  for (const [dir, paths] of Map.groupBy(files, (path) => dirname(path))) {
    const names = new Set(paths.map((path) => basename(path)));
    try {
      for await (const entry of Deno.readDir(dir)) {
        if (!entry.isFile) continue;
        for (const name of names) {
          if (isTempFileOf(entry.name, name)) out.push(join(dir, entry.name));
        }
      }
    } catch {
      // The directory cannot be listed: nothing to report here.
    }
  }
  return out.sort();
}

/** Runs `fn` holding log lines back, then passes on those not about a file the result already reports. */
export async function withoutDuplicateWarnings<T>(
  fn: () => Promise<T>,
  reported: (result: T) => readonly string[],
): Promise<T> {
  const held: [LogLevel, string][] = [];
  const previous = setLogger({
    log(level, message) {
      held.push([level, message]);
    },
  });
  let result: T;
  try {
    result = await fn();
  } finally {
    setLogger(previous);
  }
  const paths = reported(result);
  for (const [level, message] of held) {
    if (paths.some((path) => message.includes(path))) continue;
    previous.log(level, message);
  }
  return result;
}
