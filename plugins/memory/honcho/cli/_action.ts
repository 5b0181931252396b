/** The action shared by the `hermes honcho …` subcommands. @module */

import type { HermesCommand } from "../../../../src/cli/mod.ts";
import {
  type HonchoCliScope,
  resolveScope,
  runGuarded,
  targetProfileOf,
} from "./_common.ts";

/**
 * Runs `run` with the scope `--target-profile` names; resolved inside the
 * guard, so a bad profile name is a usage error (exit 2).
 */
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
