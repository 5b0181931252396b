/** Scanning a `hermes` command line before parsing it. No imports: the launcher uses it. */

/** What {@linkcode scanGlobalArgs} found. */
export interface GlobalArgs {
  /** The value of the last `--profile NAME` / `--profile=NAME`. */
  profile?: string;
  /** The first word that is not an option (the top-level command). */
  command?: string;
  /** Whether `-h`/`--help` appears before the first command word. */
  help: boolean;
}

/** Scans a `hermes` command line (up to `--`) for the global options. */
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

/** The indexes of the non-option words up to `--` (`--profile`'s value skipped). */
function wordIndexes(args: readonly string[]): number[] {
  const found: number[] = [];
  for (let i = 0; i < args.length; i++) {
    const arg = args[i] as string;
    if (arg === "--") break;
    if (arg === "--profile") i++;
    else if (!arg.startsWith("-")) found.push(i);
  }
  return found;
}

/** The command words: `["memory", "status"]` for `--profile x memory status --json`. */
export function commandWords(args: readonly string[]): string[] {
  return wordIndexes(args).map((i) => args[i] as string);
}

/** The arguments after the first command word (`[]` without one), as a provider's `cli.ts` parses them. */
export function argsAfterCommand(args: readonly string[]): string[] {
  const first = wordIndexes(args)[0];
  return first === undefined ? [] : args.slice(first + 1);
}

/** What a command line asks the launcher to grant beyond the usual. */
export interface CommandIntent {
  /**
   * The provider a setup command configures (`memory setup NAME`, `NAME
   * setup`, `NAME enable`), or `"*"` for the picker (which loads every provider).
   */
  setup?: string;
  /** Whether the job spans profiles (`honcho sync`/`peers`, `completion`): only then is `<root>/profiles/` reachable. */
  spansProfiles?: boolean;
  /**
   * Files and folders named for reading (`memory import FILE`, `<provider>
   * identity FILE`, `<provider> migrate [--dir DIR]…`, default `.` and
   * `~/.openclaw`): added to this run's read grant.
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

/** Commands whose job spans every profile (completion lists their names). */
const PROFILE_SPANNING: ReadonlySet<string> = new Set([
  "honcho sync",
  "honcho peers",
  "completion bash",
  "completion zsh",
  "completion fish",
]);

/** What a command line needs granted: setup may start a provider other than the active one. */
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

/** Whether `--version`/`-V` appears anywhere before `--` (a global option). */
export function isVersionRequest(args: readonly string[]): boolean {
  for (let i = 0; i < args.length; i++) {
    const arg = args[i] as string;
    if (arg === "--") break;
    if (arg === "--profile" || arg === "--target-profile") i++;
    else if (arg === "--version" || arg === "-V") return true;
  }
  return false;
}
