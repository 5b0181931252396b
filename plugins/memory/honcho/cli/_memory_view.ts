/**
 * What Honcho currently knows, as `status` and `identity --show` print it:
 * the user peer's card facts and the AI peer's representation. Reads only;
 * never creates a peer.
 *
 * Internal to the Honcho CLI.
 *
 * @module
 */

import type { CliIo } from "../../../../src/cli/mod.ts";
import type { HonchoConfig } from "../config.ts";
import { isHonchoError } from "../errors.ts";
import { resolveReadPerspective } from "../observation.ts";
import { resolveAiPeerId } from "../peers.ts";
import { sanitizeId } from "../session_naming.ts";
import {
  CLI_CONNECT_TIMEOUT_MS,
  connectHoncho,
  describeHonchoFailure,
  describeProfileFailure,
  serverLabel,
} from "./_common.ts";

/** What {@linkcode fetchMemoryView} found. */
export interface MemoryView {
  /** The server asked. */
  url: string;
  /** Whether the server answered the reachability check. */
  ok: boolean;
  /** Why nothing could be read, when `ok` is false. */
  error?: string;
  /** The user peer id, when a peer name is configured. */
  userPeer: string | undefined;
  /** The card facts about the user (`null` when there is no card). */
  userCard: string[] | null;
  /** Whose card was read: `"<observer> about <target>"` or the peer itself. */
  userCardFrom: string | undefined;
  /** Why the card could not be read, when it failed after connecting. */
  userCardError?: string;
  /** The AI peer id. */
  aiPeer: string;
  /** The AI peer's representation (`""` when empty, `null` when unread). */
  aiRepresentation: string | null;
  /** Why the representation could not be read, when it failed after connecting. */
  aiRepresentationError?: string;
}

/** Options of {@linkcode fetchMemoryView}. */
export interface FetchMemoryViewOptions {
  /** Deadline of each request. @default {CLI_CONNECT_TIMEOUT_MS} */
  timeoutMs?: number;
}

/**
 * Connects and reads the user card (from the perspective the provider uses:
 * the AI peer about the user when the AI observes others, falling back to
 * the user's own card) and the AI peer's representation.
 *
 * @param config The resolved configuration.
 * @param options The deadline.
 * @returns What was found, or why not.
 *
 * @example
 * ```ts no-assert
 * import { fetchMemoryView } from "./_memory_view.ts";
 * import { loadHonchoConfig } from "../config.ts";
 * const view = await fetchMemoryView(await loadHonchoConfig());
 * ```
 */
export async function fetchMemoryView(
  config: HonchoConfig,
  options: FetchMemoryViewOptions = {},
): Promise<MemoryView> {
  const timeoutMs = options.timeoutMs ?? CLI_CONNECT_TIMEOUT_MS;
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
  let client;
  try {
    client = await connectHoncho(config, { timeoutMs });
    await client.listPeers({ size: 1 });
  } catch (error) {
    view.error = await describeProfileFailure(config, error, url, timeoutMs);
    return view;
  }
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
    else {view.aiRepresentationError = describeHonchoFailure(
        error,
        url,
        timeoutMs,
      );}
  }
  return view;
}

/** Options of {@linkcode printMemoryView}. */
export interface PrintMemoryViewOptions {
  /** The most card facts printed. @default {10} */
  maxFacts?: number;
  /** The most representation characters printed (`Infinity` for all). @default {200} */
  maxRepresentationChars?: number;
}

/**
 * Prints a {@linkcode MemoryView}: the card facts as a list and the
 * representation excerpt, or the reason nothing could be read.
 *
 * @param io The CLI seam.
 * @param view What was found.
 * @param options Limits.
 *
 * @example
 * ```ts
 * import { memoryCliIo } from "@hermes/memory/cli";
 * import { printMemoryView } from "./_memory_view.ts";
 * import assert from "node:assert/strict";
 * const io = memoryCliIo();
 * printMemoryView(io, { url: "http://h", ok: false, error: "cannot reach http://h", userPeer: "alice", userCard: null, userCardFrom: undefined, aiPeer: "hermes", aiRepresentation: null });
 * assert.match(io.out, /Not connected: cannot reach http:\/\/h/);
 * ```
 */
export function printMemoryView(
  io: CliIo,
  view: MemoryView,
  options: PrintMemoryViewOptions = {},
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
