// One agent turn through the MemoryManager (onTurnStart, prefetchAll,
// syncAll, queuePrefetchAll) against calling the same in-process provider
// directly. The difference is what the manager adds per turn: skill-scaffold
// stripping, egress redaction, failure isolation, the FIFO background queue
// (flushed every FLUSH_EVERY turns, or every turn in the second group) and
// the spill check.
//
//   deno bench --no-prompt --allow-read --allow-env --allow-write bench/manager_bench.ts
import { MemoryManager } from "../src/manager/memory_manager.ts";
import {
  MemoryProvider,
  type PrefetchOptions,
  type SyncTurnOptions,
  type ToolSchema,
  type TurnStartOptions,
} from "../src/core/memory_provider.ts";
import { setLogger } from "../src/core/log.ts";

setLogger({ log: () => {} });

const FLUSH_EVERY = 64;
const USER =
  "Can you remind me which editor I said I prefer, and set up the k8s deploy pipeline the same way as last week?";
const REPLY =
  "You prefer helix with tabs. I set the pipeline up like last week: build, test, then a canary deploy at 10% for an hour before the full rollout.";

/** A small in-process provider doing a little real work per hook. */
class InProcessProvider extends MemoryProvider {
  turns = 0;
  lastQuery = "";
  readonly facts: string[] = [];
  readonly #name: string;

  constructor(name: string) {
    super();
    this.#name = name;
  }
  get name(): string {
    return this.#name;
  }
  isAvailable(): boolean {
    return true;
  }
  initialize(): void {}
  getToolSchemas(): ToolSchema[] {
    return [];
  }
  override onTurnStart(
    turn: number,
    _message: string,
    _options: TurnStartOptions,
  ): void {
    this.turns = turn;
  }
  override prefetch(query: string, _options: PrefetchOptions): string {
    return query.length > 0 ? "User prefers helix with tabs." : "";
  }
  override queuePrefetch(query: string, _options: PrefetchOptions): void {
    this.lastQuery = query;
  }
  override syncTurn(
    user: string,
    _assistant: string,
    _options: SyncTurnOptions,
  ): void {
    this.facts.push(user);
    if (this.facts.length > 256) this.facts.length = 0;
  }
}

const direct = new InProcessProvider("inproc");
const managed = new InProcessProvider("inproc");
const manager = new MemoryManager();
await manager.addProvider(managed);
await manager.initializeAll("bench-session", { platform: "cli" });

const perTurn = new InProcessProvider("inproc");
const perTurnManager = new MemoryManager();
await perTurnManager.addProvider(perTurn);

const withBuiltin = new MemoryManager();
await withBuiltin.addProvider(new InProcessProvider("builtin"));
await withBuiltin.addProvider(new InProcessProvider("inproc"));

let directTurn = 0;
Deno.bench({
  name: "direct provider calls",
  group: "turn (flush every 64)",
  baseline: true,
  fn(): void {
    const turn = ++directTurn;
    const sessionId = "bench-session";
    direct.onTurnStart(turn, USER, {});
    direct.prefetch(USER, { sessionId });
    direct.syncTurn(USER, REPLY, { sessionId });
    direct.queuePrefetch(USER, { sessionId });
  },
});

let managedTurn = 0;
Deno.bench({
  name: "MemoryManager (1 external)",
  group: "turn (flush every 64)",
  async fn(): Promise<void> {
    const turn = ++managedTurn;
    const sessionId = "bench-session";
    await manager.onTurnStart(turn, USER, {});
    await manager.prefetchAll(USER, { sessionId });
    manager.syncAll(USER, REPLY, { sessionId });
    manager.queuePrefetchAll(USER, { sessionId });
    if (turn % FLUSH_EVERY === 0) await manager.flushPending();
  },
});

let builtinTurn = 0;
Deno.bench({
  name: "MemoryManager (builtin + 1 external)",
  group: "turn (flush every 64)",
  async fn(): Promise<void> {
    const turn = ++builtinTurn;
    const sessionId = "bench-session";
    await withBuiltin.onTurnStart(turn, USER, {});
    await withBuiltin.prefetchAll(USER, { sessionId });
    withBuiltin.syncAll(USER, REPLY, { sessionId });
    withBuiltin.queuePrefetchAll(USER, { sessionId });
    if (turn % FLUSH_EVERY === 0) await withBuiltin.flushPending();
  },
});

let directTurn2 = 0;
Deno.bench({
  name: "direct provider calls",
  group: "turn (flush every turn)",
  baseline: true,
  fn(): void {
    const turn = ++directTurn2;
    const sessionId = "bench-session";
    direct.onTurnStart(turn, USER, {});
    direct.prefetch(USER, { sessionId });
    direct.syncTurn(USER, REPLY, { sessionId });
    direct.queuePrefetch(USER, { sessionId });
  },
});

let perTurnCount = 0;
Deno.bench({
  name: "MemoryManager (1 external), flushPending() every turn",
  group: "turn (flush every turn)",
  async fn(): Promise<void> {
    const turn = ++perTurnCount;
    const sessionId = "bench-session";
    await perTurnManager.onTurnStart(turn, USER, {});
    await perTurnManager.prefetchAll(USER, { sessionId });
    perTurnManager.syncAll(USER, REPLY, { sessionId });
    perTurnManager.queuePrefetchAll(USER, { sessionId });
    await perTurnManager.flushPending();
  },
});
