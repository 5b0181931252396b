/**
 * `hermes honcho identity [file] [--show] [--force]`: seeds the AI peer
 * with an identity file (an `<ai_identity_seed>` message authored by the AI
 * peer, once per content), or shows the user card and the AI
 * representation.
 *
 * @module
 */

import { resolve } from "node:path";
import type { HermesCommand } from "../../../../src/cli/mod.ts";
import type { HonchoConfig } from "../config.ts";
import { resolveAiPeerId } from "../peers.ts";
import {
  connectHoncho,
  describeHonchoFailure,
  errorText,
  HonchoCliError,
  type HonchoCliScope,
  hostLabel,
  loadScopeConfig,
  resolveScope,
  runGuarded,
  serverLabel,
  targetProfileOf,
} from "./_common.ts";
import { fetchMemoryView, printMemoryView } from "./_memory_view.ts";
import { cliSessionName } from "./_session_name.ts";
import { ensureSeedSession, seedAiIdentity } from "./_seed.ts";

/** Options of {@linkcode runIdentity}. */
export interface IdentityOptions {
  /** Print the user card and the AI representation. @default {false} */
  show?: boolean;
  /** Seed even when this content was seeded before. @default {false} */
  force?: boolean;
}

/**
 * Refuses when Honcho has no API key and no base URL.
 *
 * @param config The resolved configuration.
 * @throws {HonchoCliError} When neither is configured.
 *
 * @example
 * ```ts
 * import { requireConnection } from "./identity.ts";
 * import assert from "node:assert/strict";
 * assert.throws(() => requireConnection({ apiKey: undefined, baseUrl: undefined, configPath: "/h/honcho.json" }));
 * ```
 */
export function requireConnection(
  config: Pick<HonchoConfig, "apiKey" | "baseUrl" | "configPath">,
): void {
  if (config.apiKey || config.baseUrl) return;
  throw new HonchoCliError(
    `Honcho is not configured: no API key or base URL (${config.configPath}, HONCHO_API_KEY, HONCHO_BASE_URL); run 'hermes honcho setup'`,
  );
}

/**
 * Reads a text file for seeding; fails with a message naming the file when
 * it is missing, unreadable or empty.
 *
 * @param path The file.
 * @returns Its text.
 * @throws {HonchoCliError} When it cannot be used.
 *
 * @example
 * ```ts no-assert
 * import { readSeedFile } from "./identity.ts";
 * const text = await readSeedFile("SOUL.md");
 * ```
 */
export async function readSeedFile(path: string): Promise<string> {
  let text: string;
  try {
    text = await Deno.readTextFile(path);
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) {
      throw new HonchoCliError(
        `Cannot seed from ${path}: the file does not exist`,
      );
    }
    if (error instanceof Error && error.name === "NotCapable") {
      throw new HonchoCliError(
        `Cannot seed from ${path}: no read permission (grant --allow-read=${path})`,
      );
    }
    throw new HonchoCliError(`Cannot seed from ${path}: ${errorText(error)}`);
  }
  if (text.trim() === "") {
    throw new HonchoCliError(`Cannot seed from ${path}: the file is empty`);
  }
  return text;
}

/**
 * Runs `hermes honcho identity`.
 *
 * @param scope The profile and files.
 * @param file The identity file to seed, if any.
 * @param options `--show`, `--force`.
 * @returns `0`; `1` when not configured, the file is unusable or Honcho
 * failed; `2` when neither a file nor `--show` is given.
 */
export async function runIdentity(
  scope: HonchoCliScope,
  file: string | undefined,
  options: IdentityOptions = {},
): Promise<number> {
  const { io } = scope;
  if (file === undefined && !options.show) {
    throw new HonchoCliError(
      "Give an identity file to seed the AI peer (hermes honcho identity SOUL.md) or --show to print what Honcho knows",
      2,
    );
  }
  const config = await loadScopeConfig(scope);
  requireConnection(config);
  const label = hostLabel(config.hostKey);
  let code = 0;
  if (file !== undefined) {
    const path = resolve(scope.cwd, file);
    const content = await readSeedFile(path);
    const url = serverLabel(config);
    const session = await cliSessionName(config, scope.cwd);
    try {
      const client = await connectHoncho(config);
      const target = {
        client,
        config,
        sessionId: session.sessionId,
        hermesHome: scope.hermesHome,
      };
      await ensureSeedSession(target);
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
          }, session ${session.sessionId}, workspace ${client.workspaceId})\n`,
        );
      }
    } catch (error) {
      if (error instanceof HonchoCliError) throw error;
      throw new HonchoCliError(
        `Cannot seed the AI peer: ${describeHonchoFailure(error, url)}`,
      );
    }
  }
  if (options.show) {
    if (file !== undefined) io.stdout("\n");
    io.stdout(`${label}What Honcho knows (workspace ${config.workspaceId}):\n`);
    const view = await fetchMemoryView(config);
    printMemoryView(io, view, {
      maxFacts: Number.POSITIVE_INFINITY,
      maxRepresentationChars: 4000,
    });
    if (!view.ok) code = 1;
  }
  return code;
}

/**
 * Attaches `identity` to the `honcho` command.
 *
 * @param honcho The `hermes honcho` command.
 * @returns The `identity` command.
 *
 * @example
 * ```ts
 * import { createCommand, memoryCliIo } from "@hermes/memory/cli";
 * import { registerIdentity } from "./identity.ts";
 * import assert from "node:assert/strict";
 * const honcho = createCommand("honcho", { io: memoryCliIo(), exitCode: 0 });
 * assert.equal(registerIdentity(honcho).name(), "identity");
 * ```
 */
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
  command.action((file: string | undefined, opts: IdentityOptions) => {
    const io = command.context.io;
    return runGuarded(io, () =>
      runIdentity(
        resolveScope(io, { targetProfile: targetProfileOf(honcho) }),
        file,
        opts,
      ));
  });
  return command;
}
