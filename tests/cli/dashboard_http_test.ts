// `hermes memory dashboard` at the HTTP level, as the page talks to it: a
// provider's request is shown before Save and approved only as shown; a
// save against a dead Honcho server reports what was saved and the failed
// connection apart; the status panel lists a failure once; the Honcho panel
// names the cause; built-in only and the built-in settings go through the
// setup and config code; the favicon is no 403.
import assert from "node:assert/strict";
import { join } from "node:path";
import {
  ASKER_MOD,
  askerManifest,
  type Dashboard,
  startDashboard,
} from "../helpers/dashboard_child.ts";

async function userHome(): Promise<{ userHome: string; root: string }> {
  const userHome = await Deno.realPath(
    await Deno.makeTempDir({ prefix: "hermes-dash-http-" }),
  );
  const root = join(userHome, ".hermes");
  await Deno.mkdir(join(root, "plugins", "asker"), { recursive: true });
  await Deno.writeTextFile(
    join(root, "plugins", "asker", "plugin.yaml"),
    askerManifest("api.asker.example"),
  );
  await Deno.writeTextFile(join(root, "plugins", "asker", "mod.ts"), ASKER_MOD);
  return { userHome, root };
}

const config = (root: string) =>
  Deno.readTextFile(join(root, "config.yaml")).catch(() => "");

function setup(dash: Dashboard, name: string, body: Record<string, unknown>) {
  return dash.api("POST", `/api/providers/${name}/setup`, body);
}

Deno.test({
  name:
    "memory dashboard: a provider's request is shown before Save, nothing approves implicitly, and only the request shown can be approved",
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    const { userHome: home, root } = await userHome();
    try {
      await using dash = await startDashboard(home);
      const schema = await dash.api("GET", "/api/providers/asker/schema");
      assert.equal(schema.status, 200);
      const request = schema.body.request as { text: string; digest: string };
      assert.ok(request, JSON.stringify(schema.body));
      // The same screen as 'hermes memory setup asker'.
      assert.ok(
        request.text.includes(
          `asks for:\n  - read ${
            join(home, "Documents")
          }: indexes your documents\n`,
        ),
        request.text,
      );
      assert.match(
        request.text,
        /read the environment variable OPENAI_API_KEY/,
      );
      // What the floor refuses is named, never offered.
      const refused = (schema.body.request as { refused: string[] }).refused;
      assert.equal(refused.length, 1, refused.join("\n"));
      assert.match(
        refused[0]!,
        /\.ssh.*SSH keys; a memory provider is never granted it/,
      );
      assert.doesNotMatch(request.text, /\.ssh/);
      assert.match(request.text, /connect to api\.asker\.example/);

      // The old page's call (no request named): refused, nothing written.
      let r = await setup(dash, "asker", { values: { region: "us" } });
      assert.equal(r.status, 409, JSON.stringify(r.body));
      assert.equal(
        r.body.refused,
        "Not saved: memory provider 'asker' asks for permissions this page did not show you; reload the page, review them and save again.\n" +
          request.text,
      );
      assert.equal(await config(root), "");

      // Shown but not approved (the default): saved, runs without it.
      r = await setup(dash, "asker", {
        values: { region: "us" },
        request: request.digest,
        approve: false,
      });
      assert.equal(r.status, 200, JSON.stringify(r.body));
      assert.equal(r.body.saved, true);
      assert.match(
        String(r.body.messages),
        /Not approved: 'asker' runs without it/,
      );
      let text = await config(root);
      assert.match(text, /provider: asker/);
      assert.doesNotMatch(text, /Documents|OPENAI_API_KEY|asker\.example/);

      // The manifest asks for more after the page showed it: refused.
      await Deno.writeTextFile(
        join(root, "plugins", "asker", "plugin.yaml"),
        askerManifest("api.asker.example, evil.example"),
      );
      r = await setup(dash, "asker", {
        values: {},
        request: request.digest,
        approve: true,
      });
      assert.equal(r.status, 409, JSON.stringify(r.body));
      assert.match(String(r.body.refused), /connect to evil\.example/);
      assert.doesNotMatch(await config(root), /Documents|evil\.example/);

      // Approved as shown: exactly that is recorded.
      const again = (await dash.api("GET", "/api/providers/asker/schema"))
        .body.request as { text: string; digest: string };
      assert.notEqual(again.digest, request.digest);
      r = await setup(dash, "asker", {
        values: {},
        request: again.digest,
        approve: true,
      });
      assert.equal(r.status, 200, JSON.stringify(r.body));
      text = await config(root);
      assert.match(text, /Documents/);
      assert.match(text, /OPENAI_API_KEY/);
      assert.match(text, /evil\.example/);
      assert.doesNotMatch(text, /\.ssh/);
      // Nothing left to approve: the form shows no request.
      const after = await dash.api("GET", "/api/providers/asker/schema");
      assert.equal(after.body.request, null);
    } finally {
      await Deno.remove(home, { recursive: true }).catch(() => {});
    }
  },
});

Deno.test({
  name:
    "memory dashboard: a dead Honcho server — saved and the connection reported apart, one finding, the cause and fix on the Honcho panel; built-in settings and built-in only; no favicon 403",
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    const { userHome: home, root } = await userHome();
    // A port nothing listens on.
    const probe = Deno.listen({ hostname: "127.0.0.1", port: 0 });
    const dead = `http://127.0.0.1:${(probe.addr as Deno.NetAddr).port}`;
    probe.close();
    try {
      await using dash = await startDashboard(home);
      const fav = await fetch(`${dash.origin}/favicon.ico`);
      await fav.body?.cancel();
      assert.equal(fav.status, 204);

      const r = await setup(dash, "honcho", {
        values: { baseUrl: dead, peerName: "alice" },
        request: null,
      });
      assert.equal(r.status, 200, JSON.stringify(r.body));
      // honcho.json was written: saved, although setup exits 1 on the test.
      const honcho = JSON.parse(
        await Deno.readTextFile(join(root, "honcho.json")),
      );
      assert.equal(honcho.baseUrl, dead);
      assert.equal(r.body.saved, true);
      const connection = r.body.connection as { ok: boolean; error: string };
      assert.equal(connection.ok, false);
      assert.match(connection.error, /unreachable/);

      // One failure, listed once, its URL once.
      const health = await dash.api("GET", "/api/health");
      const findings = health.body.findings as {
        where: string;
        message: string;
        problem: boolean;
      }[];
      const about = findings.filter((f) =>
        `${f.where} ${f.message}`.includes(dead)
      );
      assert.equal(about.length, 1, JSON.stringify(findings));
      assert.equal(
        `${about[0]!.where} ${about[0]!.message}`.split(dead).length - 1,
        1,
        JSON.stringify(about),
      );

      // Ready because of honcho.json, said as such (no unset alternatives).
      const providers = await dash.api("GET", "/api/providers");
      const row = (providers.body.providers as Record<string, unknown>[])
        .find((p) => p.name === "honcho")!;
      assert.equal(row.ready, true);
      assert.equal(row.file, join(root, "honcho.json"));

      // The Honcho panel names the cause and the fix.
      const card = await dash.api("GET", "/api/honcho/card");
      assert.ok(card.body.error, JSON.stringify(card.body));
      assert.match(
        String(card.body.cause),
        new RegExp(`${dead} is unreachable`),
      );
      assert.match(String(card.body.fix), /baseUrl/);

      // The built-in settings, written to config.yaml and read back.
      let b = await dash.api("POST", "/api/builtin", {
        memory_char_limit: 3000,
        write_approval: true,
        user_profile_enabled: false,
      });
      assert.equal(b.status, 200, JSON.stringify(b.body));
      assert.match(
        String(b.body.summary),
        /memory\.memory_char_limit set to 3000/,
      );
      let text = await config(root);
      assert.match(text, /memory_char_limit: 3000/);
      assert.match(text, /write_approval: true/);
      assert.match(text, /user_profile_enabled: false/);
      const entries = await dash.api("GET", "/api/entries");
      assert.deepEqual(entries.body.settings, {
        memory_enabled: true,
        user_profile_enabled: false,
        memory_char_limit: 3000,
        user_char_limit: 1375,
        write_approval: true,
      });
      const files = entries.body.files as { limit: number; enabled: boolean }[];
      assert.equal(files[0]!.limit, 3000);
      assert.equal(files[1]!.enabled, false);
      b = await dash.api("POST", "/api/builtin", { user_char_limit: "many" });
      assert.equal(b.status, 422);
      assert.match(
        String(b.body.error),
        /memory\.user_char_limit must be a whole number/,
      );
      b = await dash.api("POST", "/api/builtin", { provider: "asker" });
      assert.equal(b.status, 422);

      // Back to built-in only, as 'hermes memory setup builtin' does.
      const off = await setup(dash, "builtin", { values: {}, request: null });
      assert.equal(off.status, 200, JSON.stringify(off.body));
      text = await config(root);
      assert.match(text, /provider: ['"]{2}/);
      assert.match(text, /memory_char_limit: 3000/);
      assert.equal((await dash.api("GET", "/api/providers")).body.active, null);
    } finally {
      await Deno.remove(home, { recursive: true }).catch(() => {});
    }
  },
});
