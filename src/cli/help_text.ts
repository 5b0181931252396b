/**
 * The layout of `hermes` help text: sections and two-column tables wrapped
 * at 80 columns. No imports (the launcher prints the root help with it).
 *
 * @module
 */

/** The width help text is wrapped to. */
export const HELP_WIDTH = 80;

/** The parts of one help screen; empty lists are left out. */
export interface HelpSections {
  /** The description (or summary) printed first. */
  summary: string;
  /** The usage line, such as `hermes [--profile NAME] <command> [options]`. */
  usage: string;
  /** Subcommands: term and one-line summary. */
  commands: [string, string][];
  /** The command's own options: term and description. */
  options: [string, string][];
  /** Options of the parent commands. */
  globals: [string, string][];
  /** Full example command lines. */
  examples: string[];
}

/**
 * Renders a help screen.
 *
 * @param sections What to show.
 * @returns The text, ending with a line break.
 */
export function formatHelp(sections: HelpSections): string {
  const parts: string[] = [];
  if (sections.summary) parts.push(sections.summary);
  parts.push(`USAGE:\n  ${sections.usage}`);
  if (sections.commands.length > 0) {
    parts.push(helpTable("COMMANDS:", sections.commands));
  }
  if (sections.options.length > 0) {
    parts.push(helpTable("OPTIONS:", sections.options));
  }
  if (sections.globals.length > 0) {
    parts.push(helpTable("GLOBAL OPTIONS:", sections.globals));
  }
  if (sections.examples.length > 0) {
    parts.push(
      `EXAMPLES:\n${sections.examples.map((e) => `  ${e}`).join("\n")}`,
    );
  }
  return `${parts.join("\n\n")}\n`;
}

/** Splits text into lines of at most `width` characters, at spaces. */
function wrap(text: string, width: number): string[] {
  const lines: string[] = [];
  for (const paragraph of text.split("\n")) {
    let line = "";
    for (const word of paragraph.split(/ +/)) {
      if (line !== "" && line.length + 1 + word.length > width) {
        lines.push(line);
        line = word;
      } else {
        line = line === "" ? word : `${line} ${word}`;
      }
    }
    lines.push(line);
  }
  return lines;
}

/**
 * The first line of a text.
 *
 * @param text The text.
 * @returns Everything before the first line break.
 */
export function firstLine(text: string): string {
  return text.split("\n", 1)[0] ?? "";
}

/**
 * A titled two-column table: terms padded to the longest (at most 28
 * columns), descriptions wrapped beside them.
 *
 * @param heading The title line, such as `COMMANDS:`.
 * @param rows Term and description pairs.
 * @returns The table without a trailing line break.
 */
export function helpTable(heading: string, rows: [string, string][]): string {
  const width = Math.min(
    Math.max(...rows.map(([term]) => term.length)),
    28,
  );
  const indent = " ".repeat(width + 4);
  const lines = rows.map(([term, description]) => {
    if (!description) return `  ${term}`;
    const text = wrap(description, Math.max(HELP_WIDTH - width - 4, 30));
    const first = term.length > width
      ? `  ${term}\n${indent}${text[0]}`
      : `  ${term.padEnd(width)}  ${text[0]}`;
    return [first, ...text.slice(1).map((l) => `${indent}${l}`)].join("\n");
  });
  return `${heading}\n${lines.join("\n")}`;
}
