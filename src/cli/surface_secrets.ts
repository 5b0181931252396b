/**
 * Keeping secrets out of what the MCP server and the dashboard send: every
 * credential value of the profile's `.env` (names ending in `_API_KEY`,
 * `_TOKEN`, …) masked wherever it appears, then the generic secret
 * patterns of {@linkcode redactText}.
 *
 * @module
 */

import { join } from "node:path";
import { isCredentialName, loadEnvFile } from "../profile/env_file.ts";
import { REDACTED, redactText } from "../core/redact.ts";

/**
 * Builds the masker for one profile home from its `.env` as it is now.
 * Values shorter than 4 characters are left alone (they would mask
 * ordinary words).
 *
 * @param hermesHome The profile home.
 * @returns A function that masks secrets in a text.
 */
export async function profileSecretMasker(
  hermesHome: string,
): Promise<(text: string) => string> {
  let env: Record<string, string> = {};
  try {
    env = await loadEnvFile(join(hermesHome, ".env"), {
      lookup: () => undefined,
    });
  } catch {
    // An unreadable .env: the generic patterns still apply.
  }
  const values = Object.entries(env)
    .filter(([name, value]) => isCredentialName(name) && value.length >= 4)
    .map(([, value]) => value)
    .sort((a, b) => b.length - a.length);
  return (text: string): string => {
    let out = text;
    for (const value of values) out = out.replaceAll(value, REDACTED);
    return redactText(out);
  };
}
