/** The user card and AI representation `status` and `identity --show` print; never creates a peer. @module */

import type { CliIo } from "../../../../src/cli/mod.ts";
import type { HonchoClient } from "../client/client.ts";
import type { HonchoConfig } from "../config/config.ts";
import { isHonchoError } from "../client/errors.ts";
import { resolveReadPerspective } from "../session/observation.ts";
import { resolveAiPeerId } from "../session/peers.ts";
import {
  CLI_CONNECT_TIMEOUT_MS,
  connectHoncho,
  describeHonchoFailure,
  describeProfileFailure,
  serverLabel,
} from "./_common.ts";
import { sanitizeId } from "../_util.ts";

interface MemoryView {
  url: string;
  /** Whether the server answered (else `error` says why). */
  ok: boolean;
  error?: string;
  userPeer: string | undefined;
  userCard: string[] | null;
  /** `"<observer> about <target>"` or the peer itself. */
  userCardFrom: string | undefined;
  userCardError?: string;
  aiPeer: string;
  /** `""` when empty, `null` when unread. */
  aiRepresentation: string | null;
  aiRepresentationError?: string;
}

/** A client whose server answered one cheap request, or why not (with the fix). */
export async function reachHoncho(
  config: HonchoConfig,
  timeoutMs: number,
): Promise<{ client: HonchoClient } | { error: string }> {
  try {
    const client = await connectHoncho(config, timeoutMs);
    await client.listPeers({ size: 1 });
    return { client };
  } catch (error) {
    const url = serverLabel(config);
    return {
      error: await describeProfileFailure(config, error, url, timeoutMs),
    };
  }
}

/** The user card from the provider's perspective (as `resolveReadPerspective`) and the AI representation. */
export async function fetchMemoryView(
  config: HonchoConfig,
): Promise<MemoryView> {
  const timeoutMs = CLI_CONNECT_TIMEOUT_MS;
  const url = serverLabel(config);
  const aiPeer = resolveAiPeerId(config);
  const userPeer = config.peerName ? sanitizeId(config.peerName) : undefined;
  const view: MemoryView = {
    url,
    ok: false,
    userPeer,
    userCard: null,
    userCardFrom: undefined,
    aiPeer,
    aiRepresentation: null,
  };
  const reached = await reachHoncho(config, timeoutMs);
  if ("error" in reached) {
    view.error = reached.error;
    return view;
  }
  const { client } = reached;
  view.ok = true;

  if (userPeer !== undefined) {
    const perspective = resolveReadPerspective({
      targetPeerId: userPeer,
      aiPeerId: aiPeer,
      aiObservesOthers: config.observationFlags.ai.observeOthers,
    });
    const attempts: { observer: string; target?: string }[] = [perspective];
    if (perspective.target !== undefined) attempts.push({ observer: userPeer });
    for (const attempt of attempts) {
      try {
        const card = await client.getPeerCard(attempt.observer, {
          target: attempt.target,
        });
        view.userCardError = undefined;
        if (card && card.length > 0) {
          view.userCard = card;
          view.userCardFrom = attempt.target
            ? `${attempt.observer} about ${attempt.target}`
            : attempt.observer;
          break;
        }
      } catch (error) {
        if (!isHonchoError(error, "not_found")) {
          view.userCardError = describeHonchoFailure(error, url, timeoutMs);
        }
      }
    }
  }
  try {
    view.aiRepresentation = await client.getPeerRepresentation(aiPeer);
  } catch (error) {
    if (isHonchoError(error, "not_found")) view.aiRepresentation = "";
    else view.aiRepresentationError = describeHonchoFailure(error, url);
  }
  return view;
}

/** Prints the card facts and the representation excerpt, or why nothing could be read. */
export function printMemoryView(
  io: CliIo,
  view: MemoryView,
  options: { maxFacts?: number; maxRepresentationChars?: number } = {},
): void {
  const maxFacts = options.maxFacts ?? 10;
  const maxChars = options.maxRepresentationChars ?? 200;
  if (!view.ok) {
    io.stdout(`  Not connected: ${view.error ?? "unknown error"}\n`);
    return;
  }
  io.stdout(`  Connected to ${view.url}\n`);
  if (view.userPeer === undefined) {
    io.stdout(
      "  User card: no user peer configured (set one with 'hermes honcho peer --user NAME')\n",
    );
  } else if (view.userCardError !== undefined) {
    io.stdout(
      `  User card (${view.userPeer}): not read: ${view.userCardError}\n`,
    );
  } else if (view.userCard === null || view.userCard.length === 0) {
    io.stdout(`  User card (${view.userPeer}): no facts yet\n`);
  } else {
    const shown = view.userCard.slice(0, maxFacts);
    io.stdout(
      `  User card (${view.userCardFrom}, ${view.userCard.length} fact${
        view.userCard.length === 1 ? "" : "s"
      }):\n`,
    );
    for (const fact of shown) io.stdout(`    - ${oneLine(fact)}\n`);
    if (view.userCard.length > shown.length) {
      io.stdout(`    … ${view.userCard.length - shown.length} more\n`);
    }
  }
  if (view.aiRepresentationError !== undefined) {
    io.stdout(
      `  AI representation (${view.aiPeer}): not read: ${view.aiRepresentationError}\n`,
    );
  } else if (!view.aiRepresentation) {
    io.stdout(`  AI representation (${view.aiPeer}): empty so far\n`);
  } else {
    const text = view.aiRepresentation.trim();
    const excerpt = text.length > maxChars
      ? `${text.slice(0, maxChars).trimEnd()} …`
      : text;
    io.stdout(`  AI representation (${view.aiPeer}):\n`);
    for (const line of excerpt.split("\n")) io.stdout(`    ${line}\n`);
  }
}

function oneLine(text: string): string {
  return text.replace(/\s*\n\s*/g, " ").trim();
}
