// Plugin-supplied text (names, descriptions, reasons, errors) printed with its
// control characters escaped, so it cannot rewrite the terminal.

// C0 controls but newline and tab, DEL, the C1 controls (U+0080–U+009F,
// among them the one-character CSI U+009B), the Unicode line and paragraph
// separators and the bidirectional overrides and isolates (which reorder
// what a terminal shows after them).
const CONTROL_REGEXP =
  // deno-lint-ignore no-control-regex
  /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;
const CONTROL_OR_NEWLINE_REGEXP =
  // deno-lint-ignore no-control-regex
  /[\u0000-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;

function escapeOne(char: string): string {
  const code = char.charCodeAt(0);
  return code < 0x100
    ? `\\x${code.toString(16).padStart(2, "0")}`
    : `\\u${code.toString(16).padStart(4, "0")}`;
}

/**
 * Escapes control characters as `\xNN`, so an escape sequence is shown,
 * never obeyed; newlines and tabs are kept unless `singleLine` is set.
 */
export function terminalSafe(
  text: string,
  options: { singleLine?: boolean } = {},
): string {
  return text.replace(
    options.singleLine ? CONTROL_OR_NEWLINE_REGEXP : CONTROL_REGEXP,
    escapeOne,
  );
}

/** A copy of a value with every string made terminal-safe (newlines kept), e.g. a provider's report. */
export function terminalSafeDeep<T>(value: T): T {
  if (typeof value === "string") return terminalSafe(value) as T;
  if (Array.isArray(value)) return value.map(terminalSafeDeep) as T;
  if (value !== null && typeof value === "object") {
    const proto = Object.getPrototypeOf(value);
    if (proto !== Object.prototype && proto !== null) return value;
    const out: Record<string, unknown> = {};
    for (const [key, item] of Object.entries(value)) {
      out[terminalSafe(key)] = terminalSafeDeep(item);
    }
    return out as T;
  }
  return value;
}
