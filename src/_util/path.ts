/**
 * Path functions with Node's rules (checked against `node:path` and
 * `node:url`), without `node:path` and `node:url` themselves: evaluating them
 * loads about 50 modules of Deno's Node layer, about 10 ms of every `hermes`
 * start. On Windows, Node's own functions.
 *
 * @module
 */

import type * as NodePath from "node:path";
import type * as NodeUrl from "node:url";

const windows: [typeof NodePath, typeof NodeUrl] | undefined =
  Deno.build.os === "windows"
    ? [await import("node:path"), await import("node:url")]
    : undefined;
const win = windows?.[0];

/** The path separator. */
export const sep: string = win?.sep ?? "/";

/** Whether `path` is absolute. */
export function isAbsolute(path: string): boolean {
  return win ? win.isAbsolute(path) : path.startsWith("/");
}

/** `path` with `.`, `..` and repeated separators resolved lexically. */
export function normalize(path: string): string {
  if (win) return win.normalize(path);
  const absolute = path.startsWith("/");
  const parts: string[] = [];
  for (const part of path.split("/")) {
    if (part === "" || part === ".") continue;
    if (part !== "..") parts.push(part);
    else if (parts.length > 0 && parts.at(-1) !== "..") parts.pop();
    else if (!absolute) parts.push("..");
  }
  const body = parts.join("/");
  const slash = path.endsWith("/") && (body !== "" || !absolute) ? "/" : "";
  return (absolute ? `/${body}` : body || ".") + slash;
}

/** The parts joined with the separator, normalized. */
export function join(...parts: string[]): string {
  if (win) return win.join(...parts);
  const joined = parts.filter((part) => part !== "").join("/");
  return joined === "" ? "." : normalize(joined);
}

/** The absolute path of the parts, from the current directory. */
export function resolve(...parts: string[]): string {
  if (win) return win.resolve(...parts);
  let path = "";
  for (let i = parts.length - 1; i >= -1 && !path.startsWith("/"); i--) {
    const part = i >= 0 ? parts[i]! : Deno.cwd();
    if (part !== "") path = path === "" ? part : `${part}/${path}`;
  }
  const normal = normalize(path);
  return normal.length > 1 && normal.endsWith("/")
    ? normal.slice(0, -1)
    : normal;
}

function trimEnd(path: string): string {
  const trimmed = path.replace(/\/+$/, "");
  return trimmed === "" && path.startsWith("/") ? "/" : trimmed;
}

/** The folder part of `path`. */
export function dirname(path: string): string {
  if (win) return win.dirname(path);
  const trimmed = trimEnd(path);
  const at = trimmed.lastIndexOf("/");
  return at < 0 ? "." : at === 0 ? "/" : trimmed.slice(0, at);
}

/** The last part of `path`, without `suffix` when it ends with it. */
export function basename(path: string, suffix?: string): string {
  if (win) return win.basename(path, suffix);
  const trimmed = trimEnd(path);
  const base = trimmed === "/"
    ? ""
    : trimmed.slice(trimmed.lastIndexOf("/") + 1);
  return suffix && base !== suffix && base.endsWith(suffix)
    ? base.slice(0, -suffix.length)
    : base;
}

/** The extension of `path`'s last part (`.ts`), or `""`. */
export function extname(path: string): string {
  if (win) return win.extname(path);
  const base = basename(path);
  const dot = base.lastIndexOf(".");
  return dot <= 0 || base === ".." ? "" : base.slice(dot);
}

/** The path from `from` to `to`. */
export function relative(from: string, to: string): string {
  if (win) return win.relative(from, to);
  const a = resolve(from).split("/").filter(Boolean);
  const b = resolve(to).split("/").filter(Boolean);
  let common = 0;
  while (common < a.length && a[common] === b[common]) common++;
  return [...a.slice(common).map(() => ".."), ...b.slice(common)].join("/");
}

/** Whether `child` is `parent` or lies under it (lexically, after resolving both). */
export function isInside(parent: string, child: string): boolean {
  const rel = relative(parent, child);
  return rel === "" ||
    (!rel.startsWith("..") && !isAbsolute(rel) && !rel.startsWith(sep));
}

/** The file path of a `file:` URL. */
export function fileURLToPath(url: string | URL): string {
  if (windows) return windows[1].fileURLToPath(url);
  const parsed = new URL(url);
  if (parsed.protocol !== "file:" || parsed.hostname !== "") {
    throw new TypeError(`not a local file URL: ${parsed.href}`);
  }
  if (/%2f/i.test(parsed.pathname)) {
    throw new TypeError(
      `a file URL path may not contain an encoded '/': ${parsed.href}`,
    );
  }
  return decodeURIComponent(parsed.pathname);
}

/** The `file:` URL of a path (made absolute). */
export function pathToFileURL(path: string): URL {
  if (windows) return windows[1].pathToFileURL(path);
  const url = new URL("file:///");
  const absolute = resolve(path);
  url.pathname =
    (absolute === "/" || !path.endsWith("/") ? absolute : `${absolute}/`)
      .replace(
        /[%\\\n\r\t]/g,
        (c) =>
          `%${c.charCodeAt(0).toString(16).toUpperCase().padStart(2, "0")}`,
      );
  return url;
}
