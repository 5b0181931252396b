/**
 * Display-safe rendering of secrets.
 *
 * @module
 */

/**
 * Masks a secret for display: `...` plus its last four characters, `set`
 * when it has four characters or fewer (showing them would reveal it
 * whole), and `""` when it is empty.
 *
 * @returns The masked form, safe for logs, errors and prompts.
 *
 * @category Profiles and secrets
 */
export function maskSecret(value: string): string {
  if (value === "") return "";
  const chars = Array.from(value);
  if (chars.length <= 4) return "set";
  return `...${chars.slice(-4).join("")}`;
}
