/**
 * Every timing and retry of the Honcho provider, declared once like the settings table; each
 * entry names the option that overrides it.
 * @module
 */

/** A backoff: the first delay, the longest delay, the longest `Retry-After` honoured (ms). */
export interface RetryTiming {
  baseMs: number;
  maxMs: number;
  retryAfterCapMs: number;
}

/** The defaults. */
export const HONCHO_TIMINGS = {
  /** A client request marked `retry` (transport `retryBaseDelayMs`, `retryMaxDelayMs`, `retryAfterCapMs`). */
  request: { baseMs: 500, maxMs: 8_000, retryAfterCapMs: 30_000 },
  /** Retries of such a request after the first attempt (transport `maxRetries`). */
  requestRetries: 2,
  /** Delivery, within a round and before the next background round (provider `deliveryRetry*DelayMs`, outbox `retry*`). */
  delivery: { baseMs: 1_000, maxMs: 30_000, retryAfterCapMs: 60_000 },
  /** Transient failures in a row one delivery round tolerates (outbox `maxRetries`). */
  deliveryRetries: 5,
  /** Recall's reads pause after a retryable failure (provider `recallRetry*DelayMs`). */
  recall: { baseMs: 1_000, maxMs: 30_000, retryAfterCapMs: 60_000 },
  /** An outbox write the disk refused, retried while its turns wait in memory. */
  disk: { baseMs: 100, maxMs: 5_000, retryAfterCapMs: 0 },
  /** How long after its client gave up Honcho may still commit a request (outbox `lateCommitGraceMs`). */
  lateCommitGraceMs: 30_000,
  /** The longest one `syncTurn` is pushed back while the disk is behind (outbox `stageWaitMs`). */
  stageWaitMs: 5_000,
  /** Shutdown, inside the manager's and the sandbox's 5 s (provider `shutdownTimeoutMs`). */
  shutdownMs: 4_000,
  /** A `recallSync` read without a `timeout` setting. */
  recallSyncMs: 5_000,
} as const;
