// Display-safe rendering of secrets.

/**
 * Masks a secret for display: `...` plus its last four characters, `set`
 * for four or fewer (they would reveal it whole), `""` when empty.
 *
 * @category Profiles and secrets
 */
export function maskSecret(value: string): string {
  if (value === "") return "";
  const chars = Array.from(value);
  if (chars.length <= 4) return "set";
  return `...${chars.slice(-4).join("")}`;
}
