/**
 * The messages between the host and a provider's sandbox worker, and the
 * checks every message from a worker passes before the host uses it.
 *
 * @module
 */

import { isRecord } from "../_util/is_record.ts";

/** An error as it crosses the worker boundary. */
export interface SerializedError {
  name: string;
  message: string;
  stack?: string;
}

/** What the worker reports about a loaded provider. */
export interface ProviderDescription {
  name: string;
  /** Its tool schemas, or `null` when `getToolSchemas()` failed. */
  toolSchemas: unknown[] | null;
  apiVersion: number;
  /** Whether its `syncTurn` takes `messages` (`syncTurnTakesMessages`). */
  messages: boolean;
  /** The optional hooks it defines (`postSetup`, `getStatusConfig`, `drain`). */
  optional: string[];
}

/** Per-call context the host passes with each call. */
export interface CallContext {
  /** The profile home the call runs under (installed with `withHermesHome`). */
  hermesHome: string;
  /** The caller's secret scope, limited to the provider's granted names. */
  scope?: Record<string, string>;
  /** Whether the host serves several profiles (secrets then fail closed). */
  multiplex: boolean;
}

/**
 * A one-way hook call: no reply, run in arrival order with the other casts;
 * a failure comes back as a `castFailed` event.
 */
export interface CastRequest {
  t: "cast";
  /** The provider method (one the worker accepts as a cast). */
  method: string;
  args: unknown[];
  /** The caller's home and secret scope, captured when it was posted. */
  context: CallContext;
}

/** What the worker loads, and what it is told about the provider. */
export interface LoadRequest {
  t: "load";
  /** The module to import (a runtime value: checked against the grant). */
  specifier: string;
  providerName: string;
  /** Whether an exported instance counts (package providers). */
  acceptInstances: boolean;
  context: CallContext;
  /**
   * How long the worker lets one cast run before it abandons it and starts
   * the next message (default 30000).
   */
  castTimeoutMs?: number;
  /** The provider's own sections of `config.yaml` (`ctx.hermesConfig`). */
  config?: Record<string, unknown>;
}

/** Whether the user's terminal is a terminal, per stream (for a `cli.ts`). */
export interface CliTerminal {
  stdin: boolean;
  stdout: boolean;
  stderr: boolean;
}

/**
 * Loads a provider's `cli.ts` in its sandbox (the CLI bootstrap,
 * `src/cli/sandbox_bootstrap.ts`); answered with a
 * {@linkcode CliDescription}.
 */
export interface CliLoadRequest {
  t: "cliLoad";
  /** The `cli.ts` module to import (checked against the grant). */
  specifier: string;
  /** The provider's name: the command is `hermes <name>`. */
  providerName: string;
  /** The `description` of its `plugin.yaml` (the command's help). */
  description: string;
  terminal: CliTerminal;
  context: CallContext;
}

/** What a sandboxed `cli.ts` offers, as its load answers. */
export interface CliDescription {
  registerCli: boolean;
  /** The functions it exports (`describeStatus`, `postSetup`, …). */
  exports: string[];
  /** The subcommands `registerCli` adds (name and one-line summary). */
  commands: { name: string; summary: string }[];
}

/** The host's one-way answer to a prompt (`ask`) of a sandboxed `cli.ts`. */
export interface AnswerMessage {
  t: "answer";
  ask: number;
  /** Whether the user answered (else `error`, e.g. `PromptCancelled`). */
  ok: boolean;
  value?: unknown;
  error?: SerializedError;
}

/** The kinds of prompt a sandboxed `cli.ts` may ask (`CliPrompts`). */
export const CLI_PROMPT_KINDS: readonly string[] = [
  "select",
  "input",
  "password",
  "confirm",
  "line",
];

/** A message from the host (over the port). */
export type HostRequest =
  | LoadRequest
  | {
    t: "call";
    method: string;
    args: unknown[];
    context: CallContext;
  }
  | CastRequest
  | { t: "drain" }
  | { t: "ping" }
  | CliLoadRequest
  | {
    t: "cliRun";
    args: string[];
    terminal: CliTerminal;
    context: CallContext;
  }
  | {
    t: "cliCall";
    name: string;
    args: unknown[];
    terminal: CliTerminal;
    context: CallContext;
  };

/** A host message that expects a reply (everything but a cast). */
export type ReplyRequest = Exclude<HostRequest, CastRequest>;

/** A message from the worker (over the port). */
export type WorkerMessage =
  | { t: "ready" }
  | { t: "result"; id: number; ok: true; value: unknown }
  | { t: "result"; id: number; ok: false; error: SerializedError }
  | { t: "pong"; id: number }
  | { t: "log"; level: "debug" | "info" | "warn" | "error"; message: string }
  | { t: "skill"; skill: { name: string; path: string; description: string } }
  | { t: "callback"; name: string; args: unknown[] }
  | { t: "castFailed"; method: string; error: SerializedError }
  | { t: "denied"; error: SerializedError }
  | { t: "io"; stream: "stdout" | "stderr"; text: string }
  | { t: "ask"; ask: number; kind: string; options: unknown };

/** A function argument replaced for the crossing; the worker calls back. */
export interface CallbackMarker {
  __hermesCallback: string;
}

/** The longest log line (in characters) a worker may send; longer ones are cut. */
export const MAX_LOG_CHARS = 16_384;

/** The largest value a call may return, in approximate bytes (8 per number or key); more fails the call. */
export const MAX_RESULT_BYTES = 32 * 1024 * 1024;

/** Refuses what JSON would drop but a structured clone refuses. */
function refuseUnclonable(_key: string, value: unknown): unknown {
  const type = typeof value;
  if (type === "function" || type === "symbol" || type === "bigint") {
    throw new TypeError(`a ${type} could not be cloned`);
  }
  return value;
}

/** How deep {@linkcode isPlainData} walks before it leaves the checks to `JSON.stringify`. */
const WALK_DEPTH = 64;

/**
 * Whether `value` is plain data, checked in one walk (a few times cheaper
 * than a `JSON.stringify` replacer, which is called back for every value);
 * `false` where the walk cannot tell (a `toJSON` method, nesting deeper
 * than {@linkcode WALK_DEPTH}, which a cycle reaches).
 *
 * @throws {TypeError} On a function, symbol or bigint it meets.
 */
function isPlainData(value: unknown, depth: number): boolean {
  if (typeof value !== "object") return refuseUnclonable("", value) === value;
  if (value === null) return true;
  const record = value as Record<string, unknown>;
  if (depth > WALK_DEPTH || typeof record.toJSON === "function") return false;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      if (!isPlainData(value[i], depth + 1)) return false;
    }
    return true;
  }
  for (const key in record) {
    // Own keys only, as JSON reads them.
    if (Object.hasOwn(record, key) && !isPlainData(record[key], depth + 1)) {
      return false;
    }
  }
  return true;
}

/**
 * One message as a JSON line of the process transport, refusing what JSON
 * would drop (a function, a symbol, a bigint) as a structured clone does.
 *
 * @throws {TypeError} When part of it cannot cross.
 */
export function encodeMessage(message: unknown): string {
  return isPlainData(message, 0)
    ? JSON.stringify(message)
    : JSON.stringify(message, refuseUnclonable);
}

/**
 * The longest line either end of the process transport reads, in bytes: a
 * result of {@linkcode MAX_RESULT_BYTES} with room for JSON escapes. A longer
 * line ends the sandbox (reading on would make the host wait on it).
 */
export const MAX_LINE_BYTES = 40 * 1024 * 1024;

/** Refuses a message of more than {@linkcode MAX_LINE_BYTES} (its size in bytes) before it is sent. */
export function checkLineBytes(bytes: number): void {
  if (bytes <= MAX_LINE_BYTES) return;
  throw new RangeError(
    `the message is longer than the ${
      MAX_LINE_BYTES / 1048576
    } MiB a line of the sandbox protocol may hold`,
  );
}

/** Microtask turns from an answer's resolution to its awaiting caller (through two async frames). */
const SETTLE_TURNS = 4;

/** How {@linkcode readLines} ended. */
export type LinesEnd = "end" | "stopped" | "overlong";

/**
 * The one line reader of the process transport, used by both ends: reads
 * chunks from `next` (`null` at the end of input; a chunk may be reused
 * after the call) and hands each complete line, without its newline, to
 * `line` until it returns `false`. Each byte is scanned once and a partial
 * line grows by appending (linear, however long); one over `limit` bytes
 * ends the reading at once.
 */
export async function readLines(
  next: () => Promise<Uint8Array | null>,
  line: (text: string) => boolean,
  limit: number = MAX_LINE_BYTES,
): Promise<LinesEnd> {
  const decoder = new TextDecoder();
  let pending = "";
  let size = 0;
  for (let chunk = await next(); chunk !== null; chunk = await next()) {
    let start = 0;
    for (let end; (end = chunk.indexOf(10, start)) >= 0; start = end + 1) {
      if (size + end - start > limit) return "overlong";
      // A newline byte never occurs inside a UTF-8 sequence: the decoder's
      // streaming state ends with the line.
      const text = pending + decoder.decode(chunk.subarray(start, end));
      pending = "";
      size = 0;
      if (!line(text)) return "stopped";
    }
    size += chunk.length - start;
    if (size > limit) return "overlong";
    pending += decoder.decode(chunk.subarray(start), { stream: true });
    // The next read starts once what these lines settled has run (a few
    // microtask turns): its stream and op set-up then overlaps the other
    // end's work instead of delaying the caller of an answer (about 10 µs).
    for (let turn = 0; turn < SETTLE_TURNS; turn++) await undefined;
  }
  return "end";
}

/** Turns any thrown value into its transportable form. */
export function serializeError(error: unknown): SerializedError {
  if (error instanceof Error) {
    const out: SerializedError = {
      name: String(error.name),
      message: String(error.message),
    };
    if (typeof error.stack === "string") out.stack = error.stack;
    return out;
  }
  return { name: "Error", message: String(error) };
}

/** Rebuilds a transported error as an `Error` with the remote name and stack. */
export function reviveError(error: SerializedError): Error {
  const revived = new Error(error.message);
  revived.name = error.name;
  if (error.stack !== undefined) revived.stack = error.stack;
  return revived;
}

/**
 * A call to a sandboxed provider that did not finish in time.
 *
 * @category Errors callers catch
 */
export class ProviderCallTimeoutError extends Error {
  /** The provider's name. */
  readonly provider: string;
  /** The method called. */
  readonly method: string;

  /** Creates the error. */
  constructor(provider: string, method: string, timeoutMs: number) {
    super(
      `Memory provider '${provider}' did not finish ${method}() within ${timeoutMs} ms: the call was abandoned; check the provider's service or raise its timeout`,
    );
    this.name = "ProviderCallTimeoutError";
    this.provider = provider;
    this.method = method;
  }
}

/** Whether `value` is over `limit` approximate bytes (walks only until the limit is passed). */
export function exceedsSize(value: unknown, limit: number): boolean {
  if (typeof value === "string") return value.length > limit;
  if (value === null || typeof value !== "object") return false;
  let total = 0;
  const stack: unknown[] = [value];
  const seen = new Set<object>();
  while (stack.length > 0) {
    const item = stack.pop();
    if (typeof item === "string") total += item.length;
    else if (item === null || typeof item !== "object") total += 8;
    else if (!seen.has(item)) {
      seen.add(item);
      if (ArrayBuffer.isView(item)) total += item.byteLength;
      else if (item instanceof ArrayBuffer) total += item.byteLength;
      else if (item instanceof Map) {
        for (const [k, v] of item) stack.push(k, v);
      } else if (item instanceof Set) {
        for (const v of item) stack.push(v);
      } else {
        for (const key of Object.keys(item)) {
          total += key.length + 8;
          stack.push((item as Record<string, unknown>)[key]);
        }
      }
    }
    if (total > limit) return true;
  }
  return false;
}

const LOG_LEVELS = new Set(["debug", "info", "warn", "error"]);

function isSerializedError(value: unknown): value is SerializedError {
  return isRecord(value) && typeof value.name === "string" &&
    value.name.length <= 256 && typeof value.message === "string" &&
    value.message.length <= MAX_RESULT_BYTES &&
    (value.stack === undefined || typeof value.stack === "string");
}

/** The outcome of {@linkcode checkWorkerMessage}. */
export type MessageCheck =
  | { ok: true; message: WorkerMessage }
  | { ok: false; problem: string };

const bad = (problem: string): MessageCheck => ({ ok: false, problem });
const good = (message: WorkerMessage): MessageCheck => ({ ok: true, message });
const text = (v: unknown, max = MAX_LOG_CHARS): v is string =>
  typeof v === "string" && v.length <= max;

/**
 * Checks a worker's message before the host uses it: shape, types, size,
 * and that a reply answers a request sent; an overlong log line is cut.
 */
export function checkWorkerMessage(
  data: unknown,
  nextId: number,
): MessageCheck {
  if (!isRecord(data)) {
    return bad(
      data === null ? "null" : Array.isArray(data) ? "an array" : typeof data,
    );
  }
  // Each accepted message is rebuilt from its known fields only.
  const t = data.t;
  switch (t) {
    case "ready":
      return good({ t: "ready" });
    case "pong":
      return good({ t: "pong", id: 0 });
    case "result": {
      const id = data.id;
      if (typeof id !== "number" || !Number.isInteger(id) || id < 1) {
        return bad("a result without a request id");
      }
      if (id >= nextId) return bad(`a result for request ${id}, never sent`);
      if (data.ok === true) {
        if (exceedsSize(data.value, MAX_RESULT_BYTES)) {
          return bad(`a result over ${MAX_RESULT_BYTES} bytes`);
        }
        return good({ t: "result", id, ok: true, value: data.value });
      }
      if (data.ok === false && isSerializedError(data.error)) {
        return good({ t: "result", id, ok: false, error: data.error });
      }
      return bad("a result that is neither a value nor an error");
    }
    case "log": {
      const level = data.level as "debug" | "info" | "warn" | "error";
      if (!LOG_LEVELS.has(level)) return bad("a log line without a level");
      const message = data.message;
      if (typeof message !== "string") return bad("a log line without text");
      return good({
        t: "log",
        level,
        message: message.length > MAX_LOG_CHARS
          ? `${
            message.slice(0, MAX_LOG_CHARS)
          }… (cut at ${MAX_LOG_CHARS} characters)`
          : message,
      });
    }
    case "skill": {
      const skill = isRecord(data.skill) ? data.skill : {};
      const { name, path, description } = skill;
      if (
        !text(name) || !text(path) || !text(description) ||
        name.length + path.length + description.length > MAX_LOG_CHARS
      ) return bad("a malformed skill registration");
      return good({ t: "skill", skill: { name, path, description } });
    }
    case "callback":
      if (
        !text(data.name, Infinity) || !Array.isArray(data.args) ||
        exceedsSize(data.args, MAX_LOG_CHARS * 4)
      ) return bad("a malformed callback");
      return good({ t: "callback", name: data.name, args: data.args });
    case "castFailed":
      if (!text(data.method, Infinity) || !isSerializedError(data.error)) {
        return bad("a malformed cast failure");
      }
      return good({ t: "castFailed", method: data.method, error: data.error });
    case "denied":
      if (!isSerializedError(data.error)) return bad("a malformed denial");
      return good({ t: "denied", error: data.error });
    case "io":
      if (
        (data.stream !== "stdout" && data.stream !== "stderr") ||
        !text(data.text, MAX_RESULT_BYTES)
      ) return bad("malformed output");
      return good({ t: "io", stream: data.stream, text: data.text });
    case "ask": {
      const { ask, kind, options } = data;
      if (
        typeof ask !== "number" || !Number.isInteger(ask) ||
        !CLI_PROMPT_KINDS.includes(kind as string) ||
        exceedsSize(options, MAX_LOG_CHARS * 64)
      ) return bad("a malformed prompt");
      return good({ t: "ask", ask, kind: kind as string, options });
    }
    default:
      return bad(
        typeof t === "string"
          ? `an unknown message type '${t.slice(0, 32)}'`
          : "a message without a type",
      );
  }
}
