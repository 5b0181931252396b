// What the host holds for one provider: each write it accepted, until the
// provider reports it durable, under an id the provider can store it by; any
// other cast only until it is posted. Each new process is handed all of it,
// in order; a write an ended process may have stored goes again with
// `turnId` set to its id, so it is stored once.

import type { SyncTurnOptions } from "../core/memory_provider.ts";
import type { AcceptedWrite } from "./kept_writes.ts";
import type { CallContext } from "./worker_protocol.ts";

/** The hooks whose accepted calls the host keeps until they are durable (docs/sandbox.md). */
const WRITE_HOOKS: ReadonlySet<string> = new Set(
  "syncTurn onMemoryWrite onMemoryEvict onSessionEnd".split(" "),
);

/** A held cast. */
export interface Held {
  seq: number;
  /** The write's id (writes only): `writeId`, and `turnId` when handed over again. */
  wid?: string;
  method: string;
  args: unknown[];
  context: CallContext;
  /** Posted to a process (which may have ended before making it durable). */
  sent: boolean;
}

/** The casts held for one provider, by number, in order. */
export class HeldCasts extends Map<number, Held> {
  /** The number of the last cast. */
  last = 0;
  /** Held casts no process was sent yet: later casts queue behind them. */
  unsent = 0;
  // Ids unique across hosts: several may share a profile's file of kept writes.
  #nonce = crypto.randomUUID();

  /** The writes not reported durable, for the file of kept writes. */
  get writes(): AcceptedWrite[] {
    return [...this.values()].flatMap(({ wid, method, args, context }) =>
      wid ? [{ wid, method, args, hermesHome: context.hermesHome }] : []
    );
  }

  /** A new cast, numbered; a write gets its id (also `writeId` in `syncTurn`'s options). */
  next(method: string, args: unknown[], context: CallContext): Held {
    const seq = ++this.last;
    const held: Held = { seq, method, args, context, sent: false };
    if (WRITE_HOOKS.has(method)) {
      const wid = held.wid = `${this.#nonce}:${seq}`;
      // The provider gets the id at the first send too, so a later hand-over (`turnId`) names
      // the very records the first one queued.
      if (method === "syncTurn") {
        held.args = [args[0], args[1], { ...args[2] as object, writeId: wid }];
      }
    }
    return held;
  }

  /** Keeps a write, or a cast not posted yet. */
  hold(held: Held): void {
    this.set(held.seq, held);
    // While anything waits unsent, new casts wait behind it: posting them would overtake it.
    if (!held.sent) this.unsent++;
  }

  /** Holds writes an earlier host kept (sent before, for all anyone knows). */
  adopt(writes: readonly AcceptedWrite[], context: CallContext): void {
    for (const { wid, method, args, hermesHome } of writes) {
      const seq = ++this.last;
      const home = { ...context, hermesHome };
      // Counted as sent: the earlier host may have posted them, so they go with `turnId` and
      // are looked up before being stored.
      this.set(seq, { seq, wid, method, args, context: home, sent: true });
    }
  }

  /** The arguments to post `held` with: `turnId` set when it was sent before. */
  argsOf(held: Held): unknown[] {
    if (!held.sent || held.method !== "syncTurn") return held.args;
    const options = held.args[2] as SyncTurnOptions;
    // An ended process may have stored it: `turnId` makes the provider look it up first.
    const turnId = options.turnId || held.wid;
    return [held.args[0], held.args[1], { ...options, turnId }];
  }

  /** After posting `held`: a write stays until confirmed; a cast that cannot be posted is dropped. */
  posted(held: Held, ok: boolean): void {
    held.sent ||= ok;
    // A posted non-write has no durability to wait for; a write stays until a drain confirms it.
    if (!ok || held.wid === undefined) this.delete(held.seq);
  }

  /** Forgets the casts sent up to `upTo` (reported durable); their write ids. */
  confirm(upTo: number): string[] {
    const durable: string[] = [];
    for (const [seq, { sent, wid }] of this) {
      if (seq > upTo) break;
      // Not sent to the process that drained: it cannot be durable there; kept for the next post.
      if (!sent) continue;
      this.delete(seq);
      if (wid !== undefined) durable.push(wid);
    }
    return durable;
  }

  /** Drops every cast that is not a write. */
  dropCasts(): void {
    // Restarts given up: only writes are kept (on disk); other casts carry no such promise.
    for (const [seq, { wid }] of this) if (!wid) this.delete(seq);
    this.unsent = 0;
  }
}
