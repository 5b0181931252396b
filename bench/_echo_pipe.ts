// The floor of a process transport turn (bench/sandbox_transport_bench.ts):
// a `deno run` child that echoes each line of its stdin.
const decoder = new TextDecoder();
const encoder = new TextEncoder();
let buffer = "";
for await (const chunk of Deno.stdin.readable) {
  buffer += decoder.decode(chunk, { stream: true });
  let newline: number;
  while ((newline = buffer.indexOf("\n")) >= 0) {
    Deno.stdout.writeSync(encoder.encode(buffer.slice(0, newline + 1)));
    buffer = buffer.slice(newline + 1);
  }
}
