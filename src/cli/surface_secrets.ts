// Secrets kept out of what the MCP server and the dashboard send: credential
// values of the profile's `.env` and of its JSON settings files (profile and
// default home) masked wherever they appear, then the generic patterns.

import { join } from "../_util/path.ts";
import { getDefaultHermesRoot } from "../profile/hermes_home.ts";
import { isCredentialName, loadEnvFile } from "../profile/env_file.ts";
import { REDACTED, redactText } from "../core/redact.ts";

/** The masker for a profile home as it is now; values under 4 characters would mask ordinary words. */
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
  const values = [
    ...Object.entries(env)
      .filter(([name, value]) => isCredentialName(name) && value.length >= 4)
      .map(([, value]) => value),
    ...await settingsSecrets([hermesHome, ...defaultHome()]),
  ].sort((a, b) => b.length - a.length);
  return (text: string): string => {
    let out = text;
    for (const value of values) out = out.replaceAll(value, REDACTED);
    return redactText(out);
  };
}

const SECRET_KEY = /(api[_-]?key|token|secret|password)$/i;

/** Credential values in the top-level `*.json` files of the given homes. */
async function settingsSecrets(homes: string[]): Promise<string[]> {
  const found: string[] = [];
  const collect = (value: unknown, key: string): void => {
    if (typeof value === "string") {
      if (SECRET_KEY.test(key) && value.length >= 4) found.push(value);
    } else if (Array.isArray(value)) {
      for (const item of value) collect(item, key);
    } else if (value !== null && typeof value === "object") {
      for (const [k, v] of Object.entries(value)) collect(v, k);
    }
  };
  for (const home of new Set(homes)) {
    try {
      for await (const entry of Deno.readDir(home)) {
        if (!entry.isFile || !entry.name.endsWith(".json")) continue;
        try {
          collect(
            JSON.parse(await Deno.readTextFile(join(home, entry.name))),
            "",
          );
        } catch {
          // Unreadable or not JSON: nothing to mask from it.
        }
      }
    } catch {
      // A home that cannot be listed: the other sources still apply.
    }
  }
  return found;
}

function defaultHome(): string[] {
  try {
    return [getDefaultHermesRoot()];
  } catch {
    return [];
  }
}
