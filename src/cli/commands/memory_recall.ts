// `hermes memory recall "<text>"`: what the agent would be given for that
// message (the memory part of the system prompt, the fenced recalled
// context, the recall status line).

import { terminalSafe } from "../../core/terminal_text.ts";
import type { CliIo } from "../cli_io.ts";
import type { HermesCommand } from "../hermes_command.ts";
import { ioAction, styleFor, writeJson } from "../format.ts";
import { type AgentMemory, openAgentMemory } from "../_agent_memory.ts";
import { buildMemoryContextBlock } from "../../context/context_fence.ts";
import { isTrivialPrompt } from "../../context/trivial_prompt.ts";

/**
 * Providers are initialized for inspection only and no turn is recorded.
 * Exits 1 when a provider's recall failed or is off, so scripts notice.
 */
async function runMemoryRecall(
  io: CliIo,
  opts: { session?: string; json?: boolean },
  text: string,
): Promise<number> {
  const sessionId = opts.session || "cli-recall";
  const memory = await openAgentMemory(io, { sessionId, inspection: true });
  try {
    const preview = await previewRecall(memory, text, sessionId);
    const { systemPrompt, trivial, context, recallStatus } = preview;
    const exitCode = preview.recallFailures.length > 0 ? 1 : 0;
    if (opts.json) {
      writeJson(io, preview);
      return exitCode;
    }
    const style = styleFor(io, "stdout");
    const heading = (title: string): string =>
      style.bold(`\u2500\u2500 ${title} \u2500\u2500`);
    // Provider text: control characters escaped (newlines kept).
    const block = (value: string, empty: string): string =>
      value ? `${terminalSafe(value)}\n` : `${empty}\n`;
    io.stdout(
      `Recall preview for ${JSON.stringify(text)} (session ${sessionId}, ${
        memory.external
          ? `provider ${memory.external} + built-in`
          : "built-in only"
      })\n\n${heading("System prompt (memory blocks)")}\n${
        block(systemPrompt, "(empty)")
      }\n${heading("Context placed before the message")}\n${
        trivial
          ? "(prefetch skipped: the message is trivial)\n"
          : block(context, "(nothing recalled)")
      }\n${heading("Recall status")}\n${block(recallStatus, "(none)")}${
        preview.recallNotes.map((note) => `note: ${terminalSafe(note)}\n`)
          .join("")
      }`,
    );
    return exitCode;
  } finally {
    await memory.manager.shutdownAll();
  }
}

/**
 * What the agent would be given for one message (`recall --json`, the MCP
 * recall tool): the system prompt's memory blocks, the raw recalled text
 * and the fenced context, the status line, why recall failed and notes.
 */
export async function previewRecall(
  memory: AgentMemory,
  text: string,
  sessionId: string,
) {
  const { manager } = memory;
  const systemPrompt = await manager.buildSystemPrompt();
  const trivial = isTrivialPrompt(text);
  const prefetch = trivial
    ? ""
    : await manager.prefetchAll(text, { sessionId });
  const context = buildMemoryContextBlock(prefetch);
  const recallStatus = trivial ? "" : await manager.describeRecall();
  return {
    query: text,
    sessionId,
    provider: memory.external,
    configuredProvider: memory.configured,
    skippedReason: memory.skipped ?? null,
    trivial,
    systemPrompt,
    prefetch,
    context,
    recallStatus,
    recallFailures: manager.recallFailures,
    recallNotes: manager.recallNotes,
  };
}

export function registerMemoryRecall(memory: HermesCommand): HermesCommand {
  const command = memory.command("recall")
    .argument("<text>", "The user message to recall memory for")
    .summary("Show what the agent would be given for a message")
    .description(
      "Show what the agent would be given for a message: the memory blocks of the\n" +
        "system prompt, the fenced <memory-context> recalled before the message\n" +
        "(prefetch) and the recall status line. Providers are initialized for\n" +
        "inspection and no turn is recorded.",
    )
    .option("--session <id>", "Session id for the preview", "cli-recall")
    .option("--json", "Print the result as JSON (no colour)", false)
    .example('hermes memory recall "which editor do I use?"')
    .example('hermes memory recall "deploy steps" --json');
  return ioAction(command, runMemoryRecall);
}
