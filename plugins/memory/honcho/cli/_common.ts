/**
 * What every `hermes honcho …` command shares: which profile and host block
 * it works on (`--target-profile`), reading the resolved `honcho.json`
 * under the profile's secret scope, writing `$HERMES_HOME/honcho.json`
 * (atomic, `0600`, only the keys a command owns, never over a broken or
 * read-only file), connecting with a short timeout, and wording failures.
 *
 * Internal to the Honcho CLI; not exported from the package.
 *
 * @module
 */

import { join, resolve } from "node:path";
import {
  atomicJsonWrite,
  buildProfileSecretScope,
  getDefaultHermesRoot,
  getHermesHome,
  getProfileHome,
  loadConfig,
  withFileLock,
  withSecretScope,
} from "../../../../mod.ts";
import {
  type CliIo,
  type HermesCommand,
  PromptCancelled,
} from "../../../../src/cli/mod.ts";
import { HonchoClient } from "../client.ts";
import { type HonchoConfig, loadHonchoConfig } from "../config.ts";
import { hostKeyForProfile, profileFromHermesHome } from "../config_paths.ts";
import { readHonchoConfigFile } from "../config_file.ts";
import { resolveHonchoConnection } from "../connection.ts";
import { describeHonchoError } from "../errors.ts";
import { sanitizeId } from "../session_naming.ts";
import { errorText, isRecord } from "../_util.ts";
import {
  connectionFix,
  type ConnectionFixOptions,
  netListedIn,
} from "./_fixes.ts";

/** Exit code of a command that failed (the usage-error code is 2). */
export const FAILURE_EXIT_CODE = 1;

/** How long the CLI waits for Honcho before giving up: 5 s. */
export const CLI_CONNECT_TIMEOUT_MS = 5_000;

/** Peer, session and workspace ids: letters, digits, `_` and `-`. */
export const HONCHO_ID_REGEXP: RegExp = /^[A-Za-z0-9_-]{1,512}$/;

/**
 * A command failed for a reason the user can fix; the message is printed
 * as `error: <message>` and the command exits with
 * {@linkcode FAILURE_EXIT_CODE} (or `exitCode`).
 */
export class HonchoCliError extends Error {
  /** The exit code to end with. */
  readonly exitCode: number;

  /**
   * Creates the error.
   *
   * @param message What went wrong and what to do, without `error:`.
   * @param exitCode The exit code. Default {@linkcode FAILURE_EXIT_CODE}.
   */
  constructor(message: string, exitCode = FAILURE_EXIT_CODE) {
    super(message);
    this.name = "HonchoCliError";
    this.exitCode = exitCode;
  }
}

/** The profile and files one command works on. */
export interface HonchoCliScope {
  /** Output, environment and prompts. */
  io: CliIo;
  /** The active profile home: where writes go (`<home>/honcho.json`). */
  hermesHome: string;
  /** The profile whose host block is used (`--target-profile`, else the active one). */
  profile: string;
  /** Set when `--target-profile` named the profile. */
  targetProfile: string | undefined;
  /** The default Hermes root (profiles live in `<root>/profiles/`). */
  defaultRoot: string;
  /** The working directory (for the cwd → session map). */
  cwd: string;
}

/** Options of {@linkcode resolveScope}. */
export interface ResolveScopeOptions {
  /** The `--target-profile` value. */
  targetProfile?: string;
  /** The profile home. @default {getHermesHome()} */
  hermesHome?: string;
  /** The default root. @default {getDefaultHermesRoot()} */
  defaultRoot?: string;
  /** The working directory. @default {Deno.cwd()} */
  cwd?: string;
}

/**
 * Works out which profile home, profile and working directory a command
 * uses.
 *
 * @param io The CLI seam.
 * @param options `--target-profile` and overrides for tests.
 * @returns The scope.
 * @throws {HonchoCliError} When the profile name is not a plain name (exit 2).
 *
 * @example
 * ```ts no-assert
 * import { memoryCliIo } from "@hermes/memory/cli";
 * import { resolveScope } from "./_common.ts";
 * const scope = resolveScope(memoryCliIo(), { targetProfile: "coder" });
 * ```
 */
export function resolveScope(
  io: CliIo,
  options: ResolveScopeOptions = {},
): HonchoCliScope {
  const hermesHome = resolve(options.hermesHome ?? getHermesHome());
  const defaultRoot = resolve(options.defaultRoot ?? getDefaultHermesRoot());
  let profile = profileFromHermesHome(hermesHome);
  const target = options.targetProfile?.trim();
  if (options.targetProfile !== undefined) {
    if (!target) {
      throw new HonchoCliError(
        "--target-profile needs a profile name, e.g. --target-profile coder",
        2,
      );
    }
    try {
      getProfileHome(target);
    } catch (error) {
      throw new HonchoCliError(errorText(error), 2);
    }
    profile = target === "custom" ? "default" : target;
  }
  return {
    io,
    hermesHome,
    profile,
    targetProfile: target || undefined,
    defaultRoot,
    cwd: options.cwd ?? Deno.cwd(),
  };
}

/**
 * The home directory of a profile under a given default root.
 *
 * @param defaultRoot The default Hermes root.
 * @param profile The profile name (`default` is the root itself).
 * @returns The profile home.
 *
 * @example
 * ```ts
 * import { profileHomeUnder } from "./_common.ts";
 * import assert from "node:assert/strict";
 * assert.equal(profileHomeUnder("/r", "coder"), "/r/profiles/coder");
 * assert.equal(profileHomeUnder("/r", "default"), "/r");
 * ```
 */
export function profileHomeUnder(defaultRoot: string, profile: string): string {
  return profile === "default" || profile === "custom"
    ? defaultRoot
    : join(defaultRoot, "profiles", profile);
}

/**
 * Runs `fn` with the profile's `.env` as secret scope (so the CLI sees
 * `HONCHO_API_KEY` there as the agent does) and, when `hostKey` is given,
 * with `HERMES_HONCHO_HOST` pinned to it.
 *
 * @param hermesHome The profile home whose `.env` is read.
 * @param hostKey The host key to pin, if any.
 * @param fn The work.
 * @returns What `fn` returns.
 *
 * @example
 * ```ts no-assert
 * import { withProfileSecrets } from "./_common.ts";
 * const value = await withProfileSecrets("/tmp/home", undefined, () => Promise.resolve(1));
 * ```
 */
export async function withProfileSecrets<T>(
  hermesHome: string,
  hostKey: string | undefined,
  fn: () => Promise<T>,
): Promise<T> {
  let scope: Record<string, string> = {};
  try {
    scope = await buildProfileSecretScope(hermesHome);
  } catch {
    // An unreadable .env only means fewer variables.
  }
  if (hostKey !== undefined) scope = { ...scope, HERMES_HONCHO_HOST: hostKey };
  return await withSecretScope(scope, fn);
}

/**
 * Loads the Honcho configuration a command works on: the file the active
 * profile resolves, the target profile's host block (`--target-profile`
 * pins the host key, so `HERMES_HONCHO_HOST` cannot redirect it), the
 * profile's `.env` as environment overlay.
 *
 * @param scope The command's scope.
 * @returns The resolved configuration.
 *
 * @example
 * ```ts no-assert
 * import { memoryCliIo } from "@hermes/memory/cli";
 * import { loadScopeConfig, resolveScope } from "./_common.ts";
 * const config = await loadScopeConfig(resolveScope(memoryCliIo()));
 * ```
 */
export async function loadScopeConfig(
  scope: HonchoCliScope,
): Promise<HonchoConfig> {
  let pinned: string | undefined;
  if (scope.targetProfile !== undefined) {
    const probe = await withProfileSecrets(
      scope.hermesHome,
      undefined,
      () => loadHonchoConfig({ hermesHome: scope.hermesHome }),
    );
    pinned = hostKeyForProfile(scope.profile, {
      defaultHost: probe.defaultHost,
    });
  }
  return await withProfileSecrets(
    scope.hermesHome,
    pinned,
    () =>
      loadHonchoConfig({
        hermesHome: scope.hermesHome,
        profile: scope.profile,
      }),
  );
}

/** Keys to set (a value) or remove (`undefined`) in one write. */
export interface HonchoFileEdit {
  /** Changes at the root of the file. */
  root?: Record<string, unknown>;
  /** Changes in the host block named `hostKey`. */
  host?: Record<string, unknown>;
  /** The host block to change (required with `host`). */
  hostKey?: string;
}

/**
 * An edit computed from the file as it is once the lock is held: the
 * read-modify-write form of {@linkcode HonchoFileEdit} for values that
 * depend on what the file holds (a map that gains or loses one entry), so
 * a concurrent writer's change is never undone. Returns `undefined` to
 * write nothing.
 */
export type HonchoFileUpdate = (
  current: Readonly<Record<string, unknown>>,
) => HonchoFileEdit | undefined;

/** What {@linkcode writeHonchoFile} did. */
export interface HonchoFileWrite {
  /** The file written. */
  path: string;
  /** `false` when an update function asked for no change (nothing was written). */
  changed: boolean;
  /** The file whose settings were copied in first (the local file did not exist). */
  copiedFrom: string | undefined;
}

/**
 * Writes `$HERMES_HOME/honcho.json`: reads it (or, when it does not exist,
 * starts from a copy of the file the profile resolves, so nothing is lost
 * when the local file starts shadowing it), applies the edit (root keys,
 * then host-block keys; `undefined` removes a key; an update function is
 * called with what was read inside the lock and returns the edit), and
 * replaces the file
 * atomically with mode `0600` under a lock. Refuses, leaving every file
 * untouched, when the file does not parse, is read-only, or `hosts` is not
 * an object.
 *
 * @param config The configuration the command read (for copy-on-write).
 * @param hermesHome The profile home.
 * @param edit The keys to change.
 * @returns The path written and whether settings were copied in.
 * @throws {HonchoCliError} When the file cannot be changed safely.
 *
 * @example
 * ```ts no-assert
 * import { writeHonchoFile } from "./_common.ts";
 * import { loadHonchoConfig } from "../config.ts";
 * const config = await loadHonchoConfig({ hermesHome: "/tmp/home" });
 * await writeHonchoFile(config, "/tmp/home", { host: { recallMode: "tools" }, hostKey: "hermes" });
 * ```
 */
export async function writeHonchoFile(
  config: Pick<
    HonchoConfig,
    "configPath" | "configFileExists" | "configError" | "raw"
  >,
  hermesHome: string,
  edit: HonchoFileEdit | HonchoFileUpdate,
): Promise<HonchoFileWrite> {
  const path = join(resolve(hermesHome), "honcho.json");
  await Deno.mkdir(resolve(hermesHome), { recursive: true });
  return await withFileLock(`${path}.lock`, async () => {
    const file = await readHonchoConfigFile(path);
    if (file.error) {
      throw new HonchoCliError(
        `Cannot change ${path}: ${
          describeConfigError({ configError: file.error })
        }; fix or remove the file, nothing was written`,
      );
    }
    let base: Record<string, unknown> = {};
    let copiedFrom: string | undefined;
    if (file.exists) {
      const info = await Deno.stat(path);
      if (info.mode !== null && (info.mode & 0o200) === 0) {
        throw new HonchoCliError(
          `Cannot change ${path}: the file is read-only (mode ${
            (info.mode & 0o777).toString(8).padStart(4, "0")
          }); make it writable (chmod u+w) and try again, nothing was written`,
        );
      }
      base = structuredClone(file.raw);
    } else if (
      config.configFileExists && resolve(config.configPath) !== path
    ) {
      if (config.configError) {
        throw new HonchoCliError(
          `Cannot create ${path} from ${config.configPath}: that file does not parse (${config.configError.message}); fix it first, nothing was written`,
        );
      }
      base = structuredClone(config.raw);
      copiedFrom = config.configPath;
    }
    const change = typeof edit === "function"
      ? edit(structuredClone(base))
      : edit;
    if (change === undefined) return { path, copiedFrom, changed: false };
    applyEdit(base, change, path);
    await atomicJsonWrite(path, base, { mode: 0o600 });
    return { path, copiedFrom, changed: true };
  });
}

function applyEdit(
  target: Record<string, unknown>,
  edit: HonchoFileEdit,
  path: string,
): void {
  for (const [key, value] of Object.entries(edit.root ?? {})) {
    if (value === undefined) delete target[key];
    else target[key] = value;
  }
  if (edit.host === undefined) return;
  if (!edit.hostKey) {
    throw new TypeError("Cannot edit a host block without 'hostKey'");
  }
  if (target.hosts !== undefined && !isRecord(target.hosts)) {
    throw new HonchoCliError(
      `Cannot change ${path}: 'hosts' is not an object; fix the file, nothing was written`,
    );
  }
  const hosts: Record<string, unknown> = isRecord(target.hosts)
    ? target.hosts
    : {};
  const block: Record<string, unknown> = isRecord(hosts[edit.hostKey])
    ? hosts[edit.hostKey] as Record<string, unknown>
    : {};
  for (const [key, value] of Object.entries(edit.host)) {
    if (value === undefined) delete block[key];
    else block[key] = value;
  }
  hosts[edit.hostKey] = block;
  target.hosts = hosts;
}

/**
 * The host block a write for this configuration should go to: the block
 * that was read (a legacy `hermes.<name>` block stays where it is), else
 * the host key.
 *
 * @param config The resolved configuration.
 * @returns The host key to write under.
 *
 * @example
 * ```ts
 * import { writeHostKey } from "./_common.ts";
 * import assert from "node:assert/strict";
 * assert.equal(writeHostKey({ hostKey: "hermes_x", hostBlockKey: "hermes.x" }), "hermes.x");
 * ```
 */
export function writeHostKey(
  config: Pick<HonchoConfig, "hostKey" | "hostBlockKey">,
): string {
  return config.hostBlockKey || config.hostKey;
}

/**
 * Prints what a write did: the file, a note when settings were copied in
 * from the previously read file, and a warning when the targeted profile
 * reads its own `honcho.json` (so the change does not reach it).
 *
 * @param scope The command's scope.
 * @param written What {@linkcode writeHonchoFile} returned.
 *
 * @example
 * ```ts no-assert
 * import { memoryCliIo } from "@hermes/memory/cli";
 * import { reportWrite, resolveScope } from "./_common.ts";
 * await reportWrite(resolveScope(memoryCliIo()), { path: "/tmp/h/honcho.json", copiedFrom: undefined, changed: true });
 * ```
 */
export async function reportWrite(
  scope: HonchoCliScope,
  written: HonchoFileWrite,
): Promise<void> {
  if (written.copiedFrom !== undefined) {
    scope.io.stdout(
      `Created ${written.path} from a copy of ${written.copiedFrom} (this profile now reads ${written.path})\n`,
    );
  }
  if (scope.targetProfile === undefined) return;
  const ownHome = profileHomeUnder(scope.defaultRoot, scope.profile);
  const own = join(ownHome, "honcho.json");
  if (own !== written.path && await isFile(own)) {
    scope.io.stderr(
      `warning: profile '${scope.profile}' reads its own ${own}, so this change does not reach it; run 'hermes --profile ${scope.profile} honcho …' to change that file\n`,
    );
  }
}

/**
 * Whether a path is an existing regular file (`false` when it cannot be
 * checked).
 *
 * @param path The path.
 * @returns `true` for a file.
 *
 * @example
 * ```ts no-assert
 * import { isFile } from "./_common.ts";
 * const exists = await isFile("/etc/hostname");
 * ```
 */
export async function isFile(path: string): Promise<boolean> {
  try {
    return (await Deno.stat(path)).isFile;
  } catch {
    return false;
  }
}

/**
 * Refuses to go on when the file the command reads does not parse: the
 * error names the file, line and column.
 *
 * @param config The resolved configuration.
 * @throws {HonchoCliError} When `config.configError` is set.
 *
 * @example
 * ```ts no-assert
 * import { requireReadableConfig } from "./_common.ts";
 * import { loadHonchoConfig } from "../config.ts";
 * requireReadableConfig(await loadHonchoConfig());
 * ```
 */
export function requireReadableConfig(
  config: Pick<HonchoConfig, "configError" | "configPath">,
): void {
  if (!config.configError) return;
  throw new HonchoCliError(
    `Cannot use ${config.configPath}: ${
      describeConfigError(config)
    }; fix or remove the file, nothing was written`,
  );
}

/**
 * Describes a config file parse error: `does not parse at line L, column C
 * (reason)`.
 *
 * @param config The resolved configuration.
 * @returns The description, or `""` when the file parsed.
 *
 * @example
 * ```ts
 * import { describeConfigError } from "./_common.ts";
 * import assert from "node:assert/strict";
 * assert.equal(
 *   describeConfigError({ configError: { message: "unexpected end of JSON input", line: 3, column: 1 } }),
 *   "it does not parse at line 3, column 1 (unexpected end of JSON input)",
 * );
 * ```
 */
export function describeConfigError(
  config: Pick<HonchoConfig, "configError">,
): string {
  const error = config.configError;
  if (!error) return "";
  const where = error.line !== undefined
    ? ` at line ${error.line}, column ${error.column}`
    : "";
  return `it does not parse${where} (${error.message})`;
}

// ---------------------------------------------------------------------------
// Connecting
// ---------------------------------------------------------------------------

/** Options of {@linkcode connectHoncho}. */
export interface ConnectHonchoOptions {
  /** The deadline of each request. @default {CLI_CONNECT_TIMEOUT_MS} */
  timeoutMs?: number;
  /** The profile home whose `config.yaml` supplies `honcho.base_url` fallbacks. */
  hermesHome?: string;
}

/**
 * "profile NAME" for headers, saying how the profile was chosen: with
 * `--target-profile` the command works on that profile's host block in
 * the current home's settings; with `--profile` the whole command runs in
 * that profile's own home. Both name the same profile but read different
 * files, so the header says which.
 *
 * @param scope The command's scope.
 * @param profile The profile the configuration is for.
 * @returns The label.
 */
export function profileLabel(scope: HonchoCliScope, profile: string): string {
  if (scope.targetProfile !== undefined) {
    return `profile ${profile} (--target-profile: its host block in ${
      join(scope.hermesHome, "honcho.json")
    }; 'hermes --profile ${profile} …' works in that profile's own home instead)`;
  }
  if (profile !== "default") {
    return `profile ${profile} (--profile: this profile's own home ${scope.hermesHome})`;
  }
  return `profile ${profile}`;
}

/**
 * Builds a client for the CLI: the resolved connection (cleaned base URL,
 * `"local"` key for a local server), a short timeout and no retries.
 *
 * @param config The resolved configuration.
 * @param options Timeout and home.
 * @returns The client.
 * @throws {HonchoError} `config` When no API key and no base URL are configured.
 *
 * @example
 * ```ts no-assert
 * import { connectHoncho } from "./_common.ts";
 * import { loadHonchoConfig } from "../config.ts";
 * const client = await connectHoncho(await loadHonchoConfig());
 * ```
 */
export async function connectHoncho(
  config: HonchoConfig,
  options: ConnectHonchoOptions = {},
): Promise<HonchoClient> {
  let hermesConfig: Record<string, unknown> = {};
  try {
    hermesConfig = await loadConfig({
      hermesHome: options.hermesHome ?? config.hermesHome,
    });
  } catch {
    // A broken config.yaml only loses its honcho.* fallbacks here.
  }
  return HonchoClient.fromConfig(config, {
    hermesConfig,
    timeoutMs: options.timeoutMs ?? CLI_CONNECT_TIMEOUT_MS,
    maxRetries: 0,
  });
}

/**
 * The server URL a configuration connects to, for messages (never throws).
 *
 * @param config The resolved configuration.
 * @returns The cleaned base URL, or `"(not configured)"`.
 *
 * @example
 * ```ts
 * import { serverLabel } from "./_common.ts";
 * import assert from "node:assert/strict";
 * const url = serverLabel({ apiKey: undefined, baseUrl: "http://localhost:8000/v3", environment: "production", timeout: undefined, apiKeyInFile: false, workspaceId: "w" });
 * assert.equal(url, "http://localhost:8000");
 * ```
 */
export function serverLabel(
  config: Parameters<typeof resolveHonchoConnection>[0],
): string {
  try {
    return resolveHonchoConnection(config).baseUrl;
  } catch {
    return "(not configured)";
  }
}

/**
 * A failed Honcho call in one line for the user: what went wrong, then the
 * fix ({@linkcode connectionFix}), each once.
 *
 * @param error What the call threw.
 * @param url The server.
 * @param timeoutMs The deadline the call had.
 * @param options What is known about the grant ({@linkcode connectionFix}).
 * @returns `<cause>; fix: <fix>`.
 */
export function describeHonchoFailure(
  error: unknown,
  url: string,
  timeoutMs: number = CLI_CONNECT_TIMEOUT_MS,
  options: ConnectionFixOptions = {},
): string {
  return `${describeHonchoError(error, { url, timeoutMs })}; fix: ${
    connectionFix(error, url, options)
  }`;
}

/**
 * {@linkcode describeHonchoFailure} for a profile: a missing network
 * permission gets the fix that fits whether the profile's `config.yaml`
 * already allows the server.
 *
 * @param config The resolved configuration (its home's `config.yaml` is read).
 * @param error What the call threw.
 * @param url The server.
 * @param timeoutMs The deadline the call had.
 * @returns `<cause>; fix: <fix>`.
 */
export async function describeProfileFailure(
  config: HonchoConfig,
  error: unknown,
  url: string,
  timeoutMs: number = CLI_CONNECT_TIMEOUT_MS,
): Promise<string> {
  let netListed: boolean | undefined;
  try {
    netListed = netListedIn(
      await loadConfig({ hermesHome: config.hermesHome }),
      new URL(url).host,
    );
  } catch {
    netListed = undefined;
  }
  return describeHonchoFailure(error, url, timeoutMs, { netListed });
}

// ---------------------------------------------------------------------------
// Small helpers
// ---------------------------------------------------------------------------

/**
 * The message of anything thrown.
 *
 * @param error What was thrown.
 * @returns Its message.
 *
 * @example
 * ```ts
 * import { errorText } from "./_common.ts";
 * import assert from "node:assert/strict";
 * assert.equal(errorText(new Error("boom")), "boom");
 * ```
 */

export { errorText, isRecord } from "../_util.ts";

/**
 * Checks an id the user typed (peer name, AI peer, workspace).
 *
 * @param what What it is, for the message (`peer name`, `workspace`).
 * @param value The value.
 * @returns The trimmed value.
 * @throws {HonchoCliError} When empty or not made of `[A-Za-z0-9_-]` (exit 2).
 *
 * @example
 * ```ts
 * import { checkHonchoId } from "./_common.ts";
 * import assert from "node:assert/strict";
 * assert.equal(checkHonchoId("peer name", " alice "), "alice");
 * assert.throws(() => checkHonchoId("peer name", "a b"));
 * ```
 */
export function checkHonchoId(what: string, value: string): string {
  const text = value.trim();
  if (!HONCHO_ID_REGEXP.test(text)) {
    const hint = text === "" ? "" : ` (e.g. '${sanitizeId(text)}')`;
    throw new HonchoCliError(
      `Cannot use '${value}' as ${what}: use 1-512 letters, digits, '_' or '-'${hint}`,
      2,
    );
  }
  return text;
}

/**
 * Whether `error` is the CLI's prompt cancellation (Ctrl-C, Ctrl-D, end of
 * input).
 *
 * @param error What was thrown.
 * @returns `true` when the user cancelled a prompt.
 *
 * @example
 * ```ts
 * import { PromptCancelled } from "@hermes/memory/cli";
 * import { isPromptCancelled } from "./_common.ts";
 * import assert from "node:assert/strict";
 * assert.equal(isPromptCancelled(new PromptCancelled()), true);
 * ```
 */
export function isPromptCancelled(error: unknown): boolean {
  return error instanceof PromptCancelled ||
    (error instanceof Error && error.name === "PromptCancelled");
}

/**
 * Runs a command body and turns the CLI's own failures into exit codes:
 * {@linkcode HonchoCliError} → `error: …` and its code; a cancelled prompt
 * → "Cancelled. No changes saved." and 1. Anything else propagates.
 *
 * @param io The CLI seam.
 * @param body The command.
 * @returns The exit code.
 *
 * @example
 * ```ts
 * import { memoryCliIo } from "@hermes/memory/cli";
 * import { HonchoCliError, runGuarded } from "./_common.ts";
 * import assert from "node:assert/strict";
 * const io = memoryCliIo();
 * const code = await runGuarded(io, () => Promise.reject(new HonchoCliError("Cannot do it")));
 * assert.equal(code, 1);
 * assert.equal(io.err, "error: Cannot do it\n");
 * ```
 */
export async function runGuarded(
  io: CliIo,
  body: () => Promise<number>,
): Promise<number> {
  try {
    return await body();
  } catch (error) {
    if (error instanceof HonchoCliError) {
      io.stderr(`error: ${error.message}\n`);
      if (error.exitCode === 2) {
        io.stderr("hint: run 'hermes honcho --help' for usage\n");
      }
      return error.exitCode;
    }
    if (isPromptCancelled(error)) {
      io.stdout("\nCancelled. No changes saved.\n");
      return FAILURE_EXIT_CODE;
    }
    throw error;
  }
}

/**
 * The `--target-profile` value given to the `honcho` command (anywhere on
 * the command line).
 *
 * @param honcho The `hermes honcho` command.
 * @returns The profile name, if given.
 *
 * @example
 * ```ts no-assert
 * import { createCommand } from "@hermes/memory/cli";
 * import { targetProfileOf } from "./_common.ts";
 * const profile = targetProfileOf(createCommand("honcho"));
 * ```
 */
export function targetProfileOf(honcho: HermesCommand): string | undefined {
  const value = honcho.opts().targetProfile;
  return typeof value === "string" ? value : undefined;
}

/**
 * A `[host] ` label for non-default hosts (`_label(host)` of the spec).
 *
 * @param hostKey The host key.
 * @returns `""` for `hermes`, else `[<host>] `.
 *
 * @example
 * ```ts
 * import { hostLabel } from "./_common.ts";
 * import assert from "node:assert/strict";
 * assert.equal(hostLabel("hermes_coder"), "[hermes_coder] ");
 * assert.equal(hostLabel("hermes"), "");
 * ```
 */
export function hostLabel(hostKey: string): string {
  return hostKey === "hermes" ? "" : `[${hostKey}] `;
}

/**
 * Lists the profiles: `default` first, then every directory under
 * `<root>/profiles/` with a valid profile name, sorted.
 *
 * @param defaultRoot The default Hermes root.
 * @returns Profile names and homes.
 *
 * @example
 * ```ts no-assert
 * import { listProfiles } from "./_common.ts";
 * const profiles = await listProfiles("/home/me/.hermes");
 * ```
 */
export async function listProfiles(
  defaultRoot: string,
): Promise<{ name: string; home: string }[]> {
  const out = [{ name: "default", home: defaultRoot }];
  const names: string[] = [];
  try {
    for await (const entry of Deno.readDir(join(defaultRoot, "profiles"))) {
      if (!entry.isDirectory) continue;
      if (!/^[A-Za-z0-9][A-Za-z0-9_.-]*$/.test(entry.name)) continue;
      if (entry.name.includes("..") || entry.name === "default") continue;
      names.push(entry.name);
    }
  } catch {
    // No profiles directory.
  }
  names.sort();
  for (const name of names) {
    out.push({ name, home: join(defaultRoot, "profiles", name) });
  }
  return out;
}

/**
 * Loads one profile's configuration with that profile's `.env` secrets
 * (for commands that go over every profile).
 *
 * @param home The profile's home.
 * @param profile The profile's name.
 * @returns The resolved configuration.
 *
 * @example
 * ```ts no-assert
 * import { listProfiles, loadProfileConfig } from "./_common.ts";
 * for (const profile of await listProfiles("/home/me/.hermes")) {
 *   const config = await loadProfileConfig(profile.home, profile.name);
 * }
 * ```
 */
export async function loadProfileConfig(
  home: string,
  profile: string,
): Promise<HonchoConfig> {
  return await withProfileSecrets(
    home,
    "",
    () => loadHonchoConfig({ hermesHome: home, profile }),
  );
}

/**
 * The bare name of a profile for an AI peer: the part after `.` of a legacy
 * `hermes.<name>` host key, else the host key itself (plugins/memory/honcho/SPEC.md §12 `enable`).
 *
 * @param hostKey The host key.
 * @returns The AI peer name.
 *
 * @example
 * ```ts
 * import { aiPeerForHost } from "./_common.ts";
 * import assert from "node:assert/strict";
 * assert.equal(aiPeerForHost("hermes.coder"), "coder");
 * assert.equal(aiPeerForHost("hermes_coder"), "hermes_coder");
 * ```
 */
export function aiPeerForHost(hostKey: string): string {
  const dot = hostKey.indexOf(".");
  return dot >= 0 ? hostKey.slice(dot + 1) || hostKey : hostKey;
}
