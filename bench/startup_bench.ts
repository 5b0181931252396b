// Start-up, each figure as a ratio to its floor measured in the same run:
//
//   deno bench --no-prompt --allow-read --allow-write --allow-env --allow-net=127.0.0.1,localhost --allow-run --allow-sys bench/startup_bench.ts
//
// - worker load: `loadMemoryProvider()` of a minimal user provider until the
//   host has it (spawn, bootstrap, import, register, schemas) vs the floor:
//   `new Worker` of an empty module (bench/_empty_worker.ts) with the very
//   permission options the sandbox used (captured from its `new Worker`
//   call) plus one postMessage round trip. The bundled Honcho provider's
//   load is measured beside it. Shutdown is outside the timed part.
// - CLI start-up, wall time from spawn to exit: `hermes --help` and
//   `hermes memory status` (a Honcho user's home with a local server, and a
//   home with the built-in store only), each run the way a user
//   does (`deno task hermes …`) and as the task line's own `deno run
//   <flags> <entry>` (read from deno.json at run time: the launcher), and for
//   `memory status` the CLI alone as the launcher starts it (its launch
//   record's command), vs the floor: a bare `deno run` of an empty file.
//
// Every timed iteration of a CLI or worker bench is preceded by one floor
// sample (not timed for that bench, recorded under the floor's id and, with
// the sample it precedes, as a pair), so the floor's median is taken over
// the same minutes as the figures it divides, and bench/_report.ts can give
// the median of the paired ratios: the machine is shared, and load drifts.
import { join } from "node:path";
import type { MemoryProvider } from "@hermes/memory";
import { loadMemoryProvider } from "@hermes/memory/plugins";
import {
  addSample,
  benchmark,
  childEnv,
  type Iteration,
  keepLogs,
  mustSucceed,
  printRatiosAtEnd,
  providerImport,
  record,
  runProcess,
  setup,
} from "./_harness.ts";
import { startHonchoTestServer } from "../tests/honcho_server.ts";
import {
  type CliInvocation,
  honchoUserHome,
  viaDirect,
  viaLaunchRecord,
  viaTask,
} from "./_hermes_cli.ts";

keepLogs("startup_bench");

// ---------------------------------------------------------------------------
// Worker load
// ---------------------------------------------------------------------------

const root = await Deno.realPath(
  await Deno.makeTempDir({ prefix: "hermes_startup_bench_" }),
);
const home = join(root, "home");
const noBundled = join(root, "no-bundled");
await Deno.mkdir(join(home, "plugins", "minimal"), { recursive: true });
await Deno.mkdir(noBundled);
await Deno.writeTextFile(
  join(home, "plugins", "minimal", "mod.ts"),
  `import { MemoryProvider, type ToolSchema } from "${providerImport()}";
export class Minimal extends MemoryProvider {
  get name(): string { return "minimal"; }
  isAvailable(): boolean { return true; }
  initialize(): void {}
  getToolSchemas(): ToolSchema[] { return []; }
}
`,
);
// The Honcho home's server is local, so `status`'s connection probe (one
// GET, as a user's self-hosted Honcho) never leaves the machine.
const honchoServer = await startHonchoTestServer({
  apiKey: "hch-bench-key-0000",
});
const cliHome = await honchoUserHome({
  prefix: "hermes_startup_cli_",
  baseUrl: honchoServer.url,
  net: [new URL(honchoServer.url).host],
});
// A home with the built-in store only (no provider selected).
const builtinHome = await Deno.realPath(
  await Deno.makeTempDir({ prefix: "hermes_startup_builtin_" }),
);
await Deno.mkdir(join(builtinHome, ".hermes", "memories"), { recursive: true });

// This file measures the worker transport (a compiled binary's); the
// process transport is measured in bench/sandbox_transport_bench.ts.
const minimalOptions = {
  hermesHome: home,
  bundledDir: noBundled,
  config: {},
  hostCheck: false,
  transport: "worker" as const,
};
const honchoOptions = {
  hermesHome: cliHome.hermes,
  config: { memory: { provider: "honcho" } },
  hostCheck: false,
  transport: "worker" as const,
};

async function load(
  name: string,
  options: Parameters<typeof loadMemoryProvider>[1],
): Promise<MemoryProvider> {
  const provider = await loadMemoryProvider(name, options);
  if (provider === null) {
    throw new Error(
      `loadMemoryProvider("${name}") returned null (the log lines below say why)`,
    );
  }
  return provider;
}

/** The options of the sandbox's own `new Worker` call, seen from outside. */
const sandboxWorkerOptions = await setup(
  "capture the sandbox's worker options",
  async (): Promise<WorkerOptions> => {
    const Real = globalThis.Worker;
    let seen: WorkerOptions | undefined;
    class Spy extends Real {
      constructor(url: string | URL, options?: WorkerOptions) {
        seen ??= options;
        super(url, options);
      }
    }
    globalThis.Worker = Spy;
    try {
      const provider = await load("minimal", minimalOptions);
      await provider.shutdown();
    } finally {
      globalThis.Worker = Real;
    }
    if (!seen) {
      throw new Error(
        "the sandboxed load made no `new Worker` call this bench could see",
      );
    }
    record("startup.worker.permissions", { options: seen });
    return seen;
  },
);

const EMPTY_WORKER = new URL("./_empty_worker.ts", import.meta.url);

/** An empty worker with the sandbox's options, until one round trip. */
async function emptyWorkerRoundTrip(): Promise<Worker> {
  const worker = new Worker(EMPTY_WORKER, {
    ...sandboxWorkerOptions,
    type: "module",
    name: "bench-empty-worker",
  });
  await new Promise<void>((resolve, reject) => {
    worker.onmessage = () => resolve();
    worker.onerror = (event) => {
      event.preventDefault();
      reject(new Error(`empty worker failed: ${event.message}`));
    };
    worker.postMessage("ping");
  });
  return worker;
}

const WORKER_GROUP = "startup: worker load";

benchmark({
  id: "startup.worker.floor",
  title: "floor: new Worker(empty module, same permissions) + 1 round trip",
  group: WORKER_GROUP,
  baseline: true,
  n: 30,
  warmup: 3,
  async fn(it) {
    const worker = await it.time(emptyWorkerRoundTrip);
    worker.terminate();
  },
});

/** A load, timed, preceded by one floor sample. */
async function timedLoad(
  it: Iteration,
  name: string,
  options: Parameters<typeof loadMemoryProvider>[1],
): Promise<void> {
  let started = performance.now();
  (await emptyWorkerRoundTrip()).terminate();
  const floorMs = performance.now() - started;
  addSample("startup.worker.floor", floorMs);
  started = performance.now();
  const provider = await it.time(() => load(name, options));
  record(`${it.id}.pair`, { ms: performance.now() - started, floorMs });
  await provider.shutdown();
}

benchmark({
  id: "startup.worker.load",
  title: "loadMemoryProvider(minimal user provider), sandboxed, until ready",
  group: WORKER_GROUP,
  n: 20,
  warmup: 2,
  fn: (it) => timedLoad(it, "minimal", minimalOptions),
});

benchmark({
  id: "startup.worker.load_honcho",
  title: "loadMemoryProvider(bundled honcho), sandboxed, until ready",
  group: WORKER_GROUP,
  n: 10,
  warmup: 1,
  fn: (it) => timedLoad(it, "honcho", honchoOptions),
});

// ---------------------------------------------------------------------------
// CLI start-up
// ---------------------------------------------------------------------------

const emptyFile = join(root, "empty.ts");
await Deno.writeTextFile(emptyFile, "");

async function bareDenoRun(): Promise<number> {
  const result = await runProcess(Deno.execPath(), ["run", emptyFile], {
    cwd: root,
    env: childEnv(root),
  });
  mustSucceed("bare deno run of an empty file", result);
  return result.ms;
}

async function runCli(cli: CliInvocation): Promise<void> {
  const result = await runProcess(cli.command, cli.args, {
    cwd: cli.cwd,
    env: cli.env,
  });
  mustSucceed(`${cli.label} ${cli.args.slice(-2).join(" ")}`, result);
}

const CLI_GROUP = "startup: CLI process, spawn to exit";

benchmark({
  id: "startup.floor.deno_run",
  title: "floor: bare `deno run` of an empty file",
  group: CLI_GROUP,
  baseline: true,
  n: 20,
  warmup: 2,
  fn: (it) => it.time(bareDenoRun),
});

const cliRows: { label: string; id: string; floor: string }[] = [];

async function cliBench(
  id: string,
  command: string,
  args: string[],
  n: number,
  userHome: string = cliHome.home,
): Promise<void> {
  const task = viaTask(userHome, args);
  const direct = viaDirect(userHome, args);
  const variants: [string, CliInvocation | string][] = [
    [`${id}.task`, task],
    [`${id}.direct`, direct],
  ];
  if (typeof direct !== "string" && args.join(" ") === "memory status") {
    // The CLI alone, as the launcher starts it: what the second process
    // costs is the difference.
    await runCli(direct);
    variants.push([`${id}.child`, await viaLaunchRecord(userHome, args)]);
  }
  for (const [variantId, cli] of variants) {
    if (typeof cli === "string") {
      console.error(`[startup_bench] ${variantId} skipped: ${cli}`);
      record(variantId, { skipped: cli });
      continue;
    }
    record(variantId, { command: [cli.label, ...args].join(" ") });
    cliRows.push({
      label: `${command} (${cli.label})`,
      id: variantId,
      floor: "startup.floor.deno_run",
    });
    benchmark({
      id: variantId,
      title: `\`hermes ${args.join(" ")}\` via ${cli.label}`,
      group: CLI_GROUP,
      n,
      warmup: 1,
      async fn(it) {
        const floorMs = await bareDenoRun();
        addSample("startup.floor.deno_run", floorMs);
        const started = performance.now();
        await it.time(() => runCli(cli));
        record(`${variantId}.pair`, {
          ms: performance.now() - started,
          floorMs,
        });
      },
    });
  }
}

await cliBench("startup.help", "hermes --help", ["--help"], 10);
// The status targets (issue 22) are ratios a few per cent apart from what
// is measured: 20 paired samples each.
await cliBench(
  "startup.status",
  "hermes memory status",
  ["memory", "status"],
  20,
);
await cliBench(
  "startup.status_probe",
  "hermes memory status --probe",
  ["memory", "status", "--probe"],
  8,
);
await cliBench(
  "startup.status_builtin",
  "hermes memory status (built-in only)",
  ["memory", "status"],
  20,
  builtinHome,
);

printRatiosAtEnd("start-up vs floors", [
  {
    label: "worker load (minimal provider)",
    id: "startup.worker.load",
    floor: "startup.worker.floor",
  },
  {
    label: "worker load (bundled honcho)",
    id: "startup.worker.load_honcho",
    floor: "startup.worker.floor",
  },
  ...cliRows,
]);

globalThis.addEventListener("unload", () => {
  Deno.removeSync(root, { recursive: true });
  Deno.removeSync(cliHome.home, { recursive: true });
  Deno.removeSync(builtinHome, { recursive: true });
  void honchoServer.close();
});
