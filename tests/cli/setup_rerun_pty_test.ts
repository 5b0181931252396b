// Re-running `hermes memory setup` in a real terminal (the `hermes` task
// line, through the launcher) after a provider was set up: the active
// provider is preselected (Enter keeps it, never "Built-in only"), a
// provider that cannot load right now is still listed with the reason, the
// Honcho wizard ends with a connection test and the keys it changed.
import assert from "node:assert/strict";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { KEYS, type PtySession, spawnPty } from "../helpers/pty.ts";
import { DENO_DIR } from "../helpers/run_command.ts";
import { hermesTaskLine } from "../helpers/hermes_cli_child.ts";
import { getConfigValue, loadConfig } from "../../src/config/config.ts";
import { startHonchoTestServer } from "../honcho_server.ts";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));

async function withUser<T>(fn: (home: string, root: string) => Promise<T>) {
  const home = await Deno.realPath(
    await Deno.makeTempDir({ prefix: "hermes-rerun-" }),
  );
  const root = join(home, ".hermes");
  await Deno.mkdir(root, { recursive: true });
  try {
    return await fn(home, root);
  } finally {
    await Deno.remove(home, { recursive: true });
  }
}

async function setupInTerminal(home: string): Promise<PtySession> {
  const words = (await hermesTaskLine()).split(/\s+/);
  const args = words.slice(words.indexOf("deno") + 1);
  return spawnPty([Deno.execPath(), ...args, "memory", "setup"], {
    cwd: ROOT,
    env: {
      HOME: home,
      PATH: "/usr/bin:/bin",
      TERM: "xterm-256color",
      DENO_DIR,
    },
  });
}

/** The picker's highlighted line (`❯ …`) once it has rendered. */
async function highlighted(term: PtySession): Promise<string> {
  await term.expect("Select a memory provider", 30_000);
  const line = await term.expect(/\u276f [^\n]*/, 30_000);
  return line.slice(line.lastIndexOf("\u276f"));
}

Deno.test("memory setup re-run in a terminal: the configured Honcho is preselected, Enter keeps every setting, the summary says what changed", async () => {
  await using server = await startHonchoTestServer();
  await withUser(async (home, root) => {
    const host = new URL(server.url).host;
    await Deno.writeTextFile(
      join(root, "config.yaml"),
      `memory:\n  provider: honcho\n  permissions:\n    honcho:\n      net:\n        - ${host}\n`,
    );
    await Deno.writeTextFile(
      join(root, "honcho.json"),
      `${
        JSON.stringify({
          baseUrl: server.url,
          hosts: { hermes: { peerName: "alice", workspace: "notes" } },
        })
      }\n`,
      { mode: 0o600 },
    );
    await using term = await setupInTerminal(home);
    assert.equal(
      await highlighted(term),
      "\u276f honcho  (API key / local, active)",
      term.text,
    );
    assert.match(
      term.text,
      /Current memory provider: honcho \(preselected; Enter keeps it\)/,
    );
    await term.send(KEYS.enter);
    // Enter at every question keeps the current value.
    await term.expect("Where is your Honcho server?");
    for (let i = 0; i < 20; i++) {
      await term.send(KEYS.enter);
      try {
        await term.expect("Save these settings?", 1_500);
        break;
      } catch {
        // Another question: keep its default.
      }
    }
    await term.send(KEYS.enter);
    await term.expect("Changes:", 30_000);
    assert.equal(await term.exit(30_000), 0, term.text);
    const text = term.text;
    assert.match(text, new RegExp(`Connection OK: ${server.url}`));
    assert.match(
      text,
      /^ {2}config\.yaml: memory\.provider honcho → honcho \(unchanged\)$/m,
    );
    // The existing identity was kept: no change listed for it.
    assert.doesNotMatch(text, /hosts\.hermes\.(peerName|workspace) /);
    assert.doesNotMatch(text, /honcho\.json: baseUrl /);
    const saved = JSON.parse(
      await Deno.readTextFile(join(root, "honcho.json")),
    );
    assert.equal(saved.baseUrl, server.url);
    assert.equal(saved.hosts.hermes.peerName, "alice");
    assert.equal(saved.hosts.hermes.workspace, "notes");
    assert.equal(
      getConfigValue(await loadConfig({ hermesHome: root }), "memory.provider"),
      "honcho",
    );
  });
});

const BROKEN_MOD = `
import { MemoryProvider } from "@hermes/memory";
throw new Error("flaky backend library is missing");
export class Flaky extends MemoryProvider {}
`;

Deno.test("memory setup in a terminal: an active provider that cannot load is listed with the reason and preselected; Enter keeps it", async () => {
  await withUser(async (home, root) => {
    const dir = join(root, "plugins", "flaky");
    await Deno.mkdir(dir, { recursive: true });
    await Deno.writeTextFile(join(dir, "mod.ts"), BROKEN_MOD);
    await Deno.writeTextFile(
      join(dir, "plugin.yaml"),
      "name: flaky\ndescription: A provider that fails to load.\n",
    );
    await Deno.writeTextFile(
      join(root, "config.yaml"),
      "memory:\n  provider: flaky\n",
    );
    await using term = await setupInTerminal(home);
    const line = await highlighted(term);
    assert.match(
      line,
      /^\u276f flaky {2}\(cannot load right now, active: .*flaky backend library is missing/,
      term.text,
    );
    await term.send(KEYS.enter);
    await term.expect("memory.provider stays 'flaky'", 30_000);
    assert.equal(await term.exit(30_000), 1, term.text);
    assert.equal(
      getConfigValue(await loadConfig({ hermesHome: root }), "memory.provider"),
      "flaky",
    );
  });
});
