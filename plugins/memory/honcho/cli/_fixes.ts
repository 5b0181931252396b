/** The fix printed for a failed Honcho connection, by cause (one table for every command and the status hook). @module */

import { getConfigValue, type HermesConfig } from "../../../../src/cli/mod.ts";
import { causeChain } from "../_util.ts";

export interface ConnectionFixOptions {
  /** Whether `config.yaml` already lists the server's host in `memory.permissions.honcho.net` (unknown when absent). */
  netListed?: boolean;
}

/** The fix for a run without net permission: `config.yaml` allowing the host means the launcher (which grants it) was not used. */
export function netPermissionFix(host: string, listed?: boolean): string {
  const launcher =
    "run hermes through its launcher ('hermes …', or 'deno task hermes …' in a checkout)";
  if (listed === true) {
    return `config.yaml already allows ${host}, but this run was started without it: ${launcher}, which grants it, or add --allow-net=${host} to your deno command`;
  }
  if (listed === false) {
    // The launcher grants only what config.yaml lists: launching is no fix.
    return `${host} is not in memory.permissions.honcho.net in config.yaml, so no run of hermes is granted it: approve it with 'hermes memory setup honcho', then run this again`;
  }
  return `${launcher}, which grants the hosts in config.yaml memory.permissions.honcho.net ('hermes memory setup honcho' adds ${host} there), or add --allow-net=${host} to your deno command`;
}

export function netListedIn(hermesConfig: HermesConfig, host: string): boolean {
  const net = getConfigValue(hermesConfig, "memory.permissions.honcho.net");
  if (!Array.isArray(net)) return false;
  const bare = host.replace(/:\d+$/, "");
  return net.some((entry) => entry === host || entry === bare);
}

export function connectionFix(
  error: unknown,
  url: string,
  options: ConnectionFixOptions = {},
): string {
  const name = error instanceof Error ? error.name : "";
  const host = URL.canParse(url) ? new URL(url).host : url;
  const text = causeChain(error).map((e) => `${e.name} ${e.message}`).join(
    " ",
  );
  if (name === "HonchoConfigError") {
    return "configure a server: 'hermes memory setup honcho' (an API key for Honcho cloud, or --set baseUrl=http://host:port for your own server)";
  }
  if (name === "AuthError") {
    return "set the right API key: 'hermes honcho setup' (typed hidden) or 'hermes memory setup honcho --yes --set apiKey=KEY'";
  }
  if (
    name === "PermissionDeniedError" ||
    /NotCapable|no network access to /.test(text)
  ) {
    return netPermissionFix(host, options.netListed);
  }
  if (name === "TimeoutError") {
    return `check that ${url} is up and reachable from this machine (firewall, VPN, proxy)`;
  }
  if (/refused/i.test(text)) {
    return `start the Honcho server at ${url}, or point baseUrl at the running one: 'hermes memory setup honcho --yes --set baseUrl=http://host:port'`;
  }
  if (/dns|lookup|name or service|not known/i.test(text)) {
    return `check the host name in baseUrl (${host}): 'hermes memory setup honcho --yes --set baseUrl=http://host:port'`;
  }
  if (name === "ConnectionError") {
    return `check that the Honcho server at ${url} is running and reachable from this machine, or point baseUrl at the right one: 'hermes memory setup honcho --yes --set baseUrl=http://host:port'`;
  }
  return `check the server's logs at ${url}; 'hermes honcho status' shows the full error`;
}
