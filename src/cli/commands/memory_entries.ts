/**
 * `hermes memory entries [list|add|replace|remove]`: the built-in
 * `MEMORY.md` / `USER.md` entries, numbered, with usage against their
 * limits; one entry added, replaced or removed at a time through the
 * `memory` tool's own handler (threat scan, lock, drift guard, budget).
 *
 * @module
 */

import { terminalSafe } from "../../core/terminal_text.ts";
import type { CliIo } from "../cli_io.ts";
import type { HermesCommand } from "../hermes_command.ts";
import { styleFor, writeJson } from "../format.ts";
import {
  applyEntryChange,
  type BuiltinEntryFile,
  type EntryChange,
  EntryNumberError,
  listBuiltinEntries,
} from "../builtin_entries.ts";
import type { MemoryTarget } from "../../core/memory_provider.ts";

/** Options of {@linkcode runMemoryEntriesList}. */
interface EntriesListOptions {
  /**
   * Which file to list.
   *
   * @default {"all"}
   */
  target?: MemoryTarget | "all";
  /**
   * Print JSON: `{ "files": [...] }`, each file with `target`, `file`,
   * `path`, `enabled`, `exists`, `error`, `chars`, `limit`, `percent`,
   * `usage` and `entries` (`number`, `text`, `blocked`).
   *
   * @default {false}
   */
  json?: boolean;
}

const DESCRIPTIONS: Record<MemoryTarget, string> = {
  memory: "agent notes",
  user: "user profile",
};

/**
 * Lists the entries of the built-in files of the active profile.
 *
 * @param options Which file and the output format.
 * @param io Where to write.
 * @returns `0`, or `1` when a file cannot be read.
 */
export async function runMemoryEntriesList(
  options: EntriesListOptions,
  io: CliIo,
): Promise<number> {
  const target = options.target ?? "all";
  const files = (await listBuiltinEntries()).filter((f) =>
    target === "all" || f.target === target
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
      return;
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
    DESCRIPTIONS[file.target]
  } \u00b7 ${file.usage}${state}`;
}

/**
 * Applies one change through the `memory` tool and reports its result.
 * The person running the command is the approval: a change is saved even
 * when `memory.write_approval` stages the agent's own writes.
 *
 * @param change The change.
 * @param options The output format.
 * @param io Where to write.
 * @returns `0` when saved, `1` when the memory tool refused it, `2` when
 * the number names no entry.
 */
export async function runMemoryEntriesChange(
  change: EntryChange,
  options: { json?: boolean },
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
    writeJson(io, {
      ok,
      action: change.action,
      target: change.target,
      ...("number" in change ? { number: change.number } : {}),
      result,
    });
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

const TARGET_OPTION = [
  "-t, --target <target>",
  "Which file: memory or user",
  ["memory", "user"],
  "memory",
] as const;

function entryNumber(command: HermesCommand, raw: string): number {
  if (!/^[1-9][0-9]*$/.test(raw)) {
    command.error(
      `error: '${raw}' is not an entry number; use the number 'hermes memory entries' shows`,
    );
  }
  return Number(raw);
}

/**
 * Attaches `entries` (with `list`, `add`, `replace`, `remove`) to the
 * `memory` command.
 *
 * @param memory The `hermes memory` command.
 * @returns The `entries` command.
 *
 * @example Attaching the subcommand
 * ```ts
 * import { createCommand, memoryCliIo } from "@hermes/memory/cli";
 * import { registerMemoryEntries } from "./memory_entries.ts";
 * import assert from "node:assert/strict";
 * const memory = createCommand("memory", { io: memoryCliIo(), exitCode: 0 });
 * assert.equal(registerMemoryEntries(memory).name(), "entries");
 * ```
 */
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
  list.action((opts: EntriesListOptions) => {
    // `hermes memory entries bogus` reaches the default command.
    const [word] = list.args;
    if (word !== undefined) entries.unknownSubcommand(word);
    return runMemoryEntriesList(opts, list.context.io);
  });

  const add = entries.command("add")
    .argument("<text>", "The new entry")
    .summary("Add one entry")
    .description("Add one entry to MEMORY.md (or USER.md with --target user).")
    .choiceOption(...TARGET_OPTION)
    .option("--json", "Print the memory tool's result as JSON", false);
  add.action((text: string, opts: { target: MemoryTarget; json: boolean }) =>
    runMemoryEntriesChange(
      { action: "add", target: opts.target, content: text },
      opts,
      add.context.io,
    )
  );

  const replace = entries.command("replace")
    .argument("<number>", "The entry's number")
    .argument("<text>", "The complete new entry")
    .summary("Replace one entry")
    .description("Replace entry <number> with <text> (the whole entry).")
    .choiceOption(...TARGET_OPTION)
    .option("--json", "Print the memory tool's result as JSON", false);
  replace.action((
    raw: string,
    text: string,
    opts: { target: MemoryTarget; json: boolean },
  ) =>
    runMemoryEntriesChange(
      {
        action: "replace",
        target: opts.target,
        number: entryNumber(replace, raw),
        content: text,
      },
      opts,
      replace.context.io,
    )
  );

  const remove = entries.command("remove")
    .argument("<number>", "The entry's number")
    .summary("Remove one entry")
    .description("Remove entry <number>.")
    .choiceOption(...TARGET_OPTION)
    .option("--json", "Print the memory tool's result as JSON", false);
  remove.action((raw: string, opts: { target: MemoryTarget; json: boolean }) =>
    runMemoryEntriesChange(
      {
        action: "remove",
        target: opts.target,
        number: entryNumber(remove, raw),
      },
      opts,
      remove.context.io,
    )
  );
  return entries;
}
