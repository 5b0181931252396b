/**
 * In-memory data of the Honcho test server, kept as plain arrays of records
 * in creation order so tests can inspect and seed them directly.
 *
 * @module
 */

/** A workspace row. */
export interface WorkspaceRecord {
  /** Workspace id. */
  id: string;
  /** Free metadata object. */
  metadata: Record<string, unknown>;
  /** Workspace configuration (`WorkspaceConfiguration`). */
  configuration: Record<string, unknown>;
  /** ISO-8601 creation time. */
  created_at: string;
}

/** A peer row. */
export interface PeerRecord {
  /** Peer id. */
  id: string;
  /** Owning workspace. */
  workspace_id: string;
  /** Free metadata object. */
  metadata: Record<string, unknown>;
  /** Peer configuration (e.g. `{observe_me}`). */
  configuration: Record<string, unknown>;
  /** ISO-8601 creation time. */
  created_at: string;
}

/** A session row. */
export interface SessionRecord {
  /** Session id. */
  id: string;
  /** Owning workspace. */
  workspace_id: string;
  /** `false` once deleted. */
  is_active: boolean;
  /** Free metadata object. */
  metadata: Record<string, unknown>;
  /** Session configuration (`SessionConfiguration`). */
  configuration: Record<string, unknown>;
  /** ISO-8601 creation time. */
  created_at: string;
}

/** Membership of a peer in a session, with its `SessionPeerConfig`. */
export interface SessionPeerRecord {
  /** Owning workspace. */
  workspace_id: string;
  /** Session id. */
  session_id: string;
  /** Peer id. */
  peer_id: string;
  /** Session-level `observe_me` (null = never set). */
  observe_me: boolean | null;
  /** Session-level `observe_others` (null = never set). */
  observe_others: boolean | null;
  /** When the peer joined (ISO-8601). */
  joined_at: string;
  /** When the peer left, or null while active. */
  left_at: string | null;
}

/** A message row (the API `Message` shape plus its configuration). */
export interface MessageRecord {
  /** 21-character nanoid. */
  id: string;
  /** Message text. */
  content: string;
  /** Author peer. */
  peer_id: string;
  /** Session id. */
  session_id: string;
  /** Owning workspace. */
  workspace_id: string;
  /** Free metadata object. */
  metadata: Record<string, unknown>;
  /** Message configuration as sent, or null. */
  configuration: Record<string, unknown> | null;
  /** ISO-8601 creation time (client-provided `created_at` when given). */
  created_at: string;
  /** Approximate token count of `content` (see the README). */
  token_count: number;
}

/** A peer card stored under an observer, keyed by the observed peer. */
export interface PeerCardRecord {
  /** Owning workspace. */
  workspace_id: string;
  /** The peer holding the card. */
  observer_id: string;
  /** The peer the card is about (equals observer for the own card). */
  observed_id: string;
  /** Card lines. */
  peer_card: string[];
}

/** Reasoning level of a conclusion. */
export type ConclusionLevel =
  | "explicit"
  | "deductive"
  | "inductive"
  | "contradiction";

/** A conclusion row. */
export interface ConclusionRecord {
  /** 21-character nanoid. */
  id: string;
  /** Conclusion text. */
  content: string;
  /** Peer who holds the conclusion. */
  observer_id: string;
  /** Peer the conclusion is about. */
  observed_id: string;
  /** Session the conclusion belongs to, if any. */
  session_id: string | null;
  /** Reasoning level. */
  level: ConclusionLevel;
  /** ISO-8601 creation time. */
  created_at: string;
  /** Owning workspace. */
  workspace_id: string;
  /** Soft-deletion flag. */
  deleted: boolean;
}

/** A session summary, as `GET …/summaries` and session context return it. */
export interface SummaryRecord {
  /** Owning workspace. */
  workspace_id: string;
  /** Session id. */
  session_id: string;
  /** Summary text. */
  content: string;
  /** Public id of the last message the summary covers. */
  message_id: string;
  /** `short` or `long`. */
  summary_type: "short" | "long";
  /** ISO-8601 creation time. */
  created_at: string;
  /** Token count of `content`. */
  token_count: number;
}

/** A file received by `POST …/messages/upload`. */
export interface UploadRecord {
  /** Owning workspace. */
  workspace_id: string;
  /** Session id. */
  session_id: string;
  /** Author peer. */
  peer_id: string;
  /** File name as sent in the multipart part. */
  filename: string;
  /** Content type of the file part. */
  content_type: string;
  /** Size in bytes. */
  size: number;
  /** Decoded text of the file. */
  text: string;
  /** Parsed `metadata` form field, or null. */
  metadata: Record<string, unknown> | null;
  /** Parsed `configuration` form field, or null. */
  configuration: Record<string, unknown> | null;
  /** Ids of the messages created from the file. */
  message_ids: string[];
}

/** The whole in-memory store of a test server. Arrays are in creation order. */
export interface HonchoTestState {
  /** Workspaces. */
  workspaces: WorkspaceRecord[];
  /** Peers of all workspaces. */
  peers: PeerRecord[];
  /** Sessions of all workspaces. */
  sessions: SessionRecord[];
  /** Session memberships with their peer configs. */
  sessionPeers: SessionPeerRecord[];
  /** Messages, in insertion order. */
  messages: MessageRecord[];
  /** Peer cards. */
  peerCards: PeerCardRecord[];
  /** Conclusions (soft-deleted ones keep `deleted: true`). */
  conclusions: ConclusionRecord[];
  /** Session summaries (seeded by tests; the server never writes them). */
  summaries: SummaryRecord[];
  /** Uploaded files. */
  uploads: UploadRecord[];
}

/** Id rule for workspaces, peers and sessions. */
export const RESOURCE_ID_REGEXP: RegExp = /^[a-zA-Z0-9_-]+$/;
/** Maximum length of a workspace, peer or session id. */
export const RESOURCE_ID_MAX_LENGTH = 512;
/** Shape of server-generated ids (messages, conclusions). */
export const NANOID_REGEXP: RegExp = /^[A-Za-z0-9_-]{21}$/;

const NANOID_ALPHABET =
  "useandom-26T198340PX75pxJACKVERYMINDBUSHWOLF_GQZbfghjklqvwyzrict";
const TOKEN_REGEXP = /[\p{L}\p{N}]+|[^\s\p{L}\p{N}]/gu;

/**
 * Creates an empty store.
 *
 * @returns A store with every collection empty.
 */
export function createState(): HonchoTestState {
  return {
    workspaces: [],
    peers: [],
    sessions: [],
    sessionPeers: [],
    messages: [],
    peerCards: [],
    conclusions: [],
    summaries: [],
    uploads: [],
  };
}

/**
 * Generates a 21-character nanoid.
 *
 * @returns A fresh id matching {@linkcode NANOID_REGEXP}.
 */
export function nanoid(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(21));
  let id = "";
  for (const byte of bytes) id += NANOID_ALPHABET[byte & 63];
  return id;
}

let lastTimestamp = 0;

/**
 * Returns the current time as ISO-8601, strictly increasing across calls so
 * that records created in one burst still sort in creation order.
 *
 * @returns An ISO-8601 timestamp with a `Z` zone.
 */
export function timestamp(): string {
  const now = Math.max(Date.now(), lastTimestamp + 1);
  lastTimestamp = now;
  return new Date(now).toISOString();
}

/**
 * Approximates the o200k_base token count: one token per run of letters or
 * digits and one per other non-space character. Deterministic, not exact.
 *
 * @param text Text to count.
 * @returns The approximate token count.
 */
export function tokenCount(text: string): number {
  return text.match(TOKEN_REGEXP)?.length ?? 0;
}

/**
 * Checks a workspace, peer or session id against the server's rule.
 *
 * @param id Candidate id.
 * @returns Whether the id is 1–512 characters of `[a-zA-Z0-9_-]`.
 */
export function isValidResourceId(id: string): boolean {
  return id.length >= 1 && id.length <= RESOURCE_ID_MAX_LENGTH &&
    RESOURCE_ID_REGEXP.test(id);
}

/** A `fastapi-pagination` page. */
export interface Page<T> {
  /** Items of the current page. */
  items: T[];
  /** Total number of items over all pages. */
  total: number;
  /** 1-based page number. */
  page: number;
  /** Page size. */
  size: number;
  /** Number of pages (0 when there are no items). */
  pages: number;
}

/**
 * Slices a list into a `Page`.
 *
 * @param items All matching items in final order.
 * @param options Page number and size (already validated).
 * @returns The requested page.
 */
export function paginate<T>(
  items: T[],
  options: { page: number; size: number },
): Page<T> {
  const { page, size } = options;
  const start = (page - 1) * size;
  return {
    items: items.slice(start, start + size),
    total: items.length,
    page,
    size,
    pages: Math.ceil(items.length / size),
  };
}
