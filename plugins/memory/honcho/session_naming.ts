/**
 * Which Honcho session a conversation writes to (honcho-provider §2).
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
import { basename } from "node:path";
import { resolveAgentCwd } from "@hermes/memory/provider";
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
 *
 * @param value Any key.
 * @returns The id.
 *
 * @example Using sanitizeId
 * ```ts
 * import { sanitizeId } from "./session_naming.ts";
 * import assert from "node:assert/strict";
 * assert.equal(sanitizeId("telegram:42"), "telegram-42");
 * assert.equal(sanitizeId("a  b"), "a--b");
 * ```
 */
export function sanitizeId(value: string): string {
  return value.replace(/[^A-Za-z0-9_-]/g, "-");
}

/**
 * Slugs text: every run of characters outside `[A-Za-z0-9_-]` becomes one
 * `-`, then leading and trailing `-` are stripped.
 *
 * @param value Any text.
 * @returns The slug (possibly empty).
 *
 * @example Using slugify
 * ```ts
 * import { slugify } from "./session_naming.ts";
 * import assert from "node:assert/strict";
 * assert.equal(slugify("agent:main:telegram:dm:42"), "agent-main-telegram-dm-42");
 * assert.equal(slugify("  My Project! "), "My-Project");
 * ```
 */
export function slugify(value: string): string {
  return value.replace(/[^A-Za-z0-9_-]+/g, "-").replace(/^-+|-+$/g, "");
}

function sha256Hex(value: string): string {
  return createHash("sha256").update(value, "utf8").digest("hex");
}

/**
 * Enforces the 100-character limit: a longer name keeps its first 91
 * sanitised characters (trailing `-` stripped) plus `-` and the first 8 hex
 * digits of the SHA-256 of `original`.
 *
 * @param name The candidate name.
 * @param original What the hash is taken over. @default {name}
 * @returns A name of at most 100 characters.
 *
 * @example Using enforceSessionIdLimit
 * ```ts
 * import { enforceSessionIdLimit } from "./session_naming.ts";
 * import assert from "node:assert/strict";
 * assert.equal(enforceSessionIdLimit("short"), "short");
 * assert.equal(enforceSessionIdLimit("x".repeat(150)).length, 100);
 * ```
 */
export function enforceSessionIdLimit(
  name: string,
  original: string = name,
): string {
  if (name.length <= MAX_SESSION_ID_CHARS) return name;
  const head = sanitizeId(name).slice(0, MAX_SESSION_ID_CHARS - 8 - 1).replace(
    /-+$/,
    "",
  );
  return `${head}-${sha256Hex(original).slice(0, 8)}`;
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

/**
 * Runs `git rev-parse --show-toplevel` in `cwd` with a 5 s timeout.
 *
 * @param cwd The directory.
 * @returns The repository top, or `undefined` outside a repository or when
 * git cannot run (missing, not permitted, timed out).
 *
 * @example Using gitTopLevel
 * ```ts no-assert
 * import { gitTopLevel } from "./session_naming.ts";
 * const top = await gitTopLevel(".");
 * ```
 */
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
 * Resolves the Honcho session name (honcho-provider §2.1, G2 order; first
 * match wins):
 *
 * 1. a gateway session key with a non-empty slug → its slug (no peer prefix);
 * 2. `per-session` with a session id → the id (not slugged), peer-prefixed;
 * 3. `sessions[cwd]` → verbatim;
 * 4. an explicit title (source not `derived`/`llm`) → its slug, peer-prefixed;
 * 5. `per-repo` → the repository folder's name (else the cwd's), peer-prefixed;
 * 6. `per-directory` (or `per-session` without an id) → the cwd's folder name, peer-prefixed;
 * 7. anything else (`global`, unknown) → the workspace id.
 *
 * The peer prefix is `<peerName>-` when `sessionPeerPrefix` is on and a
 * peer name is set. Then, with `sessionAiPeerPrefix`, `<slug(aiPeer)>-` is
 * prepended. Finally the 100-character limit applies (hash over the
 * original gateway key for rule 1).
 *
 * @param config The naming settings.
 * @param options The conversation's cwd, title, ids and gateway key.
 * @returns The name (may be empty, e.g. for the cwd `/`; see {@linkcode resolveSessionKey}).
 *
 * @example A gateway conversation
 * ```ts
 * import { resolveSessionName } from "./session_naming.ts";
 * import assert from "node:assert/strict";
 * const config = {
 *   sessionStrategy: "per-directory", sessions: {}, sessionPeerPrefix: false,
 *   sessionAiPeerPrefix: false, peerName: undefined, aiPeer: "hermes", workspaceId: "hermes",
 * };
 * assert.equal(
 *   await resolveSessionName(config, { gatewaySessionKey: "agent:main:telegram:dm:42" }),
 *   "agent-main-telegram-dm-42",
 * );
 * ```
 */
export async function resolveSessionName(
  config: SessionNamingConfig,
  options: ResolveSessionNameOptions = {},
): Promise<string> {
  const prefix = (name: string): string =>
    config.sessionPeerPrefix && config.peerName
      ? `${config.peerName}-${name}`
      : name;
  let name: string;
  const gatewaySlug = options.gatewaySessionKey
    ? slugify(options.gatewaySessionKey)
    : "";
  const strategy = config.sessionStrategy;
  if (gatewaySlug) {
    name = enforceSessionIdLimit(gatewaySlug, options.gatewaySessionKey);
  } else if (strategy === "per-session" && options.sessionId) {
    name = prefix(options.sessionId);
  } else {
    const cwd = options.cwd ?? currentDirectory();
    const mapped = cwd !== undefined && Object.hasOwn(config.sessions, cwd)
      ? config.sessions[cwd]
      : undefined;
    const titleSlug = options.sessionTitle &&
        !AUTOMATIC_TITLE_SOURCES.has(options.sessionTitleSource ?? "")
      ? slugify(options.sessionTitle)
      : "";
    if (mapped !== undefined) {
      name = mapped;
    } else if (titleSlug) {
      name = prefix(titleSlug);
    } else if (strategy === "per-repo") {
      const top = cwd === undefined
        ? undefined
        : await (options.gitTopLevel ?? gitTopLevel)(cwd);
      name = prefix(basename(top ?? cwd ?? ""));
    } else if (strategy === "per-directory" || strategy === "per-session") {
      name = prefix(basename(cwd ?? ""));
    } else {
      name = config.workspaceId;
    }
  }
  if (config.sessionAiPeerPrefix && config.aiPeer) {
    name = `${slugify(config.aiPeer)}-${name}`;
  }
  return enforceSessionIdLimit(name);
}

/**
 * The provider's session key: the resolved name, else the Hermes session
 * id, else `hermes-default`.
 *
 * @param config The naming settings.
 * @param options As for {@linkcode resolveSessionName}.
 * @returns A non-empty key (sanitise it with {@linkcode sanitizeId} for Honcho).
 *
 * @example Using resolveSessionKey
 * ```ts
 * import { resolveSessionKey } from "./session_naming.ts";
 * import assert from "node:assert/strict";
 * const config = {
 *   sessionStrategy: "per-session", sessions: {}, sessionPeerPrefix: false,
 *   sessionAiPeerPrefix: false, peerName: undefined, aiPeer: "hermes", workspaceId: "hermes",
 * };
 * assert.equal(await resolveSessionKey(config, { sessionId: "20260309_175514_9797dd" }), "20260309_175514_9797dd");
 * ```
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
 * Names the session of a bot-to-bot exchange (§2.3):
 * `<sessionKey>:<prefix>:<sanitised aiPeer>:<sanitised ident>-<sha256(ident)[:8]>`,
 * then the 100-character limit.
 *
 * @param sessionKey The conversation's session key.
 * @param options Prefix, bot identity and AI peer.
 * @returns The key (sanitise with {@linkcode sanitizeId} before sending).
 *
 * @example Using a2aSessionKey
 * ```ts
 * import { a2aSessionKey } from "./session_naming.ts";
 * import assert from "node:assert/strict";
 * const key = a2aSessionKey("chat-1", { prefix: "a2a", ident: "bot:7", aiPeer: "hermes" });
 * assert.match(key, /^chat-1:a2a:hermes:bot-7-[0-9a-f]{8}$/);
 * ```
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
