import assert from "node:assert/strict";
import { MemoryProvider } from "../../src/core/memory_provider.ts";
import {
  isProviderHook,
  PROVIDER_HOOK_NAMES,
  PROVIDER_HOOKS,
} from "../../src/core/provider_hooks.ts";
import { SandboxedMemoryProvider } from "../../src/sandbox/sandboxed_provider.ts";

Deno.test("the hook table names every method of the contract, and nothing else", () => {
  const contract = Object.getOwnPropertyNames(MemoryProvider.prototype)
    .filter((name) => name !== "constructor");
  // Abstract methods and the optional hooks are declared, not defined, on
  // the class.
  const abstract = ["getToolSchemas", "initialize", "isAvailable"];
  const optional = PROVIDER_HOOK_NAMES.filter((n) =>
    PROVIDER_HOOKS[n].optional
  );
  assert.deepEqual(optional.sort(), ["drain", "getStatusConfig", "postSetup"]);
  assert.deepEqual(
    [...contract, ...abstract, ...optional].sort(),
    [...PROVIDER_HOOK_NAMES].sort(),
  );
  assert.equal(isProviderHook("constructor"), false);
  assert.equal(isProviderHook("__proto__"), false);
  assert.equal(isProviderHook("prefetch"), true);
});

Deno.test("casts are exactly the void hooks whose result nobody waits for", () => {
  const casts = PROVIDER_HOOK_NAMES.filter((n) =>
    PROVIDER_HOOKS[n].transport === "cast"
  );
  assert.deepEqual(casts.sort(), [
    "onDelegation",
    "onMemoryEvict",
    "onMemoryWrite",
    "onSessionEnd",
    "onTurnStart",
    "queuePrefetch",
    "syncTurn",
  ]);
});

Deno.test("the sandbox proxy forwards every non-optional hook the table names", () => {
  for (const name of PROVIDER_HOOK_NAMES) {
    if (PROVIDER_HOOKS[name].optional && name !== "drain") continue;
    const own = Object.getOwnPropertyDescriptor(
      SandboxedMemoryProvider.prototype,
      name,
    );
    assert.ok(own && typeof own.value === "function", `${name} not forwarded`);
  }
});
