// Small helpers shared by the Honcho provider's modules (private).

import { log } from "../../../src/provider/mod.ts";

/** A non-null, non-array object. */
export function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

/** `error.message` for an `Error`, else the value as a string. */
export function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** Logs `Honcho <what> failed: <error>`, scrubbed (the API key never reaches a log). */
export function logFailure(
  what: string,
  error: unknown,
  scrub: (text: string) => string,
  level: "debug" | "warn" = "debug",
): void {
  log(level, `Honcho ${what} failed: ${scrub(errorText(error))}`);
}

/**
 * SHA-256 (hex) of the parts' UTF-8, concatenated. Node's crypto is loaded at
 * the first call (the first turn's write, in the background through the
 * sandbox), not with the provider: importing it evaluates Deno's Node layer,
 * 12–20 ms of every sandboxed start before its first call.
 */
export function sha256Hex(...parts: string[]): string {
  const hash = process.getBuiltinModule("node:crypto").createHash("sha256");
  for (const part of parts) hash.update(part, "utf8");
  return hash.digest("hex");
}

/** A Honcho id: each character outside `[A-Za-z0-9_-]` becomes `-` (no collapsing, no trimming). */
export function sanitizeId(value: string): string {
  return value.replace(/[^A-Za-z0-9_-]/g, "-");
}

/** Replaces `secret` (at least 4 characters) by `[redacted]`. */
export function scrubberOf(
  secret: string | undefined,
): (text: string) => string {
  return (text) =>
    secret && secret.length >= 4 ? text.split(secret).join("[redacted]") : text;
}

/** `error` and its `cause`s, the `Error`s among the first `max`. */
export function causeChain(error: unknown, max = 6): Error[] {
  const chain: Error[] = [];
  for (let e = error; e instanceof Error && chain.length < max; e = e.cause) {
    chain.push(e);
  }
  return chain;
}

/** A signal aborted with a `TimeoutError` after `ms` (never if `ms` is not finite) or with `parent`; `clear()` stops both. */
export function deadlineSignal(
  ms: number,
  message: string,
  parent?: AbortSignal,
): { signal: AbortSignal; reason: DOMException; clear(): void } {
  const controller = new AbortController();
  const reason = new DOMException(message, "TimeoutError");
  const onAbort = (): void => controller.abort(parent!.reason);
  parent?.addEventListener("abort", onAbort, { once: true });
  const timer = Number.isFinite(ms)
    ? setTimeout(() => controller.abort(reason), Math.max(0, ms))
    : undefined;
  return {
    signal: controller.signal,
    reason,
    clear: () => {
      clearTimeout(timer);
      parent?.removeEventListener("abort", onAbort);
    },
  };
}
