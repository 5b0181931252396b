/**
 * Every timing and retry of the Honcho provider declared once, as the
 * settings table declares its settings: the client, the outbox (delivery,
 * disk), recall and the provider's lifecycle take their defaults here. Each
 * entry names the option that overrides it.
 *
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
  /** A client request its endpoint marks `retry` (transport `retryBaseDelayMs`, `retryMaxDelayMs`, `retryAfterCapMs`). */
  request: { baseMs: 500, maxMs: 8_000, retryAfterCapMs: 30_000 },
  /** Retries of such a request after the first attempt (transport `maxRetries`). */
  requestRetries: 2,
  /**
   * Delivering the outbox: one policy for the failures a round tolerates and the pause before the
   * next background round (provider `deliveryRetryBaseDelayMs`, `deliveryRetryMaxDelayMs`; outbox
   * `retryBaseDelayMs`, `retryMaxDelayMs`, `retryAfterCapMs`).
   */
  delivery: { baseMs: 1_000, maxMs: 30_000, retryAfterCapMs: 60_000 },
  /** Transient failures in a row one delivery round tolerates (outbox `maxRetries`). */
  deliveryRetries: 5,
  /** Recall's reads pause after a retryable failure (provider `recallRetryBaseDelayMs`, `recallRetryMaxDelayMs`). */
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
