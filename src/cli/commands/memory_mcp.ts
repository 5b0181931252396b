// `hermes memory mcp`: the active profile's memory as a stdio MCP server: the
// built-in `memory` tool, the active provider's tools and `memory_recall`
// (the code of `hermes memory recall`). Every tool result has the profile's
// secrets masked.

import type { CliIo } from "../cli_io.ts";
import type { HermesCommand } from "../hermes_command.ts";
import { ioAction } from "../format.ts";
import {
  type AgentMemory,
  callProviderTool,
  openAgentMemory,
} from "../_agent_memory.ts";
import { previewRecall } from "./memory_recall.ts";
import { moduleVersion } from "../version.ts";
import { profileSecretMasker } from "../surface_secrets.ts";
import { getHermesHome } from "../../profile/hermes_home.ts";
import { MEMORY_TOOL_NAME } from "../../builtin/memory_tool.ts";
import type { ToolSchema } from "../../core/memory_provider.ts";
import { errorText } from "../../_util/error_text.ts";
import { terminalSafe, terminalSafeDeep } from "../../core/terminal_text.ts";
import { isRecord } from "../../_util/is_record.ts";
import { readLines } from "../../sandbox/worker_protocol.ts";

const RECALL_TOOL_NAME = "memory_recall";

/** A JSON object of the protocol (a tool, a request, a result). */
type Json = Record<string, unknown>;

/** The MCP revisions this server speaks, newest first (answered in the client's when known). */
const MCP_VERSIONS = ["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"];

const RECALL_TOOL: Json = {
  name: RECALL_TOOL_NAME,
  description:
    "Show what this user's memory gives an agent for a message: the memory blocks of " +
    "the system prompt (built-in MEMORY.md / USER.md, as a new session loads them), the " +
    "<memory-context> recalled for the message by the active provider, and the recall " +
    "status line. Read-only. Call it at the start of a task with the user's request.",
  inputSchema: {
    type: "object",
    properties: {
      query: {
        type: "string",
        description: "The user's message to recall memory for.",
      },
    },
    required: ["query"],
  },
};

/**
 * A provider's tool as MCP clients see it: its text escaped like terminal
 * text and its description marked as the provider's, so that a description
 * cannot pass for the server's own instructions.
 */
function toMcpTool(schema: ToolSchema, provider?: string): Json {
  const description = terminalSafe(schema.description ?? "");
  return {
    name: terminalSafe(schema.name, { singleLine: true }),
    description: provider
      ? `[provider ${provider}] ${description}`
      : description,
    inputSchema: { ...terminalSafeDeep(schema.parameters), type: "object" },
  };
}

function isError(text: string): boolean {
  try {
    const value = JSON.parse(text) as unknown;
    return isRecord(value) && (value.success === false ||
      (value.success === undefined && typeof value.error === "string"));
  } catch {
    return false;
  }
}

/**
 * Serves until the client closes stdin. Nothing but protocol messages goes
 * to stdout; warnings go to stderr.
 */
async function runMemoryMcp(
  io: CliIo,
  options: { session?: string },
): Promise<number> {
  const sessionId = options.session || "mcp";
  const home = getHermesHome();
  const quiet: CliIo = { ...io, stdout: (text) => io.stderr(text) };
  // The provider starts at once, while the client initializes; tools/list
  // needs its tools only, not its session set-up. "mcp": a client asks and
  // waits, there is no next turn to prefetch for (Honcho recalls for the
  // query itself, as with recallSync).
  const added = Promise.withResolvers<AgentMemory>();
  const opening: Promise<AgentMemory> = openAgentMemory(quiet, {
    sessionId,
    platform: "mcp",
    onAdded: added.resolve,
  });
  opening.catch(() => {});
  const version = await moduleVersion();
  // Read at the first tool call: until then the provider's start has the CPU.
  let mask: Promise<(text: string) => string> | undefined;
  let turn = 0;

  const listTools = async () => {
    const memory = await Promise.race([added.promise, opening]);
    const own = memory.builtin?.memoryToolSchema();
    const tools: Json[] = own ? [toMcpTool(own)] : [];
    for (const schema of await memory.manager.getAllToolSchemas()) {
      if ([MEMORY_TOOL_NAME, RECALL_TOOL_NAME].includes(schema.name)) continue;
      tools.push(toMcpTool(schema, memory.external ?? "unknown"));
    }
    tools.push(RECALL_TOOL);
    return { tools };
  };

  const callTool = async (name: string, args: Json): Promise<Json> => {
    const masked = await (mask ??= profileSecretMasker(home));
    const reply = (text: string, error: boolean): Json => ({
      content: [{ type: "text", text: masked(text) }],
      ...(error ? { isError: true } : {}),
    });
    const fail = (error: string) => reply(JSON.stringify({ error }), true);
    const memory = await opening.catch(errorText); // Its text on failure.
    if (typeof memory === "string") return fail(`memory not opened: ${memory}`);
    const { manager } = memory;
    try {
      // Every tool call is a turn of its own: per-turn limits (the memory
      // tool's consolidation refusals) start over, recall is for this query.
      const query = typeof args.query === "string" ? args.query : "";
      await manager.onTurnStart(++turn, name === RECALL_TOOL_NAME ? query : "");
      if (name === MEMORY_TOOL_NAME) {
        const store = memory.builtin;
        if (!store) return fail("Built-in memory is disabled in config.yaml.");
        const text = await store.handleMemoryTool(args);
        await manager.notifyMemoryToolWrite(text, args).catch(() => {});
        return reply(text, isError(text));
      }
      if (name === RECALL_TOOL_NAME) {
        if (!query.trim()) return fail("query must be a non-empty string");
        // What a new session would load, including writes made since.
        await memory.builtin?.reloadSnapshot();
        const preview = await previewRecall(memory, query, sessionId);
        return reply(JSON.stringify(preview, null, 2), false);
      }
      if (!manager.hasTool(name)) return fail(`Unknown tool '${name}'`);
      const text = await callProviderTool(memory, name, args);
      return reply(text, isError(text));
    } catch (error) {
      return fail(errorText(error));
    }
  };

  // JSON-RPC over stdin/stdout, one message a line (MCP's stdio transport):
  // answered from the first moment, while the provider is still starting.
  const send = (message: Json) =>
    io.stdout(`${JSON.stringify({ jsonrpc: "2.0", ...message })}\n`);
  const answer = async (request: Json): Promise<Json> => {
    const params = isRecord(request.params) ? request.params : {};
    switch (request.method) {
      case "initialize":
        return {
          protocolVersion: MCP_VERSIONS.includes(String(params.protocolVersion))
            ? params.protocolVersion
            : MCP_VERSIONS[0],
          capabilities: { tools: {} },
          serverInfo: { name: "hermes-memory", version: version.version },
          instructions:
            "Persistent memory of the user's Hermes profile. Call memory_recall with the user's " +
            "request before answering; save durable facts with the memory tool.",
        };
      case "ping":
        return {};
      case "tools/list":
        return await listTools();
      case "tools/call":
        if (typeof params.name !== "string") {
          throw { code: -32602, message: "tools/call needs a tool name" };
        }
        return await callTool(
          params.name,
          isRecord(params.arguments) ? params.arguments : {},
        );
      default:
        throw { code: -32601, message: `Method not found: ${request.method}` };
    }
  };
  // Deno's stdin, not node:readline (whose node:process costs the start ~8 ms).
  const pending: Promise<void>[] = [];
  const chunk = new Uint8Array(65536);
  await readLines(async () => {
    const n = await Deno.stdin.read(chunk);
    return n === null ? null : chunk.subarray(0, n);
  }, (line) => {
    let request: unknown;
    try {
      request = JSON.parse(line);
    } catch {
      if (line.trim() !== "") {
        send({ id: null, error: { code: -32700, message: "Parse error" } });
      }
      return true;
    }
    // A notification (no id) needs no answer.
    if (!isRecord(request) || request.id === undefined) return true;
    const id = request.id;
    pending.push(
      answer(request).then(
        (result) => send({ id, result }),
        (error) =>
          send({
            id,
            error: isRecord(error) && typeof error.code === "number"
              ? error
              : { code: -32603, message: errorText(error) },
          }),
      ),
    );
    return true;
  });
  await Promise.all(pending);
  try {
    const memory = await opening;
    await memory.manager.shutdownAll();
  } catch {
    // Already reported when a tool was called.
  }
  return 0;
}

export function registerMemoryMcp(memory: HermesCommand): HermesCommand {
  const command = memory.command("mcp")
    .summary("Serve this profile's memory to MCP clients (stdio)")
    .description(
      "Run a Model Context Protocol server on stdin/stdout for the active profile:\n" +
        "the built-in 'memory' tool, the active provider's tools (Honcho's five) and\n" +
        "'memory_recall'. Meant to be started by an MCP client (Claude Code, Cursor),\n" +
        "not typed: see docs/mcp.md for the configuration to paste.",
    )
    .option("--session <id>", "Session id the provider uses", "mcp")
    .example("hermes memory mcp")
    .example("claude mcp add hermes-memory -- hermes memory mcp");
  return ioAction(command, runMemoryMcp);
}
