// A provider process that floods, spins (on its main thread or in Workers it
// starts) or outlives its host, seen through real processes: the host ends
// that provider with a message naming it and the limit, keeps serving the
// others, and no provider survives a SIGKILLed host.
import assert from "node:assert/strict";
import { join } from "node:path";
import { loadMemoryProvider } from "../../src/plugins/provider_loader.ts";
import type { SandboxedMemoryProvider } from "../../src/sandbox/sandboxed_provider.ts";
import {
  type CapturedLogs,
  captureLogs,
  REPO,
  simpleProviderSource,
  tempHome,
  writeProvider,
} from "../helpers/plugin_fixtures.ts";

/** A provider whose tool `go` starts `action` 100 ms after answering (no call is then pending). */
function misbehaving(name: string, action: string): string {
  return `import { MemoryProvider, type ToolSchema } from "@hermes/memory";
import { writeSync } from "node:fs";
export class P extends MemoryProvider {
  get name(): string { return ${JSON.stringify(name)}; }
  isAvailable(): boolean { return true; }
  initialize(): void {}
  getToolSchemas(): ToolSchema[] { return []; }
  handleToolCall(): string {
    setTimeout(() => { ${action} }, 100);
    return "started";
  }
}
// Keeps writeSync used in every variant.
export const _write = writeSync;
`;
}

const FLOOD = `const chunk = new Uint8Array(1 << 20).fill(120);
for (let i = 0; i < 64; i++) writeSync(1, chunk);`;
const SPIN_MAIN = "while (true) {}";
// The busy-loop reasons end with "ms of CPU time (a busy loop?) and was killed".
const SPIN_WORKERS = `for (let i = 0; i < 2; i++) {
  new Worker(URL.createObjectURL(new Blob(["while (true) {}"], { type: "text/javascript" })), { type: "module" });
}`;

/**
 * Whether the process is gone (a zombie left to an init that does not reap
 * counts as gone). Read by `cat`: Deno reads /proc only under --allow-all.
 */
function gone(pid: number): boolean {
  const { code, stdout } = new Deno.Command("cat", {
    args: [`/proc/${pid}/stat`],
    stderr: "null",
  }).outputSync();
  const stat = new TextDecoder().decode(stdout);
  return code !== 0 || stat.slice(stat.lastIndexOf(")") + 2).startsWith("Z");
}

async function until(what: string, ok: () => boolean, ms = 60_000) {
  const end = performance.now() + ms;
  while (!ok()) {
    if (performance.now() > end) throw new Error(`waited ${ms} ms for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

function stoppedWith(logs: CapturedLogs, name: string, text: string) {
  return () =>
    logs.at("warn").some((m) =>
      m.includes(`Memory provider '${name}'`) && m.includes(text)
    );
}

async function load(home: string, outside: string, name: string) {
  const provider = await loadMemoryProvider(name, {
    hermesHome: home,
    bundledDir: outside,
    config: {},
    hostCheck: false,
    unresponsiveAfterMs: 1000,
  });
  assert.ok(provider);
  return provider as SandboxedMemoryProvider;
}

async function latencies(provider: SandboxedMemoryProvider, n: number) {
  const out: number[] = [];
  for (let i = 0; i < n; i++) {
    const started = performance.now();
    assert.equal(await provider.prefetch(`q${i}`, {}), `calm q${i}`);
    out.push(performance.now() - started);
  }
  return out.sort((a, b) => a - b);
}

Deno.test("a provider writing a 64 MiB line without a newline while idle is ended with a message naming it and the 40 MiB limit; another provider keeps its latency", async () => {
  await using h = await tempHome();
  using logs = captureLogs();
  await writeProvider(h.plugins, "flooder", {
    "mod.ts": misbehaving("flooder", FLOOD),
  });
  await writeProvider(h.plugins, "calm", {
    "mod.ts": simpleProviderSource(
      "calm",
      'prefetch(q: string): string { return "calm " + q; }',
    ),
  });
  await using flooder = await load(h.home, h.outside, "flooder");
  await using calm = await load(h.home, h.outside, "calm");
  const quiet = await latencies(calm, 30);
  assert.equal(await flooder.handleToolCall("go", {}, {}), "started");
  const during: number[] = [];
  const ended = stoppedWith(
    logs,
    "flooder",
    "sent a line longer than 40 MiB, the longest the sandbox protocol reads (MAX_LINE_BYTES)",
  );
  const end = performance.now() + 60_000;
  while (!ended() && performance.now() < end) {
    during.push(...await latencies(calm, 1));
  }
  assert.ok(ended(), logs.lines.join("\n"));
  await until("the flooder's process to end", () => gone(flooder.pid!));
  // Generous (the machine may be loaded): the old reader rescanned one
  // growing string per chunk and held the host for seconds.
  const median = quiet[quiet.length >> 1]!;
  const flooded = during.sort((a, b) => a - b)[during.length >> 1] ?? 0;
  assert.ok(
    flooded < Math.max(20 * median, median + 2000),
    `calls took a median ${flooded} ms during the flood (quiet: ${median} ms)`,
  );
  assert.equal(await calm.prefetch("after", {}), "calm after");
});

for (
  const [what, action, reason] of [
    [
      "spinning in its main thread",
      SPIN_MAIN,
      "its sandbox process stopped responding for 1000 ms",
    ],
    [
      "spinning in two Workers it started",
      SPIN_WORKERS,
      'its sandbox process kept a thread of it ("worker-',
    ],
    [
      "flooding well-formed lines through console.log",
      'const line = "x".repeat(65536); while (true) console.log(line);',
      "its sandbox process sent more than 8 MiB of output within a second while no call was pending (IDLE_OUTPUT_PER_SECOND)",
    ],
  ] as const
) {
  Deno.test(`a provider ${what} while no call is pending is ended with a message`, async () => {
    await using h = await tempHome();
    using logs = captureLogs();
    await writeProvider(h.plugins, "spinner", {
      "mod.ts": misbehaving("spinner", action),
    });
    await using provider = await load(h.home, h.outside, "spinner");
    const pid = provider.pid!;
    assert.equal(await provider.handleToolCall("go", {}, {}), "started");
    await until(
      "the watchdog's message",
      stoppedWith(logs, "spinner", reason),
    );
    await until("the spinning process to end", () => gone(pid));
  });
}

Deno.test("no provider process outlives a SIGKILLed host by more than about a second, spinning or not", async () => {
  await using h = await tempHome();
  await writeProvider(h.plugins, "spinner", {
    "mod.ts": misbehaving("spinner", SPIN_MAIN),
  });
  await writeProvider(h.plugins, "idle", {
    "mod.ts": simpleProviderSource("idle"),
  });
  const script = join(h.outside, "host.ts");
  await Deno.writeTextFile(
    script,
    `import { loadMemoryProvider } from ${
      JSON.stringify(`file://${REPO}/src/plugins/provider_loader.ts`)
    };
const options = { hermesHome: ${JSON.stringify(h.home)}, bundledDir: ${
      JSON.stringify(h.outside)
    }, config: {}, hostCheck: false, unresponsiveAfterMs: 600000 };
const spinner = await loadMemoryProvider("spinner", options);
const idle = await loadMemoryProvider("idle", options);
await spinner.handleToolCall("go", {}, {});
console.log(JSON.stringify([spinner.pid, idle.pid]));
setInterval(() => {}, 1000);
`,
  );
  const host = new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "--quiet",
      "--no-prompt",
      "--cached-only",
      `--config=${join(REPO, "deno.json")}`,
      "--allow-read",
      "--allow-write",
      "--allow-env",
      "--allow-run",
      script,
    ],
    stdout: "piped",
    stderr: "inherit",
  }).spawn();
  let pids: number[] = [];
  try {
    const reader = host.stdout.pipeThrough(new TextDecoderStream())
      .getReader();
    let text = "";
    while (!text.includes("\n")) {
      const { value, done } = await reader.read();
      if (done) throw new Error(`the host ended before it printed: ${text}`);
      text += value;
    }
    reader.cancel();
    pids = JSON.parse(text) as number[];
    // Spinning for a moment: its event loop can no longer see its input end.
    await new Promise((resolve) => setTimeout(resolve, 500));
    assert.deepEqual(pids.map(gone), [false, false], JSON.stringify(pids));
    host.kill("SIGKILL");
    await host.status;
    await new Promise((resolve) => setTimeout(resolve, 1500));
    assert.deepEqual(pids.filter((pid) => !gone(pid)), []);
  } finally {
    try {
      host.kill("SIGKILL");
    } catch {
      // Already gone.
    }
    await host.status;
    for (const pid of pids) {
      try {
        Deno.kill(pid, "SIGKILL");
      } catch {
        // Gone, as it should be.
      }
    }
  }
});
