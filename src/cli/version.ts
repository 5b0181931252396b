/**
 * `hermes --version` (also `hermes memory --version` and `hermes
 * <provider> --version`): the module's version, Deno's, and the active
 * memory provider with the version of its `plugin.yaml`. Loaded only when
 * `--version` is asked for.
 *
 * @module
 */

import { errorText } from "../_util/error_text.ts";
import { getConfigValue, loadConfig } from "../config/config.ts";
import { isBuiltinSentinel, providerVersion } from "./_plugins.ts";

/** What `hermes --version --json` prints. */
export interface VersionReport {
  /** The module: `{ "name": "@hermes/memory", "version": "0.1.0" }`. */
  module: { name: string; version: string };
  /** `Deno.version.deno`. */
  deno: string;
  /**
   * The active provider (`memory.provider`): its name, the `version` of
   * its `plugin.yaml` (`null` when it declares none or is not installed)
   * and where it was found; `null` for built-in memory only.
   */
  provider: {
    name: string;
    version: string | null;
    source: string | null;
  } | null;
  /** Why the provider could not be told (a broken `config.yaml`). */
  problem?: string;
}

/**
 * Gathers the version report for the current profile home. Never throws:
 * a broken `config.yaml` is reported in `problem`.
 *
 * @returns The report.
 *
 * @example Basic usage
 * ```ts no-assert
 * import { versionReport } from "./version.ts";
 * const report = await versionReport();
 * ```
 */
export async function versionReport(): Promise<VersionReport> {
  const report: VersionReport = {
    module: await moduleVersion(),
    deno: Deno.version.deno,
    provider: null,
  };
  let name = "";
  try {
    const raw = getConfigValue(await loadConfig(), "memory.provider");
    name = typeof raw === "string" ? raw.trim() : "";
  } catch (error) {
    report.problem = errorText(error);
    return report;
  }
  if (name === "" || isBuiltinSentinel(name)) return report;
  const found = await providerVersion(name).catch(() => null);
  report.provider = {
    name,
    version: found?.version ?? null,
    source: found?.source ?? null,
  };
  return report;
}

/**
 * The module's name and version: from the checkout's `deno.json` (read at
 * run time; src/ may not import files outside it), else from a JSR URL
 * (`https://jsr.io/@hermes/memory/0.1.0/`), else `unknown`.
 *
 * @returns The name and version.
 */
export async function moduleVersion(): Promise<
  { name: string; version: string }
> {
  const base = new URL("../../", import.meta.url);
  if (base.protocol === "file:") {
    try {
      const meta = JSON.parse(
        await Deno.readTextFile(new URL("deno.json", base)),
      ) as { name?: unknown; version?: unknown };
      if (typeof meta.name === "string" && typeof meta.version === "string") {
        return { name: meta.name, version: meta.version };
      }
    } catch {
      // Fall through.
    }
  }
  const jsr = /^https:\/\/jsr\.io\/(@[^/]+\/[^/]+)\/([^/]+)\/$/.exec(base.href);
  if (jsr !== null) {
    return { name: jsr[1] as string, version: jsr[2] as string };
  }
  return { name: "@hermes/memory", version: "unknown" };
}

/**
 * The text form of a version report, one fact a line:
 *
 * ```text
 * @hermes/memory 0.1.0
 * deno 2.9.6
 * memory provider: honcho 1.0.0 (bundled)
 * ```
 *
 * @param report The report.
 * @returns The text, ending with a line break.
 *
 * @example Basic usage
 * ```ts
 * import { formatVersion } from "./version.ts";
 * import assert from "node:assert/strict";
 * const text = formatVersion({ module: { name: "@hermes/memory", version: "0.1.0" }, deno: "2.9.6", provider: null });
 * assert.match(text, /memory provider: none \(built-in only\)/);
 * ```
 */
export function formatVersion(report: VersionReport): string {
  const lines = [
    `${report.module.name} ${report.module.version}`,
    `deno ${report.deno}`,
  ];
  const p = report.provider;
  if (report.problem !== undefined) {
    lines.push(`memory provider: unknown (${report.problem})`);
  } else if (p === null) {
    lines.push("memory provider: none (built-in only)");
  } else if (p.source === null) {
    lines.push(`memory provider: ${p.name} (not installed)`);
  } else {
    lines.push(
      `memory provider: ${p.name} ${
        p.version ?? "(no version in plugin.yaml)"
      } (${p.source})`,
    );
  }
  return `${lines.join("\n")}\n`;
}
