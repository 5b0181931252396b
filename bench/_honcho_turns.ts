// Shared by the benches that time Honcho turns until they are durable
// (import_durable_bench.ts, durable_turn_bench.ts): one local Honcho test
// server for the whole bench file, a logger that keeps only errors, and the
// turn texts both use.
import { setLogger } from "@hermes/memory";
import {
  type HonchoTestServer,
  startHonchoTestServer,
} from "../tests/honcho_server.ts";

setLogger({
  log: (level, message) => {
    if (level === "error") console.error(message);
  },
});

/** The bench file's Honcho test server, closed when the process ends. */
export const server: HonchoTestServer = await startHonchoTestServer();
globalThis.addEventListener("unload", () => {
  void server.close();
});

/** The user's and the assistant's text of turn `turn`. */
export function turnText(turn: number): [string, string] {
  return [
    `Question ${turn}: what did we decide about the Oslo trip, day ${turn}?`,
    `Answer ${turn}: we keep the hiking plan and book the hut for day ${turn}.`,
  ];
}
