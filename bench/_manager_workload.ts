// The manager bench's workload (bench/manager_bench.ts, and the fresh
// processes of bench/_manager_child.ts): a small in-process provider doing a
// little real work per hook, the turn text (a fixed pair, or text that
// differs every turn), and one turn run directly or through the manager.
import {
  BuiltinMemoryProvider,
  MemoryManager,
  MemoryProvider,
  type PrefetchOptions,
  type SyncTurnOptions,
  type ToolSchema,
  type TurnStartOptions,
} from "@hermes/memory";

/** The fixed pair of the "same text" group. */
export const SAME_USER =
  "Can you remind me which editor I said I prefer, and set up the k8s deploy pipeline the same way as last week?";
export const SAME_REPLY =
  "You prefer helix with tabs. I set the pipeline up like last week: build, test, then a canary deploy at 10% for an hour before the full rollout.";

/** The user-text templates of {@linkcode variedTurn} (`{n}`: the turn). */
export const USERS = [
  "Can you remind me which editor I said I prefer, and set up the k8s deploy pipeline the same way as last week? (ticket #{n})",
  "What did we decide about the Oslo trip in June, item {n}? I think it was trains, but check.",
  "Summarise the failing test {n} in `tests/cli/process_test.ts`: it times out after 30 s on CI but not locally.",
  "Draft a reply to Marta about invoice {n}; keep it short and mention the 14-day payment terms.",
  "Here's the stack trace from run {n}:\n```\nTypeError: Cannot read properties of null (reading 'name')\n    at load (provider_loader.ts:312:9)\n```\nwhat went wrong?",
  "Which tea did I say I liked, and do I still have any left from order {n}? Also add oolong to the shopping list.",
  "Fetch https://example.com/reports/{n}.json and tell me whether the p99 latency went above 250 ms.",
  "ok, thanks! one more: rename variable {n} to something clearer",
];
/** The reply templates of {@linkcode variedTurn}. */
export const REPLIES = [
  "You prefer helix with tabs. I set the pipeline up like last week (run {n}): build, test, then a canary deploy at 10% for an hour before the full rollout.",
  "We settled on the night train from Stockholm for trip {n}; you said planes only when the ride is over eight hours.",
  'Test {n} waits on a child process that inherits the terminal; on CI stdin is closed, so the prompt never answers. Pass `stdin: "null"`.',
  "Hi Marta, attached is invoice {n}. Payment terms are 14 days from today. Thanks, Alice",
  "The loader returned null (run {n}) and the caller read `.name` without checking; the warning it logged said the host lacked a permission.",
  "You liked the Taiwanese oolong; order {n} had 100 g and you logged using about half. Added oolong to the list.",
  "Report {n}: p99 was 231 ms, below the 250 ms threshold; p99.9 touched 410 ms once at 03:12.",
  "Renamed it to `pendingTurns{n}` everywhere it is used.",
];

/** The turn's text: different on every turn (the templates carry the turn). */
export function variedTurn(turn: number): { user: string; reply: string } {
  const i = turn % USERS.length;
  const n = String(turn);
  return {
    user: USERS[i]!.replaceAll("{n}", n),
    reply: REPLIES[(i + (turn >> 3)) % REPLIES.length]!.replaceAll("{n}", n),
  };
}

/** The same text on every turn. */
export function sameTurn(_turn: number): { user: string; reply: string } {
  return { user: SAME_USER, reply: SAME_REPLY };
}

/** A small in-process provider doing a little real work per hook. */
export class InProcessProvider extends MemoryProvider {
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

const SESSION = "bench-session";

/** One turn as four direct calls on the provider. */
export function directTurn(
  provider: InProcessProvider,
  turn: number,
  text: (turn: number) => { user: string; reply: string },
): void {
  const { user, reply } = text(turn);
  provider.onTurnStart(turn, user, {});
  provider.prefetch(user, { sessionId: SESSION });
  provider.syncTurn(user, reply, { sessionId: SESSION });
  provider.queuePrefetch(user, { sessionId: SESSION });
}

/** One turn through the manager (what the agent awaits). */
export async function managerTurn(
  manager: MemoryManager,
  turn: number,
  text: (turn: number) => { user: string; reply: string },
  options: { systemPrompt?: boolean } = {},
): Promise<void> {
  const { user, reply } = text(turn);
  await manager.onTurnStart(turn, user, {});
  await manager.prefetchAll(user, { sessionId: SESSION });
  if (options.systemPrompt) await manager.buildSystemPrompt();
  manager.syncAll(user, reply, { sessionId: SESSION });
  manager.queuePrefetchAll(user, { sessionId: SESSION });
}

/** The two built-in memory files of the peer group's scratch home. */
export const STORE_FILES = {
  "MEMORY.md":
    "Deploys go through the canary first.\n§\nThe CI runs on two cores.",
  "USER.md": "Prefers helix with tabs.\n§\nLikes Taiwanese oolong.",
};

/**
 * A manager with the in-process provider, and a second, `builtin`, one: an
 * in-process stand-in, or (`store`: a profile home holding
 * {@linkcode STORE_FILES}) the real built-in store.
 */
export async function benchManager(
  options: { builtin?: boolean; store?: string } = {},
): Promise<MemoryManager> {
  const manager = new MemoryManager();
  if (options.store !== undefined) {
    await manager.addProvider(
      new BuiltinMemoryProvider({ hermesHome: options.store, config: {} }),
    );
  } else if (options.builtin) {
    await manager.addProvider(new InProcessProvider("builtin"));
  }
  await manager.addProvider(new InProcessProvider("inproc"));
  await manager.initializeAll(SESSION, { platform: "cli" });
  return manager;
}
