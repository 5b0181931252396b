/** A list of names written as whitespace-separated words: words`a b c`. */
export function words(strings: TemplateStringsArray): string[] {
  return String.raw(strings).trim().split(/\s+/);
}
