/** What `hermes memory setup` shows and records of a provider's grant request. @module */

import type { CliIo } from "./cli_io.ts";
import { getHermesHome } from "../profile/hermes_home.ts";
import { getConfigPath, loadConfig, saveConfig } from "../config/config.ts";
import { isRecord } from "../_util/is_record.ts";
import { terminalSafe } from "../core/terminal_text.ts";
import { sha256Hex } from "../_util/sha256.ts";
import { findMemoryProvider } from "../plugins/plugin_discovery.ts";
import {
  approveCommand,
  approvePending,
  describeEntries,
  markGrantReviewed,
  type RequestedEntry,
  reviewGrant,
} from "../plugins/provider_permissions.ts";

/** What a provider asks beyond what is approved, as any screen shows it (see {@linkcode describeRequest}). */
export interface ProviderRequest {
  name: string;
  manifestPath: string;
  /** Its own data directory (read and write without asking), if any. */
  dataDir?: string;
  /**
   * What waits for approval, then what the floor refuses whatever the
   * answer (`refused`: why); paths expanded in `path`, reasons in `why`.
   */
  entries: RequestedEntry[];
}

/**
 * Describes provider `name`'s request (paths expanded, variables, hosts,
 * reasons, the floor's verdicts), for `hermes memory setup` and the
 * dashboard alike; prints and writes nothing. `undefined` when the
 * provider is not found or bundled (approved as its manifest declares).
 */
export async function describeRequest(
  name: string,
): Promise<ProviderRequest | undefined> {
  const home = getHermesHome();
  const config = await loadConfig();
  const candidate = await findMemoryProvider(name, {
    hermesHome: home,
    config,
  });
  if (candidate === null) return undefined;
  const review = reviewGrant(candidate, { hermesHome: home, config });
  if (review.bundled) return undefined;
  return {
    name,
    manifestPath: review.manifestPath,
    ...(review.grant.dataDir ? { dataDir: review.grant.dataDir } : {}),
    entries: review.requested.filter((e) => !e.approved)
      .sort((a, b) => Number(!!a.refused) - Number(!!b.refused)),
  };
}

/** The approval screen's text of a request (every value escaped, paths expanded). */
export function requestText(request: ProviderRequest): string {
  const safe = (text: string) => terminalSafe(text, { singleLine: true });
  const words: Record<RequestedEntry["key"], string> = {
    read: "read",
    write: "write to",
    env: "read the environment variable",
    net: "connect to",
    npm: "import",
  };
  const lines = [
    `Memory provider '${
      safe(request.name)
    }' (${request.manifestPath}) asks for:`,
    ...request.entries.map((e) =>
      `  - ${words[e.key]} ${safe(e.path ?? e.value)}${
        e.refused
          ? ` — refused, no approval lifts it: ${safe(e.refused)}`
          : e.why
          ? `: ${safe(e.why)}`
          : " (the manifest gives no reason)"
      }`
    ),
    `Besides that it reads its own code and reads and writes ${
      request.dataDir ?? "nothing else"
    }.`,
  ];
  return `${lines.join("\n")}\n`;
}

/**
 * The request as a page shows it: the approval screen's `text`, the
 * `digest` the page sends back to approve exactly that, and the floor's
 * refusals; `undefined` when there is nothing to approve.
 */
export async function shownRequest(
  name: string,
): Promise<{ text: string; digest: string; refused: string[] } | undefined> {
  const request = await describeRequest(name);
  // Nothing to approve, nothing to show (what the floor refuses stays in
  // `hermes memory status`).
  if (request === undefined || request.entries.every((e) => e.refused)) {
    return undefined;
  }
  const text = approvalText(request);
  return {
    text,
    digest: await sha256Hex(text),
    refused: request.entries.flatMap((e) =>
      e.refused
        ? [
          `${
            e.path ?? e.value
          }: ${e.refused}; a memory provider is never granted it`,
        ]
        : []
    ),
  };
}

/** What an approval covers: the request without the floor's refusals. */
function approvalText(request: ProviderRequest): string {
  return requestText({
    ...request,
    entries: request.entries.filter((e) => !e.refused),
  });
}

/**
 * Shows and asks for what the manifest asks beyond the approved (`yes`
 * approves; a caller that showed the request itself, such as the dashboard,
 * passes the {@linkcode shownRequest} digest of what it showed, and only a
 * request with exactly that text is approved);
 * the returned function records it under `memory.permissions.<name>`
 * (which no provider can write) once setup succeeds.
 */
export async function approveRequest(
  name: string,
  yes: boolean | string,
  interactive: boolean,
  io: Pick<CliIo, "stdout"> & Partial<Pick<CliIo, "prompts">>,
): Promise<(() => Promise<void>) | undefined> {
  markGrantReviewed(name);
  const request = await describeRequest(name);
  if (request === undefined) return undefined;
  const safe = (text: string) => terminalSafe(text, { singleLine: true });
  const pending = request.entries.filter((e) => !e.refused);
  const text = requestText(request);
  if (request.entries.length > 0) io.stdout(text);
  if (pending.length === 0) return undefined;
  const configPath = getConfigPath(getHermesHome());
  if (yes !== true) {
    // A digest approves exactly the request whose text it was made from.
    const approved = typeof yes === "string"
      ? yes === await sha256Hex(approvalText(request))
      : interactive && io.prompts !== undefined &&
        await io.prompts.confirm({
          message: `Approve this for '${safe(name)}'?`,
          default: false,
        });
    if (!approved) {
      io.stdout(
        `Not approved: '${safe(name)}' runs without it. Approve later with '${
          approveCommand(name)
        }'${interactive ? "" : " --yes"}.\n`,
      );
      return undefined;
    }
  }
  approvePending(name, pending);
  return async () => {
    // Read inside the save: the file may have changed during setup.
    const now = await loadConfig();
    const all = isRecord(now.memory) && isRecord(now.memory.permissions)
      ? now.memory.permissions
      : {};
    const block: Record<string, unknown> = isRecord(all[name])
      ? { ...all[name] }
      : {};
    for (const entry of pending) {
      if (entry.key === "npm") {
        block.npm = true;
        continue;
      }
      const list = Array.isArray(block[entry.key])
        ? [...block[entry.key] as unknown[]]
        : [];
      if (!list.includes(entry.value)) list.push(entry.value);
      block[entry.key] = list;
    }
    await saveConfig({ memory: { permissions: { [name]: block } } });
    io.stdout(
      `Approved for '${safe(name)}': ${
        safe(describeEntries(pending))
      }. Saved under memory.permissions.${safe(name)} in ${configPath}.\n`,
    );
  };
}
