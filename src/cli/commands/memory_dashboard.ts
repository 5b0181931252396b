// `hermes memory dashboard [--port N]`: a local web page for the profile's
// memory on 127.0.0.1 only. Every request must present the URL's per-run
// token; Host and Origin are checked (no DNS rebinding, no cross-site
// request); changes are JSON POSTs; every response has secrets masked.

import { Buffer } from "node:buffer";
import type { CliIo } from "../cli_io.ts";
import type { HermesCommand } from "../hermes_command.ts";
import { ioAction } from "../format.ts";
import { dashboardPage } from "../dashboard_page.ts";
import {
  dashboardBuiltin,
  dashboardBuiltinSave,
  dashboardHealth,
  dashboardProviders,
  DashboardProviderView,
  dashboardSchema,
  dashboardSetup,
} from "../dashboard_api.ts";
import {
  applyEntryChange,
  type EntryChange,
  EntryNumberError,
} from "../builtin_entries.ts";
import { profileSecretMasker } from "../surface_secrets.ts";
import { getHermesHome } from "../../profile/hermes_home.ts";
import { isRecord } from "../../_util/is_record.ts";
import { errorText } from "../../_util/error_text.ts";

const TOKEN_HEADER = "X-Hermes-Token";

const MAX_BODY_BYTES = 64 * 1024;

class HttpError extends Error {
  constructor(readonly status: number, message: string) {
    super(message);
  }
}

function json(text: string, status = 200): Response {
  return new Response(text, {
    status,
    headers: {
      "content-type": "application/json; charset=utf-8",
      "cache-control": "no-store",
      "x-content-type-options": "nosniff",
    },
  });
}

function randomToken(bytes: number): string {
  return Buffer.from(crypto.getRandomValues(new Uint8Array(bytes))).toString(
    "base64url",
  );
}

function sameText(a: string, b: string): boolean {
  // Constant-time for equal lengths: the token is not learnt byte by byte.
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= a.charCodeAt(i) ^ b.charCodeAt(i);
  return diff === 0;
}

/** Serves until Ctrl-C. */
async function serveDashboard(
  io: CliIo,
  options: { port?: number },
): Promise<number> {
  const token = randomToken(24);
  const home = getHermesHome();
  const mask = profileSecretMasker(home);
  const view = new DashboardProviderView({
    ...io,
    stdout: (text) => io.stderr(text),
  });
  let busy: Promise<unknown> = Promise.resolve();
  // One change at a time: setup and the memory tool take their locks, but
  // the page's own sequence (save, then test) should not interleave.
  const serial = <T>(fn: () => Promise<T>): Promise<T> => {
    const next = busy.then(fn, fn);
    busy = next.catch(() => {});
    return next;
  };

  const ready = Promise.withResolvers<Deno.NetAddr>();
  const server = Deno.serve({
    hostname: "127.0.0.1",
    port: options.port ?? 0,
    onListen: (addr) => ready.resolve(addr as Deno.NetAddr),
    onError: (error) => {
      io.stderr(`dashboard: ${errorText(error)}\n`);
      return json(JSON.stringify({ error: "internal error" }), 500);
    },
  }, async (request) => {
    try {
      return await handle(request);
    } catch (error) {
      if (error instanceof HttpError) {
        return json(JSON.stringify({ error: error.message }), error.status);
      }
      io.stderr(`dashboard: ${errorText(error)}\n`);
      const masked = (await mask)(errorText(error));
      return json(JSON.stringify({ error: masked }), 500);
    }
  });
  const addr = await ready.promise;
  const origin = `http://127.0.0.1:${addr.port}`;
  const hosts = new Set([`127.0.0.1:${addr.port}`, `localhost:${addr.port}`]);
  const origins = new Set([...hosts].map((h) => `http://${h}`));

  async function reply(value: unknown, status = 200): Promise<Response> {
    // Every response passes the secret masker, whatever produced it.
    return json((await mask)(JSON.stringify(value)), status);
  }

  function check(request: Request, url: URL): void {
    const host = request.headers.get("host") ?? "";
    if (!hosts.has(host.toLowerCase())) {
      throw new HttpError(
        421,
        "wrong Host: the dashboard answers only to 127.0.0.1",
      );
    }
    const from = request.headers.get("origin");
    if (from !== null && !origins.has(from)) {
      throw new HttpError(403, "cross-origin request refused");
    }
    const site = request.headers.get("sec-fetch-site");
    if (site === "cross-site" || site === "same-site") {
      throw new HttpError(403, "cross-site request refused");
    }
    const given = request.headers.get(TOKEN_HEADER) ??
      (url.pathname === "/" ? url.searchParams.get("token") : null) ?? "";
    if (!sameText(given, token)) {
      throw new HttpError(
        403,
        "missing or wrong token: open the URL 'hermes memory dashboard' printed",
      );
    }
    if (request.method === "POST") {
      if (from === null && site !== "same-origin" && site !== null) {
        throw new HttpError(403, "cross-site request refused");
      }
      const type = request.headers.get("content-type") ?? "";
      if (!type.startsWith("application/json")) {
        throw new HttpError(415, "changes are JSON POSTs");
      }
    } else if (request.method !== "GET") {
      throw new HttpError(405, `method ${request.method} not allowed`);
    }
  }

  async function body(request: Request): Promise<Record<string, unknown>> {
    const text = await request.text();
    if (text.length > MAX_BODY_BYTES) {
      throw new HttpError(413, "request too large");
    }
    try {
      const value = JSON.parse(text) as unknown;
      if (isRecord(value)) return value;
    } catch {
      // Reported below.
    }
    throw new HttpError(400, "the body must be a JSON object");
  }

  async function handle(request: Request): Promise<Response> {
    const url = new URL(request.url);
    // Browsers ask for it without the token: no icon, and no 403 logged.
    if (url.pathname === "/favicon.ico") {
      return new Response(null, { status: 204 });
    }
    check(request, url);
    const path = url.pathname;
    if (request.method === "GET" && path === "/") {
      const nonce = randomToken(16);
      return new Response(dashboardPage(nonce), {
        headers: {
          "content-type": "text/html; charset=utf-8",
          "cache-control": "no-store",
          "x-content-type-options": "nosniff",
          "x-frame-options": "DENY",
          "referrer-policy": "no-referrer",
          "content-security-policy":
            `default-src 'none'; script-src 'nonce-${nonce}'; style-src 'nonce-${nonce}'; ` +
            "connect-src 'self'; img-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
        },
      });
    }
    if (request.method === "GET" && path === "/api/providers") {
      return await reply({
        hermesHome: home,
        ...await dashboardProviders(io),
      });
    }
    const schema = /^\/api\/providers\/([^/]+)\/(schema|setup)$/.exec(path);
    if (schema !== null) {
      const name = decodeURIComponent(schema[1] as string);
      if (schema[2] === "schema" && request.method === "GET") {
        return await reply(await dashboardSchema(name, io));
      }
      if (schema[2] === "setup" && request.method === "POST") {
        const { values, request: shown, approve } = await body(request);
        if (
          !isRecord(values) ||
          Object.values(values).some((v) => typeof v !== "string")
        ) {
          throw new HttpError(400, "values must map setting keys to text");
        }
        if ((shown ?? null) !== null && typeof shown !== "string") {
          throw new HttpError(
            400,
            "request must be the digest of the request shown, or null",
          );
        }
        const result = await serial(() =>
          dashboardSetup(name, values as Record<string, string>, {
            shown: (shown as string | undefined) ?? null,
            approve: approve === true,
          }, io)
        );
        if ("refused" in result) return await reply(result, 409);
        await view.reset();
        // The masker learns a secret just saved to .env.
        const fresh = await profileSecretMasker(home);
        return json(fresh(JSON.stringify(result)));
      }
    }
    if (request.method === "GET" && path === "/api/health") {
      return await reply(await dashboardHealth(io));
    }
    if (path === "/api/entries") {
      if (request.method === "GET") {
        return await reply(await dashboardBuiltin());
      }
      const change = entryChange(await body(request));
      try {
        const outcome = await serial(() =>
          applyEntryChange(change, { tool: { approve: () => true } })
        );
        return await reply(outcome, outcome.ok ? 200 : 422);
      } catch (error) {
        if (error instanceof EntryNumberError) {
          throw new HttpError(400, error.message);
        }
        throw error;
      }
    }
    if (request.method === "POST" && path === "/api/builtin") {
      const result = await serial(async () =>
        dashboardBuiltinSave(await body(request))
      );
      return await reply(result, "error" in result ? 422 : 200);
    }
    if (request.method === "GET" && path === "/api/honcho/card") {
      return await reply(await view.call("honcho_profile", {}));
    }
    if (request.method === "GET" && path === "/api/honcho/representation") {
      return await reply(await view.call("honcho_context", {}));
    }
    if (request.method === "GET" && path === "/api/honcho/search") {
      const query = url.searchParams.get("q") ?? "";
      if (query.trim() === "") throw new HttpError(400, "q is required");
      return await reply(await view.call("honcho_search", { query }));
    }
    throw new HttpError(404, "not found");
  }

  io.stdout(
    `Hermes memory dashboard: ${origin}/?token=${token}\n` +
      "Open the URL in a browser on this machine; the token in it is this run's only key. Ctrl-C stops it.\n",
  );
  const stop = () => {
    server.shutdown().then(() => view.reset()).catch(() => {});
  };
  const signals: Deno.Signal[] = Deno.build.os === "windows"
    ? ["SIGINT"]
    : ["SIGINT", "SIGTERM"];
  for (const signal of signals) Deno.addSignalListener(signal, stop);
  await server.finished;
  for (const signal of signals) Deno.removeSignalListener(signal, stop);
  return 0;
}

function entryChange(value: Record<string, unknown>): EntryChange {
  const { action, target, number, content } = value;
  if (target !== "memory" && target !== "user") {
    throw new HttpError(400, "target must be 'memory' or 'user'");
  }
  if (action === "add" && typeof content === "string") {
    return { action, target, content };
  }
  if (typeof number !== "number" || !Number.isInteger(number)) {
    throw new HttpError(400, "number must be an entry number");
  }
  if (action === "replace" && typeof content === "string") {
    return { action, target, number, content };
  }
  if (action === "remove") return { action, target, number };
  throw new HttpError(
    400,
    "action must be add (content), replace (number, content) or remove (number)",
  );
}

export function registerMemoryDashboard(memory: HermesCommand): HermesCommand {
  const command = memory.command("dashboard")
    .summary("Open a local web page to configure and inspect memory")
    .description(
      "Serve a web page on 127.0.0.1 for the active profile: providers and their\n" +
        "readiness, each provider's settings and permission request (saved and approved\n" +
        "through 'hermes memory setup'), doctor's findings, the built-in entries and\n" +
        "settings, and, for Honcho, the peer card, representation and search. Prints a\n" +
        "URL with a per-run token; Ctrl-C stops it.",
    )
    .option(
      "--port <port>",
      "Port on 127.0.0.1 (default: any free port)",
      (raw: string) => {
        const port = Number(raw);
        if (!/^[0-9]+$/.test(raw) || port > 65535) {
          command.error(
            `error: --port must be a port number (0-65535), not '${raw}'`,
          );
        }
        return port;
      },
    )
    .example("hermes memory dashboard")
    .example("hermes memory dashboard --port 8765");
  // Exits 1 when the port is taken.
  return ioAction(
    command,
    (io, opts: { port?: number }) =>
      serveDashboard(io, opts).catch((error) => {
        if (!(error instanceof Deno.errors.AddrInUse)) throw error;
        io.stderr(
          `error: port ${opts.port} is already in use on 127.0.0.1; pick another with --port, or leave --port out for any free port\n`,
        );
        return 1;
      }),
  );
}
