// The top of the command tree as data: the root command (`run.ts`) and the
// fast `hermes --help` (`main.ts`, the launcher) are built from it alike.

import { formatHelp } from "./help_text.ts";

export const ROOT_DESCRIPTION =
  "Hermes memory: inspect and configure an agent's persistent memory";

export const ROOT_USAGE = "[--profile NAME] <command> [options]";

export const PROFILE_OPTION: { flags: string; description: string } = {
  flags: "--profile <name>",
  description:
    "Use the named profile's home, <root>/profiles/<name> (default: $HERMES_HOME, else ~/.hermes; env: HERMES_HOME)",
};

/** The `--version` option of `hermes`, its groups and provider commands. */
export const VERSION_OPTION: { flags: string; description: string } = {
  flags: "-V, --version",
  description: "Show the versions: module, Deno, active provider",
};

export const HELP_OPTION: { flags: string; description: string } = {
  flags: "-h, --help",
  description: "Show this help",
};

export const MEMORY_SUMMARY = "Inspect and configure persistent memory";

export const COMPLETION_SUMMARY = "Print a shell completion script";

export const ROOT_EXAMPLES: readonly string[] = Object.freeze([
  "hermes memory status",
  "hermes memory setup",
  "hermes --profile coder memory status --json",
]);

/** The launcher's JSON `{"name", "summary"}` (`{}`: none) of the provider command the root help lists. */
export const ROOT_HELP_ENV = "HERMES_CLI_PROVIDER_COMMAND";

/** The active provider's command as the root help lists it. */
export interface ProviderCommandLine {
  name: string;
  summary: string;
}

/** Writes the root help to stdout. */
export async function writeRootHelp(
  provider?: ProviderCommandLine,
): Promise<void> {
  let bytes = new TextEncoder().encode(rootHelpText(provider));
  while (bytes.length > 0) {
    bytes = bytes.subarray(await Deno.stdout.write(bytes));
  }
}

function rootHelpText(provider?: ProviderCommandLine): string {
  const commands: [string, string][] = [["memory", MEMORY_SUMMARY]];
  if (provider !== undefined) commands.push([provider.name, provider.summary]);
  commands.push(["completion <shell>", COMPLETION_SUMMARY]);
  return formatHelp({
    summary: ROOT_DESCRIPTION,
    usage: `hermes ${ROOT_USAGE}`,
    commands,
    options: [
      [PROFILE_OPTION.flags, PROFILE_OPTION.description],
      [VERSION_OPTION.flags, VERSION_OPTION.description],
      [HELP_OPTION.flags, HELP_OPTION.description],
    ],
    globals: [],
    examples: [...ROOT_EXAMPLES],
  });
}

/** Whether the line is only `-h`/`--help`, optionally with `--profile NAME`. */
export function isRootHelpRequest(args: readonly string[]): boolean {
  let help = false;
  for (let i = 0; i < args.length; i++) {
    const arg = args[i] as string;
    if (arg === "-h" || arg === "--help") help = true;
    else if (arg === "--profile" && i + 1 < args.length) i++;
    else if (!arg.startsWith("--profile=")) return false;
  }
  return help;
}

/** Reads {@linkcode ROOT_HELP_ENV}: `null` when absent or malformed, `undefined` for none. */
export function parseProviderCommandLine(
  value: string | undefined,
): ProviderCommandLine | undefined | null {
  if (value === undefined) return null;
  try {
    const parsed = JSON.parse(value) as Record<string, unknown>;
    if (parsed === null || typeof parsed !== "object") return null;
    if (parsed.name === undefined) return undefined;
    if (typeof parsed.name !== "string" || typeof parsed.summary !== "string") {
      return null;
    }
    return { name: parsed.name, summary: parsed.summary };
  } catch {
    return null;
  }
}
