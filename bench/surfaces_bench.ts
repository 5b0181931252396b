// Start-up of the surfaces beside `hermes memory status`, side by side in one
// run, each sample paired with a status sample taken right before it:
//
//   deno bench --no-prompt --allow-read --allow-write --allow-env --allow-net=127.0.0.1,localhost --allow-run --allow-sys bench/surfaces_bench.ts
//
// - floor (`surfaces.status`): `hermes memory status`, spawn to exit, in a
//   Honcho user's home whose server is a local Honcho test server;
// - `surfaces.dashboard`: `hermes memory dashboard`, spawn until its URL is
//   printed (then stopped, outside the timed part);
// - `surfaces.mcp`: `hermes memory mcp`, spawn until the MCP SDK's Client
//   has the server's initialize response (`client.connect()`);
// - `surfaces.mcp_tools`: the same plus the first `tools/list` (the
//   provider loaded in its sandbox and its schemas read).
//
// Each is the task line's `deno run <flags> <entry>` (the launcher, as the
// installed `hermes` runs), read from deno.json at run time. The ratio the
// summary prints is the median of the paired ratios' medians (bench/_report.ts
// pairs them from the `.pair` records).
import { Client } from "npm:@modelcontextprotocol/sdk@1.32.2/client/index.js";
import { StdioClientTransport } from "npm:@modelcontextprotocol/sdk@1.32.2/client/stdio.js";
import {
  addSample,
  benchmark,
  keepLogs,
  mustSucceed,
  printRatiosAtEnd,
  record,
  runProcess,
  setup,
} from "./_harness.ts";
import { startHonchoTestServer } from "../tests/honcho_server.ts";
import {
  type CliInvocation,
  honchoUserHome,
  viaDirect,
} from "./_hermes_cli.ts";

keepLogs("surfaces_bench");

const honchoServer = await startHonchoTestServer();
const cliHome = await honchoUserHome({
  prefix: "hermes_surfaces_bench_",
  baseUrl: honchoServer.url,
  net: [new URL(honchoServer.url).host],
});

function direct(args: string[]): CliInvocation {
  const cli = viaDirect(cliHome.home, args);
  if (typeof cli === "string") throw new Error(cli);
  return cli;
}

const status = direct(["memory", "status"]);
const dashboard = direct(["memory", "dashboard"]);
const mcp = direct(["memory", "mcp"]);

async function statusRun(): Promise<number> {
  const result = await runProcess(status.command, status.args, {
    cwd: status.cwd,
    env: status.env,
  });
  mustSucceed("hermes memory status", result);
  return result.ms;
}

/** Spawns the dashboard; resolves with the time to its URL, then stops it. */
async function dashboardRun(time: <T>(fn: () => Promise<T>) => Promise<T>) {
  let child: Deno.ChildProcess | undefined;
  const reader = await time(async () => {
    child = new Deno.Command(dashboard.command, {
      args: dashboard.args,
      cwd: dashboard.cwd,
      clearEnv: true,
      env: dashboard.env,
      stdin: "null",
      stdout: "piped",
      stderr: "null",
    }).spawn();
    const reader = child.stdout.pipeThrough(new TextDecoderStream())
      .getReader();
    let out = "";
    while (!/http:\/\/127\.0\.0\.1:\d+\/\?token=/.test(out)) {
      const { value, done } = await reader.read();
      if (done) throw new Error(`the dashboard printed no URL: ${out}`);
      out += value;
    }
    return reader;
  });
  child!.kill("SIGTERM");
  while (!(await reader.read()).done) { /* drain */ }
  await child!.status;
}

/** Connects the SDK client; `tools` also lists the tools. */
async function mcpRun(
  time: <T>(fn: () => Promise<T>) => Promise<T>,
  tools: boolean,
) {
  const transport = new StdioClientTransport({
    command: mcp.command,
    args: mcp.args,
    cwd: mcp.cwd,
    env: mcp.env,
    stderr: "ignore",
  });
  const client = new Client({ name: "bench", version: "1.0.0" });
  await time(async () => {
    await client.connect(transport);
    if (tools) await client.listTools();
  });
  await client.close();
}

await setup("warm the launcher cache and the modules", async () => {
  await statusRun();
  await dashboardRun((fn) => fn());
  await mcpRun((fn) => fn(), true);
});

const GROUP = "surfaces: start-up beside hermes memory status";

benchmark({
  id: "surfaces.status",
  title: "floor: `hermes memory status`, spawn to exit",
  group: GROUP,
  baseline: true,
  n: 10,
  warmup: 1,
  fn: (it) => it.time(statusRun),
});

function paired(
  id: string,
  title: string,
  run: (time: <T>(fn: () => Promise<T>) => Promise<T>) => Promise<void>,
): void {
  benchmark({
    id,
    title,
    group: GROUP,
    n: 10,
    warmup: 1,
    async fn(it) {
      const floorMs = await statusRun();
      addSample("surfaces.status", floorMs);
      let ms = 0;
      await run(async (fn) => {
        const started = performance.now();
        try {
          return await it.time(fn);
        } finally {
          ms = performance.now() - started;
        }
      });
      record(`${id}.pair`, { ms, floorMs });
    },
  });
}

paired(
  "surfaces.dashboard",
  "`hermes memory dashboard`, spawn until the URL is printed",
  dashboardRun,
);
paired(
  "surfaces.mcp",
  "`hermes memory mcp`, spawn until the initialize response",
  (time) => mcpRun(time, false),
);
paired(
  "surfaces.mcp_tools",
  "`hermes memory mcp`, spawn until the first tools/list answer",
  (time) => mcpRun(time, true),
);

printRatiosAtEnd("surfaces vs hermes memory status", [
  {
    label: "dashboard to URL",
    id: "surfaces.dashboard",
    floor: "surfaces.status",
  },
  { label: "mcp to initialize", id: "surfaces.mcp", floor: "surfaces.status" },
  {
    label: "mcp to tools/list",
    id: "surfaces.mcp_tools",
    floor: "surfaces.status",
  },
]);

globalThis.addEventListener("unload", () => {
  Deno.removeSync(cliHome.home, { recursive: true });
  void honchoServer.close();
});
