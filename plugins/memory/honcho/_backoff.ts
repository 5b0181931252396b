/**
 * The one retry policy of the Honcho provider (private): which failures are
 * worth trying again, and how long to wait before the next try. The HTTP
 * client (idempotent requests), the outbox (message delivery) and the
 * writer (background delivery rounds) all use these two functions.
 *
 * @module
 */

import {
  ConnectionError,
  InvalidResponseError,
  RateLimitError,
  ServerError,
  TimeoutError,
} from "./errors.ts";

/**
 * Whether trying again may succeed: a 429, any 5xx answer, an answer that
 * is not the JSON promised, a timeout, or a connection failure. Every other
 * failure (401/403, 404, 400/409/422, a denied permission, a caller abort)
 * stays the same on a retry.
 *
 * Whether a retry is *safe* is the caller's business: the client retries
 * only idempotent requests; the outbox re-sends a message only after it
 * checked what Honcho already stored.
 *
 * @param error The failure.
 * @returns `true` when a retry may help.
 *
 * @example Using isRetryableHonchoError
 * ```ts
 * import { isRetryableHonchoError } from "./_backoff.ts";
 * import { ConnectionError, NotFoundError } from "./errors.ts";
 * import assert from "node:assert/strict";
 * assert.equal(isRetryableHonchoError(new ConnectionError("Refused")), true);
 * assert.equal(isRetryableHonchoError(new NotFoundError("Gone", { status: 404 })), false);
 * ```
 */
export function isRetryableHonchoError(error: unknown): boolean {
  return error instanceof ConnectionError || error instanceof TimeoutError ||
    error instanceof RateLimitError || error instanceof ServerError ||
    error instanceof InvalidResponseError;
}

/** The timings of {@linkcode backoffDelayMs}. */
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
 * The delay before retry number `attempt` (0 for the first retry): the
 * server's `Retry-After` when the failure carries one (capped at
 * `retryAfterCapMs`), else full jitter — a uniform pick in
 * `[0, min(maxMs, baseMs · 2^attempt))`.
 *
 * @param attempt How many retries came before this one.
 * @param error The failure (its `retryAfterMs`, if any, is used).
 * @param policy The timings.
 * @returns Milliseconds to wait.
 *
 * @example Full jitter and Retry-After
 * ```ts
 * import { backoffDelayMs } from "./_backoff.ts";
 * import { RateLimitError } from "./errors.ts";
 * import assert from "node:assert/strict";
 * const policy = { baseMs: 1000, maxMs: 8000, retryAfterCapMs: 5000, random: () => 0.5 };
 * assert.equal(backoffDelayMs(2, new Error("down"), policy), 2000);
 * assert.equal(backoffDelayMs(0, new RateLimitError("slow", { retryAfterMs: 60000 }), policy), 5000);
 * ```
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
 * The gate of background reads (recall) while Honcho is failing: after a
 * failure a retry may fix, reads pause for {@linkcode backoffDelayMs} (the
 * server's `Retry-After`, else full jitter growing with each failure in a
 * row), the policy the writes follow; a success reopens it. Turns that come
 * during the pause read nothing, so an agent does not send a request per
 * turn to a server that is down.
 *
 * @example A failure closes the gate until the delay passes
 * ```ts
 * import { ReadBackoff } from "./_backoff.ts";
 * import { ServerError } from "./errors.ts";
 * import assert from "node:assert/strict";
 * const gate = new ReadBackoff({ baseMs: 1000, maxMs: 8000, retryAfterCapMs: 60000, random: () => 0.5 });
 * gate.failed(new ServerError("Down", { status: 503 }), 0);
 * assert.equal(gate.open(100), false);
 * assert.equal(gate.open(600), true);
 * ```
 */
export class ReadBackoff {
  #policy: BackoffPolicy;
  #failures = 0;
  #until = 0;

  /**
   * Creates an open gate.
   *
   * @param policy The timings (those of the writes).
   */
  constructor(policy: BackoffPolicy) {
    this.#policy = policy;
  }

  /**
   * Whether a read may start now.
   *
   * @param now The clock, epoch ms.
   * @returns `false` during a pause.
   */
  open(now: number): boolean {
    return now >= this.#until;
  }

  /**
   * Records a failed read; one a retry may fix starts (or lengthens) a pause.
   *
   * @param error The failure.
   * @param now The clock, epoch ms.
   */
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
