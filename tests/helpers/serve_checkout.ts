// Serves the checkout over http://127.0.0.1:<ephemeral port>, as JSR would
// serve the published package (JSR itself is unreachable from these
// machines): every file of the repository by its path, TypeScript with a
// TypeScript content type, nothing outside the repository. Plus the import
// map a user's project needs to import the framework from that URL (over
// plain HTTP a module carries no deno.json, so the user's map also names
// the package's own npm dependencies, which JSR resolves by itself).
import { extname, join, normalize, sep } from "node:path";
import { REPO } from "./plugin_fixtures.ts";

/** A running file server for the checkout. */
export interface ServedCheckout extends AsyncDisposable {
  /** `http://127.0.0.1:<port>` (no trailing slash). */
  url: string;
  /** `127.0.0.1:<port>`, for `--allow-import` and grants. */
  host: string;
  /** How many requests were served, by path. */
  requests: Map<string, number>;
  /**
   * A user's `deno.json` for importing the framework from the server.
   *
   * @returns The config object.
   */
  projectConfig(): Promise<Record<string, unknown>>;
}

const TYPES: Record<string, string> = {
  ".ts": "application/typescript; charset=utf-8",
  ".js": "application/javascript; charset=utf-8",
  ".json": "application/json; charset=utf-8",
  ".yaml": "text/yaml; charset=utf-8",
  ".md": "text/markdown; charset=utf-8",
};

/** Starts the server. */
export function serveCheckout(): ServedCheckout {
  const requests = new Map<string, number>();
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen() {} },
    async (request) => {
      const path = decodeURIComponent(new URL(request.url).pathname);
      requests.set(path, (requests.get(path) ?? 0) + 1);
      const file = normalize(join(REPO, path));
      if (file !== REPO && !file.startsWith(REPO + sep)) {
        return new Response("outside the checkout", { status: 403 });
      }
      try {
        const body = await Deno.readFile(file);
        return new Response(body, {
          headers: {
            "content-type": TYPES[extname(file)] ?? "application/octet-stream",
          },
        });
      } catch {
        return new Response("not found", { status: 404 });
      }
    },
  );
  const host = `127.0.0.1:${server.addr.port}`;
  const url = `http://${host}`;
  return {
    url,
    host,
    requests,
    async projectConfig() {
      const own = JSON.parse(
        await Deno.readTextFile(join(REPO, "deno.json")),
      ) as { imports: Record<string, string>; exports: Record<string, string> };
      const imports: Record<string, string> = {};
      for (const [name, target] of Object.entries(own.imports)) {
        imports[name] = target.startsWith("./")
          ? `${url}/${target.slice(2)}`
          : target;
      }
      for (const [entry, target] of Object.entries(own.exports)) {
        imports[`@hermes/memory${entry.slice(1)}`] = `${url}/${
          target.slice(2)
        }`;
      }
      return {
        imports,
        nodeModulesDir: "none",
        unstable: ["worker-options"],
      };
    },
    async [Symbol.asyncDispose]() {
      await server.shutdown();
    },
  };
}
