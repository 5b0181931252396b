/**
 * The agent's working directory for the current conversation, on
 * `AsyncLocalStorage` (one process may serve several projects, so never the
 * process's cwd): the session directory, then `TERMINAL_CWD`, then the process
 * directory, skipping any that is not a usable directory.
 *
 * @module
 */

import { join, resolve } from "../_util/path.ts";
import { readProcessEnv } from "../core/env.ts";
import { log } from "../core/log.ts";
import { scopeStores } from "./hermes_home.ts";

const warned = new Set<string>();
// A name looked up inside a candidate directory to prove it can be entered.
const CWD_PROBE_NAME = ".hermes-cwd-probe";

/**
 * The working directory of the current conversation: the session directory
 * of {@linkcode withSessionCwd}, else `TERMINAL_CWD`, else the process
 * directory; an unusable one is skipped with a warning (once per directory).
 *
 * @category Profiles and secrets
 */
export function resolveAgentCwd(): string {
  const session = scopeStores.cwd?.getStore();
  if (session !== undefined && isUsableDirectory(session, "session cwd")) {
    return session;
  }
  const terminal = readProcessEnv("TERMINAL_CWD")?.trim();
  if (terminal) {
    const absolute = resolve(terminal);
    if (isUsableDirectory(absolute, "TERMINAL_CWD")) return absolute;
  }
  return processCwd();
}

function isUsableDirectory(path: string, source: string): boolean {
  let reason: string | undefined;
  try {
    if (!Deno.statSync(path).isDirectory) {
      reason = "not a directory";
    } else {
      // A lookup inside the directory needs search permission: "missing"
      // means it can be entered ("." would be normalized away).
      probeEntry(join(path, CWD_PROBE_NAME));
    }
  } catch (error) {
    reason = error instanceof Deno.errors.NotFound
      ? "it does not exist"
      : error instanceof Deno.errors.NotADirectory
      ? "not a directory"
      : `it cannot be entered (${
        error instanceof Error ? error.name : String(error)
      })`;
  }
  if (reason === undefined) return true;
  const key = `${source}\0${path}`;
  if (!warned.has(key)) {
    warned.add(key);
    log(
      "warn",
      `Ignoring ${source} ${path}: ${reason}; using the next working directory instead, fix or unset it`,
    );
  }
  return false;
}

/** Throws unless `path` can be looked up (a missing entry is fine). */
function probeEntry(path: string): void {
  try {
    Deno.statSync(path);
  } catch (error) {
    if (!(error instanceof Deno.errors.NotFound)) throw error;
  }
}

function processCwd(): string {
  try {
    return Deno.cwd();
  } catch {
    // Deno.cwd() needs read access to the directory, process.cwd() not;
    // `process` is looked up only here (initialising it costs ~30 ms).
    return (globalThis as unknown as { process: { cwd(): string } }).process
      .cwd();
  }
}
