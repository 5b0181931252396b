/** `hermes honcho ask` and `search` run the agent's own tool code with the profile's peers. @module */

import type { HonchoConfig } from "../config/config.ts";
import { resolveAiPeerId, SET_USER_PEER_COMMAND } from "../session/peers.ts";
import {
  type HonchoToolContext,
  resolveToolPeer,
  runHonchoTool,
} from "../tools.ts";
import { HonchoCliError } from "./_common.ts";
import { reachHoncho } from "./_memory_view.ts";
import { isRecord, sanitizeId } from "../_util.ts";

/** Checks the server answers (a dead server is one plain sentence), then runs `tool` as the agent would. */
export async function runToolFromCli(
  config: HonchoConfig,
  tool: string,
  args: Record<string, unknown>,
  timeoutMs: number,
): Promise<{ peer: string; result: string }> {
  const aiPeerId = resolveAiPeerId(config);
  const userPeerId = config.peerName ? sanitizeId(config.peerName) : "";
  const peerArg = typeof args.peer === "string" ? args.peer.trim() : "";
  const wantsUser = peerArg === "" || peerArg.toLowerCase() === "user";
  if (wantsUser && userPeerId === "") {
    throw new HonchoCliError(
      `no user peer is configured (peerName); set one with '${SET_USER_PEER_COMMAND}', or name a peer with --peer`,
    );
  }
  const reached = await reachHoncho(config, timeoutMs);
  if ("error" in reached) {
    throw new HonchoCliError(`cannot ask Honcho: ${reached.error}`);
  }
  const { client } = reached;
  const apiKey = config.apiKey;
  const ctx: HonchoToolContext = {
    client,
    sessionId: "",
    userPeerId: userPeerId || aiPeerId,
    aiPeerId,
    aiObservesOthers: config.observationFlags.ai.observeOthers,
    observationOf: (peerId) =>
      peerId === aiPeerId
        ? config.observationFlags.ai
        : peerId === userPeerId
        ? config.observationFlags.user
        : undefined,
    turn: Number.MAX_SAFE_INTEGER,
    // A level typed on the command line is always honoured.
    config: { ...config, dialecticDynamic: true },
    botTurn: false,
    scrub: (text) =>
      apiKey ? text.replaceAll(apiKey, `...${apiKey.slice(-4)}`) : text,
  };
  const peer = resolveToolPeer(args.peer, { userPeerId, aiPeerId });
  const answer = JSON.parse(await runHonchoTool(tool, args, ctx)) as unknown;
  if (isRecord(answer) && typeof answer.error === "string") {
    throw new HonchoCliError(answer.error);
  }
  const result = isRecord(answer) && typeof answer.result === "string"
    ? answer.result
    : "";
  return { peer, result };
}
