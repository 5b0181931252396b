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
