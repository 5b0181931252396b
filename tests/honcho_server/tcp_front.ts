/**
 * A raw TCP front for the test server, so that a request can be dropped.
 *
 * `Deno.serve` always sends response headers before a failing body, so a
 * client's `fetch` resolves and only the body read fails. To make `fetch`
 * itself reject with a `TypeError`, the connection must close before any
 * response byte: this front accepts the client's TCP connection, reads the
 * request line, and either closes the socket (drop), or relays bytes to the
 * inner `Deno.serve` server. Every inner response carries
 * `Connection: close`, so one client connection carries one request and the
 * request line seen here is the only one on it.
 *
 * @module
 */

/** What to do with a request, decided from its request line. */
export type FrontDecision = "pass" | "drop" | "drop-after";

/** Header the front adds to a `drop-after` request; its value is the connection's token. */
export const DROP_AFTER_HEADER = "x-honcho-test-drop-after";

/** Options of {@linkcode TcpFront}. */
export interface TcpFrontOptions {
  /** Port of the inner HTTP server on 127.0.0.1. */
  upstreamPort: number;
  /** Called once per connection with the request's method and target. */
  decide(method: string, target: string): FrontDecision;
}

const MAX_HEAD = 64 * 1024;

async function writeAll(conn: Deno.Conn, data: Uint8Array): Promise<void> {
  let offset = 0;
  while (offset < data.length) {
    offset += await conn.write(data.subarray(offset));
  }
}

function safeClose(conn: Deno.Conn): void {
  try {
    conn.close();
  } catch {
    // already closed
  }
}

/** Accepts connections on 127.0.0.1 (port 0) and relays or drops them. */
export class TcpFront {
  /** Port the front listens on. */
  readonly port: number;
  #listener: Deno.Listener;
  #options: TcpFrontOptions;
  #conns = new Set<Deno.Conn>();
  #dropTargets = new Map<string, () => void>();
  #nextToken = 0;
  #tasks = new Set<Promise<void>>();
  #acceptLoop: Promise<void>;
  #closed = false;

  /**
   * Starts listening.
   *
   * @param options Upstream port and the per-request decision.
   */
  constructor(options: TcpFrontOptions) {
    this.#options = options;
    this.#listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
    this.port = (this.#listener.addr as Deno.NetAddr).port;
    this.#acceptLoop = this.#accept();
  }

  async #accept(): Promise<void> {
    while (!this.#closed) {
      let conn: Deno.Conn;
      try {
        conn = await this.#listener.accept();
      } catch {
        return;
      }
      if (this.#closed) {
        safeClose(conn);
        return;
      }
      this.#conns.add(conn);
      const task = this.#serve(conn).catch(() => {}).finally(() => {
        this.#conns.delete(conn);
        safeClose(conn);
        this.#tasks.delete(task);
      });
      this.#tasks.add(task);
    }
  }

  async #readRequestLine(
    conn: Deno.Conn,
  ): Promise<{ head: Uint8Array; line: string } | null> {
    const chunks: Uint8Array[] = [];
    let size = 0;
    const buffer = new Uint8Array(16 * 1024);
    while (size < MAX_HEAD) {
      const n = await conn.read(buffer);
      if (n === null) return null;
      chunks.push(buffer.slice(0, n));
      size += n;
      const head = new Uint8Array(size);
      let offset = 0;
      for (const chunk of chunks) {
        head.set(chunk, offset);
        offset += chunk.length;
      }
      const text = new TextDecoder().decode(head);
      const end = text.indexOf("\r\n");
      if (end >= 0) return { head, line: text.slice(0, end) };
    }
    return null;
  }

  async #pump(from: Deno.Conn, to: Deno.Conn | null): Promise<void> {
    const buffer = new Uint8Array(16 * 1024);
    while (true) {
      let n: number | null;
      try {
        n = await from.read(buffer);
      } catch {
        return;
      }
      if (n === null) return;
      if (to) {
        try {
          await writeAll(to, buffer.subarray(0, n));
        } catch {
          return;
        }
      }
    }
  }

  /**
   * Closes the client connection of a `drop-after` request (and its relay)
   * without answering; called by the inner server once it has handled it.
   *
   * @param token The value of the {@linkcode DROP_AFTER_HEADER} header.
   */
  dropConnection(token: string): void {
    this.#dropTargets.get(token)?.();
  }

  async #serve(client: Deno.Conn): Promise<void> {
    const first = await this.#readRequestLine(client);
    if (!first) return;
    const [method = "", target = ""] = first.line.split(" ");
    const decision = this.#options.decide(method, target);
    if (decision === "drop") return;
    const upstream = await Deno.connect({
      hostname: "127.0.0.1",
      port: this.#options.upstreamPort,
    });
    this.#conns.add(upstream);
    let head = first.head;
    let token: string | undefined;
    if (decision === "drop-after") {
      token = String(++this.#nextToken);
      const lineEnd = new TextEncoder().encode(first.line).length + 2;
      const extra = new TextEncoder().encode(
        `${DROP_AFTER_HEADER}: ${token}\r\n`,
      );
      head = new Uint8Array(first.head.length + extra.length);
      head.set(first.head.subarray(0, lineEnd));
      head.set(extra, lineEnd);
      head.set(first.head.subarray(lineEnd), lineEnd + extra.length);
      this.#dropTargets.set(token, () => {
        safeClose(client);
        safeClose(upstream);
      });
    }
    try {
      await writeAll(upstream, head);
      // The client's end of the request (fetch closes the connection after
      // a `Connection: close` answer) is passed on, so the inner server,
      // which keeps its side open otherwise, closes it, and the relay ends.
      // Before, every finished connection stayed open (3 descriptors per
      // request) until the process ran out of them.
      const toUpstream = this.#pump(client, upstream).then(async () => {
        try {
          await upstream.closeWrite();
        } catch {
          // already closed
        }
      });
      await this.#pump(upstream, decision === "drop-after" ? null : client);
      safeClose(client);
      safeClose(upstream);
      await toUpstream;
    } finally {
      if (token !== undefined) this.#dropTargets.delete(token);
      this.#conns.delete(upstream);
      safeClose(upstream);
    }
  }

  /** Connections open now (client and relay sockets). */
  get openConnections(): number {
    return this.#conns.size;
  }

  /** Stops accepting, closes every open connection and waits for relays to end. */
  async close(): Promise<void> {
    this.#closed = true;
    try {
      this.#listener.close();
    } catch {
      // already closed
    }
    for (const conn of this.#conns) safeClose(conn);
    await this.#acceptLoop;
    while (this.#tasks.size > 0) await Promise.allSettled([...this.#tasks]);
  }
}
