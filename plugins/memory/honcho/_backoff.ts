// The one retry policy of the Honcho provider: which failures are worth
// trying again, and how long to wait. The client, the outbox and the writer
// all use it.

import { isHonchoError } from "./errors.ts";

/**
 * Whether trying again may succeed: a 429, a 5xx, an answer that is not the
 * JSON promised, a timeout or a connection failure. Whether a retry is *safe*
 * is the caller's business (the client retries only idempotent requests).
 */
export function isRetryableHonchoError(error: unknown): boolean {
  return isHonchoError(
    error,
    "connection",
    "timeout",
    "rate_limited",
    "server_error",
    "invalid_response",
  );
}

export interface BackoffPolicy {
  /** The ceiling of the first delay, in ms. */
  baseMs: number;
  /** The largest ceiling, in ms. */
  maxMs: number;
  /** The largest `Retry-After` honoured, in ms. */
  retryAfterCapMs: number;
  /** Random numbers in [0, 1). */
  random: () => number;
}

/**
 * The delay before retry number `attempt` (0 first): the failure's
 * `Retry-After` (capped), else full jitter in
 * `[0, min(maxMs, baseMs · 2^attempt))`.
 */
export function backoffDelayMs(
  attempt: number,
  error: unknown,
  policy: BackoffPolicy,
): number {
  const retryAfter = (error as { retryAfterMs?: unknown } | null)
    ?.retryAfterMs;
  if (typeof retryAfter === "number" && retryAfter >= 0) {
    return Math.min(retryAfter, policy.retryAfterCapMs);
  }
  const ceiling = Math.min(
    policy.maxMs,
    policy.baseMs * 2 ** Math.min(Math.max(0, attempt), 30),
  );
  return Math.floor(policy.random() * ceiling);
}

/**
 * The gate of background reads (recall) while Honcho is failing: a
 * retryable failure pauses reads for {@linkcode backoffDelayMs}, a success
 * reopens it, so a down server does not get a request per turn.
 */
export class ReadBackoff {
  #policy: BackoffPolicy;
  #failures = 0;
  #until = 0;

  constructor(policy: BackoffPolicy) {
    this.#policy = policy;
  }

  /** Whether a read may start at `now` (epoch ms). */
  open(now: number): boolean {
    return now >= this.#until;
  }

  /** Records a failed read; one a retry may fix starts (or lengthens) a pause. */
  failed(error: unknown, now: number): void {
    if (!isRetryableHonchoError(error)) return;
    const delay = backoffDelayMs(this.#failures, error, this.#policy);
    this.#failures++;
    this.#until = Math.max(this.#until, now + Math.max(1, delay));
  }

  /** Records a successful read: the gate opens and the count restarts. */
  succeeded(): void {
    this.#failures = 0;
    this.#until = 0;
  }
}
