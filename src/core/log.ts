// The logger seam: library code logs through the current `Logger` (warnings and
// errors on stderr by default; debug dropped), never prints.

import { terminalSafe } from "./terminal_text.ts";

/**
 * A log level, from the most to the least verbose.
 *
 * @category Durable files and the log
 */
export type LogLevel = "debug" | "info" | "warn" | "error";

/**
 * Where the framework's log lines go.
 *
 * @category Durable files and the log
 */
export interface Logger {
  /** Receives one log line (it never contains a secret). */
  log(level: LogLevel, message: string): void;
}

/** The default logger: `warn` and `error` lines on stderr, the rest dropped. */
const STDERR_LOGGER: Logger = {
  log(level: LogLevel, message: string): void {
    if (level === "warn" || level === "error") {
      console.error(`hermes: ${level}: ${terminalSafe(message)}`);
    }
  },
};

let current: Logger = STDERR_LOGGER;

/**
 * Installs a logger for the whole process and returns the previous one.
 *
 * @category Durable files and the log
 */
export function setLogger(logger: Logger): Logger {
  const previous = current;
  current = logger;
  return previous;
}

/**
 * Logs a line at `level` through the current logger.
 *
 * @category Durable files and the log
 */
export function log(level: LogLevel, message: string): void {
  try {
    current.log(level, message);
  } catch {
    // A broken logger must never break the agent's turn.
  }
}
