// `hermes memory recall` and `hermes memory import` in-process, with a
// journal provider written into a scratch home as a user plugin.
import assert from "node:assert/strict";
import { join } from "node:path";
import {
  main,
  memoryCliIo,
  type MemoryCliIoOptions,
} from "../../src/cli/mod.ts";
import { parseTranscript } from "../../src/cli/commands/memory_import.ts";
import { withHome } from "../helpers/test_home.ts";

const JOURNAL_MOD = `
import { getHermesHome, MemoryProvider, recallStatus, type RecallStatus, type ToolSchema } from "@hermes/memory";

const file = () => getHermesHome() + "/journal/journal.jsonl";

async function lines(): Promise<Record<string, unknown>[]> {
  try {
    return (await Deno.readTextFile(file())).split("\\n").filter((l) => l).map((l) => JSON.parse(l));
  } catch {
    return [];
  }
}

async function append(entry: Record<string, unknown>): Promise<void> {
  await Deno.writeTextFile(file(), JSON.stringify(entry) + "\\n", { append: true });
}

export class JournalProvider extends MemoryProvider {
  #hits = 0;
  get name(): string { return "journal"; }
  isAvailable(): boolean { return true; }
  initialize(): void {}
  getToolSchemas(): ToolSchema[] { return []; }
  override systemPromptBlock(): string { return "# Journal\\nYou keep a journal."; }
  override async onTurnStart(turn: number, message: string): Promise<void> {
    await append({ kind: "turn", turn, message });
  }
  override async prefetch(query: string): Promise<string> {
    const hits = (await lines()).filter((e) => e.kind === "sync" && String(e.user).includes(query.split(" ")[0]));
    this.#hits = hits.length;
    return hits.map((e) => "- " + e.user + " => " + e.assistant).join("\\n");
  }
  override recallStatus(): RecallStatus | null { return recallStatus("Journal", this.#hits); }
  override async syncTurn(user: string, assistant: string, options: { sessionId?: string; messages?: unknown[] }): Promise<void> {
    await append({ kind: "sync", user, assistant, session: options.sessionId, messages: options.messages?.length ?? 0 });
  }
}
`;

async function run(
  home: string,
  args: string[],
  options: MemoryCliIoOptions = {},
): Promise<{ code: number; out: string; err: string }> {
  const io = memoryCliIo({
    ...options,
    env: { HERMES_HOME: home, ...(options.env ?? {}) },
  });
  const code = await main(args, io);
  return { code, out: io.out, err: io.err };
}

async function journal(home: string): Promise<Record<string, unknown>[]> {
  try {
    return (await Deno.readTextFile(join(home, "journal", "journal.jsonl")))
      .split("\n").filter((l) => l !== "").map((l) => JSON.parse(l));
  } catch {
    return [];
  }
}

const TRANSCRIPT = [
  JSON.stringify({ role: "system", content: "You are helpful." }),
  JSON.stringify({ role: "user", content: "deploy the app" }),
  JSON.stringify({ role: "assistant", content: "", tool_calls: [{ id: "1" }] }),
  JSON.stringify({ role: "tool", tool_call_id: "1", content: "ok" }),
  JSON.stringify({ role: "assistant", content: "Deployed with deno deploy." }),
  "{not json",
  "",
  JSON.stringify({
    role: "user",
    content: [{ type: "text", text: "deploy again" }],
  }),
  JSON.stringify({ role: "assistant", content: "Done again." }),
  JSON.stringify(["array"]),
  JSON.stringify({ role: "user", content: "no reply to this one" }),
].join("\n") + "\n";

/** A temporary profile home whose provider is the `journal` plugin. */
function withJournalHome<T>(fn: (home: string) => Promise<T>): Promise<T> {
  return withHome(fn, async (home) => {
    const dir = join(home, "plugins", "journal");
    await Deno.mkdir(dir, { recursive: true });
    await Deno.writeTextFile(join(dir, "mod.ts"), JOURNAL_MOD);
    await Deno.writeTextFile(
      join(dir, "plugin.yaml"),
      "name: journal\ndescription: Journal\n",
    );
    await Deno.writeTextFile(
      join(home, "config.yaml"),
      "memory:\n  provider: journal\n",
    );
  });
}

Deno.test("parseTranscript() pairs user messages with the following reply", () => {
  const parsed = parseTranscript(TRANSCRIPT);
  assert.deepEqual(
    parsed.turns.map((t) => [t.user, t.assistant, t.messages.length, t.line]),
    [
      ["deploy the app", "Deployed with deno deploy.", 5, 2],
      ["deploy again", "Done again.", 7, 8],
    ],
  );
  assert.deepEqual(parsed.problems.map((p) => p.line), [6, 10]);
  assert.match(parsed.problems[0]?.reason ?? "", /^not valid JSON/);
  assert.equal(parsed.problems[1]?.reason, "not a JSON object");
  assert.deepEqual(parsed.unanswered, [11]);
});

Deno.test("memory import replays turns through the manager into the provider", async () => {
  await withJournalHome(async (home) => {
    const file = join(home, "chat.jsonl");
    await Deno.writeTextFile(file, TRANSCRIPT);
    const { code, out, err } = await run(home, ["memory", "import", file]);
    assert.equal(code, 0, err);
    assert.equal(
      out,
      `Imported 2 turns from ${file} into journal (session import-chat)\n`,
    );
    assert.match(err, new RegExp(`${file}:6: skipped: not valid JSON`));
    assert.match(err, new RegExp(`${file}:10: skipped: not a JSON object`));
    assert.match(
      err,
      /skipped 1 user message\(s\) with no assistant reply \(line 11\)/,
    );
    // Not a terminal: no progress bar.
    assert.ok(!err.includes("Importing ["));
    // Syncs run on the manager's background queue (FIFO), as in an agent:
    // each kind stays in order, interleaving may vary.
    const entries = await journal(home);
    assert.deepEqual(
      entries.filter((e) => e.kind === "turn").map((e) => [e.turn, e.message]),
      [[1, "deploy the app"], [2, "deploy again"]],
    );
    const syncs = entries.filter((e) => e.kind === "sync");
    assert.deepEqual(syncs.map((e) => e.session), [
      "import-chat",
      "import-chat",
    ]);
    assert.deepEqual(syncs.map((e) => e.user), [
      "deploy the app",
      "deploy again",
    ]);
    assert.deepEqual(syncs.map((e) => e.messages), [5, 7]);
  });
});

Deno.test("memory import draws a progress bar on a terminal stderr", async () => {
  await withJournalHome(async (home) => {
    const file = join(home, "chat.jsonl");
    await Deno.writeTextFile(file, TRANSCRIPT);
    const { code, err } = await run(
      home,
      ["memory", "import", file, "--session", "s9"],
      { stderrIsTerminal: true },
    );
    assert.equal(code, 0);
    assert.ok(
      err.includes("Importing [###############---------------] 1/2 turns"),
    );
    assert.ok(
      err.includes("Importing [##############################] 2/2 turns"),
    );
    assert.deepEqual(
      (await journal(home)).filter((e) => e.kind === "sync").map((e) =>
        e.session
      ),
      ["s9", "s9"],
    );
  });
});

Deno.test("memory import needs an external provider and a readable file", async () => {
  await withHome(async (home) => {
    const file = join(home, "chat.jsonl");
    await Deno.writeTextFile(file, TRANSCRIPT);
    const none = await run(home, ["memory", "import", file]);
    assert.equal(none.code, 1);
    assert.match(none.err, /no external memory provider is active/);
    const missing = await run(home, [
      "memory",
      "import",
      join(home, "x.jsonl"),
    ]);
    assert.equal(missing.code, 1);
    assert.match(
      missing.err,
      /^error: Cannot read .*x\.jsonl: no such file\n$/,
    );
  });
});

Deno.test("memory recall shows the system block, fenced prefetch and recall status", async () => {
  await withJournalHome(async (home) => {
    const file = join(home, "chat.jsonl");
    await Deno.writeTextFile(file, TRANSCRIPT);
    assert.equal((await run(home, ["memory", "import", file])).code, 0);
    await Deno.mkdir(join(home, "memories"), { recursive: true });
    await Deno.writeTextFile(
      join(home, "memories", "USER.md"),
      "Name: Ada",
    );
    const before = (await journal(home)).length;
    const { code, out, err } = await run(home, [
      "memory",
      "recall",
      "deploy status",
    ]);
    assert.equal(code, 0, err);
    assert.match(
      out,
      /^Recall preview for "deploy status" \(session cli-recall, provider journal \+ built-in\)\n/,
    );
    assert.match(
      out,
      /── System prompt \(memory blocks\) ──\n[^]*USER PROFILE[^]*Name: Ada[^]*# Journal\nYou keep a journal\.\n/,
    );
    assert.match(
      out,
      /── Context placed before the message ──\n<memory-context>\n\[System note: [^\n]*\]\n\n- deploy the app => Deployed with deno deploy\.\n- deploy again => Done again\.\n<\/memory-context>\n/,
    );
    assert.match(
      out,
      /── Recall status ──\n🧠 Journal — recalled 2 memories\n$/,
    );
    // A preview records no turn: no turn start, no sync.
    assert.equal(before, 4);
    assert.equal((await journal(home)).length, before);

    const json = JSON.parse(
      (await run(home, ["memory", "recall", "deploy", "--json"])).out,
    );
    assert.equal(json.provider, "journal");
    assert.equal(json.recallStatus, "🧠 Journal — recalled 2 memories");
    assert.match(json.context, /^<memory-context>\n/);
    assert.match(json.systemPrompt, /# Journal/);

    const trivial = await run(home, ["memory", "recall", "ok"]);
    assert.match(trivial.out, /\(prefetch skipped: the message is trivial\)/);
  });
});

Deno.test("memory recall with built-in memory only", async () => {
  await withHome(async (home) => {
    const { code, out } = await run(home, ["memory", "recall", "anything"]);
    assert.equal(code, 0);
    assert.match(out, /\(session cli-recall, built-in only\)/);
    assert.match(out, /── System prompt \(memory blocks\) ──\n\(empty\)\n/);
    assert.match(out, /\(nothing recalled\)/);
    assert.match(out, /── Recall status ──\n\(none\)\n$/);
  });
});
