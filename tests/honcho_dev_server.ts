/**
 * The Honcho test server (`tests/honcho_server.ts`) as a standalone
 * program, for provider authors who want a Honcho on their own machine:
 * `deno task honcho-dev-server [--api-key KEY] [--latency MS] [--fault
 * JSON]…`. It listens on 127.0.0.1 (a free port), prints its URL and runs
 * until Ctrl-C or SIGTERM. See tests/HONCHO_TEST_SERVER.md.
 *
 * @module
 */

import { parseArgs } from "node:util";
import { type HonchoFault, startHonchoTestServer } from "./honcho_server.ts";

const USAGE = `Usage: deno task honcho-dev-server [options]

Runs the in-memory Honcho v3 test server on 127.0.0.1 (a free port) and
prints its URL; Ctrl-C stops it. Nothing is stored on disk.

Options:
  --api-key KEY     Require "Authorization: Bearer KEY" (default: auth off)
  --latency MS      Delay every request by MS milliseconds
  --fault JSON      Queue a fault, e.g. '{"route":"*","status":503,"times":2}'
                    (keys: route (default "*"), status, retryAfter, latencyMs,
                    malformed, drop, dropAfterHandling, answerAfterMs, detail,
                    times); repeatable
  --openapi PATH    The OpenAPI document to validate against
                    (default: tests/fixtures/honcho/openapi.json)
  -h, --help        Show this help
`;

function fail(message: string): never {
  console.error(`error: ${message}\nhint: deno task honcho-dev-server --help`);
  Deno.exit(2);
}

if (import.meta.main) {
  let values;
  try {
    ({ values } = parseArgs({
      args: Deno.args,
      options: {
        "api-key": { type: "string" },
        latency: { type: "string" },
        fault: { type: "string", multiple: true },
        openapi: { type: "string" },
        help: { type: "boolean", short: "h" },
      },
    }));
  } catch (error) {
    fail(error instanceof Error ? error.message : String(error));
  }
  if (values.help) {
    console.log(USAGE);
    Deno.exit(0);
  }
  const latencyMs = values.latency === undefined ? 0 : Number(values.latency);
  if (!Number.isFinite(latencyMs) || latencyMs < 0) {
    fail(`--latency must be a number of milliseconds, not '${values.latency}'`);
  }
  const faults: [string, HonchoFault][] = [];
  for (const text of values.fault ?? []) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      fail(`--fault must be a JSON object, not '${text}'`);
    }
    if (
      parsed === null || typeof parsed !== "object" || Array.isArray(parsed)
    ) {
      fail(`--fault must be a JSON object, not '${text}'`);
    }
    const { route = "*", ...fault } = parsed as Record<string, unknown>;
    faults.push([String(route), fault as HonchoFault]);
  }
  const server = await startHonchoTestServer({
    apiKey: values["api-key"],
    latencyMs,
    ...(values.openapi ? { openapiPath: values.openapi } : {}),
  });
  for (const [route, fault] of faults) {
    try {
      server.inject(route, fault);
    } catch (error) {
      await server.close();
      fail(error instanceof Error ? error.message : String(error));
    }
  }
  const stop = async (): Promise<void> => {
    await server.close();
    Deno.exit(0);
  };
  Deno.addSignalListener("SIGINT", stop);
  if (Deno.build.os !== "windows") Deno.addSignalListener("SIGTERM", stop);
  console.log(server.url);
  console.error(
    `Honcho test server listening on ${server.url} (auth ${
      values["api-key"] ? "on" : "off"
    }, latency ${latencyMs} ms, ${faults.length} fault(s) queued); Ctrl-C stops it`,
  );
}
