// `hermes memory dashboard` in a real browser, as a user sees it at 1200 px:
// a provider's request is on the page before Save with an unchecked
// approval, and only the ticked box approves it; after a save against a
// dead Honcho server the page says saved and, apart, that the connection
// failed; readiness says what is true; the Honcho panel gives the cause and
// the fix, and renders the representation's markdown as escaped elements;
// the favicon draws no 403. HERMES_SCREENSHOTS=1 saves
// docs/images/dashboard-approval.png.
import assert from "node:assert/strict";
import { join } from "node:path";
import type { Page } from "npm:puppeteer-core@25.16.0";
import { launchBrowser } from "../helpers/browser.ts";
import { startHonchoTestServer } from "../honcho_server.ts";
import {
  ASKER_MOD,
  askerManifest,
  startDashboard,
} from "../helpers/dashboard_child.ts";

// In the page: the table re-renders after every load, so a handle may go stale.
const click = (page: Page, selector: string) =>
  page.$eval(selector, (e) => (e as unknown as { click(): void }).click());

// Every Configure button inside its panel and the 1200 px window.
async function buttonsInside(page: Page): Promise<void> {
  const edges = await page.$$eval(
    "tr[data-provider] button",
    (bs) =>
      bs.map((b) => [
        b.getBoundingClientRect().right,
        b.closest("section")!.getBoundingClientRect().right,
      ]),
  );
  assert.ok(edges.length >= 3);
  for (const [button, panel] of edges) {
    assert.ok(button! <= Math.min(panel!, 1200), `${button} > ${panel}`);
  }
}

async function shot(page: Page, name: string): Promise<void> {
  if (Deno.env.get("HERMES_SCREENSHOTS") !== "1") return;
  const images = new URL("../../docs/images/", import.meta.url);
  await page.screenshot({
    path: join(images.pathname, `dashboard-${name}.png`),
    fullPage: true,
  });
}

const text = (page: Page, selector: string) =>
  page.$eval(selector, (e) => e.textContent ?? "");

Deno.test({
  name:
    "memory dashboard page: the request shown before Save with approval unticked, saved and connection apart, true readiness, cause and fix, markdown as elements, no favicon 403",
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    const userHome = await Deno.realPath(
      await Deno.makeTempDir({ prefix: "hermes-dash-ui-" }),
    );
    const root = join(userHome, ".hermes");
    await Deno.mkdir(join(root, "plugins", "asker"), { recursive: true });
    await Deno.writeTextFile(
      join(root, "plugins", "asker", "plugin.yaml"),
      askerManifest(),
    );
    await Deno.writeTextFile(
      join(root, "plugins", "asker", "mod.ts"),
      ASKER_MOD,
    );
    const probe = Deno.listen({ hostname: "127.0.0.1", port: 0 });
    const dead = `http://127.0.0.1:${(probe.addr as Deno.NetAddr).port}`;
    probe.close();
    const config = () => Deno.readTextFile(join(root, "config.yaml"));
    try {
      await using dash = await startDashboard(userHome);
      await using browser = await launchBrowser();
      const page = await browser.newPage();
      await page.setViewport({ width: 1200, height: 900 });
      const refused: string[] = [];
      page.on("response", (r) => {
        if (r.status() >= 400) refused.push(`${r.status()} ${r.url()}`);
      });
      await page.goto(dash.url);
      await page.waitForSelector('tr[data-provider="asker"]');
      await page.waitForFunction(
        `!document.querySelector("#health").textContent.includes("Running")`,
        { timeout: 60_000 },
      );
      await buttonsInside(page);

      // The request, before Save; unticked saves without approving.
      await click(page, 'tr[data-provider="asker"] button');
      await page.waitForSelector("#request");
      assert.ok(
        (await text(page, "#request")).includes(
          `read ${join(userHome, "Documents")}: indexes your documents`,
        ),
      );
      assert.match(await text(page, "#request"), /OPENAI_API_KEY/);
      assert.match(
        await text(page, "#request"),
        /Never granted \(the floor\): \S*\.ssh: it is \S*\.ssh, SSH keys/,
      );
      await shot(page, "approval");
      assert.equal(
        await page.$eval(
          "#approve-request",
          (e) => (e as unknown as { checked: boolean }).checked,
        ),
        false,
      );
      await click(page, '#config button[type="submit"]');
      await page.waitForSelector("#setup-outcome");
      assert.equal(await text(page, "#setup-outcome"), "Saved.");
      assert.doesNotMatch(await config(), /Documents|OPENAI_API_KEY|\.ssh/);
      // Ticked: exactly what was shown is approved.
      await click(page, 'tr[data-provider="asker"] button');
      await page.waitForSelector("#approve-request");
      await click(page, "#approve-request");
      await click(page, '#config button[type="submit"]');
      await page.waitForSelector("#setup-outcome");
      assert.match(await config(), /Documents/);
      assert.match(await config(), /OPENAI_API_KEY/);

      // A dead Honcho server: saved, and the connection failed, apart.
      await click(page, 'tr[data-provider="honcho"] button');
      await page.waitForSelector('#config input[name="baseUrl"]');
      // A field at its provider default shows it as a placeholder.
      for (const name of ["workspace", "aiPeer"]) {
        assert.equal(
          await page.$eval(
            `#config input[name="${name}"]`,
            (e) => e.getAttribute("placeholder"),
          ),
          "hermes",
        );
      }
      await page.type('#config input[name="baseUrl"]', dead);
      await page.type('#config input[name="peerName"]', "alice");
      await click(page, '#config button[type="submit"]');
      await page.waitForSelector("#connection-result", { timeout: 60_000 });
      assert.equal(await text(page, "#setup-outcome"), "Saved.");
      assert.match(
        await text(page, "#connection-result"),
        /^Connection test failed: .*unreachable/,
      );
      assert.equal(
        JSON.parse(await Deno.readTextFile(join(root, "honcho.json")))
          .baseUrl,
        dead,
      );
      await page.reload();
      await page.waitForSelector('tr[data-provider="honcho"] .badge.active');
      const row = await text(page, 'tr[data-provider="honcho"]');
      assert.match(row, /ready/);
      assert.match(row, /\u2713 honcho\.json/);
      assert.ok(
        await page.$(
          `tr[data-provider="honcho"] [title="${join(root, "honcho.json")}"]`,
        ),
      );
      assert.doesNotMatch(row, /\u2717/);
      await buttonsInside(page);
      await page.waitForFunction(
        `!document.querySelector("#peer-card").textContent.includes("Loading")`,
        { timeout: 60_000 },
      );
      const card = await text(page, "#peer-card");
      assert.match(card, new RegExp(`Cause: ${dead} is unreachable`));
      assert.match(card, /Fix: .*baseUrl/);
      await page.waitForFunction(
        `!document.querySelector("#health").textContent.includes("Running")`,
        { timeout: 60_000 },
      );
      const findings = await page.$$eval(
        "#health .finding",
        (fs) => fs.map((f) => f.textContent ?? ""),
      );
      assert.equal(
        findings.filter((f) => f.includes(dead)).length,
        1,
        findings.join("\n"),
      );

      // A live server: the representation's markdown as elements, escaped.
      await using server = await startHonchoTestServer();
      for (const observer of ["alice", "hermes"]) {
        server.state.peerCards.push({
          workspace_id: "hermes",
          observer_id: observer,
          observed_id: "alice",
          peer_card: ["Name: Alice", '<img src=x id="planted">'],
        });
      }
      const r = await dash.api("POST", "/api/providers/honcho/setup", {
        values: { baseUrl: server.url },
        request: null,
      });
      assert.equal(r.status, 200, JSON.stringify(r.body));
      await page.reload();
      await page.waitForSelector("#ai-rep h4", { timeout: 60_000 });
      assert.ok(
        (await page.$$eval("#ai-rep h4", (hs) => hs.map((h) => h.textContent)))
          .includes("Card"),
      );
      assert.doesNotMatch(await text(page, "#ai-rep"), /##/);
      assert.match(await text(page, "#ai-rep"), /<img src=x id="planted">/);
      assert.equal(await page.$("#planted"), null);

      // The built-in settings and built-in only, from the page.
      await page.$eval(
        '#builtin-settings input[name="memory_char_limit"]',
        (e) => ((e as unknown as { value: string }).value = "3000"),
      );
      await click(page, '#builtin-settings input[name="write_approval"]');
      await click(page, '#builtin-settings button[type="submit"]');
      await page.waitForSelector("#builtin-result .result");
      assert.match(
        await text(page, "#builtin-result"),
        /^Changes:\n {2}config\.yaml: memory\.memory_char_limit set to 3000\n {2}config\.yaml: memory\.write_approval set to true$/,
      );
      assert.match(await config(), /memory_char_limit: 3000/);
      assert.match(await config(), /write_approval: true/);
      await page.waitForFunction(
        `document.querySelector('[data-file="memory"]').textContent.includes("3,000")`,
      );
      await click(page, "#use-builtin");
      await page.waitForFunction(
        `document.querySelector("#providers").textContent.includes("Active: built-in memory only")`,
        { timeout: 60_000 },
      );
      assert.match(await config(), /provider: ['"]{2}/);
      assert.deepEqual(refused, []);
    } finally {
      await Deno.remove(userHome, { recursive: true }).catch(() => {});
    }
  },
});
