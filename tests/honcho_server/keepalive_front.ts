/**
 * A keep-alive HTTP/1.1 front for the Honcho test server, for faults that
 * depend on real connection reuse: a proxy that forwards a request (so
 * Honcho commits it) and then closes the client's connection without
 * answering.
 *
 * The test server's own front carries one request per connection
 * (`Connection: close`), so a client never reuses a connection there. This
 * front keeps every client connection open across requests, like a real
 * proxy or Honcho itself: it parses each request (Content-Length or chunked
 * body), forwards it to the test server with `fetch`, and writes the answer
 * back with `Connection: keep-alive` — or, when `dropAfterCommit` says so,
 * closes the connection once the test server has answered (the write is
 * stored) without sending a byte.
 *
 * @module
 */

/** One request the front saw. */
export interface FrontRequest {
  /** The method. */
  method: string;
  /** The path and query. */
  target: string;
  /** The connection's number (1 = the first connection accepted). */
  connection: number;
  /** The request's position on its connection (1 = the first). */
  onConnection: number;
  /** Whether the answer was withheld and the connection closed. */
  dropped: boolean;
}

/** Options of {@linkcode KeepAliveFront}. */
export interface KeepAliveFrontOptions {
  /** The test server's URL (`server.url`). */
  upstream: string;
  /**
   * Decides, after the upstream answered, whether to close the client's
   * connection instead of relaying the answer.
   */
  dropAfterCommit?: (request: FrontRequest) => boolean;
}

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** A keep-alive front on 127.0.0.1 (port 0). */
export class KeepAliveFront implements AsyncDisposable {
  /** `http://127.0.0.1:PORT`. */
  readonly url: string;
  /** Every request seen, in arrival order. */
  readonly requests: FrontRequest[] = [];
  #listener: Deno.Listener;
  #options: KeepAliveFrontOptions;
  #conns = new Set<Deno.Conn>();
  #tasks = new Set<Promise<void>>();
  #accepting: Promise<void>;
  #connections = 0;
  #closed = false;

  /**
   * Starts listening.
   *
   * @param options The upstream and the drop decision.
   */
  constructor(options: KeepAliveFrontOptions) {
    this.#options = options;
    this.#listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
    this.url = `http://127.0.0.1:${(this.#listener.addr as Deno.NetAddr).port}`;
    this.#accepting = this.#accept();
  }

  async #accept(): Promise<void> {
    for (;;) {
      let conn: Deno.Conn;
      try {
        conn = await this.#listener.accept();
      } catch {
        return;
      }
      if (this.#closed) {
        conn.close();
        return;
      }
      this.#conns.add(conn);
      const id = ++this.#connections;
      const task = this.#serve(conn, id).catch(() => {}).finally(() => {
        this.#conns.delete(conn);
        try {
          conn.close();
        } catch {
          // closed already
        }
        this.#tasks.delete(task);
      });
      this.#tasks.add(task);
    }
  }

  async #serve(conn: Deno.Conn, id: number): Promise<void> {
    const reader = new ConnReader(conn);
    for (let n = 1;; n++) {
      const head = await reader.readUntil("\r\n\r\n");
      if (head === null) return;
      const [requestLine = "", ...headerLines] = decoder.decode(head).split(
        "\r\n",
      );
      const [method = "GET", target = "/"] = requestLine.split(" ");
      const headers = new Headers();
      for (const line of headerLines) {
        const colon = line.indexOf(":");
        if (colon > 0) {
          headers.append(
            line.slice(0, colon).trim(),
            line.slice(colon + 1).trim(),
          );
        }
      }
      let body: Uint8Array<ArrayBuffer> | undefined;
      if (headers.get("transfer-encoding")?.toLowerCase() === "chunked") {
        body = await reader.readChunked();
      } else {
        const length = Number(headers.get("content-length") ?? "0");
        if (length > 0) body = await reader.readExactly(length);
      }
      const forward = new Headers(headers);
      for (
        const name of [
          "host",
          "connection",
          "content-length",
          "transfer-encoding",
          "keep-alive",
        ]
      ) forward.delete(name);
      const response = await fetch(`${this.#options.upstream}${target}`, {
        method,
        headers: forward,
        body: body && body.length > 0 ? body : undefined,
      });
      const answer = new Uint8Array(await response.arrayBuffer());
      const request: FrontRequest = {
        method,
        target,
        connection: id,
        onConnection: n,
        dropped: false,
      };
      this.requests.push(request);
      if (this.#options.dropAfterCommit?.(request)) {
        request.dropped = true;
        return; // The caller closes the connection: no answer at all.
      }
      let out = `HTTP/1.1 ${response.status} ${
        response.statusText || "OK"
      }\r\n`;
      response.headers.forEach((value, name) => {
        if (
          !["connection", "content-length", "transfer-encoding", "keep-alive"]
            .includes(name)
        ) out += `${name}: ${value}\r\n`;
      });
      out +=
        `content-length: ${answer.length}\r\nconnection: keep-alive\r\n\r\n`;
      await writeAll(conn, concat(encoder.encode(out), answer));
    }
  }

  /** Stops listening, closes every connection and waits for them. */
  async close(): Promise<void> {
    this.#closed = true;
    try {
      this.#listener.close();
    } catch {
      // closed already
    }
    for (const conn of this.#conns) {
      try {
        conn.close();
      } catch {
        // closed already
      }
    }
    await this.#accepting;
    while (this.#tasks.size > 0) await Promise.allSettled([...this.#tasks]);
  }

  /** Closes the front (for `await using`). */
  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }
}

class ConnReader {
  #conn: Deno.Conn;
  #buffer: Uint8Array<ArrayBuffer> = new Uint8Array(0);

  constructor(conn: Deno.Conn) {
    this.#conn = conn;
  }

  async #fill(): Promise<boolean> {
    const chunk = new Uint8Array(16 * 1024);
    let n: number | null;
    try {
      n = await this.#conn.read(chunk);
    } catch {
      return false;
    }
    if (n === null) return false;
    this.#buffer = concat(this.#buffer, chunk.subarray(0, n));
    return true;
  }

  async readUntil(marker: string): Promise<Uint8Array<ArrayBuffer> | null> {
    const bytes = encoder.encode(marker);
    for (;;) {
      const at = indexOf(this.#buffer, bytes);
      if (at >= 0) {
        const head = this.#buffer.slice(0, at);
        this.#buffer = this.#buffer.slice(at + bytes.length);
        return head;
      }
      if (!await this.#fill()) return null;
    }
  }

  async readExactly(length: number): Promise<Uint8Array<ArrayBuffer>> {
    while (this.#buffer.length < length) {
      if (!await this.#fill()) throw new Error("connection closed mid-body");
    }
    const out = this.#buffer.slice(0, length);
    this.#buffer = this.#buffer.slice(length);
    return out;
  }

  async readChunked(): Promise<Uint8Array<ArrayBuffer>> {
    let out: Uint8Array<ArrayBuffer> = new Uint8Array(0);
    for (;;) {
      const line = await this.readUntil("\r\n");
      if (line === null) throw new Error("connection closed mid-body");
      const size = Number.parseInt(decoder.decode(line).split(";")[0]!, 16);
      if (size === 0) {
        await this.readUntil("\r\n");
        return out;
      }
      out = concat(out, await this.readExactly(size));
      await this.readExactly(2);
    }
  }
}

function concat(a: Uint8Array, b: Uint8Array): Uint8Array<ArrayBuffer> {
  const out = new Uint8Array(a.length + b.length);
  out.set(a);
  out.set(b, a.length);
  return out;
}

function indexOf(haystack: Uint8Array, needle: Uint8Array): number {
  outer: for (let i = 0; i + needle.length <= haystack.length; i++) {
    for (let j = 0; j < needle.length; j++) {
      if (haystack[i + j] !== needle[j]) continue outer;
    }
    return i;
  }
  return -1;
}

async function writeAll(conn: Deno.Conn, data: Uint8Array): Promise<void> {
  let offset = 0;
  while (offset < data.length) {
    offset += await conn.write(data.subarray(offset));
  }
}
