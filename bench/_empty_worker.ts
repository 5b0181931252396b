// The floor of a worker load (bench/startup_bench.ts): a module that only
// answers each message with itself.
/// <reference no-default-lib="true" />
/// <reference lib="deno.worker" />
self.onmessage = (event: MessageEvent): void => self.postMessage(event.data);
