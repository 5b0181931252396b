/**
 * `hermes honcho migrate`: the six steps from OpenClaw memory to Honcho
 * (plugins/memory/honcho/SPEC.md §12); `_seed.ts` sends nothing twice.
 * @module
 */

import { join, resolve } from "../../../../src/provider/_bundled.ts";
import { getUserHome, maskSecret } from "../../../../mod.ts";
import {
  type CliIo,
  columns,
  type HermesCommand,
} from "../../../../src/cli/mod.ts";
import type { HonchoConfig } from "../config/config.ts";
import { isLocalHonchoUrl } from "../client/connection.ts";
import { isHonchoError } from "../client/errors.ts";
import { resolveAiPeerId } from "../session/peers.ts";
import { HONCHO_TOOL_NAMES } from "../tools.ts";
import {
  describeHonchoFailure,
  HonchoCliError,
  type HonchoCliScope,
  loadScopeConfig,
  readProblem,
  requireReadableConfig,
  serverLabel,
} from "./_common.ts";
import { scopedAction } from "./_action.ts";
import { cliSessionName } from "./_session_name.ts";
import {
  AGENT_IDENTITY_FILES,
  openSeedTarget,
  seedAiIdentity,
  type SeedResult,
  type SeedTarget,
  uploadUserMemoryFile,
  USER_MEMORY_FILES,
} from "./_seed.ts";
import { sourceText } from "./setting_commands.ts";
import { runSetup } from "./setup.ts";
import { sanitizeId } from "../_util.ts";

interface MigrateOptions {
  yes?: boolean;
  skipUpload?: boolean;
  skipIdentity?: boolean;
  dir?: string[];
}

/** `user` files go to the user peer, `agent` ones seed the AI peer. */
interface FoundMemoryFile {
  name: string;
  path: string;
  content: string;
  kind: "user" | "agent";
}

/** The non-empty OpenClaw memory files in each directory, and what could not be read. */
async function findMemoryFiles(
  dirs: readonly string[],
): Promise<{ files: FoundMemoryFile[]; problems: string[] }> {
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

interface SendStep {
  title: string;
  files: readonly FoundMemoryFile[];
  none: string;
  /** The flag that skips the step, when given. */
  skippedBy?: string | false;
  /** Why the step cannot run (a failure), when it cannot. */
  blocked?: string;
  question: string;
  declined: string;
  verb: "uploaded" | "seeded";
  /** The result and the line saying it was sent. */
  send: (file: FoundMemoryFile) => Promise<[SeedResult, string]>;
}

/** Step 3 or 4: how many were not sent; after a refused key or no connection, all the rest. */
async function sendStep(
  io: CliIo,
  options: MigrateOptions,
  url: string,
  connected: () => boolean,
  step: SendStep,
): Promise<number> {
  const { files, verb, send } = step;
  io.stdout(`\n${step.title}\n`);
  if (files.length === 0 || step.skippedBy) {
    io.stdout(
      `  ${files.length === 0 ? step.none : `Skipped (${step.skippedBy}).`}\n`,
    );
    return 0;
  }
  if (step.blocked) {
    io.stderr(`warning: ${step.blocked}\n`);
    return 1;
  }
  if (
    !options.yes &&
    !await io.prompts.confirm({ message: step.question, default: true })
  ) {
    io.stdout(`  ${step.declined}\n`);
    return 0;
  }
  let failed = 0;
  for (const [index, file] of files.entries()) {
    try {
      const [result, sent] = await send(file);
      io.stdout(
        result.status === "sent"
          ? `  ${sent}\n`
          : `  already ${verb} ${file.path} (${result.entry.at}); skipped\n`,
      );
    } catch (error) {
      failed++;
      io.stderr(
        `warning: ${file.path} not ${verb}: ${
          describeHonchoFailure(error, url)
        }\n`,
      );
      if (isHonchoError(error, "auth") || !connected()) {
        return failed + files.length - index - 1;
      }
    }
  }
  return failed;
}

/** `0`; `1` when Honcho is not set up or a file was not sent; `2` when it would have to ask without a terminal. */
async function runMigrate(
  scope: HonchoCliScope,
  options: MigrateOptions,
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

  io.stdout("\nStep 2/6: OpenClaw memory files\n");
  const home = getUserHome();
  const dirs = options.dir && options.dir.length > 0
    ? options.dir.map((d) => resolve(scope.cwd, d))
    : home
    ? [scope.cwd, join(home, ".openclaw")]
    : [scope.cwd];
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
  const connect = async (): Promise<SeedTarget> =>
    target ??= await openSeedTarget(
      config,
      session.sessionId,
      scope.hermesHome,
    );
  const url = serverLabel(config);
  const connected = () => target !== undefined;

  failures += await sendStep(io, options, url, connected, {
    title: "Step 3/6: Upload user memory to the user peer",
    files: userFiles,
    none: "No user memory files to upload.",
    skippedBy: options.skipUpload && "--skip-upload",
    blocked: config.peerName
      ? undefined
      : "user memory not uploaded: no user peer is configured; set one with 'hermes honcho peer --user NAME' and run migrate again",
    question: `Upload ${
      userFiles.map((f) => f.name).join(", ")
    } to user peer '${sanitizeId(config.peerName ?? "")}' now?`,
    declined: "Not uploaded (you can run 'hermes honcho migrate' again later).",
    verb: "uploaded",
    send: async (file) => {
      const spec = USER_MEMORY_FILES.find((f) => f.file === file.name)!;
      const result = await uploadUserMemoryFile(
        await connect(),
        spec,
        file.path,
        file.content,
      );
      const count = result.entry.messageIds.length;
      return [
        result,
        `uploaded ${file.path} as ${spec.uploadName} (${count} message${
          count === 1 ? "" : "s"
        })`,
      ];
    },
  });

  failures += await sendStep(io, options, url, connected, {
    title: "Step 4/6: Seed the AI peer's identity",
    files: agentFiles,
    none: "No agent files to seed.",
    skippedBy: options.skipIdentity && "--skip-identity",
    question: `Seed ${agentFiles.map((f) => f.name).join(", ")} into AI peer '${
      resolveAiPeerId(config)
    }' now?`,
    declined: "Not seeded (run 'hermes honcho identity <file>' any time).",
    verb: "seeded",
    send: async (file) => [
      await seedAiIdentity(await connect(), file.path, file.content, false),
      `seeded ${file.path}`,
    ],
  });

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
    throw new HonchoCliError(
      `${failures} file(s) were not sent; fix the problem above and run 'hermes honcho migrate' again (files already sent are skipped)`,
    );
  }
  return 0;
}

function printAccount(io: CliIo, config: HonchoConfig): void {
  const key = config.apiKey
    ? `${maskSecret(config.apiKey)} (${sourceText(config.sources.apiKey)})`
    : isLocalHonchoUrl(serverLabel(config))
    ? "(none: a local server gets the placeholder key)"
    : "(none)";
  io.stdout(columns([
    ["Server", serverLabel(config)],
    ["API key", key],
    ["Workspace", config.workspaceId],
    ["User peer", config.peerName ? sanitizeId(config.peerName) : "(none)"],
    ["AI peer", resolveAiPeerId(config)],
  ], 2));
}

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
  return scopedAction(honcho, command, runMigrate);
}
