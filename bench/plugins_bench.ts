// Timing of the plugin system:
//   deno bench --no-prompt --allow-read --allow-write --allow-env bench/plugins_bench.ts
//
// - discovery of 500 provider directories (text checks only, no imports);
//   target < 100 ms;
// - one turn (prefetch + syncTurn + queuePrefetch) through a sandboxed
//   provider vs the same provider in-process; target sandboxed < 3x
//   in-process + 0.5 ms. What is measured is what the agent waits for in a
//   turn: prefetch awaited (a request/response round trip) plus syncTurn
//   and queuePrefetch awaited too, which for a sandboxed provider only
//   post them (one-way casts; their promises resolve once posted). The
//   worker runs the casts before the next turn's prefetch, so their cost
//   lands in that prefetch and is measured too: no backlog builds up.
//   Beside it, the floor any worker sandbox pays on this machine: one bare
//   postMessage round trip plus two one-way posts to an echo worker.
//
// Loading a provider into its worker is measured against an empty worker in
// bench/startup_bench.ts.
import { join } from "node:path";
import type { MemoryProvider } from "@hermes/memory";
import { loadMemoryProvider } from "@hermes/memory/plugins";
import { listMemoryProviderNames } from "../src/plugins/plugin_discovery.ts";
import { keepLogs, providerImport, setup } from "./_harness.ts";

keepLogs("plugins_bench");

const root = await Deno.realPath(
  await Deno.makeTempDir({ prefix: "hermes_plugins_bench_" }),
);
const home = join(root, "home");
const plugins = join(home, "plugins");
const empty = join(root, "no-bundled");
await Deno.mkdir(empty, { recursive: true });

const TURN_PROVIDER =
  `import { MemoryProvider, type ToolSchema } from "${providerImport()}";
export class Turns extends MemoryProvider {
  #last = "";
  #queued = "";
  get name(): string { return "turns"; }
  isAvailable(): boolean { return true; }
  initialize(): void {}
  getToolSchemas(): ToolSchema[] { return []; }
  override prefetch(query: string): string { return this.#queued || query; }
  override queuePrefetch(query: string): void { this.#queued = "recalled: " + query; }
  override syncTurn(user: string, assistant: string): void { this.#last = user + assistant; }
}
`;

await Deno.mkdir(plugins, { recursive: true });
for (let i = 0; i < 500; i++) {
  const dir = join(plugins, `provider_${String(i).padStart(3, "0")}`);
  await Deno.mkdir(dir);
  await Deno.writeTextFile(
    join(dir, "mod.ts"),
    `// provider ${i}\nimport { MemoryProvider } from "@hermes/memory";\n`,
  );
  await Deno.writeTextFile(
    join(dir, "plugin.yaml"),
    `name: provider_${i}\ndescription: Provider number ${i}\npermissions:\n  env: [P${i}_KEY]\n  net: [p${i}.example.com]\n`,
  );
}
const turnsDir = join(plugins, "turns");
await Deno.mkdir(turnsDir);
await Deno.writeTextFile(join(turnsDir, "mod.ts"), TURN_PROVIDER);

// The worker transport, against an echo worker; the process transport is
// measured against a pipe in bench/sandbox_transport_bench.ts.
const options = {
  hermesHome: home,
  bundledDir: empty,
  config: {},
  hostCheck: false,
  transport: "worker" as const,
};

Deno.bench({
  name: "plugins.discovery: 500 provider directories, no imports",
  group: "discovery",
  async fn() {
    const names = await listMemoryProviderNames(options);
    if (names.length !== 501) throw new Error(`found ${names.length}`);
  },
});

async function mustLoad(
  extra: { sandbox?: "none" } = {},
): Promise<MemoryProvider> {
  const provider = await loadMemoryProvider("turns", { ...options, ...extra });
  if (provider === null) {
    throw new Error(
      'loadMemoryProvider("turns") returned null (the log lines below say why)',
    );
  }
  return provider;
}
const sandboxed = await setup("load the sandboxed provider", () => mustLoad());
const inProcess = await setup(
  "load the in-process provider",
  () => mustLoad({ sandbox: "none" }),
);

// A turn as the agent sees it: prefetch is awaited for its result; syncTurn
// and queuePrefetch are awaited too (sandboxed, that is only the post).
async function turn(provider: MemoryProvider, i: number): Promise<void> {
  const query = `what did we say about item ${i}?`;
  await provider.prefetch(query, { sessionId: "bench" });
  await provider.syncTurn(query, "We said it was fine.", {
    sessionId: "bench",
  });
  await provider.queuePrefetch(query, { sessionId: "bench" });
}

// The platform floor: an echo worker that answers only messages asking for
// a reply; a turn's floor is one round trip and two one-way posts.
const echo = new Worker(
  `data:application/javascript,${
    encodeURIComponent(
      "onmessage = (e) => { if (e.data.t === 'call') postMessage(e.data); };",
    )
  }`,
  { type: "module", deno: { permissions: "none" } },
);
let answer: (value: unknown) => void = () => {};
echo.onmessage = (event) => answer(event.data);
function roundTrip(message: unknown): Promise<unknown> {
  return new Promise((resolve) => {
    answer = resolve;
    echo.postMessage(message);
  });
}

let i = 0;
Deno.bench({
  name: "sandbox.turn.floor: 1 bare postMessage round trip + 2 one-way posts",
  group: "turn",
  async fn() {
    await roundTrip({
      t: "call",
      id: i++,
      args: ["query", { sessionId: "b" }],
    });
    echo.postMessage({
      t: "cast",
      args: ["query", "reply", { sessionId: "b" }],
    });
    echo.postMessage({ t: "cast", args: ["query", { sessionId: "b" }] });
  },
});

Deno.bench({
  name:
    "sandbox.turn.inprocess: prefetch + syncTurn + queuePrefetch, in-process",
  group: "turn",
  baseline: true,
  async fn() {
    await turn(inProcess, i++);
  },
});

Deno.bench({
  name:
    "sandbox.turn.sandboxed: prefetch + syncTurn + queuePrefetch, sandboxed worker",
  group: "turn",
  async fn() {
    await turn(sandboxed, i++);
  },
});

Deno.bench({
  name: "(cleanup: shut the sandboxed provider down)",
  group: "zz-cleanup",
  n: 1,
  warmup: 0,
  async fn() {
    await sandboxed.shutdown();
    echo.terminate();
    await Deno.remove(root, { recursive: true }).catch(() => {});
  },
});
