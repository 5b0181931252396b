// `hermes memory import <transcript.jsonl>`: replays an OpenAI-format
// transcript through the memory manager turn by turn (turn start, sync), as
// the agent would have recorded it. Re-running stores nothing new: each turn carries a stable `turnId`
// a provider may honour (Honcho derives its message ids from it); success is
// reported once the provider confirmed every turn durable (`drain`).

import { createHash } from "node:crypto";
import { errorText } from "../../_util/error_text.ts";
import { basename, extname } from "../../_util/path.ts";
import type { CliIo } from "../cli_io.ts";
import type { HermesCommand } from "../hermes_command.ts";
import { openAgentMemory } from "../_agent_memory.ts";
import { ioAction, writeJson } from "../format.ts";
import type { ChatMessage } from "../../core/memory_provider.ts";
import { isRecord } from "../../_util/is_record.ts";

// `assistant`: the last assistant text before the next user message;
// `messages`: the transcript to the end of the turn; `line`: the user's.
interface TranscriptTurn {
  user: string;
  assistant: string;
  messages: ChatMessage[];
  line: number;
}

/** A message's text: a string as is, or its text parts joined by line breaks. */
function messageText(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content.map((part) => isRecord(part) ? part.text : undefined)
    .filter((t) => typeof t === "string" && t !== "").join("\n");
}

/** Pairs each user message with the assistant reply after it; malformed lines are reported and skipped. */
export function parseTranscript(text: string): {
  turns: TranscriptTurn[];
  problems: { line: number; reason: string }[];
  unanswered: number[];
} {
  const problems: { line: number; reason: string }[] = [];
  const turns: TranscriptTurn[] = [];
  const unanswered: number[] = [];
  const transcript: ChatMessage[] = [];
  let pending: { user: string; line: number; assistant: string } | null = null;
  const close = (): void => {
    if (pending === null) return;
    if (pending.assistant !== "") {
      turns.push({
        user: pending.user,
        assistant: pending.assistant,
        messages: [...transcript],
        line: pending.line,
      });
    } else {
      unanswered.push(pending.line);
    }
    pending = null;
  };
  text.split(/\r?\n/).forEach((raw, index) => {
    const line = index + 1;
    if (raw.trim() === "") return;
    let value: unknown;
    try {
      value = JSON.parse(raw);
    } catch (error) {
      problems.push({ line, reason: `not valid JSON (${errorText(error)})` });
      return;
    }
    if (!isRecord(value)) {
      problems.push({ line, reason: "not a JSON object" });
      return;
    }
    const message = value as ChatMessage;
    if (typeof message.role !== "string") {
      problems.push({ line, reason: "has no string 'role'" });
      return;
    }
    if (message.role === "user") {
      close();
      pending = { user: messageText(message.content), line, assistant: "" };
    } else if (message.role === "assistant" && pending !== null) {
      const reply = messageText(message.content);
      if (reply.trim() !== "") pending.assistant = reply;
    }
    transcript.push(message);
  });
  close();
  return { turns, problems, unanswered };
}

// SHA-256 of the session, the turn's text and how many identical turns came
// before it: a repeated "yes" is its own turn; an insertion moves no other key.
function importTurnIds(
  sessionId: string,
  turns: readonly TranscriptTurn[],
): string[] {
  const seen = new Map<string, number>();
  return turns.map((turn) => {
    const content = JSON.stringify([turn.user, turn.assistant]);
    const occurrence = seen.get(content) ?? 0;
    seen.set(content, occurrence + 1);
    return createHash("sha256").update(
      JSON.stringify([sessionId, content, occurrence]),
    ).digest("hex");
  });
}

function progressBar(done: number, total: number): string {
  const width = 30;
  const filled = total === 0 ? width : Math.round((done / total) * width);
  return `\r\x1b[KImporting [${"#".repeat(filled)}${
    "-".repeat(width - filled)
  }] ${done}/${total} turns`;
}

async function readTranscript(path: string): Promise<string> {
  if (path === "-") return await new Response(Deno.stdin.readable).text();
  try {
    return await Deno.readTextFile(path);
  } catch (error) {
    const why = error instanceof Deno.errors.NotFound
      ? "no such file"
      : error instanceof Deno.errors.NotCapable
      ? `this run was not granted it; run 'hermes memory import FILE' through the launcher (it grants the file you name to that run), or pipe it: hermes memory import - < ${path}`
      : errorText(error);
    throw new Error(`Cannot read ${path}: ${why}`);
  }
}

/** Exits 1 when nothing could be imported. */
async function runMemoryImport(
  io: CliIo,
  options: { session?: string; json?: boolean },
  file: string,
): Promise<number> {
  let text: string;
  try {
    text = await readTranscript(file);
  } catch (error) {
    io.stderr(`error: ${errorText(error)}\n`);
    return 1;
  }
  const parsed = parseTranscript(text);
  for (const problem of options.json ? [] : parsed.problems) {
    io.stderr(`${file}:${problem.line}: skipped: ${problem.reason}\n`);
  }
  if (parsed.unanswered.length > 0 && !options.json) {
    io.stderr(
      `${file}: skipped ${parsed.unanswered.length} user message(s) with no assistant reply (line ${
        parsed.unanswered.join(", ")
      })\n`,
    );
  }

  const stem = file === "-" ? "stdin" : basename(file, extname(file));
  const sessionId = options.session || `import-${stem}`;
  const memory = await openAgentMemory(io, { sessionId });
  const { manager } = memory;
  try {
    if (memory.external === null) {
      io.stderr(
        memory.configured === null
          ? "error: no external memory provider is active (memory.provider is built-in only); import replays turns into a provider, so run 'hermes memory setup' first\n"
          : `error: memory provider '${memory.configured}' cannot take the import because ${memory.skipped}; run 'hermes memory status'\n`,
      );
      return 1;
    }
    const total = parsed.turns.length;
    const showProgress = io.stderrIsTerminal && total > 0;
    const turnIds = importTurnIds(sessionId, parsed.turns);
    let turn = 0;
    for (const t of parsed.turns) {
      turn++;
      // No recall: nobody reads it, and each may cost a server query.
      await manager.onTurnStart(turn, t.user, { platform: "cli" });
      manager.syncAll(t.user, t.assistant, {
        sessionId,
        messages: t.messages,
        turnId: turnIds[turn - 1],
      });
      if (showProgress) io.stderr(progressBar(turn, total));
    }
    // Every turn handed over and durable with the provider (its drain)...
    const drained = await manager.flushPending();
    if (showProgress) io.stderr("\r\x1b[K");
    if (!drained) {
      io.stderr(
        `error: provider '${memory.external}' did not confirm every imported turn durable; run the import again (it stores nothing twice)\n`,
      );
      return 1;
    }
    // ...then the imported session ends, so the provider delivers now.
    await manager.onSessionEnd(parsed.turns.at(-1)?.messages ?? []);
    if (options.json) {
      writeJson(io, {
        file,
        sessionId,
        provider: memory.external,
        imported: total,
        skipped: parsed.problems,
        unanswered: parsed.unanswered,
      });
    } else {
      io.stdout(
        `Imported ${total} turn${
          total === 1 ? "" : "s"
        } from ${file} into ${memory.external} (session ${sessionId})\n`,
      );
    }
    return total > 0 || parsed.problems.length === 0 ? 0 : 1;
  } finally {
    await manager.shutdownAll();
  }
}

export function registerMemoryImport(memory: HermesCommand): HermesCommand {
  const command = memory.command("import")
    .argument("<transcript>", "JSON-lines transcript, or - for standard input")
    .summary("Replay a chat transcript into the active provider")
    .description(
      "Replay an OpenAI-format transcript (one JSON message per line) into the active\n" +
        "provider: each user message is paired with the assistant reply after it and\n" +
        "sent through the memory manager turn by turn (turn start, then sync; no\n" +
        "recall). Malformed lines are reported with their line number and skipped.\n" +
        "A progress bar is shown on stderr when it is a terminal.",
    )
    .option(
      "--session <id>",
      "Session id the turns are recorded under (default: import-<file name>)",
    )
    .option("--json", "Print what was imported and skipped as JSON")
    .example("hermes memory import chat.jsonl")
    .example("hermes memory import - --session team-sync < chat.jsonl");
  return ioAction(command, runMemoryImport);
}
