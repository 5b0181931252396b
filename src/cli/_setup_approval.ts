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
  reportRefused,
  type RequestedEntry,
  reviewGrant,
} from "../plugins/provider_permissions.ts";

const safe = (text: string) => terminalSafe(text, { singleLine: true });

/** A provider's request beyond what the user approved, as setup shows it: `text` (paths, variables, hosts, reasons), its `digest`, and what the floor `refused` (never offered); `undefined` when there is nothing to approve. */
export async function describeRequest(name: string) {
  markGrantReviewed(name);
  const home = getHermesHome();
  const config = await loadConfig();
  const candidate = await findMemoryProvider(name, {
    hermesHome: home,
    config,
  });
  if (candidate === null) return undefined;
  const review = reviewGrant(candidate, { hermesHome: home, config });
  reportRefused(review);
  const pending = review.requested.filter((e) => !e.approved);
  if (review.bundled || pending.length === 0) return undefined;
  const lines = [
    `Memory provider '${safe(name)}' (${review.manifestPath}) asks for:`,
  ];
  const words: Record<RequestedEntry["key"], string> = {
    read: "read",
    write: "write to",
    env: "read the environment variable",
    net: "connect to",
    npm: "import",
  };
  for (const entry of pending) {
    lines.push(
      `  - ${words[entry.key]} ${safe(entry.value)}${
        entry.why ? `: ${safe(entry.why)}` : " (the manifest gives no reason)"
      }`,
    );
  }
  lines.push(
    `Besides that it reads its own code and reads and writes ${
      review.grant.dataDir ?? "nothing else"
    }.`,
  );
  const text = lines.join("\n");
  const digest = await sha256Hex(text);
  return { text, digest, pending, refused: review.refused };
}

/** Shows and asks for what the manifest asks beyond the approved ({@linkcode describeRequest}; `yes` approves, a digest approves only a request with exactly that digest); the returned function records it under `memory.permissions.<name>` (which no provider can write) once setup succeeds. */
export async function approveRequest(
  name: string,
  yes: boolean | string,
  interactive: boolean,
  io: CliIo,
): Promise<(() => Promise<void>) | undefined> {
  const request = await describeRequest(name);
  if (request === undefined) return undefined;
  io.stdout(`${request.text}\n`);
  const configPath = getConfigPath();
  if (yes !== true) {
    const approved = typeof yes === "string"
      ? yes === request.digest
      : interactive && await io.prompts.confirm({
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
  approvePending(name, request.pending);
  return async () => {
    // Read inside the save: the file may have changed during setup.
    const now = await loadConfig();
    const all = isRecord(now.memory) && isRecord(now.memory.permissions)
      ? now.memory.permissions
      : {};
    const block: Record<string, unknown> = isRecord(all[name])
      ? { ...all[name] }
      : {};
    for (const entry of request.pending) {
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
        safe(describeEntries(request.pending))
      }. Saved under memory.permissions.${safe(name)} in ${configPath}.\n`,
    );
  };
}
