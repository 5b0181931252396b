/**
 * Scanning a `hermes` command line before parsing it: the profile, the
 * command words and what the launcher must grant. No imports (the launcher
 * uses it).
 *
 * @module
 */

/** What {@linkcode scanGlobalArgs} found. */
export interface GlobalArgs {
  /** The value of the last `--profile NAME` / `--profile=NAME`. */
  profile?: string;
  /** The first word that is not an option (the top-level command). */
  command?: string;
  /** Whether `-h`/`--help` appears before the first command word. */
  help: boolean;
}

/**
 * Scans a `hermes` command line for the global options, stopping at `--`.
 *
 * @returns The profile, the top-level command word and whether help was asked.
 */
export function scanGlobalArgs(args: readonly string[]): GlobalArgs {
  const found: GlobalArgs = { help: false };
  for (let i = 0; i < args.length; i++) {
    const arg = args[i] as string;
    if (arg === "--") break;
    if (arg === "--profile") {
      const value = args[i + 1];
      if (value !== undefined) found.profile = value;
      i++;
    } else if (arg.startsWith("--profile=")) {
      found.profile = arg.slice("--profile=".length);
    } else if (arg === "-h" || arg === "--help") {
      if (found.command === undefined) found.help = true;
    } else if (!arg.startsWith("-") && found.command === undefined) {
      found.command = arg;
    }
  }
  return found;
}

/**
 * The words of a command line that are not options (the value of
 * `--profile` skipped), up to `--`: `["memory", "status"]` for
 * `hermes --profile x memory status --json`.
 */
export function commandWords(args: readonly string[]): string[] {
  const words: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const arg = args[i] as string;
    if (arg === "--") break;
    if (arg === "--profile") i++;
    else if (!arg.startsWith("-")) words.push(arg);
  }
  return words;
}

/**
 * The arguments after the first command word (`hermes [--profile P]
 * <word> <rest…>` gives `<rest…>`), as a provider's sandboxed `cli.ts`
 * parses them; `[]` when there is no command word.
 */
export function argsAfterCommand(args: readonly string[]): string[] {
  for (let i = 0; i < args.length; i++) {
    const arg = args[i] as string;
    if (arg === "--") break;
    if (arg === "--profile") i++;
    else if (!arg.startsWith("-")) return args.slice(i + 1);
  }
  return [];
}

/** What a command line asks the launcher to grant beyond the usual. */
export interface CommandIntent {
  /**
   * The provider a setup command configures (`hermes memory setup NAME`,
   * `hermes NAME setup`), `"*"` for the setup picker (`hermes memory
   * setup`, which loads every provider to list it), or `undefined` for
   * any other command. `hermes NAME enable` counts as setup: it turns an
   * inactive provider back on and connects to its server.
   */
  setup?: string;
  /**
   * Whether the command's job spans profiles (`hermes honcho sync`,
   * `hermes honcho peers`): only then may the default profile's CLI reach
   * `<root>/profiles/`.
   */
  spansProfiles?: boolean;
  /**
   * Files and folders the command line names for the command to read, as
   * typed (`hermes memory import FILE`, `hermes <provider> identity FILE`,
   * `hermes <provider> migrate [--dir DIR]…`, whose default folders are the
   * working directory and `~/.openclaw`): the launcher adds them to this
   * run's read grant.
   */
  reads?: string[];
}

/** Options whose value is the next argument (so it is not a word). */
const VALUE_OPTIONS = new Set([
  "--profile",
  "--target-profile",
  "--session",
  "--set",
  "--peer",
]);

/** What a command line names for reading (see `reads`). */
function namedReads(args: readonly string[]): string[] {
  const words: string[] = [];
  const dirs: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const arg = args[i] as string;
    if (arg === "--") {
      words.push(...args.slice(i + 1));
      break;
    }
    if (arg === "--dir" && i + 1 < args.length) dirs.push(args[++i] as string);
    else if (arg.startsWith("--dir=")) dirs.push(arg.slice(6));
    else if (VALUE_OPTIONS.has(arg)) i++;
    else if (!arg.startsWith("-") || arg === "-") words.push(arg);
  }
  const [group, command, file] = words;
  if (group === undefined || command === undefined) return [];
  if (group !== "memory" && command === "migrate") {
    return dirs.length > 0 ? dirs : [".", "~/.openclaw"];
  }
  const reads = (group === "memory" && command === "import") ||
    (group !== "memory" && command === "identity");
  return reads && file !== undefined && file !== "-" ? [file] : [];
}

/** Provider commands whose job spans every profile. */
const PROFILE_SPANNING: ReadonlySet<string> = new Set([
  "honcho sync",
  "honcho peers",
]);

/**
 * Tells which provider a setup command line is about. Setup starts the
 * provider it configures, which need not be the active one, and tests the
 * server the user types; other commands use only the active provider.
 */
export function commandIntent(args: readonly string[]): CommandIntent {
  const reads = namedReads(args);
  const intent = commandSetup(args);
  return reads.length === 0 ? intent : { ...intent, reads };
}

function commandSetup(args: readonly string[]): CommandIntent {
  // `--set key=value` values are not words.
  const words = commandWords(args).filter((w) => !w.includes("="));
  if (words[0] === "memory" && words[1] === "setup") {
    return { setup: words[2] ?? "*" };
  }
  // The dashboard's configuration panel is setup for any provider.
  if (words[0] === "memory" && words[1] === "dashboard") return { setup: "*" };
  if (
    words[0] !== undefined && words[0] !== "memory" &&
    (words[1] === "setup" || words[1] === "enable")
  ) {
    return { setup: words[0] };
  }
  if (PROFILE_SPANNING.has(`${words[0]} ${words[1]}`)) {
    return { spansProfiles: true };
  }
  return {};
}

/**
 * Tells whether a command line asks for the version: `--version` or `-V`
 * anywhere before `--` (`hermes --version`, `hermes memory --version`,
 * `hermes honcho status -V`); like `--profile`, it is a global option.
 *
 * @returns `true` for `hermes --version`, `hermes memory -V --json`, ….
 */
export function isVersionRequest(args: readonly string[]): boolean {
  for (let i = 0; i < args.length; i++) {
    const arg = args[i] as string;
    if (arg === "--") break;
    if (arg === "--profile" || arg === "--target-profile") i++;
    else if (arg === "--version" || arg === "-V") return true;
  }
  return false;
}
