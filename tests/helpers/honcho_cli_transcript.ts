// Prints real `hermes honcho …` sessions as Markdown, for
// the "hermes honcho" section of plugins/memory/honcho/README.md: each command runs as a real process (the
// same flags as tests/honcho/cli_process_test.ts) against the Honcho test
// server; temporary paths and the server's port are replaced by stable
// ones (/home/me, and port 18000: same width, so tables stay aligned).
//
//   deno run -A tests/helpers/honcho_cli_transcript.ts > /tmp/transcript.md
import { join } from "node:path";
import { startHonchoTestServer } from "../honcho_server.ts";
import {
  addProfile,
  hermes,
  hermesPty,
  type TestUser,
  testUser,
  writeJson,
} from "./honcho_cli.ts";
import { KEYS } from "./pty.ts";

await using server = await startHonchoTestServer();
await using user = await testUser();
const port = new URL(server.url).port;
const stablePort = "18000".slice(0, port.length).padStart(port.length, "1");

function scrub(text: string, who: TestUser = user): string {
  return text.replaceAll(who.home, "/home/me")
    .replaceAll(`:${port}`, `:${stablePort}`);
}

async function show(
  who: TestUser,
  args: string[],
  options: {
    stdin?: string;
    stdinShown?: string;
    env?: Record<string, string>;
  } = {},
): Promise<void> {
  const result = await hermes(who, args, options);
  const prefix = options.stdinShown ? `${options.stdinShown} | ` : "";
  console.log("```console");
  const line = args.map((a) => /^[\w@%+=:,./-]+$/.test(a) ? a : `'${a}'`)
    .join(" ");
  console.log(scrub(`$ ${prefix}hermes ${line}`, who));
  const out = scrub(result.out + result.err, who).trimEnd();
  if (out) console.log(out);
  if (result.code !== 0) console.log(`(exit code ${result.code})`);
  console.log("```\n");
}

async function post(
  path: string,
  body: unknown,
  method = "POST",
): Promise<void> {
  const res = await fetch(`${server.url}${path}`, {
    method,
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  await res.body?.cancel();
}

/**
 * The settled screen of an inquirer session: the last redraw of each input
 * line, and no open-question screens (only the answered `✔` lines).
 */
function settle(text: string): string {
  const out: string[] = [];
  let pending: string[] = [];
  for (const raw of text.split("\n")) {
    const line = raw.replace(/^↑↓ navigate • ⏎ select/, "");
    const done = line.lastIndexOf("✔");
    if (done >= 0) {
      pending = [];
      out.push(line.slice(done));
    } else if (line.startsWith("? ")) {
      pending = [line];
    } else if (pending.length > 0 && !/^(About to save|Saved )/.test(line)) {
      pending.push(line);
    } else {
      if (pending.length > 0 && line !== "") out.push(...pending);
      pending = [];
      out.push(line);
    }
  }
  return out.join("\n").replace(/\n{3,}/g, "\n\n");
}

console.log("### Interactive setup (pseudo-terminal)\n");
{
  await using term = await hermesPty(user, ["honcho", "setup"], {
    env: { USER: "alice" },
  });
  const steps: [string, string][] = [
    ["Where is your Honcho server?", KEYS.down + KEYS.enter],
    ["Base URL of your Honcho server", `${server.url}${KEYS.enter}`],
    ["API key for this server", KEYS.enter],
    ["(alice)", KEYS.enter],
    ["The assistant's peer", KEYS.enter],
    ["Workspace", KEYS.enter],
    ["Observation", KEYS.enter],
    ["When are turns written", KEYS.enter],
    ["Recall mode", KEYS.enter],
    ["Context budget", `1200${KEYS.enter}`],
    ["Dialectic cadence", KEYS.enter],
    ["Dialectic reasoning level", KEYS.enter],
    ["Session strategy", KEYS.down + KEYS.enter],
    ["Save these settings?", `y${KEYS.enter}`],
  ];
  for (const [prompt, keys] of steps) {
    await term.expect(prompt);
    await term.send(keys);
  }
  await term.expect("Start a new session");
  await term.exit();
  console.log("```console\n$ hermes honcho setup");
  console.log(scrub(settle(term.text)).trimEnd());
  console.log("```\n");
}

// Give Honcho something to show.
await post("/v3/workspaces/hermes/peers/hermes/card?target=alice", {
  peer_card: ["Alice is a backend developer", "Alice prefers short answers"],
}, "PUT");
await post("/v3/workspaces/hermes/conclusions", {
  conclusions: [{
    observer_id: "hermes",
    observed_id: "hermes",
    content: "The assistant explains trade-offs before recommending a tool",
  }],
});

console.log("### Non-interactive setup (key from a pipe)\n");
{
  await using other = await testUser();
  await show(other, [
    "honcho",
    "setup",
    "--yes",
    "--deployment",
    "local",
    "--base-url",
    server.url,
    "--api-key-stdin",
    "--peer-name",
    "alice",
    "--recall-mode",
    "tools",
  ], { stdin: "my-local-jwt-0042\n", stdinShown: 'printf %s "$HONCHO_JWT"' });
}

console.log("### status\n");
await show(user, ["honcho", "status"]);
await show(user, ["honcho", "status", "--json"]);
await addProfile(user, "coder");
await show(user, ["honcho", "status", "--all"]);

console.log("### Server down\n");
{
  await using down = await testUser();
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const deadPort = (listener.addr as Deno.NetAddr).port;
  listener.close();
  await writeJson(join(down.root, "honcho.json"), {
    baseUrl: `http://127.0.0.1:${deadPort}`,
    hosts: { hermes: { peerName: "alice" } },
  });
  const result = await hermes(down, ["honcho", "status"]);
  const tail = result.out.slice(result.out.indexOf("Connection"));
  console.log("```console\n$ hermes honcho status\n…");
  console.log(
    tail.replaceAll(down.home, "/home/me").replaceAll(`:${deadPort}`, ":18001")
      .trimEnd(),
  );
  console.log("```\n");
}

console.log("### Settings commands\n");
await show(user, ["honcho", "mode"]);
await show(user, ["honcho", "mode", "context"]);
await show(user, ["honcho", "mode", "fast"]);
await show(user, ["honcho", "strategy"]);
await show(user, ["honcho", "strategy", "per-repo"]);
await show(user, ["honcho", "peer"]);
await show(user, ["honcho", "peer", "--reasoning", "medium"]);
await show(user, ["honcho", "peer", "--reasoning", "huge"]);
await show(user, ["honcho", "tokens"]);
await show(user, [
  "honcho",
  "tokens",
  "--context",
  "2000",
  "--dialectic",
  "800",
]);

console.log("### sessions and map\n");
await show(user, ["honcho", "sessions"]);
await show(user, ["honcho", "map", "My Project!"]);
await show(user, ["honcho", "sessions"]);

console.log("### --target-profile, sync, peers, enable, disable\n");
await addProfile(user, "writer");
await show(user, ["honcho", "sync"]);
await show(user, ["honcho", "--target-profile", "coder", "mode", "tools"]);
await show(user, ["honcho", "peers"]);
await show(user, ["honcho", "peers", "map", "--set", "telegram:42=alice"]);
await show(user, ["honcho", "--target-profile", "writer", "disable"]);
await show(user, ["honcho", "--target-profile", "writer", "enable"]);

console.log("### identity\n");
await Deno.writeTextFile(
  join(user.cwd, "SOUL.md"),
  "Calm, precise, curious.\n",
);
await show(user, ["honcho", "identity", "SOUL.md"]);
await show(user, ["honcho", "identity", "SOUL.md"]);
await show(user, ["honcho", "identity", "--show"]);

console.log("### migrate\n");
const openclaw = join(user.home, ".openclaw");
await Deno.mkdir(openclaw, { recursive: true });
await Deno.writeTextFile(
  join(openclaw, "USER.md"),
  "Alice, Lyon, vegetarian.\n",
);
await Deno.writeTextFile(join(openclaw, "MEMORY.md"), "Ships on Fridays.\n");
await Deno.writeTextFile(join(openclaw, "IDENTITY.md"), "Name: Hermes.\n");
await show(user, ["honcho", "migrate", "--yes"]);
await show(user, ["honcho", "migrate", "--yes", "--skip-identity"]);

console.log("### Broken and read-only honcho.json\n");
{
  await using broken = await testUser();
  await Deno.writeTextFile(
    join(broken.root, "honcho.json"),
    '{"hosts": {"hermes": {"recallMode": "tools",}}}\n',
  );
  const result = await hermes(broken, ["honcho", "mode", "hybrid"]);
  console.log("```console\n$ hermes honcho mode hybrid");
  console.log(result.err.replaceAll(broken.home, "/home/me").trimEnd());
  console.log(`(exit code ${result.code})\n\`\`\`\n`);
  await writeJson(join(broken.root, "honcho.json"), { hosts: {} });
  await Deno.chmod(join(broken.root, "honcho.json"), 0o444);
  const ro = await hermes(broken, ["honcho", "mode", "hybrid"]);
  console.log("```console\n$ hermes honcho mode hybrid");
  console.log(ro.err.replaceAll(broken.home, "/home/me").trimEnd());
  console.log(`(exit code ${ro.code})\n\`\`\`\n`);
}
