/** The action and the per-profile listing shared by the `hermes honcho …` subcommands. @module */

import {
  columns,
  type HermesCommand,
  writeJson,
} from "../../../../src/cli/mod.ts";
import type { HonchoConfig } from "../config/config.ts";
import {
  type HonchoCliScope,
  listProfiles,
  loadProfileConfig,
  resolveScope,
  runGuarded,
  targetProfileOf,
} from "./_common.ts";

/** Runs `run` with the `--target-profile` scope, resolved inside the guard: a bad name exits 2. */
export function scopedAction<A extends unknown[]>(
  honcho: HermesCommand,
  command: HermesCommand,
  run: (scope: HonchoCliScope, ...args: A) => Promise<number>,
): HermesCommand {
  return command.action((...args: A) => {
    const io = command.context.io;
    return runGuarded(
      io,
      () =>
        run(
          resolveScope(io, { targetProfile: targetProfileOf(honcho) }),
          ...args,
        ),
    );
  });
}

/** One row per profile: `{ profiles }` with `--json` (then `undefined`), else a table. */
export async function profileRows<T extends object>(
  scope: HonchoCliScope,
  json: boolean | undefined,
  head: string[],
  row: (config: HonchoConfig) => T,
  cells: (row: T) => string[],
): Promise<(T & { profile: string })[] | undefined> {
  const rows = [];
  for (const profile of await listProfiles(scope.defaultRoot)) {
    const config = await loadProfileConfig(profile.home, profile.name);
    rows.push({
      profile: profile.name,
      active: profile.name === scope.profile,
      host: config.hostKey,
      ...row(config),
    });
  }
  if (json) {
    writeJson(scope.io, { profiles: rows });
    return undefined;
  }
  scope.io.stdout(columns([
    ["", "Profile", "Host", ...head],
    ...rows.map((r) => [r.active ? "*" : "", r.profile, r.host, ...cells(r)]),
  ]));
  return rows;
}
