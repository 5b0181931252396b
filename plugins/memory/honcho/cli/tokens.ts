/**
 * `hermes honcho tokens [--context N|uncapped] [--dialectic N]`: shows the
 * injection budget (`contextTokens`) and the dialectic cap
 * (`dialecticMaxChars`), or sets them in the host block.
 *
 * @module
 */

import type { HermesCommand } from "../../../../src/cli/mod.ts";
import {
  HonchoCliError,
  type HonchoCliScope,
  hostLabel,
  loadScopeConfig,
  printJson,
  resolveScope,
  runGuarded,
  targetProfileOf,
} from "./_common.ts";
import { printSaved, sourceText, writeHostSettings } from "./_host_setting.ts";

/** Options of {@linkcode runTokens}. */
export interface TokensOptions {
  /** `contextTokens`: a positive integer, or `uncapped`/`0` to remove the cap. */
  context?: string;
  /** `dialecticMaxChars`: a positive integer. */
  dialectic?: string;
  /**
   * Show the settings as JSON: `{ hostKey, contextTokens: { value, source
   * }, dialecticMaxChars: { value, source } }` (`value` `null` = uncapped).
   */
  json?: boolean;
}

const MAX_TOKENS = 1_000_000;

/**
 * Parses a positive whole number given on the command line.
 *
 * @param flag The flag, for the message.
 * @param text The value.
 * @returns The number.
 * @throws {HonchoCliError} When it is not a whole number from 1 to 1000000 (exit 2).
 *
 * @example
 * ```ts
 * import { parsePositiveInt } from "./tokens.ts";
 * import assert from "node:assert/strict";
 * assert.equal(parsePositiveInt("--context", "1200"), 1200);
 * assert.throws(() => parsePositiveInt("--context", "-3"));
 * ```
 */
export function parsePositiveInt(flag: string, text: string): number {
  const trimmed = text.trim();
  const n = /^\d+$/.test(trimmed) ? Number(trimmed) : Number.NaN;
  if (!Number.isSafeInteger(n) || n < 1 || n > MAX_TOKENS) {
    throw new HonchoCliError(
      `Cannot use ${flag} '${text}': give a whole number from 1 to ${MAX_TOKENS}${
        flag === "--context" ? ", or 'uncapped'" : ""
      }`,
      2,
    );
  }
  return n;
}

/**
 * Runs `hermes honcho tokens`.
 *
 * @param scope The profile and files.
 * @param options The values to set; shows the current ones when empty.
 * @returns `0`, `1` when the file cannot be written, `2` for an invalid value.
 *
 * @example
 * ```ts ignore
 * import { memoryCliIo } from "@hermes/memory/cli";
 * import { resolveScope } from "./_common.ts";
 * import { runTokens } from "./tokens.ts";
 * await runTokens(resolveScope(memoryCliIo()), { context: "1200" });
 * ```
 */
export async function runTokens(
  scope: HonchoCliScope,
  options: TokensOptions,
): Promise<number> {
  const { io } = scope;
  const config = await loadScopeConfig(scope);
  const label = hostLabel(config.hostKey);
  const show = options.context === undefined &&
    options.dialectic === undefined;
  if (options.json && !show) {
    throw new HonchoCliError(
      "--json shows the settings; leave out --context and --dialectic, or drop --json to set them",
      2,
    );
  }
  if (show && options.json) {
    const uncapped = config.contextTokens === undefined ||
      config.contextTokens <= 0;
    printJson(io, {
      hostKey: config.hostKey,
      contextTokens: {
        value: uncapped ? null : config.contextTokens,
        source: config.sources.contextTokens,
      },
      dialecticMaxChars: {
        value: config.dialecticMaxChars,
        source: config.sources.dialecticMaxChars,
      },
    });
    return 0;
  }
  if (show) {
    io.stdout(
      `${label}Context budget:  ${
        // 0 (what 'uncapped' writes) and below cap nothing, as in Hermes.
        config.contextTokens === undefined || config.contextTokens <= 0
          ? "uncapped"
          : `${config.contextTokens} tokens`} (contextTokens, ${
        sourceText(config.sources.contextTokens)
      })\n`,
    );
    io.stdout(
      `${label}Dialectic cap:   ${config.dialecticMaxChars} characters (dialecticMaxChars, ${
        sourceText(config.sources.dialecticMaxChars)
      })\n`,
    );
    io.stdout(
      "Set them with 'hermes honcho tokens --context N|uncapped --dialectic N'.\n",
    );
    return 0;
  }
  const host: Record<string, unknown> = {};
  let contextText: string | undefined;
  let uncapped = false;
  if (options.context !== undefined) {
    const text = options.context.trim().toLowerCase();
    if (text === "uncapped" || text === "0" || text === "none") {
      uncapped = true;
      contextText = "uncapped";
    } else {
      host.contextTokens = parsePositiveInt("--context", options.context);
      contextText = `${host.contextTokens} tokens`;
    }
  }
  if (options.dialectic !== undefined) {
    host.dialecticMaxChars = parsePositiveInt("--dialectic", options.dialectic);
  }
  const written = await writeHostSettings(
    scope,
    config,
    (_block, file) =>
      uncapped
        // A root value would still apply once the host key is gone: pin 0
        // (decided on the file as it is inside the lock).
        ? { ...host, contextTokens: file.contextTokens != null ? 0 : undefined }
        : host,
  );
  if (contextText !== undefined) {
    io.stdout(`${label}Context budget set to ${contextText}\n`);
  }
  if (host.dialecticMaxChars !== undefined) {
    io.stdout(
      `${label}Dialectic cap set to ${host.dialecticMaxChars} characters\n`,
    );
  }
  printSaved(io, written);
  return 0;
}

/**
 * Attaches `tokens` to the `honcho` command.
 *
 * @param honcho The `hermes honcho` command.
 * @returns The `tokens` command.
 *
 * @example
 * ```ts
 * import { createCommand, memoryCliIo } from "@hermes/memory/cli";
 * import { registerTokens } from "./tokens.ts";
 * import assert from "node:assert/strict";
 * const honcho = createCommand("honcho", { io: memoryCliIo(), exitCode: 0 });
 * assert.equal(registerTokens(honcho).name(), "tokens");
 * ```
 */
export function registerTokens(honcho: HermesCommand): HermesCommand {
  const command = honcho.command("tokens")
    .summary("Show or set the context budget and the dialectic cap")
    .description(
      "Show or set the injection budget (contextTokens; default uncapped) and\n" +
        "the cap on injected dialectic text (dialecticMaxChars; default 600) in\n" +
        "this profile's host block.",
    )
    .option(
      "--context <n>",
      "contextTokens: tokens per injection, or 'uncapped'",
    )
    .option(
      "--dialectic <n>",
      "dialecticMaxChars: characters of dialectic text",
    )
    .option("--json", "Show the settings as JSON")
    .example("hermes honcho tokens")
    .example("hermes honcho tokens --context 1200 --dialectic 800")
    .example("hermes honcho tokens --context uncapped");
  command.action((opts: TokensOptions) => {
    const io = command.context.io;
    return runGuarded(io, () =>
      runTokens(
        resolveScope(io, { targetProfile: targetProfileOf(honcho) }),
        opts,
      ));
  });
  return command;
}
