/** What every `hermes honcho …` command shares: its profile scope, reading and writing `honcho.json`, connecting, and wording failures. @module */

import { join, resolve } from "../../../../src/provider/_bundled.ts";
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
import { HonchoClient } from "../client/client.ts";
import { type HonchoConfig, loadHonchoConfig } from "../config/config.ts";
import { hostKeyForProfile, profileFromHermesHome } from "../config/paths.ts";
import { readHonchoConfigFile } from "../config/file.ts";
import { resolveHonchoConnection } from "../client/connection.ts";
import { describeHonchoError } from "../client/errors.ts";
import { errorText, isRecord, sanitizeId } from "../_util.ts";
import {
  connectionFix,
  type ConnectionFixOptions,
  netListedIn,
} from "./_fixes.ts";

export const CLI_CONNECT_TIMEOUT_MS = 5_000;

/** A failure the user can fix: printed as `error: <message>`, exits with `exitCode`. */
export class HonchoCliError extends Error {
  constructor(message: string, readonly exitCode = 1) {
    super(message);
    this.name = "HonchoCliError";
  }
}

export interface HonchoCliScope {
  io: CliIo;
  /** The active profile home: where writes go (`<home>/honcho.json`). */
  hermesHome: string;
  /** The profile whose host block is used (`--target-profile`, else the active one). */
  profile: string;
  /** Set when `--target-profile` named the profile. */
  targetProfile: string | undefined;
  /** The default Hermes root (profiles live in `<root>/profiles/`). */
  defaultRoot: string;
  /** For the cwd → session map. */
  cwd: string;
}

/** `--target-profile`, and the profile home (setup's own runs and tests set it). */
export interface ResolveScopeOptions {
  targetProfile?: string;
  hermesHome?: string;
}

export function resolveScope(
  io: CliIo,
  options: ResolveScopeOptions = {},
): HonchoCliScope {
  const hermesHome = resolve(options.hermesHome ?? getHermesHome());
  const defaultRoot = resolve(getDefaultHermesRoot());
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
    cwd: Deno.cwd(),
  };
}

export function profileHomeUnder(defaultRoot: string, profile: string): string {
  return profile === "default" || profile === "custom"
    ? defaultRoot
    : join(defaultRoot, "profiles", profile);
}

/** Runs `fn` with the profile's `.env` as secret scope (as the agent sees it), `HERMES_HONCHO_HOST` pinned to `hostKey`. */
async function withProfileSecrets<T>(
  hermesHome: string,
  hostKey: string | undefined,
  fn: () => Promise<T>,
): Promise<T> {
  // An unreadable .env only means fewer variables.
  let scope: Record<string, string> = await buildProfileSecretScope(hermesHome)
    .catch(() => ({}));
  if (hostKey !== undefined) scope = { ...scope, HERMES_HONCHO_HOST: hostKey };
  return await withSecretScope(scope, fn);
}

/** The configuration a command works on, with the profile's `.env` as environment; `--target-profile` pins the host key (`HERMES_HONCHO_HOST` cannot redirect it). */
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

/** Keys to set (a value) or remove (`undefined`) at the root and in the host block `hostKey`. */
export interface HonchoFileEdit {
  root?: Record<string, unknown>;
  host?: Record<string, unknown>;
  hostKey?: string;
}

/** An edit computed from the file as read inside the lock, so a concurrent writer's change is never undone; `undefined` writes nothing. */
export type HonchoFileUpdate = (
  current: Readonly<Record<string, unknown>>,
) => HonchoFileEdit | undefined;

export interface HonchoFileWrite {
  path: string;
  /** `false` when an update function asked for no change (nothing was written). */
  changed: boolean;
  /** The file whose settings were copied in first (the local file did not exist). */
  copiedFrom: string | undefined;
}

/**
 * Edits `$HERMES_HOME/honcho.json` under its lock, atomically, mode `0600`; a missing file starts as a copy
 * of the one the profile resolves. Refuses when the file does not parse, is read-only, or `hosts` is no object.
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
    requireReadableConfig(
      { configError: file.error, configPath: path },
      "change",
    );
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

function assign(
  target: Record<string, unknown>,
  changes: Record<string, unknown>,
): void {
  for (const [key, value] of Object.entries(changes)) {
    if (value === undefined) delete target[key];
    else target[key] = value;
  }
}

function applyEdit(
  target: Record<string, unknown>,
  edit: HonchoFileEdit,
  path: string,
): void {
  assign(target, edit.root ?? {});
  if (edit.host === undefined) return;
  if (!edit.hostKey) {
    throw new TypeError("Cannot edit a host block without 'hostKey'");
  }
  if (target.hosts !== undefined && !isRecord(target.hosts)) {
    throw new HonchoCliError(
      `Cannot change ${path}: 'hosts' is not an object; fix the file, nothing was written`,
    );
  }
  const hosts = (target.hosts ??= {}) as Record<string, unknown>;
  if (!isRecord(hosts[edit.hostKey])) hosts[edit.hostKey] = {};
  assign(hosts[edit.hostKey] as Record<string, unknown>, edit.host);
}

/** The host block a write for this configuration should go to: the block that was read (a legacy `hermes.<name>` block stays where it is), else the host key. */
export function writeHostKey(
  config: Pick<HonchoConfig, "hostKey" | "hostBlockKey">,
): string {
  return config.hostBlockKey || config.hostKey;
}

/** Prints what a write did: the file, a copied-from note, and a warning when the targeted profile reads its own `honcho.json`. */
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
  const isFile = await Deno.stat(own).then((i) => i.isFile, () => false);
  if (own !== written.path && isFile) {
    scope.io.stderr(
      `warning: profile '${scope.profile}' reads its own ${own}, so this change does not reach it; run 'hermes --profile ${scope.profile} honcho …' to change that file\n`,
    );
  }
}

/** Refuses to go on when the file the command reads does not parse: the error names the file, line and column. */
export function requireReadableConfig(
  config: Pick<HonchoConfig, "configError" | "configPath">,
  verb = "use",
): void {
  if (!config.configError) return;
  throw new HonchoCliError(
    `Cannot ${verb} ${config.configPath}: ${
      describeConfigError(config)
    }; fix or remove the file, nothing was written`,
  );
}

/** Describes a config file parse error: `does not parse at line L, column C (reason)`. */
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

/** "profile NAME" for headers, saying which files it means: `--target-profile` works on its host block in this home's file, `--profile` in its own home. */
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

/** Builds a client for the CLI: the resolved connection (cleaned base URL, `"local"` key for a local server), a short timeout (each request's deadline) and no retries. */
export async function connectHoncho(
  config: HonchoConfig,
  timeoutMs: number = CLI_CONNECT_TIMEOUT_MS,
): Promise<HonchoClient> {
  // The profile's config.yaml supplies honcho.base_url fallbacks; a broken
  // one only loses them here.
  const hermesConfig = await loadConfig({ hermesHome: config.hermesHome })
    .catch(() => ({}));
  return HonchoClient.fromConfig(config, {
    hermesConfig,
    timeoutMs,
    maxRetries: 0,
  });
}

/** The server URL a configuration connects to, for messages (never throws). */
export function serverLabel(
  config: Parameters<typeof resolveHonchoConnection>[0],
): string {
  try {
    return resolveHonchoConnection(config).baseUrl;
  } catch {
    return "(not configured)";
  }
}

/** A failed Honcho call in one line for the user: what went wrong, then the fix ({@linkcode connectionFix}), each once. */
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

/** {@linkcode describeHonchoFailure} for a profile: a missing network permission gets the fix that fits whether the profile's `config.yaml` already allows the server. */
export async function describeProfileFailure(
  config: HonchoConfig,
  error: unknown,
  url: string,
  timeoutMs: number = CLI_CONNECT_TIMEOUT_MS,
): Promise<string> {
  const netListed = await loadConfig({ hermesHome: config.hermesHome })
    .then((yaml) => netListedIn(yaml, new URL(url).host))
    .catch(() => undefined);
  return describeHonchoFailure(error, url, timeoutMs, { netListed });
}

export function checkHonchoId(what: string, value: string): string {
  const text = value.trim();
  if (!/^[A-Za-z0-9_-]{1,512}$/.test(text)) {
    const hint = text === "" ? "" : ` (e.g. '${sanitizeId(text)}')`;
    throw new HonchoCliError(
      `Cannot use '${value}' as ${what}: use 1-512 letters, digits, '_' or '-'${hint}`,
      2,
    );
  }
  return text;
}

/** Why a file could not be read: a missing Deno read grant names the path to grant. */
export function readProblem(error: unknown, grant: string): string {
  if (error instanceof Error && error.name === "NotCapable") {
    return `no read permission (grant --allow-read=${grant})`;
  }
  return errorText(error);
}

/** Whether `error` is the CLI's prompt cancellation (Ctrl-C, Ctrl-D, end of input). */
export function isPromptCancelled(error: unknown): boolean {
  return error instanceof PromptCancelled ||
    (error instanceof Error && error.name === "PromptCancelled");
}

/** Runs a command body: {@linkcode HonchoCliError} → `error: …` and its code; a cancelled prompt → 1. Anything else propagates. */
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
      return 1;
    }
    throw error;
  }
}

/** The `--target-profile` value given to the `honcho` command (anywhere on the command line). */
export function targetProfileOf(honcho: HermesCommand): string | undefined {
  const value = honcho.opts().targetProfile;
  return typeof value === "string" ? value : undefined;
}

/** A `[host] ` label for non-default hosts (`_label(host)` of the spec). */
export function hostLabel(hostKey: string): string {
  return hostKey === "hermes" ? "" : `[${hostKey}] `;
}

export { listProfiles } from "../../../../src/cli/mod.ts";

/** Loads one profile's configuration with that profile's `.env` secrets (for commands that go over every profile). */
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

/** The bare name of a profile for an AI peer: the part after `.` of a legacy `hermes.<name>` host key, else the host key itself (plugins/memory/honcho/SPEC.md §12 `enable`). */
export function aiPeerForHost(hostKey: string): string {
  const dot = hostKey.indexOf(".");
  return dot >= 0 ? hostKey.slice(dot + 1) || hostKey : hostKey;
}
