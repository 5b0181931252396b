// The text format of `MEMORY.md` / `USER.md`. Lengths are code points, as
// Python counts them, so limits and numbers match Hermes.

import type { MemoryTarget } from "../core/memory_provider.ts";
import {
  codePointLength,
  formatThousands,
  pythonStrip,
} from "../_util/python_text.ts";

/** The entry delimiter of a memory file: newline, `§`, newline. */
const ENTRY_DELIMITER = "\n\u00a7\n";

/** The default whole-file budget of `MEMORY.md`, in characters. */
export const DEFAULT_MEMORY_CHAR_LIMIT = 2200;

/** The default whole-file budget of `USER.md`, in characters. */
export const DEFAULT_USER_CHAR_LIMIT = 1375;

/** The rule line above and below a system-prompt block header: 46 × `═`. */
const BLOCK_RULE: string = "\u2550".repeat(46);

export {
  codePointLength,
  formatThousands,
  isPythonWhitespace,
  PYTHON_WHITESPACE_CLASS,
  pythonStrip,
} from "../_util/python_text.ts";

/** Slices a string by code points, like Python's `text[start:end]` for non-negative bounds. */
export function sliceCodePoints(
  text: string,
  start: number,
  end?: number,
): string {
  return [...text].slice(start, end).join("");
}

/** The usage percentage as Hermes computes it in floats (`29/100` gives 28), `0` for a limit ≤ 0. */
export function usagePercent(current: number, limit: number): number {
  if (limit <= 0) return 0;
  return Math.min(100, Math.trunc((current / limit) * 100));
}

/** The usage string of a success result: `"<pct>% — <cur>/<lim> chars"`. */
export function formatUsage(current: number, limit: number): string {
  return `${usagePercent(current, limit)}% \u2014 ${formatThousands(current)}/${
    formatThousands(limit)
  } chars`;
}

/** The usage string of a failure result: `"<cur>/<lim>"`. */
export function formatShortUsage(current: number, limit: number): string {
  return `${formatThousands(current)}/${formatThousands(limit)}`;
}

/** Splits a memory file's text into entries, Python-stripped, empty ones dropped, duplicates kept. */
export function splitEntries(text: string): string[] {
  if (pythonStrip(text) === "") return [];
  return text.split(ENTRY_DELIMITER).map(pythonStrip).filter((e) => e !== "");
}

/** Collapses exact duplicates, keeping each entry's first occurrence and the order. */
export function dedupeEntries(entries: readonly string[]): string[] {
  return [...new Set(entries)];
}

/** Parses a memory file's text the way a load does: split, trim, drop empty pieces, then dedupe. */
export function parseEntries(text: string): string[] {
  return dedupeEntries(splitEntries(text));
}

/** Serialises entries as a memory file: joined with the delimiter. */
export function serializeEntries(entries: readonly string[]): string {
  return entries.join(ENTRY_DELIMITER);
}

/** A store's size: the code-point length of its serialised text. */
export function entriesSize(entries: readonly string[]): number {
  if (entries.length === 0) return 0;
  let total = 3 * (entries.length - 1);
  for (const e of entries) total += codePointLength(e);
  return total;
}

/** The 80-code-point preview of ambiguity results (`"..."` appended when longer). */
export function previewEntry(entry: string): string {
  return codePointLength(entry) > 80
    ? `${sliceCodePoints(entry, 0, 80)}...`
    : entry;
}

/** The file name of a target: `USER.md` for `user`, `MEMORY.md` otherwise. */
export function memoryFileName(target: MemoryTarget | string): string {
  return target === "user" ? "USER.md" : "MEMORY.md";
}

/**
 * Renders one system-prompt block as Hermes 0.19.0 does (`""` for no
 * entries); past `max(2 × limit, 4000)` the body keeps its first 70 % and
 * last 20 % of that cap around a marker (0.19.0 puts it whole: listed in
 * docs/compatibility.md, one file must not fill the model's context).
 */
export function renderMemoryBlock(
  target: MemoryTarget,
  entries: readonly string[],
  limit: number,
): string {
  if (entries.length === 0) return "";
  let body = serializeEntries(entries);
  const current = codePointLength(body);
  const title = target === "user"
    ? "USER PROFILE (who the user is)"
    : "MEMORY (your personal notes)";
  const header = `${title} [${formatUsage(current, limit)}]`;
  const cap = Math.max(2 * limit, 4000);
  if (current > cap) {
    const head = Math.floor(0.7 * cap);
    const tail = Math.floor(0.2 * cap);
    const points = [...body];
    const omitted = current - head - tail;
    body = points.slice(0, head).join("") +
      `\n\n[... ${
        formatThousands(omitted)
      } chars truncated \u2014 memory over budget (${
        formatShortUsage(current, limit)
      }); consolidate via memory(action=remove/replace) ...]\n\n` +
      points.slice(current - tail).join("");
  }
  return `${BLOCK_RULE}\n${header}\n${BLOCK_RULE}\n${body}`;
}

/**
 * Decodes a memory file's bytes as Python's `read_text(encoding="utf-8")`:
 * strict UTF-8, a BOM kept as U+FEFF, universal newlines.
 *
 * @throws {TypeError} When the bytes are not valid UTF-8.
 */
export function decodeMemoryBytes(bytes: Uint8Array): string {
  const text = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true })
    .decode(bytes);
  return text.includes("\r") ? text.replace(/\r\n?/g, "\n") : text;
}

const LONE_SURROGATE =
  /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/** The first lone surrogate in a string (UTF-8 cannot store it), if any. */
export function findLoneSurrogate(text: string): number | undefined {
  return LONE_SURROGATE.exec(text)?.[0].charCodeAt(0);
}
