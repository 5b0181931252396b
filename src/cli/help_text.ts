// The layout of `hermes` help text. No imports: the launcher uses it.

/** The width help text is wrapped to. */
export const HELP_WIDTH = 80;

/** The parts of one help screen; empty lists are left out. */
export interface HelpSections {
  summary: string;
  usage: string;
  commands: [string, string][];
  options: [string, string][];
  /** Options of the parent commands. */
  globals: [string, string][];
  examples: string[];
}

/** Renders a help screen, ending with a line break. */
export function formatHelp(sections: HelpSections): string {
  const parts: string[] = [];
  if (sections.summary) parts.push(sections.summary);
  parts.push(`USAGE:\n  ${sections.usage}`);
  for (
    const [heading, rows] of [
      ["COMMANDS:", sections.commands],
      ["OPTIONS:", sections.options],
      ["GLOBAL OPTIONS:", sections.globals],
    ] as const
  ) if (rows.length > 0) parts.push(helpTable(heading, rows));
  if (sections.examples.length > 0) {
    parts.push(
      `EXAMPLES:\n${sections.examples.map((e) => `  ${e}`).join("\n")}`,
    );
  }
  return `${parts.join("\n\n")}\n`;
}

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

/** Everything before the first line break. */
export function firstLine(text: string): string {
  return text.split("\n", 1)[0] ?? "";
}

/** A titled two-column table (terms padded to at most 28 columns), no final line break. */
export function helpTable(heading: string, rows: [string, string][]): string {
  const width = Math.min(Math.max(...rows.map(([term]) => term.length)), 28);
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
