// Telling a permission denial from other failures, inside a provider.

import { denoDenial } from "../sandbox/deno_denial.ts";

/**
 * Whether an error is Deno refusing something the provider's sandbox grant
 * does not cover: a `Deno.errors.NotCapable` (file, network, environment,
 * subprocess, …), or the `TypeError` a denied dynamic `import()` rejects
 * with. Inside a sandbox worker the error a provider catches is Deno's own,
 * unchanged (its `name` is `"NotCapable"`); the host has already been told
 * about it once, with the key that would grant it.
 *
 * @param error Anything caught.
 * @returns `true` for a permission denial.
 *
 * @category Errors callers catch
 */
export function isPermissionDenial(error: unknown): boolean {
  return (error instanceof Error && error.name === "NotCapable") ||
    denoDenial(error) !== undefined;
}

let reportedByHost = false;

/** Called by the worker hardening: the host reports this realm's denials (not reversible). */
export function markDenialsReportedByHost(): void {
  reportedByHost = true;
}

/**
 * Whether the host already warns about each permission denial of this
 * provider (it runs in a sandbox worker), so a provider's own warning for
 * the same denial would be a second line about one cause. A provider still
 * raises its own user-facing notice.
 *
 * @returns `true` inside a sandbox worker.
 */
export function permissionDenialsReportedByHost(): boolean {
  return reportedByHost;
}
