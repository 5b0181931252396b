// What both sides of config.yaml need: its text, and the error a file that
// cannot be used raises.

/** Options of {@linkcode ConfigError}. */
interface ConfigErrorOptions {
  /** The config file. */
  path: string;
  /** The 1-based line of the problem, when known. */
  line?: number;
  /** The 1-based column of the problem, when known. */
  column?: number;
  /** The underlying error. */
  cause?: unknown;
}

/**
 * A `config.yaml` that cannot be used: it does not parse, or its top level
 * is not a mapping. Carries the file and, when known, the line and column.
 *
 * @category Errors callers catch
 */
export class ConfigError extends Error {
  /** The config file. */
  readonly path: string;
  /** The 1-based line of the problem, when known. */
  readonly line?: number;
  /** The 1-based column of the problem, when known. */
  readonly column?: number;

  /**
   * Creates the error.
   *
   * @param message What is wrong and what to do.
   * @param options Where it is wrong.
   */
  constructor(message: string, options: ConfigErrorOptions) {
    super(message, { cause: options.cause });
    this.name = "ConfigError";
    this.path = options.path;
    this.line = options.line;
    this.column = options.column;
  }
}

/** `config.yaml`'s text; `undefined` when there is none. */
export async function readConfigText(
  path: string,
): Promise<string | undefined> {
  try {
    return await Deno.readTextFile(path);
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return undefined;
    throw error;
  }
}
