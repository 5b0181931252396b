/** `hermes honcho enable` / `disable`: Honcho on or off for this profile's host block (plugins/memory/honcho/SPEC.md §12). @module */

import type { HermesCommand } from "../../../../src/cli/mod.ts";
import {
  getConfigPath,
  getConfigValue,
  loadConfig,
  saveConfig,
} from "../../../../mod.ts";
import {
  aiPeerForHost,
  type HonchoCliScope,
  hostLabel,
  loadScopeConfig,
  writeHostKey,
} from "./_common.ts";
import { scopedAction } from "./_action.ts";
import { writeHostSettings } from "./setting_commands.ts";
import {
  createPeersEagerly,
  defaultHostBlock,
  ENABLE_INHERITED_KEYS,
  inheritedHostBlock,
  sharedWorkspace,
} from "./_clone.ts";

/** `hermes honcho enable`: `enabled: true`; a block without `aiPeer` first inherits the default block, its own AI peer and the shared workspace. */
export async function runEnable(scope: HonchoCliScope): Promise<number> {
  const { io } = scope;
  const config = await loadScopeConfig(scope);
  const hostKey = writeHostKey(config);
  const label = hostLabel(config.hostKey);
  const source = hostKey === (config.defaultHost ?? "hermes")
    ? {}
    : defaultHostBlock(config.raw);
  // Decided on the file inside the lock, filling only missing keys: a concurrent change is never undone.
  let fresh = false;
  const host = (block: Readonly<Record<string, unknown>>) => {
    fresh = block.aiPeer === undefined || block.aiPeer === null;
    if (!fresh) return { enabled: true };
    const inherited = inheritedHostBlock(source, {
      keys: ENABLE_INHERITED_KEYS,
      aiPeer: aiPeerForHost(hostKey),
      workspace: sharedWorkspace(config.raw),
      enabled: true,
    });
    return {
      ...Object.fromEntries(
        Object.entries(inherited).filter(([key]) => !Object.hasOwn(block, key)),
      ),
      enabled: true,
    };
  };
  const written = await writeHostSettings(scope, config, host);
  io.stdout(
    `${label}Honcho enabled for host ${hostKey} in ${written.path}${
      fresh ? " (new block from the default settings)" : ""
    }\n`,
  );
  if (scope.targetProfile === undefined) await selectHoncho(scope);
  const after = await loadScopeConfig(scope);
  const created = await createPeersEagerly(after);
  if (created.error) {
    io.stderr(
      `warning: peers not created now (${created.error}); they are created at the first session\n`,
    );
  } else {
    io.stdout(
      `Peers ready in workspace ${after.workspaceId}: ${
        created.peers.join(", ")
      }\n`,
    );
  }
  io.stdout("Start a new session to use it.\n");
  return 0;
}

/** `hermes honcho disable`: `enabled: false` in the host block (nothing to do when absent or off). */
export async function runDisable(scope: HonchoCliScope): Promise<number> {
  const { io } = scope;
  const config = await loadScopeConfig(scope);
  const label = hostLabel(config.hostKey);
  const block = config.hostBlock;
  if (Object.keys(block).length === 0) {
    io.stdout(
      `${label}Honcho has no host block '${config.hostKey}' in ${config.configPath}; nothing to disable\n`,
    );
    return 0;
  }
  if (block.enabled === false) {
    io.stdout(
      `${label}Honcho is already disabled for host ${config.hostKey}\n`,
    );
    return 0;
  }
  const { hostKey, path } = await writeHostSettings(scope, config, {
    enabled: false,
  });
  io.stdout(
    `${label}Honcho disabled for host ${hostKey} in ${path}; settings are kept ('hermes honcho enable' turns it back on)\n`,
  );
  return 0;
}

/** `memory.provider: honcho` again when `enable` runs while it is not (e.g. after `hermes memory off`). */
async function selectHoncho(scope: HonchoCliScope): Promise<void> {
  const hermesHome = scope.hermesHome;
  const current = getConfigValue(
    await loadConfig({ hermesHome }),
    "memory.provider",
  );
  if (typeof current === "string" && current.trim() === "honcho") return;
  await saveConfig({ memory: { provider: "honcho" } }, { hermesHome });
  scope.io.stdout(
    `Set memory.provider to honcho in ${getConfigPath(hermesHome)} (it was ${
      JSON.stringify(typeof current === "string" ? current : "")
    })\n`,
  );
}

export function registerEnable(honcho: HermesCommand): HermesCommand[] {
  const enable = honcho.command("enable")
    .summary("Turn Honcho on for this profile")
    .description(
      "Set enabled: true in this profile's host block, and memory.provider: honcho\n" +
        "in config.yaml when Honcho is not the active provider (after 'hermes memory\n" +
        "off'). A profile without a block\n" +
        "gets one from the default block (recall, write, session and dialectic\n" +
        "settings, peerName), its own AI peer and the shared workspace; its peers\n" +
        "are created on the server right away.",
    )
    .example("hermes honcho enable")
    .example("hermes honcho --target-profile coder enable");
  scopedAction(honcho, enable, (scope) => runEnable(scope));
  const disable = honcho.command("disable")
    .summary("Turn Honcho off for this profile (settings are kept)")
    .description(
      "Set enabled: false in this profile's host block. Nothing else changes, on\n" +
        "disk or on the server; 'hermes honcho enable' turns it back on.",
    )
    .example("hermes honcho disable");
  scopedAction(honcho, disable, (scope) => runDisable(scope));
  return [enable, disable];
}
