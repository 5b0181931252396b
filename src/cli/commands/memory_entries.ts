// `hermes memory entries [list|add|replace|remove]`: the built-in entries,
// numbered, with usage; one change at a time through the `memory` tool's own
// handler (threat scan, lock, drift guard, budget).

import { terminalSafe } from "../../core/terminal_text.ts";
import type { CliIo } from "../cli_io.ts";
import type { HermesCommand } from "../hermes_command.ts";
import { ioAction, styleFor, writeJson } from "../format.ts";
import {
  applyEntryChange,
  type BuiltinEntryFile,
  type EntryChange,
  EntryNumberError,
  listBuiltinEntries,
  TARGET_DESCRIPTIONS,
} from "../builtin_entries.ts";
import type { MemoryTarget } from "../../core/memory_provider.ts";

/** Exits 1 when a file cannot be read. */
async function runMemoryEntriesList(
  io: CliIo,
  options: { target: MemoryTarget | "all"; json: boolean },
): Promise<number> {
  const files = (await listBuiltinEntries()).filter((f) =>
    options.target === "all" || f.target === options.target
  );
  const code = files.some((f) => f.error !== null) ? 1 : 0;
  if (options.json) {
    writeJson(io, { files });
    return code;
  }
  const style = styleFor(io, "stdout");
  files.forEach((file, i) => {
    if (i > 0) io.stdout("\n");
    io.stdout(`${heading(file, style.bold)}\n`);
    if (file.error !== null) {
      io.stdout(`  ${style.red(`error: ${file.error}`)}\n`);
      return;
    }
    if (file.entries.length === 0) {
      io.stdout(`  ${style.dim("(no entries)")}\n`);
    }
    const width = String(file.entries.length).length;
    for (const entry of file.entries) {
      const number = String(entry.number).padStart(width);
      const lines = terminalSafe(entry.text).split("\n");
      const pad = " ".repeat(width + 4);
      io.stdout(`  ${number}  ${lines.join(`\n${pad}`)}\n`);
      if (entry.blocked) {
        io.stdout(
          `${pad}${
            style.yellow(
              "(kept out of the system prompt by the threat scan; remove it)",
            )
          }\n`,
        );
      }
    }
  });
  return code;
}

function heading(file: BuiltinEntryFile, bold: (s: string) => string): string {
  const state = file.enabled ? "" : " (disabled in config.yaml)";
  return `${bold(file.file)} \u2014 ${
    TARGET_DESCRIPTIONS[file.target]
  } \u00b7 ${file.usage}${state}`;
}

/**
 * The person running the command is the approval: a change is saved even
 * when `memory.write_approval` stages the agent's own writes. Exits 1 when
 * the tool refused it, 2 when the number names no entry.
 */
async function runMemoryEntriesChange(
  change: EntryChange,
  options: { json: boolean },
  io: CliIo,
): Promise<number> {
  let outcome;
  try {
    outcome = await applyEntryChange(change, {
      tool: { approve: () => true },
    });
  } catch (error) {
    if (!(error instanceof EntryNumberError)) throw error;
    io.stderr(`error: ${error.message}\n`);
    return 2;
  }
  const { ok, result } = outcome;
  if (options.json) {
    const { action, target } = change;
    const number = "number" in change ? { number: change.number } : {};
    writeJson(io, { ok, action, target, ...number, result });
    return ok ? 0 : 1;
  }
  const file = change.target === "user" ? "USER.md" : "MEMORY.md";
  if (!ok) {
    io.stderr(
      `error: the memory tool refused the change to ${file}: ${
        terminalSafe(String(result.error ?? "unknown error"))
      }\n`,
    );
    const matches = result.matches;
    if (Array.isArray(matches)) {
      for (const m of matches) io.stderr(`  - ${terminalSafe(String(m))}\n`);
    }
    io.stderr("Nothing was changed.\n");
    return 1;
  }
  const message = typeof result.message === "string"
    ? result.message
    : "Saved.";
  const usage = typeof result.usage === "string" ? ` (${result.usage})` : "";
  io.stdout(`${file}: ${message}${usage}\n`);
  return 0;
}

function entryNumber(command: HermesCommand, raw: string): number {
  if (!/^[1-9][0-9]*$/.test(raw)) {
    command.error(
      `error: '${raw}' is not an entry number; use the number 'hermes memory entries' shows`,
    );
  }
  return Number(raw);
}

export function registerMemoryEntries(memory: HermesCommand): HermesCommand {
  const entries = memory.command("entries")
    .summary("List, add, replace or remove built-in memory entries")
    .description(
      "The entries of the built-in MEMORY.md (agent notes) and USER.md (user profile),\n" +
        "numbered, with usage against their limits. add, replace and remove change one\n" +
        "entry through the memory tool itself: the same threat scan, file lock, drift\n" +
        "guard and budget as the agent's writes, so a change the tool would refuse is\n" +
        "refused here too (exit code 1, nothing changed).",
    )
    .usage("[command] [options]")
    .example("hermes memory entries")
    .example('hermes memory entries add "Prefers metric units" --target user')
    .example('hermes memory entries replace 2 "Tests live in tests/"')
    .example("hermes memory entries remove 1 --target user --json");

  const list = entries.command("list", { isDefault: true })
    .summary("List the entries with numbers and usage")
    .description(
      "List the entries of MEMORY.md and USER.md with their numbers and usage.",
    )
    .choiceOption(
      "-t, --target <target>",
      "Which file to list",
      ["all", "memory", "user"],
      "all",
    )
    .option("--json", "Print the entries as JSON", false)
    .example("hermes memory entries list --target user --json")
    .allowExcessArguments(true);
  ioAction(
    list,
    (io, opts: { target: MemoryTarget | "all"; json: boolean }) => {
      // `hermes memory entries bogus` reaches the default command.
      const [word] = list.args;
      if (word !== undefined) entries.unknownSubcommand(word);
      return runMemoryEntriesList(io, opts);
    },
  );

  type ChangeOptions = { target: MemoryTarget; json: boolean };
  const change = (
    name: string,
    args: [string, string][],
    summary: string,
    description: string,
    build: (
      values: string[],
      opts: ChangeOptions,
      command: HermesCommand,
    ) => EntryChange,
  ): void => {
    const command = entries.command(name);
    for (const [arg, help] of args) command.argument(arg, help);
    command.summary(summary).description(description)
      .choiceOption(
        "-t, --target <target>",
        "Which file: memory or user",
        ["memory", "user"],
        "memory",
      )
      .option("--json", "Print the memory tool's result as JSON", false);
    ioAction(
      command,
      (io, opts: ChangeOptions, ...values: string[]) =>
        runMemoryEntriesChange(build(values, opts, command), opts, io),
    );
  };
  change(
    "add",
    [["<text>", "The new entry"]],
    "Add one entry",
    "Add one entry to MEMORY.md (or USER.md with --target user).",
    ([text], { target }) => ({ action: "add", target, content: text ?? "" }),
  );
  change(
    "replace",
    [["<number>", "The entry's number"], ["<text>", "The complete new entry"]],
    "Replace one entry",
    "Replace entry <number> with <text> (the whole entry).",
    ([raw, text], { target }, command) => ({
      action: "replace",
      target,
      number: entryNumber(command, raw ?? ""),
      content: text ?? "",
    }),
  );
  change(
    "remove",
    [["<number>", "The entry's number"]],
    "Remove one entry",
    "Remove entry <number>.",
    ([raw], { target }, command) => ({
      action: "remove",
      target,
      number: entryNumber(command, raw ?? ""),
    }),
  );
  return entries;
}
