// One fresh process of bench/manager_bench.ts's "fresh process" group:
//
//   deno run bench/_manager_child.ts <direct|manager> <turns>
//
// Imports the workload (timed: the framework's module evaluation), sets up
// the provider (and the manager), then times each of the first <turns>
// turns with varied text on their own, then the wait until the manager's
// background work is done. Prints one JSON line:
// {mode, importMs, setupMs, turnMs: [...], flushMs}.
const [mode = "manager", turnsArg = "20"] = Deno.args;
if (mode !== "direct" && mode !== "manager") {
  throw new Error(`mode must be direct or manager, not ${mode}`);
}
const turns = Number(turnsArg);

let started = performance.now();
const workload = await import("./_manager_workload.ts");
const importMs = performance.now() - started;

started = performance.now();
const provider = new workload.InProcessProvider("inproc");
const manager = mode === "manager" ? await workload.benchManager() : undefined;
const setupMs = performance.now() - started;

const turnMs: number[] = [];
for (let turn = 1; turn <= turns; turn++) {
  started = performance.now();
  if (manager) await workload.managerTurn(manager, turn, workload.variedTurn);
  else workload.directTurn(provider, turn, workload.variedTurn);
  turnMs.push(performance.now() - started);
}
started = performance.now();
if (manager) {
  await manager.flushPending();
  await manager.shutdownAll();
}
const flushMs = performance.now() - started;
console.log(JSON.stringify({ mode, importMs, setupMs, turnMs, flushMs }));
