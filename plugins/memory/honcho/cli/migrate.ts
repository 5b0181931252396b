/**
 * `hermes honcho migrate`: the six-step walkthrough from OpenClaw memory
 * (openclaw-honcho or OpenClaw's native `USER.md`/`MEMORY.md`/`SOUL.md` …)
 * to Hermes' Honcho provider (plugins/memory/honcho/SPEC.md §12):
 *
 * 1. account (the masked key, or an offer to run setup);
 * 2. detection of the memory files in the working directory and
 *    `~/.openclaw/` (or `--dir`);
 * 3. upload of the user memory files to the user peer;
 * 4. seeding of the agent files into the AI peer;
 * 5. what differs in Hermes;
 * 6. next steps.
 *
 * Steps 3 and 4 ask first (or follow `--yes`, `--skip-upload`,
 * `--skip-identity`) and are idempotent: what was sent is recorded in
 * `$HERMES_HOME/state/honcho_migration.json` and tagged on the server.
 *
 * @module
 */

import { join, resolve } from "node:path";
import { getUserHome, maskSecret } from "../../../../mod.ts";
import type { CliIo, HermesCommand } from "../../../../src/cli/mod.ts";
import type { HonchoConfig } from "../config.ts";
import { isLocalHonchoUrl } from "../connection.ts";
import { isHonchoError } from "../errors.ts";
import { resolveAiPeerId } from "../peers.ts";
import { sanitizeId } from "../session_naming.ts";
import { HONCHO_TOOL_NAMES } from "../tools.ts";
import {
  connectHoncho,
  describeHonchoFailure,
  errorText,
  HonchoCliError,
  type HonchoCliScope,
  loadScopeConfig,
  requireReadableConfig,
  resolveScope,
  runGuarded,
  serverLabel,
  targetProfileOf,
} from "./_common.ts";
import { cliSessionName } from "./_session_name.ts";
import {
  AGENT_IDENTITY_FILES,
  ensureSeedSession,
  seedAiIdentity,
  type SeedTarget,
  uploadUserMemoryFile,
  USER_MEMORY_FILES,
} from "./_seed.ts";
import { runSetup } from "./setup.ts";

/** Options of {@linkcode runMigrate}. */
export interface MigrateOptions {
  /** Answer yes to every step (upload and seed). @default {false} */
  yes?: boolean;
  /** Do not upload user memory files (step 3). @default {false} */
  skipUpload?: boolean;
  /** Do not seed agent files (step 4). @default {false} */
  skipIdentity?: boolean;
  /** Directories to look in instead of the working directory and `~/.openclaw/`. */
  dir?: string[];
}

/** A memory file found on disk. */
export interface FoundMemoryFile {
  /** The file name (`USER.md`). */
  name: string;
  /** The absolute path. */
  path: string;
  /** Its text. */
  content: string;
  /** `user` (uploaded to the user peer) or `agent` (seeded into the AI peer). */
  kind: "user" | "agent";
}

/** What {@linkcode findMemoryFiles} found. */
export interface MemoryFileScan {
  /** Non-empty memory files, by directory then name. */
  files: FoundMemoryFile[];
  /** Directories that could not be read, with the reason. */
  problems: string[];
}

/**
 * Looks for OpenClaw memory files in each directory: user files `USER.md`,
 * `MEMORY.md`; agent files `SOUL.md`, `IDENTITY.md`, `AGENTS.md`,
 * `TOOLS.md`, `BOOTSTRAP.md`. Empty files are skipped.
 *
 * @param dirs The directories (duplicates are read once).
 * @returns The files found and the directories that could not be read.
 *
 * @example
 * ```ts no-assert
 * import { findMemoryFiles } from "./migrate.ts";
 * const { files } = await findMemoryFiles([Deno.cwd()]);
 * ```
 */
export async function findMemoryFiles(
  dirs: readonly string[],
): Promise<MemoryFileScan> {
  const files: FoundMemoryFile[] = [];
  const problems: string[] = [];
  const names: [string, "user" | "agent"][] = [
    ...USER_MEMORY_FILES.map((f): [string, "user"] => [f.file, "user"]),
    ...AGENT_IDENTITY_FILES.map((f): [string, "agent"] => [f, "agent"]),
  ];
  for (const dir of [...new Set(dirs.map((d) => resolve(d)))]) {
    try {
      const info = await Deno.stat(dir);
      if (!info.isDirectory) {
        problems.push(`${dir}: not a directory`);
        continue;
      }
    } catch (error) {
      if (error instanceof Deno.errors.NotFound) continue;
      problems.push(`${dir}: ${readProblem(error, dir)}`);
      continue;
    }
    for (const [name, kind] of names) {
      const path = join(dir, name);
      let content: string;
      try {
        content = await Deno.readTextFile(path);
      } catch (error) {
        if (error instanceof Deno.errors.NotFound) continue;
        problems.push(`${path}: ${readProblem(error, dir)}`);
        continue;
      }
      if (content.trim() === "") continue;
      files.push({ name, path, content, kind });
    }
  }
  return { files, problems };
}

function readProblem(error: unknown, dir: string): string {
  if (error instanceof Error && error.name === "NotCapable") {
    return `no read permission (grant --allow-read=${dir})`;
  }
  return errorText(error);
}

/**
 * The directories `migrate` looks in by default: the working directory and
 * `~/.openclaw/`.
 *
 * @param cwd The working directory.
 * @returns The directories.
 *
 * @example
 * ```ts no-assert
 * import { defaultMigrationDirs } from "./migrate.ts";
 * const dirs = defaultMigrationDirs(Deno.cwd());
 * ```
 */
export function defaultMigrationDirs(cwd: string): string[] {
  const home = getUserHome();
  return home ? [cwd, join(home, ".openclaw")] : [cwd];
}

async function askStep(
  io: CliIo,
  options: MigrateOptions,
  message: string,
): Promise<boolean> {
  if (options.yes) return true;
  return await io.prompts.confirm({ message, default: true });
}

/**
 * Runs `hermes honcho migrate`.
 *
 * @param scope The profile and files.
 * @param options `--yes`, `--skip-upload`, `--skip-identity`, `--dir`.
 * @returns `0`; `1` when Honcho is not set up or a file could not be sent;
 * `2` when questions would be needed without a terminal.
 */
export async function runMigrate(
  scope: HonchoCliScope,
  options: MigrateOptions = {},
): Promise<number> {
  const { io } = scope;
  const needsQuestions = !options.yes &&
    !(options.skipUpload && options.skipIdentity);
  if (!io.stdinIsTerminal && needsQuestions) {
    throw new HonchoCliError(
      "standard input is not a terminal, so migrate cannot ask; re-run with --yes (and --skip-upload or --skip-identity to leave a step out)",
      2,
    );
  }
  let failures = 0;

  // 1. Account
  io.stdout("Step 1/6: Honcho account\n");
  let config = await loadScopeConfig(scope);
  requireReadableConfig(config);
  if (!config.apiKey && !config.baseUrl) {
    io.stdout("  Honcho is not set up for this profile yet.\n");
    if (
      !io.stdinIsTerminal || options.yes ||
      !(await io.prompts.confirm({
        message: "Run the setup now?",
        default: true,
      }))
    ) {
      throw new HonchoCliError(
        "Honcho is not set up: run 'hermes honcho setup' first, then 'hermes honcho migrate' (nothing was sent)",
      );
    }
    const code = await runSetup(scope, {});
    if (code !== 0) return code;
    config = await loadScopeConfig(scope);
  }
  printAccount(io, config);

  // 2. Detection
  io.stdout("\nStep 2/6: OpenClaw memory files\n");
  const dirs = options.dir && options.dir.length > 0
    ? options.dir.map((d) => resolve(scope.cwd, d))
    : defaultMigrationDirs(scope.cwd);
  io.stdout(`  Looking in: ${dirs.join(", ")}\n`);
  const scan = await findMemoryFiles(dirs);
  for (const problem of scan.problems) {
    io.stderr(`warning: cannot read ${problem}\n`);
  }
  const userFiles = scan.files.filter((f) => f.kind === "user");
  const agentFiles = scan.files.filter((f) => f.kind === "agent");
  if (scan.files.length === 0) {
    io.stdout(
      "  No memory files found (USER.md, MEMORY.md, SOUL.md, IDENTITY.md, AGENTS.md, TOOLS.md, BOOTSTRAP.md).\n",
    );
  }
  for (const file of scan.files) {
    io.stdout(
      `  ${
        file.kind === "user" ? "user " : "agent"
      }  ${file.path} (${file.content.length} characters)\n`,
    );
  }

  const session = await cliSessionName(config, scope.cwd);
  let target: SeedTarget | undefined;
  const connect = async (): Promise<SeedTarget> => {
    if (target) return target;
    const client = await connectHoncho(config);
    target = {
      client,
      config,
      sessionId: session.sessionId,
      hermesHome: scope.hermesHome,
    };
    await ensureSeedSession(target);
    return target;
  };
  const url = serverLabel(config);

  // 3. User memory upload
  io.stdout("\nStep 3/6: Upload user memory to the user peer\n");
  if (userFiles.length === 0) {
    io.stdout("  No user memory files to upload.\n");
  } else if (options.skipUpload) {
    io.stdout("  Skipped (--skip-upload).\n");
  } else if (!config.peerName) {
    io.stderr(
      "warning: user memory not uploaded: no user peer is configured; set one with 'hermes honcho peer --user NAME' and run migrate again\n",
    );
    failures++;
  } else if (
    await askStep(
      io,
      options,
      `Upload ${userFiles.map((f) => f.name).join(", ")} to user peer '${
        sanitizeId(config.peerName)
      }' now?`,
    )
  ) {
    for (const [index, file] of userFiles.entries()) {
      const spec = USER_MEMORY_FILES.find((f) => f.file === file.name)!;
      try {
        const result = await uploadUserMemoryFile(
          await connect(),
          spec,
          file.path,
          file.content,
        );
        io.stdout(
          result.status === "sent"
            ? `  uploaded ${file.path} as ${spec.uploadName} (${
              messageCount(result.entry.messageIds.length)
            })\n`
            : `  already uploaded ${file.path} (${result.entry.at}); skipped\n`,
        );
      } catch (error) {
        failures++;
        io.stderr(
          `warning: ${file.path} not uploaded: ${
            describeHonchoFailure(error, url)
          }\n`,
        );
        if (isHonchoError(error, "auth") || !target) {
          // Nothing else can succeed: count the rest as not sent.
          failures += userFiles.length - index - 1;
          break;
        }
      }
    }
  } else {
    io.stdout(
      "  Not uploaded (you can run 'hermes honcho migrate' again later).\n",
    );
  }

  // 4. AI identity seeding
  io.stdout("\nStep 4/6: Seed the AI peer's identity\n");
  if (agentFiles.length === 0) {
    io.stdout("  No agent files to seed.\n");
  } else if (options.skipIdentity) {
    io.stdout("  Skipped (--skip-identity).\n");
  } else if (
    await askStep(
      io,
      options,
      `Seed ${agentFiles.map((f) => f.name).join(", ")} into AI peer '${
        resolveAiPeerId(config)
      }' now?`,
    )
  ) {
    for (const [index, file] of agentFiles.entries()) {
      try {
        const result = await seedAiIdentity(
          await connect(),
          file.path,
          file.content,
          false,
        );
        io.stdout(
          result.status === "sent"
            ? `  seeded ${file.path}\n`
            : `  already seeded ${file.path} (${result.entry.at}); skipped\n`,
        );
      } catch (error) {
        failures++;
        io.stderr(
          `warning: ${file.path} not seeded: ${
            describeHonchoFailure(error, url)
          }\n`,
        );
        if (isHonchoError(error, "auth") || !target) {
          failures += agentFiles.length - index - 1;
          break;
        }
      }
    }
  } else {
    io.stdout("  Not seeded (run 'hermes honcho identity <file>' any time).\n");
  }

  // 5. Differences
  io.stdout("\nStep 5/6: What is different in Hermes\n");
  for (
    const line of [
      "Memory lives in Honcho (workspace, peers, sessions), not in local markdown files.",
      "Context is prepared in the background and injected on the next turn.",
      "Honcho keeps learning from every conversation; the user card and representation grow by themselves.",
      `The model gets five tools: ${HONCHO_TOOL_NAMES.join(", ")}.`,
      `Sessions are named by directory, repository or Hermes session ('hermes honcho strategy'); this directory uses '${session.sessionId}'.`,
    ]
  ) io.stdout(`  - ${line}\n`);

  // 6. Next steps
  io.stdout("\nStep 6/6: Next steps\n");
  for (
    const line of [
      "hermes honcho status            check the settings and the connection",
      "start a Hermes session          memory is injected from the first turn",
      "hermes honcho identity --show   see the user card and the AI representation",
      "hermes honcho tokens            tune the context budget",
      "hermes honcho mode              choose hybrid, context or tools recall",
    ]
  ) io.stdout(`  ${line}\n`);
  if (failures > 0) {
    io.stderr(
      `error: ${failures} file(s) were not sent; fix the problem above and run 'hermes honcho migrate' again (files already sent are skipped)\n`,
    );
    return 1;
  }
  return 0;
}

function printAccount(io: CliIo, config: HonchoConfig): void {
  const key = config.apiKey
    ? `${maskSecret(config.apiKey)} (${
      config.sources.apiKey === "host" ? "host block" : config.sources.apiKey
    })`
    : isLocalHonchoUrl(serverLabel(config))
    ? "(none: a local server gets the placeholder key)"
    : "(none)";
  io.stdout(`  Server     ${serverLabel(config)}\n`);
  io.stdout(`  API key    ${key}\n`);
  io.stdout(`  Workspace  ${config.workspaceId}\n`);
  io.stdout(
    `  User peer  ${
      config.peerName ? sanitizeId(config.peerName) : "(none)"
    }\n`,
  );
  io.stdout(`  AI peer    ${resolveAiPeerId(config)}\n`);
}

/**
 * Attaches `migrate` to the `honcho` command.
 *
 * @param honcho The `hermes honcho` command.
 * @returns The `migrate` command.
 *
 * @example
 * ```ts
 * import { createCommand, memoryCliIo } from "@hermes/memory/cli";
 * import { registerMigrate } from "./migrate.ts";
 * import assert from "node:assert/strict";
 * const honcho = createCommand("honcho", { io: memoryCliIo(), exitCode: 0 });
 * assert.equal(registerMigrate(honcho).name(), "migrate");
 * ```
 */
export function registerMigrate(honcho: HermesCommand): HermesCommand {
  const command = honcho.command("migrate")
    .summary("Walk through moving OpenClaw memory to Honcho (6 steps)")
    .description(
      "Move OpenClaw memory to Hermes' Honcho provider in six steps: account,\n" +
        "file detection (working directory and ~/.openclaw/), upload of USER.md and\n" +
        "MEMORY.md to the user peer, seeding of SOUL.md, IDENTITY.md, AGENTS.md,\n" +
        "TOOLS.md and BOOTSTRAP.md into the AI peer, what differs, next steps.\n" +
        "Steps 3 and 4 ask first. Running it again sends nothing twice (see\n" +
        "$HERMES_HOME/state/honcho_migration.json).",
    )
    .option("-y, --yes", "Upload and seed without asking", false)
    .option("--skip-upload", "Leave out step 3 (user memory upload)", false)
    .option("--skip-identity", "Leave out step 4 (AI identity seeding)", false)
    .option(
      "--dir <path>",
      "Look in this directory instead (repeatable)",
      (value: string, previous: string[]) => [...previous, value],
      [] as string[],
    )
    .example("hermes honcho migrate")
    .example("hermes honcho migrate --yes --dir ~/.openclaw")
    .example("hermes honcho migrate --yes --skip-identity");
  command.action((opts: MigrateOptions) => {
    const io = command.context.io;
    return runGuarded(io, () =>
      runMigrate(
        resolveScope(io, { targetProfile: targetProfileOf(honcho) }),
        opts,
      ));
  });
  return command;
}

function messageCount(count: number): string {
  return `${count} message${count === 1 ? "" : "s"}`;
}
