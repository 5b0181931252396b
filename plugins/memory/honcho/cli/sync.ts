/**
 * `hermes honcho sync`: a host block cloned from the default one for every
 * profile without one (plugins/memory/honcho/SPEC.md §12), and its AI peer.
 * @module
 */

import { join, resolve } from "../../../../src/provider/_bundled.ts";
import { type HermesCommand, writeJson } from "../../../../src/cli/mod.ts";
import {
  describeConfigError,
  HonchoCliError,
  type HonchoCliScope,
  listProfiles,
  loadProfileConfig,
  requireReadableConfig,
  resolveScope,
  runGuarded,
  writeHonchoFile,
} from "./_common.ts";
import {
  createPeersEagerly,
  defaultHostBlock,
  inheritedHostBlock,
  sharedWorkspace,
  SYNC_INHERITED_KEYS,
} from "./_clone.ts";
import { errorText, isRecord } from "../_util.ts";

/** `reason`: why it was skipped, or why peers were not created. */
interface SyncResult {
  profile: string;
  host: string;
  action: "cloned" | "configured" | "skipped";
  path: string;
  reason?: string;
}

/** `1` when the default profile has no Honcho settings or a write failed. */
async function runSync(
  scope: HonchoCliScope,
  options: { json: boolean; dryRun: boolean; peers: boolean },
): Promise<number> {
  const { io } = scope;
  const base = await loadProfileConfig(scope.defaultRoot, "default");
  requireReadableConfig(base, "sync from");
  if (!base.explicitlyConfigured && !base.apiKey && !base.baseUrl) {
    throw new HonchoCliError(
      `Nothing to sync: the default profile has no Honcho settings (${base.configPath}); run 'hermes honcho setup' first`,
    );
  }
  const source = defaultHostBlock(base.raw);
  const workspace = sharedWorkspace(base.raw);
  const enabled = typeof source.enabled === "boolean" ? source.enabled : true;
  const results: SyncResult[] = [];
  let failed = false;
  for (const profile of await listProfiles(scope.defaultRoot)) {
    if (profile.name === "default") continue;
    const config = await loadProfileConfig(profile.home, profile.name);
    const row = { profile: profile.name, host: config.hostKey };
    const { configPath: path } = config;
    const hosts = isRecord(config.raw.hosts) ? config.raw.hosts : {};
    if (config.configError) {
      const reason = describeConfigError(config);
      results.push({ ...row, action: "skipped", path, reason });
      continue;
    }
    if (
      Object.keys(config.hostBlock).length > 0 ||
      isRecord(hosts[config.hostKey])
    ) {
      results.push({ ...row, action: "configured", path });
      continue;
    }
    const ownFile = join(resolve(profile.home), "honcho.json");
    const writeHome = resolve(config.configPath) === ownFile
      ? profile.home
      : scope.defaultRoot;
    const writeBase = writeHome === profile.home ? config : base;
    const block = inheritedHostBlock(source, {
      keys: SYNC_INHERITED_KEYS,
      aiPeer: profile.name,
      workspace,
      enabled,
    });
    const result: SyncResult = {
      ...row,
      action: "cloned",
      path: join(resolve(writeHome), "honcho.json"),
    };
    results.push(result);
    if (options.dryRun) continue;
    try {
      await writeHonchoFile(writeBase, writeHome, {
        host: block,
        hostKey: config.hostKey,
      });
    } catch (error) {
      result.action = "skipped";
      result.reason = errorText(error);
      failed = true;
      continue;
    }
    if (options.peers) {
      const after = await loadProfileConfig(profile.home, profile.name);
      const created = await createPeersEagerly(after);
      if (created.error) result.reason = `peers not created: ${created.error}`;
    }
  }
  const cloned = results.filter((r) => r.action === "cloned");
  const configured = results.filter((r) => r.action === "configured");
  const skipped = results.filter((r) => r.action === "skipped");
  if (options.json) {
    writeJson(io, { dryRun: Boolean(options.dryRun), results });
    return failed ? 1 : 0;
  }
  for (const r of results) {
    const verb = r.action === "cloned"
      ? options.dryRun ? "would clone into" : "cloned into"
      : r.action === "configured"
      ? "already configured in"
      : "skipped";
    io.stdout(
      `  ${r.profile.padEnd(16)} ${r.host.padEnd(20)} ${verb} ${
        r.action === "skipped" ? `(${r.reason})` : r.path
      }${r.action === "cloned" && r.reason ? ` (${r.reason})` : ""}\n`,
    );
  }
  io.stdout(
    `${
      options.dryRun ? "Would clone" : "Cloned"
    } Honcho settings into ${cloned.length} profile${
      cloned.length === 1 ? "" : "s"
    }; ${configured.length} already configured${
      skipped.length > 0 ? `; ${skipped.length} skipped` : ""
    }\n`,
  );
  return failed ? 1 : 0;
}

export function registerSync(honcho: HermesCommand): HermesCommand {
  const command = honcho.command("sync")
    .summary("Give every profile without Honcho settings a cloned host block")
    .description(
      "For every profile under <root>/profiles/ whose honcho.json has no host\n" +
        "block, clone the default block: recall, write, session, dialectic and\n" +
        "peer-mapping settings and peerName; aiPeer = the profile name; the shared\n" +
        "workspace. The blocks go to the file each profile reads (its own\n" +
        "honcho.json, else the default profile's). New AI peers are created.",
    )
    .option("--dry-run", "Show what would change; write nothing", false)
    .option("--no-peers", "Do not create the new peers on the server")
    .option("--json", "Print JSON", false)
    .example("hermes honcho sync")
    .example("hermes honcho sync --dry-run");
  // Not scopedAction: sync works on every profile, whatever --target-profile says.
  return command.action((opts: Parameters<typeof runSync>[1]) => {
    const io = command.context.io;
    return runGuarded(io, () => runSync(resolveScope(io), opts));
  });
}
