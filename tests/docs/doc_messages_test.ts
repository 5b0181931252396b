// The sessions that docs/cli.md and docs/troubleshooting.md show are real:
// every `console` block with output is run (after `<!-- scenario: NAME -->`
// prepares its home) and its lines must appear, in order, in what `hermes`
// prints, so a changed message fails here until the page is updated. The
// temporary home is shown as /home/me and every 127.0.0.1 server as
// 127.0.0.1:8000 (a dead one) or 127.0.0.1:9000 (the Honcho test server).
import assert from "node:assert/strict";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { commandBlocks } from "../helpers/readme_blocks.ts";
import { runHermesCli } from "../helpers/hermes_cli_child.ts";
import { startHonchoTestServer } from "../honcho_server.ts";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const KEY = "hch-doc-key-7731";

/** A home the scenario prepared: `root` is `$HOME/.hermes`. */
interface Prepared {
  home: string;
  root: string;
  live: string;
  dead: string;
}

const write = (path: string, text: string, mode = 0o600) =>
  Deno.writeTextFile(path, text, { mode });

const honchoHome = (p: Prepared, url: string, yaml?: string) =>
  Promise.all([
    write(
      join(p.root, "honcho.json"),
      JSON.stringify({
        apiKey: KEY,
        hosts: { hermes: { baseUrl: url, peerName: "alice" } },
      }),
    ),
    write(
      join(p.root, "config.yaml"),
      yaml ??
        `memory:\n  provider: honcho\n  permissions:\n    honcho:\n      net: [${
          new URL(url).host
        }]\n`,
    ),
  ]);

/** How each named scenario prepares its home. */
const SCENARIOS: Record<string, (p: Prepared) => Promise<unknown>> = {
  "fresh-home": async () => {},
  "doctor-three-problems": async (p) => {
    await write(join(p.root, "config.yaml"), "memory:\n  provider: honcho\n");
    await write(
      join(p.root, ".env"),
      `HONCHO_API_KEY=${KEY}\nHONCHO_BASE_URL=${p.dead}\n`,
      0o644,
    );
    await Deno.chmod(join(p.root, ".env"), 0o644);
    await write(
      join(p.root, "honcho.json"),
      '{\n  "peerName": "alice",\n  "workspace": "notes",\n}\n',
    );
  },
  // The address comes from .env only: not the user's consent to reach it.
  "honcho-no-net-grant": async (p) => {
    await write(
      join(p.root, "honcho.json"),
      JSON.stringify({ apiKey: KEY, hosts: { hermes: { peerName: "alice" } } }),
    );
    await write(join(p.root, ".env"), `HONCHO_BASE_URL=${p.live}\n`);
    await write(join(p.root, "config.yaml"), "memory:\n  provider: honcho\n");
  },
  "honcho-dead-server": (p) => honchoHome(p, p.dead),
  "honcho-broken-json": async (p) => {
    await honchoHome(p, p.live);
    await write(join(p.root, "honcho.json"), `{"apiKey": "${KEY}",\n`);
  },
  "broken-config-yaml": (p) =>
    write(
      join(p.root, "config.yaml"),
      "memory:\n  provider: honcho\n  permissions: [a,\n b]\n",
    ),
  "provider-misspelled": async (p) => {
    await honchoHome(p, p.live);
    await write(join(p.root, "config.yaml"), "memory:\n  provider: honchoo\n");
  },
  "provider-off": async (p) => {
    await honchoHome(p, p.live);
    await write(join(p.root, "config.yaml"), 'memory:\n  provider: ""\n');
  },
};

/** Splits a command line into words (single and double quotes). */
function words(line: string): string[] {
  return [...line.matchAll(/"([^"]*)"|'([^']*)'|(\S+)/g)].map((m) =>
    m[1] ?? m[2] ?? m[3]!
  );
}

function deadUrl(): string {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (listener.addr as Deno.NetAddr).port;
  listener.close();
  return `http://127.0.0.1:${port}`;
}

for (const page of ["docs/cli.md", "docs/troubleshooting.md"]) {
  Deno.test(`the sessions ${page} shows are what hermes prints`, async (t) => {
    const text = await Deno.readTextFile(join(ROOT, page));
    const lines = text.split("\n");
    await using server = await startHonchoTestServer();
    for (const block of commandBlocks(text)) {
      if (block.lang !== "console" || block.expected.length === 0) continue;
      // The comment is the nearest line above the block that is not blank.
      let above = block.line - 2;
      while (above > 0 && lines[above]!.trim() === "") above--;
      const marker = /^<!-- scenario: (\S+) -->$/.exec(lines[above] ?? "");
      const name = marker?.[1];
      await t.step(`${page}:${block.line} (${name})`, async () => {
        assert.ok(
          name && SCENARIOS[name],
          `${page}:${block.line}: a session with output needs '<!-- scenario: NAME -->' (one of ${
            Object.keys(SCENARIOS).join(", ")
          }) on the line before it`,
        );
        const home = await Deno.realPath(
          await Deno.makeTempDir({ prefix: "hermes-doc-" }),
        );
        try {
          const p = {
            home,
            root: join(home, ".hermes"),
            live: server.url,
            dead: deadUrl(),
          };
          await Deno.mkdir(p.root, { recursive: true });
          await SCENARIOS[name!]!(p);
          const shown = (out: string) =>
            out.replaceAll(home, "/home/me")
              .replaceAll(p.dead.slice(7), "127.0.0.1:8000")
              .replaceAll(p.live.slice(7), "127.0.0.1:9000");
          let output = "";
          const streams = { out: [] as string[], err: [] as string[] };
          let code = 0;
          for (const line of block.script.split("\n")) {
            const cmd = words(line.replace(/\s+#.*$/, ""));
            if (cmd.join(" ") === "echo $?") {
              streams.out.push(String(code));
              continue;
            }
            const at = cmd.indexOf("hermes");
            assert.ok(at >= 0, `${page}:${block.line}: not a hermes command`);
            const args = cmd.slice(at + 1).map((w) =>
              w.replaceAll("127.0.0.1:8000", p.dead.slice(7))
                .replaceAll("127.0.0.1:9000", p.live.slice(7))
            );
            const run = await runHermesCli(args, { userHome: home });
            code = run.code;
            output += shown(run.stdout + run.stderr);
            streams.out.push(...shown(run.stdout).split("\n"));
            streams.err.push(...shown(run.stderr).split("\n"));
          }
          // In order within stdout and within stderr (a page interleaves them).
          const from = { out: 0, err: 0 };
          for (const want of block.expected) {
            const where = (["out", "err"] as const).find((s) =>
              streams[s].indexOf(want, from[s]) >= 0
            );
            assert.ok(
              where,
              `${page}:${block.line}: this line is not printed (in this order):\n${want}\n--- hermes printed ---\n${output}`,
            );
            from[where] = streams[where].indexOf(want, from[where]) + 1;
          }
        } finally {
          await Deno.remove(home, { recursive: true });
        }
      });
    }
  });
}
