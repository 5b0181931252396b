// The one retry policy of the Honcho provider (client, outbox, writer).

import { isHonchoError } from "./errors.ts";
import type { RetryTiming } from "../config/timings_table.ts";

/** Whether trying again may succeed (whether it is *safe* is the caller's business). */
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

/** A retry timing (plugins/memory/honcho/config/timings_table.ts) and its jitter source. */
export interface BackoffPolicy extends RetryTiming {
  random: () => number;
}

/** `Retry-After` (capped), else full jitter in `[0, min(maxMs, baseMs · 2^attempt))`. */
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

/** Pauses background reads after a retryable failure, so a down server gets no request per turn. */
export class ReadBackoff {
  #policy: BackoffPolicy;
  #failures = 0;
  #until = 0;

  constructor(policy: BackoffPolicy) {
    this.#policy = policy;
  }

  open(now: number): boolean {
    return now >= this.#until;
  }

  failed(error: unknown, now: number): void {
    if (!isRetryableHonchoError(error)) return;
    const delay = backoffDelayMs(this.#failures, error, this.#policy);
    this.#failures++;
    this.#until = Math.max(this.#until, now + Math.max(1, delay));
  }

  succeeded(): void {
    this.#failures = 0;
    this.#until = 0;
  }
}
