/**
 * `hermes honcho peer [--user NAME] [--ai NAME] [--reasoning LEVEL]`: shows
 * the user peer, AI peer, reasoning level and caps, or sets `peerName`,
 * `aiPeer` and `dialecticReasoningLevel` in the host block.
 *
 * @module
 */

import type { HermesCommand } from "../../../../src/cli/mod.ts";
import { REASONING_LEVELS } from "../config.ts";
import { resolveAiPeerId } from "../peers.ts";
import { sanitizeId } from "../session_naming.ts";
import {
  checkHonchoId,
  type HonchoCliScope,
  hostLabel,
  loadScopeConfig,
  resolveScope,
  runGuarded,
  targetProfileOf,
} from "./_common.ts";
import {
  parseChoice,
  printSaved,
  sourceText,
  writeHostSettings,
} from "./_host_setting.ts";

/** Options of {@linkcode runPeer}. */
export interface PeerOptions {
  /** `peerName`: the user's peer. */
  user?: string;
  /** `aiPeer`: this profile's AI peer. */
  ai?: string;
  /** `dialecticReasoningLevel`: one of the reasoning levels. */
  reasoning?: string;
}

/**
 * Runs `hermes honcho peer`.
 *
 * @param scope The profile and files.
 * @param options The values to set; shows the current ones when empty.
 * @returns `0`, `1` when the file cannot be written, `2` for an invalid value.
 *
 * @example
 * ```ts ignore
 * import { memoryCliIo } from "@hermes/memory/cli";
 * import { resolveScope } from "./_common.ts";
 * import { runPeer } from "./peer.ts";
 * await runPeer(resolveScope(memoryCliIo()), { user: "alice" });
 * ```
 */
export async function runPeer(
  scope: HonchoCliScope,
  options: PeerOptions,
): Promise<number> {
  const { io } = scope;
  const config = await loadScopeConfig(scope);
  const label = hostLabel(config.hostKey);
  if (
    options.user === undefined && options.ai === undefined &&
    options.reasoning === undefined
  ) {
    const rows: [string, string][] = [
      [
        "User peer",
        config.peerName
          ? `${sanitizeId(config.peerName)} (peerName, ${
            sourceText(config.sources.peerName)
          })`
          : "(none: set one with 'hermes honcho peer --user NAME')",
      ],
      [
        "AI peer",
        `${resolveAiPeerId(config)} (aiPeer, ${
          sourceText(config.sources.aiPeer)
        })`,
      ],
      [
        "Reasoning level",
        `${config.dialecticReasoningLevel} (dialecticReasoningLevel, ${
          sourceText(config.sources.dialecticReasoningLevel)
        })`,
      ],
      [
        "Reasoning cap",
        `${config.reasoningLevelCap} (reasoningLevelCap, ${
          sourceText(config.sources.reasoningLevelCap)
        })`,
      ],
      [
        "Dialectic cap",
        `${config.dialecticMaxChars} characters (dialecticMaxChars, ${
          sourceText(config.sources.dialecticMaxChars)
        })`,
      ],
    ];
    for (const [name, value] of rows) {
      io.stdout(`${label}${`${name}:`.padEnd(17)}${value}\n`);
    }
    return 0;
  }
  const host: Record<string, unknown> = {};
  if (options.user !== undefined) {
    host.peerName = checkHonchoId("user peer name", options.user);
  }
  if (options.ai !== undefined) {
    host.aiPeer = checkHonchoId("AI peer name", options.ai);
  }
  if (options.reasoning !== undefined) {
    host.dialecticReasoningLevel = parseChoice(
      "reasoning level",
      "levels",
      options.reasoning,
      REASONING_LEVELS,
    );
  }
  const written = await writeHostSettings(scope, config, host);
  if (host.peerName !== undefined) {
    io.stdout(`${label}User peer set to ${host.peerName}\n`);
  }
  if (host.aiPeer !== undefined) {
    io.stdout(`${label}AI peer set to ${host.aiPeer}\n`);
  }
  if (host.dialecticReasoningLevel !== undefined) {
    io.stdout(
      `${label}Reasoning level set to ${host.dialecticReasoningLevel}\n`,
    );
  }
  printSaved(io, written);
  return 0;
}

/**
 * Attaches `peer` to the `honcho` command.
 *
 * @param honcho The `hermes honcho` command.
 * @returns The `peer` command.
 *
 * @example
 * ```ts
 * import { createCommand, memoryCliIo } from "@hermes/memory/cli";
 * import { registerPeer } from "./peer.ts";
 * import assert from "node:assert/strict";
 * const honcho = createCommand("honcho", { io: memoryCliIo(), exitCode: 0 });
 * assert.equal(registerPeer(honcho).name(), "peer");
 * ```
 */
export function registerPeer(honcho: HermesCommand): HermesCommand {
  const command = honcho.command("peer")
    .summary("Show or set the user peer, AI peer and reasoning level")
    .description(
      "Show the user peer, the AI peer, the dialectic reasoning level and its\n" +
        "caps, or set peerName, aiPeer and dialecticReasoningLevel in this\n" +
        "profile's host block. Peer names use letters, digits, '_' and '-'.",
    )
    .option("--user <name>", "peerName: the user's peer")
    .option("--ai <name>", "aiPeer: this profile's AI peer")
    .option(
      "--reasoning <level>",
      `dialecticReasoningLevel: ${REASONING_LEVELS.join(", ")}`,
    )
    .example("hermes honcho peer")
    .example("hermes honcho peer --user alice --reasoning medium");
  command.action((opts: PeerOptions) => {
    const io = command.context.io;
    return runGuarded(io, () =>
      runPeer(
        resolveScope(io, { targetProfile: targetProfileOf(honcho) }),
        opts,
      ));
  });
  return command;
}
