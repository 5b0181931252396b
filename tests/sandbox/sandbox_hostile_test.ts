// Hostile fixture providers against the worker sandbox: each test names
// one attack and asserts the exact error a user sees (the manager logs it
// as "Memory provider 'intruder' <what> failed: <message>").
import assert from "node:assert/strict";
import { join } from "node:path";
import { getUserHome } from "../../src/profile/hermes_home.ts";
import type { MemoryProvider } from "../../src/core/memory_provider.ts";
import { loadMemoryProvider } from "../../src/plugins/provider_loader.ts";
import {
  captureLogs,
  installFixture,
  type TempHome,
  tempHome,
  writeProvider,
} from "../helpers/plugin_fixtures.ts";

interface Arena extends AsyncDisposable {
  h: TempHome;
  provider: MemoryProvider;
  port: number;
  attack(args: Record<string, unknown>): Promise<string>;
  manifest: string;
  config: string;
}

async function arena(): Promise<Arena> {
  const h = await tempHome();
  const dir = await installFixture(h.plugins, "intruder");
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen() {} },
    () => new Response("hello from the granted host"),
  );
  const port = server.addr.port;
  const config = {
    memory: {
      permissions: {
        // What 'hermes memory setup intruder' approved, plus a local host.
        intruder: { env: ["INTRUDER_TOKEN"], net: [`127.0.0.1:${port}`] },
      },
    },
  };
  const provider = await loadMemoryProvider("intruder", {
    hermesHome: h.home,
    bundledDir: h.outside,
    config,
    hostCheck: false,
  });
  assert.ok(provider, "intruder did not load");
  return {
    h,
    provider,
    port,
    manifest: join(dir, "plugin.yaml"),
    config: join(h.home, "config.yaml"),
    attack: async (args) => await provider.handleToolCall("intrude", args, {}),
    async [Symbol.asyncDispose]() {
      await provider.shutdown();
      await server.shutdown();
      await h[Symbol.asyncDispose]();
    },
  };
}

function denied(a: Arena, what: string, key: string): string {
  return `Memory provider 'intruder' may not ${what}: declare it under permissions.${key} in ${a.manifest} and approve it with 'hermes memory setup intruder', or grant it under memory.permissions.intruder.${key} in ${a.config}`;
}

Deno.test("sandbox denies reading ~/.ssh, which no grant can add", async () => {
  await using a = await arena();
  const ssh = join(getUserHome() ?? "/root", ".ssh");
  const key = join(ssh, "id_ed25519");
  await assert.rejects(
    a.attack({ attack: "readFile", path: key }),
    {
      name: "ProviderPermissionError",
      message:
        `Memory provider 'intruder' may not read ${key}: it is inside ${ssh}, SSH keys; no grant can add it`,
    },
  );
});

Deno.test("sandbox denies reading /etc", async () => {
  await using a = await arena();
  await assert.rejects(
    a.attack({ attack: "readFile", path: "/etc/passwd" }),
    {
      name: "ProviderPermissionError",
      message: denied(a, "read /etc/passwd", "read"),
    },
  );
});

Deno.test("sandbox denies writing outside its data directory and allows writing inside", async () => {
  await using a = await arena();
  const target = join(a.h.outside, "dropped.txt");
  await assert.rejects(a.attack({ attack: "writeFile", path: target }), {
    name: "ProviderPermissionError",
    message:
      `Memory provider 'intruder' may not write ${target}: its sandbox writes only ${
        join(a.h.home, "intruder")
      } unless granted more; declare it under permissions.write in ${a.manifest} and approve it with 'hermes memory setup intruder', or grant it under memory.permissions.intruder.write in ${a.config}`,
  });
  await assert.rejects(Deno.stat(target), Deno.errors.NotFound);
  assert.equal(
    await a.attack({ attack: "writeHome" }),
    JSON.stringify({ result: "written" }),
  );
  assert.equal(
    await Deno.readTextFile(join(a.h.home, "intruder", "intruder.txt")),
    "mine",
  );
});

Deno.test("sandbox denies an undeclared environment variable and allows a declared one", async () => {
  Deno.env.set("INTRUDER_TOKEN", "declared-value");
  try {
    await using a = await arena();
    await assert.rejects(
      a.attack({ attack: "envGet", name: "PATH" }),
      {
        name: "ProviderPermissionError",
        message: denied(a, "read the environment variable PATH", "env"),
      },
    );
    assert.equal(
      await a.attack({ attack: "envGet", name: "INTRUDER_TOKEN" }),
      JSON.stringify({ result: "declared-value" }),
    );
  } finally {
    Deno.env.delete("INTRUDER_TOKEN");
  }
});

Deno.test("sandbox denies Deno.env.toObject()", async () => {
  await using a = await arena();
  await assert.rejects(a.attack({ attack: "envAll" }), {
    name: "ProviderPermissionError",
    message:
      "Memory provider 'intruder' may not list the environment: read the variables it declares under permissions.env one at a time, with getSecret()",
  });
});

Deno.test("sandbox denies fetching an undeclared host and allows the user-granted one", async () => {
  await using a = await arena();
  assert.equal(
    await a.attack({ attack: "fetch", url: `http://127.0.0.1:${a.port}/` }),
    JSON.stringify({ result: "hello from the granted host" }),
  );
  // Same server, another name: net grants are by exact host string.
  await assert.rejects(
    a.attack({ attack: "fetch", url: `http://localhost:${a.port}/` }),
    {
      name: "ProviderPermissionError",
      message: denied(a, `connect to localhost:${a.port}`, "net"),
    },
  );
});

Deno.test("sandbox denies Deno.Command", async () => {
  await using a = await arena();
  await assert.rejects(a.attack({ attack: "command" }), {
    name: "ProviderPermissionError",
    message:
      "Memory provider 'intruder' may not run programs (echo): memory providers never get run access",
  });
});

Deno.test("sandbox denies FFI", async () => {
  await using a = await arena();
  await assert.rejects(a.attack({ attack: "ffi" }), {
    name: "ProviderPermissionError",
    message:
      "Memory provider 'intruder' may not load native libraries (libc.so.6): memory providers never get ffi access",
  });
});

Deno.test("sandbox denies system information", async () => {
  await using a = await arena();
  await assert.rejects(a.attack({ attack: "hostname" }), {
    name: "ProviderPermissionError",
    message:
      "Memory provider 'intruder' may not read system information (hostname): memory providers never get sys access",
  });
});

Deno.test("sandbox denies importing a file outside the provider's directory", async () => {
  await using a = await arena();
  const outside = join(a.h.outside, "payload.ts");
  await Deno.writeTextFile(outside, "export const stolen = true;");
  await assert.rejects(
    a.attack({ attack: "importModule", url: `file://${outside}` }),
    {
      name: "ProviderPermissionError",
      message: denied(a, `read ${outside}`, "read"),
    },
  );
});

Deno.test("sandbox denies creating a symlink (it would widen the grant)", async () => {
  await using a = await arena();
  await assert.rejects(
    a.attack({ attack: "symlink" }),
    /^NotCapable: Deno\.symlink\(\) requires unscoped --allow-read and --allow-write permissions/,
  );
});

Deno.test("sandbox denies a nested worker with more permissions", async () => {
  await using a = await arena();
  await assert.rejects(a.attack({ attack: "nestedWorker" }), {
    name: "NotCapable",
    message: "Can't escalate parent thread permissions",
  });
});

Deno.test("sandbox refuses a provider that statically imports a file outside its directory", async () => {
  await using h = await tempHome();
  const escape = join(h.outside, "escape.ts");
  await Deno.writeTextFile(escape, "export const x = 1;");
  await writeProvider(h.plugins, "static_escape", {
    "mod.ts": `import "${escape}";
import { MemoryProvider } from "@hermes/memory";
export class P extends MemoryProvider {
  get name() { return "static_escape"; }
  isAvailable() { return true; }
  initialize() {}
  getToolSchemas() { return []; }
}`,
  });
  using logs = captureLogs();
  const provider = await loadMemoryProvider("static_escape", {
    hermesHome: h.home,
    bundledDir: h.outside,
    config: {},
    hostCheck: false,
  });
  assert.equal(provider, null);
  assert.deepEqual(logs.at("warn"), [
    `Failed to load memory provider 'static_escape': it may not read ${escape}: declare it under permissions.read in ${
      join(h.plugins, "static_escape", "plugin.yaml")
    } and approve it with 'hermes memory setup static_escape', or grant it under memory.permissions.static_escape.read in ${
      join(h.home, "config.yaml")
    }`,
  ]);
});

Deno.test("sandbox refuses a provider whose code imports npm: without permissions.npm", async () => {
  await using h = await tempHome();
  const dir = await writeProvider(h.plugins, "npm_user", {
    "mod.ts": `import { MemoryProvider } from "@hermes/memory";
export class P extends MemoryProvider {
  get name() { return "npm_user"; }
  isAvailable() { return true; }
  initialize() {}
  getToolSchemas() { return []; }
  async prefetch() { return String((await import("npm:ms@2.1.3")).default("1w")); }
}`,
  });
  using logs = captureLogs();
  const provider = await loadMemoryProvider("npm_user", {
    hermesHome: h.home,
    bundledDir: h.outside,
    config: {},
    hostCheck: false,
  });
  assert.equal(provider, null);
  assert.deepEqual(logs.at("warn"), [
    `Failed to load memory provider 'npm_user': ${
      join(dir, "mod.ts")
    } imports an npm: package, which its sandbox does not allow: set permissions.npm: true in ${
      join(dir, "plugin.yaml")
    } (or grant memory.permissions.npm_user.npm: true in ${
      join(h.home, "config.yaml")
    })`,
  ]);
});

Deno.test("sandbox refuses a provider directory holding a symlink that leads out of it", async () => {
  await using h = await tempHome();
  const dir = await writeProvider(h.plugins, "linker", {
    "mod.ts": `import { MemoryProvider } from "@hermes/memory";
export class P extends MemoryProvider {
  get name() { return "linker"; }
  isAvailable() { return true; }
  initialize() {}
  getToolSchemas() { return []; }
}`,
  });
  await Deno.mkdir(join(dir, "data"));
  await Deno.symlink(h.outside, join(dir, "data", "out"));
  using logs = captureLogs();
  const provider = await loadMemoryProvider("linker", {
    hermesHome: h.home,
    bundledDir: h.outside,
    config: {},
    hostCheck: false,
  });
  assert.equal(provider, null);
  assert.deepEqual(logs.at("warn"), [
    `Failed to load memory provider 'linker': ${
      join(dir, "data", "out")
    } is a symlink to ${h.outside}, outside the provider's directory ${dir}, and would widen its sandbox: replace it with a copy`,
  ]);
});
