// Python's notion of whitespace, shared by every layer that reads text the
// way Hermes (Python) does: memory files, .env files, config values.

// Characters Python's str.isspace() accepts: what str.strip() removes and
// what the Unicode `\s` of `re` matches. Unlike JS, U+FEFF is not one of them.
const PYTHON_WHITESPACE = new Set<number>(
  Array.from(
    "\u0009\u000a\u000b\u000c\u000d\u001c\u001d\u001e\u001f\u0020\u0085\u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000",
    (c) => c.codePointAt(0)!,
  ),
);

/**
 * A regular-expression character-class body matching exactly the characters
 * Python treats as whitespace (for building Python-compatible patterns).
 */
export const PYTHON_WHITESPACE_CLASS: string = [...PYTHON_WHITESPACE]
  .map((c) => `\\u{${c.toString(16)}}`)
  .join("");

/** Tells whether a character is whitespace by Python's `str.isspace()`. */
export function isPythonWhitespace(ch: string): boolean {
  return ch.length > 0 && PYTHON_WHITESPACE.has(ch.codePointAt(0) as number);
}

/**
 * Trims whitespace from both ends like Python's `str.strip()`: every
 * character `str.isspace()` accepts, but not U+FEFF (which JS `trim()` also
 * removes).
 */
export function pythonStrip(text: string): string {
  let start = 0;
  let end = text.length;
  while (start < end && PYTHON_WHITESPACE.has(text.charCodeAt(start))) start++;
  while (end > start && PYTHON_WHITESPACE.has(text.charCodeAt(end - 1))) end--;
  return text.slice(start, end);
}

/** The length of a string in Unicode code points (Python's `len`). */
export function codePointLength(text: string): number {
  let n = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    // A high surrogate followed by a low one is a single code point.
    if (c >= 0xd800 && c <= 0xdbff && i + 1 < text.length) {
      const d = text.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) i++;
    }
    n++;
  }
  return n;
}

/** Formats an integer with comma thousands separators, like Python's `f"{n:,}"`. */
export function formatThousands(n: number): string {
  const int = Math.trunc(n);
  const digits = String(Math.abs(int));
  const grouped = digits.replace(/\B(?=(\d{3})+(?!\d))/g, ",");
  return int < 0 ? `-${grouped}` : grouped;
}

/** A literal list of names, split on whitespace like Python's `str.split()`: words`a b c`. */
export function words(strings: TemplateStringsArray): string[] {
  return String.raw(strings).trim().split(/\s+/);
}
