import assert from "node:assert/strict";
import { join } from "node:path";
import { loadMemoryProvider } from "../../src/plugins/provider_loader.ts";
import type { SandboxedMemoryProvider } from "../../src/sandbox/sandboxed_provider.ts";
import {
  captureLogs,
  REPO,
  tempHome,
  writeProvider,
} from "../helpers/plugin_fixtures.ts";

Deno.test("worker bootstrap serves @hermes/memory to a provider without read access to the framework", async () => {
  await using h = await tempHome();
  await writeProvider(h.plugins, "kit", {
    "mod.ts":
      `import { MemoryProvider, getHermesHome, type ToolSchema } from "@hermes/memory";
export class Kit extends MemoryProvider {
  get name(): string { return "kit"; }
  isAvailable(): boolean { return true; }
  initialize(): void {}
  getToolSchemas(): ToolSchema[] { return []; }
  override systemPromptBlock(): string { return "home=" + getHermesHome(); }
}`,
  });
  await using provider = await loadMemoryProvider("kit", {
    hermesHome: h.home,
    bundledDir: h.outside,
    config: {},
    hostCheck: false,
  }) as SandboxedMemoryProvider;
  assert.ok(provider);
  assert.ok(
    !provider.grant.read.some((e) =>
      REPO.startsWith(e.value) || e.value.startsWith(REPO)
    ),
  );
  assert.equal(await provider.systemPromptBlock(), `home=${h.home}`);
});

Deno.test("worker bootstrap exposes the framework as globalThis.HermesMemory for packages", async () => {
  await using h = await tempHome();
  const dir = await writeProvider(join(h.outside, "pkgs"), "globaly", {
    "mod.ts": `const { MemoryProvider } = (globalThis as any).HermesMemory;
export class Globaly extends MemoryProvider {
  get name() { return "globaly"; }
  isAvailable() { return true; }
  initialize() {}
  getToolSchemas() { return []; }
}`,
  });
  await using provider = await loadMemoryProvider("globaly", {
    hermesHome: h.home,
    bundledDir: h.outside,
    config: { memory: { packages: { globaly: `file://${dir}/mod.ts` } } },
    hostCheck: false,
  }) as SandboxedMemoryProvider;
  assert.equal(provider?.name, "globaly");
});

Deno.test("worker bootstrap survives a provider's unhandled rejection and reports it", async () => {
  await using h = await tempHome();
  await writeProvider(h.plugins, "sloppy", {
    "mod.ts": `import { MemoryProvider, type ToolSchema } from "@hermes/memory";
export class Sloppy extends MemoryProvider {
  get name(): string { return "sloppy"; }
  isAvailable(): boolean { return true; }
  initialize(): void {}
  getToolSchemas(): ToolSchema[] { return []; }
  override queuePrefetch(): void { Promise.reject(new Error("stray")); }
  override systemPromptBlock(): string { return "alive"; }
}`,
  });
  using logs = captureLogs();
  await using provider = await loadMemoryProvider("sloppy", {
    hermesHome: h.home,
    bundledDir: h.outside,
    config: {},
    hostCheck: false,
  }) as SandboxedMemoryProvider;
  await provider.queuePrefetch("q", {});
  await new Promise((r) => setTimeout(r, 50));
  assert.equal(await provider.systemPromptBlock(), "alive");
  assert.deepEqual(logs.at("warn"), [
    "Memory provider 'sloppy' left a rejected promise unhandled: stray",
  ]);
});
