/**
 * The top level of the `hermes` command tree as data, from which both the
 * root command (`run.ts`) and the fast `hermes --help` (`main.ts`, the
 * launcher) are built, so the two cannot differ.
 *
 * @module
 */

import { formatHelp } from "./help_text.ts";

/** The description of `hermes`. */
export const ROOT_DESCRIPTION =
  "Hermes memory: inspect and configure an agent's persistent memory";

/** The usage line after the program name. */
export const ROOT_USAGE = "[--profile NAME] <command> [options]";

/** The `--profile` option: flags and description. */
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

/** The help option every command has: flags and description. */
export const HELP_OPTION: { flags: string; description: string } = {
  flags: "-h, --help",
  description: "Show this help",
};

/** The one-line summary of `hermes memory`. */
export const MEMORY_SUMMARY = "Inspect and configure persistent memory";

/** The one-line summary of `hermes completion`. */
export const COMPLETION_SUMMARY = "Print a shell completion script";

/** The examples of the root help. */
export const ROOT_EXAMPLES: readonly string[] = Object.freeze([
  "hermes memory status",
  "hermes memory setup",
  "hermes --profile coder memory status --json",
]);

/**
 * The variable through which the launcher tells the CLI which provider
 * command the root help lists: JSON `{"name": …, "summary": …}`, or `{}`
 * for none. Only the help text depends on it.
 */
export const ROOT_HELP_ENV = "HERMES_CLI_PROVIDER_COMMAND";

/** The active provider's command as the root help lists it. */
export interface ProviderCommandLine {
  /** The provider's name (the command word). */
  name: string;
  /** Its one-line summary. */
  summary: string;
}

/** Writes the root help to stdout (the launcher and `main.ts` answer it). */
export async function writeRootHelp(
  provider?: ProviderCommandLine,
): Promise<void> {
  let bytes = new TextEncoder().encode(rootHelpText(provider));
  while (bytes.length > 0) {
    bytes = bytes.subarray(await Deno.stdout.write(bytes));
  }
}

/**
 * The root help text.
 *
 * @returns The text `hermes --help` prints.
 */
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

/**
 * Tells whether a command line only asks for the root help: `-h` or
 * `--help`, optionally with `--profile NAME`, and nothing else.
 *
 * @returns `true` for `hermes --help`, `hermes --profile x -h`, ….
 */
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

/**
 * Reads the provider line the launcher passed in {@linkcode ROOT_HELP_ENV}.
 *
 * @returns `null` when it is absent or malformed (the caller then finds
 * the provider itself), `undefined` for "no provider command", else the
 * line.
 */
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
