// The `operations` batch of the `memory` tool: argument checks before the lock,
// and the all-or-nothing application to the entries read under it.

import { pythonStrip } from "./memory_format.ts";
import { scanMemoryContent } from "./threat_scan.ts";
import { pythonJsonDumps, pythonStr } from "../_util/python_json.ts";
import { pythonTruthy } from "../_util/python_values.ts";
import { isRecord } from "../_util/is_record.ts";

/** A batch's operations once their arguments have been checked. */
export type CheckedOperations = Record<string, unknown>[];

/** What applying a batch came to: entries to write, an `abort` message, or a `result` to return as is. */
export type BatchOutcome =
  | {
    work: string[];
    replaced: Record<string, string>;
    removed: Record<string, string>;
  }
  | { abort: string }
  | { result: Record<string, unknown> };

/** The indexes of the entries containing `old` (a case-sensitive substring). */
export function findCandidates(
  entries: readonly string[],
  old: string,
): number[] {
  const matches: number[] = [];
  entries.forEach((e, i) => {
    if (e.includes(old)) matches.push(i);
  });
  return matches;
}

/** Checks a batch before the file is locked, as Hermes does (threat scan on `content` as given). */
export function checkBatchArguments(
  operations: readonly unknown[],
): { ops: CheckedOperations } | { result: Record<string, unknown> } {
  if (operations.length === 0) {
    return { result: { success: false, error: "operations list is empty." } };
  }
  const ops: CheckedOperations = [];
  for (const [i, op] of operations.entries()) {
    if (pythonTruthy(op) && !isRecord(op)) {
      return {
        result: argumentError(
          `operations[${i}] must be an object like {"action": "add", "content": "..."} (got ${
            jsonTypeName(op)
          })`,
        ),
      };
    }
    const o = isRecord(op) ? op : {};
    if (o.action !== null && typeof o.action === "object") {
      return { result: notAStringResult(`operations[${i}].action`, o.action) };
    }
    ops.push(o);
  }
  for (const [i, op] of ops.entries()) {
    if (
      (op.action === "add" || op.action === "replace") &&
      pythonTruthy(op.content)
    ) {
      if (typeof op.content !== "string") {
        return {
          result: notAStringResult(`operations[${i}].content`, op.content),
        };
      }
      const blocked = scanMemoryContent(op.content);
      if (blocked !== null) {
        return {
          result: { success: false, error: `Operation ${i + 1}: ${blocked}` },
        };
      }
    }
  }
  return { ops };
}

/**
 * Applies checked operations in order to a copy of `entries`, each seeing
 * the earlier ones' effects; the budget is not checked here.
 */
export function applyBatch(
  entries: readonly string[],
  ops: CheckedOperations,
): BatchOutcome {
  const work = [...entries];
  const replaced: Record<string, string> = {};
  const removed: Record<string, string> = {};
  for (const [i, op] of ops.entries()) {
    for (const key of ["content", "old_text"]) {
      if (pythonTruthy(op[key]) && typeof op[key] !== "string") {
        return { result: notAStringResult(`operations[${i}].${key}`, op[key]) };
      }
    }
    const action = op.action;
    const content = pythonStrip(
      pythonTruthy(op.content) ? op.content as string : "",
    );
    const old = pythonStrip(
      pythonTruthy(op.old_text) ? op.old_text as string : "",
    );
    const pos = `Operation ${i + 1} (${
      pythonTruthy(action) ? pythonStr(action) : "unknown"
    })`;
    if (action === "add") {
      if (content === "") return { abort: `${pos}: content is required.` };
      if (!work.includes(content)) work.push(content);
    } else if (action === "replace" || action === "remove") {
      if (old === "") return { abort: `${pos}: old_text is required.` };
      if (action === "replace" && content === "") {
        return {
          abort: `${pos}: content is required (use action='remove' to delete).`,
        };
      }
      const candidates = findCandidates(work, old);
      if (candidates.length === 0) {
        return { abort: `${pos}: no entry matched '${old}'.` };
      }
      if (new Set(candidates.map((c) => work[c])).size > 1) {
        return {
          abort:
            `${pos}: '${old}' matched multiple distinct entries -- be more specific.`,
        };
      }
      const index = candidates[0] as number;
      const previous = work[index] as string;
      if (action === "replace") {
        work[index] = content;
        replaced[String(i + 1)] = previous;
      } else {
        work.splice(index, 1);
        removed[String(i + 1)] = previous;
      }
    } else {
      return { abort: `${pos}: unknown action. Use add, replace, or remove.` };
    }
  }
  return { work, replaced, removed };
}

function jsonTypeName(value: unknown): string {
  if (Array.isArray(value)) return "an array";
  if (value === null) return "null";
  if (typeof value === "object") return "an object";
  if (typeof value === "number") return "a number";
  if (typeof value === "boolean") return "a boolean";
  return `a ${typeof value}`;
}

function argumentError(message: string): Record<string, unknown> {
  return {
    error:
      `${message}: nothing was changed. Send the arguments as the tool schema describes them.`,
    success: false,
  };
}

/** The error result for a non-string argument where Hermes expects one (and would raise). */
export function notAStringResult(
  name: string,
  value: unknown,
): Record<string, unknown> {
  return argumentError(
    `'${name}' must be a string (got ${jsonTypeName(value)} ${
      pythonJsonDumps(value).slice(0, 80)
    })`,
  );
}
