// The host supervises its provider processes (issue 27, items 1 and 4),
// tried through real library hosts (tests/helpers/supervised_host.ts, started
// with only --allow-read/write/env/run) against the Honcho test server,
// counting on the server side: the provider's process (the pid it reports)
// is SIGKILLed mid-turn, mid-delivery and during a checkpoint, a provider
// dies at every start, and a gateway of 5 profiles runs under a cap of 2
// while /proc is sampled.
import assert from "node:assert/strict";
import { join } from "node:path";
import {
  type HonchoTestServer,
  startHonchoTestServer,
} from "../honcho_server.ts";
import { REPO } from "../helpers/plugin_fixtures.ts";
import { lockedDenoDir } from "../helpers/locked_npm_cache.ts";
import { type LibraryWorld, libraryWorld } from "../helpers/library_world.ts";
import { runHermesCli } from "../helpers/hermes_cli_child.ts";
import { livePids } from "../helpers/run_command.ts";
import { startProvider } from "../fixtures/honcho_provider_harness.ts";

const HOST = join(REPO, "tests", "helpers", "supervised_host.ts");

/** A user's home with `~/.hermes` and the host's own deno.json (absolute import map). */
const world = (): Promise<LibraryWorld> =>
  libraryWorld(undefined, "hermes-supervise-");

async function honchoProfile(
  home: string,
  server: HonchoTestServer,
  extra: Record<string, unknown> = {},
): Promise<void> {
  await Deno.mkdir(home, { recursive: true });
  const host = new URL(server.url).host;
  await Deno.writeTextFile(
    join(home, "config.yaml"),
    `memory:\n  provider: honcho\n  permissions:\n    honcho:\n      net: [${host}]\n`,
  );
  await Deno.writeTextFile(
    join(home, "honcho.json"),
    JSON.stringify({
      baseUrl: server.url,
      workspace: "ws",
      peerName: "alice",
      aiPeer: "hermes",
      recallMode: "tools",
      writeFrequency: "turn",
      sessionStrategy: "per-session",
      timeout: 1,
      ...extra,
    }),
  );
}

/** Starts the host; `onLine` sees each stdout line as it comes (it may kill). */
async function runHost(
  w: LibraryWorld,
  args: string[],
  onLine: (line: string) => void = () => {},
  env: Record<string, string> = {},
  onSpawn: (pid: number) => void = () => {},
): Promise<{ code: number; done: Record<string, unknown>; stderr: string }> {
  const child = new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "--quiet",
      "--no-lock",
      "--cached-only",
      "--allow-read",
      "--allow-write",
      "--allow-env",
      "--allow-run",
      `--config=${w.config}`,
      HOST,
      ...args,
    ],
    cwd: w.root,
    env: {
      HOME: w.userHome,
      // No lock: the pinned versions' metadata only.
      DENO_DIR: await lockedDenoDir(),
      NO_COLOR: "1",
      ...env,
    },
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  onSpawn(child.pid);
  const stderr = new Response(child.stderr).text();
  let done: Record<string, unknown> = {};
  let buffer = "";
  for await (const chunk of child.stdout.pipeThrough(new TextDecoderStream())) {
    buffer += chunk;
    let newline;
    while ((newline = buffer.indexOf("\n")) >= 0) {
      const line = buffer.slice(0, newline);
      buffer = buffer.slice(newline + 1);
      if (line.startsWith("DONE ")) done = JSON.parse(line.slice(5));
      else onLine(line);
    }
  }
  const status = await child.status;
  return { code: status.code, done, stderr: await stderr };
}

function kill(pid: number): boolean {
  // 0 would be this process group.
  if (!(pid > 1)) return false;
  try {
    Deno.kill(pid, "SIGKILL");
    return true;
  } catch {
    return false;
  }
}

/** Lost and duplicated among `expected`, counted on the server. */
function count(server: HonchoTestServer, expected: string[]) {
  const contents = server.state.messages.map((m) => m.content);
  const lost = expected.filter((text) => !contents.includes(text));
  const doubled = expected.filter((text) =>
    contents.filter((c) => c === text).length > 1
  );
  return { lost, doubled, total: contents.length };
}

for (const durability of ["default", "durable"] as const) {
  Deno.test(`SIGKILL of the provider process mid-turn, mid-delivery and during a checkpoint (${durability} mode): every accepted message is stored once`, async () => {
    await using server = await startHonchoTestServer({ latencyMs: 40 });
    await using w = await world();
    await honchoProfile(w.home, server);
    const TURNS = 10;
    const killed: string[] = [];
    let host = 0;
    let pid = 0;
    let turn = 0;
    const kills: Promise<void>[] = [];
    const killNow = (what: string) =>
      kills.push(
        killProvider(host, pid).then((dead) => {
          if (dead > 0) killed.push(`${what} ${dead}`);
        }),
      );
    // Mid-delivery: the first message request in flight, before the
    // mid-turn kills (a lost acknowledgement then holds the session's later
    // messages until it settles).
    let deliveryKilled = false;
    const watch = setInterval(() => {
      if (turn >= 5 || deliveryKilled) return;
      if (
        server.requests.some((r) =>
          r.status === 0 && r.method === "POST" && /\/messages$/.test(r.path)
        )
      ) {
        deliveryKilled = true;
        killNow("delivery");
      }
    }, 2);
    let run;
    try {
      run = await runHost(
        w,
        ["turns", durability, String(TURNS), "120", "1"],
        (line) => {
          const m = line.match(/^PID (\d+) (TURN (\d+)|CHECKPOINT)/);
          if (!m) return;
          pid = Number(m[1]);
          turn = Number(m[3] ?? TURNS);
          // Mid-turn: right after syncAll returned, its write in flight.
          if ((turn === 5 || turn === 8) && m[3]) killNow(`turn ${turn}`);
          if (m[2] === "CHECKPOINT") killNow("checkpoint");
        },
        {},
        (spawned) => host = spawned,
      );
    } finally {
      clearInterval(watch);
      await Promise.all(kills);
    }
    assert.equal(run.code, 0, run.stderr);
    assert.equal(
      killed.length,
      4,
      `kills: ${killed.join(", ")}; requests: ${
        server.requests.map((r) => `${r.method} ${r.path.slice(-20)}`).join(
          ", ",
        )
      }\n${JSON.stringify(run.done)}\n${run.stderr}`,
    );
    assert.equal(run.done.checkpoint, "ok", run.stderr);
    if (durability === "durable") {
      assert.deepEqual(run.done.flushed, Array(TURNS).fill(true));
    }
    assert.equal(run.done.flushedAtEnd, true);
    // What the last process queued but did not deliver before the host
    // ended is in its outbox: a provider started on the home delivers it.
    const provider = await startProvider(w.home);
    try {
      await provider.onSessionEnd([]);
    } finally {
      await provider.shutdown();
    }
    const expected = ["Extra question", "Extra answer"];
    for (let t = 1; t <= TURNS; t++) {
      expected.push(`Question ${t}`, `Answer ${t}`);
    }
    const { lost, doubled } = count(server, expected);
    assert.deepEqual(lost, [], `lost after kills ${killed.join(", ")}`);
    assert.deepEqual(doubled, [], `stored twice after ${killed.join(", ")}`);
    await assert.rejects(
      Deno.stat(join(w.home, "pending_writes", "honcho.json")),
      Deno.errors.NotFound,
    );
    server.assertNoViolations();
  });
}

/** A provider that stores each turn with one request to the test server; no dedup of its own. */
function relaySource(url: string, broken: boolean): string {
  return `import { MemoryProvider } from "@hermes/memory/provider";
${
    broken
      ? `(globalThis as unknown as { process: { abort(): never } }).process.abort();`
      : ""
  }
const BASE = ${JSON.stringify(url)} + "/v3/workspaces";
async function post(path: string, body: unknown): Promise<void> {
  const response = await fetch(BASE + path, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  await response.body?.cancel();
  if (!response.ok) throw new Error("relay: " + response.status);
}
export class Relay extends MemoryProvider {
  get name(): string { return "relay"; }
  isAvailable(): boolean { return true; }
  async initialize(): Promise<void> {
    await post("", { id: "ws" });
    await post("/ws/sessions", { id: "s1" });
  }
  getToolSchemas() { return []; }
  async syncTurn(user: string, assistant: string): Promise<void> {
    await post("/ws/sessions/s1/messages", { messages: [
      { peer_id: "alice", content: user },
      { peer_id: "hermes", content: assistant },
    ] });
  }
}
`;
}

Deno.test("a provider that dies at every start: the accepted turns wait on disk (0600) and are delivered once when a working version starts", async () => {
  await using server = await startHonchoTestServer();
  await using w = await world();
  const dir = join(w.home, "plugins", "relay");
  await Deno.mkdir(dir, { recursive: true });
  const module = join(dir, "mod.ts");
  await Deno.writeTextFile(module, relaySource(server.url, false));
  await Deno.writeTextFile(join(dir, "plugin.yaml"), "name: relay\n");
  await Deno.writeTextFile(
    join(w.home, "config.yaml"),
    `memory:\n  provider: relay\n  permissions:\n    relay:\n      net: [${
      new URL(server.url).host
    }]\n`,
  );
  const TURNS = 8;
  const first = await runHost(w, ["die", String(TURNS)], () => {}, {
    RELAY_MODULE: module,
    BROKEN_SOURCE: relaySource(server.url, true),
  });
  assert.equal(first.code, 0, first.stderr);
  assert.equal(first.done.flushed, true);
  assert.equal(first.done.flushedAfter, false, "flushPending tells the truth");
  assert.equal(first.done.pending, TURNS - 3);
  const kept = join(w.home, "pending_writes", "relay.json");
  const file = JSON.parse(await Deno.readTextFile(kept));
  assert.deepEqual(
    file.writes.map((write: { args: string[] }) => write.args[0]),
    [4, 5, 6, 7, 8].map((t) => `Question ${t}`),
  );
  assert.equal((await Deno.stat(kept)).mode! & 0o777, 0o600);
  assert.match(file.reason, /could not be started again/);
  const warnings = (first.done.warnings as string[]).join("\n");
  assert.ok(warnings.includes(kept), warnings);
  let stored = count(server, ["Question 1", "Question 3", "Question 4"]);
  assert.deepEqual(stored.lost, ["Question 4"]);
  // What waits is shown, and doctor counts it as a problem.
  const status = await runHermesCli(["memory", "status"], {
    userHome: w.userHome,
  });
  assert.match(
    status.stdout,
    /Waiting: +5 accepted write\(s\) for 'relay' not durable yet, kept in .*relay\.json \(it could not be started again/,
  );
  const doctor = await runHermesCli(["memory", "doctor", "--json"], {
    userHome: w.userHome,
  });
  assert.notEqual(doctor.code, 0);
  const problems = JSON.parse(doctor.stdout).problems as { check: string }[];
  assert.ok(
    problems.some((p) => p.check === "provider.waiting_writes"),
    doctor.stdout,
  );
  assert.ok(await Deno.stat(kept), "status and doctor hand nothing over");
  // A working version: the next host hands the kept turns over, once.
  await Deno.writeTextFile(module, relaySource(server.url, false));
  const second = await runHost(w, ["deliver"]);
  assert.equal(second.code, 0, second.stderr);
  const expected = [];
  for (let t = 1; t <= TURNS; t++) {
    expected.push(`Question ${t}`, `Answer ${t}`);
  }
  stored = count(server, expected);
  assert.deepEqual(stored.lost, []);
  assert.deepEqual(stored.doubled, []);
  await assert.rejects(Deno.stat(kept), Deno.errors.NotFound);
});

/** The pids of the provider processes `host` runs now (zombies are not alive). */
function providerPids(host: number): Promise<number[]> {
  return livePids("worker_bootstrap", host);
}

/** SIGKILLs the provider process of `host` (waiting up to 5 s for one to run). */
async function killProvider(host: number, reported: number): Promise<number> {
  if (kill(reported)) return reported;
  for (let i = 0; i < 500; i++) {
    const [pid] = await providerPids(host);
    if (pid !== undefined && kill(pid)) return pid;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  return 0;
}

Deno.test({
  name:
    "a gateway of 5 profiles under a cap of 2, turns in bursts: never more than 2 provider processes alive, every turn stored once",
  ignore: Deno.build.os !== "linux",
  fn: async () => {
    await using server = await startHonchoTestServer();
    await using w = await world();
    await Deno.writeTextFile(join(w.home, "config.yaml"), "memory: {}\n");
    const homes: string[] = [];
    for (let i = 0; i < 5; i++) {
      const home = join(w.home, "profiles", `p${i}`);
      await honchoProfile(home, server, { peerName: `user${i}` });
      homes.push(home);
    }
    const ROUNDS = 3;
    let host = 0;
    let most = 0;
    let samples = 0;
    let sampling = true;
    const child = runHost(
      w,
      ["gateway", "2", String(ROUNDS), ...homes],
      () => {},
      {},
      (pid) => host = pid,
    );
    const sampler = (async () => {
      while (sampling) {
        most = Math.max(most, (await providerPids(host)).length);
        samples++;
      }
    })();
    const run = await child;
    sampling = false;
    await sampler;
    assert.equal(run.code, 0, run.stderr);
    assert.ok(
      most <= 2,
      `${most} provider processes were alive at once (${samples} samples)`,
    );
    assert.ok(most >= 1, "no provider process was ever seen");
    const expected = [];
    for (let i = 0; i < 5; i++) {
      for (let r = 1; r <= ROUNDS; r++) {
        expected.push(`p${i} turn ${r}`, `p${i} reply ${r}`);
      }
    }
    const { lost, doubled } = count(server, expected);
    assert.deepEqual(lost, []);
    assert.deepEqual(doubled, []);
    server.assertNoViolations();
  },
});
