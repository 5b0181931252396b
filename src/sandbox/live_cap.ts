// The process-wide cap on running provider sandboxes (a gateway serving many
// profiles): slots are taken in arrival order, the least recently used idle
// sandbox is paused to make room, and the cap is never passed.

import { raceTimeout } from "../_util/race_timeout.ts";
import { ProviderWorkerStoppedError } from "./worker_rpc.ts";

/** A sandbox holding or asking for a slot: whether it may be paused now, and how. */
export interface SlotHolder {
  idle(): boolean;
  pause(): Promise<void>;
}

/** Sandboxes running or starting, least recently used first. */
const LIVE = new Set<SlotHolder>();
let maxLive = Infinity;
/** Slot requests run one at a time, in arrival order. */
let turn: Promise<void> = Promise.resolve();
/** Settled by the next change; made only when a slot request waits (not on every call). */
let change: PromiseWithResolvers<void> | undefined;

/** Wakes the slot request waiting for a process to end or go idle. */
export function slotChanged(): void {
  change?.resolve();
  change = undefined;
}

/**
 * Caps the number of provider sandboxes running at once in this process
 * (a gateway serving many profiles). A call that needs a sandbox at the cap
 * pauses the least recently used idle one (its writes made durable, its
 * `shutdown()` run, its process ended); when every one is busy it waits, in
 * order, for a slot (at most `callTimeoutMs`). The cap is never passed.
 *
 * @param limit The most running sandboxes (`Infinity`: no cap).
 * @throws {RangeError} When `limit` is not a positive integer or `Infinity`.
 *
 * @category Plugins: discovery, loading, permissions
 */
export function setMaxLiveProviders(limit: number): void {
  if (!(limit === Infinity || (Number.isInteger(limit) && limit >= 1))) {
    throw new RangeError(
      `The live provider cap must be a whole number of at least 1 (or Infinity), not ${limit}`,
    );
  }
  maxLive = limit;
  slotChanged();
}

/**
 * How many provider sandboxes run (or start) in this process now.
 *
 * @category Plugins: discovery, loading, permissions
 */
export function liveProviderCount(): number {
  return LIVE.size;
}

/** Marks a running sandbox most recently used. */
export function markUsed(holder: SlotHolder): void {
  if (LIVE.delete(holder)) LIVE.add(holder);
}

/** Gives a slot back (its process ended). */
export function releaseSlot(holder: SlotHolder): void {
  LIVE.delete(holder);
  slotChanged();
}

/**
 * Waits, in arrival order, until `holder` has a slot, pausing least recently
 * used idle sandboxes to make room.
 *
 * @throws {ProviderWorkerStoppedError} When every slot stays busy `timeoutMs`.
 */
export function takeSlot(
  holder: SlotHolder,
  timeoutMs: number,
  name: string,
): Promise<void> {
  // Chained on the previous request: slots go in arrival order, and two requests never
  // both see room for one.
  const mine = turn.then(async () => {
    const deadline = performance.now() + timeoutMs;
    while (!LIVE.has(holder) && LIVE.size >= maxLive) {
      const victim = [...LIVE].find((p) => p !== holder && p.idle());
      if (victim !== undefined) {
        // Awaited to the end (writes confirmed or held, process ended): only then is its slot
        // free, so the cap is never passed.
        await victim.pause();
        continue;
      }
      const left = deadline - performance.now();
      if (left <= 0) {
        throw new ProviderWorkerStoppedError(
          name,
          `all ${maxLive} live provider slots (maxLiveProviders) stayed busy for ${timeoutMs} ms: raise the cap or shorten the calls`,
        );
      }
      await raceTimeout((change ??= Promise.withResolvers()).promise, left);
    }
    markUsed(holder);
    LIVE.add(holder);
  });
  // A request that timed out must not block the ones behind it.
  turn = mine.catch(() => {});
  return mine;
}
