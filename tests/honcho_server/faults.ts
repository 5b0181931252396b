/**
 * Per-route fault queue of the Honcho test server.
 *
 * @module
 */

/** A fault to inject into the next matching request(s). */
export interface HonchoFault {
  /** Answer with this status and a `{"detail"}` body instead of handling the request. */
  status?: number;
  /** `Retry-After` header value to send with `status`. */
  retryAfter?: string;
  /** Delay before answering (or before the status), in milliseconds. */
  latencyMs?: number;
  /** Answer with the route's success status and a body that is not valid JSON. */
  malformed?: boolean;
  /** Close the connection before handling the request: `fetch` rejects with a `TypeError`. */
  drop?: boolean;
  /** Handle the request (state changes!) and then close the connection without answering. */
  dropAfterHandling?: boolean;
  /** Handle the request at once (state changes!) and send the answer only this many milliseconds later. */
  answerAfterMs?: number;
  /** Replacement `detail` value for `status` answers. */
  detail?: unknown;
  /** How many requests this fault applies to. @default {1} (`Infinity` allowed) */
  times?: number;
}

interface QueuedFault {
  fault: HonchoFault;
  remaining: number;
}

/** Default `detail` per injected status, in the real server's wording where known. */
export const FAULT_DETAILS: Record<number, string> = {
  400: "Bad Request",
  401: "Invalid JWT",
  403: "Forbidden",
  404: "Not Found",
  409: "Conflict",
  422: "Unprocessable Entity",
  429: "Rate limit exceeded",
  500: "An unexpected error occurred",
  502: "Bad Gateway",
  503: "Service Unavailable",
  504: "Gateway Timeout",
};

/** FIFO fault queues keyed by route key (`"METHOD template"`) or `"*"`. */
export class FaultQueue {
  #queues = new Map<string, QueuedFault[]>();

  /**
   * Queues a fault.
   *
   * @param route Route key or `"*"`.
   * @param fault The fault.
   */
  add(route: string, fault: HonchoFault): void {
    const times = fault.times ?? 1;
    if (!(times > 0)) {
      throw new RangeError(
        `Cannot inject a fault: 'times' must be positive: current value is ${times}`,
      );
    }
    const queue = this.#queues.get(route) ?? [];
    queue.push({ fault, remaining: times });
    this.#queues.set(route, queue);
  }

  /** Removes every queued fault. */
  clear(): void {
    this.#queues.clear();
  }

  /**
   * Takes one use of the first fault queued for the route (route-specific
   * faults before `"*"` ones), if `accept` agrees.
   *
   * @param route Route key of the request.
   * @param accept Predicate on the candidate fault.
   * @returns The fault, or undefined.
   */
  take(
    route: string,
    accept: (fault: HonchoFault) => boolean = () => true,
  ): HonchoFault | undefined {
    for (const key of [route, "*"]) {
      const queue = this.#queues.get(key);
      const head = queue?.[0];
      if (!queue || !head) continue;
      if (!accept(head.fault)) return undefined;
      head.remaining -= 1;
      if (head.remaining <= 0) queue.shift();
      if (queue.length === 0) this.#queues.delete(key);
      return head.fault;
    }
    return undefined;
  }
}
