/**
 * One-time status notices prepended to the injected context
 * (plugins/memory/honcho/SPEC.md §9): reads fail open and the model is told
 * once per episode why memory is missing; a success ends the episode.
 * @module
 */

import { join } from "../../../src/provider/_bundled.ts";
import { describeHonchoError, isHonchoError } from "./client/errors.ts";

/** Why memory is degraded. */
export type NoticeCause =
  | "auth"
  | "unreachable"
  | "rate-limited"
  | "no-peer"
  | "permission"
  | "refused"
  | "observer-limit";

/** The recall status line's words for a cause (`⚠ Honcho — <this>`); the notice has the fix. */
export const RECALL_FAILURE_TEXT: Record<NoticeCause, string> = {
  auth: "recall failed: the server refused the API key (HTTP 401)",
  unreachable: "recall failed: the server is unreachable",
  "rate-limited": "recall failed: the server is rate-limiting requests",
  "no-peer":
    "off for this session: no user peer (set one with 'hermes honcho peer --user NAME')",
  permission: "recall failed: no network permission for the server",
  refused: "recall failed: the server refused the request",
  "observer-limit":
    "recall failed: the session already has Honcho's 10 observing peers",
};

/** The heading every notice starts with. */
export const NOTICE_HEADING = "[Honcho memory status]";

export interface NoticeTextOptions {
  /** A short reason (no secrets), e.g. `HTTP 503` or `Invalid JWT`. */
  reason?: string;
  /** The no-peer fix differs on gateways. */
  platform?: string;
  hermesHome?: string;
  /** The host a denied network permission is for (`127.0.0.1:8000`). */
  host?: string;
}

/** The fix for Honcho's limit of 10 observing peers per session (usually profiles sharing one). */
const OBSERVER_LIMIT_FIX =
  "each profile (or conversation) needs its own Honcho session: a gateway " +
  "host passes its session key (initialize option gatewaySessionKey), " +
  "or set sessionStrategy to per-session (hermes honcho strategy " +
  "per-session); or stop this AI peer observing the others " +
  "(observationMode: unified, or observation.ai.observeOthers: false)";

/** Honcho's "… with 11 observers. Maximum allowed is 10 observers per session. Observers are peers with 'observe_others' set to true." (older servers: "Cannot have more than 10 peers with observe_others=true"). */
function isObserverLimit(error: unknown): boolean {
  if (!isHonchoError(error) || error.status === undefined) return false;
  if (error.status < 400 || error.status >= 500) return false;
  const detail = (error.body as { detail?: unknown } | undefined)?.detail;
  const text = typeof detail === "string" ? detail : error.message;
  return /observe_others/i.test(text) &&
    /more than \d+ peers|maximum allowed is \d+ observers/i.test(text);
}

function inHome(hermesHome: string | undefined, file: string): string {
  return hermesHome ? join(hermesHome, file) : file;
}

/** The text of a notice. */
export function noticeText(
  cause: NoticeCause,
  options: NoticeTextOptions = {},
): string {
  const reason = options.reason ? ` (${options.reason})` : "";
  switch (cause) {
    case "auth":
      return `${NOTICE_HEADING} Honcho authentication failed${reason}: the ` +
        "API key or login has expired or was refused, so memory sync and " +
        "recall are paused. Tell the user once that they can fix it by " +
        "running 'hermes honcho setup'.";
    case "rate-limited":
      return `${NOTICE_HEADING} Honcho is rate-limiting requests${reason}: ` +
        "recalled memory may be missing or stale for now. Turns are kept " +
        "locally and stored once Honcho accepts them again.";
    case "permission": {
      const host = options.host ?? "the Honcho server";
      const where = inHome(options.hermesHome, "config.yaml");
      return `${NOTICE_HEADING} Honcho memory is blocked: this process may ` +
        `not connect to ${host}${reason}, so turns are kept locally and not ` +
        `sent. Tell the user once that they can fix it by adding "${host}" ` +
        `to memory.permissions.honcho.net in ${where} (or running 'hermes ` +
        "honcho setup'), then restarting Hermes.";
    }
    case "refused": {
      const where = inHome(options.hermesHome, "honcho.json");
      return `${NOTICE_HEADING} Honcho refused the memory writes${reason}: ` +
        "turns are kept locally and not sent until that is fixed. Tell the " +
        "user once to check the workspace, peer and session settings in " +
        `${where} ('hermes honcho status' shows them; 'hermes honcho ` +
        "outbox' shows what is queued).";
    }
    case "observer-limit":
      return `${NOTICE_HEADING} Honcho refused this conversation's ` +
        `session${reason}: too many peers in it observe the others, so ` +
        "turns are kept locally and not sent. Tell the user once: " +
        OBSERVER_LIMIT_FIX;
    case "no-peer": {
      const gateway = options.platform !== undefined &&
        !["", "cli", "local", "tui", "mcp"].includes(options.platform);
      const fix = gateway
        ? "The platform supplied no user id for this conversation, so " +
          "memory cannot be attributed to anyone."
        : "Set one with 'hermes honcho peer --user <name>'.";
      return `${NOTICE_HEADING} Honcho memory is off for this session: no ` +
        `user peer could be named. ${fix}`;
    }
    default:
      return `${NOTICE_HEADING} Honcho is unreachable${reason}: recalled ` +
        "memory may be missing or stale for now. Turns are kept locally and " +
        "stored once Honcho is back.";
  }
}

/** The outage a failure means; `undefined` for a bug (a 404 or 422), not an outage. */
export function classifyFailure(error: unknown): NoticeCause | undefined {
  if (isObserverLimit(error)) return "observer-limit";
  if (isHonchoError(error, "auth")) return "auth";
  if (isHonchoError(error, "rate_limited")) return "rate-limited";
  if (
    isHonchoError(
      error,
      "connection",
      "timeout",
      "server_error",
      "invalid_response",
    )
  ) return "unreachable";
  if (isHonchoError(error, "no_peer")) return "no-peer";
  if (isHonchoError(error, "permission")) return "permission";
  return undefined;
}

/** Remembers which causes were reported so each shows once per episode. */
export class NoticeBoard {
  #pending = new Map<NoticeCause, string>();
  #shown = new Set<NoticeCause>();
  #active: NoticeCause | undefined;
  #platform: string | undefined;
  #hermesHome: string | undefined;

  constructor(platform?: string, hermesHome?: string) {
    this.#platform = platform;
    this.#hermesHome = hermesHome;
  }

  get active(): NoticeCause | undefined {
    return this.#active;
  }

  /** Records a failure; the first of its cause in this episode becomes a pending notice. */
  report(cause: NoticeCause, reason?: string, host?: string): boolean {
    this.#active = cause;
    if (this.#shown.has(cause) || this.#pending.has(cause)) return false;
    this.#pending.set(cause, this.#text(cause, reason, host));
    return true;
  }

  /** The warning logged when writes stop for a cause retrying cannot fix. */
  warning(cause: NoticeCause, reason?: string, host?: string): string {
    const why = reason ? ` (${reason})` : "";
    const home = (file: string): string => inHome(this.#hermesHome, file);
    switch (cause) {
      case "permission": {
        const server = host ?? "the Honcho server";
        return `Honcho memory is blocked: this process has no network access to ${server}${why}. Add "${server}" to memory.permissions.honcho.net in ${
          home("config.yaml")
        } (or run 'hermes honcho setup'), then restart Hermes; the turns stay queued`;
      }
      case "auth":
        return `Honcho authentication failed${why}: run 'hermes honcho setup' to fix the API key; the turns stay queued`;
      case "observer-limit":
        return `Honcho refused the session${why}: ${OBSERVER_LIMIT_FIX} (settings in ${
          home("honcho.json")
        }); the turns stay queued ('hermes honcho outbox')`;
      case "refused":
        return `Honcho refused the memory writes${why}: check the workspace, peer and session settings in ${
          home("honcho.json")
        } ('hermes honcho status'); the turns stay queued ('hermes honcho outbox')`;
      default:
        return this.#text(cause, reason, host).replace(
          `${NOTICE_HEADING} `,
          "",
        );
    }
  }

  #text(cause: NoticeCause, reason?: string, host?: string): string {
    const [platform, hermesHome] = [this.#platform, this.#hermesHome];
    return noticeText(cause, { reason, platform, hermesHome, host });
  }

  /** Records a failure by error; errors that are not outages are ignored. */
  reportError(error: unknown): NoticeCause | undefined {
    const cause = classifyFailure(error);
    if (cause) {
      this.report(
        cause,
        describeHonchoError(error),
        isHonchoError(error, "permission") ? error.host : undefined,
      );
    }
    return cause;
  }

  /** Takes the pending notices (once each). */
  take(): string {
    if (this.#pending.size === 0) return "";
    const text = [...this.#pending.values()].join("\n\n");
    for (const cause of this.#pending.keys()) this.#shown.add(cause);
    this.#pending.clear();
    return text;
  }

  /** Ends the episode after a success (the no-peer notice is permanent). */
  clear(): void {
    if (this.#active === "no-peer") return;
    this.#active = undefined;
    this.#pending.clear();
    this.#shown.clear();
  }
}
