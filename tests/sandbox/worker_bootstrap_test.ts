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

Deno.test("a provider importing @hermes/memory/provider gets its own config.yaml sections as ctx.hermesConfig, and nothing else of the file", async () => {
  await using h = await tempHome();
  await writeProvider(h.plugins, "slim", {
    "mod.ts":
      `import { MemoryProvider, type ProviderRegistrationContext, type ToolSchema } from "@hermes/memory/provider";
class Slim extends MemoryProvider {
  #config: unknown;
  constructor(config: unknown) { super(); this.#config = config; }
  get name(): string { return "slim"; }
  isAvailable(): boolean { return true; }
  initialize(): void {}
  getToolSchemas(): ToolSchema[] { return []; }
  override systemPromptBlock(): string { return JSON.stringify(this.#config); }
}
export function register(ctx: ProviderRegistrationContext): void {
  ctx.registerMemoryProvider(new Slim(ctx.hermesConfig));
}`,
  });
  const config = {
    slim: { base_url: "http://slim.lan" },
    other: { token: "not-for-slim" },
    memory: {
      provider: "slim",
      slim: { depth: 2 },
      honcho: { x: 1 },
      permissions: { slim: { net: ["127.0.0.1"] } },
    },
  };
  await using provider = await loadMemoryProvider("slim", {
    hermesHome: h.home,
    bundledDir: h.outside,
    config,
    hostCheck: false,
  }) as SandboxedMemoryProvider;
  assert.ok(provider);
  assert.deepEqual(JSON.parse(await provider.systemPromptBlock()), {
    slim: { base_url: "http://slim.lan" },
    memory: { provider: "slim", slim: { depth: 2 } },
  });
});

Deno.test("loadMemoryProvider() refuses a provider whose data directory Hermes uses, or one that is a symlink", async () => {
  await using h = await tempHome();
  await writeProvider(h.plugins, "memories", {
    "mod.ts": `import { MemoryProvider } from "@hermes/memory/provider";
export class M extends MemoryProvider {
  get name() { return "memories"; }
  isAvailable() { return true; }
  initialize() {}
  getToolSchemas() { return []; }
}`,
  });
  await writeProvider(h.plugins, "linked", {
    "mod.ts": `import { MemoryProvider } from "@hermes/memory/provider";
export class L extends MemoryProvider {
  get name() { return "linked"; }
  isAvailable() { return true; }
  initialize() {}
  getToolSchemas() { return []; }
}`,
  });
  await Deno.symlink(h.outside, join(h.home, "linked"));
  using logs = captureLogs();
  for (const name of ["memories", "linked"]) {
    const provider = await loadMemoryProvider(name, {
      hermesHome: h.home,
      bundledDir: h.outside,
      config: {},
      hostCheck: false,
    });
    assert.equal(provider, null);
  }
  assert.deepEqual(logs.at("warn"), [
    `Failed to load memory provider 'memories': its data directory would be ${
      join(h.home, "memories")
    }, which Hermes itself uses: rename the provider`,
    `Failed to load memory provider 'linked': its data directory ${
      join(h.home, "linked")
    } is a symlink, which would widen its sandbox: replace it with a directory`,
  ]);
});
