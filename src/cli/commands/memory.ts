/**
 * `hermes memory …`: the command group. Each subcommand lives in its own
 * module; this file only attaches them. `hermes memory` alone runs
 * `status`.
 *
 * @module
 */

import type { HermesCommand } from "../hermes_command.ts";
import { defaultToStatus, defineMemoryGroup } from "./memory_group.ts";
import { registerMemoryStatus, runMemoryStatus } from "./memory_status.ts";
import { registerMemorySetup } from "./memory_setup.ts";
import { registerMemoryDoctor } from "./memory_doctor.ts";
import { registerMemoryOff } from "./memory_off.ts";
import { registerMemoryReset } from "./memory_reset.ts";
import { registerMemoryList } from "./memory_list.ts";
import { registerMemoryPermissions } from "./memory_permissions.ts";
import { registerMemoryRecall } from "./memory_recall.ts";
import { registerMemoryImport } from "./memory_import.ts";
import { registerMemoryEntries } from "./memory_entries.ts";
import { registerMemoryMcp } from "./memory_mcp.ts";
import { registerMemoryDashboard } from "./memory_dashboard.ts";

/**
 * Attaches `memory` and its subcommands to the root command.
 *
 * @param program The `hermes` root command.
 * @returns The `memory` command.
 *
 * @example Attaching the subcommand
 * ```ts
 * import { createCommand, memoryCliIo } from "@hermes/memory/cli";
 * import { registerMemoryCommand } from "./memory.ts";
 * import assert from "node:assert/strict";
 * const root = createCommand("hermes", { io: memoryCliIo(), exitCode: 0 });
 * assert.equal(registerMemoryCommand(root).name(), "memory");
 * ```
 */
export function registerMemoryCommand(program: HermesCommand): HermesCommand {
  const memory = defineMemoryGroup(program);
  registerMemoryStatus(memory);
  registerMemorySetup(memory);
  registerMemoryDoctor(memory);
  registerMemoryList(memory);
  registerMemoryPermissions(memory);
  registerMemoryOff(memory);
  registerMemoryReset(memory);
  registerMemoryRecall(memory);
  registerMemoryEntries(memory);
  registerMemoryMcp(memory);
  registerMemoryDashboard(memory);
  registerMemoryImport(memory);
  defaultToStatus(memory, () => runMemoryStatus({}, memory.context.io));
  return memory;
}
