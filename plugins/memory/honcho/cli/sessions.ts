/** `hermes honcho sessions` and `map [name]`: the root `sessions` map (directory → session). @module */

import { resolve } from "../../../../src/provider/_bundled.ts";
import { type HermesCommand, writeJson } from "../../../../src/cli/mod.ts";
import {
  HonchoCliError,
  type HonchoCliScope,
  loadScopeConfig,
  reportWrite,
  requireReadableConfig,
  writeHonchoFile,
} from "./_common.ts";
import { scopedAction } from "./_action.ts";
import { cliSessionName, sanitizeMapName } from "./_session_name.ts";
import { isRecord } from "../_util.ts";

/** Lists the map, marking the working directory with `←`. */
async function runSessions(
  scope: HonchoCliScope,
  options: { json?: boolean } = {},
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

/** Without a name lists the map; else writes root `sessions[cwd]` (sanitised, `--remove` drops it). */
async function runMap(
  scope: HonchoCliScope,
  name: string | undefined,
  options: { remove?: boolean },
): Promise<number> {
  const { io } = scope;
  const cwd = resolve(scope.cwd);
  if (name === undefined && !options.remove) return await runSessions(scope);
  const config = await loadScopeConfig(scope);
  requireReadableConfig(config);
  if (options.remove && name !== undefined) {
    throw new HonchoCliError(
      "Cannot use a session name with --remove: run 'hermes honcho map --remove' in the mapped directory",
      2,
    );
  }
  const clean = options.remove ? undefined : sanitizeMapName(name ?? "");
  if (clean === "") {
    throw new HonchoCliError(
      `Cannot map to '${name}': a session name needs at least one letter, digit, '_' or '-'`,
      2,
    );
  }
  if (clean !== undefined && clean !== name) {
    io.stdout(`Session name sanitized to: ${clean}\n`);
  }
  // The map is read inside the file's lock (writeHonchoFile's update), so
  // concurrent `map` commands in different directories all keep theirs.
  const written = await writeHonchoFile(config, scope.hermesHome, (file) => {
    const sessions = { ...(isRecord(file.sessions) ? file.sessions : {}) };
    if (clean !== undefined) sessions[cwd] = clean;
    else if (Object.hasOwn(sessions, cwd)) delete sessions[cwd];
    else return undefined;
    return { root: { sessions } };
  });
  if (!written.changed) {
    io.stdout(`${cwd} is not mapped; nothing to remove.\n`);
    return 0;
  }
  await reportWrite(scope, written);
  io.stdout(
    clean === undefined
      ? `Removed the mapping of ${cwd} from ${written.path}\n`
      : `Mapped ${cwd} → ${clean} (root 'sessions' in ${written.path})\n`,
  );
  return 0;
}

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
  scopedAction(honcho, sessions, runSessions);
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
  scopedAction(honcho, map, runMap);
  return [sessions, map];
}
