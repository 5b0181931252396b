// Prints the proportional set size (PSS, kB) of each pid named on the
// command line, from /proc/<pid>/smaps_rollup, as one JSON object. Run with
// -A by bench/sandbox_transport_bench.ts (Deno guards /proc otherwise).
const out: Record<string, number> = {};
for (const pid of Deno.args) {
  const text = await Deno.readTextFile(`/proc/${pid}/smaps_rollup`);
  const match = /^Pss:\s+(\d+) kB/m.exec(text);
  out[pid] = match ? Number(match[1]) : NaN;
}
console.log(JSON.stringify(out));
