// The busy-loop limit counts the CPU time the machine gives a runnable
// thread, not wall time: with CPU hogs on every core, a provider doing a
// long but finite computation is not killed, and a real busy loop still is.
import assert from "node:assert/strict";
import { loadMemoryProvider } from "../../src/plugins/provider_loader.ts";
import { tempHome, writeProvider } from "../helpers/plugin_fixtures.ts";

const SOURCE =
  `import { MemoryProvider, type ToolSchema } from "@hermes/memory/provider";
import process from "node:process";
export class P extends MemoryProvider {
  get name(): string { return "cruncher"; }
  isAvailable(): boolean { return true; }
  initialize(): void {}
  getToolSchemas(): ToolSchema[] { return []; }
  handleToolCall(_name: string, args: Record<string, unknown>): string {
    if (args.spin) while (true) { /* a real busy loop */ }
    // A long synchronous computation: exactly args.cpuMs of CPU time.
    const start = process.cpuUsage();
    let n = 0;
    while (true) {
      const used = process.cpuUsage(start);
      if ((used.user + used.system) / 1000 >= Number(args.cpuMs)) break;
      n++;
    }
    return "done after " + n;
  }
}
`;

/** Starts two CPU hogs per core, plus one. */
function startHogs(): Deno.ChildProcess[] {
  const count = 2 * (navigator.hardwareConcurrency || 2) + 1;
  return Array.from({ length: count }, () =>
    new Deno.Command(Deno.execPath(), {
      args: ["eval", "while (true) {}"],
      stdin: "null",
      stdout: "null",
      stderr: "null",
    }).spawn());
}

Deno.test("on a machine with two CPU hogs per core, a provider computing for 60% of the limit is not killed; a real spin still is", async () => {
  await using h = await tempHome();
  await writeProvider(h.plugins, "cruncher", { "mod.ts": SOURCE });
  const provider = await loadMemoryProvider("cruncher", {
    hermesHome: h.home,
    bundledDir: h.outside,
    config: {},
    unresponsiveAfterMs: 1000,
    // With the machine loaded by others too, 1000 ms of CPU time may take
    // far longer than the default 30 s of wall time.
    callTimeoutMs: 300_000,
  });
  assert.ok(provider);
  const hogs = startHogs();
  try {
    await new Promise((resolve) => setTimeout(resolve, 300));
    const started = performance.now();
    const result = await provider.handleToolCall("crunch", { cpuMs: 600 }, {});
    const wallMs = performance.now() - started;
    assert.match(result, /^done after \d+$/);
    // The machine was loaded: the wall-time limit of old (1000 ms after
    // the first heartbeat, 500 ms in) would have fired.
    assert.ok(wallMs > 1600, `the computation took only ${wallMs} ms`);
    await assert.rejects(
      async () => await provider.handleToolCall("crunch", { spin: true }, {}),
      /its sandbox process stopped responding for 1000 ms of CPU time \(a busy loop\?\) and was killed/,
    );
  } finally {
    for (const hog of hogs) {
      hog.kill("SIGKILL");
      await hog.status;
    }
    await provider.shutdown();
  }
});
