import assert from "node:assert/strict";
import { join } from "node:path";
import {
  buildProfileSecretScope,
  currentSecretScope,
  getSecret,
  isGlobalEnvVar,
  isMultiplexActive,
  setMultiplexActive,
  UnscopedSecretError,
} from "../../src/profile/secret_scope.ts";
import {
  withHermesHome,
  withSecretScope,
} from "../../src/profile/context_scope.ts";
import { readProcessEnv } from "../../src/core/env.ts";

const PROCESS_VAR = "HERMES_TEST_SECRET_SCOPE_VAR";

function withProcessVar(value: string, fn: () => void | Promise<void>) {
  return async () => {
    Deno.env.set(PROCESS_VAR, value);
    try {
      await fn();
    } finally {
      Deno.env.delete(PROCESS_VAR);
    }
  };
}

function multiplexing(fn: () => void | Promise<void>) {
  return async () => {
    setMultiplexActive(true);
    try {
      await fn();
    } finally {
      setMultiplexActive(false);
    }
  };
}

Deno.test(
  "getSecret() reads the process environment when no scope is installed",
  withProcessVar("from-process", () => {
    assert.equal(isMultiplexActive(), false);
    assert.equal(getSecret(PROCESS_VAR), "from-process");
    assert.equal(getSecret("HERMES_TEST_UNSET_VAR"), undefined);
    assert.equal(getSecret("HERMES_TEST_UNSET_VAR", "dflt"), "dflt");
  }),
);

Deno.test(
  "getSecret() prefers the scope and falls through to the process when not multiplexing",
  withProcessVar("from-process", () => {
    withSecretScope({ [PROCESS_VAR]: "from-scope", EMPTY: "" }, () => {
      assert.equal(getSecret(PROCESS_VAR), "from-scope");
      assert.equal(getSecret("EMPTY", "dflt"), "");
    });
    withSecretScope({ OTHER: "x" }, () => {
      assert.equal(getSecret(PROCESS_VAR), "from-process");
    });
  }),
);

Deno.test(
  "getSecret() never falls back to the process for a scoped miss while multiplexing",
  withProcessVar(
    "leaked",
    multiplexing(() => {
      withSecretScope({ OTHER: "x" }, () => {
        assert.equal(getSecret(PROCESS_VAR), undefined);
        assert.equal(getSecret(PROCESS_VAR, "dflt"), "dflt");
      });
    }),
  ),
);

Deno.test(
  "getSecret() fails closed outside a scope while multiplexing",
  withProcessVar(
    "leaked",
    multiplexing(() => {
      assert.throws(
        () => getSecret(PROCESS_VAR),
        (error: unknown) =>
          error instanceof UnscopedSecretError &&
          error.secretName === PROCESS_VAR &&
          error.message.includes(PROCESS_VAR) &&
          !error.message.includes("leaked"),
      );
    }),
  ),
);

Deno.test(
  "getSecret() always reads global variables from the process",
  multiplexing(() => {
    const path = readProcessEnv("PATH");
    assert.equal(getSecret("PATH"), path);
    withSecretScope({ PATH: "/scoped/bin", HERMES_HOME: "/elsewhere" }, () => {
      assert.equal(getSecret("PATH"), path);
      assert.equal(getSecret("HERMES_HOME"), readProcessEnv("HERMES_HOME"));
    });
  }),
);

Deno.test("isGlobalEnvVar() covers the listed names and prefixes", () => {
  for (
    const name of [
      "HERMES_HOME",
      "HERMES_PROFILE",
      "HOME",
      "PWD",
      "SHELL",
      "HERMES_MAX_ITERATIONS",
      "API_SERVER_PORT",
      "GATEWAY_RELAY_URL",
      "GATEWAY_RELAY_ROUTE_KEYS",
    ]
  ) {
    assert.equal(isGlobalEnvVar(name), true, name);
  }
  for (
    const name of ["HERMES_KANBAN_DIR", "HERMES_TELEGRAM_X", "TERMINAL_CWD"]
  ) {
    assert.equal(isGlobalEnvVar(name), true, name);
  }
  // Relay credentials and the API server's key stay profile-scoped.
  for (
    const name of [
      "HONCHO_API_KEY",
      "OPENAI_API_KEY",
      "HERMES_X",
      "API_SERVER_KEY",
      "GATEWAY_RELAY_SECRET",
      "GATEWAY_RELAY_ID",
    ]
  ) {
    assert.equal(isGlobalEnvVar(name), false, name);
  }
});

Deno.test("withSecretScope() freezes a copy and follows awaits and timers", async () => {
  const mapping = { KEY: "a" };
  await withSecretScope(mapping, async () => {
    mapping.KEY = "changed";
    assert.equal(getSecret("KEY"), "a");
    assert.throws(() => {
      (currentSecretScope() as Record<string, string>).KEY = "x";
    }, TypeError);
    await new Promise((r) => setTimeout(r, 1));
    assert.equal(getSecret("KEY"), "a");
    const inTimer = await new Promise<string | undefined>((r) =>
      setTimeout(() => r(getSecret("KEY")), 0)
    );
    assert.equal(inTimer, "a");
  });
  assert.equal(currentSecretScope(), undefined);
});

Deno.test("withSecretScope() keeps concurrent scopes apart", async () => {
  const seen = await Promise.all(
    ["a", "b", "c"].map((who) =>
      withSecretScope({ KEY: who }, async () => {
        const values: (string | undefined)[] = [];
        for (let i = 0; i < 5; i++) {
          await new Promise((r) => setTimeout(r, 0));
          values.push(getSecret("KEY"));
        }
        return values;
      })
    ),
  );
  assert.deepEqual(seen, [
    ["a", "a", "a", "a", "a"],
    ["b", "b", "b", "b", "b"],
    ["c", "c", "c", "c", "c"],
  ]);
});

Deno.test("buildProfileSecretScope() reads the profile's .env without global variables", async () => {
  const home = await Deno.makeTempDir();
  const before = readProcessEnv("HONCHO_API_KEY");
  try {
    assert.deepEqual(await buildProfileSecretScope(home), {});
    await Deno.writeTextFile(
      join(home, ".env"),
      "HONCHO_API_KEY=hk\nHERMES_HOME=/x\nTERMINAL_CWD=/y\nPATH=/bin\n",
    );
    assert.deepEqual(await buildProfileSecretScope(home), {
      HONCHO_API_KEY: "hk",
    });
    const fromContext = await withHermesHome(
      home,
      () => buildProfileSecretScope(),
    );
    assert.deepEqual(fromContext, { HONCHO_API_KEY: "hk" });
    assert.equal(readProcessEnv("HONCHO_API_KEY"), before);
  } finally {
    await Deno.remove(home, { recursive: true });
  }
});

Deno.test("getSecret() strips non-ASCII characters from credentials, as Hermes sweeps os.environ", async () => {
  const name = "HERMES_FIDELITY_TEST_API_KEY";
  Deno.env.set(name, "hk\u200b123");
  try {
    assert.equal(getSecret(name), "hk123");
    Deno.env.set("HERMES_FIDELITY_TEST_CITY", "café");
    assert.equal(getSecret("HERMES_FIDELITY_TEST_CITY"), "café");
  } finally {
    Deno.env.delete(name);
    Deno.env.delete("HERMES_FIDELITY_TEST_CITY");
  }
  const home = await Deno.makeTempDir();
  try {
    await Deno.writeTextFile(
      join(home, ".env"),
      'HONCHO_API_KEY=hk\u200b456\nGREETING="hi\\nthere"\nREF=${GREETING}!\n',
    );
    assert.deepEqual(await buildProfileSecretScope(home), {
      HONCHO_API_KEY: "hk456",
      GREETING: "hi\nthere",
      REF: "hi\nthere!",
    });
  } finally {
    await Deno.remove(home, { recursive: true });
  }
});
