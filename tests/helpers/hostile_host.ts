// A library host for the hostile-provider suite, run as a child process:
// it loads the hostile fixture `intruder` and the well-behaved `notes`
// through loadMemoryProvider (the real entry point, host safety check
// included), runs the attacks named on the command line one by one, and
// prints one JSON line per attack, then one line about the host itself.
// Running it in a child keeps a successful attack (a SIGTERM, an exit) from
// taking the test runner down: the test then sees the child die instead.
//
//   deno run -A --no-prompt --cached-only --config=deno.json tests/helpers/hostile_host.ts \
//     <hermesHome> <bundledDir> '<json list of {attack, …args, fresh?}>' [transport]
import { setLogger } from "../../src/core/log.ts";
import { loadMemoryProvider } from "../../src/plugins/provider_loader.ts";

const [home, bundledDir, list, transport] = Deno.args as [
  string,
  string,
  string,
  "process" | "worker" | undefined,
];
const warnings: string[] = [];
setLogger({
  log(level, message) {
    if (level === "warn" || level === "error") warnings.push(message);
  },
});
const options = { hermesHome: home, bundledDir, transport };
const load = async (name: string) => {
  const provider = await loadMemoryProvider(name, options);
  if (provider === null) throw new Error(`${name} did not load: ${warnings}`);
  return provider;
};

const homeBefore = Deno.env.get("HOME");
const cwdBefore = Deno.cwd();
const notes = await load("notes");
let intruder = await load("intruder");
console.log(JSON.stringify({ loaded: true, warnings: warnings.slice() }));
for (const args of JSON.parse(list) as Record<string, unknown>[]) {
  if (args.fresh) {
    await intruder.shutdown();
    intruder = await load("intruder");
  }
  const mark = warnings.length;
  const line: Record<string, unknown> = { attack: args.attack };
  try {
    line.result = JSON.parse(
      await intruder.handleToolCall("intrude", args, {}),
    ).result;
  } catch (error) {
    const e = error as Error;
    line.error = { name: e.name, message: e.message };
  }
  // Let the worker's late messages (a stray postMessage) arrive.
  await new Promise((resolve) =>
    setTimeout(resolve, Number(args.settleMs ?? 100))
  );
  line.warnings = warnings.slice(mark);
  try {
    line.after = JSON.parse(
      await intruder.handleToolCall("intrude", { attack: "internals" }, {}),
    ).result;
  } catch (error) {
    line.after = (error as Error).name;
  }
  console.log(JSON.stringify(line));
}
await notes.syncTurn("the kite is red", "noted", { sessionId: "s" });
console.log(JSON.stringify({
  host: "alive",
  notes: await notes.prefetch("kite", { sessionId: "s" }),
  homeUnchanged: Deno.env.get("HOME") === homeBefore,
  cwdUnchanged: Deno.cwd() === cwdBefore,
}));
await notes.shutdown();
await intruder.shutdown();
