// `hermes memory dashboard` started as users start it (the `hermes` task
// line, through the launcher, a temporary HOME), with its URL read off its
// stdout, and a small client that talks to it as the page does.
import { hermesCliCommand } from "./hermes_cli_child.ts";

/** A running dashboard; `Symbol.asyncDispose` stops it with SIGTERM. */
export interface Dashboard extends AsyncDisposable {
  /** The URL it printed, token included. */
  url: string;
  /** `http://127.0.0.1:PORT`. */
  origin: string;
  /** The per-run token. */
  token: string;
  /** What it wrote to stderr so far. */
  stderr(): string;
  /** A request as the page sends it (token header, JSON body); the status and parsed body. */
  api(
    method: "GET" | "POST",
    path: string,
    body?: unknown,
  ): Promise<{ status: number; body: Record<string, unknown> }>;
}

/** Starts `hermes memory dashboard` for the user home `userHome`. */
export async function startDashboard(userHome: string): Promise<Dashboard> {
  const c = await hermesCliCommand(["memory", "dashboard"], { userHome });
  const child = new Deno.Command(c.command, {
    args: c.args,
    env: c.env,
    cwd: c.cwd,
    clearEnv: true,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  let err = "";
  const errDone = child.stderr.pipeThrough(new TextDecoderStream()).pipeTo(
    new WritableStream({
      write(chunk) {
        err += chunk;
      },
    }),
  );
  const reader = child.stdout.pipeThrough(new TextDecoderStream())
    .getReader();
  let out = "";
  let url: string | undefined;
  while (url === undefined) {
    const { value, done } = await reader.read();
    if (done) throw new Error(`dashboard exited before its URL: ${out}${err}`);
    out += value;
    url = /(http:\/\/127\.0\.0\.1:\d+\/\?token=[\w-]+)/.exec(out)?.[1];
  }
  const drain = (async () => {
    while (!(await reader.read()).done) { /* keep the pipe empty */ }
  })();
  const parsed = new URL(url);
  const token = parsed.searchParams.get("token") as string;
  return {
    url,
    origin: parsed.origin,
    token,
    stderr: () => err,
    async api(method, path, body) {
      const headers: Record<string, string> = { "X-Hermes-Token": token };
      if (body !== undefined) headers["Content-Type"] = "application/json";
      const res = await fetch(`${parsed.origin}${path}`, {
        method,
        headers,
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      return { status: res.status, body: await res.json() };
    },
    async [Symbol.asyncDispose]() {
      child.kill("SIGTERM");
      await child.status;
      await drain;
      await errDone;
    },
  };
}

/** A user provider's manifest asking for more than its own data (`~/.ssh` is one the floor refuses), `net` when given. */
export const askerManifest = (net?: string): string =>
  `name: asker
description: Asks for more than its own data
permissions:
  read: [~/Documents, ~/.ssh]
  env: [OPENAI_API_KEY]
${net === undefined ? "" : `  net: [${net}]\n`}  why:
    ~/Documents: indexes your documents
`;

/** The asker's module: one setting, `region` (default `eu`), saved nowhere. */
export const ASKER_MOD = `
import { MemoryProvider, type ConfigField, type ToolSchema } from "@hermes/memory";
export class AskerProvider extends MemoryProvider {
  get name(): string { return "asker"; }
  isAvailable(): boolean { return true; }
  initialize(): void {}
  getToolSchemas(): ToolSchema[] { return []; }
  override getConfigSchema(): ConfigField[] {
    return [{ key: "region", description: "Region", default: "eu" }];
  }
  override async saveConfig(): Promise<void> {}
}
`;
