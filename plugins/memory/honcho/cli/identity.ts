/** `hermes honcho identity [file] [--show] [--force]`. @module */

import { resolve } from "../../../../src/provider/_bundled.ts";
import type { HermesCommand } from "../../../../src/cli/mod.ts";
import { resolveAiPeerId } from "../session/peers.ts";
import {
  describeHonchoFailure,
  HonchoCliError,
  type HonchoCliScope,
  hostLabel,
  loadScopeConfig,
  readProblem,
  serverLabel,
} from "./_common.ts";
import { scopedAction } from "./_action.ts";
import { fetchMemoryView, printMemoryView } from "./_memory_view.ts";
import { cliSessionName } from "./_session_name.ts";
import { openSeedTarget, seedAiIdentity } from "./_seed.ts";

async function readSeedFile(path: string): Promise<string> {
  const fail = (why: string) =>
    new HonchoCliError(`Cannot seed from ${path}: ${why}`);
  const text = await Deno.readTextFile(path).catch((error) => {
    throw fail(
      error instanceof Deno.errors.NotFound
        ? "the file does not exist"
        : readProblem(error, path),
    );
  });
  if (text.trim() === "") throw fail("the file is empty");
  return text;
}

/** `0`; `1` when not configured, the file is unusable or Honcho failed; `2` without a file or `--show`. */
async function runIdentity(
  scope: HonchoCliScope,
  file: string | undefined,
  options: { show?: boolean; force?: boolean },
): Promise<number> {
  const { io } = scope;
  if (file === undefined && !options.show) {
    throw new HonchoCliError(
      "Give an identity file to seed the AI peer (hermes honcho identity SOUL.md) or --show to print what Honcho knows",
      2,
    );
  }
  const config = await loadScopeConfig(scope);
  if (!config.apiKey && !config.baseUrl) {
    throw new HonchoCliError(
      `Honcho is not configured: no API key or base URL (${config.configPath}, HONCHO_API_KEY, HONCHO_BASE_URL); run 'hermes honcho setup'`,
    );
  }
  const label = hostLabel(config.hostKey);
  if (file !== undefined) {
    const path = resolve(scope.cwd, file);
    const content = await readSeedFile(path);
    const url = serverLabel(config);
    const session = await cliSessionName(config, scope.cwd);
    try {
      const target = await openSeedTarget(
        config,
        session.sessionId,
        scope.hermesHome,
      );
      const result = await seedAiIdentity(
        target,
        path,
        content,
        Boolean(options.force),
      );
      const aiPeer = resolveAiPeerId(config);
      if (result.status === "already-sent") {
        io.stdout(
          `${label}${result.entry.file} was already seeded into AI peer '${aiPeer}' (${result.entry.at}); nothing sent (--force seeds it again)\n`,
        );
      } else {
        io.stdout(
          `${label}Seeded AI peer '${aiPeer}' with ${result.entry.file} (${result.entry.messageIds.length} message${
            result.entry.messageIds.length === 1 ? "" : "s"
          }, session ${session.sessionId}, workspace ${target.client.workspaceId})\n`,
        );
      }
    } catch (error) {
      if (error instanceof HonchoCliError) throw error;
      throw new HonchoCliError(
        `Cannot seed the AI peer: ${describeHonchoFailure(error, url)}`,
      );
    }
  }
  if (!options.show) return 0;
  if (file !== undefined) io.stdout("\n");
  io.stdout(`${label}What Honcho knows (workspace ${config.workspaceId}):\n`);
  const view = await fetchMemoryView(config);
  printMemoryView(io, view, {
    maxFacts: Number.POSITIVE_INFINITY,
    maxRepresentationChars: 4000,
  });
  return view.ok ? 0 : 1;
}

export function registerIdentity(honcho: HermesCommand): HermesCommand {
  const command = honcho.command("identity")
    .argument("[file]", "Identity file to seed into the AI peer (e.g. SOUL.md)")
    .summary("Seed the AI peer from a file, or show what Honcho knows")
    .description(
      "Seed this profile's AI peer with an identity file: one <ai_identity_seed>\n" +
        "message authored by the AI peer, in the session of this directory. The\n" +
        "same content is sent once (recorded in $HERMES_HOME/state/\n" +
        "honcho_migration.json); --force sends it again. --show prints the user\n" +
        "card and the AI representation.",
    )
    .option("--show", "Print the user card and the AI representation", false)
    .option("--force", "Seed even if this content was seeded before", false)
    .example("hermes honcho identity SOUL.md")
    .example("hermes honcho identity --show");
  return scopedAction(honcho, command, runIdentity);
}
