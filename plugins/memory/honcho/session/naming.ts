/**
 * Which Honcho session a conversation writes to (plugins/memory/honcho/SPEC.md §3).
 * @module
 */

import { resolveAgentCwd } from "../../../../src/provider/mod.ts";
import type { HonchoConfig } from "../config/config.ts";
import { sanitizeId, sha256Hex } from "../_util.ts";

/** The longest session name kept as-is; longer ones are cut and hashed. */
export const MAX_SESSION_ID_CHARS = 100;

/** Title sources that are generated automatically (their titles are ignored). */
export const AUTOMATIC_TITLE_SOURCES: ReadonlySet<string> = new Set([
  "derived",
  "llm",
]);

/** The session id of a key, within 100 characters (Hermes sends longer ids, which Honcho refuses). */
export function honchoSessionId(key: string): string {
  return enforceSessionIdLimit(sanitizeId(key), key);
}

/** Each run outside `[A-Za-z0-9_-]` becomes one `-`; leading and trailing `-` stripped. */
export function slugify(value: string): string {
  return value.replace(/[^A-Za-z0-9_-]+/g, "-").replace(/^-+|-+$/g, "");
}

/** Hermes' 100-code-point limit: the first 91 (trailing `-` stripped), `-`, 8 hex of sha256(original). */
export function enforceSessionIdLimit(
  name: string,
  original: string = name,
): string {
  const points = [...name];
  if (points.length <= MAX_SESSION_ID_CHARS) return name;
  const head = points.slice(0, MAX_SESSION_ID_CHARS - 8 - 1).join("").replace(
    /-+$/,
    "",
  );
  return `${head}-${sha256Hex(original).slice(0, 8)}`;
}

/** Python's `Path(p).name` (`""` for `/`, `.` and `""`). */
export function pathName(path: string): string {
  const parts = path.split("/").filter((p) => p !== "" && p !== ".");
  return parts[parts.length - 1] ?? "";
}

export type SessionNamingConfig = Pick<
  HonchoConfig,
  | "sessionStrategy"
  | "sessions"
  | "sessionPeerPrefix"
  | "sessionAiPeerPrefix"
  | "peerName"
  | "aiPeer"
  | "workspaceId"
>;

/** Finds the top of the git repository containing a directory. */
export type GitTopLevel = (cwd: string) => Promise<string | undefined>;

export interface ResolveSessionNameOptions {
  /** @default {resolveAgentCwd()} */
  cwd?: string;
  sessionTitle?: string;
  /** `derived` and `llm` titles are ignored; missing = explicit. */
  sessionTitleSource?: string;
  /** The Hermes session id. */
  sessionId?: string;
  /** Wins over everything. */
  gatewaySessionKey?: string;
  /** @default {gitTopLevel} */
  gitTopLevel?: GitTopLevel;
}

/** Where a gateway conversation comes from (the host's initialize options). */
export interface GatewaySource {
  /** `telegram`, `discord`, … (`cli`, `local`, `cron`, `tui`, `tool` are not gateways). */
  platform?: string;
  /** `dm`, `group`, `channel`, `thread`, … */
  chatType?: string;
  chatId?: string;
  threadId?: string;
  userId?: string;
  /** Preferred for group isolation, as Hermes does. */
  userIdAlt?: string;
}

const NOT_GATEWAYS: ReadonlySet<string> = new Set([
  "",
  "cli",
  "local",
  "cron",
  "tui",
  "tool",
]);

/** The Hermes gateway's `build_session_key` (defaults); `undefined` off gateways or without a chat type. */
export function gatewaySessionKeyFor(
  source: GatewaySource,
): string | undefined {
  const platform = source.platform?.trim() ?? "";
  const chatType = source.chatType?.trim() ?? "";
  if (NOT_GATEWAYS.has(platform) || chatType === "") return undefined;
  const chatId = source.chatId?.trim() || undefined;
  const threadId = source.threadId?.trim() || undefined;
  if (chatType === "dm") {
    return ["agent:main", platform, "dm", chatId, threadId].filter((part) =>
      part !== undefined
    ).join(":");
  }
  const participant = source.userIdAlt?.trim() || source.userId?.trim() ||
    undefined;
  const parts = ["agent:main", platform, chatType];
  if (chatId !== undefined) parts.push(chatId);
  if (threadId !== undefined) parts.push(threadId);
  // Threads are shared by their participants; other group chats are not.
  if (threadId === undefined && participant !== undefined) {
    parts.push(participant);
  }
  return parts.join(":");
}

/** Runs `git rev-parse --show-toplevel` in `cwd` with a 5 s timeout. */
export async function gitTopLevel(cwd: string): Promise<string | undefined> {
  try {
    const output = await new Deno.Command("git", {
      args: ["rev-parse", "--show-toplevel"],
      cwd,
      stdout: "piped",
      stderr: "null",
      signal: AbortSignal.timeout(5_000),
    }).output();
    if (!output.success) return undefined;
    const top = new TextDecoder().decode(output.stdout).trim();
    return top || undefined;
  } catch {
    return undefined;
  }
}

/**
 * The Honcho session name as Hermes resolves it (plugins/memory/honcho/SPEC.md §3):
 * gateway key → per-session id → `sessions[cwd]` → title → per-repo →
 * per-directory → workspace, then the AI-peer prefix and the limit.
 */
export async function resolveSessionName(
  config: SessionNamingConfig,
  options: ResolveSessionNameOptions = {},
): Promise<string> {
  // One async function with no await on the common paths: callers that
  // resolve identities concurrently keep the order they started in.
  const finish = (name: string): string => {
    if (name && config.sessionAiPeerPrefix && config.aiPeer) {
      const ai = slugify(config.aiPeer);
      if (ai) {
        const prefixed = `${ai}-${name}`;
        return enforceSessionIdLimit(prefixed, prefixed);
      }
    }
    return name;
  };
  const prefix = (name: string): string =>
    config.sessionPeerPrefix && config.peerName
      ? `${config.peerName}-${name}`
      : name;
  const strategy = config.sessionStrategy;
  const gatewaySlug = options.gatewaySessionKey
    ? slugify(options.gatewaySessionKey)
    : "";
  if (gatewaySlug) {
    return finish(
      enforceSessionIdLimit(gatewaySlug, options.gatewaySessionKey),
    );
  }
  if (strategy === "per-session" && options.sessionId) {
    return finish(prefix(options.sessionId));
  }
  const cwd = options.cwd || currentDirectory() || "";
  const mapped = Object.hasOwn(config.sessions, cwd)
    ? config.sessions[cwd]
    : undefined;
  if (mapped) return finish(mapped);
  const titleSlug = options.sessionTitle &&
      !AUTOMATIC_TITLE_SOURCES.has(options.sessionTitleSource ?? "")
    ? slugify(options.sessionTitle)
    : "";
  if (titleSlug) return finish(prefix(titleSlug));
  if (strategy === "per-repo") {
    const top = cwd === "" ? undefined : await (options.gitTopLevel ??
      gitTopLevel)(cwd);
    return finish(
      prefix((top === undefined ? "" : pathName(top)) || pathName(cwd)),
    );
  }
  if (strategy === "per-directory" || strategy === "per-session") {
    return finish(prefix(pathName(cwd)));
  }
  return finish(config.workspaceId);
}

/** The resolved name, else the Hermes session id, else `hermes-default`. */
export async function resolveSessionKey(
  config: SessionNamingConfig,
  options: ResolveSessionNameOptions = {},
): Promise<string> {
  return (await resolveSessionName(config, options)) || options.sessionId ||
    "hermes-default";
}

/** Options of {@linkcode a2aSessionKey}: the parts of core's `a2a_key(author)` and the AI peer. */
export interface A2aSessionKeyOptions {
  prefix: string;
  ident: string;
  aiPeer: string;
}

/** `<sessionKey>:<prefix>:<aiPeer>:<ident>-<sha256(ident)[:8]>` within the limit (plugins/memory/honcho/SPEC.md §3). */
export function a2aSessionKey(
  sessionKey: string,
  options: A2aSessionKeyOptions,
): string {
  const key = `${sessionKey}:${options.prefix}:${sanitizeId(options.aiPeer)}:${
    sanitizeId(options.ident)
  }-${sha256Hex(options.ident).slice(0, 8)}`;
  return enforceSessionIdLimit(key);
}

function currentDirectory(): string | undefined {
  try {
    return resolveAgentCwd();
  } catch {
    return undefined;
  }
}
