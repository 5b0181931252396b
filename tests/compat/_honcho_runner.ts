// Child-process runner of the Honcho replay tests (honcho_vectors_test.ts):
// each recorded case needs its own process environment, HOME and working
// directory, which must not change under the parallel test process. Reads
// {"fixture": <path>, "root": <temp dir>} on stdin, writes one JSON result
// per case on stdout.
import { join } from "node:path";
import { getHermesHome, setLogger } from "@hermes/memory";
import { loadHonchoConfig } from "../../plugins/memory/honcho/config/config.ts";
import {
  hostKeyForProfile,
  profileFromHermesHome,
  resolveHonchoConfigPath,
} from "../../plugins/memory/honcho/config/paths.ts";
import { resolveSessionName } from "../../plugins/memory/honcho/session/naming.ts";
import type { HonchoConfig } from "../../plugins/memory/honcho/config/config.ts";
import { decodeBytes, type EncodedBytes, substitute } from "./_vectors.ts";

interface ConfigCase {
  id: string;
  input: {
    hermes_home: string | null;
    dirs?: string[];
    files: Record<string, EncodedBytes>;
    env: Record<string, string>;
  };
}

interface SessionCase {
  id: string;
  input: {
    construct: Record<string, unknown>;
    session_calls: Record<string, unknown>[];
    git_repos?: string[];
    dirs?: string[];
    cwd?: string;
  };
}

// JSON cannot carry NaN or the infinities; tag them.
function encode(value: unknown): string {
  return JSON.stringify(
    value,
    (_key, v) =>
      typeof v === "number" && !Number.isFinite(v)
        ? { $num: String(v) }
        : v === undefined
        ? null
        : v,
  );
}

function resetEnv(vars: Record<string, string>): void {
  for (const name of Object.keys(Deno.env.toObject())) {
    if (name !== "PATH") Deno.env.delete(name);
  }
  for (const [name, value] of Object.entries(vars)) Deno.env.set(name, value);
}

async function runConfigCase(c: ConfigCase, root: string): Promise<unknown> {
  const home = join(root, "home");
  await Deno.mkdir(home, { recursive: true });
  const hermesHome = c.input.hermes_home === null
    ? undefined
    : c.input.hermes_home.replaceAll("<HOME>", home).replaceAll(
      "<ROOT>",
      root,
    );
  const sub = substitute({
    "<HERMES_HOME>": hermesHome?.trim() ? hermesHome : join(home, ".hermes"),
    "<HOME>": home,
    "<ROOT>": root,
  });
  for (const dir of c.input.dirs ?? []) {
    await Deno.mkdir(sub(dir), { recursive: true });
  }
  for (const [path, data] of Object.entries(c.input.files)) {
    const real = sub(path);
    await Deno.mkdir(join(real, ".."), { recursive: true });
    if (data !== null && "dir" in data) {
      await Deno.mkdir(real, { recursive: true });
    } else {
      await Deno.writeFile(real, decodeBytes(data) as Uint8Array);
    }
  }
  const env: Record<string, string> = { HOME: home };
  if (hermesHome !== undefined) env.HERMES_HOME = hermesHome;
  for (const [k, v] of Object.entries(c.input.env)) env[k] = sub(v);
  resetEnv(env);
  Deno.chdir(root);
  let warnings = 0;
  const previous = setLogger({
    log(level) {
      if (level === "warn" || level === "error") warnings++;
    },
  });
  try {
    const active = getHermesHome();
    const profile = profileFromHermesHome(active);
    const configPath = await resolveHonchoConfigPath({ hermesHome: active });
    let config: HonchoConfig | undefined;
    let error: string | undefined;
    try {
      config = await loadHonchoConfig();
    } catch (e) {
      error = String(e);
    }
    return {
      id: c.id,
      profile,
      profileHostKey: hostKeyForProfile(profile),
      configPath,
      config: config && { ...config, sources: undefined },
      error,
      warnings,
    };
  } finally {
    setLogger(previous);
  }
}

async function runSessionCase(c: SessionCase, root: string): Promise<unknown> {
  const sub = substitute({ "<ROOT>": root });
  for (const dir of c.input.dirs ?? []) {
    await Deno.mkdir(sub(dir), { recursive: true });
  }
  for (const repo of c.input.git_repos ?? []) {
    await Deno.mkdir(sub(repo), { recursive: true });
    const { code } = await new Deno.Command("git", {
      args: ["init", "-q"],
      cwd: sub(repo),
      stdout: "null",
      stderr: "null",
    }).output();
    if (code !== 0) throw new Error(`git init failed in ${sub(repo)}`);
  }
  resetEnv({ HOME: join(root, "home") });
  Deno.chdir(c.input.cwd ? sub(c.input.cwd) : root);
  const config = JSON.parse(sub(JSON.stringify(c.input.construct)));
  const calls = [];
  for (const call of c.input.session_calls) {
    const kwargs = JSON.parse(sub(JSON.stringify(call)));
    try {
      calls.push({
        result: await resolveSessionName(sessionConfig(config), {
          cwd: kwargs.cwd ?? undefined,
          sessionTitle: kwargs.session_title ?? undefined,
          sessionId: kwargs.session_id ?? undefined,
          gatewaySessionKey: kwargs.gateway_session_key ?? undefined,
          sessionTitleSource: kwargs.session_title_source ?? undefined,
        }) ?? null,
      });
    } catch (e) {
      calls.push({ error: String(e) });
    }
  }
  return { id: c.id, calls };
}

// The recorded keyword arguments of HonchoClientConfig(...), in the
// project's camelCase (only what session naming reads).
function sessionConfig(construct: Record<string, unknown>) {
  const has = (k: string) => Object.hasOwn(construct, k);
  return {
    sessionStrategy: has("session_strategy")
      ? construct.session_strategy as string
      : "per-directory",
    sessions: (construct.sessions ?? {}) as Record<string, string>,
    peerName: (construct.peer_name ?? undefined) as string | undefined,
    sessionPeerPrefix: has("session_peer_prefix")
      ? Boolean(construct.session_peer_prefix)
      : false,
    sessionAiPeerPrefix: has("session_ai_peer_prefix")
      ? Boolean(construct.session_ai_peer_prefix)
      : false,
    aiPeer: has("ai_peer") ? construct.ai_peer as string : "hermes",
    workspaceId: has("workspace_id")
      ? construct.workspace_id as string
      : "hermes",
  };
}

const request = JSON.parse(await new Response(Deno.stdin.readable).text());
const fixture = JSON.parse(await Deno.readTextFile(request.fixture));
const out: string[] = [];
let n = 0;
for (const c of fixture.cases) {
  const root = join(request.root, String(n++));
  await Deno.mkdir(root, { recursive: true });
  const realRoot = await Deno.realPath(root);
  out.push(encode(
    request.kind === "sessions"
      ? await runSessionCase(c, realRoot)
      : await runConfigCase(c, realRoot),
  ));
}
console.log(`[${out.join(",\n")}]`);
