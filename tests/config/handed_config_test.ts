// The launcher's parse of config.yaml handed to the CLI: used only for the
// very text it parsed, never for an edited file.
import assert from "node:assert/strict";
import { join } from "node:path";
import { loadConfig, PARSED_CONFIG_ENV } from "../../src/config/config.ts";
import { handConfig } from "../../src/config/config_yaml.ts";
import { withHome } from "../helpers/test_home.ts";

async function withHanded(
  handed: string | undefined,
  fn: () => Promise<void>,
): Promise<void> {
  if (handed === undefined) throw new Error("nothing was handed");
  Deno.env.set(PARSED_CONFIG_ENV, handed);
  try {
    await fn();
  } finally {
    Deno.env.delete(PARSED_CONFIG_ENV);
  }
}

Deno.test("loadConfig uses the handed parse for the same text and parses an edited file", async () => {
  await withHome(async (home) => {
    const text = "memory:\n  provider: honcho\n";
    await Deno.writeTextFile(join(home, "config.yaml"), text);
    // A value the YAML does not hold shows which one was used.
    const marked = { memory: { provider: "from-launcher" } };
    await withHanded(await handConfig(text, marked), async () => {
      assert.deepEqual(await loadConfig({ hermesHome: home }), marked);
      await Deno.writeTextFile(join(home, "config.yaml"), text + "x: 1\n");
      assert.deepEqual(await loadConfig({ hermesHome: home }), {
        memory: { provider: "honcho" },
        x: 1,
      });
    });
  });
});

Deno.test("handConfig hands on only what JSON keeps exactly", async () => {
  assert.equal(await handConfig("a: .inf\n", { a: Infinity }), undefined);
  assert.equal(await handConfig("a: -0.0\n", { a: -0 }), undefined);
  assert.equal(
    await handConfig("a: 2001-12-14\n", { a: new Date(0) }),
    undefined,
  );
  assert.equal(
    await handConfig("a: x\n", { a: "x".repeat(40_000) }),
    undefined,
  );
  assert.ok(await handConfig("a: [1, null]\n", { a: [1, null] }));
});

Deno.test("handConfig hands on nothing that looks like a secret (the launch record is on disk)", async () => {
  const key = "sk-proj-4f9a8b7c6d5e4f3a2b1c0d9e";
  assert.equal(
    await handConfig(`model:\n  api_key: ${key}\n`, {
      model: { api_key: key },
    }),
    undefined,
  );
  assert.equal(
    await handConfig("x: 1\n", { note: `token=${key}` }),
    undefined,
  );
  assert.ok(
    await handConfig("memory:\n  provider: honcho\n", {
      memory: { provider: "honcho" },
    }),
  );
});
