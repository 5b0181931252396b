import assert from "node:assert/strict";
import {
  MemoryProvider,
  type ToolSchema,
} from "../../src/core/memory_provider.ts";
import {
  createRegistrationContext,
  extractMemoryProvider,
  type SkillRegistration,
} from "../../src/core/plugin_context.ts";
import { captureLogs } from "../helpers/plugin_fixtures.ts";

class Named extends MemoryProvider {
  constructor(readonly label: string = "default") {
    super();
  }
  get name(): string {
    return this.label;
  }
  isAvailable(): boolean {
    return true;
  }
  initialize(): void {}
  getToolSchemas(): ToolSchema[] {
    return [];
  }
}

Deno.test("extractMemoryProvider() uses register(ctx), last registration wins, skills are reported", async () => {
  const skills: SkillRegistration[] = [];
  const provider = await extractMemoryProvider({
    register(ctx: ReturnType<typeof createRegistrationContext>) {
      ctx.registerMemoryProvider(new Named("first"));
      ctx.registerMemoryProvider(new Named("second"));
      ctx.registerSkill("tidy", new URL("file:///p/SKILL.md"), "Tidy");
      ctx.registerCliCommand("ignored");
      (ctx.registerHook as (n: string) => void)("on_x");
    },
    Named,
  }, { providerName: "p", onSkill: (s) => skills.push(s) });
  assert.equal(provider?.name, "second");
  assert.deepEqual(skills, [{
    name: "tidy",
    path: "/p/SKILL.md",
    description: "Tidy",
  }]);
});

Deno.test("extractMemoryProvider() awaits an async register", async () => {
  const provider = await extractMemoryProvider({
    async register(ctx: ReturnType<typeof createRegistrationContext>) {
      await Promise.resolve();
      ctx.registerMemoryProvider(new Named("async"));
    },
  }, { providerName: "p" });
  assert.equal(provider?.name, "async");
});

Deno.test("extractMemoryProvider() keeps a provider registered before register() threw, with a warning", async () => {
  using logs = captureLogs();
  const provider = await extractMemoryProvider({
    register(ctx: ReturnType<typeof createRegistrationContext>) {
      ctx.registerMemoryProvider(new Named("kept"));
      throw new Error("late failure");
    },
  }, { providerName: "p" });
  assert.equal(provider?.name, "kept");
  assert.deepEqual(logs.at("warn"), [
    "Memory provider 'p' register() raised after registering a provider, using the registered provider: late failure",
  ]);
});

Deno.test("extractMemoryProvider() falls back to the first constructible subclass in export-name order", async () => {
  class Broken extends Named {
    constructor() {
      super("broken");
      throw new Error("needs args");
    }
  }
  class Zed extends Named {
    constructor() {
      super("zed");
    }
  }
  class Mid extends Named {
    constructor() {
      super("mid");
    }
  }
  const provider = await extractMemoryProvider({
    register() {
      throw new Error("before registering");
    },
    zed: Zed,
    aBroken: Broken,
    mid: Mid,
    MemoryProvider,
    value: 3,
  }, { providerName: "p" });
  assert.equal(provider?.name, "mid");
});

Deno.test("extractMemoryProvider() returns null when the module offers no provider", async () => {
  assert.equal(
    await extractMemoryProvider({ x: 1, MemoryProvider }, {
      providerName: "p",
    }),
    null,
  );
});

Deno.test("extractMemoryProvider() accepts an exported instance only for packages", async () => {
  const module = { instance: new Named("instance") };
  assert.equal(
    await extractMemoryProvider(module, { providerName: "p" }),
    null,
  );
  assert.equal(
    (await extractMemoryProvider(module, {
      providerName: "p",
      acceptInstances: true,
    }))?.name,
    "instance",
  );
});

Deno.test("createRegistrationContext() exposes the provider name", () => {
  assert.equal(
    createRegistrationContext("x", () => {}, () => {}).providerName,
    "x",
  );
});
