/**
 * `hermes honcho sessions` and `hermes honcho map [name]`: the root
 * `sessions` map from working directories to Honcho session names (a mapped
 * directory always uses its name, whatever the session strategy).
 *
 * @module
 */

import { resolve } from "node:path";
import { type HermesCommand, writeJson } from "../../../../src/cli/mod.ts";
import {
  HonchoCliError,
  type HonchoCliScope,
  isRecord,
  loadScopeConfig,
  reportWrite,
  requireReadableConfig,
  resolveScope,
  runGuarded,
  targetProfileOf,
  writeHonchoFile,
} from "./_common.ts";
import { cliSessionName, sanitizeMapName } from "./_session_name.ts";

/** Options of {@linkcode runSessions}. */
export interface SessionsOptions {
  /** Print JSON. @default {false} */
  json?: boolean;
}

/**
 * Runs `hermes honcho sessions`: lists the map, marking the working
 * directory with `←`, or prints a hint when it is empty.
 *
 * @param scope The profile and files.
 * @param options `--json`.
 * @returns `0`.
 */
export async function runSessions(
  scope: HonchoCliScope,
  options: SessionsOptions = {},
): Promise<number> {
  const { io } = scope;
  const config = await loadScopeConfig(scope);
  const cwd = resolve(scope.cwd);
  const entries = Object.entries(config.sessions).sort(([a], [b]) =>
    a.localeCompare(b)
  );
  const current = await cliSessionName(config, cwd);
  if (options.json) {
    writeJson(io, {
      configPath: config.configPath,
      cwd,
      current: {
        key: current.key,
        id: current.sessionId,
        rule: current.reason,
      },
      sessions: Object.fromEntries(entries),
    });
    return 0;
  }
  if (entries.length === 0) {
    io.stdout(
      `No directories are mapped to Honcho sessions in ${config.configPath}.\n`,
    );
    io.stdout(
      `This directory uses session '${current.sessionId}' (${current.reason}); map it with 'hermes honcho map NAME'.\n`,
    );
    return 0;
  }
  io.stdout(
    `Directory → Honcho session (root 'sessions' of ${config.configPath}):\n`,
  );
  const width = Math.max(...entries.map(([dir]) => dir.length));
  for (const [dir, name] of entries) {
    io.stdout(
      `  ${dir.padEnd(width)}  → ${name}${
        dir === cwd ? "  ← this directory" : ""
      }\n`,
    );
  }
  if (!Object.hasOwn(config.sessions, cwd)) {
    io.stdout(
      `This directory is not mapped; it uses '${current.sessionId}' (${current.reason}).\n`,
    );
  }
  return 0;
}

/** Options of {@linkcode runMap}. */
export interface MapOptions {
  /** Remove the working directory's entry instead of setting it. @default {false} */
  remove?: boolean;
}

/**
 * Runs `hermes honcho map [name]`: without a name lists the map; else
 * sanitises the name (each invalid character → `-`, outer `-` stripped;
 * says so when that changed it) and writes root `sessions[cwd] = name`.
 *
 * @param scope The profile and files.
 * @param name The session name.
 * @param options `--remove`.
 * @returns `0`, `1` when the file cannot be written, `2` for an empty name.
 */
export async function runMap(
  scope: HonchoCliScope,
  name: string | undefined,
  options: MapOptions = {},
): Promise<number> {
  const { io } = scope;
  const cwd = resolve(scope.cwd);
  if (name === undefined && !options.remove) return await runSessions(scope);
  const config = await loadScopeConfig(scope);
  requireReadableConfig(config);
  // The map is read inside the file's lock (writeHonchoFile's update), so
  // concurrent `map` commands in different directories all keep theirs.
  const sessionsOf = (file: Readonly<Record<string, unknown>>) => ({
    ...(isRecord(file.sessions) ? file.sessions : {}),
  });
  if (options.remove) {
    if (name !== undefined) {
      throw new HonchoCliError(
        "Cannot use a session name with --remove: run 'hermes honcho map --remove' in the mapped directory",
        2,
      );
    }
    const written = await writeHonchoFile(config, scope.hermesHome, (file) => {
      const sessions = sessionsOf(file);
      if (!Object.hasOwn(sessions, cwd)) return undefined;
      delete sessions[cwd];
      return { root: { sessions } };
    });
    if (!written.changed) {
      io.stdout(`${cwd} is not mapped; nothing to remove.\n`);
      return 0;
    }
    await reportWrite(scope, written);
    io.stdout(`Removed the mapping of ${cwd} from ${written.path}\n`);
    return 0;
  }
  const clean = sanitizeMapName(name ?? "");
  if (clean === "") {
    throw new HonchoCliError(
      `Cannot map to '${name}': a session name needs at least one letter, digit, '_' or '-'`,
      2,
    );
  }
  if (clean !== name) io.stdout(`Session name sanitized to: ${clean}\n`);
  const written = await writeHonchoFile(
    config,
    scope.hermesHome,
    (file) => ({ root: { sessions: { ...sessionsOf(file), [cwd]: clean } } }),
  );
  await reportWrite(scope, written);
  io.stdout(`Mapped ${cwd} → ${clean} (root 'sessions' in ${written.path})\n`);
  return 0;
}

/**
 * Attaches `sessions` and `map` to the `honcho` command.
 *
 * @param honcho The `hermes honcho` command.
 * @returns The `sessions` and `map` commands.
 *
 * @example
 * ```ts
 * import { createCommand, memoryCliIo } from "@hermes/memory/cli";
 * import { registerSessions } from "./sessions.ts";
 * import assert from "node:assert/strict";
 * const honcho = createCommand("honcho", { io: memoryCliIo(), exitCode: 0 });
 * assert.deepEqual(registerSessions(honcho).map((c) => c.name()), ["sessions", "map"]);
 * ```
 */
export function registerSessions(honcho: HermesCommand): HermesCommand[] {
  const sessions = honcho.command("sessions")
    .summary("List directories mapped to Honcho session names")
    .description(
      "List the root 'sessions' map of honcho.json (working directory → Honcho\n" +
        "session name); '←' marks this directory. A mapped directory always uses\n" +
        "its mapped session, whatever the session strategy.",
    )
    .option("--json", "Print JSON", false)
    .example("hermes honcho sessions");
  sessions.action((opts: SessionsOptions) => {
    const io = sessions.context.io;
    return runGuarded(io, () =>
      runSessions(
        resolveScope(io, { targetProfile: targetProfileOf(honcho) }),
        opts,
      ));
  });
  const map = honcho.command("map")
    .argument(
      "[name]",
      "Session name for this directory (lists the map when omitted)",
    )
    .summary("Map this directory to a Honcho session name")
    .description(
      "Map the working directory to a Honcho session name (root 'sessions' of\n" +
        "honcho.json). Characters other than letters, digits, '_' and '-' become\n" +
        "'-' (leading and trailing '-' are dropped) and the sanitised name is shown.",
    )
    .option("--remove", "Remove this directory's mapping", false)
    .example("hermes honcho map my-project")
    .example("hermes honcho map --remove");
  map.action((name: string | undefined, opts: MapOptions) => {
    const io = map.context.io;
    return runGuarded(io, () =>
      runMap(
        resolveScope(io, { targetProfile: targetProfileOf(honcho) }),
        name,
        opts,
      ));
  });
  return [sessions, map];
}
