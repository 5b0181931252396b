/**
 * Small text helpers shared by the `hermes` commands: optional ANSI styling
 * (off for `--json`, `NO_COLOR` and non-terminals), aligned rows and JSON
 * output.
 *
 * @module
 */

import { type CliIo, colorEnabled } from "./cli_io.ts";
import { terminalSafe } from "../core/terminal_text.ts";

/** ANSI styling that turns into plain text when colour is off. */
export interface Style {
  /** Whether colour is on. */
  readonly enabled: boolean;
  /**
   * Bold text.
   *
   * @param text The text.
   * @returns The styled text.
   */
  bold(text: string): string;
  /**
   * Dim text.
   *
   * @param text The text.
   * @returns The styled text.
   */
  dim(text: string): string;
  /**
   * Green text (success).
   *
   * @param text The text.
   * @returns The styled text.
   */
  green(text: string): string;
  /**
   * Yellow text (attention).
   *
   * @param text The text.
   * @returns The styled text.
   */
  yellow(text: string): string;
  /**
   * Red text (failure).
   *
   * @param text The text.
   * @returns The styled text.
   */
  red(text: string): string;
}

/**
 * The styling for a stream of `io`.
 *
 * @param io The I/O seam.
 * @param stream Which stream the text goes to.
 * @returns The styling (plain when colour is not allowed).
 *
 * @example Basic usage
 * ```ts
 * import { memoryCliIo } from "@hermes/memory/cli";
 * import { styleFor } from "./format.ts";
 * import assert from "node:assert/strict";
 * assert.equal(styleFor(memoryCliIo(), "stdout").bold("x"), "x");
 * ```
 */
export function styleFor(io: CliIo, stream: "stdout" | "stderr"): Style {
  const enabled = colorEnabled(io, stream);
  const wrap = (open: number, close: number) => (text: string): string =>
    enabled ? `\x1b[${open}m${text}\x1b[${close}m` : text;
  return {
    enabled,
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
 * import { columns } from "./format.ts";
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
 * import { memoryCliIo } from "@hermes/memory/cli";
 * import { writeJson } from "./format.ts";
 * import assert from "node:assert/strict";
 * const io = memoryCliIo();
 * writeJson(io, { ok: true });
 * assert.equal(io.out, '{\n  "ok": true\n}\n');
 * ```
 */
export function writeJson(io: CliIo, value: unknown): void {
  io.stdout(`${JSON.stringify(value, null, 2)}\n`);
}

/**
 * Renders a value from config for display: strings as is, everything else
 * as compact JSON.
 *
 * @param value The value.
 * @returns The text.
 *
 * @example Basic usage
 * ```ts
 * import { displayValue } from "./format.ts";
 * import assert from "node:assert/strict";
 * assert.equal(displayValue(["a"]), '["a"]');
 * ```
 */
export function displayValue(value: unknown): string {
  if (typeof value === "string") return value;
  if (value === undefined) return "";
  return JSON.stringify(value);
}

/**
 * Shortens a description for one table cell: whitespace collapsed, cut at
 * the first sentence end or colon, then at `max` characters with `…`.
 *
 * @param text The description.
 * @param max The longest result.
 * @returns The short text.
 *
 * @example Basic usage
 * ```ts
 * import { shortDescription } from "./format.ts";
 * import assert from "node:assert/strict";
 * assert.equal(shortDescription("Cloud memory. Needs a key."), "Cloud memory");
 * ```
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
