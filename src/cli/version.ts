// `hermes --version` (also after `memory` or a provider's name): the module's
// version, Deno's, and the active provider with its `plugin.yaml` version.

import { errorText } from "../_util/error_text.ts";
import { loadConfig } from "../config/config.ts";
import { providerVersion } from "./_plugins.ts";
import { activeProviderName } from "./_provider_list.ts";

/**
 * What `hermes --version --json` prints: the provider's `version` is `null`
 * when `plugin.yaml` declares none or it is not installed; `problem` is a
 * broken `config.yaml`.
 */
interface VersionReport {
  module: { name: string; version: string };
  deno: string;
  provider:
    | { name: string; version: string | null; source: string | null }
    | null;
  problem?: string;
}

/** Never throws: a broken `config.yaml` is reported in `problem`. */
export async function versionReport(): Promise<VersionReport> {
  const report: VersionReport = {
    module: await moduleVersion(),
    deno: Deno.version.deno,
    provider: null,
  };
  let name: string | null;
  try {
    name = activeProviderName(await loadConfig());
  } catch (error) {
    report.problem = errorText(error);
    return report;
  }
  if (name === null) return report;
  const found = await providerVersion(name).catch(() => null);
  const version = found?.version ?? null;
  report.provider = { name, version, source: found?.source ?? null };
  return report;
}

/**
 * From the checkout's `deno.json` (read at run time: src/ may not import
 * files outside it), else from a JSR URL, else `unknown`.
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
      // The JSR URL or `unknown`, below.
    }
  }
  const jsr = /^https:\/\/jsr\.io\/(@[^/]+\/[^/]+)\/([^/]+)\/$/.exec(base.href);
  if (jsr !== null) {
    return { name: jsr[1] as string, version: jsr[2] as string };
  }
  return { name: "@hermes/memory", version: "unknown" };
}

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
