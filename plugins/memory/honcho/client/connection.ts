/**
 * What the HTTP client needs from a resolved configuration (plugins/memory/honcho/SPEC.md §2).
 * @module
 */

import { pythonFloat } from "../../../../src/provider/_bundled.ts";
import { HonchoError } from "./errors.ts";
import { isRecord } from "../_util.ts";
import type { HonchoConfig } from "../config/config.ts";

/** The version of the Honcho plugin sent in `X-Honcho-Plugin` (plugin.yaml). */
export const HONCHO_PLUGIN_VERSION = "1.0.0";

/** The HTTP timeout when none is configured. */
export const DEFAULT_HONCHO_TIMEOUT_MS = 30_000;

/** Base URLs of the named environments (used when no base URL is set). */
export const HONCHO_ENVIRONMENT_URLS: Readonly<Record<string, string>> = Object
  .freeze({
    production: "https://api.honcho.dev",
    local: "http://localhost:8000",
  });

/** The API key sent to a local Honcho when the file configures none. */
export const LOCAL_API_KEY_PLACEHOLDER = "local";

/** Trimmed, without trailing slashes and one trailing `/v<digits>` (the client adds `/v3`). */
export function cleanBaseUrl(url: string): string {
  return url.trim().replace(/\/+$/, "").replace(/\/v\d+$/, "").replace(
    /\/+$/,
    "",
  );
}

/** `localhost`, `*.localhost`, or a loopback, private, link-local or CGNAT address. */
export function isLocalHonchoUrl(url: string): boolean {
  let hostname: string;
  try {
    hostname = new URL(url).hostname.toLowerCase();
  } catch {
    return false;
  }
  if (hostname.startsWith("[") && hostname.endsWith("]")) {
    hostname = hostname.slice(1, -1);
  }
  if (hostname === "localhost" || hostname.endsWith(".localhost")) return true;
  const v4 = parseIpv4(hostname);
  if (v4) return isLocalIpv4(v4);
  if (hostname.includes(":")) return isLocalIpv6(hostname);
  return false;
}

function parseIpv4(text: string): number[] | undefined {
  const parts = text.split(".");
  if (parts.length !== 4) return undefined;
  const out: number[] = [];
  for (const part of parts) {
    if (!/^\d{1,3}$/.test(part)) return undefined;
    const n = Number(part);
    if (n > 255) return undefined;
    out.push(n);
  }
  return out;
}

function isLocalIpv4([a, b]: number[]): boolean {
  if (a === undefined || b === undefined) return false;
  return a === 127 || a === 10 || (a === 172 && b >= 16 && b <= 31) ||
    (a === 192 && b === 168) || (a === 169 && b === 254) ||
    (a === 100 && b >= 64 && b <= 127) || a === 0;
}

function isLocalIpv6(text: string): boolean {
  if (text === "::1") return true;
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (mapped) {
    const v4 = parseIpv4(mapped[1]!);
    return v4 ? isLocalIpv4(v4) : false;
  }
  const mappedHex = /^::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(text);
  if (mappedHex) {
    const hi = Number.parseInt(mappedHex[1]!, 16);
    const lo = Number.parseInt(mappedHex[2]!, 16);
    return isLocalIpv4([hi >> 8, hi & 0xff, lo >> 8, lo & 0xff]);
  }
  const first = text.split(":")[0] ?? "";
  if (first === "") return false;
  const head = Number.parseInt(first, 16);
  if (Number.isNaN(head)) return false;
  return (head & 0xfe00) === 0xfc00 || (head & 0xffc0) === 0xfe80;
}

export interface ResolveHonchoConnectionOptions {
  /**
   * Hermes' parsed `config.yaml`: `honcho.base_url` and
   * `honcho.timeout`/`honcho.request_timeout` fill values that `honcho.json`
   * and the environment left unset.
   */
  hermesConfig?: Record<string, unknown>;
  /** Sent in `X-Honcho-Host` when known. */
  hermesVersion?: string;
  /** @default {Deno.build.os} */
  platform?: string;
}

/** The settings a connection is resolved from. */
export type ConnectionConfig = Pick<
  HonchoConfig,
  | "apiKey"
  | "baseUrl"
  | "environment"
  | "timeout"
  | "apiKeyInFile"
  | "workspaceId"
>;

/** What the HTTP client needs to connect. */
export interface HonchoConnection {
  /** Cleaned, without `/v3`. */
  baseUrl: string;
  /** The configured key, or `"local"` for a local server without one. */
  apiKey: string | undefined;
  timeoutMs: number;
  headers: Record<string, string>;
  workspaceId: string;
}

/**
 * Connection settings (plugins/memory/honcho/SPEC.md §2): URL and timeout
 * from the config, then `config.yaml`, then defaults.
 * @throws {HonchoError} `config` When neither an API key nor a base URL is configured.
 */
export function resolveHonchoConnection(
  config: ConnectionConfig,
  options: ResolveHonchoConnectionOptions = {},
): HonchoConnection {
  const yaml = isRecord(options.hermesConfig?.honcho)
    ? options.hermesConfig.honcho
    : {};
  const yamlUrl = typeof yaml.base_url === "string" &&
      /^[\x20-\x7e]+$/.test(yaml.base_url.trim())
    ? yaml.base_url.trim()
    : undefined;
  const configuredUrl = config.baseUrl || yamlUrl;
  if (!config.apiKey && !configuredUrl) {
    throw new HonchoError(
      "config",
      "Honcho API key not found: set HONCHO_API_KEY, or run 'hermes honcho setup' (a local server needs only a baseUrl)",
    );
  }
  const baseUrl = configuredUrl
    ? cleanBaseUrl(configuredUrl)
    : HONCHO_ENVIRONMENT_URLS[config.environment] ??
      HONCHO_ENVIRONMENT_URLS.production!;
  const apiKey = isLocalHonchoUrl(baseUrl) && !config.apiKeyInFile
    ? LOCAL_API_KEY_PLACEHOLDER
    : config.apiKey;
  let seconds = config.timeout;
  if (seconds === undefined) {
    // Hermes: the first of config.yaml honcho.timeout / request_timeout
    // that parses as a positive float.
    for (const key of ["timeout", "request_timeout"]) {
      const n = yaml[key] == null ? undefined : pythonFloat(yaml[key]);
      if (seconds === undefined && n !== undefined && !(n <= 0)) seconds = n;
    }
  }
  // A `nan` or `inf` timeout (which Hermes hands to its HTTP client) gets
  // the bounded default: a request must never wait forever.
  if (seconds !== undefined && !Number.isFinite(seconds)) seconds = undefined;
  const version = options.hermesVersion?.trim();
  return {
    baseUrl,
    apiKey,
    timeoutMs: seconds === undefined
      ? DEFAULT_HONCHO_TIMEOUT_MS
      : Math.round(seconds * 1000),
    headers: {
      "X-Honcho-Host": `hermes${version ? `/${version}` : ""} (${
        options.platform ?? Deno.build.os
      })`,
      "X-Honcho-Plugin": `hermes-plugin-honcho/${HONCHO_PLUGIN_VERSION}`,
    },
    workspaceId: config.workspaceId,
  };
}
