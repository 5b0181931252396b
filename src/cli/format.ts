/**
 * Text helpers shared by the `hermes` commands: ANSI styles (off for
 * `NO_COLOR` and non-terminals), aligned rows and JSON output.
 *
 * @module
 */

import type { CliIo } from "./cli_io.ts";
import type { HermesCommand } from "./hermes_command.ts";
import { terminalSafe } from "../core/terminal_text.ts";

/** ANSI styles that turn into plain text when colour is off. */
export interface Style {
  bold(text: string): string;
  dim(text: string): string;
  green(text: string): string;
  yellow(text: string): string;
  red(text: string): string;
}

/** The styles for a stream: colour needs a terminal and `NO_COLOR` unset or empty. */
export function styleFor(io: CliIo, stream: "stdout" | "stderr"): Style {
  const terminal = stream === "stdout"
    ? io.stdoutIsTerminal
    : io.stderrIsTerminal;
  const enabled = terminal && (io.env("NO_COLOR") ?? "") === "";
  const wrap = (open: number, close: number) => (text: string): string =>
    enabled ? `\x1b[${open}m${text}\x1b[${close}m` : text;
  return {
    bold: wrap(1, 22),
    dim: wrap(2, 22),
    green: wrap(32, 39),
    yellow: wrap(33, 39),
    red: wrap(31, 39),
  };
}

/**
 * Aligns rows of cells into columns separated by two spaces (trailing
 * spaces trimmed). Cell widths ignore ANSI escapes.
 *
 * @param rows The rows.
 * @param indent Spaces before each row.
 * @returns One line per row, each ending with a line break.
 *
 * @example Basic usage
 * ```ts
 * import { columns } from "@hermes/memory/cli";
 * import assert from "node:assert/strict";
 * assert.equal(columns([["a", "1"], ["bbb", "2"]], 2), "  a    1\n  bbb  2\n");
 * ```
 */
export function columns(rows: readonly string[][], indent = 0): string {
  const widths: number[] = [];
  for (const row of rows) {
    row.forEach((cell, i) => {
      widths[i] = Math.max(widths[i] ?? 0, visibleLength(cell));
    });
  }
  return rows.map((row) => {
    const cells = row.map((cell, i) =>
      i === row.length - 1
        ? cell
        : cell + " ".repeat((widths[i] ?? 0) - visibleLength(cell))
    );
    return `${" ".repeat(indent)}${cells.join("  ")}`.trimEnd() + "\n";
  }).join("");
}

function visibleLength(text: string): number {
  // deno-lint-ignore no-control-regex
  return [...text.replace(/\x1b\[[0-9;]*m/g, "")].length;
}

/**
 * Writes a value as indented JSON with a trailing line break.
 *
 * @param io The I/O seam.
 * @param value The value.
 *
 * @example Basic usage
 * ```ts
 * import { memoryCliIo, writeJson } from "@hermes/memory/cli";
 * import assert from "node:assert/strict";
 * const io = memoryCliIo();
 * writeJson(io, { ok: true });
 * assert.equal(io.out, '{\n  "ok": true\n}\n');
 * ```
 */
export function writeJson(io: CliIo, value: unknown): void {
  io.stdout(`${JSON.stringify(value, null, 2)}\n`);
}

/** A config value for display: strings as is, the rest as compact JSON. */
export function displayValue(value: unknown): string {
  if (typeof value === "string") return value;
  if (value === undefined) return "";
  return JSON.stringify(value);
}

/**
 * A description for one table cell: whitespace collapsed, cut at the first
 * sentence end or colon, then at `max` characters with `…`.
 */
export function shortDescription(text: string, max = 60): string {
  let short = terminalSafe(text.replace(/\s+/g, " ").trim(), {
    singleLine: true,
  });
  const end = short.search(/[.:;](\s|$)/);
  if (end > 0) short = short.slice(0, end);
  const chars = [...short];
  return chars.length > max
    ? `${chars.slice(0, max - 1).join("")}\u2026`
    : short;
}

/**
 * Sets `command`'s action: `run` gets the I/O seam, the options, then the
 * declared arguments, and resolves to the exit code.
 */
export function ioAction<O, A extends unknown[] = []>(
  command: HermesCommand,
  run: (io: CliIo, opts: O, ...args: A) => Promise<number>,
): HermesCommand {
  return command.action((...values: unknown[]) => {
    const n = command.registeredArguments.length;
    return run(command.context.io, values[n] as O, ...values.slice(0, n) as A);
  });
}
