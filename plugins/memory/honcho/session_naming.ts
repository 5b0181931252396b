/**
 * Which Honcho session a conversation writes to (plugins/memory/honcho/SPEC.md §3).
 *
 * {@linkcode resolveSessionName} applies the G2 order — gateway key →
 * per-session id → manual `sessions` map → explicit title → per-repo →
 * per-directory → workspace — then the optional AI-peer prefix and the
 * 100-character limit. {@linkcode sanitizeId} turns any key into a valid
 * Honcho id, and {@linkcode a2aSessionKey} names bot-to-bot sessions.
 *
 * @module
 */

import { createHash } from "node:crypto";
import { resolveAgentCwd } from "../../../src/provider/mod.ts";
import type { HonchoConfig } from "./config.ts";

/** The longest session name kept as-is; longer ones are cut and hashed. */
export const MAX_SESSION_ID_CHARS = 100;

/** Title sources that are generated automatically (their titles are ignored). */
export const AUTOMATIC_TITLE_SOURCES: ReadonlySet<string> = new Set([
  "derived",
  "llm",
]);

/**
 * Makes a Honcho id: every character outside `[A-Za-z0-9_-]` becomes `-`
 * (one for one: no collapsing, no trimming). Used for session and peer ids.
 */
export function sanitizeId(value: string): string {
  return value.replace(/[^A-Za-z0-9_-]/g, "-");
}

/**
 * The Honcho session id of a session key: {@linkcode sanitizeId}, then the
 * 100-character limit (hash over the key). Hermes sends longer ids as they
 * are and Honcho refuses them; a title or folder name longer than 100
 * characters still gets a session here.
 */
export function honchoSessionId(key: string): string {
  return enforceSessionIdLimit(sanitizeId(key), key);
}

/**
 * Slugs text: every run of characters outside `[A-Za-z0-9_-]` becomes one
 * `-`, then leading and trailing `-` are stripped.
 */
export function slugify(value: string): string {
  return value.replace(/[^A-Za-z0-9_-]+/g, "-").replace(/^-+|-+$/g, "");
}

function sha256Hex(value: string): string {
  return createHash("sha256").update(value, "utf8").digest("hex");
}

/**
 * Enforces the 100-character limit as Hermes does: a name of at most 100
 * code points is kept; a longer one keeps its first 91 code points (then
 * trailing `-` stripped) plus `-` and the first 8 hex digits of the SHA-256
 * of `original` (UTF-8). The kept part is not re-sanitised.
 */
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

/**
 * The last component of a path as Python's `Path(p).name` gives it: `""`
 * for `/`, `.` and `""`; a trailing slash and `.` components are ignored.
 */
export function pathName(path: string): string {
  const parts = path.split("/").filter((p) => p !== "" && p !== ".");
  return parts[parts.length - 1] ?? "";
}

/** The configuration keys session naming reads. */
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

/** Options of {@linkcode resolveSessionName}. */
export interface ResolveSessionNameOptions {
  /** The conversation's working directory (the provider passes the `cwd` init kwarg or the agent's runtime cwd). @default {resolveAgentCwd()} */
  cwd?: string;
  /** The session's title. */
  sessionTitle?: string;
  /** How the title was made: `derived` and `llm` titles are ignored; missing = explicit. */
  sessionTitleSource?: string;
  /** The Hermes session id. */
  sessionId?: string;
  /** The gateway's session key (wins over everything). */
  gatewaySessionKey?: string;
  /** Finds the repository top for `per-repo`. @default {runs `git rev-parse --show-toplevel`, 5 s timeout} */
  gitTopLevel?: GitTopLevel;
}

/** Where a gateway conversation comes from (the host's initialize options). */
export interface GatewaySource {
  /** `telegram`, `discord`, … (`cli`, `local`, `cron`, `tui`, `tool` are not gateways). */
  platform?: string;
  /** `dm`, `group`, `channel`, `thread`, … */
  chatType?: string;
  /** The chat id. */
  chatId?: string;
  /** The thread id. */
  threadId?: string;
  /** The platform user id. */
  userId?: string;
  /** An alternative user id (preferred for group isolation, as Hermes does). */
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

/**
 * The session key the Hermes gateway builds for a conversation
 * (`build_session_key` with its defaults: group chats isolated per user,
 * threads shared), for a host that gives the chat's identity but not the
 * key itself. `undefined` off gateways or without a chat type.
 */
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
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), 5_000);
  try {
    const output = await new Deno.Command("git", {
      args: ["rev-parse", "--show-toplevel"],
      cwd,
      stdout: "piped",
      stderr: "null",
      signal: controller.signal,
    }).output();
    if (!output.success) return undefined;
    const top = new TextDecoder().decode(output.stdout).trim();
    return top || undefined;
  } catch {
    return undefined;
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Resolves the Honcho session name as Hermes does (first match wins):
 *
 * 1. a gateway session key whose slug is not empty → the slug, cut to 100
 *    characters with a hash of the key (no peer prefix);
 * 2. `per-session` with a session id → the id as given, peer-prefixed;
 * 3. a non-empty `sessions[cwd]` (exact path) → verbatim;
 * 4. a title whose slug is not empty (and whose source is not `derived` or
 *    `llm`) → the slug, peer-prefixed;
 * 5. `per-repo` → the repository folder's name (else the cwd's), peer-prefixed;
 * 6. `per-directory` (or `per-session` without an id) → the cwd's folder
 *    name, peer-prefixed;
 * 7. anything else (`global`, unknown) → the workspace id.
 *
 * Only the gateway key is slugged and cut; titles are slugged but not cut,
 * ids and folder names are used as they are. The peer prefix is
 * `<peerName>-` when `sessionPeerPrefix` is on and a peer name is set. With
 * `sessionAiPeerPrefix`, a non-empty result gets `<slug(aiPeer)>-` in front
 * (when that slug is not empty), and the prefixed name is then cut to 100
 * characters.
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

/**
 * The provider's session key: the resolved name, else the Hermes session
 * id, else `hermes-default`.
 */
export async function resolveSessionKey(
  config: SessionNamingConfig,
  options: ResolveSessionNameOptions = {},
): Promise<string> {
  return (await resolveSessionName(config, options)) || options.sessionId ||
    "hermes-default";
}

/** Options of {@linkcode a2aSessionKey}. */
export interface A2aSessionKeyOptions {
  /** The prefix part of core's `a2a_key(author)` (e.g. `a2a`). */
  prefix: string;
  /** The identity part of core's `a2a_key(author)` (the bot's id). */
  ident: string;
  /** This agent's AI peer. */
  aiPeer: string;
}

/**
 * Names the session of a bot-to-bot exchange (plugins/memory/honcho/SPEC.md §3):
 * `<sessionKey>:<prefix>:<sanitised aiPeer>:<sanitised ident>-<sha256(ident)[:8]>`,
 * then the 100-character limit.
 */
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
