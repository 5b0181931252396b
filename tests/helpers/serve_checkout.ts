// Serves the framework over http://127.0.0.1:<ephemeral port> the two ways
// a user imports it from the network (JSR itself is unreachable from these
// machines):
// - serveCheckout(): every file of the repository by its path, as any
//   static host serves a module by URL;
// - serveJsrRegistry(): a JSR registry (Deno honours JSR_URL) holding
//   exactly the files `deno publish` would upload, with the package's
//   meta.json and <version>_meta.json (checksums and exports).
// Nothing outside the repository is served, and no import map is offered:
// the published graph resolves without one.
import { extname, join, normalize, sep } from "node:path";
import { REPO } from "./plugin_fixtures.ts";
import { runDeno } from "./deno_child.ts";

/** A running file server. */
export interface ServedFiles extends AsyncDisposable {
  /** `http://127.0.0.1:<port>/<prefix>` (no trailing slash). */
  url: string;
  /** `127.0.0.1:<port>`, for `--allow-import` and grants. */
  host: string;
  /** How many requests were served, by path. */
  requests: Map<string, number>;
}

/** The checkout served by path. */
export type ServedCheckout = ServedFiles;

/** A local JSR registry holding the package as `deno publish` uploads it. */
export interface JsrRegistry extends ServedFiles {
  /** The value for `JSR_URL` (with a trailing slash). */
  jsrUrl: string;
  /** The published files, relative to the repository (`mod.ts`, …). */
  files: string[];
  /** `/@scope/name/<version>/`: where the package's files are served. */
  packagePath: string;
}

const TYPES: Record<string, string> = {
  ".ts": "application/typescript; charset=utf-8",
  ".js": "application/javascript; charset=utf-8",
  ".json": "application/json; charset=utf-8",
  ".yaml": "text/yaml; charset=utf-8",
  ".md": "text/markdown; charset=utf-8",
};

/**
 * Serves what `route(path)` gives: a JSON value, a repository file, or
 * nothing (404).
 */
function serveFiles(
  route: (path: string) => { json: unknown } | { file: string } | undefined,
): ServedFiles {
  const requests = new Map<string, number>();
  // Deno caches remote modules by URL, and an ephemeral port comes back:
  // a prefix of its own keeps a later server from being answered from an
  // earlier one's cached files.
  const prefix = `/${crypto.randomUUID().slice(0, 8)}`;
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen() {} },
    async (request) => {
      const full = decodeURIComponent(new URL(request.url).pathname);
      if (!full.startsWith(`${prefix}/`)) {
        return new Response("not found", { status: 404 });
      }
      const path = full.slice(prefix.length);
      requests.set(path, (requests.get(path) ?? 0) + 1);
      const target = route(path);
      if (target === undefined) {
        return new Response("not found", { status: 404 });
      }
      if ("json" in target) return Response.json(target.json);
      const file = normalize(join(REPO, target.file));
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
  return {
    url: `http://${host}${prefix}`,
    host,
    requests,
    async [Symbol.asyncDispose]() {
      await server.shutdown();
    },
  };
}

/** Starts serving the checkout by path. */
export function serveCheckout(): ServedCheckout {
  return serveFiles((path) => ({ file: path }));
}

/** The files `deno publish` would upload, relative to the repository. */
export async function publishedFiles(): Promise<string[]> {
  const run = await runDeno([
    "publish",
    "--dry-run",
    "--allow-dirty",
    "--no-check",
    "--allow-slow-types",
  ], { cwd: REPO });
  if (run.code !== 0) throw new Error(`deno publish --dry-run: ${run.stderr}`);
  const prefix = `file://${REPO}/`;
  const files = [...run.stderr.matchAll(/^\s+(file:\/\/\S+) \(/gm)]
    .map((m) => m[1]!)
    .filter((url) => url.startsWith(prefix))
    .map((url) => decodeURIComponent(url.slice(prefix.length)));
  if (!files.includes("mod.ts")) {
    throw new Error(`no file list in deno publish's output:\n${run.stderr}`);
  }
  return files;
}

async function sha256(file: string): Promise<{ size: number; hex: string }> {
  const bytes = await Deno.readFile(join(REPO, file));
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", bytes));
  const hex = [...digest].map((b) => b.toString(16).padStart(2, "0")).join(
    "",
  );
  return { size: bytes.length, hex };
}

/** Starts a local JSR registry holding the package as published. */
export async function serveJsrRegistry(): Promise<JsrRegistry> {
  const config = JSON.parse(
    await Deno.readTextFile(join(REPO, "deno.json")),
  ) as { name: string; version: string; exports: Record<string, string> };
  const [scope, name] = config.name.slice(1).split("/") as [string, string];
  const files = await publishedFiles();
  const manifest: Record<string, { size: number; checksum: string }> = {};
  for (const file of files) {
    const { size, hex } = await sha256(file);
    manifest[`/${file}`] = { size, checksum: `sha256-${hex}` };
  }
  const base = `/@${scope}/${name}/`;
  const packagePath = `${base}${config.version}/`;
  const served = serveFiles((path) => {
    if (path === `${base}meta.json`) {
      return {
        json: {
          scope,
          name,
          latest: config.version,
          versions: { [config.version]: {} },
        },
      };
    }
    if (path === `${base}${config.version}_meta.json`) {
      return { json: { manifest, exports: config.exports } };
    }
    if (path.startsWith(packagePath)) {
      const file = path.slice(packagePath.length);
      return files.includes(file) ? { file } : undefined;
    }
    return undefined;
  });
  return { ...served, jsrUrl: `${served.url}/`, files, packagePath };
}
