/**
 * The five Honcho tools (plugins/memory/honcho/SPEC.md §10): schemas (no
 * `anyOf`/`oneOf`/`allOf`, which some model APIs reject), guards and results;
 * every result is a JSON string, failures `{"error": "<message>"}`.
 * @module
 */

import { toolError, type ToolSchema } from "../../../src/provider/mod.ts";
import type { HonchoClient } from "./client/client.ts";
import type { Message } from "./client/wire.ts";
import type { HonchoConfig } from "./config/config.ts";
import {
  REASONING_LEVELS,
  type ReasoningLevel,
  type RecallMode,
} from "./config/_lookup.ts";
import { capDialecticInput, cleanHonchoSummary } from "./recall/context.ts";
import { isHonchoError } from "./client/errors.ts";
import {
  type PeerObservation,
  resolveReadPerspective,
} from "./session/observation.ts";
import { noticeText } from "./notices.ts";
import type { HonchoSession } from "./session/session.ts";
import { errorText, sanitizeId } from "./_util.ts";

const PEER_PROPERTY = {
  type: "string",
  description:
    "Which peer: 'user' (default) for the person you are talking to, 'ai' " +
    "for yourself, or any peer id in the workspace.",
} as const;

const SCHEMAS: readonly ToolSchema[] = [
  {
    name: "honcho_profile",
    description:
      "Read or overwrite a peer's card: a short curated list of standing " +
      "facts (name, role, preferences). The cheapest memory call, no LLM. " +
      "Omit 'card' to read it; pass 'card' to replace it. An empty card " +
      "comes back with a hint, not an error.",
    parameters: {
      type: "object",
      properties: {
        peer: PEER_PROPERTY,
        card: {
          type: "array",
          items: { type: "string" },
          description:
            "The complete new card, one fact per entry. Replaces the card.",
        },
      },
      required: [],
    },
  },
  {
    name: "honcho_search",
    description:
      "Hybrid semantic and keyword search over the peer's raw message " +
      "history across all sessions. Returns ranked raw excerpts, no LLM " +
      "synthesis; cheaper than honcho_reasoning.",
    parameters: {
      type: "object",
      properties: {
        query: { type: "string", description: "What to look for." },
        max_tokens: {
          type: "integer",
          description: "Token budget for the excerpts (default 800, max 2000).",
        },
        peer: PEER_PROPERTY,
      },
      required: ["query"],
    },
  },
  {
    name: "honcho_context",
    description:
      "A standing snapshot for the current session: summary, the peer's " +
      "representation and card, and recent messages. No LLM.",
    parameters: {
      type: "object",
      properties: { peer: PEER_PROPERTY },
      required: [],
    },
  },
  {
    name: "honcho_reasoning",
    description:
      "Ask Honcho's dialectic agent a natural-language question about a " +
      "peer. The only LLM-backed memory tool: slower and more expensive. " +
      "Omit reasoning_level for the configured default (usually low). Use " +
      "minimal only for single-fact lookups (its answer is capped at about " +
      "250 tokens); low or higher for synthesis.",
    parameters: {
      type: "object",
      properties: {
        query: { type: "string", description: "The question." },
        reasoning_level: {
          type: "string",
          enum: [...REASONING_LEVELS],
          description:
            "How much reasoning to spend: minimal, low, medium, high or max.",
        },
        peer: PEER_PROPERTY,
      },
      required: ["query"],
    },
  },
  {
    name: "honcho_conclude",
    description:
      "Write, delete or list conclusions (durable facts) about a peer. " +
      "Provide exactly one of: 'conclusion' to save a fact, 'delete_id' to " +
      "delete one (only for personal data the user wants gone; fix a wrong " +
      "fact by saving a corrected conclusion), or 'list' to list them " +
      "(optionally narrowed by 'query'). Ids come from 'list'.",
    parameters: {
      type: "object",
      properties: {
        conclusion: { type: "string", description: "The fact to save." },
        delete_id: {
          type: "string",
          description: "The id of a conclusion to delete.",
        },
        list: {
          type: "boolean",
          description: "List conclusions instead of writing.",
        },
        query: {
          type: "string",
          description: "With list: search conclusions semantically.",
        },
        peer: {
          type: "string",
          description:
            "The peer the conclusion is about: 'user' (default), 'ai', or a peer id.",
        },
      },
      required: [],
    },
  },
];

/** The tool names, in schema order. */
export const HONCHO_TOOL_NAMES: readonly string[] = Object.freeze(
  SCHEMAS.map((schema) => schema.name),
);

/** The schemas of the five tools (bare function schemas). */
export function honchoToolSchemas(): ToolSchema[] {
  return structuredClone([...SCHEMAS]);
}

/**
 * The static system-prompt block for a recall mode (plugins/memory/honcho/SPEC.md §6).
 */
export function systemPromptFor(mode: RecallMode): string {
  const guide = [
    "Memory tools:",
    "- honcho_profile: quick factual snapshot of a peer (its card); pass card to overwrite.",
    "- honcho_search: raw excerpts from past conversations, no synthesis.",
    "- honcho_context: raw session context (summary, representation, card, recent messages).",
    "- honcho_reasoning: synthesized answers; choose reasoning_level minimal…max.",
    "- honcho_conclude: save facts about the user (or list/delete them).",
  ].join("\n");
  if (mode === "context") {
    return "# Honcho Memory\nActive (context-injection mode).\n" +
      "Relevant memory about the user is injected automatically before each " +
      "turn. No memory tools are available.";
  }
  if (mode === "tools") {
    return "# Honcho Memory\nActive (tools-only mode).\n" +
      "Nothing is injected automatically: use the memory tools when the " +
      `conversation needs what you know about the user.\n${guide}`;
  }
  return "# Honcho Memory\nActive (hybrid mode).\n" +
    "Relevant memory is injected automatically before each turn, and the " +
    `memory tools are available for more.\n${guide}`;
}

/** What a tool call needs from the provider's ready session. */
export interface HonchoToolContext {
  client: HonchoClient;
  sessionId: string;
  userPeerId: string;
  aiPeerId: string;
  /** Whether the AI peer observes others (after the server sync). */
  aiObservesOthers: boolean;
  observationOf(peerId: string): PeerObservation | undefined;
  config: Pick<
    HonchoConfig,
    | "dialecticCadence"
    | "contextTokens"
    | "dialecticReasoningLevel"
    | "dialecticDynamic"
    | "dialecticMaxInputChars"
  >;
  /** The current turn (1-based). */
  turn: number;
  /** Whether the current turn is bot-authored (writes refused). */
  botTurn: boolean;
  signal?: AbortSignal;
  /** Called after a successful honcho_reasoning (auto-injection keeps its gap). */
  onReasoning?(): void;
  /** Removes the API key from text shown to the model. */
  scrub(text: string): string;
}

/** What {@linkcode callHonchoTool} needs: the context minus what the session gives. */
export type HonchoToolCall =
  & Omit<
    HonchoToolContext,
    | "sessionId"
    | "userPeerId"
    | "aiPeerId"
    | "aiObservesOthers"
    | "observationOf"
  >
  & {
    /** Set up first when it is not ready. */
    session: HonchoSession;
    /** The platform (for the `no-peer` hint). */
    platform: string;
    signal: AbortSignal;
  };

/** The refusal of writes during bot-to-bot turns. */
export const BOT_TURN_WRITE_ERROR =
  "Honcho memory writes are off during a bot-to-bot turn. Only turns written by a person can change what Honcho stores.";

/** A `peer` argument: `user` (or absent), `ai`/`assistant`, or a peer id (sanitised). */
export function resolveToolPeer(
  peer: unknown,
  ids: { userPeerId: string; aiPeerId: string },
): string {
  const raw = typeof peer === "string" ? peer.trim() : "";
  if (raw === "" || raw.toLowerCase() === "user") return ids.userPeerId;
  const lower = raw.toLowerCase();
  if (lower === "ai" || lower === "assistant") return ids.aiPeerId;
  return sanitizeId(raw);
}

function perspective(ctx: HonchoToolContext, targetPeerId: string) {
  return resolveReadPerspective({ ...ctx, targetPeerId });
}

/** The provider's tool dispatch: sets the session up first when it is not ready (plugins/memory/honcho/SPEC.md §10). */
export async function callHonchoTool(
  name: string,
  args: Record<string, unknown>,
  call: HonchoToolCall,
): Promise<string> {
  if (!HONCHO_TOOL_NAMES.includes(name)) {
    return toolError(`Unknown tool: ${name}`);
  }
  const session = call.session;
  if (!session.ready) {
    if (session.creating) {
      return toolError(
        "Honcho session is still initializing; try again shortly.",
      );
    }
    try {
      await session.ensure(call.signal);
    } catch (error) {
      if (isHonchoError(error, "auth")) {
        return toolError(
          `Honcho memory authentication failed: ${
            call.scrub(errorText(error))
          }`,
        );
      }
      if (isHonchoError(error, "no_peer")) {
        return toolError(
          noticeText("no-peer", { platform: call.platform }),
        );
      }
      return toolError("Honcho session could not be initialized.");
    }
  }
  const identity = session.identity!;
  const observation = session.observation;
  return await runHonchoTool(name, args ?? {}, {
    ...call,
    sessionId: identity.sessionId,
    userPeerId: identity.userPeerId,
    aiPeerId: identity.aiPeerId,
    aiObservesOthers: session.aiObservesOthers(),
    observationOf: (peerId) =>
      peerId === identity.aiPeerId
        ? observation?.ai
        : peerId === identity.userPeerId
        ? observation?.user
        : undefined,
  });
}

/** Runs one tool call against a ready session; never throws (errors become `{"error": …}`). */
export async function runHonchoTool(
  name: string,
  args: Record<string, unknown>,
  ctx: HonchoToolContext,
): Promise<string> {
  const run = TOOLS[name];
  if (!run) return toolError(`Unknown tool: ${name}`);
  try {
    return await run(args, ctx);
  } catch (error) {
    const message = ctx.scrub(errorText(error));
    if (isHonchoError(error, "auth")) {
      return toolError(`Honcho memory authentication failed: ${message}`);
    }
    return toolError(`Honcho ${name} failed: ${message}`);
  }
}

const TOOLS: Record<string, typeof profileTool> = {
  honcho_profile: profileTool,
  honcho_search: searchTool,
  honcho_context: contextTool,
  honcho_reasoning: reasoningTool,
  honcho_conclude: concludeTool,
};

function text(value: unknown): string {
  return typeof value === "string" ? value.trim() : "";
}

async function profileTool(
  args: Record<string, unknown>,
  ctx: HonchoToolContext,
): Promise<string> {
  const targetId = resolveToolPeer(args.peer, ctx);
  const { observer, target } = perspective(ctx, targetId);
  const card = Array.isArray(args.card)
    ? args.card.filter((f): f is string => typeof f === "string").map((f) =>
      f.trim()
    ).filter((f) => f !== "")
    : [];
  if (card.length > 0) {
    if (ctx.botTurn) return toolError(BOT_TURN_WRITE_ERROR);
    const saved = await ctx.client.setPeerCard(observer, card, {
      target,
      signal: ctx.signal,
    });
    if (saved === null) return toolError("Failed to update peer card.");
    return JSON.stringify({
      result: `Peer card updated (${saved.length} facts).`,
      card: saved,
    });
  }
  const read = (peerId: string, target?: string) =>
    ctx.client.getPeerCard(peerId, { target, signal: ctx.signal }).catch(
      (error) => {
        if (isHonchoError(error, "auth")) throw error;
        return null;
      },
    );
  let facts = await read(observer, target);
  if ((!facts || facts.length === 0) && target !== undefined) {
    facts = await read(targetId);
  }
  const clean = (facts ?? []).map((f) => f.trim()).filter((f) => f !== "");
  if (clean.length > 0) return JSON.stringify({ result: clean });
  const reasons: string[] = [];
  const flags = ctx.observationOf(targetId);
  if (flags && !flags.observeMe && !flags.observeOthers) {
    reasons.push(`observation is disabled for peer '${targetId}'`);
  }
  if (ctx.turn < Math.max(2, ctx.config.dialecticCadence)) {
    reasons.push(
      `this session has only ${ctx.turn} turn${
        ctx.turn === 1 ? "" : "s"
      } so far`,
    );
  }
  if (reasons.length === 0) {
    reasons.push(
      "the card has no facts yet (or a self-hosted Honcho older than 3.x has no peer cards)",
    );
  }
  return JSON.stringify({
    result: "No profile facts available yet.",
    hint: `This is not an error.  ${
      reasons.join("; ")
    }.  Try honcho_reasoning for a synthesized answer or honcho_search for raw excerpts.`,
  });
}

const SEARCH_QUERY_MAX_CHARS = 4000;
const SEARCH_HIT_MAX_CHARS = 1200;

async function searchTool(
  args: Record<string, unknown>,
  ctx: HonchoToolContext,
): Promise<string> {
  const query = text(args.query).slice(0, SEARCH_QUERY_MAX_CHARS);
  if (query === "") return toolError("Missing required parameter: query");
  const requested = Math.trunc(Number(args.max_tokens ?? 800)) || 800;
  const maxTokens = Math.min(Math.max(1, requested), 2000);
  const budget = Math.max(200, maxTokens * 4);
  const limit = Math.max(3, Math.min(20, Math.floor(budget / 300)));
  const peerId = resolveToolPeer(args.peer, ctx);
  const hits: Message[] = await ctx.client.searchPeer(peerId, query, {
    limit,
    signal: ctx.signal,
  });
  const entries: string[] = [];
  let used = 0;
  for (const hit of hits) {
    const who = hit.peerId === ctx.aiPeerId ? "assistant" : hit.peerId;
    const where = hit.sessionId ? ` \u00b7 ${hit.sessionId}` : "";
    let entry = `[${who}${where}] ${
      hit.content.slice(0, SEARCH_HIT_MAX_CHARS)
    }`;
    const separator = entries.length > 0 ? 2 : 0;
    const left = budget - used - separator;
    if (left <= 0) break;
    if (entry.length > left) entry = entry.slice(0, left);
    entries.push(entry);
    used += entry.length + separator;
    if (used >= budget) break;
  }
  if (entries.length === 0) {
    return JSON.stringify({ result: "No relevant context found." });
  }
  return JSON.stringify({ result: entries.join("\n\n") });
}

async function contextTool(
  args: Record<string, unknown>,
  ctx: HonchoToolContext,
): Promise<string> {
  const targetId = resolveToolPeer(args.peer, ctx);
  const { observer, target } = perspective(ctx, targetId);
  const data = await ctx.client.getSessionContext(ctx.sessionId, {
    summary: true,
    tokens: ctx.config.contextTokens && ctx.config.contextTokens > 0
      ? Math.floor(ctx.config.contextTokens)
      : undefined,
    peerTarget: target ?? observer,
    peerPerspective: observer,
    signal: ctx.signal,
  });
  const summary = cleanHonchoSummary(data.summary?.content);
  const representation = data.peerRepresentation?.trim() ?? "";
  const card = (data.peerCard ?? []).map((f) => f.trim()).filter(Boolean);
  const messages = data.messages.slice(-10);
  if (
    data.summary === null && data.peerRepresentation === null &&
    data.peerCard === null && data.messages.length === 0
  ) {
    return JSON.stringify({ result: "No context available yet." });
  }
  const sections: string[] = [];
  if (summary) sections.push(`## Summary\n${summary}`);
  if (representation) sections.push(`## Representation\n${representation}`);
  if (card.length > 0) sections.push(`## Card\n${card.join("\n")}`);
  const recent = messages.slice(-5).map((m) =>
    `  [${m.peerId}] ${m.content.slice(0, 200)}`
  );
  if (recent.length > 0) {
    sections.push(`## Recent messages\n${recent.join("\n")}`);
  }
  return JSON.stringify({
    result: sections.length > 0
      ? sections.join("\n\n")
      : "No context available.",
  });
}

async function reasoningTool(
  args: Record<string, unknown>,
  ctx: HonchoToolContext,
): Promise<string> {
  const query = capDialecticInput(
    text(args.query),
    ctx.config.dialecticMaxInputChars,
  );
  if (query === "") return toolError("Missing required parameter: query");
  const requested = text(args.reasoning_level).toLowerCase();
  const level = ctx.config.dialecticDynamic &&
      REASONING_LEVELS.includes(requested as ReasoningLevel)
    ? requested as ReasoningLevel
    : ctx.config.dialecticReasoningLevel;
  const targetId = resolveToolPeer(args.peer, ctx);
  const asAi = ctx.aiObservesOthers && targetId !== ctx.aiPeerId;
  let answer: string | null;
  try {
    answer = await ctx.client.peerChat(asAi ? ctx.aiPeerId : targetId, query, {
      target: asAi ? targetId : undefined,
      reasoningLevel: level,
      signal: ctx.signal,
    });
  } catch (error) {
    if (isHonchoError(error, "auth")) throw error;
    return toolError(
      `Honcho reasoning query failed (${
        ctx.scrub(errorText(error))
      }). This is a backend error, not an empty result: retry, consider a lower reasoning_level, or raise 'timeout' in honcho.json.`,
    );
  }
  ctx.onReasoning?.();
  const clean = answer?.trim() ?? "";
  return JSON.stringify({ result: clean || "No result from Honcho." });
}

async function concludeTool(
  args: Record<string, unknown>,
  ctx: HonchoToolContext,
): Promise<string> {
  const conclusion = text(args.conclusion);
  const deleteId = text(args.delete_id);
  const list = args.list === true;
  const query = text(args.query);
  const given = [conclusion !== "", deleteId !== "", list].filter(Boolean)
    .length;
  if (given !== 1) {
    return toolError(
      "Exactly one of conclusion, delete_id, or list must be provided.",
    );
  }
  if (query !== "" && !list) {
    return toolError("query is only valid when list is true.");
  }
  const peerArg = text(args.peer) || "user";
  const targetId = resolveToolPeer(peerArg, ctx);
  const { observer } = perspective(ctx, targetId);
  const scope = { observer_id: observer, observed_id: targetId };
  if (list) {
    const items = query !== ""
      ? await ctx.client.queryConclusions(query, {
        filters: scope,
        topK: 20,
        signal: ctx.signal,
      })
      : (await ctx.client.listConclusions({
        filters: scope,
        size: 20,
        signal: ctx.signal,
      })).items;
    return JSON.stringify({
      conclusions: items.map((c) => ({ id: c.id, content: c.content })),
    });
  }
  if (ctx.botTurn) return toolError(BOT_TURN_WRITE_ERROR);
  if (deleteId !== "") {
    try {
      await ctx.client.deleteConclusion(deleteId, { signal: ctx.signal });
    } catch (error) {
      if (isHonchoError(error, "auth")) throw error;
      return toolError(`Failed to delete conclusion ${deleteId}.`);
    }
    return JSON.stringify({ result: `Conclusion ${deleteId} deleted.` });
  }
  try {
    const saved = await ctx.client.createConclusions([{
      observerId: observer,
      observedId: targetId,
      content: conclusion,
      sessionId: ctx.sessionId,
    }], { signal: ctx.signal });
    if (saved.length === 0) return toolError("Failed to save conclusion.");
  } catch (error) {
    if (isHonchoError(error, "auth")) throw error;
    return toolError("Failed to save conclusion.");
  }
  return JSON.stringify({
    result: `Conclusion saved for ${peerArg}: ${conclusion}`,
  });
}
