// One provider's prefetch (bounded, spilled) and the recall indicator line
// built from providers' statuses.

import { log } from "../core/log.ts";
import {
  INDICATOR_GLYPH,
  RECALL_FAILED_GLYPH,
} from "../core/memory_provider.ts";
import { providerHook } from "../core/provider_hooks.ts";
import {
  applyRecallSpill,
  prefetchSpillSource,
  type RecallSpillPolicy,
} from "../context/prefetch_spill.ts";
import { isRecord } from "../_util/is_record.ts";
import {
  bounded,
  describeValue,
  isThenable,
  logFailure,
  logHookFailure,
  type ProviderEntry,
  TIMED_OUT,
} from "./_fan_out.ts";

/**
 * One provider's prefetch; never throws or rejects. Synchronous results stay
 * synchronous so a turn with only the built-in store does not wait a tick.
 */
function prefetchFrom(
  entry: ProviderEntry,
  query: string,
  sessionId: string,
  boundMs: number,
  spill: RecallSpillPolicy | undefined,
): string | Promise<string> {
  if (entry.prefetchBusy) {
    log(
      "debug",
      `Memory provider '${entry.name}' prefetch is still running; skipping this turn`,
    );
    return "";
  }
  const finish = (value: unknown): string | Promise<string> => {
    if (value == null) return "";
    if (typeof value !== "string") {
      const why = `returned ${describeValue(value)} instead of a string`;
      logFailure("debug", entry, "prefetch", why);
      return "";
    }
    if (!entry.external || value.trim() === "" || spill === undefined) {
      return value;
    }
    // Text within the limit comes back unchanged; skip the async call then.
    const limit = spill.spillEnabled
      ? spill.settings.maxChars
      : spill.ceilingChars;
    if (value.length <= limit) return value;
    // The single place the prefetch spill policy (src/context/SPEC.md §4) is applied.
    return applyRecallSpill(spill, value, {
      source: prefetchSpillSource(entry.name),
      sessionId,
    }).catch((error: unknown) => {
      logFailure("debug", entry, "prefetch spill", error);
      return value;
    });
  };
  let result: unknown;
  try {
    result = providerHook(entry.provider, "prefetch").call(
      entry.provider,
      query,
      { sessionId },
    );
  } catch (error) {
    logHookFailure(entry, "prefetch", error);
    return "";
  }
  if (!isThenable(result)) return finish(result);
  const settled = entry.external
    ? bounded(entry, "prefetchBusy", "prefetch", result, boundMs)
    : Promise.resolve(result);
  return settled.then(
    (value) => value === TIMED_OUT ? "" : finish(value),
    (error: unknown) => {
      logHookFailure(entry, "prefetch", error);
      return "";
    },
  );
}

/** The indicator line of the providers' `recallStatus()` results, with their failures and notes. */
export function recallIndicator(
  statuses: readonly unknown[],
): { line: string; failures: string[]; notes: string[] } {
  const segments: string[] = [];
  const failures: string[] = [];
  const notes: string[] = [];
  for (const status of statuses) {
    if (!isRecord(status)) continue;
    const { providerLabel: label, count, failure, note, glyph } = status;
    if (typeof label !== "string" || typeof count !== "number") continue;
    const failed = typeof failure === "string" ? failure : undefined;
    if (failed !== undefined) failures.push(`${label}: ${failed}`);
    if (typeof note === "string") notes.push(`${label}: ${note}`);
    const shown = typeof glyph === "string"
      ? glyph
      : failed !== undefined
      ? RECALL_FAILED_GLYPH
      : INDICATOR_GLYPH;
    const detail = failed ??
      (count === 1
        ? "recalled 1 memory"
        : count > 1
        ? `recalled ${count} memories`
        : "recalled relevant memory");
    segments.push(`${shown} ${label} — ${detail}`);
  }
  return { line: segments.join("  "), failures, notes };
}

/** Every provider's prefetch, started together and joined in registration order. */
export async function prefetchEach(
  entries: readonly ProviderEntry[],
  query: string,
  sessionId: string,
  boundMs: number,
  spill: RecallSpillPolicy | undefined,
): Promise<string> {
  const parts = entries.map((e) =>
    prefetchFrom(e, query, sessionId, boundMs, spill)
  );
  let out = "";
  for (const part of parts) {
    const text = typeof part === "string" ? part : await part;
    if (text.trim() !== "") {
      out = out === "" ? text : `${out}\n\n${text}`;
    }
  }
  return out;
}
