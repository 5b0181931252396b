// `hermes memory reset [--target all|memory|user] [--yes|-y]`: deletes the
// built-in store's files (`.lock` and `.bak.*` siblings stay). Wording
// follows Hermes.

import { basename } from "../../_util/path.ts";
import { type CliIo, PromptCancelled } from "../cli_io.ts";
import type { HermesCommand } from "../hermes_command.ts";
import { getHermesHome } from "../../profile/hermes_home.ts";
import {
  memoryFilePaths,
  resetMemoryFiles,
  type ResetTarget,
} from "../../builtin/memory_files.ts";
import { formatThousands } from "../../builtin/memory_format.ts";
import type { MemoryTarget } from "../../core/memory_provider.ts";
import { readActiveProvider } from "../_provider_list.ts";
import { ioAction, writeJson } from "../format.ts";
import { TARGET_DESCRIPTIONS } from "../builtin_entries.ts";
import { unlessMissing } from "../../io/atomic_write.ts";

/** Exits 1 when cancelled. */
async function runMemoryReset(
  io: CliIo,
  options: { target: ResetTarget; yes: boolean; json?: boolean },
): Promise<number> {
  const target = options.target;
  const home = getHermesHome();
  const paths = memoryFilePaths(home);
  const selected: MemoryTarget[] = target === "all"
    ? ["memory", "user"]
    : [target];

  const found: { target: MemoryTarget; path: string; bytes: number }[] = [];
  // `MEMORY.md (agent notes)`: how the listing and the result name a file.
  const label = (f: (typeof found)[number]) =>
    `${basename(f.path)} (${TARGET_DESCRIPTIONS[f.target]})`;
  for (const t of selected) {
    const info = await unlessMissing(Deno.lstat(paths[t]));
    if (info) found.push({ target: t, path: paths[t], bytes: info.size });
  }
  const provider = await readActiveProvider();
  const json = options.json === true;
  const report = (deleted: string[], cancelled: boolean): void => {
    const kept = found.map((f) => basename(f.path))
      .filter((f) => !deleted.includes(f));
    const untouched = provider === null ? null : { provider };
    const memoryDir = paths.dir;
    writeJson(io, { memoryDir, target, deleted, kept, cancelled, untouched });
  };
  if (found.length === 0) {
    if (json) report([], false);
    else {io.stdout(
        `Nothing to reset \u2014 no memory files found in ${paths.dir}/\n`,
      );}
    return 0;
  }

  if (!json) {
    io.stdout("This will permanently erase the following memory files:\n");
    for (const file of found) {
      io.stdout(
        `  \u25c6 ${label(file)} \u2014 ${formatThousands(file.bytes)} bytes\n`,
      );
    }
    io.stdout("\n");
  }

  if (!options.yes) {
    if (json || !io.stdinIsTerminal) {
      io.stderr(
        json
          ? "error: --json cannot ask for confirmation; re-run with --yes to erase these files\n"
          : "error: standard input is not a terminal, so the erase cannot be confirmed; re-run with --yes to erase these files\n",
      );
      if (json) report([], true);
      else io.stdout("Cancelled.\n");
      return 1;
    }
    const answer = await io.prompts.line("Type 'yes' to confirm: ").catch(
      (error) => {
        if (error instanceof PromptCancelled) return "";
        throw error;
      },
    );
    if (answer.trim().toLowerCase() !== "yes") {
      io.stdout("Cancelled.\n");
      return 1;
    }
  }

  const deleted = new Set(await resetMemoryFiles(home, target));
  const names = found.filter((f) => deleted.has(f.path)).map((f) =>
    basename(f.path)
  );
  if (json) {
    report(names, false);
    return 0;
  }
  for (const file of found) {
    if (deleted.has(file.path)) {
      io.stdout(`  \u2713 Deleted ${label(file)}\n`);
    }
  }
  const left = target === "all"
    ? ""
    : ` ${basename(paths[target === "memory" ? "user" : "memory"])} was kept.`;
  io.stdout(
    `\nMemory reset complete. Erased ${
      names.join(" and ")
    }: new sessions start without ${
      names.length === 1 ? "it" : "them"
    }.${left}\n`,
  );
  if (provider !== null) {
    io.stdout(
      `Not reset: what memory provider '${provider}' stored (its own files or server); this command erases only the built-in MEMORY.md / USER.md, so new sessions still recall it.\n`,
    );
  }
  io.stdout(`Files were in: ${paths.dir}/\n`);
  return 0;
}

export function registerMemoryReset(memory: HermesCommand): HermesCommand {
  const command = memory.command("reset")
    .summary("Erase the built-in MEMORY.md / USER.md files")
    .description(
      "Erase the built-in memory files of the active profile (MEMORY.md: agent notes,\n" +
        "USER.md: user profile). Files are deleted; running sessions keep the snapshot\n" +
        "they loaded. Asks for 'yes' unless --yes is given; without a terminal,\n" +
        "--yes is required.",
    )
    .choiceOption(
      "-t, --target <target>",
      "Which files to erase",
      ["all", "memory", "user"],
      "all",
    )
    .option("-y, --yes", "Erase without asking for confirmation", false)
    .option("--json", "Print what was erased and kept as JSON (needs --yes)")
    .example("hermes memory reset")
    .example("hermes memory reset --target user --yes")
    .example("hermes memory reset --yes --json");
  return ioAction(command, runMemoryReset);
}
