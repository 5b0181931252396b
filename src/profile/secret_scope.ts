/**
 * Per-turn secret scopes on `AsyncLocalStorage`, so one process can serve
 * several profiles without one profile's API keys reaching another's provider.
 * {@linkcode getSecret} order: deployment-wide variables from the process
 * environment; then the scope's value; then the process environment, unless
 * the process multiplexes profiles (then it fails closed). The environment is
 * never changed.
 *
 * @module
 */

import { join } from "../_util/path.ts";
import { readProcessEnv } from "../core/env.ts";
import { credentialValue, loadEnvFile } from "./env_file.ts";
import { getHermesHome, scopeStores } from "./hermes_home.ts";
import { words } from "../_util/python_text.ts";

let multiplexActive = false;

/**
 * Deployment-wide variables {@linkcode getSecret} always reads from the
 * process environment whatever the scope: Hermes' location and limits, OS
 * user, shell, locale, TLS, kanban, API server and relay routing settings.
 */
const GLOBAL_ENV_VARS: ReadonlySet<string> = new Set(words`
  HERMES_HOME HERMES_PROFILE HERMES_DATA_DIR_SUFFIX
  HERMES_ENABLE_PROJECT_PLUGINS HERMES_SESSION_SOURCE HERMES_GATEWAY_LOCK_DIR
  HERMES_MAX_ITERATIONS HERMES_MAX_TOKENS HERMES_API_TIMEOUT
  HERMES_REDACT_SECRETS HERMES_NOUS_TIMEOUT_SECONDS _HERMES_GATEWAY PATH HOME
  USER LOGNAME USERPROFILE LOCALAPPDATA LANG LC_ALL TZ PWD SHELL TMPDIR
  VIRTUAL_ENV PYTHONPATH SSL_CERT_FILE SSL_CERT_DIR HERMES_KANBAN_DB
  HERMES_KANBAN_WORKSPACES_ROOT HERMES_KANBAN_BOARD API_SERVER_ENABLED
  API_SERVER_HOST API_SERVER_PORT API_SERVER_CORS_ORIGINS GATEWAY_RELAY_URL
  GATEWAY_RELAY_ENDPOINT GATEWAY_RELAY_ALLOW_DIRECT_PLATFORMS
  GATEWAY_RELAY_PLATFORMS GATEWAY_RELAY_BOT_IDS GATEWAY_RELAY_ROUTE_KEYS
  GATEWAY_RELAY_INSTANCE_ID GATEWAY_RELAY_WAKE_URL GATEWAY_RELAY_DISPLAY_NAME
`);

/** Prefixes of deployment-wide variable names (see {@linkcode GLOBAL_ENV_VARS}). */
const GLOBAL_ENV_PREFIXES: readonly string[] = Object.freeze([
  "HERMES_KANBAN_",
  "HERMES_TELEGRAM_",
  "TERMINAL_",
]);

/**
 * Thrown by {@linkcode getSecret} when the process serves several profiles
 * ({@linkcode setMultiplexActive}) and no secret scope is installed: the
 * read could otherwise return another profile's credential.
 *
 * @category Errors callers catch
 */
export class UnscopedSecretError extends Error {
  /** The variable that was asked for (a name, never a value). */
  readonly secretName: string;

  /** Creates the error for the variable asked for. */
  constructor(secretName: string) {
    super(
      `Cannot read secret ${secretName} outside a secret scope while several profiles are served: run the work inside withSecretScope(), or start it with spawnContextTask() or contextBound() so it keeps the turn's scope`,
    );
    this.name = "UnscopedSecretError";
    this.secretName = secretName;
  }
}

/**
 * Tells whether `name` is a deployment-wide variable that is always read
 * from the process environment.
 */
export function isGlobalEnvVar(name: string): boolean {
  return GLOBAL_ENV_VARS.has(name) ||
    GLOBAL_ENV_PREFIXES.some((prefix) => name.startsWith(prefix));
}

/**
 * The frozen secret scope installed for the current call, if any.
 *
 * @category Profiles and secrets
 */
export function currentSecretScope():
  | Readonly<Record<string, string>>
  | undefined {
  return scopeStores.secrets?.getStore();
}

/**
 * Declares whether this process serves several profiles at once (a
 * gateway): then {@linkcode getSecret} fails closed outside a scope and
 * never falls back to the process environment.
 *
 * @category Profiles and secrets
 */
export function setMultiplexActive(active: boolean): void {
  multiplexActive = active;
}

/** Tells whether the process declared it serves several profiles. */
export function isMultiplexActive(): boolean {
  return multiplexActive;
}

/**
 * Reads a secret (or any configuration variable) for the current profile,
 * in the module documentation's order, else `fallback`.
 *
 * @throws {UnscopedSecretError} When multiplexing and no scope is installed
 * (for a name that is not global).
 *
 * @category Profiles and secrets
 */
export function getSecret(name: string, fallback?: string): string | undefined {
  if (isGlobalEnvVar(name)) return readProcessEnv(name) ?? fallback;
  const scope = scopeStores.secrets?.getStore();
  if (scope !== undefined) {
    if (Object.hasOwn(scope, name)) return scope[name];
    if (multiplexActive) return fallback;
    return fromProcess(name) ?? fallback;
  }
  if (multiplexActive) throw new UnscopedSecretError(name);
  return fromProcess(name) ?? fallback;
}

// As Hermes sees it after loading: a credential's non-ASCII characters stripped.
function fromProcess(name: string): string | undefined {
  const value = readProcessEnv(name);
  return value === undefined ? undefined : credentialValue(name, value);
}

/**
 * Builds a profile's secret scope from `<hermesHome>/.env` (default: the
 * active home), leaving out global variables.
 *
 * @throws {Deno.errors.PermissionDenied} Or another OS error when `.env`
 * exists but cannot be read.
 *
 * @category Profiles and secrets
 */
export async function buildProfileSecretScope(
  hermesHome?: string,
): Promise<Record<string, string>> {
  const values = await loadEnvFile(join(hermesHome ?? getHermesHome(), ".env"));
  const scope: Record<string, string> = {};
  for (const [name, value] of Object.entries(values)) {
    if (!isGlobalEnvVar(name)) scope[name] = value;
  }
  return scope;
}
