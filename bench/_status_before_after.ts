// `hermes memory status` start-up of two checkouts side by side, each run
// against a bare `deno run` of an empty file sampled just before it:
//
//   ./tools/deno run --allow-read --allow-write --allow-env --allow-run bench/_status_before_after.ts 30 <before-checkout> <after-checkout>
//
// On a built-in-only home and on a Honcho user's home (`honchoUserHome()`, a
// `baseUrl`, no `--probe`), through each checkout's launcher with the flags
// of this checkout's `hermes` task, from the checkout's own directory, launch
// records cached first, in random order within each round. Prints the
// floor's median and, per case, the median time and the median of the paired
// ratios.
// A script (the leading `_` keeps `deno bench` from running it): it compares
// two trees, which one bench file cannot.
import { join } from "node:path";
import { childEnv, median } from "./_harness.ts";
import { hermesTaskLine, honchoUserHome } from "./_hermes_cli.ts";

const [roundsArg, before, after] = Deno.args;
if (!roundsArg || !before || !after) {
  console.error("usage: _status_before_after.ts ROUNDS BEFORE_DIR AFTER_DIR");
  Deno.exit(2);
}
const rounds = Number(roundsArg);
const empty = await Deno.makeTempFile({ suffix: ".ts" });
await using honcho = await honchoUserHome({
  prefix: "hermes_status_compare_",
  baseUrl: "http://127.0.0.1:9",
  net: ["127.0.0.1:9"],
});
const builtin = await Deno.realPath(
  await Deno.makeTempDir({ prefix: "hermes_status_builtin_" }),
);
await Deno.mkdir(join(builtin, ".hermes"));

async function timed(args: string[], cwd: string, home: string) {
  const started = performance.now();
  const out = await new Deno.Command(Deno.execPath(), {
    args,
    cwd,
    env: { ...childEnv(home), HERMES_HOME: join(home, ".hermes") },
    clearEnv: true,
    stdout: "null",
    stderr: "piped",
  }).output();
  const ms = performance.now() - started;
  if (!out.success) throw new Error(new TextDecoder().decode(out.stderr));
  return ms;
}

// The `hermes` task line (this checkout's), with each checkout's launcher.
const task = hermesTaskLine().split(" ").slice(1);
const status = (dir: string) => [
  ...task.map((w) => w === "src/launcher/main.ts" ? join(dir, w) : w),
  "memory",
  "status",
];
const cases = [
  ["built-in only, before", before, builtin],
  ["built-in only, after", after, builtin],
  ["Honcho, before", before, honcho.home],
  ["Honcho, after", after, honcho.home],
] as const;
for (const [, dir, home] of cases) await timed(status(dir), dir, home);
const floors: number[] = [];
const results = new Map<string, { ms: number[]; ratios: number[] }>();
for (let round = 0; round < rounds; round++) {
  for (const [label, dir, home] of [...cases].sort(() => Math.random() - 0.5)) {
    const floor = await timed(["run", empty], builtin, builtin);
    const ms = await timed(status(dir), dir, home);
    floors.push(floor);
    const result = results.get(label) ?? { ms: [], ratios: [] };
    result.ms.push(ms);
    result.ratios.push(ms / floor);
    results.set(label, result);
  }
}
console.log(
  `bare deno run: ${median(floors).toFixed(1)} ms (${floors.length} samples)`,
);
for (const [label, { ms, ratios }] of results) {
  console.log(
    `${label}: ${median(ms).toFixed(1)} ms, ${median(ratios).toFixed(2)}×`,
  );
}
await Deno.remove(builtin, { recursive: true });
await Deno.remove(empty);
