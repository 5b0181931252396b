// A home the real Hermes Agent 0.19.0 wrote with `hermes honcho setup` for a
// self-hosted server (tests/fixtures/hermes_vectors/selfhosted_home.json,
// recorded from the package) works here with no setup step: run as users
// run it (through the launcher), against the Honcho test server, doctor
// finds nothing to fix, status reaches the server, and shows the server as
// granted because the user's own honcho.json names it.
import assert from "node:assert/strict";
import { join } from "node:path";
import { startHonchoTestServer } from "../honcho_server.ts";
import { runHermesCli } from "../helpers/hermes_cli_child.ts";
import { decodeBytes, type EncodedBytes, loadFixture } from "./_vectors.ts";

interface Case {
  base_url: string;
  files: Record<string, EncodedBytes>;
}

Deno.test("a home Hermes 0.19.0 set up for a self-hosted Honcho connects with no setup step; status and doctor say the user's settings grant it", async () => {
  await using server = await startHonchoTestServer();
  const fixture = await loadFixture<Case>("selfhosted_home.json");
  const recorded = fixture.cases[0]!;
  const home = await Deno.realPath(
    await Deno.makeTempDir({ prefix: "hermes-made-home-" }),
  );
  const root = join(home, ".hermes");
  try {
    await Deno.mkdir(root, { recursive: true });
    for (const [name, data] of Object.entries(recorded.files)) {
      const text = new TextDecoder().decode(decodeBytes(data)!);
      await Deno.writeTextFile(
        join(root, name),
        text.replaceAll(recorded.base_url, server.url),
        { mode: 0o600 },
      );
    }
    const host = new URL(server.url).host;
    const doctor = await runHermesCli(["memory", "doctor", "--json"], {
      userHome: home,
    });
    const report = JSON.parse(doctor.stdout);
    assert.deepEqual(
      report.problems.filter((p: { check: string }) => p.check === "grant.net"),
      [],
      doctor.stdout,
    );
    assert.deepEqual(report.grant.fromSettings, [host]);
    const status = await runHermesCli(["memory", "status", "--json"], {
      userHome: home,
    });
    assert.equal(status.code, 0, status.stderr);
    const provider = JSON.parse(status.stdout).provider;
    assert.equal(provider.connection.ok, true, status.stdout);
    assert.ok(provider.sandbox.net.includes(host), status.stdout);
    assert.deepEqual(provider.sandbox.netFromSettings, [host]);
    const text = await runHermesCli(["memory", "status", "--no-probe"], {
      userHome: home,
    });
    assert.match(
      text.stdout,
      new RegExp(`${host} \\(your settings name it\\)`),
    );
  } finally {
    await Deno.remove(home, { recursive: true }).catch(() => {});
  }
});
